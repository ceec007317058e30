"""``masume club serve``: one server runs the game of every table at a club night.

    boards --MQTT--> broker --> MqttHub --> one LoopLink per board
                                               |
                                               v
                                 LoopTable (tracker, rules, LEDs) --> Committer --> ClubStore
                                    an event is acknowledged once the game it
                                    made is committed (group commit)

Every board's traffic and every table's game run on one asyncio loop, in one
thread (masume.club.runner: no thread per table, nothing polled; a table wakes
for its board's events and its own deadlines, a link for its heartbeat). Beside
it: the committer's thread (the saves, one transaction for all that wait), the
tables' thread (starting a table reads the database) and the leases' thread.
With ``workers`` of 2 or more, each table's tracker and rules (its TableCore) run
in one of that many worker processes instead (masume.club.pool: PoolTable), the
loop keeping the links, the saves and the ACKs.

Boards are discovered by their retained status topic; a board that is not in
the assignments (an unregistered board) is logged and ignored. A table's game
outlives its board's drops and reboots (the BoardSession reconnects and
resynchronises) and the server's own restarts: the game comes back from the
store, and with it where the board's event stream stood (its ``Link`` header),
so the board sends again every event the last commit does not cover.

No thread dies quietly: the tables and links recover by themselves
(masume.club.runner, masume.link.loop: every callback of theirs catches what it
raises); the server's own threads and the loop catch every exception, log it,
count it (:meth:`ClubServer.health_report`) and go on, and every few seconds a
board that is online but has no running table gets one.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import logging
import os
import queue
import threading
import time
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from masume import heap
from masume.boards import Board, BoardError, load_board
from masume.games import load_rules
from masume.health import LOOP_CPU, Health
from masume.link.loop import LoopLink
from masume.link.mqtt import BrokerUrl, MqttHub, valid_unit
from masume.play.computer import COMPUTER_HEADER, check_computer, computer_of
from masume.records import parse_record, resume, write_record
from masume.rules import Game
from masume.schema import unknown_key
from masume.storage import CannotSave, LogEntry
from masume.subscribers import Subscribers

from .pool import PoolTable, WorkerPool
from .runner import Committer, LoopTable, Statements
from .store import ClubStore

log = logging.getLogger("masume.club")

#: A board's owner must renew within this long, or another server takes it: a server
#: killed has its tables run elsewhere within LEASE_S + RENEW_S and a table's start
#: (issue 17: under 5 s). Renewing is one statement a server (ClubStore.renew).
LEASE_S = 3.0
RENEW_S = 1.0  # also how often boards online without a running table are looked at again
LOOP_LAG_S = 0.5  # a loop this late is said in the log
#: Set to 1, the server counts its loop's CPU stage by stage (masume.health.LoopCpu) and
#: logs it on SIGUSR1 (`masume club serve`): what `masume bench club` reads.
LOOP_CPU_ENV = "MASUME_LOOP_CPU"
UNREGISTERED_NAMED = 100  # unregistered boards named in the log; more are only counted
#: Boards the tables' thread takes up together: their leases claimed in one commit, their
#: tables built while the worker processes open the ones before, all launched in one turn
#: of the loop (a server taking over 47 tables one after the other took 10-13 s).
STARTS_AT_ONCE = 16


@dataclass(frozen=True)
class Assignment:
    """What a table plays: the game, the board definition, the two players, and the
    side the computer plays (``computer``, at ``level``: masume.ai.LEVELS), if any."""

    table: str  # the board's unit id (its MQTT topics)
    game: str
    board: str | None = None
    players: tuple[str, str] = ("", "")
    options: str = ""
    computer: str | None = None
    level: str = "casual"

    def headers(self, sides: Sequence[str]) -> dict[str, str]:
        """The record's headers: the table, each player under their side's name, the
        options, the computer's side and level (``Computer: red casual``, as ``masume
        play --computer`` writes it: the table's game goes on with it from its save,
        on this server or another)."""
        out = {"Table": self.table}
        for side, name in zip(sides, self.players):
            if name:
                out[side.capitalize()] = name
        if self.options:
            out["Options"] = self.options
        if self.computer:
            out[COMPUTER_HEADER] = f"{self.computer} {self.level}"
        return out


class AssignmentError(ValueError):
    pass


class ServerRunning(RuntimeError):
    """Another live server would run the same tables into the same games."""


def load_assignments(path: str | Path) -> dict[str, Assignment]:
    """The tables file (TOML)::

        [tables.table-1]          # the board's unit id
        game = "soccer-shogi"
        players = ["Aiko", "Ben"] # first player, second player
        board = "soccer-shogi"    # optional: the game's usual board
        computer = "red"          # optional: the computer plays this side
        level = "beginner"        # optional: its strength (casual unless said)
    """
    try:
        source = Path(path).read_text(encoding="utf-8")
        data = tomllib.loads(source)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise AssignmentError(f"{path}: {exc}") from None
    # A misspelt key would leave a table out, or a computer unasked for, in silence.
    for key in data:
        if key != "tables":
            raise AssignmentError(f"{path}: {unknown_key(key, ['tables'], source)}")
    tables = data.get("tables", {})
    if not isinstance(tables, dict):
        raise AssignmentError(f"{path}: [tables] must be a table of tables")
    return {unit: make_assignment(unit, spec, str(path), source)
            for unit, spec in tables.items()}


#: What a table's assignment may say (the tables file, the arbiter's page).
ASSIGNMENT_KEYS = ("game", "players", "board", "computer", "level", "options")


def make_assignment(unit: str, spec: Mapping[str, Any], where: str = "",
                    source: str = "") -> Assignment:
    """A table's assignment from the tables file (``where`` its path, ``source`` its
    text, for the line of a mistake) or the arbiter's page."""
    where = f"{where}: " if where else ""
    if not valid_unit(unit):
        raise AssignmentError(f"{where}{unit!r} is not a board unit id (letters, digits, _ . -)")
    if not isinstance(spec, Mapping) or not isinstance(spec.get("game"), str):
        raise AssignmentError(f"{where}table {unit!r} needs game = \"...\"")
    for key in spec:  # a misspelt key would leave a computer or players out in silence
        if key not in ASSIGNMENT_KEYS:
            raise AssignmentError(where + unknown_key(
                str(key), list(ASSIGNMENT_KEYS), source, (f"tables.{unit}", None),
                f"table {unit!r}"))
    try:
        rules = load_rules(spec["game"])
        load_board(spec.get("board") or rules.board)
    except (ValueError, BoardError) as exc:
        raise AssignmentError(f"{where}table {unit!r}: {exc}") from None
    players = spec.get("players", ["", ""])
    if (not isinstance(players, (list, tuple)) or len(players) > 2
            or not all(isinstance(p, str) for p in players)):
        raise AssignmentError(f"{where}table {unit!r}: players = [\"first\", \"second\"]")
    players = tuple(list(players) + ["", ""])[:2]
    computer, level_name = spec.get("computer") or None, spec.get("level") or "casual"
    if computer is not None or spec.get("level"):
        if not isinstance(computer, str) or not isinstance(level_name, str):
            raise AssignmentError(f"{where}table {unit!r}: computer = \"SIDE\" (one of the "
                                  "game's sides), level = \"LEVEL\"")
        try:
            check_computer(computer, level_name, rules.start().sides, spec["game"])
        except ValueError as exc:
            raise AssignmentError(f"{where}table {unit!r}: {exc}") from None
    return Assignment(unit, spec["game"], spec.get("board"), players,
                      str(spec.get("options", "")), computer, level_name)


class TableStore:
    """What TableSession saves (the game with its headers, and the log lines of the
    events that made it), into the club's store: one transaction a save."""

    def __init__(self, store: ClubStore, game_id: int, unit: str,
                 headers: Mapping[str, str]) -> None:
        self.store = store
        self.game_id = game_id
        self.unit = unit
        self.headers = dict(headers)
        self.folder = f"game {game_id}"

    def save(self, game: Game[Any], log: Iterable[LogEntry] = ()) -> None:
        self.store.save_game(self.game_id, write_record(game, self.headers), self.headers,
                             self._result(game), log)

    def statements(self, game: Game[Any], log: Iterable[LogEntry] = ()) -> Statements:
        """What :meth:`save` writes, for the committer (masume.club.runner)."""
        return self.record_statements(write_record(game, self.headers), self.headers,
                                      self._result(game), log)

    def record_statements(self, record: str, headers: Mapping[str, str], result: str | None,
                          log: Iterable[LogEntry] = ()) -> Statements:
        """A save written already (by a table's worker, masume.club.pool)."""
        self.headers = dict(headers)
        return self.store.game_save(self.game_id, record, self.headers, result, log)

    def _result(self, game: Game[Any]) -> str | None:
        return game_result(game, self.headers)

    def close(self) -> None:
        pass


def game_result(game: Game[Any], headers: Mapping[str, str]) -> str | None:
    """The result stored with a game: its outcome, a resignation or a loss on time."""
    outcome = game.position.outcome()
    return str(outcome) if outcome else (
        f"{headers['Resigned']} resigned" if headers.get("Resigned") else
        f"{headers['Timeout']} lost on time" if headers.get("Timeout") else None)


def resume_game(record_text: str, game_name: str) -> Game[Any]:
    return resume(parse_record(record_text), game_name)


@dataclass
class ClubTable:
    unit: str
    assignment: Assignment
    board: Board
    game_id: int
    link: LoopLink
    session: LoopTable | PoolTable
    moves: int = 0
    actions: list[tuple[str, str, str]] = field(default_factory=list)


class ClubServer:
    """Every table of the event. ``assignments``: unit id -> Assignment.

    ``server_id`` names this server to the broker and, with several servers on
    one broker and one database, in the owners table: a server runs only the
    boards it holds a lease for, and takes over a board whose lease ran out.

    ``workers``: with 2 or more, each table's tracker and rules run in one of that
    many worker processes (masume.club.pool); 0 or 1: on the loop, in this process.

    ``own_process``: the server is its process's only business (`masume club serve`):
    after each start of tables it takes its heap out of the collector's walks
    (masume.heap.settle), which changes the collector for the whole process, and its
    long collections are said in the log (masume.heap.watch).
    """

    def __init__(self, broker: str | BrokerUrl, store: ClubStore,
                 assignments: Mapping[str, Assignment],
                 *, server_id: str = "club", shared: bool = False, workers: int = 0,
                 on_change: Callable[[str], None] | None = None,
                 own_process: bool = False) -> None:
        self.broker = broker
        self.own_process = own_process
        self.store = store
        self.assignments = dict(assignments)
        self.server_id = server_id
        self.shared = shared
        self.tables: dict[str, ClubTable] = {}
        self.unregistered: set[str] = set()  # named in the log (at most UNREGISTERED_NAMED)
        self.unregistered_seen = 0  # status messages of unregistered boards
        self.hub: MqttHub | None = None
        self._lock = threading.RLock()
        # Boards to look at: each at most once in the queue, so it is bounded by the
        # assignments however often their status comes.
        self._work: queue.Queue[str | None] = queue.Queue()
        self._queued: set[str] = set()
        self._stop = threading.Event()
        self._threads: dict[str, threading.Thread] = {}
        self._subscribers = Subscribers("masume.club")
        if on_change is not None:
            self._subscribers.add(on_change)  # a callback that fails is logged, not fatal
        self._unowned: dict[str, float] = {}
        #: Boards another server's lease keeps from this one for less than RENEW_S: when
        #: it runs out (wall clock). The tables' thread looks at them again then, not at
        #: the leases' next turn (a killed server's boards move up to a second sooner).
        self._lease_ends: dict[str, float] = {}
        #: Tables whose game the arbiter ended (unit -> result): idle until assigned.
        self.ended: dict[str, str | None] = {}
        self.health = {name: Health(name, f"club server {server_id}")
                       for name in ("club-loop", "club-commit", "club-tables", "club-leases")}
        self.loop: asyncio.AbstractEventLoop | None = None
        self.loop_lag = 0.0  # how late the loop ran lately, in seconds (a decaying maximum)
        self.committer: Committer | None = None
        self.workers = workers
        self.pool: WorkerPool | None = None

    # ---- running ----------------------------------------------------------------

    def start(self, wait: float = 5.0) -> ClubServer:
        # The loop's CPU stage by stage (masume.health.LoopCpu), for `masume bench club`.
        LOOP_CPU.on = os.environ.get(LOOP_CPU_ENV) == "1"
        if self.own_process:
            heap.watch(f"club server {self.server_id}")  # a long collection said in the log
        self._take_the_name()
        if self.workers > 1:
            self.pool = WorkerPool(self.workers, self.server_id)
        loop = self.loop = asyncio.new_event_loop()
        loop.set_exception_handler(self._loop_fault)
        self.committer = Committer(self.store, loop, self.health["club-commit"])
        self.hub = MqttHub(self.broker, f"masume-club-{self.server_id}", on_status=self._on_status)
        self.hub.on_connection = self._on_connection
        for target, name in ((self._run_loop, "club-loop"), (self.committer.run, "club-commit"),
                             (self._worker, "club-tables"), (self._leases, "club-leases")):
            thread = threading.Thread(target=self._guarded, args=(target, name), name=name,
                                      daemon=True)
            thread.start()
            self._threads[name] = thread
        self._on_loop(self.hub.start_on, loop)
        self._on_loop(self._watch_loop, time.monotonic())
        self.hub.connected.wait(wait)
        return self

    def _watch_loop(self, planned: float) -> None:
        """Once a second on the loop: how late it runs (a loop held up holds every
        board up); a lag over LOOP_LAG_S is said in the log and kept in the report."""
        now = time.monotonic()
        lag = now - planned
        self.loop_lag = max(self.loop_lag * 0.9, lag)
        if lag > LOOP_LAG_S:
            log.warning("the loop ran %.2f s late", lag)
        if self.pool is not None:
            self.pool.watch()
        assert self.loop is not None
        self.loop.call_at(now + 1.0, self._watch_loop, now + 1.0)

    def close(self) -> None:
        if self._stop.is_set():
            return  # closed already
        self._stop.set()
        self._work.put(None)
        for name in ("club-tables", "club-leases"):
            if name in self._threads:
                self._threads[name].join(timeout=5)
        with self._lock:
            tables = list(self.tables.values())
            self.tables.clear()
        if self.loop is not None and self.loop.is_running():
            # Every table's last save goes to the committer at once; then wait for them.
            saves = self._on_loop(lambda: [self._halt(t) for t in tables])
            deadline = time.monotonic() + 30
            for done in saves:
                done.wait(max(0.0, deadline - time.monotonic()))
        if self.shared:
            for table in tables:
                self.store.release(table.unit, self.server_id)
            self.store.leave(self.server_id)
        else:
            with contextlib.suppress(CannotSave):  # (it runs out by itself: _heartbeat)
                self.store.leave(self.server_id)
        if self.hub and self.loop:
            self._on_loop(self.hub.close)
        if self.committer:
            self.committer.stop()
        if self.pool is not None:
            self.pool.close()
        if self.loop:
            self.loop.call_soon_threadsafe(self.loop.stop)
        for name in ("club-commit", "club-loop"):
            if name in self._threads:
                self._threads[name].join(timeout=5)
        if self.loop and not self._threads["club-loop"].is_alive():
            self.loop.close()

    def _run_loop(self) -> None:
        """The loop's thread: every board's traffic and every table's game."""
        assert self.loop is not None
        LOOP_CPU.thread_id = threading.get_ident()
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def _loop_fault(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """What a callback on the loop let through (none should): logged and counted."""
        exc = context.get("exception")
        message = self.health["club-loop"].fault(
            f"error ({context.get('message')}: {exc!r})", "going on", recover=False)
        log.error("%s", message, exc_info=exc)

    def _on_loop(self, call: Callable[..., Any], *args: Any) -> Any:
        """``call(*args)`` on the loop's thread, its result (or what it raised) here."""
        assert self.loop is not None
        if self._threads.get("club-loop") is threading.current_thread():
            return call(*args)
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def run() -> None:
            try:
                future.set_result(call(*args))
            except BaseException as exc:  # noqa: BLE001 (handed to the caller, who raises it)
                future.set_exception(exc)

        self.loop.call_soon_threadsafe(run)
        return future.result(timeout=60)

    def _on_connection(self, up: bool) -> None:
        """The broker came or went (on the loop): every link is told."""
        with self._lock:
            tables = list(self.tables.values())
        for table in tables:
            table.link.broker(up)

    def _on_status(self, unit: str, state: str) -> None:
        if unit not in self.assignments:
            self.unregistered_seen += 1
            if unit not in self.unregistered and len(self.unregistered) < UNREGISTERED_NAMED:
                self.unregistered.add(unit)
                log.warning("board %r is not registered for this event: ignored", unit)
            return
        self._look_at(unit)
        self._changed(unit)

    def _look_at(self, unit: str) -> None:
        """Queue ``unit`` for the worker, unless it is queued already."""
        with self._lock:
            if unit in self._queued:
                return
            self._queued.add(unit)
        self._work.put(unit)

    def _guarded(self, target: Callable[[], None], name: str) -> None:
        """Run one of the server's threads; an exception is logged, counted and the
        thread goes on (after a second, so that a fault that repeats does not spin)."""
        health = self.health[name]
        health.running()
        while not self._stop.is_set():
            try:
                target()
                return
            except Exception as exc:
                message = health.fault(f"error ({type(exc).__name__}: {exc})", "going on")
                log.error("%s", message, exc_info=exc)
                if self._stop.wait(1.0):
                    return
                health.recovered()

    def _worker(self) -> None:
        """The tables' thread: the boards queued, taken a batch at a time (at most
        STARTS_AT_ONCE: a server taking over a dead one's share of the hall starts its
        tables together, not one after the other)."""
        while not self._stop.is_set():
            ends = self._lease_ends
            try:
                batch = [self._work.get(
                    timeout=max(0.0, min(ends.values()) - time.time()) if ends else None)]
            except queue.Empty:
                batch = []
            while len(batch) < STARTS_AT_ONCE:
                try:
                    batch.append(self._work.get_nowait())
                except queue.Empty:
                    break
            units = [unit for unit in batch if unit is not None]
            with self._lock:
                self._queued.difference_update(units)
            if len(units) < len(batch):
                return  # close()
            now = time.time()
            for unit, end in sorted(ends.items(), key=lambda item: item[1]):
                if end > now or len(units) >= STARTS_AT_ONCE:
                    break
                del ends[unit]
                if unit not in units:
                    units.append(unit)
            if units:
                self._start_tables(units)

    def _cannot_start(self, what: str, exc: Exception) -> None:
        """Said and counted; the board is looked at again within RENEW_S (the leases'
        thread) while it is online."""
        message = self.health["club-tables"].fault(
            f"cannot start table {what} ({type(exc).__name__}: {exc})", "trying again",
            recover=False)
        # A store that cannot write now is no bug: no traceback for it.
        log.error("%s", message, exc_info=None if isinstance(exc, CannotSave) else exc)

    def preferred(self, unit: str, servers: list[str] | None = None) -> bool:
        """Is this server the one that should run ``unit``? Rendezvous hashing over
        the live servers (``servers``, read from the store if not given): each board
        has one, and when a server comes or goes only its own boards move."""
        servers = list(self.store.live_servers() if servers is None else servers)
        servers = servers or [self.server_id]
        if self.server_id not in servers:
            servers.append(self.server_id)

        def weight(server: str) -> bytes:
            return hashlib.sha256(f"{server}/{unit}".encode()).digest()

        return max(servers, key=weight) == self.server_id

    def _take_the_name(self) -> None:
        """Start beside no server that would run the same tables: unshared (`masume club
        serve` run twice, or beside shared servers), beside no live server at all; shared,
        beside no unshared one. Both would run the same tables into the same games and push
        each other off the broker. A server killed a moment ago is live until its last
        heartbeat runs out (LEASE_S): that is waited for. (Shared servers are told apart
        by their leases, each with its own name.)"""
        deadline = time.monotonic() + LEASE_S + RENEW_S
        while (other := self._in_the_way()) is not None:
            if time.monotonic() > deadline:
                raise ServerRunning(
                    f"another club server ({other}) is running on this database: "
                    "stop it first, or run every server with --shared, each with its own "
                    "--server-id")
            time.sleep(RENEW_S / 4)  # its heartbeat runs out by the clock, not by an event
        self._heartbeat()

    def _in_the_way(self) -> str | None:
        """A live server this one may not run beside (:meth:`_take_the_name`), or None."""
        if self.shared:
            unshared = self.store.live_servers(shared=False)
            return unshared[0] if unshared else None
        live = self.store.live_servers()
        return (self.server_id if self.server_id in live else live[0]) if live else None

    def _heartbeat(self) -> None:
        try:
            self.store.heartbeat(self.server_id, LEASE_S, shared=self.shared)
        except CannotSave:
            if self.shared:
                raise  # the leases stand on it
            # Unshared, it only keeps other servers off; the saves say what the
            # database lacks (a full disk), and play goes on.

    def _leases(self) -> None:
        """With shared=True: renew our boards' leases and give up the ones we lost.
        Always: look again at every online board without a running table (another
        server may have stopped; a table may have failed to start)."""
        while True:
            if self._stop.wait(RENEW_S):
                return  # (start() wrote the first heartbeat)
            if self.hub is None:
                continue
            # The heartbeat just before the leases: a server that dies is no longer
            # live by the time its leases run out, so the others may take its boards
            # at once (ClubServer._look_when_it_ends). Unshared, it keeps other
            # servers off the database (_take_the_name).
            self._heartbeat()
            if self.shared:
                with self._lock:
                    mine = list(self.tables.values())
                held = self.store.renew(self.server_id, LEASE_S)
                for table in mine:
                    # Not renewed: taken by another server, or run out unclaimed (ours again).
                    if table.unit not in held and not self.store.claim(
                            table.unit, self.server_id, LEASE_S):
                        log.warning("table %s is run by another server now", table.unit)
                        with self._lock:
                            self.tables.pop(table.unit, None)
                        self._stop_table(table, release=False)
            for unit, state in list(self.hub.status.items()):
                if state == "online" and unit in self.assignments and unit not in self.tables:
                    self._look_at(unit)

    def _start_tables(self, units: list[str]) -> None:
        """Start the tables of ``units`` this server should run now (:meth:`_to_start`):
        each built from its save here while the worker processes open the ones before
        it, then all launched on the loop in one turn (their links shake hands at once)."""
        began = time.monotonic()
        try:
            units = self._to_start(units)
        except Exception as exc:  # noqa: BLE001 (said in _cannot_start; looked at again)
            self._cannot_start(", ".join(units), exc)
            return
        claimed = time.monotonic()
        built: list[tuple[ClubTable, Callable[[], None] | None]] = []
        for unit in units:
            try:
                built.append(self._build_table(unit, self.assignments[unit]))
            except Exception as exc:  # noqa: BLE001 (said in _cannot_start; looked at again)
                self._cannot_start(unit, exc)
        opening = time.monotonic()
        ready = []
        for table, taken_up in built:
            try:
                if taken_up is not None:
                    taken_up()  # its worker has opened it
                ready.append(table)
            except Exception as exc:  # noqa: BLE001 (said in _cannot_start; looked at again)
                self._cannot_start(table.unit, exc)
        if not ready or self._stop.is_set():
            return
        opened = time.monotonic()
        started = self._on_loop(self._launch, ready)
        with self._lock:
            self.tables.update((table.unit, table) for table in started)
        if self.own_process:
            heap.settle()  # the tables' state, built: walked by no collection from now on
        for table in started:
            self._changed(table.unit)
        if len(started) > 1:
            log.info("started %d tables in %.2f s (looked up and claimed %.2f s, built %.2f s, "
                     "opened %.2f s, launched %.2f s)", len(started), time.monotonic() - began,
                     claimed - began, opening - claimed, opened - opening,
                     time.monotonic() - opened)

    def _to_start(self, units: list[str]) -> list[str]:
        """Those of ``units`` whose table this server starts now: not running, not ended
        by the arbiter, and (shared) claimed for this server, in one transaction for all."""
        with self._lock:
            # An ended game waits for the arbiter's next assignment (end() marks it
            # here before its table stops, so that no look-up starts it again).
            units = [u for u in dict.fromkeys(units) if u not in self.tables
                     and u not in self.ended]
        if self._stop.is_set():
            return []
        wanted = []
        for unit in units:
            ended = self.store.ended_game(unit)
            if ended is None:
                wanted.append(unit)
                continue
            with self._lock:
                self.ended[unit] = ended[1]  # it waits for its next assignment
        if not self.shared or not wanted:
            return wanted
        servers = self.store.live_servers()
        now = time.time()
        claim = []
        for unit in wanted:
            if not self.preferred(unit, servers):
                # Another live server should run it: take it only once it has been
                # left without an owner for a whole lease (that server is gone).
                owner = self.store.owner(unit)
                since = self._unowned.setdefault(unit, now)
                if owner is not None and owner[1] >= now:
                    self._unowned.pop(unit, None)
                    self._look_when_it_ends(unit, owner[1], now)
                    continue
                if now - since < LEASE_S:
                    continue
            claim.append(unit)
        claimed = self.store.claim_all(claim, self.server_id, LEASE_S)
        for unit in claim:
            if unit in claimed:
                self._unowned.pop(unit, None)
            else:  # another server holds it
                owner = self.store.owner(unit)
                if owner is not None:
                    self._look_when_it_ends(unit, owner[1], now)
        return [unit for unit in claim if unit in claimed]

    def _look_when_it_ends(self, unit: str, end: float, now: float) -> None:
        """Another server's lease keeps ``unit`` until ``end``: if that is sooner than
        the leases' next look, the tables' thread looks again right after it."""
        if end - now < RENEW_S:
            self._lease_ends[unit] = end + 0.01  # the claim wants it run out

    def _build_table(self, unit: str, assignment: Assignment
                     ) -> tuple[ClubTable, Callable[[], None] | None]:
        """The table of ``unit`` from its save (or a new game), not started; and, for a
        table in a worker process, what waits for the worker to have opened it."""
        assert self.hub is not None and self.loop is not None and self.committer is not None
        rules = load_rules(assignment.game)
        board = load_board(assignment.board or rules.board)
        active = self.store.active_game(unit)
        game = None
        record: str | None = None
        if active and active[1] == assignment.game:
            game_id, _, headers, record = active
            if record:
                try:
                    game = resume_game(record, assignment.game)
                except Exception as exc:  # noqa: BLE001 (a damaged record must not stop the event)
                    log.error("table %s: cannot resume game %d (%s); starting afresh",
                              unit, game_id, exc)
                    game = None
        if game is None:
            game = Game(rules.start())
            headers = assignment.headers(game.position.sides)
            game_id = self.store.new_game(unit, assignment.game, headers)
            record = None
        link = LoopLink(self.hub, unit, self.loop, expect=board.id, resolve=lambda _id: board,
                        name=unit)
        table_store = TableStore(self.store, game_id, unit, headers)
        holder: dict[str, ClubTable] = {}

        def on_action(what: str, side: str, notation: str) -> None:
            table = holder.get("t")
            if table is not None:
                table.actions.append((what, side, notation))

        # The table rewinds the link to where the game's last save left the board. The
        # computer's side is the game's (its record's Computer header), not the tables
        # file's: a game under way keeps it, on whichever server takes it up.
        computer, level_name = computer_of(headers)
        session: LoopTable | PoolTable
        taken_up = None
        if self.pool is not None:
            session = PoolTable(self.pool, unit, assignment.game, assignment.board, link,
                                committer=self.committer, store=table_store, record=record,
                                on_action=on_action)
            taken_up = session.begin_open()  # in its worker, while the next are built
        else:
            session = LoopTable(rules, board, link=link, committer=self.committer, game=game,
                                store=table_store, port=link.transport.port,
                                on_action=on_action, name=unit, computer=computer,
                                level=level_name)
        table = holder["t"] = ClubTable(unit, assignment, board, game_id, link, session)
        session.subscribe(lambda: self._changed(unit))
        log.info("table %s: %s, game %d, %d actions so far%s", unit, assignment.game, game_id,
                 len(game.actions),
                 f"; the computer plays {computer} ({level_name})" if computer else "")
        return table, taken_up

    def _launch(self, tables: list[ClubTable]) -> list[ClubTable]:
        """On the loop: each board's frames to its link, the link and the table started;
        those that started."""
        assert self.hub is not None
        started = []
        for table in tables:
            try:
                self.hub.attach(table.unit, table.link)
                table.session.start()
                started.append(table)
            except Exception as exc:  # noqa: BLE001 (said in _cannot_start; looked at again)
                self._cannot_start(table.unit, exc)
                table.link.close()
                self.hub.forget(table.unit)
        return started

    def _halt(self, table: ClubTable) -> threading.Event:
        """On the loop: the table stopped and its last save handed over (the event is
        set once it is made), its link closed, its frames no more."""
        done = table.session.finish()
        table.link.close()
        if self.hub:
            self.hub.forget(table.unit)
        return done

    def _stop_table(self, table: ClubTable, release: bool) -> None:
        """Stop a table (from any thread but the loop's), its last save made before
        this returns (the arbiter's end of its game comes after it)."""
        if self.loop is not None and self.loop.is_running():
            self._on_loop(self._halt, table).wait(30)
        if release and self.shared:
            self.store.release(table.unit, self.server_id)

    # ---- the organiser's hands ----------------------------------------------------

    def assign(self, assignment: Assignment) -> None:
        """Give a table a (new) game and players; the table's current game ends."""
        with self._lock:
            self.assignments[assignment.table] = assignment
            old = self.tables.pop(assignment.table, None)
        if old is not None:
            self._stop_table(old, release=False)
        rules = load_rules(assignment.game)
        self.store.new_game(assignment.table, assignment.game,
                            assignment.headers(rules.start().sides))
        with self._lock:
            self.ended.pop(assignment.table, None)
        if self.hub and self.hub.status.get(assignment.table) == "online":
            self._look_at(assignment.table)
        self._changed(assignment.table)

    def end(self, unit: str, result: str) -> None:
        """End the table's game with the arbiter's ``result`` ("blue wins on time",
        "draw", "abandoned"): the game is stored with it, and the table waits for its
        next assignment. KeyError when the table has no game to end."""
        with self._lock:
            table = self.tables.pop(unit, None)
            # Marked at once: the leases thread looks again at every online board
            # without a table, and would start this game again while it stops.
            had_ended, previous = unit in self.ended, self.ended.get(unit)
            self.ended[unit] = result
        try:
            if table is not None:
                self._stop_table(table, release=False)
                game_id = table.game_id
            else:
                active = self.store.active_game(unit)
                if active is None:
                    raise KeyError(f"table {unit!r} has no game to end")
                game_id = active[0]
            self.store.end_game(game_id, result)
        except BaseException:
            with self._lock:  # not ended after all: the game goes on from its save
                if had_ended:
                    self.ended[unit] = previous
                else:
                    self.ended.pop(unit, None)
            self._look_at(unit)
            raise
        log.info("table %s: game %d ended by the arbiter: %s", unit, game_id, result)
        self._changed(unit)

    # ---- what the live page reads -----------------------------------------------------

    def subscribe(self, callback: Callable[[str], None]) -> Callable[[], None]:
        return self._subscribers.add(callback)

    def _changed(self, unit: str) -> None:
        self._subscribers.notify(unit)

    def table_state(self, unit: str) -> dict[str, Any] | None:
        with self._lock:
            table = self.tables.get(unit)
            assignment = self.assignments.get(unit)
        online = bool(self.hub and self.hub.status.get(unit) == "online")
        if table is None:
            if assignment is None:
                return None
            state: dict[str, Any] = {"table": unit, "game": assignment.game,
                     "players": list(assignment.players), "online": online, "running": False}
            if unit in self.ended:
                state["result"] = self.ended[unit]
            return state
        state = dict(table.session.state())
        state.update(table=unit, players=list(assignment.players) if assignment else [],
                     online=online, running=True, game_id=table.game_id,
                     connected=table.link.connected.is_set() and table.link.alive)
        return state

    def health_report(self) -> dict[str, Any]:
        """Every worker's health (masume.health): the server's threads, and each
        table's and its link's; for the live page and a fault bench."""
        with self._lock:
            tables = dict(self.tables)
        return {
            "server": {name: h.to_dict(alive=name in self._threads
                                       and self._threads[name].is_alive())
                       for name, h in self.health.items()},
            "tables": {unit: t.session.health_report() for unit, t in sorted(tables.items())},
            "hub": self.hub.health_report() if self.hub else None,
            "loop_lag_s": round(self.loop_lag, 3),
            "gc": heap.report(),  # None unless own_process
            "workers": self.pool.report() if self.pool else [],
            "unregistered": self.unregistered_seen,
        }

    def overview(self) -> list[dict[str, Any]]:
        return [s for s in (self.table_state(u) for u in sorted(self.assignments)) if s]
