"""One table's game, pure: an input in (a board event, a tick of the clock, a choice),
what changed and what to do about it out (:class:`Effects`).

:class:`TableCore` holds the game, the tracker and everything a table knows of its
game (the clocks, the die's rolls, a resignation, a word button called), and makes
no I/O and starts no thread: time comes in with each input, and what must reach the
world (the event log's lines, the actions to say, the board's LED picture, that there
is something to save) goes out in the :class:`Effects` each input returns. The
runner (:class:`masume.play.table.TableSession`) feeds it from the board link and
carries its effects out; the view model (:mod:`masume.play.view`) reads it for the
pages. See masume.play.table for what a table does.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from masume.boards import Board
from masume.leds import Lit, picture
from masume.link import BoardEvent, Led, Reading
from masume.link.events import parse_readings, readings_text
from masume.play.cards import cards_of, from_hand, held_card, said_to_all
from masume.records import ended
from masume.rules import Game, Position, Rules
from masume.rules.base import AnyPosition, HidesInformation, IllegalAction, NotationError, Roll
from masume.tracker import Change, Tracker, TrackerMemory

log = logging.getLogger("masume.play")

#: How the tracker's views begin that the hands work through piece by piece (a board to
#: set up, the pieces following a roll; masume.tracker): said once in the terminal.
ONE_BY_ONE = ("set up the pieces", "move as the lights show")

#: How the table says a takeback that moved nothing on the board (a choice).
TOOK_BACK = "took back "

#: The Clock header's item for the players' own clock: the seconds each side has.
PER_SIDE = "per side"

#: How the table begins its flag of an action made while the computer's was lit.
NOT_THE_COMPUTERS = "not the computer's action: "

#: What the table says while the advisor thinks of a hint (said until it is lit).
HINT_THINKING = "hint: thinking"

#: The record headers the table writes (the rest are the game's and the players').
TABLE_HEADERS = ("Resigned", "Timeout", "Rolls", "Clock", "Link", "Sensed", "Tracker")


@dataclass
class Effects:
    """What one input to the table caused, for the runner to carry out."""

    #: Lines for the game's event log: (kind, fields), written with the next save.
    notes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    #: Actions to say: (what: "played" or "took back", side, notation as anyone reads it).
    reports: list[tuple[str, str, str]] = field(default_factory=list)
    #: A new LED picture for the board, when it differs from the last.
    leds: dict[str, Led] | None = None
    #: The table's state may have changed: tell the pages.
    changed: bool = False
    #: Something changed that the next save must keep.
    dirty: bool = False
    #: What the players should be told now, for the terminal: a refusal with its reason
    #: and what to do instead, or how to put the board right (each said once).
    messages: list[str] = field(default_factory=list)
    #: The board's hint button was pressed: the runner's advisor thinks of one.
    hint_asked: bool = False

    def add(self, more: Effects) -> None:
        """What ``more`` caused too, after these (a runner that takes several inputs
        at once carries them out together)."""
        self.notes.extend(more.notes)
        self.reports.extend(more.reports)
        self.messages.extend(more.messages)
        if more.leds is not None:
            self.leds = more.leds
        self.changed = self.changed or more.changed
        self.dirty = self.dirty or more.dirty
        self.hint_asked = self.hint_asked or more.hint_asked


@dataclass(frozen=True)
class Shown:
    """An action lit on the board for the players to carry out: the computer's
    (``kind`` "computer": the table waits for it) or a hint (the best action for the
    side to act, lit until any action is made). ``at``: the number of actions played
    when it was found (it belongs to that position); ``words``: what the page and the
    terminal say, as anyone at the table may read it (the computer's face-down card is
    "a face-down card"); ``value``: the search's judgement for ``side``, 0 to 1."""

    kind: Literal["computer", "hint"]
    side: str
    action: Hashable
    at: int
    #: The position it was found for (the game's after ``at`` actions, as then read).
    position: Any
    words: str
    value: float
    lit: Lit
    #: The computer's card it plays from its hand slots, and that slot ("": none); the
    #: card laid must be this one (never said: the words name the slot).
    card: str = ""
    slot: str = ""

    def found_for(self, position: Any) -> bool:
        """Was it found for ``position`` (the same object, or one equal to it)?"""
        return position is self.position or position == self.position


class TableCore:
    """The game at one table (see the module docstring). ``headers``: the saved
    record's headers, from which the table takes up where it stood."""

    def __init__(self, rules: Rules, board: Board, game: Game[Any],
                 headers: dict[str, str] | None = None, *, name: str = "") -> None:
        self.rules = rules
        self.board = board
        self.name = name or board.id
        self.leds: dict[str, Led] = {}
        self.last_die: dict[str, int] | None = None
        self._shown_second: tuple[int, ...] = ()
        self._said = ""  # the last message for the terminal (Effects.messages)
        self._out = Effects()
        self.restore(game, dict(headers or {}))

    def restore(self, game: Game[Any], headers: dict[str, str]) -> None:
        """Take up a saved state: the game, and what its headers say of the
        table, the board and the link (see masume.play.table)."""
        self.game = game
        self._out = Effects()  # what an input that faulted half-way caused is dropped
        self.tracker = Tracker(game, self.board, cards=cards_of(game.position))
        #: The side that resigned, or lost on time (``timed_out``: its clock ran out).
        self.resigned: str | None = (headers.get("Resigned") or headers.get("Timeout")
                                     or None)
        self.timed_out = not headers.get("Resigned") and bool(headers.get("Timeout"))
        self.notice = ""  # the latest message worth showing (a refused die roll, ...)
        self._choices_for: tuple[Position[Any], list[Hashable]] | None = None
        #: The action lit for the players to carry out (the computer's, or a hint).
        self.shown: Shown | None = None
        #: A word button pressed before the pieces moved: (word, squares to put them on).
        self.calling: tuple[str, tuple[str, ...]] | None = None
        #: Resign was pressed once: a second press resigns, any other button cancels.
        self.resigning = False
        #: Which roll of the board's die made which action (action index -> roll id),
        #: kept in the record's Rolls header.
        self.rolls: dict[int, int] = _read_rolls(headers.get("Rolls", ""))
        # The clocks: seconds run per timer name (a match clock's as saved with the
        # game: it goes on after a resume; a turn clock starts afresh), and the turn the
        # "turn" timer counts.
        self._elapsed: dict[str, float] = _read_clock(headers.get("Clock", ""))
        #: The players' own clock, as a chess clock (``masume play --clock``): the seconds
        #: each side has for the game (None: no such clock); each side's time used is
        #: kept in ``_elapsed`` as "<side> clock". Saved in the Clock header ("per side").
        self.side_seconds: float | None = self._elapsed.pop(PER_SIDE, None)
        self._clock_at: float | None = None
        self._turn: tuple[Any, ...] | None = None
        #: The board's readings as of the last event handled (None before the first
        #: snapshot), and that event: (boot, seq).
        self.readings: dict[str, Reading] | None = None
        self.handled: tuple[int, int] | None = _read_link(headers.get("Link", ""))
        if self.handled is not None:
            self.readings = self.tracker.expected_readings()
            try:
                self.readings.update(parse_readings(self.board, headers.get("Sensed", "")))
            except ValueError as exc:
                log.warning("table %s: Sensed header: %s; taking the game's", self.name, exc)
            # The board has stood so since the save: long enough to read, as far as
            # anyone knows here, so the first event resent (its own time, earlier
            # than now) first settles on it. Restored at "now", a move put down just
            # before the host died and followed by another while it was down was
            # never read (issue 11: killed five times, moves lost).
            self.tracker.restore(self.readings, _read_tracker(headers.get("Tracker", "")),
                                 float("-inf"))
        self.leds = {}

    # ---- inputs: each returns what it caused --------------------------------------

    def handle(self, event: BoardEvent, now: float) -> Effects:
        """One event from the board, taken at ``now`` (monotonic seconds)."""
        if event.at is not None:
            # When the board saw it (protocol 2). For an event from the journal,
            # long before it arrived: first decide what the board showed before it,
            # as a tick would have then, had the link not been cut.
            now = min(now, event.at)
            change = self.tracker.tick(now)
            if change:
                self._after(change)
        self._note("board", **event.to_dict())
        if event.type in ("snapshot", "square") and self.notice.startswith(TOOK_BACK):
            self.notice = ""  # said until the hands go on
        if event.type == "snapshot":
            self.readings = dict(event.readings)
            self.tracker.observe(event.readings, now)
            self._after(Change())
        elif event.type == "square":
            if event.square is not None:
                if self.readings is not None:
                    self.readings[event.square] = event.reading
                self.tracker.observe_square(event.square, event.reading, now)
            self._after(Change())
        elif event.type == "button":
            self._button(event.button, now)
        elif event.type == "die" and event.value is not None and event.roll_id is not None:
            self.last_die = {"value": event.value, "roll_id": event.roll_id}
            self._die(event.value, event.roll_id, now)
        self.handled = (event.boot, event.seq)
        return self._flush(dirty=True)

    def skip(self, event: BoardEvent) -> Effects:
        """An event the table gives up on (it faulted too often): noted, and done with."""
        self._note("skipped", **event.to_dict())
        self.handled = (event.boot, event.seq)
        return self._flush(dirty=True)

    def button(self, button: str, now: float) -> Effects:
        """A board button pressed (as a board event of that button would say)."""
        self._button(button, now)
        return self._flush()

    def die(self, value: int, roll_id: int, now: float) -> Effects:
        """The board's die rolled ``value`` (its roll ``roll_id``)."""
        self.last_die = {"value": value, "roll_id": roll_id}
        self._die(value, roll_id, now)
        return self._flush()

    def tick(self, now: float, board_now: float | None = None) -> Effects:
        """Time passes: the tracker decides on a board still since ``board_now`` (the
        link's clock, by default ``now``), then the rules' timers count to ``now``."""
        self._after(self.tracker.tick(now if board_now is None else board_now))
        self._clock(now)
        return self._flush()

    def count_time(self, now: float) -> Effects:
        """Only the rules' timers count to ``now`` (the tracker is not asked)."""
        self._clock(now)
        return self._flush()

    def settle(self, change: Change) -> Effects:
        """What the tracker changed (its own ``tick``, ``observe``...): recorded, lit."""
        self._after(change)
        return self._flush()

    def redraw(self) -> Effects:
        """The LED picture and the pages, afresh (after a reload)."""
        self.leds = {}
        self._after(Change())
        return self._flush()

    def act(self, text: str) -> tuple[Hashable, Effects]:
        """Make one of the :meth:`choices`, written in the game's notation; ValueError,
        saying why, for text that is not a choice now."""
        position = self.game.position
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
        return action, self._flush()

    def show(self, kind: Literal["computer", "hint"], side: str, action: Hashable,
             value: float, at: int, slots: Mapping[str, str] | None = None,
             unread: int = 0) -> Effects:
        """Light ``action``, found for ``side`` when ``at`` actions were played (the
        advisor's, off the table's thread): nothing if the game has gone on since. The
        computer's action that moves nothing on the board (keeping the ball, a system
        declared) is made at once: there is nothing for a hand to do. ``slots``: the
        computer's cards on its hand slots, card -> slot: a card of them it plays is
        said and lit as its slot, never named (docs/ai.md, "The computer's hand");
        ``unread``: cards of its hand past its slots, which a card of its hand that lies on
        no slot is one of (said so)."""
        position = self.game.position
        if (len(self.game.actions) != at or self.resigned or position.outcome() is not None
                or not position.is_legal(action)):
            return self._flush()
        if kind == "computer" and action in self.choices():
            self._note("computer", action=position.notation(action))
            self._make(action)
            return self._flush()
        after = position.apply(action)
        lit = lit_action(side, position, after, self.tracker.signature(position),
                         self.tracker.signature(after))
        take, put = lit.take, lit.put
        if self.notice == HINT_THINKING:
            self.notice = ""
        card = held_card(position, action, slots or {}) if kind == "computer" else None
        if card is not None:
            slot = (slots or {})[card]
            lit = Lit(lit.side, (slot, *take), put, lit.path)
            words = _from_slot(position, action, slot, put)
            self.shown = Shown(kind, side, action, at, position, words, value, lit, card, slot)
            noted = words.split(": ")[0]
        else:
            words = _in_words(position, action, take, put)
            if kind == "computer" and unread and from_hand(position,
                                                           position.notation(action))[1]:
                words = _from_slot(position, action, "", put)  # a card past its slots
            self.shown = Shown(kind, side, action, at, position, words, value, lit)
            noted = position.notation(action)
        who = "computer" if kind == "computer" else f"hint for {side}"
        self._note(kind, action=noted, value=round(value, 3))
        self._out.messages.append(f"{who}: {self.shown.words}")
        self._after(Change())
        return self._flush()

    def ask_hint(self) -> Effects:
        """The players ask for a hint (the page's button, or the board's): the runner's
        advisor is told (``Effects.hint_asked``)."""
        self._hint()
        return self._flush()

    def say(self, notice: str) -> Effects:
        """Tell the players ``notice`` (the advisor's error, say) on the page and the
        terminal; play goes on."""
        self.notice = notice
        self._after(Change())
        return self._flush()

    def due(self) -> float | None:
        """When a :meth:`tick` may next change something (monotonic seconds): the
        tracker's decision on a board gone still, a countdown's next second shown or
        its end; None when nothing will until an input comes (a runner that waits on
        its inputs wakes for this alone)."""
        due = self.tracker.due()
        position = self.game.position
        if self.resigned or position.outcome() is not None or self._clock_at is None:
            return due
        left = [timer.seconds - self._elapsed.get(name, 0.0)
                for name, timer in position.status().timers.items()]
        if self.side_seconds is not None:
            left += [self.side_seconds - self._elapsed.get(f"{side} clock", 0.0)
                     for side in position.sides]
        if not left:
            return due
        # The seconds shown are whole (int(left)): the next changes at the next whole second.
        step = min(x - math.floor(x) if x - math.floor(x) > 1e-3 else 1.0 for x in left)
        clock = self._clock_at + step + 1e-3
        return clock if due is None else min(due, clock)

    def pause_clock(self) -> None:
        """The time until the next tick does not count (play stood still: a save failed)."""
        self._clock_at = None

    # ---- what the table knows ----------------------------------------------------

    def headers(self, headers: dict[str, str]) -> dict[str, str]:
        """``headers`` with the table's own (:data:`TABLE_HEADERS`) as the table stands:
        the resignation, the rolls, the match clock (``Clock``: the seconds run of each
        timer that is not a turn's, ``half 1=734.2``), and where the board stood
        (``Link``, ``Sensed``, ``Tracker``)."""
        out = {k: v for k, v in headers.items() if k not in TABLE_HEADERS}
        if self.resigned:
            out["Timeout" if self.timed_out else "Resigned"] = self.resigned
        if self.rolls:
            out["Rolls"] = _write_rolls(self.rolls)
        position = self.game.position
        match = {name: self._elapsed.get(name, 0.0)
                 for name, timer in position.status().timers.items() if not timer.per_turn}
        if self.side_seconds is not None:
            match[PER_SIDE] = self.side_seconds
            match.update({f"{side} clock": self._elapsed.get(f"{side} clock", 0.0)
                          for side in position.sides})
        if match:
            out["Clock"] = _write_clock(match)
        if self.handled is not None and self.readings is not None:
            out["Link"] = "boot={} seq={}".format(*self.handled)
            expected = self.tracker.expected_readings()
            differing = {k: v for k, v in self.readings.items() if expected.get(k) != v}
            if differing:
                out["Sensed"] = readings_text(self.board, differing)
            memory = self.tracker.memory()
            # Whether it decided on the board as it stands matters only where the
            # board differs from the game (reading a board in sync again changes nothing).
            memory["settled"] = memory["settled"] and bool(differing)
            tracker = _write_tracker(memory)
            if tracker:
                out["Tracker"] = tracker
        return out

    def shown_position(self) -> AnyPosition:
        """The game's position, ended if a side resigned or lost on time."""
        if self.resigned:
            return ended(self.rules, self.game.position, self.resigned,
                         on_time=self.timed_out)
        return self.game.position

    def choices(self) -> list[Hashable]:
        """The legal actions now that leave every piece where it stands (so the board
        cannot show them), in the engine's order; none while the rules wait for a
        chance event, after the game, or while a resignation stands."""
        position = self.game.position
        if self.resigned:  # before the cache: it holds the choices from before
            return []
        if self._choices_for is not None and self._choices_for[0] is position:
            return list(self._choices_for[1])
        # The table clock's own actions (a timeout, a whistle) are not the players'.
        layout = _comparable(position.layout())
        found = [a for a in self._sensed_actions(position)
                 if _comparable(position.apply(a).layout()) == layout]
        self._choices_for = (position, found)
        return list(found)

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
        if self.side_seconds is not None:
            running = status.deciding or status.to_move
            for side in position.sides:
                used = self._elapsed.get(f"{side} clock", 0.0)
                out[f"{side} clock"] = {"left": round(max(0.0, self.side_seconds - used), 1),
                                        "total": self.side_seconds, "side": side,
                                        "running": side == running}
        return out

    # ---- how -------------------------------------------------------------------------

    def _flush(self, dirty: bool = False) -> Effects:
        out, self._out = self._out, Effects()
        out.dirty = out.dirty or dirty
        return out

    def _note(self, kind: str, **fields: Any) -> None:
        self._out.notes.append((kind, fields))

    def _clock(self, now: float) -> None:
        """Count the rules' timers; play a timer's action when it runs out.

        Nothing counts before the board is read (its first snapshot: after a resume
        the table waits for the board). A turn's time counts while the board shows the
        game (not while the pieces follow a die roll); a match clock counts all the
        time. A timer's action is played once it is legal and the board shows the game.
        """
        if not self.tracker.board_read:
            # No board yet (a resume before its first snapshot): no time counts.
            self._clock_at = None
            return
        position = self.game.position
        status = position.status()
        since = 0.0 if self._clock_at is None else now - self._clock_at
        self._clock_at = now
        if self.resigned or position.outcome() is not None:
            return
        if self.side_seconds is not None and self._side_clock(status, since):
            return
        if not status.timers:
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
                self._out.dirty = True  # the match clock, saved every 10 s: a power cut loses less
            if (self._elapsed[name] >= timer.seconds and self.tracker.view.state == "in-sync"
                    and position.is_legal(timer.action)):
                self._note("clock", timer=name, action=position.notation(timer.action))
                self._after(self.tracker.push(timer.action))
                return
        shown = tuple(int(e["left"]) for e in self.clock().values())
        if shown != self._shown_second:
            self._shown_second = shown
            self._after(Change())  # the timer lamps and the page's countdown

    def _side_clock(self, status: Any, since: float) -> bool:
        """Count the running side's own clock (``--clock``); True when it ran out (that
        side loses, as a flag falls on a chess clock: the table resigns for it)."""
        assert self.side_seconds is not None
        side = status.deciding or status.to_move
        key = f"{side} clock"
        before = self._elapsed.get(key, 0.0)
        self._elapsed[key] = before + since
        if int(before / 10) != int(self._elapsed[key] / 10):
            self._out.dirty = True
        if self._elapsed[key] < self.side_seconds:
            if not status.timers:
                shown = tuple(int(e["left"]) for e in self.clock().values())
                if shown != self._shown_second:
                    self._shown_second = shown
                    self._after(Change())
            return False
        self.resigned, self.timed_out = side, True
        self.notice = f"{side}'s time ran out: {self.shown_position().outcome()}"
        self._note("clock", timer=key, action="time out")
        self._out.dirty = True
        self._after(Change())
        return True

    def _button(self, button: str | None, now: float) -> None:
        asked, self.resigning = self.resigning, False
        if asked and button != "resign":
            self.notice = "resign cancelled: play on"
            self._after(Change())
            if button == "takeback":
                return  # the takeback said no to resigning; it takes nothing back
        if button == "takeback":
            if self.resigned:
                self.resigned, self.timed_out = None, False
                self._out.dirty = True
                self._after(Change())
            elif not self.game.actions:
                self.notice = "takeback: nothing to take back yet"
                self._after(Change())
            else:
                change = self.tracker.takeback()
                self._after(change)
                if change.popped and self.tracker.view.state == "in-sync":
                    # A choice taken back moved nothing: say so, or the page shows nothing.
                    taken = ", ".join(_public(self.game.position, a, taken_back=True)
                                      for a in change.popped)
                    self.notice = f"{TOOK_BACK}{taken}: nothing to move on the board"
                    self._after(Change())
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
                self._after(Change())
                return
            self._after(change)
        elif button == "resign":
            if self.game.position.outcome() is not None or self.resigned:
                self.notice = ("resign: the game is over already; press takeback to go back "
                               "into it" if self.resigned else "resign: the game is over already")
            elif not asked:
                # Resigning ends the game: asked first (the board has no screen).
                self.resigning = True
                self.notice = (f"resign for {self.game.position.status().to_move}? press "
                               "resign again to resign, takeback to play on")
            else:
                self.resigned, self.timed_out = self.game.position.status().to_move, False
                self.notice = f"{self.resigned} resigns: {self.shown_position().outcome()}"
                self._out.dirty = True
            self._after(Change())
        elif button == "hint":
            self._hint()
        elif button:
            self._word_button(button, now)

    def _hint(self) -> None:
        self._out.hint_asked = True
        self.notice = HINT_THINKING
        self._after(Change())

    def _word_button(self, word: str, now: float) -> None:
        """A button named like a word of the notation ("ground"): which action the
        players mean, before or after they move the pieces (see masume.play.table)."""
        self._after(self.tracker.tick(now, force=True))
        change = self.tracker.select(word)
        if change or _says(self._last_action(), word):
            self._after(change)  # switched to it, or the reading says it already
            return
        position = self.game.position
        actions = [a for a in self._sensed_actions(position) if _says(a, word)]
        if not actions:
            self.notice = f"{word}: not now ({position.status().message})"
            self.calling = None
            self._after(Change())
            return
        squares: set[str] = set()
        before = self.tracker.signature(position)
        for action in actions:
            after = self.tracker.signature(position.apply(action))
            squares |= {sq for sq in after if _has_more(after[sq], before[sq])}
        self.tracker.prefer = word
        self.calling = (word, tuple(sorted(squares)))
        self.notice = f"{word}: put the pieces down on a lit square"
        self._after(Change())

    def _sensed_actions(self, position: Position[Any]) -> list[Hashable]:
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

    def _die(self, value: int, roll_id: int, now: float) -> None:
        # The roll button says the hand is done: read the board first (a kick called
        # by putting the ball down a moment ago is read before its roll).
        self._after(self.tracker.tick(now, force=True))
        position = self.game.position
        refused = ""
        status = position.status()
        if self.resigned or position.outcome() is not None:
            refused = "the game is over"
        elif self.tracker.view.state not in ("in-sync", "ambiguous"):
            fix = self.tracker.view.message or "put the pieces as the lights show"
            refused = (f"the board does not match the game yet ({fix}): "
                       "put the pieces right, then roll again")
        elif status.awaiting != "die":
            refused = ("the game is not waiting for a roll: "
                       f"{status.message or status.to_move + ' to play'}; roll when the "
                       "die lamps breathe")
        action = next((a for a in position.legal_actions()
                       if isinstance(a, Roll) and a.die == value), None) if not refused else None
        if not refused and action is None:
            refused = "not an outcome the rules expect"
        self._note("roll", roll_id=roll_id, value=value,
                   action=position.notation(action) if action is not None else None,
                   refused=refused or None)
        if action is None:
            self.notice = f"die roll {value} (roll {roll_id}) ignored: {refused}"
            self._after(Change())
            return
        self.rolls[len(self.game.actions)] = roll_id
        self._after(self.tracker.push(action))

    def _make(self, action: Hashable) -> None:
        """Play a choice (the web view's, or confirm's)."""
        self._note("act", action=self.game.position.notation(action))
        self._after(self.tracker.push(action))

    def _after(self, change: Change) -> None:
        """Record what changed, redraw the LEDs, tell the pages."""
        if change:
            self.notice = ""
            self.calling = None
            self.tracker.prefer = ""
            n = len(self.game.actions)
            self.rolls = {i: r for i, r in self.rolls.items() if i < n
                          and isinstance(self.game.actions[i], Roll)}
            self._note("tracker", popped=[str(a) for a in change.popped],
                       pushed=[str(a) for a in change.pushed])
            self._out.dirty = True
            self._report(change)
            self._check_shown()
        lit = self.lit_now()
        self.tracker.expect = None if lit is None else lit.action
        if lit is not None and self.calling is None:
            # Where the board can be read several ways (a ground kick or a lob), the
            # reading the lit action names comes first.
            buttons = {b.name for b in self.board.buttons}
            self.tracker.prefer = next((w for w in str(lit.action).split()
                                        if w in buttons), "")
        clocks = self.clock()
        clock = clocks.get("turn") or next(
            (c for c in clocks.values() if c.get("running")), None)
        leds = picture(self.board, self.shown_position(), self.tracker.view,
                       last_squares=self._last_squares(), last_side=self._last_side(),
                       timer=(clock["side"], clock["left"], clock["total"]) if clock else None,
                       die=self.last_die["value"] if self.last_die else None,
                       calling=self.calling[1] if self.calling else (),
                       lit=self._lit())
        if leds != self.leds:
            self.leds = leds
            self._out.leds = leds
        view = self.tracker.view
        said = self.notice or (view.message if view.state in ("mismatch", "follow", "remove")
                               else "")
        # Setting up, or following a roll, is said once, not again for every piece put down.
        going_on = any(said.startswith(p) and self._said.startswith(p) for p in ONE_BY_ONE)
        if said and said != self._said and not going_on:
            self._out.messages.append(said_to_all(self.game.position, said))
        self._said = said
        self._out.changed = True

    def _lit(self) -> Lit | None:
        """The action to light, while the board shows its position: not while the
        pieces must be put right (the fix's lights would mix with it: the red of a
        piece put wrong is near the red side's colour); lit again once they are."""
        shown = self.lit_now()
        if shown is None or self.tracker.view.state not in ("in-sync", "lifted", "moving"):
            return None
        return shown.lit

    def lit_now(self) -> Shown | None:
        """The action lit for the position the game stands on now, if one is."""
        shown = self.shown
        if (shown is None or len(self.game.actions) != shown.at
                or not shown.found_for(self.game.position)):
            return None
        return shown

    def _check_shown(self) -> None:
        """After the game changed: an action lit is done with once made (or the game went
        back before it). Another action made where the computer's was lit is flagged and
        taken back (the players put the pieces back; the computer's stays lit); any action
        ends a hint. The same action as anyone reads it counts as made: the computer's
        face-down card is whichever card of its hand the hand lays."""
        shown = self.shown
        if shown is None:
            return
        positions = self.game.positions()
        if len(positions) <= shown.at or not shown.found_for(positions[shown.at]):
            # The game went back before it, or the board was read again another way up
            # to it (the last action corrected): it was for a position gone.
            self.shown = None
            return
        if len(self.game.actions) == shown.at:
            return
        before = positions[shown.at]
        made = self.game.actions[shown.at]
        if shown.kind == "hint" or made == shown.action or (
                not shown.card and _carried_out(before, made, shown.action)):
            self.shown = None
            return
        words = _public(before, made)
        self._note("computer", refused=words, lit=_public(before, shown.action))
        self.shown = None  # the takebacks' own changes are not checked against it
        while len(self.game.actions) > shown.at:
            change = self.tracker.takeback()
            if not change:
                break
            self._after(change)
        self.shown = shown
        if shown.card:  # the card chosen lies on a slot: the reader read another
            self.notice = (f"{NOT_THE_COMPUTERS}{words}: not the card on its hand slot "
                           f"{shown.slot} (the reader read another); put that card back in "
                           f"the hand as the lights show, then play the computer's: "
                           f"{shown.words}")
            return
        self.notice = (f"{NOT_THE_COMPUTERS}{words}; put the pieces back as the lights show, "
                       f"then play the computer's: {shown.words}")

    def _report(self, change: Change) -> None:
        positions = self.game.positions()
        for action in change.popped:
            self._out.reports.append(
                ("took back", "", _public(self.game.position, action, taken_back=True)))
        pushed_from = len(positions) - 1 - len(change.pushed)
        for k, action in enumerate(change.pushed):
            before = positions[pushed_from + k]
            self._out.reports.append(("played", before.status().to_move, _public(before, action)))

    def _last_squares(self) -> tuple[str, ...]:
        positions = self.game.positions()
        if len(positions) < 2:
            return ()
        return tuple(sorted(self.tracker.touched(positions[-2], positions[-1])))

    def _last_side(self) -> str | None:
        positions = self.game.positions()
        return positions[-2].status().to_move if len(positions) > 1 else None


def written(position: AnyPosition, action: Hashable, viewer: str | None) -> str:
    """The action as ``viewer`` (a side, or None: anyone) may read it: a game that
    hides cards (``notation_for``) names a face-down card to its owner only."""
    if isinstance(position, HidesInformation):
        return position.notation_for(action, viewer)
    return position.notation(action)


def _carried_out(position: AnyPosition, made: Hashable, lit: Hashable) -> bool:
    """Is ``made`` the action ``lit`` as the hands can carry it out: the same as anyone
    reads it (the computer's face-down card), or the same but for which card of the
    hand (a hand is a count: masume.play.cards.from_hand)?"""
    if made == lit or _public(position, made) == _public(position, lit):
        return True
    made_words, _ = from_hand(position, position.notation(made))
    lit_words, blind = from_hand(position, position.notation(lit))
    return blind and made_words == lit_words


#: The computer's card past its hand slots (docs/ai.md, "A hand larger than its slots").
BESIDE_THE_SLOTS = "one of those kept beside its slots (unread)"


def _in_words(position: AnyPosition, action: Hashable, take: tuple[str, ...],
              put: tuple[str, ...]) -> str:
    """An action to carry out, as anyone at the table may read it: its notation and
    where the pieces go (``E7 ground N: from E7 to E8``); a card the others may not see
    is "a face-down card", a card of the hand "a card from the hand" (whichever)."""
    public = _public(position, action)
    where = ", ".join(put) or "the table"
    if isinstance(position, HidesInformation) and public != position.notation(action):
        return f"{public}: a face-down card on {where}"
    public, blind = from_hand(position, public)
    if blind:
        return f"{public}: a card from the hand (the top of its pile) on {where}"
    moves = []
    if take:
        moves.append("from " + ", ".join(take))
    if put:
        moves.append("to " + ", ".join(put))
    return f"{public}: {' '.join(moves)}" if moves else public


def _from_slot(position: AnyPosition, action: Hashable, slot: str,
               put: tuple[str, ...]) -> str:
    """The computer's card from its hand slot ``slot`` ("": one of its cards past its slots,
    unread), as anyone may read it: the action with the card as ``?``, the slot and where
    it goes, never the card's name."""
    public = _public(position, action)
    face = "face up" if public == position.notation(action) else "face down"
    public, _ = from_hand(position, public)
    where = ", ".join(put) or "the table"
    which = f"the one on its hand slot {slot}" if slot else BESIDE_THE_SLOTS
    return f"{public}: a face-down card, {which}, laid {face} on {where}"


def _public(position: AnyPosition, action: Hashable, *, taken_back: bool = False) -> str:
    """The action as anyone at the table may read it (the terminal is shared). A
    taken-back action is written from the position it was taken back to."""
    if taken_back and not isinstance(position, HidesInformation):
        return str(action)
    try:
        return written(position, action, None)
    except (IllegalAction, NotationError, ValueError, KeyError):
        return "an action"  # taken back from a position it no longer fits


def _comparable(layout: Any) -> dict[str, tuple[str, ...]]:
    return {square: tuple(pieces) for square, pieces in layout.items() if pieces}


def _says(action: Hashable | None, word: str) -> bool:
    """Does an action's notation hold ``word`` as a word?"""
    return action is not None and word in str(action).split()


def lit_action(side: str, before: AnyPosition, after: AnyPosition,
               seen_before: Mapping[str, object], seen_after: Mapping[str, object]) -> Lit:
    """An action from ``before`` to ``after`` as the board lights it for ``side``: the
    squares pieces leave and reach (``seen_*``: what stands on each square, as sensor
    signatures or as piece lists) and the way the ball goes (what the rules highlight
    after it and did not before). The table's computer and hints light this; the
    review (masume.play.review) draws it on the page."""
    squares = set(seen_before) | set(seen_after)
    empty: tuple[str, ...] = ()
    take = tuple(sorted(sq for sq in squares
                        if _has_more(seen_before.get(sq, empty), seen_after.get(sq, empty))))
    put = tuple(sorted(sq for sq in squares
                       if _has_more(seen_after.get(sq, empty), seen_before.get(sq, empty))))
    lit_before = {sq for squares in before.status().highlights.values() for sq in squares}
    path = tuple(sorted({sq for squares in after.status().highlights.values()
                         for sq in squares} - lit_before - set(take) - set(put)))
    return Lit(side, take, put, path)


def _has_more(a: object, b: object) -> bool:
    """Does sensor signature ``a`` show more pieces than ``b``?"""
    if isinstance(a, bool) or isinstance(b, bool):
        return bool(a) and not b
    pieces_a, pieces_b = list(cast(Iterable[str], a)), list(cast(Iterable[str], b))
    return any(pieces_a.count(p) > pieces_b.count(p) for p in pieces_a)


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
