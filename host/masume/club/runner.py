"""The club's tables on one event loop: no thread per table (issue 17).

    hub (paho on the loop) --frame--> LoopLink --events--> LoopTable (TableCore)
                                                              |  save (statements)
                                                              v
                                        Committer thread: every save waiting, one
                                        transaction; then, on the loop, each table
                                        acknowledges the events its save covered

A :class:`LoopTable` is masume.play.table's runner for a loop: the same core, the
same rules for saving before acknowledging, for a save that cannot be made (play
pauses, the save is tried again every SAVE_RETRY_S) and for faults (reload the
last save; an event that faults twice is skipped), but woken only by what
happens: its link's events or state, the end of its save, and the core's own
deadline (:meth:`TableCore.due`: the tracker's settle wait, a countdown's next
second). An idle table costs nothing but its link's heartbeat.

While a table's save is being committed its next events are handled already; the
save after covers them, so a table has at most one save in flight and the board
hears its ACK only once the save that covers the event is committed.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from masume.health import Health
from masume.link import BoardMismatch
from masume.play.table import FAULT_BACKOFF_S, SAVE_RETRY_S, TableSession
from masume.storage import CannotSave

if TYPE_CHECKING:
    from masume.boards import Board
    from masume.link.loop import LoopLink
    from masume.rules import Rules

    from .store import ClubStore

log = logging.getLogger("masume.club")

SLOW_COMMIT_S = 1.0  # a commit this slow is said in the log
Statements = list[tuple[str, tuple[Any, ...]]]
Done = Callable[[Exception | None], None]


class Committer:
    """Group commit for the loop's tables: saves queue up while one transaction is
    made, and the next takes them all (one fsync for the lot). Each save's ``done``
    is called with its error (None: committed) on the loop, or, ``at_once``, on the
    committer's thread (a table that closes waits for its last save)."""

    def __init__(self, store: ClubStore, loop: asyncio.AbstractEventLoop,
                 health: Health) -> None:
        self.store = store
        self.loop = loop
        self.health = health
        self._waiting: list[tuple[Statements, Done, bool]] = []
        self._wake = threading.Condition()
        self._stop = False

    def submit(self, statements: Statements, done: Done, *, at_once: bool = False) -> None:
        with self._wake:
            self._waiting.append((statements, done, at_once))
            self._wake.notify()

    def stop(self) -> None:
        with self._wake:
            self._stop = True
            self._wake.notify()

    def run(self) -> None:
        """The committer's thread (until :meth:`stop`, once the queue is empty)."""
        while True:
            with self._wake:
                while not self._waiting and not self._stop:
                    self._wake.wait()
                if not self._waiting:
                    return
                group, self._waiting = self._waiting, []
            began = time.monotonic()
            try:
                errors: list[Exception | None] = self.store.commit_saves([g[0] for g in group])
            except Exception as exc:  # noqa: BLE001 (each table hears it, and reloads)
                errors = [exc] * len(group)
            took = time.monotonic() - began
            if took > SLOW_COMMIT_S:
                log.warning("a commit of %d saves took %.2f s", len(group), took)
            later = []
            for (_, done, at_once), error in zip(group, errors):
                if at_once:
                    _call(done, error)
                else:
                    later.append((done, error))
            if later:
                self.loop.call_soon_threadsafe(_call_all, later)


def _call(done: Done, error: Exception | None) -> None:
    try:
        done(error)
    except Exception:
        log.exception("a table's save handler failed")


def _call_all(calls: list[tuple[Done, Exception | None]]) -> None:
    for done, error in calls:
        _call(done, error)


class Alarm:
    """A table's one wake-up on the loop: set for the earliest deadline asked for (a
    later one leaves it as it is), gone once it rings (calling ``ring``) or is cancelled.
    LoopTable and the pool's PoolTable each keep one."""

    def __init__(self, loop: asyncio.AbstractEventLoop, ring: Callable[[], None]) -> None:
        self.loop = loop
        self._ring = ring
        self._handle: asyncio.TimerHandle | None = None
        self.when = float("inf")

    @property
    def armed(self) -> bool:
        return self._handle is not None

    def at(self, when: float) -> None:
        if self._handle is not None and self.when <= when:
            return
        self.cancel()
        self.when = when
        self._handle = self.loop.call_at(when, self._rung)

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._handle, self.when = None, float("inf")

    def _rung(self) -> None:
        self._handle, self.when = None, float("inf")
        self._ring()


class LoopTable(TableSession):
    """One table on the loop (see the module docstring). ``store`` is the club's
    :class:`~masume.club.server.TableStore`; every method but the readers
    (:meth:`state`, :meth:`health_report`, ...) is the loop's own."""

    def __init__(self, rules: Rules, board: Board, link: LoopLink, *, committer: Committer,
                 **kwargs: Any) -> None:
        super().__init__(rules, board, link, **kwargs)
        self.loop_link = link
        self.loop = link.loop
        self.committer = committer
        self._started = False
        self._closed = False
        self._alarm = Alarm(self.loop, self.wake)
        self._saving = False
        self._generation = 0  # a reload makes the save in flight an old one
        self._faults_in_row = 0
        self._wake_pending = False

    @property
    def alive(self) -> bool:
        return self._started and not self._closed and self.health.state != "failed"

    def start(self) -> LoopTable:
        self._started = True
        link = self.loop_link
        link.on_change = self.wake_soon
        self.health.running()
        with self._lock:
            self._dirty = True
            self._checkpoint()
        link.start()
        self.wake()
        return self

    def close(self) -> None:
        """Stop, and save the table as it stands (the match clock), waiting for it."""
        self.finish().wait(10)

    def finish(self) -> threading.Event:
        """Stop, and hand the table's last save (the match clock as it stands) to the
        committer: set once it is made (a server that stops waits for all at once)."""
        done = threading.Event()
        if self._closed:
            done.set()
            return done
        self._closed = True
        self._alarm.cancel()
        self.loop_link.on_change = None
        self.health.stop()
        if self.store is None or self._cannot_save is not None:
            done.set()
            return done
        with self._lock:
            self.store.headers = self.core.headers(self.store.headers)
            statements = self.store.statements(self.game, self._log)  # type: ignore[attr-defined]
        name = self.name

        def saved(error: Exception | None) -> None:
            if error is not None:
                log.warning("table %s: its last save before closing failed (%s)", name, error)
            done.set()

        self.committer.submit(statements, saved, at_once=True)
        return done

    # ---- woken by what happens ------------------------------------------------------

    def wake_soon(self) -> None:
        """:meth:`wake` once the loop has read what came: the frames of one read (a
        board's resent journal) make one turn of the table, and the other boards'
        traffic is read before this table's tracker works."""
        if not self._wake_pending:
            self._wake_pending = True
            self.loop.call_soon(self._woken)

    def _woken(self) -> None:
        self._wake_pending = False
        self.wake()

    def wake(self) -> None:
        """Take the link's events, tick, save: the thread's turn, for what happened."""
        if not self._started or self._closed:
            return
        try:
            if self._reload_due:
                with self._lock:
                    self._reload()
            if self._cannot_save is not None:
                return  # the save's retry wakes the table
            events = self.link.take(timeout=0)
            with self._lock:
                for event in events:
                    self._take(event)
                now = time.monotonic()
                self.carry_out(self.core.tick(now, min(now, self.link.clock())))
                self._checkpoint()
            self._watch_link()
            if self.health.state == "recovering":
                self.health.recovered()
            self._faults_in_row = 0
            if self.loop_link.waiting:
                self.wake_soon()  # more than one batch came
            self._arm_deadline(now)
        except BoardMismatch as exc:
            with self._lock:
                self.core.notice = str(exc)
            self.health.stop("failed")  # the board is refused: said by the link
            self._alarm.cancel()
            self._notify()
        except Exception as exc:  # noqa: BLE001 (a bug: say it, reload the last save, go on)
            self._faults_in_row += 1
            self._fault(exc)
            backoff = FAULT_BACKOFF_S[min(self._faults_in_row, len(FAULT_BACKOFF_S)) - 1]
            self._alarm.at(time.monotonic() + backoff)

    def _watch_link(self) -> None:
        """As the thread's, and a board just connected gets the table's picture: one
        drawn before its first handshake could not go out (the link knew no board)."""
        was = self._link_was
        super()._watch_link()
        if self._link_was and not was and self.core.leds:
            self.link.set_leds(self.core.leds)

    def _arm_deadline(self, now: float) -> None:
        due = self.core.due()
        if due is None:
            self._alarm.cancel()
            return
        # Due already: the tracker waits for the board's clock (a cut link's backlog
        # still coming, see BoardSession.clock); the link says when it is in, and
        # this looks again meanwhile.
        self._alarm.at(due if due > now else now + 0.1)

    def _reload(self) -> None:
        self._generation += 1
        super()._reload()

    # ---- saving: one save in flight, acknowledged once committed ----------------------

    def _checkpoint(self) -> bool:
        """Hand what changed to the committer (see the module docstring); the events
        it covers are acknowledged in :meth:`_saved_now`."""
        if self.store is None or self._closed:
            return True
        if self._saving or (not self._dirty and self.core.handled == self._committed):
            return True
        self.store.headers = self.core.headers(self.store.headers)
        statements = self.store.statements(self.game, self._log)  # type: ignore[attr-defined]
        handled = self.core.handled
        saved = (self.game.start, tuple(self.game.actions), dict(self.store.headers))
        lines, self._log = self._log, []
        self._dirty = False
        self._saving = True
        generation = self._generation
        self.committer.submit(
            statements, lambda error: self._saved_now(error, generation, handled, saved, lines))
        return True

    def _saved_now(self, error: Exception | None, generation: int,
                   handled: tuple[int, int] | None, saved: Any, lines: list[Any]) -> None:
        self._saving = False
        if self._closed:
            return
        if generation == self._generation:
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
                self._fault(error)
                self.wake()
                return
            self._saved = saved
            if self._cannot_save is not None:
                self._cannot_save = None
                self.core.pause_clock()  # the time play stood still does not count
                self.health.recovered()
                log.warning("table %s: saved again; play goes on", self.name)
                self._notify()
                self.wake_soon()  # the events the board kept meanwhile
            if handled is not None and handled != self._committed:
                self.link.commit(*handled)
                self._committed = handled
                boot, seq = handled
                self._faulted = {k: n for k, n in self._faulted.items()
                                 if k[0] == boot and k[1] > seq}
        with self._lock:
            self._checkpoint()  # what came while this save was made

    def _retry_save(self) -> None:
        if self._closed or self._cannot_save is None:
            return
        with self._lock:
            self._dirty = True
            self._checkpoint()
