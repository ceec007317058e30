"""The club server's storage: every board event and every action, written (and
committed) before the board gets its acknowledgement; SQLite by default,
PostgreSQL (``postgresql://...``) for a server shared by several hosts.

Tables:

    games         one row per game: its table, players (headers), the record text
                  (rewritten after every change), result, active flag
    log           every board event and tracker decision, per game (as events.jsonl)
    board_events  every event the link accepted, before its ACK went out; ``done``
                  once the table's game has taken it, so a server killed between
                  the two takes it again at restart
    links         per board: the boot and last event seq held (the HELLO's ack)
    owners        which club server runs which board (several servers, one broker)
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Mapping

from masume.link import BoardEvent

SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY AUTOINCREMENT, table_id TEXT NOT NULL, game TEXT NOT NULL,
    headers TEXT NOT NULL, record TEXT, started REAL NOT NULL, updated REAL NOT NULL,
    result TEXT, active INTEGER NOT NULL DEFAULT 1);
CREATE TABLE IF NOT EXISTS log (
    id INTEGER PRIMARY KEY AUTOINCREMENT, game_id INTEGER NOT NULL, t REAL NOT NULL,
    kind TEXT NOT NULL, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS board_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT, unit TEXT NOT NULL, boot BIGINT NOT NULL,
    seq BIGINT NOT NULL, game_id INTEGER NOT NULL, data TEXT NOT NULL,
    done INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS board_events_open ON board_events (unit, done);
CREATE TABLE IF NOT EXISTS links (unit TEXT PRIMARY KEY, boot BIGINT NOT NULL, ack BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS owners (unit TEXT PRIMARY KEY, server TEXT NOT NULL, expires REAL NOT NULL);
CREATE TABLE IF NOT EXISTS servers (server TEXT PRIMARY KEY, expires REAL NOT NULL);
"""

POSTGRES_SCHEMA = SQLITE_SCHEMA.replace(
    "INTEGER PRIMARY KEY AUTOINCREMENT", "BIGSERIAL PRIMARY KEY").replace(
    "game_id INTEGER", "game_id BIGINT").replace("REAL", "DOUBLE PRECISION")


class ClubStore:
    """One database for the whole event. Thread-safe (one connection, a lock)."""

    def __init__(self, url: str | Path) -> None:
        url = str(url)
        self.url = url
        self._lock = threading.RLock()
        if url.startswith(("postgresql://", "postgres://")):
            import psycopg

            self.dialect = "postgres"
            self._db = psycopg.connect(url, autocommit=False)
            schema = POSTGRES_SCHEMA
        else:
            path = url.removeprefix("sqlite:///").removeprefix("sqlite://")
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self.dialect = "sqlite"
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None,
                                       timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")  # committed means on disk
            schema = SQLITE_SCHEMA
        with self._lock:
            for statement in filter(str.strip, schema.split(";")):
                self._exec(statement)
            self._commit()

    # ---- plumbing -------------------------------------------------------------

    def _exec(self, sql: str, args: tuple = ()) -> Any:
        if self.dialect == "postgres":
            sql = sql.replace("?", "%s")
        elif not self._db.in_transaction and not sql.lstrip().upper().startswith(("CREATE", "PRAGMA")):
            self._db.execute("BEGIN IMMEDIATE")
        return self._db.execute(sql, args)

    def _commit(self) -> None:
        if self.dialect == "postgres" or self._db.in_transaction:
            self._db.commit()

    def _rollback(self) -> None:
        try:
            self._db.rollback()
        except Exception:
            pass

    def _write(self, *statements: tuple[str, tuple]) -> Any:
        with self._lock:
            try:
                cur = None
                for sql, args in statements:
                    cur = self._exec(sql, args)
                self._commit()
                return cur
            except Exception:
                self._rollback()
                raise

    def _read(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self._lock:
            try:
                rows = self._exec(sql, args).fetchall()
                self._commit()
                return rows
            except Exception:
                self._rollback()
                raise

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # ---- games ----------------------------------------------------------------

    def new_game(self, table: str, game: str, headers: Mapping[str, str]) -> int:
        now = time.time()
        with self._lock:
            self._write(("UPDATE games SET active = 0 WHERE table_id = ? AND active = 1", (table,)))
            sql = ("INSERT INTO games (table_id, game, headers, record, started, updated) "
                   "VALUES (?, ?, ?, NULL, ?, ?)")
            if self.dialect == "postgres":
                cur = self._write((sql + " RETURNING id", (table, game, json.dumps(dict(headers)),
                                                           now, now)))
                return int(cur.fetchone()[0])
            cur = self._write((sql, (table, game, json.dumps(dict(headers)), now, now)))
            return int(cur.lastrowid)

    def active_game(self, table: str) -> tuple[int, str, dict, str | None] | None:
        rows = self._read("SELECT id, game, headers, record FROM games WHERE table_id = ? "
                          "AND active = 1 ORDER BY id DESC LIMIT 1", (table,))
        if not rows:
            return None
        gid, game, headers, record = rows[0]
        return int(gid), game, json.loads(headers), record

    def save_game(self, game_id: int, record: str, headers: Mapping[str, str],
                  result: str | None) -> None:
        self._write(("UPDATE games SET record = ?, headers = ?, result = ?, updated = ? "
                     "WHERE id = ?", (record, json.dumps(dict(headers)), result, time.time(),
                                      game_id)))

    def end_game(self, game_id: int, result: str) -> None:
        """The arbiter ends a game: its result, and no longer its table's active game."""
        self._write(("UPDATE games SET result = ?, active = 0, updated = ? WHERE id = ?",
                     (result, time.time(), game_id)))

    def ended_game(self, table: str) -> tuple[int, str | None] | None:
        """(id, result) of the table's last game if the arbiter ended it: the table
        then waits for its next assignment. (Only :meth:`end_game` leaves a table's
        last game inactive; :meth:`new_game` ends the others.)"""
        rows = self._read("SELECT id, result, active FROM games WHERE table_id = ? "
                          "ORDER BY id DESC LIMIT 1", (table,))
        if not rows or rows[0][2]:
            return None
        return int(rows[0][0]), rows[0][1]

    def games(self) -> list[dict[str, Any]]:
        rows = self._read("SELECT id, table_id, game, headers, result, active, started, updated "
                          "FROM games ORDER BY id")
        return [{"id": r[0], "table": r[1], "game": r[2], "headers": json.loads(r[3]),
                 "result": r[4], "active": bool(r[5]), "started": r[6], "updated": r[7]}
                for r in rows]

    def record(self, game_id: int) -> str | None:
        rows = self._read("SELECT record FROM games WHERE id = ?", (game_id,))
        return rows[0][0] if rows else None

    def log(self, game_id: int, kind: str, fields: Mapping[str, Any]) -> None:
        self._write(("INSERT INTO log (game_id, t, kind, data) VALUES (?, ?, ?, ?)",
                     (game_id, time.time(), kind, json.dumps(dict(fields), ensure_ascii=False))))

    def log_entries(self, game_id: int) -> list[dict[str, Any]]:
        rows = self._read("SELECT t, kind, data FROM log WHERE game_id = ? ORDER BY id", (game_id,))
        return [{"t": t, "kind": kind, **json.loads(data)} for t, kind, data in rows]

    # ---- the link: persisted before the ACK -------------------------------------

    def link_state(self, unit: str) -> tuple[int, int]:
        rows = self._read("SELECT boot, ack FROM links WHERE unit = ?", (unit,))
        return (int(rows[0][0]), int(rows[0][1])) if rows else (0, 0)

    def accept_event(self, unit: str, boot: int, ack: int, game_id: int, event: BoardEvent) -> None:
        """One event the link accepted, and where the link stands, in one transaction."""
        upsert = ("INSERT INTO links (unit, boot, ack) VALUES (?, ?, ?) ON CONFLICT (unit) "
                  "DO UPDATE SET boot = excluded.boot, ack = excluded.ack")
        self._write(
            ("INSERT INTO board_events (unit, boot, seq, game_id, data) VALUES (?, ?, ?, ?, ?)",
             (unit, boot, event.seq, game_id, event.to_json())),
            (upsert, (unit, boot, ack)),
        )

    _DONE = ("UPDATE board_events SET done = 1 WHERE id = (SELECT MIN(id) FROM "
             "board_events WHERE unit = ? AND done = 0)")

    def event_done(self, unit: str) -> None:
        """The table's game took the oldest open event of this board (they go in order)."""
        self._write((self._DONE, (unit,)))

    def log_event_taken(self, game_id: int, unit: str, fields: Mapping[str, Any]) -> None:
        """The game took the board's oldest open event: logged and marked done in one
        commit (one disk flush on the way from a board event to its LEDs, not two)."""
        self._write(("INSERT INTO log (game_id, t, kind, data) VALUES (?, ?, ?, ?)",
                     (game_id, time.time(), "board", json.dumps(dict(fields), ensure_ascii=False))),
                    (self._DONE, (unit,)))

    def open_events(self, unit: str, game_id: int) -> list[BoardEvent]:
        rows = self._read("SELECT data FROM board_events WHERE unit = ? AND done = 0 "
                          "AND game_id = ? ORDER BY id", (unit, game_id))
        return [event_from_json(r[0]) for r in rows]

    def close_open_events(self, unit: str) -> None:
        self._write(("UPDATE board_events SET done = 1 WHERE unit = ? AND done = 0", (unit,)))

    # ---- owners (several club servers) ---------------------------------------------

    def claim(self, unit: str, server: str, lease_s: float) -> bool:
        """Take or keep ``unit`` for ``server`` unless another holds a live lease."""
        now = time.time()
        sql = ("INSERT INTO owners (unit, server, expires) VALUES (?, ?, ?) ON CONFLICT (unit) "
               "DO UPDATE SET server = excluded.server, expires = excluded.expires "
               "WHERE owners.server = excluded.server OR owners.expires < ?")
        with self._lock:
            self._write((sql, (unit, server, now + lease_s, now)))
            rows = self._read("SELECT server FROM owners WHERE unit = ?", (unit,))
        return bool(rows) and rows[0][0] == server

    def release(self, unit: str, server: str) -> None:
        self._write(("DELETE FROM owners WHERE unit = ? AND server = ?", (unit, server)))

    def heartbeat(self, server: str, lease_s: float) -> None:
        self._write(("INSERT INTO servers (server, expires) VALUES (?, ?) ON CONFLICT (server) "
                     "DO UPDATE SET expires = excluded.expires", (server, time.time() + lease_s)))

    def leave(self, server: str) -> None:
        self._write(("DELETE FROM servers WHERE server = ?", (server,)),
                    ("DELETE FROM owners WHERE server = ?", (server,)))

    def live_servers(self) -> list[str]:
        return sorted(r[0] for r in self._read("SELECT server FROM servers WHERE expires >= ?",
                                                (time.time(),)))

    def owners(self) -> dict[str, tuple[str, float]]:
        return {u: (s, e) for u, s, e in self._read("SELECT unit, server, expires FROM owners")}


def event_from_json(text: str) -> BoardEvent:
    d = json.loads(text)

    def reading(value: Any) -> Any:
        return tuple(value) if isinstance(value, list) else value

    return BoardEvent(seq=d["seq"], type=d["type"], square=d.get("square"),
                      reading=reading(d.get("reading")), value=d.get("value"),
                      roll_id=d.get("roll_id"), button=d.get("button"),
                      readings={k: reading(v) for k, v in d.get("readings", {}).items()},
                      ms=d.get("ms"))
