"""Tracker work in worker processes (issue 17): the loop keeps the links, the saves,
the ACKs and the pages; each table's :class:`~masume.play.core.TableCore` lives in
one worker process.

    LoopLink --events (in order)--> PoolTable --batch--> worker k: TableCore.handle/tick
                                       ^                            |
                                       +----- Effects, the save ----+
                                       |  (record, headers, result, handled)
                                       v
                                   Committer --> ACK once committed (as LoopTable)

Tables are sharded over N workers by a hash of their unit id. Each worker is a
``concurrent.futures.ProcessPoolExecutor`` of one process: its calls run one after
another in the order they were submitted, so a table's inputs reach its core in
order, and the core stays in that process between calls (a pool of several processes
would hand a table's calls to any of them). A table has at most one batch in flight;
what its link receives meanwhile waits in the link for the next.

A worker that dies (SIGKILL, out of memory) breaks its executor: the death is said
in the log and on the health report (:meth:`WorkerPool.report`), a new process
takes the slot, and each of its tables opens again there from its last committed
save and rewinds its link, so the board sends again every event that save does not
cover: nothing is lost (the same path as a fault in the core, masume.play.table).
"""

from __future__ import annotations

import concurrent.futures
import functools
import hashlib
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from masume.health import Health
from masume.link import BoardEvent, BoardMismatch, Led
from masume.play.core import Effects, TableCore
from masume.play.table import FAULT_BACKOFF_S, POISON_FAULTS, SAVE_RETRY_S
from masume.storage import CannotSave, LogEntry
from masume.subscribers import Subscribers

from .runner import Alarm

if TYPE_CHECKING:
    from masume.link.loop import LoopLink

    from .runner import Committer
    from .server import TableStore

log = logging.getLogger("masume.club")

STATE_WAIT_S = 10.0  # a page's read of a table waits this long for its worker
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


_held: dict[str, _Held] = {}


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


def _merge(into: Effects, more: Effects) -> None:
    into.notes.extend(more.notes)
    into.reports.extend(more.reports)
    into.messages.extend(more.messages)
    if more.leds is not None:
        into.leds = more.leds
    into.changed = into.changed or more.changed
    into.dirty = into.dirty or more.dirty


def _save_of(held: _Held) -> Save:
    from masume.records import write_record

    from .server import game_result

    held.headers = held.core.headers(held.headers)
    return (write_record(held.core.game, held.headers), dict(held.headers),
            game_result(held.core.game, held.headers))


def _worker_start() -> None:
    """In each new worker: end with the server. A server SIGKILLed cannot stop its
    workers, and they would wait on their call queue for ever (they hold its
    writing end too, so it never closes)."""
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_end_with, args=(parent,), name="end-with-server",
                         daemon=True).start()


def _end_with(parent: multiprocessing.process.BaseProcess) -> None:
    parent.join()
    os._exit(0)


def worker_pid() -> int:
    return os.getpid()


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
    held = _held[unit] = _Held(core, dict(headers))
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
            _merge(out.effects, core.skip(event) if skip else core.handle(event, now))
        key = None
        _merge(out.effects, core.tick(now, board_now))
        out.handled = core.handled
        out.due = core.due()
        if out.effects.dirty:
            out.save = _save_of(held)
    except Exception as exc:  # told to the loop, which reloads the last save
        del _held[unit]
        log.exception("table %s: the core failed", unit)
        return Ran(error=f"{type(exc).__name__}: {exc}", faulted=key)
    return out


def worker_act(unit: str, text: str) -> tuple[str, Ran]:
    held = _held[unit]
    action, effects = held.core.act(text)
    ran = Ran(effects=effects, handled=held.core.handled, due=held.core.due(),
              save=_save_of(held))
    return str(action), ran


def worker_final(unit: str) -> Save | None:
    """The table's last save (the match clock as it stands), and the table let go."""
    held = _held.pop(unit, None)
    return _save_of(held) if held is not None else None


def worker_state(unit: str, viewer: str | None, extras: dict[str, Any]) -> Any:
    from masume.play.view import table_state

    return table_state(_held[unit].core, viewer=viewer, **extras)


def worker_positions(unit: str) -> tuple[Any, ...]:
    return tuple(_held[unit].core.game.positions())


# ---- in the server: the workers ---------------------------------------------------------

class WorkerPool:
    """N worker processes, each its own one-process executor (see the module
    docstring); a slot whose process died gets a new one (:meth:`lost`)."""

    def __init__(self, workers: int, server_id: str = "club") -> None:
        self.size = workers
        # spawn: the server has threads (paho's, the committer's); a fork copies
        # their locks in whatever state they are.
        self._context = multiprocessing.get_context("spawn")
        self._lock = threading.Lock()
        self._slots: list[concurrent.futures.ProcessPoolExecutor] = []
        self.generation = [0] * workers
        self.pids: list[int | None] = [None] * workers
        self.deaths: list[str] = []  # what the log said of each death, in order
        self.health = [Health(f"club worker {k}", f"club server {server_id}")
                       for k in range(workers)]
        for k in range(workers):
            self._slots.append(self._new(k))

    def _new(self, slot: int) -> concurrent.futures.ProcessPoolExecutor:
        executor = concurrent.futures.ProcessPoolExecutor(1, mp_context=self._context,
                                                          initializer=_worker_start)
        executor.submit(worker_pid).add_done_callback(
            functools.partial(self._started, slot, self.generation[slot]))
        return executor

    def _started(self, slot: int, generation: int, future: concurrent.futures.Future[int]) -> None:
        if future.exception() is None and self.generation[slot] == generation:
            self.pids[slot] = future.result()
            self.health[slot].running()

    def slot_of(self, unit: str) -> int:
        return int.from_bytes(hashlib.sha256(unit.encode()).digest()[:4], "big") % self.size

    def submit(self, slot: int, call: Callable[..., Any],
               *args: Any) -> concurrent.futures.Future[Any]:
        """``call(*args)`` in worker ``slot``, after every call submitted to it before."""
        with self._lock:
            executor = self._slots[slot]
        return executor.submit(call, *args)

    def lost(self, slot: int, generation: int) -> None:
        """Worker ``slot`` of ``generation`` died: said once, and a new one started."""
        with self._lock:
            if self.generation[slot] != generation:
                return  # replaced already
            old = self._slots[slot]
            pid = self.pids[slot]
            code = None
            for process in list(getattr(old, "_processes", {}).values()):
                code = process.exitcode
            self.generation[slot] += 1
            self.pids[slot] = None
            self._slots[slot] = self._new(slot)
        how = (f"killed by signal {-code}" if code is not None and code < 0 else
               f"exit code {code}" if code is not None else "gone")
        message = self.health[slot].fault(
            f"worker process {pid} died ({how})",
            "its tables start again from their last save in a new worker")
        self.deaths.append(message)
        log.error("%s", message)
        old.shutdown(wait=False, cancel_futures=True)

    def watch(self) -> None:
        """Look at every worker (the server does, once a second): a dead one is said,
        and replaced, even while none of its tables has anything to do."""
        for slot in range(self.size):
            with self._lock:
                executor, generation = self._slots[slot], self.generation[slot]
            # The executor says it is broken only to a call submitted (no public
            # query): its own bookkeeping is read, and the process itself.
            processes = list(getattr(executor, "_processes", None) or {})
            broken = getattr(executor, "_broken", False)
            pid = self.pids[slot]
            dead = pid is not None and (pid not in processes and processes != []
                                        or not _running(pid))
            if broken or dead:
                self.lost(slot, generation)
            elif self.health[slot].state == "recovering" and pid is not None:
                self.health[slot].recovered()

    def report(self) -> list[dict[str, Any]]:
        # alive None: a worker starting (its pid not known yet).
        return [dict(self.health[k].to_dict(alive=None if self.pids[k] is None
                                            else _running(self.pids[k] or 0)),
                     pid=self.pids[k], restarts=self.generation[k])
                for k in range(self.size)]

    def close(self) -> None:
        for executor in self._slots:
            executor.shutdown(wait=True, cancel_futures=True)


def _running(pid: int) -> bool:
    """Is process ``pid`` there and not a zombie?"""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


class PoolTable:
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
        self.store = store
        self.on_action = on_action
        self.slot = pool.slot_of(unit)
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
        self._save_generation = 0  # a reopen makes the save in flight an old one
        self._saving = False
        self._busy = False  # a call to the worker in flight
        self._again = False  # woken while busy: wake once it is back
        self._reopen_due = False
        self._forget_leds = False
        self._link_was: bool | None = None
        self._started = False
        self._closed = False
        self._alarm = Alarm(self.loop, self.wake)
        self._wake_pending = False
        self.leds: dict[str, Led] = {}

    # ---- starting and stopping ----------------------------------------------------

    def open(self) -> None:
        """Take the table up in its worker (from the tables' thread: it waits)."""
        generation = self.pool.generation[self.slot]
        opened = self.pool.submit(self.slot, worker_open, self.unit, self.game_name,
                                  self.board_name, self._saved[0], self._saved[1]
                                  ).result(timeout=120)
        self._generation = generation
        self._opened(opened)

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
        self.health.running()
        self._dirty = True
        self.link.start()
        self.wake()
        return self

    def close(self) -> None:
        self.finish().wait(10)

    def finish(self) -> threading.Event:
        """Stop, and hand the table's last save to the committer: set once made."""
        done = threading.Event()
        if self._closed:
            done.set()
            return done
        self._closed = True
        self._alarm.cancel()
        self.link.on_change = None
        self.health.stop()
        if self._cannot_save is not None or self._generation != self.pool.generation[self.slot]:
            done.set()  # the last committed save is the table's last
            return done
        lines, self._log = self._log, []
        store, name = self.store, self.name

        def saved(error: Exception | None) -> None:
            if error is not None:
                log.warning("table %s: its last save before closing failed (%s)", name, error)
            done.set()

        def final(future: concurrent.futures.Future[Save | None]) -> None:
            save = None if future.exception() is not None else future.result()
            if save is None:
                done.set()
                return
            record, headers, result = save
            self.committer.submit(store.record_statements(record, headers, result, lines),
                                  saved, at_once=True)

        try:
            self.pool.submit(self.slot, worker_final, self.unit).add_done_callback(final)
        except (BrokenProcessPool, RuntimeError):
            done.set()
        return done

    # ---- woken by what happens -----------------------------------------------------------

    def wake_soon(self) -> None:
        if not self._wake_pending:
            self._wake_pending = True
            self.loop.call_soon(self._woken)

    def _woken(self) -> None:
        self._wake_pending = False
        self.wake()

    def wake(self) -> None:
        """Hand the link's events and a tick to the worker (one batch in flight)."""
        if not self._started or self._closed:
            return
        if self._busy:
            self._again = True
            return
        if self._reopen_due or self._generation != self.pool.generation[self.slot]:
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
        generation = self.pool.generation[self.slot]

        def back(future: concurrent.futures.Future[Any]) -> None:
            self._busy = False
            if self._closed:
                return
            try:
                result = future.result()
            except BrokenProcessPool:
                self.pool.lost(self.slot, generation)
                self._fault("its worker died")
                return
            except Exception as exc:  # noqa: BLE001 (a bug: reload the last save, go on)
                self._fault(f"error ({type(exc).__name__}: {exc})")
                return
            try:
                then(result)
            except Exception as exc:  # noqa: BLE001
                self._fault(f"error ({type(exc).__name__}: {exc})")

        try:
            future = self.pool.submit(self.slot, call, *args)
        except (BrokenProcessPool, RuntimeError):
            self._busy = False
            self.pool.lost(self.slot, generation)
            self._fault("its worker died")
            return
        future.add_done_callback(lambda f: self.loop.call_soon_threadsafe(back, f))

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
        now = time.time()
        self._log.extend((now, kind, fields) for kind, fields in effects.notes)
        if effects.dirty:
            self._dirty = True
        if self.on_action:
            for what, side, notation in effects.reports:
                self.on_action(what, side, notation)
        if effects.leds is not None:
            self.leds = effects.leds
            try:
                self.link.set_leds(effects.leds)
            except RuntimeError:
                self._forget_leds = True  # no board yet: drawn again at the next tick
        if effects.changed:
            self._notify()

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

    def _arm_deadline(self, due: float | None) -> None:
        if due is None:
            self._alarm.cancel()
            return
        now = time.monotonic()
        self._alarm.at(due if due > now else now + 0.1)

    # ---- saving: one save in flight, acknowledged once committed ---------------------------

    def _checkpoint(self) -> None:
        if self._closed or self._saving:
            return
        if not self._dirty and self._handled == self._committed:
            return
        if self._latest is None:
            return  # nothing new from the worker yet (it sends a save with each change)
        record, headers, result = self._latest
        statements = self.store.record_statements(record, headers, result, self._log)
        handled = self._handled
        lines, self._log = self._log, []
        self._dirty = False
        self._saving = True
        generation = self._save_generation
        latest = self._latest
        self.committer.submit(statements, lambda error: self._saved_now(
            error, generation, handled, latest, lines))

    def _saved_now(self, error: Exception | None, generation: int,
                   handled: tuple[int, int] | None, save: Save, lines: list[LogEntry]) -> None:
        self._saving = False
        if self._closed:
            return
        if generation == self._save_generation:
            if isinstance(error, CannotSave):
                self._log[:0] = lines
                self._dirty = True
                if self._cannot_save is None or self._cannot_save.reason != error.reason:
                    message = (f"{error}; play is paused until it can be (the board keeps "
                               "the moves meanwhile)")
                    log.error("table %s: %s", self.name, message)
                    self.health.pause(message)
                    self._cannot_save = error
                    self._notify()
                self.loop.call_later(SAVE_RETRY_S, self._retry_save)
                return
            if error is not None:
                self._fault(f"error ({type(error).__name__}: {error})")
                return
            self._saved = (save[0], dict(save[1]))
            if self._cannot_save is not None:
                self._cannot_save = None
                self.health.recovered()
                log.warning("table %s: saved again; play goes on", self.name)
                self._notify()
                self.wake_soon()
            if handled is not None and handled != self._committed:
                self.link.commit(*handled)
                self._committed = handled
                boot, seq = handled
                self._faulted = {k: n for k, n in self._faulted.items()
                                 if k[0] == boot and k[1] > seq}
        self._checkpoint()  # what came while this save was made

    def _retry_save(self) -> None:
        if self._closed or self._cannot_save is None:
            return
        self._dirty = True
        self._checkpoint()

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
        out: dict[str, list[str]] = {}
        for square, reading in self.link.readings.items():
            if reading is True:
                out[square] = ["?"]
            elif isinstance(reading, tuple) and reading:
                out[square] = list(reading)
            elif isinstance(reading, str):
                out[square] = [f"tag:{reading}"]
        return out

