"""Saved games: every game played on a board, written as it goes.

A game lives in its own folder::

    ~/.local/share/masume/games/20261121-143005-soccer-shogi/
        record.txt     the game record (masume.records format), rewritten whole
                       and atomically at every save: a power cut leaves the
                       previous or the new record, never half of one
        events.jsonl   every board event and every tracker decision, appended
                       before the record of each save

A save is durable when :meth:`GameStore.save` returns: the files are flushed to
the disk (fsync) and so is the folder that names them. The table acknowledges
the board's events only then (masume.play.table), so a host that dies loses
nothing: the board still holds what the last save does not. The record's
headers carry what the table needs to go on from it (the ``Link``, ``Sensed``
and ``Tracker`` headers, see masume.play.table).

A save that cannot be made (the disk full, the file system read-only) raises
:class:`CannotSave`, leaving the files as the last save left them.

:meth:`GameStore.resume` reads the record back, so a game goes on from its last
save after a crash.
"""

from __future__ import annotations

import errno
import json
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from masume.records import read_record, resume, write_record
from masume.rules import Game

#: One line of a game's event log: (time.time(), kind, fields).
LogEntry = tuple[float, str, Mapping[str, Any]]

#: What a failed save says, by errno: the reasons a player can act on.
_REASONS = {
    errno.ENOSPC: "disk full",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EIO: "input/output error",
}


class CannotSave(Exception):
    """A save that could not be made; ``reason`` says why ("disk full")."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"cannot save: {reason}")

    @classmethod
    def from_os_error(cls, exc: OSError) -> CannotSave:
        return cls(_REASONS.get(exc.errno or 0) or exc.strerror or str(exc))


def default_games_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "masume" / "games"


def log_line(entry: LogEntry) -> str:
    t, kind, fields = entry
    return json.dumps({"t": round(t, 3), "kind": kind, **fields}, ensure_ascii=False) + "\n"


class Store(Protocol):
    """Where a table saves its game: a folder (:class:`GameStore`) or the club's
    database (masume.club.server.TableStore)."""

    #: The record's headers, as the table last wrote them.
    headers: dict[str, str]

    def save(self, game: Game[Any], log: Iterable[LogEntry] = ()) -> None:
        """The game and the event log lines since the last save, durably; CannotSave
        when it cannot be made now."""

    def close(self) -> None: ...


class GameStore:
    def __init__(self, folder: Path, headers: Mapping[str, str] | None = None) -> None:
        self.folder = folder
        self.headers = dict(headers or {})
        folder.mkdir(parents=True, exist_ok=True)

    @classmethod
    def new(cls, games_dir: Path, game: str, headers: Mapping[str, str] | None = None) -> GameStore:
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
    def resume(cls, folder: Path) -> tuple[GameStore, Game[Any]]:
        """The store and the game as far as its record goes (the last line may hold
        half a turn: the game was cut off in the middle of it)."""
        record = read_record(folder / "record.txt")
        headers = {k: v for k, v in record.headers.items() if k not in ("Game", "Position")}
        return cls(folder, headers), resume(record)

    def save(self, game: Game[Any], log: Iterable[LogEntry] = ()) -> None:
        """Append ``log`` to events.jsonl, then write the record whole, atomically;
        durable when it returns. CannotSave, and the files as they were, if not
        (the log lines are written again with the next save)."""
        events = self.folder / "events.jsonl"
        lines = "".join(log_line(entry) for entry in log).encode("utf-8")
        logged = None
        try:
            if lines:
                logged = _append_durably(events, lines)
            _replace_durably(self.folder / "record.txt",
                             write_record(game, self.headers).encode("utf-8"))
        except OSError as exc:
            if logged is not None:
                _cut_back(events, logged)
            raise CannotSave.from_os_error(exc) from exc

    def close(self) -> None:
        pass  # every save is complete when it returns: nothing is held open


def _append_durably(path: Path, data: bytes) -> int:
    """Append ``data`` and fsync; the file's size before. On failure the file is cut
    back to that size, so that a half-written line never stays."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except OSError:
            _cut_back(path, size)
            raise
    finally:
        os.close(fd)
    if size == 0:
        _fsync_folder(path.parent)  # a new file: its name must be durable too
    return size


def _cut_back(path: Path, size: int) -> None:
    """Truncate ``path`` to ``size`` bytes, if it can be (it is what was there)."""
    try:
        os.truncate(path, size)
    except OSError:
        pass


def _replace_durably(path: Path, data: bytes) -> None:
    """Write ``data`` to a new file, fsync it, rename it over ``path`` and fsync the
    folder: after a power cut ``path`` holds the old bytes or these, whole."""
    tmp = path.with_name(path.name + ".new")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink()  # free what it took: the disk may be full
        except OSError:
            pass
        raise
    _fsync_folder(path.parent)


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
