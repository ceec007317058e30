"""One table's game session: board events in, actions recorded, LEDs out.

    board --events--> BoardSession --> Tracker --> Game (rules)
      ^                                   |
      +-- LED picture <-- LED policy <----+--> GameStore (record + event log)

Three parts: the pure core (:class:`masume.play.core.TableCore`: an event in, what
changed and its effects out), this runner (:class:`TableSession`: the thread that
feeds the core from the link, saves, acknowledges, and carries the effects out) and
the view model the pages read (:mod:`masume.play.view`). The web view (masume.web)
reads :meth:`TableSession.state` and, on the simulated board, moves pieces through
the ``sim_*`` methods: the same sensor path as a hand on a real board.

Some actions change nothing a sensor could read: declaring a system, calling a
kick, choosing a card. They are the table's *choices* (:meth:`TableSession.choices`):
the legal actions whose result stands on the board exactly as the position now
does. A person makes one on the web view (:meth:`TableSession.act`), on a real
board as on the simulated one, and it is recorded like any other action; the
board's **confirm** makes the only one there is. Chance outcomes are never choices:
they come from the die, each recorded with the board's roll id (the ``Rolls``
header), and the pieces then follow what the rules made of the roll (the tracker's
``follow`` view lights where they go).

A board button named like a word of the game's notation ("ground", "lob") says
which of the actions that word names the players mean: pressed before the pieces
move, it lights where they may be put to make one; pressed after, it picks that
reading of the board where the sensors allowed several.

The rules' time limits (``Status.timers``: a turn limit, a match clock) are kept
here, as engines have no clock: a turn's time is counted while the board shows the
game, on the board's timer lamps, and the timer's action is played when it runs out.
A turn timer starts afresh with each turn the rules number (``Status.turn``); a match
clock's seconds are saved with the record (the ``Clock`` header) and go on after a
resume.

Saving, and acknowledging only what is saved: the table takes the board's events
without acknowledging them, handles them, saves the game (the record, the event
log) and only then tells the link it is done with them (BoardSession.commit), so
the board forgets an event only once what it caused is on the disk; the actions it
made are said (``on_action``: the terminal's ``blue: B7-B6``) only then too, so a line
said is a line saved, and an action read again after a reload is said once. A save is the
whole state the table goes on from, in the record's headers: ``Link`` (the board's
boot and the last event the save covers), ``Sensed`` (the readings then, where they
differ from the game) and ``Tracker`` (what the tracker knew beyond them). A table
that starts from a save (``masume play --resume``, a club server restarted, a fault
below) rewinds the link there, and the board sends every event after it again: an
action that was still being read when the host died is read again, not lost.

A save that cannot be made (the disk full, read-only) pauses play: the page and the
terminal say "cannot save: disk full", no further event is taken (the board keeps
them), and the save is tried again until it works; play then goes on with nothing
lost. Any other fault in the table's thread is logged and shown, and the table
reloads its last save (an event that faults twice is skipped, and said).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any

from masume.boards import Board
from masume.health import Health
from masume.link import BoardEvent, BoardMismatch, Led, Link, Reading
from masume.play.cards import card_list, card_piece
from masume.play.computer import Advisor
from masume.play.core import TABLE_HEADERS, Effects, TableCore
from masume.play.view import HealthView, TableState, table_state
from masume.records import write_record
from masume.rules import Game, Position, Rules
from masume.storage import CannotSave, GameStore, LogEntry, Store
from masume.subscribers import Subscribers
from masume.tracker import Tracker

log = logging.getLogger("masume.play")

TICK_S = 0.05
SAVE_RETRY_S = 0.5  # while a save cannot be made, it is tried again this often
#: After a fault the table waits this long (doubling, up to the last) before it reloads.
FAULT_BACKOFF_S = (0.05, 0.2, 0.5, 1.0, 2.0)
POISON_FAULTS = 2  # an event the table faulted on this often is skipped


def pieces_read(readings: Mapping[str, Reading]) -> dict[str, list[str]]:
    """What the board's sensors say stands on each square, for the pages: the pieces
    read, "?" where a presence sensor feels something, "tag:ID" for a card."""
    out: dict[str, list[str]] = {}
    for square, reading in readings.items():
        if reading is True:
            out[square] = ["?"]
        elif isinstance(reading, tuple) and reading:
            out[square] = list(reading)
        elif isinstance(reading, str):
            out[square] = [f"tag:{reading}"]
    return out


class TableRunner:
    """What every runner of a table does around its core, whether a thread
    (:class:`TableSession`) or the club's loop (masume.club.runner, masume.club.pool):
    carry out what an input caused, pause play while a save cannot be made, and once
    the events handled are saved, tell the link (BoardSession.commit: the board
    forgets them) and forget what faulted before them."""

    link: Any
    name: str
    health: Health
    store: object  # None: nothing is saved (a runner's own kind of store otherwise)
    on_action: Callable[[str, str, str], None] | None
    on_message: Callable[[str], None] | None = None
    _log: list[LogEntry]
    _dirty: bool
    _cannot_save: CannotSave | None
    _committed: tuple[int, int] | None
    _faulted: dict[tuple[int, int], int]  # event -> faults while handling it

    if TYPE_CHECKING:
        def _notify(self) -> None: ...

    def carry_out(self, effects: Effects) -> None:
        """Do what an input to the core caused: log lines kept for the next save,
        actions said, the LED picture sent, the pages told. (The runner does this for
        every input; a caller driving the core by hand, as a test does, too.)"""
        if self.store is not None:
            now = time.time()
            self._log.extend((now, kind, fields) for kind, fields in effects.notes)
        if effects.dirty:
            self._dirty = True
        for report in effects.reports:
            self._report(*report)
        if self.on_message:
            for message in effects.messages:
                self.on_message(message)
        if effects.leds is not None:
            try:
                self.link.set_leds(effects.leds)
            except RuntimeError:
                # No board yet. The core must not count this picture as shown: the
                # snapshot after the handshake often draws the same one, which would
                # then never go out (a loaded server's tables ticked before their
                # handshakes: 53 of 300 boards dark, docs/benchmarks.md). Drawn
                # again at the next tick, it goes out once the board is there.
                self._picture_lost()
        if effects.changed:
            self._notify()

    def _picture_lost(self) -> None:
        """The LED picture could not go out: the core draws it again at its next tick."""
        raise NotImplementedError

    def _report(self, what: str, side: str, notation: str) -> None:
        """An action played or taken back, said (on_action)."""
        if self.on_action:
            self.on_action(what, side, notation)

    def _pause(self, error: CannotSave) -> None:
        """A save cannot be made: play pauses (said once per reason)."""
        if self._cannot_save is None or self._cannot_save.reason != error.reason:
            message = (f"{error}; play is paused until it can be (the board keeps the "
                       "moves meanwhile)")
            log.error("table %s: %s", self.name, message)
            self.health.pause(message)
            self._cannot_save = error
            self._notify()

    def _acknowledge(self, handled: tuple[int, int] | None) -> None:
        if handled is not None and handled != self._committed:
            self.link.commit(*handled)
            self._committed = handled
            boot, seq = handled
            self._faulted = {k: n for k, n in self._faulted.items()
                             if k[0] == boot and k[1] > seq}


class TableSession(TableRunner):
    """The runner: one table's thread around its :class:`TableCore` (see the module
    docstring)."""

    store: Store | None

    def __init__(
        self,
        rules: Rules,
        board: Board,
        link: Link,
        *,
        game: Game[Any] | None = None,
        store: Store | None = None,
        sim: Any = None,
        port: str = "",
        on_action: Callable[[str, str, str], None] | None = None,
        on_message: Callable[[str], None] | None = None,
        name: str | None = None,
        computer: str | None = None,
        level: str = "casual",
    ) -> None:
        self.rules = rules
        self.board = board
        self.link = link
        self.store = store
        self.sim = sim
        self.port = port
        self.on_action = on_action  # (what: "played" or "took back", side, notation)
        self.on_message = on_message  # a refusal or a fix to tell the players (Effects.messages)
        self.name = name or link.name or board.id  # in messages
        self.health = Health("table", self.name)
        self._lock = threading.RLock()
        self._subscribers = Subscribers("masume.play")
        self._stop = threading.Event()
        # The link as last seen: (connected, connections); None: not yet looked at.
        self._link_seen: tuple[bool, int] | None = None
        self._thread: threading.Thread | None = None
        # Saving: log entries not saved yet, whether anything changed since the last
        # save, the last event committed to the link ((boot, seq); the last handled is
        # the core's), why saving fails now, and the last save, to reload.
        self._log: list[LogEntry] = []
        self._dirty = False
        self._cannot_save: CannotSave | None = None
        self._faulted: dict[tuple[int, int], int] = {}  # event -> faults while handling it
        self._handling: tuple[int, int] | None = None
        self._reload_due = False
        game = game or Game(rules.start())
        headers = dict(store.headers) if store else {}
        self._saved: tuple[Position[Any], tuple[Hashable, ...], dict[str, str]] = (
            game.start, tuple(game.actions), headers)
        self.core = TableCore(rules, board, game, headers, name=self.name)
        self._committed: tuple[int, int] | None = None
        self._rewind_link()
        #: The computer's side (``computer``, at ``level``: masume.ai.LEVELS) and the hints,
        #: searched on the process's search thread (masume.play.computer), taken up at
        #: the table's next turn.
        self.advisor = Advisor(computer, level)
        #: Actions played or taken back since the last save, said once it is made: a
        #: line said is a line saved (a power cut after ``blue: B7-B6`` leaves it in
        #: record.txt), and an action undone by a reload is not said twice.
        self._unsaid: list[tuple[str, str, str]] = []

    def _rewind_link(self) -> None:
        """The link goes back to where the core's saved state left the board."""
        self._committed = self.core.handled
        boot, seq = self.core.handled or (0, 0)
        self.link.rewind(boot, seq, self.core.readings)

    # ---- what the core knows, read here ----------------------------------------------

    @property
    def game(self) -> Game[Any]:
        return self.core.game

    @property
    def tracker(self) -> Tracker:
        return self.core.tracker

    @property
    def leds(self) -> dict[str, Led]:
        """The LED picture the table last sent the board."""
        return self.core.leds

    @property
    def notice(self) -> str:
        return self.core.notice

    @property
    def calling(self) -> tuple[str, tuple[str, ...]] | None:
        return self.core.calling

    @property
    def readings(self) -> dict[str, Reading] | None:
        return self.core.readings

    @property
    def simulated(self) -> bool:
        return self.sim is not None

    @property
    def sides(self) -> tuple[str, ...]:
        """The game's sides (the web view gives each player a link of their own)."""
        return tuple(self.core.game.position.sides)

    @property
    def computer(self) -> str | None:
        """The side the computer plays (None: people only): the web view makes no link
        for it (its page would show the computer's hidden hand)."""
        return self.advisor.computer

    # ---- running --------------------------------------------------------------

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> TableSession:
        with self._lock:
            self._dirty = True
            self._checkpoint()
        self._thread = threading.Thread(target=self._run, name=f"table:{self.name}", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self.advisor.close()
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)
        self.health.stop()
        if self.store:
            with self._lock:
                self._dirty = True  # the match clock as it stands
                self._checkpoint()
            self.store.close()

    def carry_out(self, effects: Effects) -> None:
        super().carry_out(effects)
        if effects.hint_asked:
            self.advisor.ask_hint()

    def _picture_lost(self) -> None:
        self.core.leds = {}

    def _report(self, what: str, side: str, notation: str) -> None:
        self._unsaid.append((what, side, notation))

    def _say_saved(self) -> None:
        """Say the actions the save just made holds (:attr:`_unsaid`)."""
        unsaid, self._unsaid = self._unsaid, []
        for report in unsaid:
            super()._report(*report)

    def _checkpoint(self) -> bool:
        """Save what changed, then tell the link the events handled are done with.
        False while the save cannot be made: play pauses (see the module docstring)."""
        if self.store is None:
            self._commit()  # nothing to save: an event is done once handled
            self._say_saved()
            return True
        if not self._dirty and self.core.handled == self._committed:
            self._say_saved()
            return True
        self.store.headers = self.core.headers(self.store.headers)
        try:
            self.store.save(self.game, self._log)
        except CannotSave as exc:
            self._pause(exc)
            return False
        self._log.clear()
        self._dirty = False
        self._saved = (self.game.start, tuple(self.game.actions), dict(self.store.headers))
        if self._cannot_save is not None:
            self._cannot_save = None
            self.core.pause_clock()  # the time play stood still does not count
            self.health.recovered()
            log.warning("table %s: saved again; play goes on", self.name)
            self._notify()
        self._commit()
        self._say_saved()
        return True

    def _commit(self) -> None:
        self._acknowledge(self.core.handled)

    def _run(self) -> None:
        """Take events, handle them, save, acknowledge; until closed. Every exception
        is caught here: only a board the host must not drive ends the thread."""
        self.health.running()
        faults = 0
        while not self._stop.is_set():
            try:
                if self._reload_due:
                    with self._lock:
                        self._reload()
                if self._cannot_save is not None:
                    if self._stop.wait(SAVE_RETRY_S):
                        return
                    with self._lock:
                        self._checkpoint()
                    continue
                self._turn(self.link.take(timeout=TICK_S))
                faults = 0
            except BoardMismatch as exc:
                with self._lock:
                    self.core.notice = str(exc)
                self.health.stop("failed")  # the board is refused: said by the link
                self._notify()
                return
            except Exception as exc:  # noqa: BLE001 (a bug: say it, reload the last save, go on)
                faults += 1
                self._fault(exc)
                if self._stop.wait(FAULT_BACKOFF_S[min(faults, len(FAULT_BACKOFF_S)) - 1]):
                    return

    def _turn(self, events: list[BoardEvent]) -> None:
        """One turn of the table: the events the link gave, a tick, a save."""
        with self._lock:
            for event in events:
                self._take(event)
            now = time.monotonic()
            # Now, as far as the board's events are known: while the link takes in a
            # journal resent after a cut, the time of its last event, so that the board
            # counts as still only for as long as it really was.
            self.carry_out(self.core.tick(now, min(now, self.link.clock())))
            self.carry_out(self.advisor.turn(self.core))
            self._checkpoint()
        self._watch_link()
        if self.health.state == "recovering":
            self.health.recovered()

    def _watch_link(self) -> None:
        """Say in the terminal when the board's link is lost, and when it is back.

        The table looks between batches of events, so it counts connections too: a
        connection that came and went between two looks is still said lost. The first
        connection is not said (the terminal named the board and its port already)."""
        connected, connections = seen = self.link.connected.is_set(), self.link.connections
        if seen == self._link_seen:
            return
        before, self._link_seen = self._link_seen, seen
        was_connected, was_connections = before or (False, 0)
        if self.on_message:
            if not connected and (was_connected or connections > was_connections):
                error = self.link.error or ""
                self.on_message(f"lost the board's link{': ' + error if error else ''}; "
                                "waiting for it to come back (check the cable)")
            elif connected and connections > 1 and not was_connected:
                self.on_message(f"board connected on {self.port or self.name}")
        self._notify()

    def _fault(self, exc: Exception) -> None:
        where = self._handling
        if where is not None:
            self._faulted[where] = self._faulted.get(where, 0) + 1
        problem = f"error ({type(exc).__name__}: {exc})"
        if where is not None:
            problem += f" on board event {where[1]}"
        message = self.health.fault(problem, "reloading the last save")
        log.error("%s", message, exc_info=exc)
        self._handling = None
        self._reload_due = True
        self._notify()

    def _reload(self) -> None:
        """Go back to the last save: the game, the table's state, and the link, which
        has the board send every event after it again."""
        start, actions, headers = self._saved
        game = Game(start)
        game.replay(actions)
        self._log.clear()
        self._unsaid.clear()  # not saved: the board sends their events again
        self._dirty = False
        self.core.restore(game, dict(headers))
        if self.store is not None:
            self.store.headers = dict(headers)
        self._rewind_link()
        self._reload_due = False
        self.carry_out(self.core.redraw())

    def _take(self, event: BoardEvent) -> None:
        """Handle one event from the link; one that faulted too often is skipped."""
        key = (event.boot, event.seq)
        if self._faulted.get(key, 0) >= POISON_FAULTS:
            message = self.health.fault(f"board event {event.seq} ({event.type}) failed "
                                        f"{self._faulted[key]} times", "skipped", recover=False)
            log.error("%s", message)
            self.carry_out(self.core.skip(event))
        else:
            self._handling = key
            self.carry_out(self.core.handle(event, time.monotonic()))
            self._handling = None

    # ---- actions the sensors cannot see -------------------------------------------------

    def choices(self) -> list[Hashable]:
        """The legal actions now that leave every piece where it stands
        (:meth:`TableCore.choices`)."""
        with self._lock:
            return self.core.choices()

    def act(self, text: str) -> Hashable:
        """Make one of the :meth:`choices`, written in the game's notation.

        Recorded like an action read from the board (record, event log, on_action,
        LEDs). Raises ValueError, saying why, for text that is not a choice now.
        """
        with self._lock:
            if self._cannot_save is not None:
                # A choice is nowhere but here until it is saved: not while play is paused.
                raise ValueError(f"{self._cannot_save}: play is paused until it can be")
            action, effects = self.core.act(text)
            self.carry_out(effects)
            self._checkpoint()
            return action

    def hint(self) -> None:
        """Light the best action for the side to act (the page's hint button; the
        board's ``hint`` button does the same), once the advisor has found it."""
        with self._lock:
            self.carry_out(self.core.ask_hint())

    # ---- what the web view reads -----------------------------------------------------

    def new_game(self) -> None:
        """Start the game afresh at this table, from the same start (the same options),
        saved in a new folder beside the last; the board stays as it stands (set it up
        as the lights show)."""
        with self._lock:
            self._checkpoint()
            readings, handled = self.core.readings, self.core.handled
            read = self.core.tracker.board_read  # the readings are the board's own
            per_side = self.core.side_seconds
            self.core.restore(Game(self.game.start), {})
            self.core.side_seconds = per_side
            self.core.handled = handled
            if readings is not None:
                # The board as it stands is not a move of the new game: it is what to
                # set up from (settled on, the view says how).
                self.core.readings = dict(readings)
                self.core.tracker.restore(readings, {"settled": True, "pushed": [],
                                                     "follow": None}, time.monotonic(),
                                          read=read)
            # A game saved in a folder goes on in a new folder beside it; the club's store
            # (masume.club.server.TableStore) keeps the table's game in its database.
            if isinstance(self.store, GameStore):
                folder = self.store.folder
                headers = {k: v for k, v in self.store.headers.items()
                           if k not in TABLE_HEADERS and k != "Result"}
                if self.core.side_seconds is not None:  # the same clock for the new game
                    headers["Clock"] = f"per side={self.core.side_seconds:.1f}"
                self.store.close()
                self.store = GameStore.new(folder.parent, self.rules.name, headers)
                if self.on_message:
                    self.on_message(f"new game: saving to {self.store.folder}")
            self._dirty = True
            self.carry_out(self.core.redraw())
            self._checkpoint()

    def record(self) -> str:
        """The game so far as a record's text, with the table's headers (a resignation,
        a loss on time): what the page's review reads (masume.play.review)."""
        with self._lock:
            return write_record(self.game, self.core.headers(
                dict(self.store.headers) if self.store is not None else {}))

    def positions(self) -> tuple[Position[Any], ...]:
        """The game's positions so far, the start first (a replay slider's steps)."""
        with self._lock:
            return tuple(self.game.positions())

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        return self._subscribers.add(callback)

    def _notify(self) -> None:
        self._subscribers.notify()

    def state(self, viewer: str | None = None) -> TableState:
        """The whole picture (:mod:`masume.play.view`), JSON-able; in a game that hides
        cards, as ``viewer`` (a side, or None for a spectator) may see it."""
        with self._lock:
            health = self.health_report()
            return table_state(
                self.core, viewer=viewer, simulated=self.simulated, pieces=self._pieces(),
                leds=self._shown_leds(),
                link={"connected": self.link.connected.is_set() and health["link"]["alive"],
                      "port": self.port, "error": self.link.error, "state": self.link.state},
                health=health,
                # Saving comes first: nothing else is taken until it works again.
                saving_problem=health["problem"] if self._cannot_save else None,
                advice=self.advisor.view(self.core))

    def health_report(self) -> HealthView:
        """How the table's and its link's threads are doing (masume.health), and the
        problem to show now, if any: the page shows it, a fault bench reads it."""
        table = self.health.to_dict(alive=self.alive)
        link = self.link.health.to_dict(alive=self.link.alive)
        problem = table["problem"] or link["problem"]
        if problem is None and self._thread is not None and not self.alive \
                and not self._stop.is_set() and self.health.state != "failed":
            problem = f"table: stopped ({self.name})"  # cannot happen; said if it ever does
        return {"table": table, "link": link, "problem": problem}

    def clock(self) -> dict[str, dict[str, Any]]:
        """The rules' timers now: name -> {"left", "total"} seconds (and "side" for the turn)."""
        return self.core.clock()

    def _pieces(self) -> dict[str, list[str]]:
        if self.sim is not None:
            return {sq: list(stack) for sq, stack in self.sim.table.stacks.items() if stack}
        return pieces_read(self.link.readings)

    def _shown_leds(self) -> dict[str, Led]:
        """What the board shows: the simulated board's own LEDs, else our picture."""
        if self.sim is not None:
            from masume_protocol.codec import PATTERNS

            return {cell: Led(rgb, PATTERNS[self.sim.led_patterns.get(cell, 1)])
                    for cell, rgb in self.sim.led_colours.items()}
        return dict(self.core.leds)

    # ---- the simulated board's hands -----------------------------------------------------

    def _need_sim(self) -> Any:
        if self.sim is None:
            raise ValueError("this table is a real board: move the pieces by hand")
        return self.sim

    def sim_lift(self, square: str) -> str:
        piece: str = self._need_sim().lift(square)
        return piece

    def sim_place(self, square: str, piece: str) -> None:
        self._need_sim().place(square, piece)

    def sim_place_card(self, square: str, copy_id: str) -> None:
        """Put card ``copy_id`` of the game's set on ``square`` (the sim places its tag)."""
        self._need_sim().place(square, card_piece(self.core.game.position, copy_id))

    def cards(self) -> list[dict[str, str]]:
        """Every card of the game's set (id, name, kind), for the card picker."""
        return card_list(self.core.game.position)

    def sim_press(self, button: str) -> None:
        try:
            self._need_sim().press(button)
        except KeyError as exc:
            raise ValueError(exc.args[0]) from None

    def sim_roll(self, value: int | None = None) -> None:
        self._need_sim().roll(value)

    def sim_changed(self) -> None:
        """The simulated table's LEDs or pieces changed: tell the page."""
        self._notify()
