"""The club server's storage: every game, saved (and committed) before the board
gets the acknowledgement of the events it took; SQLite by default, PostgreSQL
(``postgresql://...``) for a server shared by several hosts.

Tables:

    games         one row per game: its table, players (headers), the record text
                  (rewritten at every save, its headers holding where the board's
                  event stream stood: see masume.play.table), result, active flag
    log           every board event and tracker decision, per game (as events.jsonl)
    owners        which club server runs which board (several servers, one broker)
    servers       the club servers alive (several servers, one broker)
    schema_version  the version of this layout the database has (one row)

The layout is versioned: :data:`MIGRATIONS` lists every change since the first,
each a version number and its statements, and opening a database brings it up to
the last (an old database is upgraded on open, in one transaction, by one server at
a time; a database newer than this code is refused, rather than written wrongly).
A database from before the versions (the first layout, no ``schema_version``) is
version 0: the first migration's ``IF NOT EXISTS`` leaves its tables as they are.

A table's save is one transaction (:meth:`ClubStore.save_game`): the log lines of
the events it took and the record with the actions they made, together. Only once
it is committed does the table acknowledge those events to the board; a server
killed before that has the board send them again.

Group commit: the saves that come while a commit is being made to the disk wait
for it, and the next commit takes them all in one transaction (one fsync for the
lot, where each would wait for its own); each ``save_game`` returns only once its
save is committed, so the acknowledgement still follows the disk. A save alone
commits at once: there is no window to wait out. A group that fails for a reason
of its own (not the database's: see :class:`CannotSave`) is made again one save a
transaction, so that one table's fault is that table's alone. A write that cannot be made
(the disk full, the database read-only or away) raises masume.storage.CannotSave.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from masume.storage import CannotSave, LogEntry

#: The layout's versions: (version, what it changes, its statements in SQLite's words;
#: PostgreSQL's are made by :func:`_postgres`). Append, never edit one that shipped.
MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (1, "the first layout: games, log, owners, servers", """
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY AUTOINCREMENT, table_id TEXT NOT NULL, game TEXT NOT NULL,
    headers TEXT NOT NULL, record TEXT, started REAL NOT NULL, updated REAL NOT NULL,
    result TEXT, active INTEGER NOT NULL DEFAULT 1);
CREATE TABLE IF NOT EXISTS log (
    id INTEGER PRIMARY KEY AUTOINCREMENT, game_id INTEGER NOT NULL, t REAL NOT NULL,
    kind TEXT NOT NULL, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS owners (
    unit TEXT PRIMARY KEY, server TEXT NOT NULL, expires REAL NOT NULL);
CREATE TABLE IF NOT EXISTS servers (server TEXT PRIMARY KEY, expires REAL NOT NULL);
"""),
    (2, "indexes for a game's log and a table's active game", """
CREATE INDEX IF NOT EXISTS log_by_game ON log (game_id, id);
CREATE INDEX IF NOT EXISTS games_by_table ON games (table_id, active);
"""),
    (3, "a server says whether it shares the boards (an unshared one runs them all)", """
ALTER TABLE servers ADD COLUMN shared INTEGER NOT NULL DEFAULT 1;
"""),
)
#: The version this code writes.
SCHEMA_VERSION = MIGRATIONS[-1][0]


class NewerDatabase(RuntimeError):
    """A database whose layout is newer than this code knows: it is not touched."""


def _postgres(sql: str) -> str:
    """SQLite's statements in PostgreSQL's words."""
    return sql.replace("INTEGER PRIMARY KEY AUTOINCREMENT", "BIGSERIAL PRIMARY KEY").replace(
        "game_id INTEGER", "game_id BIGINT").replace("REAL", "DOUBLE PRECISION")


class _Save:
    """One save waiting for a group commit."""

    __slots__ = ("done", "error", "statements")

    def __init__(self, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
        self.statements = statements
        self.done = False
        self.error: Exception | None = None


class ClubStore:
    """One database for the whole event. Thread-safe (one connection, a lock)."""

    def __init__(self, url: str | Path) -> None:
        url = str(url)
        self.url = url
        self._lock = threading.RLock()
        self._group = threading.Condition()  # guards _waiting and _committing
        self._waiting: list[_Save] = []
        self._committing = False
        #: Transactions made for saves, and saves: their ratio is the group's size.
        self.group_commits = 0
        self.saves = 0
        self.dialect = "postgres" if url.startswith(("postgresql://", "postgres://")) else "sqlite"
        self._db: Any = None
        self._connect()

    def _connect(self) -> None:
        if self.dialect == "postgres":
            import psycopg

            self._db = psycopg.connect(self.url, autocommit=False)
        else:
            path = self.url.removeprefix("sqlite:///").removeprefix("sqlite://")
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None,
                                       timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")  # committed means on disk
        with self._lock:
            try:
                self._migrate()
            except BaseException:
                self._db.close()
                raise

    def _migrate(self) -> None:
        """Bring the database's layout up to :data:`SCHEMA_VERSION` (see the module
        docstring), in one transaction that holds other servers off meanwhile."""
        try:
            if self.dialect == "postgres":
                self._exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
                self._exec("LOCK TABLE schema_version IN EXCLUSIVE MODE")
            else:
                self._db.execute("BEGIN IMMEDIATE")
                self._exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            rows = self._exec("SELECT version FROM schema_version").fetchall()
            version = max((int(r[0]) for r in rows), default=0)
            if version > SCHEMA_VERSION:
                raise NewerDatabase(
                    f"{self.url}: the database's layout is version {version}, newer than this "
                    f"masume's ({SCHEMA_VERSION}): upgrade masume to use it")
            for number, _what, sql in MIGRATIONS:
                if number <= version:
                    continue
                if self.dialect == "postgres":
                    sql = _postgres(sql)
                for statement in filter(str.strip, sql.split(";")):
                    self._exec(statement)
            if version != SCHEMA_VERSION or len(rows) != 1:
                self._exec("DELETE FROM schema_version")
                self._exec("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
            self._commit()
        except BaseException:
            self._rollback()
            raise

    def schema_version(self) -> int:
        """The version of the layout the database has (:data:`SCHEMA_VERSION` once open)."""
        rows = self._read("SELECT version FROM schema_version")
        return int(rows[0][0]) if rows else 0

    # ---- plumbing -------------------------------------------------------------

    def _exec(self, sql: str, args: tuple[Any, ...] = ()) -> Any:
        if self.dialect == "postgres":
            sql = sql.replace("?", "%s")
        elif (not self._db.in_transaction
              and not sql.lstrip().upper().startswith(("CREATE", "PRAGMA"))):
            self._db.execute("BEGIN IMMEDIATE")
        return self._db.execute(sql, args)

    def _commit(self) -> None:
        if self.dialect == "postgres" or self._db.in_transaction:
            self._db.commit()

    def _reconnect_if_lost(self) -> None:
        if self.dialect == "postgres" and (self._db.closed or self._db.broken):
            self._connect()  # the database server restarted: a new connection

    def _rollback(self) -> None:
        try:
            self._db.rollback()
        except Exception:  # noqa: BLE001, S110 (a connection that is gone has nothing to undo)
            pass

    def _write(self, *statements: tuple[str, tuple[Any, ...]]) -> Any:
        """Run ``statements`` in one transaction; CannotSave when the database cannot
        take it now (the disk full, read-only, the server away: tried again later)."""
        with self._lock:
            try:
                self._reconnect_if_lost()
                cur = None
                for sql, args in statements:
                    cur = self._exec(sql, args)
                self._commit()
                return cur
            except Exception as exc:
                self._rollback()
                reason = _cannot_write(exc)
                if reason:
                    raise CannotSave(reason) from exc
                raise

    def _write_grouped(self, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
        """``statements`` committed in one transaction, perhaps with other threads'
        (group commit); returns once they are committed, raises what their commit
        raised."""
        mine = _Save(statements)
        with self._group:
            self._waiting.append(mine)
            while not mine.done and self._committing:
                self._group.wait()
            if mine.done:  # another thread's commit took it
                if mine.error is not None:
                    raise mine.error
                return
            # No commit under way: this thread makes the next, for every save waiting.
            self._committing = True
            group, self._waiting = self._waiting, []
        try:
            self._commit_group(group)
        finally:
            with self._group:
                for save in group:
                    save.done = True
                self._committing = False
                self._group.notify_all()
        if mine.error is not None:
            raise mine.error

    def _commit_group(self, group: list[_Save]) -> None:
        self.group_commits += 1
        self.saves += len(group)
        try:
            self._write(*[statement for save in group for statement in save.statements])
            return
        except CannotSave as exc:  # the database's reason: the same for every save
            for save in group:
                save.error = CannotSave(exc.reason)  # each raised in its own thread
            return
        except Exception as exc:  # noqa: BLE001 (each save's own outcome, below)
            if len(group) == 1:
                group[0].error = exc
                return
        for save in group:
            try:
                self._write(*save.statements)
            except Exception as exc:  # noqa: BLE001 (raised in its own table's thread)
                save.error = exc

    def _read(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                self._reconnect_if_lost()
                rows: list[tuple[Any, ...]] = self._exec(sql, args).fetchall()
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

    def active_game(self, table: str) -> tuple[int, str, dict[str, str], str | None] | None:
        rows = self._read("SELECT id, game, headers, record FROM games WHERE table_id = ? "
                          "AND active = 1 ORDER BY id DESC LIMIT 1", (table,))
        if not rows:
            return None
        gid, game, headers, record = rows[0]
        return int(gid), game, json.loads(headers), record

    def save_game(self, game_id: int, record: str, headers: Mapping[str, str],
                  result: str | None, log: Iterable[LogEntry] = ()) -> None:
        """The game's record and the log lines that led to it, in one transaction
        (perhaps with other tables' saves: group commit); returns once committed."""
        self._write_grouped(self.game_save(game_id, record, headers, result, log))

    @staticmethod
    def game_save(game_id: int, record: str, headers: Mapping[str, str], result: str | None,
                  log: Iterable[LogEntry] = ()) -> list[tuple[str, tuple[Any, ...]]]:
        """The statements of :meth:`save_game`, for :meth:`commit_saves`."""
        statements: list[tuple[str, tuple[Any, ...]]] = [
            ("INSERT INTO log (game_id, t, kind, data) VALUES (?, ?, ?, ?)",
             (game_id, t, kind, json.dumps(dict(fields), ensure_ascii=False)))
            for t, kind, fields in log]
        statements.append((
            "UPDATE games SET record = ?, headers = ?, result = ?, updated = ? WHERE id = ?",
            (record, json.dumps(dict(headers)), result, time.time(), game_id)))
        return statements

    def commit_saves(self, saves: list[list[tuple[str, tuple[Any, ...]]]]
                     ) -> list[Exception | None]:
        """Several saves (:meth:`game_save`) committed in one transaction, for a caller
        that gathers them itself (the club server's committer): each save's error, or
        None once it is committed. A group that fails for a reason of its own is made
        again one save a transaction, as :meth:`save_game`'s."""
        group = [_Save(statements) for statements in saves]
        if group:
            self._commit_group(group)
        return [save.error for save in group]

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

    _GAME_COLUMNS = "id, table_id, game, headers, result, active, started, updated"

    @staticmethod
    def _game_row(r: tuple[Any, ...]) -> dict[str, Any]:
        return {"id": r[0], "table": r[1], "game": r[2], "headers": json.loads(r[3]),
                "result": r[4], "active": bool(r[5]), "started": r[6], "updated": r[7]}

    def games(self) -> list[dict[str, Any]]:
        rows = self._read(f"SELECT {self._GAME_COLUMNS} FROM games ORDER BY id")
        return [self._game_row(r) for r in rows]

    def game(self, game_id: int) -> dict[str, Any] | None:
        """One game as :meth:`games` lists it, and its record's text (``record``: None
        before its first save); None if there is no such game."""
        rows = self._read(f"SELECT {self._GAME_COLUMNS}, record FROM games WHERE id = ?",
                          (game_id,))
        return {**self._game_row(rows[0]), "record": rows[0][8]} if rows else None

    def record(self, game_id: int) -> str | None:
        rows = self._read("SELECT record FROM games WHERE id = ?", (game_id,))
        return rows[0][0] if rows else None

    def log_entries(self, game_id: int) -> list[dict[str, Any]]:
        rows = self._read("SELECT t, kind, data FROM log WHERE game_id = ? ORDER BY id", (game_id,))
        return [{"t": t, "kind": kind, **json.loads(data)} for t, kind, data in rows]

    # ---- owners (several club servers) ---------------------------------------------

    def claim(self, unit: str, server: str, lease_s: float) -> bool:
        """Take or keep ``unit`` for ``server`` unless another holds a live lease."""
        return unit in self.claim_all([unit], server, lease_s)

    def claim_all(self, units: Iterable[str], server: str, lease_s: float) -> set[str]:
        """:meth:`claim` for each of ``units``, in one transaction (a server taking over
        a dead one's tables makes one commit, not one per table); the units it got."""
        now = time.time()
        sql = ("INSERT INTO owners (unit, server, expires) VALUES (?, ?, ?) ON CONFLICT (unit) "
               "DO UPDATE SET server = excluded.server, expires = excluded.expires "
               "WHERE owners.server = excluded.server OR owners.expires < ?")
        wanted = set(units)
        if not wanted:
            return set()
        with self._lock:
            self._write(*[(sql, (unit, server, now + lease_s, now)) for unit in sorted(wanted)])
            rows = self._read("SELECT unit FROM owners WHERE server = ?", (server,))
        return wanted & {row[0] for row in rows}

    def renew(self, server: str, lease_s: float) -> set[str]:
        """Extend every lease ``server`` still holds, in one statement (a hall's
        server renews a thousand tables a second with one commit, not a thousand);
        the units it holds. A unit missing from them was taken by another server
        once its lease ran out: this server must stop its table."""
        # Then read back: a lease renewed cannot be taken meanwhile (it has not run out).
        with self._lock:
            self._write(("UPDATE owners SET expires = ? WHERE server = ?",
                         (time.time() + lease_s, server)))
            rows = self._read("SELECT unit FROM owners WHERE server = ?", (server,))
        return {row[0] for row in rows}

    def release(self, unit: str, server: str) -> None:
        self._write(("DELETE FROM owners WHERE unit = ? AND server = ?", (unit, server)))

    def heartbeat(self, server: str, lease_s: float, *, shared: bool = True) -> None:
        """``server`` is alive for ``lease_s`` more, sharing the boards with the other
        servers (``shared``) or running them all."""
        self._write((("INSERT INTO servers (server, expires, shared) VALUES (?, ?, ?) "
                      "ON CONFLICT (server) DO UPDATE SET expires = excluded.expires, "
                      "shared = excluded.shared"),
                     (server, time.time() + lease_s, int(shared))))

    def leave(self, server: str) -> None:
        self._write(("DELETE FROM servers WHERE server = ?", (server,)),
                    ("DELETE FROM owners WHERE server = ?", (server,)))

    def live_servers(self, *, shared: bool | None = None) -> list[str]:
        """The servers alive, or only those that share the boards (``shared=True``) or
        that run them all (``shared=False``)."""
        rows = self._read("SELECT server, shared FROM servers WHERE expires >= ?", (time.time(),))
        return sorted(r[0] for r in rows if shared is None or bool(r[1]) == shared)

    def owner(self, unit: str) -> tuple[str, float] | None:
        """(server, expires) of ``unit``'s lease, or None: one row, where
        :meth:`owners` reads a hall's worth."""
        rows = self._read("SELECT server, expires FROM owners WHERE unit = ?", (unit,))
        return (rows[0][0], float(rows[0][1])) if rows else None

    def owners(self) -> dict[str, tuple[str, float]]:
        return {u: (s, e) for u, s, e in self._read("SELECT unit, server, expires FROM owners")}


def _cannot_write(exc: Exception) -> str | None:
    """Why the database refused a write, in words, when the cause is outside the
    server (room, permissions, the database away); None for a bug."""
    if isinstance(exc, sqlite3.OperationalError):
        text = str(exc)
        if "full" in text:
            return "disk full"
        if "readonly" in text or "read-only" in text:
            return "read-only database"
        if "locked" in text or "unable to open" in text or "disk I/O" in text:
            return text
        return None
    try:
        import psycopg
    except ImportError:
        return None
    if isinstance(exc, psycopg.errors.DiskFull):
        return "disk full"
    if isinstance(exc, psycopg.errors.ReadOnlySqlTransaction):
        return "read-only database"
    if isinstance(exc, psycopg.OperationalError):
        return f"database unavailable ({str(exc).strip().splitlines()[0] if str(exc) else exc})"
    return None
