"""The club's tables on one event loop: no thread per table (issue 17).

    hub (MQTT on the loop) --frame--> LoopLink --events--> LoopTable (TableCore)
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

from masume.alarm import Alarm
from masume.health import LOOP_CPU, Health
from masume.link import BoardMismatch
from masume.play.table import FAULT_BACKOFF_S, SAVE_RETRY_S, TableSession
from masume.storage import CannotSave, LogEntry

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
                self.loop.call_soon_threadsafe(LOOP_CPU.run, "commit", _call_all, later)


def _call(done: Done, error: Exception | None) -> None:
    try:
        done(error)
    except Exception:
        log.exception("a table's save handler failed")


def _call_all(calls: list[tuple[Done, Exception | None]]) -> None:
    for done, error in calls:
        _call(done, error)


class LoopTurns:
    """What a table on the loop does around its core, wherever the core is (LoopTable:
    here; the pool's PoolTable: in a worker process): its wake-ups (:meth:`wake_soon`,
    the :class:`Alarm` at the core's deadline), and its saves, one in flight, whose
    end acknowledges the events they cover, pauses play while a save cannot be made
    (tried again every SAVE_RETRY_S) and reloads after a failed one."""

    loop: asyncio.AbstractEventLoop
    committer: Committer
    name: str
    health: Health
    _alarm: Alarm
    _wake_pending: bool
    _closed: bool
    _saving: bool
    _save_generation: int  # a reload makes the save in flight an old one
    _cannot_save: CannotSave | None
    _dirty: bool
    _log: list[LogEntry]

    if TYPE_CHECKING:
        def wake(self) -> None: ...

        def _checkpoint(self) -> Any: ...

        def _notify(self) -> None: ...

        def _acknowledge(self, handled: tuple[int, int] | None) -> None: ...

        def _pause(self, error: CannotSave) -> None: ...

    def _start_turns(self) -> None:
        self._alarm = Alarm(self.loop, lambda: LOOP_CPU.run("tables", self.wake))
        self._wake_pending = False
        self._closed = False
        self._saving = False
        self._save_generation = 0

    def wake_soon(self) -> None:
        """:meth:`wake` once the loop has read what came: the frames of one read (a
        board's resent journal) make one turn of the table, and the other boards'
        traffic is read before this table's tracker works."""
        if not self._wake_pending:
            self._wake_pending = True
            self.loop.call_soon(self._woken)

    def _woken(self) -> None:
        self._wake_pending = False
        LOOP_CPU.run("tables", self.wake)

    def _arm_deadline(self, due: float | None) -> None:
        """The alarm at the core's next deadline (None: none, the table sleeps)."""
        if due is None:
            self._alarm.cancel()
            return
        # Due already: the tracker waits for the board's clock (a cut link's backlog
        # still coming, see BoardSession.clock); the link says when it is in, and
        # this looks again meanwhile.
        now = time.monotonic()
        self._alarm.at(due if due > now else now + 0.1)

    def _stop_turns(self) -> threading.Event | None:
        """The first part of closing: no more wake-ups. None if closed already (the
        event then is set)."""
        if self._closed:
            return None
        self._closed = True
        self._alarm.cancel()
        self.health.stop()
        return threading.Event()

    @staticmethod
    def _done_now(done: threading.Event) -> threading.Event:
        done.set()
        return done

    def _last_save(self, statements: Statements, done: threading.Event) -> None:
        """The table's last save, to the committer at once; ``done`` set once made."""
        name = self.name

        def saved(error: Exception | None) -> None:
            if error is not None:
                log.warning("table %s: its last save before closing failed (%s)", name, error)
            done.set()

        self.committer.submit(statements, saved, at_once=True)

    def _submit_save(self, statements: Statements, handled: tuple[int, int] | None,
                     saved: Any) -> None:
        """``statements`` to the committer, the log lines they hold taken; once made,
        :meth:`_saved_now` (one save in flight)."""
        lines, self._log = self._log, []
        self._dirty = False
        self._saving = True
        generation = self._save_generation
        self.committer.submit(
            statements, lambda error: self._saved_now(error, generation, handled, saved, lines))

    def _saved_now(self, error: Exception | None, generation: int,
                   handled: tuple[int, int] | None, saved: Any, lines: list[LogEntry]) -> None:
        self._saving = False
        if self._closed:
            return
        if generation == self._save_generation:
            if isinstance(error, CannotSave):
                self._log[:0] = lines
                self._dirty = True
                self._pause(error)
                self.loop.call_later(SAVE_RETRY_S, self._retry_save)
                return
            if error is not None:
                self._save_failed(error)
                return
            self._keep_saved(saved)
            if self._cannot_save is not None:
                self._cannot_save = None
                self._play_resumes()
                self.health.recovered()
                log.warning("table %s: saved again; play goes on", self.name)
                self._notify()
                self.wake_soon()  # the events the board kept meanwhile
            self._acknowledge(handled)
        self._checkpoint()  # what came while this save was made

    def _retry_save(self) -> None:
        if self._closed or self._cannot_save is None:
            return
        self._dirty = True
        self._checkpoint()

    def _keep_saved(self, saved: Any) -> None:
        """A save is committed: ``saved`` is what a reload goes back to."""
        raise NotImplementedError

    def _save_failed(self, error: Exception) -> None:
        """A save failed otherwise than with CannotSave: reload."""
        raise NotImplementedError

    def _play_resumes(self) -> None:
        """Saves work again after a pause."""


class LoopTable(LoopTurns, TableSession):
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
        self._faults_in_row = 0
        self._start_turns()
        # A search done (on the search thread, masume.play.computer): a turn on the loop
        # takes it up.
        self.advisor.on_ready = self._searched

    def _searched(self) -> None:
        """From the search thread: the advisor's search is done."""
        self.loop.call_soon_threadsafe(self.wake_soon)

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
        done = self._stop_turns()
        if done is None:
            return self._done_now(threading.Event())
        self.loop_link.on_change = None
        self.advisor.close()
        if self.store is None or self._cannot_save is not None:
            return self._done_now(done)
        with self._lock:
            self.store.headers = self.core.headers(self.store.headers)
            statements = self.store.statements(self.game, self._log)  # type: ignore[attr-defined]
        self._last_save(statements, done)
        return done

    # ---- woken by what happens ------------------------------------------------------

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
            self._turn(self.link.take(timeout=0))
            self._faults_in_row = 0
            if self.loop_link.waiting:
                self.wake_soon()  # more than one batch came
            self._arm_deadline(self.core.due())
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
        was = self._link_seen
        super()._watch_link()
        seen = self._link_seen
        if seen != was and seen is not None and seen[0] and self.core.leds:
            self.link.set_leds(self.core.leds)

    def _reload(self) -> None:
        self._save_generation += 1
        super()._reload()

    # ---- saving: one save in flight, acknowledged once committed ----------------------

    def _checkpoint(self) -> bool:
        """Hand what changed to the committer (see the module docstring); the events
        it covers are acknowledged once it is made (LoopTurns._saved_now)."""
        if self.store is None or self._closed:
            return True
        if self._saving or (not self._dirty and self.core.handled == self._committed):
            return True
        with self._lock:
            self.store.headers = self.core.headers(self.store.headers)
            statements = self.store.statements(self.game, self._log)  # type: ignore[attr-defined]
            saved = (self.game.start, tuple(self.game.actions), dict(self.store.headers))
        self._submit_save(statements, self.core.handled, saved)
        return True

    def _keep_saved(self, saved: Any) -> None:
        self._saved = saved

    def _save_failed(self, error: Exception) -> None:
        self._fault(error)
        self.wake()

    def _play_resumes(self) -> None:
        self.core.pause_clock()  # the time play stood still does not count
