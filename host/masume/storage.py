"""Saved games: every game played on a board, written as it goes.

A game lives in its own folder::

    ~/.local/share/masume/games/20261121-143005-soccer-shogi/
        record.txt     the game record (masume.records format), rewritten whole
                       and atomically after every change: a power cut leaves the
                       previous or the new record, never half of one
        events.jsonl   every board event and every tracker decision, appended and
                       flushed to disk as it happens

:meth:`GameStore.resume` reads the record back, so a game goes on from its last
completed action after a crash.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Mapping

from masume.records import RecordError, read_record, rules_for, start_position, write_record
from masume.rules import Game, IllegalAction, NotationError


def default_games_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "masume" / "games"


class GameStore:
    def __init__(self, folder: Path, headers: Mapping[str, str] | None = None) -> None:
        self.folder = folder
        self.headers = dict(headers or {})
        folder.mkdir(parents=True, exist_ok=True)
        self._log = open(folder / "events.jsonl", "a", encoding="utf-8")

    @classmethod
    def new(cls, games_dir: Path, game: str, headers: Mapping[str, str] | None = None) -> "GameStore":
        stamp = time.strftime("%Y%m%d-%H%M%S")
        folder = games_dir / f"{stamp}-{game}"
        n = 1
        while folder.exists():
            n += 1
            folder = games_dir / f"{stamp}-{game}-{n}"
        return cls(folder, headers)

    @staticmethod
    def latest(games_dir: Path, game: str | None = None) -> Path | None:
        folders = sorted(p for p in games_dir.glob("*") if (p / "record.txt").is_file()
                         and (game is None or p.name.endswith(game) or f"-{game}-" in p.name))
        return folders[-1] if folders else None

    @classmethod
    def resume(cls, folder: Path) -> tuple["GameStore", Game]:
        """The store and the game as far as its record goes.

        Unlike ``masume record check``, the last line may hold half a turn: the
        game was cut off in the middle of it.
        """
        record = read_record(folder / "record.txt")
        rules = rules_for(record)
        game = Game(start_position(record, rules))
        for turn in record.turns:
            for text in turn.actions:
                try:
                    game.push_notation(text)
                except (IllegalAction, NotationError) as exc:
                    raise RecordError(turn.line, str(exc), text) from None
        headers = {k: v for k, v in record.headers.items() if k not in ("Game", "Position")}
        return cls(folder, headers), game

    def save(self, game: Game) -> None:
        """Write the record whole, atomically."""
        text = write_record(game, self.headers)
        tmp = self.folder / "record.txt.new"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.folder / "record.txt")

    def log(self, kind: str, **fields: Any) -> None:
        entry = {"t": round(time.time(), 3), "kind": kind, **fields}
        self._log.write(json.dumps(entry, ensure_ascii=False) + "\n")
        self._log.flush()
        os.fsync(self._log.fileno())

    def close(self) -> None:
        self._log.close()
