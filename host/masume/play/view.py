"""The table as the pages read it: a typed view model, JSON as it is.

:func:`table_state` builds it from a table's core (:class:`masume.play.core.TableCore`)
and what the runner knows beyond the game: the pieces on the board, the LEDs it shows,
the link and the threads' health. ``GET /api/state`` and the event stream send it as
it is; a game that hides cards narrows it to what one viewer may see
(:func:`masume.play.cards.for_viewer`, which adds ``view``).
"""

from __future__ import annotations

from typing import Any, TypedDict, cast

from masume.boards import Board
from masume.leds import highlight_led
from masume.link import Led
from masume.play.cards import DrawsMarks, for_viewer, viewer_of
from masume.play.computer import AdviceView
from masume.play.core import TableCore, written
from masume.rules.base import Legend


class CellView(TypedDict):
    name: str
    x: float
    y: float
    zone: str
    sensor: str


class BoardView(TypedDict):
    id: str
    title: str
    cells: list[CellView]
    buttons: list[str]
    die: bool
    pieces: list[str]


class LedView(TypedDict):
    rgb: list[int]
    pattern: str


class StatusView(TypedDict):
    to_move: str
    action_number: int
    actions_per_turn: int
    score: dict[str, int]
    message: str
    awaiting: str | None
    #: Who makes the choice now, when not the side to move (a kick's receiver of the
    #: other side keeps the ball or lets it run).
    deciding: str | None


class TrackerView(TypedDict):
    state: str
    message: str
    squares: list[str]


class KeyEntry(TypedDict):
    """One line of the page's key to the lights: a highlight's meaning, squares, LED,
    and both in people's words (``label``, ``places``: from the game's legend)."""

    meaning: str
    label: str
    squares: list[str]
    places: list[str]
    rgb: list[int]
    pattern: str


class Calling(TypedDict):
    word: str
    squares: list[str]


class Choice(TypedDict):
    text: str


class Turn(TypedDict):
    number: int
    side: str
    actions: list[str]


class LinkView(TypedDict):
    connected: bool
    port: str
    error: str | None
    state: str


class HealthView(TypedDict):
    table: dict[str, Any]
    link: dict[str, Any]
    problem: str | None


class TableState(TypedDict, total=False):
    """The whole picture (``view`` only in a game that hides cards)."""

    game: str
    #: Each side's colour, as the game's legend gives it (the page colours pieces by it).
    sides: dict[str, list[int]]
    #: What ``status.score`` counts, in people's words ("score", "cards left in deck").
    score_label: str
    board: BoardView
    simulated: bool
    pieces: dict[str, list[str]]
    leds: dict[str, LedView]
    status: StatusView
    tracker: TrackerView
    highlights: list[KeyEntry]
    clock: dict[str, dict[str, Any]]
    calling: Calling | None
    choices: list[Choice]
    moves: list[Turn]
    outcome: str | None
    link: LinkView
    health: HealthView
    last_die: dict[str, int] | None
    #: The computer's side, what it lit and who stands better (masume.play.computer).
    advice: AdviceView | None
    view: dict[str, Any]


def board_view(board: Board) -> BoardView:
    return {
        "id": board.id,
        "title": board.title,
        "cells": [{"name": c.name, "x": c.x, "y": c.y, "zone": c.zone, "sensor": c.sensor}
                  for c in board.cells],
        "buttons": [b.name for b in board.buttons],
        "die": board.die,
        "pieces": list(board.pieces),
    }


def table_state(core: TableCore, *, viewer: str | None, simulated: bool,
                pieces: dict[str, list[str]], leds: dict[str, Led], link: LinkView,
                health: HealthView, saving_problem: str | None,
                advice: AdviceView | None = None) -> TableState:
    """The table's state as ``viewer`` (a side, or None for a spectator) may see it.
    ``saving_problem``: why saves fail now, said before anything else."""
    position = core.shown_position()
    status = position.status()
    outcome = position.outcome()
    view = core.tracker.view
    tracker_squares = sorted(set(view.differing) | set(view.choice) | set(view.destinations))
    # A refusal (a die rolled too soon) comes first, with what the board needs.
    message = saving_problem or " — ".join(m for m in (core.notice, view.message) if m)
    choices = core.choices()
    state: TableState = {
        "game": core.rules.name,
        "sides": {side: list(rgb) for side, rgb in position.legend.sides.items()},
        "score_label": position.legend.score,
        "board": board_view(core.board),
        "simulated": simulated,
        "pieces": pieces,
        "leds": {cell: {"rgb": list(led.rgb), "pattern": led.pattern}
                 for cell, led in leds.items()},
        "status": {
            "to_move": status.to_move,
            "action_number": status.action_number,
            "actions_per_turn": status.actions_per_turn,
            "score": dict(status.score),
            "message": status.message,
            "awaiting": status.awaiting,
            "deciding": status.deciding,
        },
        "tracker": {"state": view.state, "message": message, "squares": tracker_squares},
        # What the rules light now and how (the page's key to the lights).
        "highlights": [_key_entry(meaning, squares, position.legend)
                       for meaning, squares in status.highlights.items() if squares],
        "clock": core.clock(),
        "calling": ({"word": core.calling[0], "squares": list(core.calling[1])}
                    if core.calling else None),
        # Only while the board shows the game: a choice is made at a still table.
        "choices": ([{"text": core.game.position.notation(a)} for a in choices]
                    if view.state == "in-sync" else []),
        "moves": moves(core, viewer_of(position, viewer)),
        "outcome": str(outcome) if outcome else None,
        "link": link,
        "health": health,
        "last_die": core.last_die,
        "advice": advice,
    }
    marks = (core.rules.edge_marks(core.game.position) if isinstance(core.rules, DrawsMarks)
             else None)
    seen = for_viewer(cast(dict[str, Any], state), position=core.game.position,
                      board=core.board, viewer=viewer, choices=choices, marks=marks)
    return cast(TableState, seen)


def moves(core: TableCore, viewer: str | None) -> list[Turn]:
    """The actions by turns, each written as ``viewer`` may read it."""
    turns: list[Turn] = []
    game = core.game
    positions = game.positions()
    side = None
    for before, action, after in zip(positions, game.actions, positions[1:], strict=False):
        mover = before.status().to_move
        if side != mover or not turns:
            turns.append({"number": len(turns) + 1, "side": mover, "actions": []})
            side = mover
        turns[-1]["actions"].append(written(before, action, viewer))
        if after.status().to_move != mover:
            side = None
    return turns


def _key_entry(meaning: str, squares: tuple[str, ...], legend: Legend) -> KeyEntry:
    # A side's lamps (Light(None)) in the colour of the side whose lamp comes first.
    led = highlight_led(meaning, legend, squares[0] if squares else "")
    return {"meaning": meaning, "label": legend.label(meaning), "squares": list(squares),
            "places": [legend.place(square) for square in squares], "rgb": list(led.rgb),
            "pattern": led.pattern}


__all__ = ["HealthView", "TableState", "board_view", "moves", "table_state"]
