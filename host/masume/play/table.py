"""One table's game session: board events in, actions recorded, LEDs out.

    board --events--> BoardSession --> Tracker --> Game (rules)
      ^                                   |
      +-- LED picture <-- LED policy <----+--> GameStore (record + event log)

The web view (masume.web) reads :meth:`TableSession.state` and, on the
simulated board, moves pieces through the ``sim_*`` methods: the same sensor
path as a hand on a real board.

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
the board forgets an event only once what it caused is on the disk. A save is the
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
from typing import Any, Callable, Hashable

from masume.boards import Board
from masume.health import Health
from masume.leds import highlight_led, picture
from masume.link import BoardEvent, BoardMismatch, Led, Link, Reading
from masume.link.events import parse_readings, readings_text
from masume.play.cards import card_list, card_piece, cards_of, for_viewer, viewer_of
from masume.rules import Game, Position, Rules
from masume.rules.base import HidesInformation, IllegalAction, Legend, NotationError, Roll
from masume.storage import CannotSave, GameStore, LogEntry
from masume.subscribers import Subscribers
from masume.tracker import Change, Tracker, TrackerMemory

log = logging.getLogger("masume.play")

TICK_S = 0.05
SAVE_RETRY_S = 0.5  # while a save cannot be made, it is tried again this often
#: After a fault the table waits this long (doubling, up to the last) before it reloads.
FAULT_BACKOFF_S = (0.05, 0.2, 0.5, 1.0, 2.0)
POISON_FAULTS = 2  # an event the table faulted on this often is skipped


class TableSession:
    def __init__(
        self,
        rules: Rules,
        board: Board,
        link: Link,
        *,
        game: Game | None = None,
        store: GameStore | None = None,
        sim: Any = None,
        port: str = "",
        on_action: Callable[[str, str, str], None] | None = None,
        name: str | None = None,
    ) -> None:
        self.rules = rules
        self.board = board
        self.link = link
        self.store = store
        self.sim = sim
        self.port = port
        self.on_action = on_action  # (what: "played" or "took back", side, notation)
        self.name = name or link.name or board.id  # in messages
        self.health = Health("table", self.name)
        self.leds: dict[str, Led] = {}
        self.last_die: dict[str, int] | None = None
        self._lock = threading.RLock()
        self._subscribers = Subscribers("masume.play")
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._shown_second: tuple[int, ...] = ()
        # Saving: log entries not saved yet, whether anything changed since the last
        # save, the last event handled and the last one committed to the link (each
        # (boot, seq)), why saving fails now, and the last save, to reload.
        self._log: list[LogEntry] = []
        self._dirty = False
        self._committed: tuple[int, int] | None = None
        self._cannot_save: CannotSave | None = None
        self._faulted: dict[tuple[int, int], int] = {}  # event -> faults while handling it
        self._handling: tuple[int, int] | None = None
        self._reload_due = False
        game = game or Game(rules.start())
        headers = dict(store.headers) if store else {}
        self._saved: tuple[Position, tuple[Hashable, ...], dict[str, str]] = (
            game.start, tuple(game.actions), headers)
        self._restore(game, headers)

    def _restore(self, game: Game, headers: dict[str, str]) -> None:
        """Take up a saved state: the game, and what its headers say of the table,
        the board and the link (see the module docstring)."""
        self.game = game
        self.tracker = Tracker(game, self.board, cards=cards_of(game.position))
        if self.store is not None:
            self.store.headers = dict(headers)
        self.resigned: str | None = headers.get("Resigned") or None
        self.notice = ""  # the latest message worth showing (a refused die roll, ...)
        self._choices_for: tuple[Position, list[Hashable]] | None = None
        #: A word button pressed before the pieces moved: (word, squares to put them on).
        self.calling: tuple[str, tuple[str, ...]] | None = None
        #: Which roll of the board's die made which action (action index -> roll id),
        #: kept in the record's Rolls header.
        self.rolls: dict[int, int] = _read_rolls(headers.get("Rolls", ""))
        # The clocks: seconds run per timer name (a match clock's as saved with the
        # game: it goes on after a resume; a turn clock starts afresh), and the turn the
        # "turn" timer counts.
        self._elapsed: dict[str, float] = _read_clock(headers.get("Clock", ""))
        self._clock_at: float | None = None
        self._turn: tuple[Any, ...] | None = None
        #: The board's readings as of the last event handled (None before the first
        #: snapshot), and that event: (boot, seq).
        self.readings: dict[str, Reading] | None = None
        self._handled: tuple[int, int] | None = _read_link(headers.get("Link", ""))
        if self._handled is not None:
            self.readings = self.tracker.expected_readings()
            try:
                self.readings.update(parse_readings(self.board, headers.get("Sensed", "")))
            except ValueError as exc:
                log.warning("table %s: Sensed header: %s; taking the game's", self.name, exc)
            self.tracker.restore(self.readings, _read_tracker(headers.get("Tracker", "")),
                                 time.monotonic())
        self._committed = self._handled
        boot, seq = self._handled or (0, 0)
        self.link.rewind(boot, seq, self.readings)

    @property
    def simulated(self) -> bool:
        return self.sim is not None

    @property
    def sides(self) -> tuple[str, ...]:
        """The game's sides (the web view gives each player a link of their own)."""
        return tuple(self.game.position.sides)

    # ---- running --------------------------------------------------------------

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> "TableSession":
        with self._lock:
            self._dirty = True
            self._checkpoint()
        self._thread = threading.Thread(target=self._run, name=f"table:{self.name}", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)
        self.health.stop()
        if self.store:
            with self._lock:
                self._dirty = True  # the match clock as it stands
                self._checkpoint()
            self.store.close()

    def _write_headers(self) -> None:
        """The record's headers as the table stands: the resignation, the rolls, the
        match clock (``Clock``: the seconds run of each timer that is not a turn's,
        ``half 1=734.2``), and where the board stood (``Link``, ``Sensed``, ``Tracker``)."""
        assert self.store is not None
        headers = self.store.headers
        for key in ("Resigned", "Rolls", "Clock", "Link", "Sensed", "Tracker"):
            headers.pop(key, None)
        if self.resigned:
            headers["Resigned"] = self.resigned
        if self.rolls:
            headers["Rolls"] = _write_rolls(self.rolls)
        position = self.game.position
        match = {name: self._elapsed.get(name, 0.0)
                 for name, timer in position.status().timers.items() if not timer.per_turn}
        if match:
            headers["Clock"] = _write_clock(match)
        if self._handled is not None and self.readings is not None:
            headers["Link"] = "boot=%d seq=%d" % self._handled
            expected = self.tracker.expected_readings()
            differing = {k: v for k, v in self.readings.items() if expected.get(k) != v}
            if differing:
                headers["Sensed"] = readings_text(self.board, differing)
            memory = self.tracker.memory()
            # Whether it decided on the board as it stands matters only where the
            # board differs from the game (reading a board in sync again changes nothing).
            memory["settled"] = memory["settled"] and bool(differing)
            tracker = _write_tracker(memory)
            if tracker:
                headers["Tracker"] = tracker

    def _checkpoint(self) -> bool:
        """Save what changed, then tell the link the events handled are done with.
        False while the save cannot be made: play pauses (see the module docstring)."""
        if self.store is None:
            self._commit()  # nothing to save: an event is done once handled
            return True
        if not self._dirty and self._handled == self._committed:
            return True
        self._write_headers()
        try:
            self.store.save(self.game, self._log)
        except CannotSave as exc:
            if self._cannot_save is None or self._cannot_save.reason != exc.reason:
                message = (f"{exc}; play is paused until it can be (the board keeps the "
                           "moves meanwhile)")
                log.error("table %s: %s", self.name, message)
                self.health.pause(message)
                self._cannot_save = exc
                self._notify()
            return False
        self._log.clear()
        self._dirty = False
        self._saved = (self.game.start, tuple(self.game.actions), dict(self.store.headers))
        if self._cannot_save is not None:
            self._cannot_save = None
            self._clock_at = None  # the time play stood still does not count
            self.health.recovered()
            log.warning("table %s: saved again; play goes on", self.name)
            self._notify()
        self._commit()
        return True

    def _commit(self) -> None:
        if self._handled is not None and self._handled != self._committed:
            self.link.commit(*self._handled)
            self._committed = self._handled
            boot, seq = self._handled
            self._faulted = {k: n for k, n in self._faulted.items() if k[0] == boot and k[1] > seq}

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
                events = self.link.take(timeout=TICK_S)
                with self._lock:
                    for event in events:
                        self._take(event)
                    now = time.monotonic()
                    self._after(self.tracker.tick(self._board_now(now)))
                    self._clock(now)
                    self._checkpoint()
                if self.health.state == "recovering":
                    self.health.recovered()
                faults = 0
            except BoardMismatch as exc:
                with self._lock:
                    self.notice = str(exc)
                self.health.stop("failed")  # the board is refused: said by the link
                self._notify()
                return
            except Exception as exc:  # a bug: say it, reload the last save, go on
                faults += 1
                self._fault(exc)
                if self._stop.wait(FAULT_BACKOFF_S[min(faults, len(FAULT_BACKOFF_S)) - 1]):
                    return

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
        self._dirty = False
        self._restore(game, dict(headers))
        self._reload_due = False
        self.leds = {}
        self._after(Change(), force=True)

    def _take(self, event: BoardEvent) -> None:
        """Handle one event from the link; one that faulted too often is skipped."""
        key = (event.boot, event.seq)
        if self._faulted.get(key, 0) >= POISON_FAULTS:
            message = self.health.fault(f"board event {event.seq} ({event.type}) failed "
                                        f"{self._faulted[key]} times", "skipped", recover=False)
            log.error("%s", message)
            self._note("skipped", **event.to_dict())
        else:
            self._handling = key
            self._handle(event)
            self._handling = None
        self._handled = key
        self._dirty = True

    def _note(self, kind: str, **fields: Any) -> None:
        """A line for the game's event log, written with the next save."""
        if self.store is not None:
            self._log.append((time.time(), kind, fields))

    def _board_now(self, now: float) -> float:
        """Now, as far as the board's events are known: while the link takes in a
        journal resent after a cut, the time of its last event (BoardSession.clock),
        so that the board counts as still only for as long as it really was."""
        return min(now, self.link.clock())

    def _handle(self, event: BoardEvent) -> None:
        now = time.monotonic()
        if event.at is not None:
            # When the board saw it (protocol 2). For an event from the journal,
            # long before it arrived: first decide what the board showed before it,
            # as a tick would have then, had the link not been cut.
            now = min(now, event.at)
            change = self.tracker.tick(now)
            if change:
                self._after(change)
        self._note("board", **event.to_dict())
        if event.type == "snapshot":
            self.readings = dict(event.readings)
            self.tracker.observe(event.readings, now)
            self._after(Change())
        elif event.type == "square":
            if self.readings is not None and event.square is not None:
                self.readings[event.square] = event.reading
            self.tracker.observe_square(event.square, event.reading, now)
            self._after(Change())
        elif event.type == "button":
            self._button(event.button)
        elif event.type == "die":
            self.last_die = {"value": event.value, "roll_id": event.roll_id}
            self._die(event.value, event.roll_id)

    def _button(self, button: str | None) -> None:
        if button == "takeback":
            if self.resigned:
                self.resigned = None
                self._dirty = True
                self._after(Change(), force=True)
            else:
                self._after(self.tracker.takeback())
        elif button == "confirm":
            change = self.tracker.confirm()
            if not change and self.tracker.view.state == "in-sync":
                # Nothing to step through: confirm makes the one choice there is.
                choices = self.choices()
                if len(choices) == 1:
                    self._make(choices[0])
                    return
                self.notice = ("nothing to confirm" if not choices else
                               f"{len(choices)} choices: choose one on the web view")
                self._after(Change(), force=True)
                return
            self._after(change)
        elif button == "resign" and self.game.position.outcome() is None and not self.resigned:
            self.resigned = self.game.position.status().to_move
            self._dirty = True
            self._after(Change(), force=True)
        elif button:
            self._word_button(button)

    def _word_button(self, word: str) -> None:
        """A button named like a word of the notation ("ground"): which action the
        players mean, before or after they move the pieces (see the module docstring)."""
        self._after(self.tracker.tick(time.monotonic(), force=True))
        change = self.tracker.select(word)
        if change or _says(self._last_action(), word):
            self._after(change, force=True)  # switched to it, or the reading says it already
            return
        position = self.game.position
        actions = [a for a in self._sensed_actions(position) if _says(a, word)]
        if not actions:
            self.notice = f"{word}: not now ({position.status().message})"
            self.calling = None
            self._after(Change(), force=True)
            return
        squares: set[str] = set()
        before = self.tracker.signature(position)
        for action in actions:
            after = self.tracker.signature(position.apply(action))
            squares |= {sq for sq in after if _has_more(after[sq], before[sq])}
        self.tracker.prefer = word
        self.calling = (word, tuple(sorted(squares)))
        self.notice = f"{word}: put the pieces down on a lit square"
        self._after(Change(), force=True)

    def _sensed_actions(self, position: Position) -> list[Hashable]:
        """The legal actions now, but for the table clock's own (a timeout, a whistle).

        A chance event the board's die gives is the die's; any other (a card turned
        up from a shuffled pile) a person enters, as a choice."""
        awaiting = position.status().awaiting
        if position.outcome() is not None or awaiting == "die":
            return []
        timed = {timer.action for timer in position.status().timers.values()}
        return [a for a in position.legal_actions() if a not in timed]

    def _last_action(self) -> Hashable | None:
        return self.game.actions[-1] if self.game.actions else None

    def _die(self, value: int, roll_id: int) -> None:
        # The roll button says the hand is done: read the board first (a kick called
        # by putting the ball down a moment ago is read before its roll).
        self._after(self.tracker.tick(time.monotonic(), force=True))
        position = self.game.position
        refused = ""
        if self.resigned or position.outcome() is not None:
            refused = "the game is over"
        elif self.tracker.view.state not in ("in-sync", "ambiguous"):
            refused = "the board does not match the game yet: put the pieces right, then roll"
        elif position.status().awaiting != "die":
            refused = "the game is not waiting for a roll"
        action = next((a for a in position.legal_actions()
                       if isinstance(a, Roll) and a.die == value), None) if not refused else None
        if not refused and action is None:
            refused = "not an outcome the rules expect"
        self._note("roll", roll_id=roll_id, value=value,
                   action=position.notation(action) if action is not None else None,
                   refused=refused or None)
        if action is None:
            self.notice = f"die roll {value} (roll {roll_id}) ignored: {refused}"
            self._after(Change(), force=True)
            return
        self.rolls[len(self.game.actions)] = roll_id
        self._after(self.tracker.push(action))

    def _make(self, action: Hashable) -> None:
        """Play a choice (the web view's, or confirm's)."""
        self._note("act", action=self.game.position.notation(action))
        self._after(self.tracker.push(action))

    def _after(self, change: Change, force: bool = False) -> None:
        """Record what changed, redraw the LEDs, tell the subscribers."""
        if change:
            self.notice = ""
            self.calling = None
            self.tracker.prefer = ""
            n = len(self.game.actions)
            self.rolls = {i: r for i, r in self.rolls.items() if i < n
                          and isinstance(self.game.actions[i], Roll)}
            self._note("tracker", popped=[str(a) for a in change.popped],
                       pushed=[str(a) for a in change.pushed])
            self._dirty = True
            self._report(change)
        clock = self.clock().get("turn")
        leds = picture(self.board, self._shown_position(), self.tracker.view,
                       last_squares=self._last_squares(), last_side=self._last_side(),
                       timer=(clock["side"], clock["left"], clock["total"]) if clock else None,
                       die=self.last_die["value"] if self.last_die else None,
                       calling=self.calling[1] if self.calling else ())
        if leds != self.leds:
            self.leds = leds
            try:
                self.link.set_leds(leds)
            except RuntimeError:
                pass  # no board yet: the picture goes out at the handshake
        self._notify()

    def _report(self, change: Change) -> None:
        if not self.on_action:
            return
        positions = self.game.positions()
        for action in change.popped:
            self.on_action("took back", "", _public(self.game.position, action, taken_back=True))
        pushed_from = len(positions) - 1 - len(change.pushed)
        for k, action in enumerate(change.pushed):
            before = positions[pushed_from + k]
            self.on_action("played", before.status().to_move, _public(before, action))

    def _shown_position(self):
        if self.resigned:
            return self.rules.resign(self.game.position, self.resigned)
        return self.game.position

    def _last_squares(self) -> tuple[str, ...]:
        positions = self.game.positions()
        if len(positions) < 2:
            return ()
        return tuple(sorted(self.tracker.touched(positions[-2], positions[-1])))

    def _last_side(self) -> str | None:
        positions = self.game.positions()
        return positions[-2].status().to_move if len(positions) > 1 else None

    # ---- actions the sensors cannot see -------------------------------------------------

    def choices(self) -> list[Hashable]:
        """The legal actions now that leave every piece where it stands (so the board
        cannot show them), in the engine's order; none while the rules wait for a
        chance event, after the game, or while a resignation stands."""
        with self._lock:
            position = self.game.position
            if self._choices_for is not None and self._choices_for[0] is position:
                return list(self._choices_for[1])
            found: list[Hashable] = []
            if not self.resigned:
                # The table clock's own actions (a timeout, a whistle) are not the players'.
                layout = _comparable(position.layout())
                found = [a for a in self._sensed_actions(position)
                         if _comparable(position.apply(a).layout()) == layout]
            self._choices_for = (position, found)
            return list(found)

    def act(self, text: str) -> Hashable:
        """Make one of the :meth:`choices`, written in the game's notation.

        Recorded like an action read from the board (record, event log, on_action,
        LEDs). Raises ValueError, saying why, for text that is not a choice now.
        """
        with self._lock:
            position = self.game.position
            if self._cannot_save is not None:
                # A choice is nowhere but here until it is saved: not while play is paused.
                raise ValueError(f"{self._cannot_save}: play is paused until it can be")
            if self.tracker.view.state != "in-sync":
                raise ValueError("the board does not match the game yet: "
                                 "put the pieces right before choosing")
            try:
                action = position.parse_action(text.strip())
            except (NotationError, IllegalAction) as exc:
                raise ValueError(f"{text.strip()!r}: {exc}") from None
            if action not in self.choices():
                # A legal action that moves pieces is made with the pieces.
                raise ValueError(f"{position.notation(action)!r} is made by moving the pieces "
                                 "on the board, not chosen here")
            self._make(action)
            self._checkpoint()
            return action

    # ---- what the web view reads -----------------------------------------------------

    def positions(self) -> tuple[Position, ...]:
        """The game's positions so far, the start first (a replay slider's steps)."""
        with self._lock:
            return tuple(self.game.positions())

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        return self._subscribers.add(callback)

    def _notify(self) -> None:
        self._subscribers.notify()

    def state(self, viewer: str | None = None) -> dict[str, Any]:
        """The whole picture, JSON-able; in a game that hides cards, as ``viewer`` (a
        side, or None for a spectator) may see it (masume.play.cards.for_viewer)."""
        with self._lock:
            position = self._shown_position()
            status = position.status()
            outcome = position.outcome()
            view = self.tracker.view
            tracker_squares = sorted(set(view.differing) | set(view.choice)
                                     | set(view.destinations))
            health = self.health_report()
            # Saving comes first: nothing else is taken until it works again.
            message = (self._cannot_save and health["problem"]) or view.message or self.notice
            state = {
                "game": self.rules.name,
                "board": {
                    "id": self.board.id,
                    "title": self.board.title,
                    "cells": [{"name": c.name, "x": c.x, "y": c.y, "zone": c.zone,
                               "sensor": c.sensor} for c in self.board.cells],
                    "buttons": [b.name for b in self.board.buttons],
                    "die": self.board.die,
                    "pieces": list(self.board.pieces),
                },
                "simulated": self.simulated,
                "pieces": self._pieces(),
                "leds": {cell: {"rgb": list(led.rgb), "pattern": led.pattern}
                         for cell, led in self._shown_leds().items()},
                "status": {
                    "to_move": status.to_move,
                    "action_number": status.action_number,
                    "actions_per_turn": status.actions_per_turn,
                    "score": dict(status.score),
                    "message": status.message,
                    "awaiting": status.awaiting,
                    # Who makes the choice now, when not the side to move (a kick's
                    # receiver of the other side keeps the ball or lets it run).
                    "deciding": status.deciding,
                },
                "tracker": {"state": view.state, "message": message, "squares": tracker_squares},
                # What the rules light now and how (the page's key to the lights).
                "highlights": [_key_entry(meaning, squares, position.legend)
                               for meaning, squares in status.highlights.items() if squares],
                "clock": self.clock(),
                "calling": ({"word": self.calling[0], "squares": list(self.calling[1])}
                            if self.calling else None),
                # Only while the board shows the game: a choice is made at a still table.
                "choices": ([{"text": self.game.position.notation(a)} for a in self.choices()]
                            if view.state == "in-sync" else []),
                "moves": self._moves(viewer_of(position, viewer)),
                "outcome": str(outcome) if outcome else None,
                "link": {"connected": self.link.connected.is_set()
                         and health["link"]["alive"],
                         "port": self.port, "error": self.link.error,
                         "state": self.link.state},
                "health": health,
                "last_die": self.last_die,
            }
            return for_viewer(state, position=self.game.position, board=self.board,
                              viewer=viewer, choices=self.choices())

    def health_report(self) -> dict[str, Any]:
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
        out: dict[str, dict[str, Any]] = {}
        position = self.game.position
        if self.resigned or position.outcome() is not None:
            return out
        status = position.status()
        for name, timer in status.timers.items():
            left = max(0.0, timer.seconds - self._elapsed.get(name, 0.0))
            entry: dict[str, Any] = {"left": round(left, 1), "total": timer.seconds}
            if timer.per_turn:
                entry["side"] = status.to_move
            out[name] = entry
        return out

    def _clock(self, now: float) -> None:
        """Count the rules' timers (called every tick); play a timer's action when it runs out.

        A turn's time counts while the board shows the game (not while the pieces
        follow a die roll); a match clock counts all the time. A timer's action is
        played once it is legal and the board shows the game.
        """
        position = self.game.position
        status = position.status()
        since = 0.0 if self._clock_at is None else now - self._clock_at
        self._clock_at = now
        if self.resigned or position.outcome() is not None or not status.timers:
            return
        # A new turn: another side to move or another turn number (Status.turn: a steal
        # under the beginner rules is the same side's new turn). Rules that do not number
        # their turns: another number of actions, or the actions counted from 1 again.
        if status.turn:
            turn: tuple[Any, ...] = (status.to_move, status.turn)
            fresh = turn != self._turn
        else:
            turn = (status.to_move, status.actions_per_turn, status.action_number,
                    len(self.game.actions))
            fresh = (self._turn is None or len(self._turn) != 4 or turn[:2] != self._turn[:2]
                     or turn[2] < self._turn[2] or turn[3] < self._turn[3])
        self._turn = turn
        board_ok = self.tracker.view.state in ("in-sync", "lifted", "moving", "ambiguous")
        for name, timer in status.timers.items():
            if timer.per_turn and fresh:
                self._elapsed[name] = 0.0  # the new turn's time counts from now
                continue
            if timer.per_turn and not board_ok:
                continue
            before = self._elapsed.get(name, 0.0)
            self._elapsed[name] = before + since
            if not timer.per_turn and int(before / 10) != int(self._elapsed[name] / 10):
                self._dirty = True  # the match clock, saved every 10 s: a power cut loses less
            if (self._elapsed[name] >= timer.seconds and self.tracker.view.state == "in-sync"
                    and position.is_legal(timer.action)):
                self._note("clock", timer=name, action=position.notation(timer.action))
                self._after(self.tracker.push(timer.action))
                return
        shown = tuple(int(e["left"]) for e in self.clock().values())
        if shown != self._shown_second:
            self._shown_second = shown
            self._after(Change())  # the timer lamps and the page's countdown

    def _pieces(self) -> dict[str, list[str]]:
        if self.sim is not None:
            return {sq: list(stack) for sq, stack in self.sim.table.stacks.items() if stack}
        out: dict[str, list[str]] = {}
        for square, reading in self.link.readings.items():
            if reading is True:
                out[square] = ["?"]
            elif isinstance(reading, tuple) and reading:
                out[square] = list(reading)
            elif isinstance(reading, str):
                out[square] = [f"tag:{reading}"]
        return out

    def _shown_leds(self) -> dict[str, Led]:
        """What the board shows: the simulated board's own LEDs, else our picture."""
        if self.sim is not None:
            from masume_protocol.codec import PATTERNS

            return {cell: Led(rgb, PATTERNS[self.sim.led_patterns.get(cell, 1)])
                    for cell, rgb in self.sim.led_colours.items()}
        return dict(self.leds)

    def _moves(self, viewer: str | None) -> list[dict[str, Any]]:
        """The actions by turns, each written as ``viewer`` may read it."""
        turns: list[dict[str, Any]] = []
        positions = self.game.positions()
        side = None
        for before, action, after in zip(positions, self.game.actions, positions[1:]):
            mover = before.status().to_move
            if side != mover or not turns:
                turns.append({"number": len(turns) + 1, "side": mover, "actions": []})
                side = mover
            turns[-1]["actions"].append(_written(before, action, viewer))
            if after.status().to_move != mover:
                side = None
        return turns

    # ---- the simulated board's hands -----------------------------------------------------

    def _need_sim(self) -> Any:
        if self.sim is None:
            raise ValueError("this table is a real board: move the pieces by hand")
        return self.sim

    def sim_lift(self, square: str) -> str:
        return self._need_sim().lift(square)

    def sim_place(self, square: str, piece: str) -> None:
        self._need_sim().place(square, piece)

    def sim_place_card(self, square: str, copy_id: str) -> None:
        """Put card ``copy_id`` of the game's set on ``square`` (the sim places its tag)."""
        self._need_sim().place(square, card_piece(self.game.position, copy_id))

    def cards(self) -> list[dict[str, str]]:
        """Every card of the game's set (id, name, kind), for the card picker."""
        return card_list(self.game.position)

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


def _says(action: Hashable | None, word: str) -> bool:
    """Does an action's notation hold ``word`` as a word?"""
    return action is not None and word in str(action).split()


def _has_more(a: object, b: object) -> bool:
    """Does sensor signature ``a`` show more pieces than ``b``?"""
    if isinstance(a, bool) or isinstance(b, bool):
        return bool(a) and not b
    return any(list(a).count(p) > list(b).count(p) for p in a)  # type: ignore[arg-type]


def _read_rolls(text: str) -> dict[int, int]:
    """The Rolls header, ``action=roll`` pairs (action numbers from 1): {index: roll id}."""
    out: dict[int, int] = {}
    for item in text.split():
        action, _, roll = item.partition("=")
        if action.isdigit() and roll.isdigit():
            out[int(action) - 1] = int(roll)
    return out


def _write_rolls(rolls: dict[int, int]) -> str:
    return " ".join(f"{i + 1}={r}" for i, r in sorted(rolls.items()))


def _read_clock(text: str) -> dict[str, float]:
    """The Clock header, ``name=seconds`` items separated by ``;``: {timer name: seconds}."""
    out: dict[str, float] = {}
    for item in text.split(";"):
        name, _, seconds = item.strip().rpartition("=")
        if not name:
            continue
        try:
            out[name] = float(seconds)
        except ValueError:
            continue
    return out


def _write_clock(elapsed: dict[str, float]) -> str:
    return "; ".join(f"{name}={seconds:.1f}" for name, seconds in sorted(elapsed.items()))


def _read_link(text: str) -> tuple[int, int] | None:
    """The Link header, ``boot=B seq=N``: the board's boot and the last event of it
    the save covers; None when absent or unreadable (the link starts afresh)."""
    fields = dict(item.partition("=")[::2] for item in text.split())
    try:
        return int(fields["boot"]), int(fields["seq"])
    except (KeyError, ValueError):
        return None


def _write_tracker(memory: TrackerMemory) -> str:
    """The Tracker header, e.g. ``settled pushed=3,5 follow=4`` (Tracker.memory)."""
    out = ["settled"] if memory["settled"] else []
    if memory["pushed"]:
        out.append("pushed=" + ",".join(str(i) for i in memory["pushed"]))
    if memory["follow"] is not None:
        out.append(f"follow={memory['follow']}")
    return " ".join(out)


def _read_tracker(text: str) -> TrackerMemory:
    memory: TrackerMemory = {"settled": False, "pushed": [], "follow": None}
    for item in text.split():
        key, _, value = item.partition("=")
        if key == "settled":
            memory["settled"] = True
        elif key == "pushed":
            memory["pushed"] = [int(i) for i in value.split(",") if i.isdigit()]
        elif key == "follow" and value.isdigit():
            memory["follow"] = int(value)
    return memory


def _key_entry(meaning: str, squares: tuple[str, ...], legend: Legend) -> dict[str, Any]:
    """One line of the page's key to the lights: a highlight's meaning, squares and LED."""
    led = highlight_led(meaning, legend)
    return {"meaning": meaning, "squares": list(squares), "rgb": list(led.rgb),
            "pattern": led.pattern}


def _written(position: Position, action: Hashable, viewer: str | None) -> str:
    """The action as ``viewer`` (a side, or None: anyone) may read it: a game that
    hides cards (``notation_for``) names a face-down card to its owner only."""
    if isinstance(position, HidesInformation):
        return position.notation_for(action, viewer)
    return position.notation(action)


def _public(position: Position, action: Hashable, *, taken_back: bool = False) -> str:
    """The action as anyone at the table may read it (the terminal is shared). A
    taken-back action is written from the position it was taken back to."""
    if taken_back and not isinstance(position, HidesInformation):
        return str(action)
    try:
        return _written(position, action, None)
    except (IllegalAction, NotationError, ValueError, KeyError):
        return "an action"  # taken back from a position it no longer fits


def _comparable(layout: Any) -> dict[str, tuple[str, ...]]:
    return {square: tuple(pieces) for square, pieces in layout.items() if pieces}
