"""Tracker work in worker processes (issue 17): the loop keeps the links, the saves,
the ACKs and the pages; each table's :class:`~masume.play.core.TableCore` lives in
one worker process.

    LoopLink --events (in order)--> PoolTable --batch--> worker k: TableCore.handle/tick
                                       ^                            |
                                       +----- Effects, the save ----+
                                       |  (record, headers, result, handled)
                                       v
                                   Committer --> ACK once committed (as LoopTable)

Tables are sharded over N workers by a hash of their unit id. Each worker is one
process with a pipe to the loop: the loop sends it the calls of one turn (every
table's batch that came meanwhile) as one message, and reads the answers itself when
the pipe is readable. The worker takes in what came between two calls and answers
each call as soon as it is made; a table's board events go before other tables'
ticks (a tick that decides on a board gone still searches, up to tens of ms, and an
event behind it waited for it: docs/benchmarks.md, stop 26). A table has at most one
batch in flight, so its inputs reach its core in order, and the core stays in that
process between calls; what its link receives meanwhile waits in the link for the
next.

A table's computer side and hints (masume.play.computer.Advisor) live beside its core
in the worker: its searches run on the worker's own search thread, never on the loop,
and the worker's other tables go on meanwhile. When one is done, that thread sends the
loop a frame of its own (``(READY, unit)``, beside the answers to the loop's calls), and
the loop gives the table a turn, which shows what was found.

A worker that dies (SIGKILL, out of memory) closes its pipe: the death is said
in the log and on the health report (:meth:`WorkerPool.report`), a new process
takes the slot, and each of its tables opens again there from its last committed
save and rewinds its link, so the board sends again every event that save does not
cover: nothing is lost (the same path as a fault in the core, masume.play.table).
Each of its tables is woken at once, idle or not: it says its worker died, and its
computer, if it was thinking, thinks again in the new worker.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import itertools
import logging
import multiprocessing
import multiprocessing.connection
import multiprocessing.process
import os
import pickle
import struct
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from multiprocessing.reduction import ForkingPickler
from typing import TYPE_CHECKING, Any

from masume import heap
from masume.health import LOOP_CPU, Health
from masume.link import BoardEvent, BoardMismatch, Led
from masume.play.computer import Advisor, computer_of
from masume.play.core import Effects, TableCore
from masume.play.table import FAULT_BACKOFF_S, POISON_FAULTS, TableRunner, pieces_read
from masume.records import TurnLines, write_record
from masume.storage import CannotSave, LogEntry
from masume.subscribers import Subscribers

from .runner import LoopTurns

if TYPE_CHECKING:
    from masume.link.loop import LoopLink

    from .runner import Committer
    from .server import TableStore

log = logging.getLogger("masume.club")

STATE_WAIT_S = 10.0  # a page's read of a table waits this long for its worker
READ_BYTES = 1 << 20  # what the loop reads of a worker's answers at a time
#: A save as the worker writes it: (record text, headers, result or None).
Save = tuple[str, dict[str, str], "str | None"]


def default_workers() -> int:
    """One worker per core the server may use."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# ---- in the worker process: the cores, by table -------------------------------------

@dataclass
class _Held:
    core: TableCore
    headers: dict[str, str]
    #: The computer's side and the hints (masume.play.computer): searched on this
    #: worker's search thread, which tells the loop when one is done (:func:`_ready`).
    advisor: Advisor
    #: The record's turn lines as last written (a save goes with every answer that
    #: changed something: most add no action).
    turns: TurnLines = field(default_factory=TurnLines)


_held: dict[str, _Held] = {}
#: The worker's end of its pipe, and the lock that keeps the answers (the worker's
#: thread) and a search's READY (the search thread) whole frames apart.
_conn: multiprocessing.connection.Connection | None = None
_sending = threading.Lock()
#: The first item of a worker's frame that is no answer: a table's search is done.
READY = "ready"


@dataclass
class Opened:
    handled: tuple[int, int] | None
    readings: Any
    effects: Effects
    save: Save  # the table as taken up (a new game's first record)


@dataclass
class Ran:
    effects: Effects = field(default_factory=Effects)
    handled: tuple[int, int] | None = None
    due: float | None = None
    save: Save | None = None  # the table as it stands, when something changed
    error: str | None = None  # the core raised: it is gone from the worker
    faulted: tuple[int, int] | None = None  # the event it raised on


def _ready(unit: str) -> None:
    """From the worker's search thread: the loop is told that ``unit``'s search is done
    (a frame of its own beside the answers); its table then takes a turn, which shows
    what the search found (Advisor.turn)."""
    conn = _conn
    if conn is None:
        return
    with _sending:
        try:
            conn.send((READY, unit))
        except OSError:
            pass  # the server is gone


def _save_of(held: _Held) -> Save:
    from .server import game_result

    held.headers = held.core.headers(held.headers)
    return (write_record(held.core.game, held.headers, held.turns), dict(held.headers),
            game_result(held.core.game, held.headers))


def worker_open(unit: str, game_name: str, board_name: str | None, record: str | None,
                headers: dict[str, str]) -> Opened:
    """Take up a table from its save (``record`` None: a new game)."""
    from masume.boards import load_board
    from masume.games import load_rules
    from masume.rules import Game

    from .server import resume_game

    rules = load_rules(game_name)
    board = load_board(board_name or rules.board)
    game = resume_game(record, game_name) if record else Game(rules.start())
    core = TableCore(rules, board, game, headers, name=unit)
    computer, level_name = computer_of(headers)
    advisor = Advisor(computer, level_name, on_ready=lambda: _ready(unit))
    held = _held[unit] = _Held(core, dict(headers), advisor)
    return Opened(core.handled, core.readings, core.redraw(), _save_of(held))


def worker_run(unit: str, batch: list[tuple[BoardEvent, bool]], now: float,
               board_now: float, forget_leds: bool) -> Ran:
    """The table's events (each with whether to skip it), then a tick."""
    held = _held[unit]
    core = held.core
    out = Ran()
    key = None
    try:
        if forget_leds:
            core.leds = {}  # the last picture never reached the board: drawn again
        for event, skip in batch:
            key = (event.boot, event.seq)
            out.effects.add(core.skip(event) if skip else core.handle(event, now))
        key = None
        out.effects.add(core.tick(now, board_now))
        if out.effects.hint_asked:
            held.advisor.ask_hint()
        out.effects.add(held.advisor.turn(core))
        out.handled = core.handled
        out.due = core.due()
        if out.effects.dirty:
            out.save = _save_of(held)
    except Exception as exc:  # told to the loop, which reloads the last save
        del _held[unit]
        held.advisor.close()
        log.exception("table %s: the core failed", unit)
        return Ran(error=f"{type(exc).__name__}: {exc}", faulted=key)
    return out


def worker_final(unit: str) -> Save | None:
    """The table's last save (the match clock as it stands), and the table let go."""
    held = _held.pop(unit, None)
    if held is None:
        return None
    held.advisor.close()
    return _save_of(held)


def worker_state(unit: str, viewer: str | None, extras: dict[str, Any]) -> Any:
    from masume.play.view import table_state

    held = _held[unit]
    return table_state(held.core, viewer=viewer, advice=held.advisor.view(held.core), **extras)


def worker_positions(unit: str) -> tuple[Any, ...]:
    return tuple(_held[unit].core.game.positions())


# ---- in the server: the workers ---------------------------------------------------------

class WorkerDied(Exception):
    """A call's worker process died before it answered."""


@dataclass
class _Worker:
    """One worker process and the loop's end of its pipe: calls wait in ``outbox``
    while a batch is out (``out``: call id -> its future)."""

    process: multiprocessing.process.BaseProcess
    conn: multiprocessing.connection.Connection
    outbox: list[tuple[int, Callable[..., Any], tuple[Any, ...], Future[Any]]] = field(
        default_factory=list)
    out: dict[int, Future[Any]] = field(default_factory=dict)
    flush_due: bool = False
    sending: bytearray = field(default_factory=bytearray)  # a batch not all written yet
    received: bytearray = field(default_factory=bytearray)  # answers not all read yet


#: A call waiting, in a worker: (call id, the function, its arguments, when it came).
Pending = tuple[int, Callable[..., Any], tuple[Any, ...], float]
#: A table's board events go before calls that came this little before them, no more:
#: a tick put off for longer keeps its own table's next events waiting (a table has one
#: call out at a time), and a worker behind would put ticks off for ever.
EVENTS_FIRST_S = 0.05


def _serve(conn: multiprocessing.connection.Connection) -> None:
    """A worker's life: calls in, each answered as soon as it is made; until the server
    says stop or is gone (the pipe's end: a server SIGKILLed cannot stop its workers,
    and they end with it).

    Between two calls the worker takes in what the loop sent meanwhile, and a table's
    board events go before the other tables' ticks (:func:`_next_call`): a tick that
    decides on a board gone still searches the actions (up to tens of ms), and the
    events behind it would wait for it to light their boards. A table has one call
    out at a time (PoolTable), so no table's calls change order."""
    global _conn
    _conn = conn
    heap.watch(f"club worker {os.getpid()}")  # a long collection said in the log
    pending: collections.deque[Pending] = collections.deque()
    stopping = False
    opened = False  # tables opened since the heap was last settled
    while pending or not stopping:
        if opened and not pending:
            # The tables just opened are long-lived: out of the collector's walks
            # (masume.heap); once the opens that came together are all done.
            heap.settle()
            opened = False
        try:
            while not stopping and (not pending or conn.poll()):
                calls = conn.recv()
                if calls is None:
                    stopping = True
                else:
                    came = time.monotonic()
                    pending.extend((*call, came) for call in calls)
        except (EOFError, OSError):
            return
        if not pending:
            return
        call_id, call, args, _ = _next_call(pending, time.monotonic())
        opened |= call is worker_open
        try:
            answer = (call_id, True, call(*args))
        except Exception as exc:  # noqa: BLE001 (the caller hears it)
            answer = (call_id, False, f"{type(exc).__name__}: {exc}")
        try:
            with _sending:
                conn.send([answer])
        except OSError:
            return


def _next_call(pending: collections.deque[Pending], now: float) -> Pending:
    """The call to make next: the first that brings a table's board events, unless a
    call for the same table is before it, or the first call has waited EVENTS_FIRST_S
    already; else the first.

    >>> calls = collections.deque([(1, worker_run, ("a", [], 0, 0, False), 0.0),
    ...                            (2, worker_state, ("b", None, {}), 0.0),
    ...                            (3, worker_run, ("b", ["event"], 0, 0, False), 0.0),
    ...                            (4, worker_run, ("c", ["event"], 0, 0, False), 0.0)])
    >>> [_next_call(calls, 0.01)[0] for _ in range(4)]
    [4, 1, 2, 3]
    >>> calls = collections.deque([(1, worker_run, ("a", [], 0, 0, False), 0.0),
    ...                            (2, worker_run, ("c", ["event"], 0, 0, False), 0.1)])
    >>> [_next_call(calls, 0.1)[0] for _ in range(2)]
    [1, 2]
    """
    if now - pending[0][3] < EVENTS_FIRST_S:
        seen: set[Any] = set()
        for k, (_, call, args, _) in enumerate(pending):
            if call is worker_run and args[1] and args[0] not in seen:
                chosen = pending[k]
                del pending[k]
                return chosen
            seen.add(args[0] if args else None)
    return pending.popleft()


class WorkerPool:
    """N worker processes, each fed through a pipe the loop watches (see the module
    docstring); a slot whose process died gets a new one (:meth:`lost`).

    Why not ``concurrent.futures.ProcessPoolExecutor``: its calls pass through two
    threads of the server's (its manager's and its queue's feeder), each waiting for
    the GIL the loop holds, and it keeps two calls a worker queued: at 1,000 boards a
    call waited seconds to reach an idle worker (docs/benchmarks.md). Here the loop
    sends each worker what came in one turn as one batch, and reads the answers
    itself, each as soon as the worker has made it."""

    def __init__(self, workers: int, server_id: str = "club") -> None:
        self.size = workers
        # spawn: the server has threads (the loop's, the committer's); a fork copies
        # their locks in whatever state they are.
        self._context = multiprocessing.get_context("spawn")
        self._lock = threading.Lock()
        self.loop: asyncio.AbstractEventLoop | None = None
        self._ids = itertools.count()
        self.generation = [0] * workers
        self.pids: list[int | None] = [None] * workers
        self.deaths: list[str] = []  # what the log said of each death, in order
        self._closing = False
        #: What wakes each table, on the loop: when its worker says its search is done,
        #: and when its worker was replaced (an idle table opens again in the new one at
        #: once: its computer, if it has one, thinks again there).
        self.wakes: dict[str, Callable[[], None]] = {}
        self.health = [Health(f"club worker {k}", f"club server {server_id}")
                       for k in range(workers)]
        #: Each worker's collector as it last told it (masume.heap.report: collections,
        #: longest pause, objects frozen), asked once a second (:meth:`watch`); None
        #: until its first answer (the first table's start), and again once its
        #: process is replaced.
        self.gc: list[dict[str, Any] | None] = [None] * workers
        self._gc_asked = [False] * workers
        self._workers = [self._new(k) for k in range(workers)]

    def _new(self, slot: int) -> _Worker:
        mine, theirs = self._context.Pipe()
        process = self._context.Process(target=_serve, args=(theirs,), daemon=True,
                                        name=f"club-worker-{slot}")
        process.start()
        theirs.close()  # the worker's end is the worker's: its death closes the pipe
        # The loop reads and writes what the pipe takes now, never waiting for a
        # worker (one the machine has not scheduled would hold every board up).
        os.set_blocking(mine.fileno(), False)
        self.pids[slot] = process.pid
        self.health[slot].running()
        worker = _Worker(process, mine)
        if self.loop is not None:
            self.loop.add_reader(mine.fileno(), LOOP_CPU.run, "pool", self._answered, slot,
                                 self.generation[slot])
        return worker

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Answers are read on ``loop`` (the tables' loop; any thread may call this)."""
        with self._lock:
            if self.loop is not None:
                return
            self.loop = loop

        def watch_pipes() -> None:
            for slot, worker in enumerate(self._workers):
                loop.add_reader(worker.conn.fileno(), LOOP_CPU.run, "pool", self._answered, slot,
                                self.generation[slot])

        loop.call_soon_threadsafe(watch_pipes)

    def slot_of(self, unit: str) -> int:
        return int.from_bytes(hashlib.sha256(unit.encode()).digest()[:4], "big") % self.size

    def submit(self, slot: int, call: Callable[..., Any], *args: Any) -> Future[Any]:
        """``call(*args)`` in worker ``slot``, after every call submitted to it before;
        its future is settled on the loop (:meth:`bind` first)."""
        loop = self.loop
        if loop is None:
            raise RuntimeError("the worker pool has no loop yet")
        future: Future[Any] = Future()
        with self._lock:
            worker = self._workers[slot]
            worker.outbox.append((next(self._ids), call, args, future))
            if worker.flush_due:
                return future
            worker.flush_due = True
        if asyncio._get_running_loop() is loop:
            # what else comes this turn goes with it
            loop.call_soon(LOOP_CPU.run, "pool", self._flush, slot)
        else:
            loop.call_soon_threadsafe(LOOP_CPU.run, "pool", self._flush, slot)
        return future

    def _flush(self, slot: int) -> None:
        """On the loop: the calls waiting go to the worker as one batch (it takes them in
        between two calls, and answers each as soon as it is made)."""
        with self._lock:
            worker = self._workers[slot]
            worker.flush_due = False
            if not worker.outbox:
                return
            batch, worker.outbox = worker.outbox, []
        calls = []
        for call_id, call, args, future in batch:
            if future.set_running_or_notify_cancel():
                worker.out[call_id] = future
                calls.append((call_id, call, args))
        if not calls:
            return
        try:
            data = ForkingPickler.dumps(calls)
        except Exception as exc:  # noqa: BLE001 (a call that cannot be sent: its caller hears)
            for call_id, _, _ in calls:
                worker.out.pop(call_id).set_exception(exc)
            return
        # Framed as multiprocessing.connection frames it (the worker's end reads it
        # with Connection.recv): the length, then the pickle.
        worker.sending += struct.pack("!i", len(data)) + data
        self._write(slot, self.generation[slot])

    def _write(self, slot: int, generation: int) -> None:
        """On the loop: as much of the batch as the pipe takes; the rest when it can."""
        if self.generation[slot] != generation or self.loop is None:
            return
        worker = self._workers[slot]
        fd = worker.conn.fileno()
        try:
            written = os.write(fd, worker.sending)
        except BlockingIOError:
            written = 0
        except OSError:
            self.lost(slot, generation)
            return
        del worker.sending[:written]
        if worker.sending:
            self.loop.add_writer(fd, LOOP_CPU.run, "pool", self._write, slot, generation)
        else:
            self.loop.remove_writer(fd)

    def _answered(self, slot: int, generation: int) -> None:
        """On the loop: what the worker wrote; each whole answer settles its batch's
        calls, and the next batch goes."""
        if self.generation[slot] != generation:
            return
        worker = self._workers[slot]
        try:
            data = os.read(worker.conn.fileno(), READ_BYTES)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:  # the worker is gone
            self.lost(slot, generation)
            return
        worker.received += data
        while len(worker.received) >= 4 and self.generation[slot] == generation:
            (size,) = struct.unpack_from("!i", worker.received)
            if len(worker.received) < 4 + size:
                return
            answers = pickle.loads(worker.received[4:4 + size])
            del worker.received[:4 + size]
            if isinstance(answers, tuple) and answers[0] == READY:
                self._search_done(answers[1])
                continue
            self._settle(slot, answers)

    def _search_done(self, unit: str) -> None:
        """On the loop: ``unit``'s search is done in its worker: its table is woken."""
        wake = self.wakes.get(unit)
        if wake is not None:
            wake()

    def _settle(self, slot: int, answers: list[tuple[int, bool, Any]]) -> None:
        worker = self._workers[slot]
        for call_id, ok, value in answers:
            future = worker.out.pop(call_id, None)
            if future is None:
                continue
            if ok:
                future.set_result(value)
            else:
                future.set_exception(RuntimeError(value))

    def lost(self, slot: int, generation: int) -> None:
        """On the loop: worker ``slot`` of ``generation`` died: said once, its calls
        fail (:class:`WorkerDied`), and a new one is started."""
        with self._lock:
            if self.generation[slot] != generation:
                return  # replaced already
            closing = self._closing
        if closing:  # told to stop: its pipe closes as it ends, no death
            try:
                fd = self._workers[slot].conn.fileno()
            except OSError:
                return  # closed already
            if self.loop is not None:
                self.loop.remove_reader(fd)
                self.loop.remove_writer(fd)
            return
        with self._lock:
            old = self._workers[slot]
            pid = self.pids[slot]
            self.generation[slot] += 1
            self.pids[slot] = None
            waiting, old.outbox = old.outbox, []
        if self.loop is not None:
            self.loop.remove_reader(old.conn.fileno())
            self.loop.remove_writer(old.conn.fileno())
        old.conn.close()
        old.process.join(1.0)  # a process whose pipe closed is gone, or all but
        code = old.process.exitcode
        how = (f"killed by signal {-code}" if code is not None and code < 0 else
               f"exit code {code}" if code is not None else "gone")
        self.gc[slot] = None  # the new process's collector starts afresh
        message = self.health[slot].fault(
            f"worker process {pid} died ({how})",
            "its tables start again from their last save in a new worker")
        self.deaths.append(message)
        log.error("%s", message)
        new = self._new(slot)
        with self._lock:
            self._workers[slot] = new
        died = WorkerDied(message)
        for future in [*old.out.values(), *(f for *_, f in waiting)]:
            if not future.done():
                future.set_exception(died)
        for unit, wake in list(self.wakes.items()):
            if self.slot_of(unit) == slot:
                wake()

    def watch(self) -> None:
        """On the loop, once a second: a dead worker is said, and replaced, even while
        none of its tables has anything to do; each live one is asked for its
        collector's figures (:attr:`gc`, for the health report)."""
        for slot in range(self.size):
            worker, generation = self._workers[slot], self.generation[slot]
            if not worker.process.is_alive():
                self.lost(slot, generation)
                continue
            if self.health[slot].state == "recovering":
                self.health[slot].recovered()
            self._ask_gc(slot)

    def _ask_gc(self, slot: int) -> None:
        """On the loop: worker ``slot``'s masume.heap.report into :attr:`gc` once it
        answers (behind the calls already sent it; one question out at a time). Not
        before a table has bound the pool to the loop (:meth:`bind`): none has work."""
        if self._gc_asked[slot] or self._closing or self.loop is None:
            return
        self._gc_asked[slot] = True
        generation = self.generation[slot]

        def heard(future: Future[Any]) -> None:
            self._gc_asked[slot] = False
            if future.exception() is None and self.generation[slot] == generation:
                self.gc[slot] = future.result()

        self.submit(slot, heap.report).add_done_callback(heard)

    def report(self) -> list[dict[str, Any]]:
        # alive None: a worker starting (its pid not known yet).
        return [dict(self.health[k].to_dict(alive=None if self.pids[k] is None
                                            else _running(self.pids[k] or 0)),
                     pid=self.pids[k], restarts=self.generation[k], gc=self.gc[k])
                for k in range(self.size)]

    def close(self) -> None:
        """Every worker told to stop, and waited for (its calls still out are let go)."""
        with self._lock:
            # A worker that ends now is not a death to replace (the loop may still run:
            # its pipe's end would have started a new worker, and said it died).
            self._closing = True
        for worker in self._workers:
            try:
                os.set_blocking(worker.conn.fileno(), True)
                while worker.sending:  # a batch half written first
                    del worker.sending[:os.write(worker.conn.fileno(), worker.sending)]
                worker.conn.send(None)
            except OSError:
                pass
        for worker in self._workers:
            worker.process.join(5)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.conn.close()


def _running(pid: int) -> bool:
    """Is process ``pid`` there and not a zombie?"""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


class PoolTable(LoopTurns, TableRunner):
    """One table whose core is in a worker (see the module docstring): the loop's
    half of :class:`~masume.club.runner.LoopTable`, with the same rules for saving
    before acknowledging, for a save that cannot be made and for faults. Every
    method but the readers (:meth:`state`, :meth:`health_report`, ...) is the loop's."""

    def __init__(self, pool: WorkerPool, unit: str, game_name: str, board_name: str | None,
                 link: LoopLink, *, committer: Committer, store: TableStore,
                 record: str | None, on_action: Callable[[str, str, str], None] | None = None
                 ) -> None:
        self.pool = pool
        self.unit = self.name = unit
        self.game_name = game_name
        self.board_name = board_name
        self.link = link
        self.loop = link.loop
        self.committer = committer
        self.store: TableStore = store
        self.on_action = on_action
        self.slot = pool.slot_of(unit)
        pool.bind(self.loop)
        self.health = Health("table", unit)
        self._subscribers = Subscribers("masume.club")
        # The last committed save, to open again from: (record, headers).
        self._saved: tuple[str | None, dict[str, str]] = (record, dict(store.headers))
        self._generation = -1  # the worker generation the core was opened on
        self._latest: Save | None = None  # the newest save the worker made, to commit
        self._log: list[LogEntry] = []
        self._dirty = False
        self._handled: tuple[int, int] | None = None
        self._committed: tuple[int, int] | None = None
        self._cannot_save: CannotSave | None = None
        self._faulted: dict[tuple[int, int], int] = {}
        self._faults_in_row = 0
        self._busy = False  # a call to the worker in flight
        self._again = False  # woken while busy: wake once it is back
        self._reopen_due = False
        self._forget_leds = False
        self._link_was: bool | None = None
        self._started = False
        self._start_turns()
        self.leds: dict[str, Led] = {}

    # ---- starting and stopping ----------------------------------------------------

    def open(self) -> None:
        """Take the table up in its worker (from the tables' thread: it waits)."""
        self.begin_open()()

    def begin_open(self) -> Callable[[], None]:
        """:meth:`open` in two halves, so that the tables' thread opens many tables at
        once (a server taking over another's): the worker is handed the table now, and
        what this returns waits for it and takes the table up (from the tables' thread)."""
        generation = self.pool.generation[self.slot]
        future = self.pool.submit(self.slot, worker_open, self.unit, self.game_name,
                                  self.board_name, self._saved[0], self._saved[1])

        def taken_up() -> None:
            opened = future.result(timeout=120)
            self._generation = generation
            self._opened(opened)

        return taken_up

    def _opened(self, opened: Opened) -> None:
        self._handled = self._committed = opened.handled
        boot, seq = opened.handled or (0, 0)
        self.link.rewind(boot, seq, opened.readings)
        self._log.clear()
        self._dirty = False
        self.store.headers = dict(self._saved[1])
        self._latest = opened.save
        self.carry_out(opened.effects)

    @property
    def alive(self) -> bool:
        return self._started and not self._closed and self.health.state != "failed"

    def start(self) -> PoolTable:
        """On the loop, once :meth:`open` is done."""
        self._started = True
        self.link.on_change = self.wake_soon
        self.pool.wakes[self.unit] = self.wake_soon
        self.health.running()
        self._dirty = True
        self.link.start()
        self.wake()
        return self

    def close(self) -> None:
        self.finish().wait(10)

    def finish(self) -> threading.Event:
        """Stop, and hand the table's last save to the committer: set once made."""
        done = self._stop_turns()
        if done is None:
            return self._done_now(threading.Event())
        self.link.on_change = None
        if self.pool.wakes.get(self.unit) == self.wake_soon:
            del self.pool.wakes[self.unit]
        if self._cannot_save is not None or self._generation != self.pool.generation[self.slot]:
            return self._done_now(done)  # the last committed save is the table's last
        lines, self._log = self._log, []

        def final(future: Future[Save | None]) -> None:
            save = None if future.exception() is not None else future.result()
            if save is None:
                done.set()
                return
            record, headers, result = save
            self._last_save(self.store.record_statements(record, headers, result, lines), done)

        try:
            self.pool.submit(self.slot, worker_final, self.unit).add_done_callback(final)
        except RuntimeError:
            done.set()
        return done

    # ---- woken by what happens -----------------------------------------------------------

    def wake(self) -> None:
        """Hand the link's events and a tick to the worker (one batch in flight)."""
        if not self._started or self._closed:
            return
        if self._busy:
            self._again = True
            return
        if not self._reopen_due and self._generation != self.pool.generation[self.slot]:
            self._fault("its worker died")  # (none of its calls was out: said here)
            return
        if self._reopen_due:
            self._reopen()
            return
        if self._cannot_save is not None:
            return  # the save's retry wakes the table
        try:
            events = self.link.take(timeout=0)
        except BoardMismatch as exc:
            self.health.stop("failed", str(exc))  # the board is refused: said by the link
            self._alarm.cancel()
            self._notify()
            return
        batch = []
        for event in events:
            key = (event.boot, event.seq)
            skip = self._faulted.get(key, 0) >= POISON_FAULTS
            if skip:
                message = self.health.fault(
                    f"board event {event.seq} ({event.type}) failed {self._faulted[key]} "
                    "times", "skipped", recover=False)
                log.error("%s", message)
            batch.append((event, skip))
        now = time.monotonic()
        forget, self._forget_leds = self._forget_leds, False
        self._call(self._ran, worker_run, self.unit, batch, now,
                   min(now, self.link.clock()), forget)

    def _call(self, then: Callable[[Any], None], call: Callable[..., Any], *args: Any) -> None:
        """``call(*args)`` in the table's worker; ``then(result)`` on the loop. A dead
        worker, or a core that raised, makes the table open again from its last save."""
        self._busy = True

        def back(future: Future[Any]) -> None:
            self._busy = False
            if self._closed:
                return
            try:
                result = future.result()
            except WorkerDied:
                self._fault("its worker died")
                return
            except Exception as exc:  # noqa: BLE001 (a bug: reload the last save, go on)
                self._fault(f"error ({type(exc).__name__}: {exc})")
                return
            try:
                LOOP_CPU.run("tables", then, result)
            except Exception as exc:  # noqa: BLE001
                self._fault(f"error ({type(exc).__name__}: {exc})")

        # Settled on the loop (WorkerPool._answered): ``back`` runs there.
        self.pool.submit(self.slot, call, *args).add_done_callback(back)

    def _ran(self, ran: Ran) -> None:
        if ran.error is not None:
            if ran.faulted is not None:
                self._faulted[ran.faulted] = self._faulted.get(ran.faulted, 0) + 1
            where = f" on board event {ran.faulted[1]}" if ran.faulted else ""
            self._fault(f"error ({ran.error}){where}")
            return
        self._took(ran)
        self._watch_link()
        if self.health.state == "recovering":
            self.health.recovered()
        self._faults_in_row = 0
        if self._again or self.link.waiting:
            self._again = False
            self.wake_soon()
        self._arm_deadline(ran.due)

    def _took(self, ran: Ran) -> None:
        self.carry_out(ran.effects)
        self._handled = ran.handled
        if ran.save is not None:
            self._latest = ran.save
        self._checkpoint()

    def carry_out(self, effects: Effects) -> None:
        if effects.leds is not None:
            self.leds = effects.leds
        super().carry_out(effects)

    def _picture_lost(self) -> None:
        self._forget_leds = True  # its worker's core draws it again at the next tick

    def _watch_link(self) -> None:
        connected = self.link.connected.is_set()
        if connected == self._link_was:
            return
        was, self._link_was = self._link_was, connected
        if connected and not was and self.leds:
            self.link.set_leds(self.leds)  # a picture drawn before its handshake
        self._notify()

    def _fault(self, problem: str) -> None:
        """The core is gone or wrong: said, and opened again from the last save."""
        self._faults_in_row += 1
        message = self.health.fault(problem, "reloading the last save")
        log.error("%s", message)
        self._reopen_due = True
        self._notify()
        backoff = FAULT_BACKOFF_S[min(self._faults_in_row, len(FAULT_BACKOFF_S)) - 1]
        self._alarm.at(time.monotonic() + backoff)

    def _reopen(self) -> None:
        self._reopen_due = False
        self._save_generation += 1
        generation = self.pool.generation[self.slot]

        def opened(result: Opened) -> None:
            self._generation = generation
            self._opened(result)
            self._dirty = True
            self.wake_soon()

        self._call(opened, worker_open, self.unit, self.game_name, self.board_name,
                   self._saved[0], self._saved[1])

    # ---- saving: one save in flight, acknowledged once committed ---------------------------

    def _checkpoint(self) -> None:
        if self._closed or self._saving:
            return
        if not self._dirty and self._handled == self._committed:
            return
        if self._latest is None:
            return  # nothing new from the worker yet (it sends a save with each change)
        record, headers, result = self._latest
        self._submit_save(self.store.record_statements(record, headers, result, self._log),
                          self._handled, self._latest)

    def _keep_saved(self, saved: Save) -> None:
        self._saved = (saved[0], dict(saved[1]))

    def _save_failed(self, error: Exception) -> None:
        self._fault(f"error ({type(error).__name__}: {error})")

    # ---- what the pages read (from their threads) --------------------------------------

    @property
    def handled(self) -> tuple[int, int] | None:
        return self._handled

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        return self._subscribers.add(callback)

    def _notify(self) -> None:
        self._subscribers.notify()

    def state(self, viewer: str | None = None) -> Any:
        """The table's view model (masume.play.view), made in its worker."""
        health = self.health_report()
        extras = {"simulated": False, "pieces": self._pieces(), "leds": dict(self.leds),
                  "link": {"connected": self.link.connected.is_set()
                           and health["link"]["alive"], "port": self.unit,
                           "error": self.link.error, "state": self.link.state},
                  "health": health,
                  "saving_problem": health["problem"] if self._cannot_save else None}
        try:
            return self.pool.submit(self.slot, worker_state, self.unit, viewer,
                                    extras).result(STATE_WAIT_S)
        except Exception as exc:  # noqa: BLE001 (a TimeoutError too)
            # Its worker is starting again, or busy: the page says so, and asks again.
            return {"game": self.game_name, "health": health,
                    "status": {"message": f"the table is starting again ({exc!r})"}}

    def positions(self) -> tuple[Any, ...]:
        try:
            result: tuple[Any, ...] = self.pool.submit(
                self.slot, worker_positions, self.unit).result(STATE_WAIT_S)
            return result
        except Exception:  # noqa: BLE001 (its worker starting again: no replay yet)
            return ()

    def health_report(self) -> dict[str, Any]:
        table = self.health.to_dict(alive=self.alive)
        link = self.link.health.to_dict(alive=self.link.alive)
        return {"table": table, "link": link, "problem": table["problem"] or link["problem"],
                "worker": self.slot}

    def _pieces(self) -> dict[str, list[str]]:
        return pieces_read(self.link.readings)
