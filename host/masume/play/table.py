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
board as on the simulated one, and it is recorded like any other action. Chance
outcomes are never choices: they come from the die.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable, Hashable

from masume.boards import Board
from masume.leds import picture
from masume.link import BoardEvent, BoardMismatch, BoardSession, Led
from masume.rules import Game, Position, Rules
from masume.rules.base import IllegalAction, NotationError
from masume.storage import GameStore
from masume.subscribers import Subscribers
from masume.tracker import Change, Tracker

log = logging.getLogger("masume.play")

TICK_S = 0.05


class TableSession:
    def __init__(
        self,
        rules: Rules,
        board: Board,
        link: BoardSession,
        *,
        game: Game | None = None,
        store: GameStore | None = None,
        sim: Any = None,
        port: str = "",
        on_action: Callable[[str, str, str], None] | None = None,
    ) -> None:
        self.rules = rules
        self.board = board
        self.link = link
        self.game = game or Game(rules.start())
        self.store = store
        self.sim = sim
        self.port = port
        self.on_action = on_action  # (what: "played" or "took back", side, notation)
        self.tracker = Tracker(self.game, board)
        self.resigned: str | None = None
        self.leds: dict[str, Led] = {}
        self.last_die: dict[str, int] | None = None
        self.notice = ""  # the latest message worth showing (a refused die roll, ...)
        self._lock = threading.RLock()
        self._subscribers = Subscribers("masume.play")
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._changed = threading.Event()
        self._choices_for: tuple[Position, list[Hashable]] | None = None

    @property
    def simulated(self) -> bool:
        return self.sim is not None

    # ---- running --------------------------------------------------------------

    def start(self) -> "TableSession":
        if self.store:
            self.store.save(self.game)
        self._thread = threading.Thread(target=self._run, name="table", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)
        if self.store:
            self.store.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                for event in self.link.events(timeout=TICK_S):
                    with self._lock:
                        self._handle(event)
                    if self._stop.is_set():
                        return
            except BoardMismatch as exc:
                with self._lock:
                    self.notice = str(exc)
                self._notify()
                return
            with self._lock:
                change = self.tracker.tick(time.monotonic())
                self._after(change)

    def _handle(self, event: BoardEvent) -> None:
        now = time.monotonic()
        if self.store:
            self.store.log("board", **event.to_dict())
        if event.type == "snapshot":
            self.tracker.observe(event.readings, now)
            self._after(Change())
        elif event.type == "square":
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
                self._after(Change(), force=True)
            else:
                self._after(self.tracker.takeback())
        elif button == "confirm":
            self._after(self.tracker.confirm())
        elif button == "resign" and self.game.position.outcome() is None and not self.resigned:
            self.resigned = self.game.position.status().to_move
            if self.store:
                self.store.headers["Resigned"] = self.resigned
            self._after(Change(), force=True)

    def _die(self, value: int, roll_id: int) -> None:
        position = self.game.position
        if position.status().awaiting != "die":
            self.notice = f"die roll {value} ignored: the game is not waiting for a roll"
            self._after(Change(), force=True)
            return
        for action in position.legal_actions():
            if getattr(action, "die", None) == value:
                self.game.push(action)
                self._after(Change(pushed=(action,)))
                return
        self.notice = f"die roll {value} is not an outcome the rules expect"
        self._after(Change(), force=True)

    def _after(self, change: Change, force: bool = False) -> None:
        """Record what changed, redraw the LEDs, tell the subscribers."""
        if change:
            self.notice = ""
            if self.store:
                self.store.log("tracker", popped=[str(a) for a in change.popped],
                               pushed=[str(a) for a in change.pushed])
                if not self.resigned:
                    self.store.headers.pop("Resigned", None)
                self.store.save(self.game)
            self._report(change)
        leds = picture(self.board, self._shown_position(), self.tracker.view,
                       last_squares=self._last_squares(), last_side=self._last_side())
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
            self.on_action("took back", "", str(action))
        pushed_from = len(positions) - 1 - len(change.pushed)
        for k, action in enumerate(change.pushed):
            before = positions[pushed_from + k]
            self.on_action("played", before.status().to_move, before.notation(action))

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
            if (not self.resigned and position.outcome() is None
                    and not position.status().awaiting):
                layout = _comparable(position.layout())
                found = [a for a in position.legal_actions()
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
            if self.store:
                self.store.log("act", action=position.notation(action))
            self._after(self.tracker.push(action))
            return action

    # ---- what the web view reads -----------------------------------------------------

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        return self._subscribers.add(callback)

    def _notify(self) -> None:
        self._subscribers.notify()

    def state(self) -> dict[str, Any]:
        with self._lock:
            position = self._shown_position()
            status = position.status()
            outcome = position.outcome()
            view = self.tracker.view
            tracker_squares = sorted(set(view.differing) | set(view.choice)
                                     | set(view.destinations))
            message = view.message or self.notice
            return {
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
                },
                "tracker": {"state": view.state, "message": message, "squares": tracker_squares},
                # Only while the board shows the game: a choice is made at a still table.
                "choices": ([{"text": self.game.position.notation(a)} for a in self.choices()]
                            if view.state == "in-sync" else []),
                "moves": self._moves(),
                "outcome": str(outcome) if outcome else None,
                "link": {"connected": self.link.connected.is_set(), "port": self.port,
                         "error": self.link.error},
                "last_die": self.last_die,
            }

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

    def _moves(self) -> list[dict[str, Any]]:
        turns: list[dict[str, Any]] = []
        positions = self.game.positions()
        side = None
        for before, action, after in zip(positions, self.game.actions, positions[1:]):
            mover = before.status().to_move
            if side != mover or not turns:
                turns.append({"number": len(turns) + 1, "side": mover, "actions": []})
                side = mover
            turns[-1]["actions"].append(before.notation(action))
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


def _comparable(layout: Any) -> dict[str, tuple[str, ...]]:
    return {square: tuple(pieces) for square, pieces in layout.items() if pieces}
