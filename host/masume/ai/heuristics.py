"""What the players know of a game beyond its rules: where a playout stopped early
stands (the score, and a lean: the ball, the initiative), how long a playout is, which
actions to try first (``EAGER``), and which are declarations no player chooses
(``DECLARATIONS``).

Only where random playouts alone see too little (docs/ai.md): goals are rare among
random actions, so an unfinished playout is judged by a lean as well as by the
score: in Soccer Shogi the ball's row, in Masume Soccer Tactics the ball's row and who
keeps it, in Magic Number Eleven the initiative marker.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from masume.rules.base import AnyPosition
from masume.rules.eyeshield21.actions import Adjust as Eyeshield21Adjust
from masume.rules.magic_number_eleven.actions import Adjust as MagicNumberElevenAdjust
from masume.rules.magic_number_eleven.position import MIDDLE
from masume.rules.magic_number_eleven.position import Position as MagicNumberEleven
from masume.rules.masume_tactics.actions import Charge, Kick, Timeout, Whistle
from masume.rules.shogi_soccer.actions import Foul

#: A leaf's value for each side, in [0, 1].
Evaluation = Callable[[AnyPosition], Mapping[str, float]]

#: Actions a playout plays at most before it is judged.
PLAYOUT_DEPTH = 40
#: Shorter where the engine is slow for the time a move has (Magic Number Eleven: some
#: 2 ms an action mid-game, 3 iterations in 0.2 s at 40) and a lean judges the rest.
PLAYOUT_DEPTHS: Mapping[str, int] = {"masume-tactics": 8, "soccer-shogi": 12,
                                     "magic-number-eleven": 10}

_ROW = re.compile(r"[A-Z](\d+)$")


def ball_advance(last_row: int) -> Callable[[AnyPosition], float]:
    """The ball's row on a pitch of rows 0 to ``last_row``, from -1 (row 0) to 1."""

    def measure(position: AnyPosition) -> float:
        for square, stack in position.layout().items():
            if "ball" in stack:
                found = _ROW.match(square)
                return 2 * int(found.group(1)) / last_row - 1 if found else 0.0
        return 0.0

    return measure


def ball_advance_and_keeping(last_row: int, side: str) -> Callable[[AnyPosition], float]:
    """:func:`ball_advance` 0.6, and 0.4 for ``side`` keeping the ball (a piece of
    ``side`` on it; -0.4 for the other side's)."""
    advance = ball_advance(last_row)

    def measure(position: AnyPosition) -> float:
        keeping = 0.0
        for stack in position.layout().values():
            if "ball" in stack:
                keeper = next((piece for piece in stack if piece != "ball"), "")
                keeping = 0.0 if not keeper else 1.0 if keeper.startswith(side) else -1.0
        return 0.6 * advance(position) + 0.4 * keeping

    return measure


def initiative(position: AnyPosition) -> float:
    """Magic Number Eleven's initiative marker, from -1 (space 1, home's end) to 1."""
    assert isinstance(position, MagicNumberEleven)
    return (position.initiative - MIDDLE) / (MIDDLE - 1)


@dataclass(frozen=True)
class Lean:
    """Who stands better beside the score: ``measure`` from -1 to 1 in favour of ``side``."""

    side: str
    measure: Callable[[AnyPosition], float]


#: The games' leans (from their diagrams: Soccer Shogi's blue goal is row 9, Masume
#: Soccer Tactics' home goal row 0; Magic Number Eleven's initiative space 7 is home's
#: attacking end).
LEANS: Mapping[str, Lean] = {
    "masume-tactics": Lean("home", ball_advance_and_keeping(17, "home")),
    "soccer-shogi": Lean("red", ball_advance(9)),
    "magic-number-eleven": Lean("home", initiative),
}

#: How much the lean at its end counts, against a goal's 1.
LEAN_WEIGHT = 0.3


def score_lead(position: AnyPosition, side: str) -> int:
    score = position.status().score
    return 2 * score.get(side, 0) - sum(score.values())  # own minus the other's


def outcome_values(position: AnyPosition) -> Mapping[str, float] | None:
    outcome = position.outcome()
    if outcome is None:
        return None
    return {side: 0.5 if outcome.winner is None else float(side == outcome.winner)
            for side in position.sides}


def by_score(position: AnyPosition) -> Mapping[str, float]:
    """The outcome once the game is over, else the score's lead, squeezed (a goal
    ahead is worth about 0.73)."""
    over = outcome_values(position)
    if over is not None:
        return over
    return {side: 0.5 + 0.5 * math.tanh(score_lead(position, side) / 2)
            for side in position.sides}


def by_score_and_lean(lean: Lean) -> Evaluation:
    """:func:`by_score`, the game's lean added."""

    def evaluate(position: AnyPosition) -> Mapping[str, float]:
        over = outcome_values(position)
        if over is not None:
            return over
        measure = lean.measure(position)
        out = {}
        for side in position.sides:
            towards = measure if side == lean.side else -measure
            out[side] = 0.5 + 0.5 * math.tanh((score_lead(position, side)
                                               + LEAN_WEIGHT * towards) / 2)
        return out

    return evaluate


#: Actions the search tries first and a playout plays one time in two when it can: in
#: Masume Soccer Tactics the ball moves only by kicks and changes sides only by charges,
#: among some fifty steps of players a turn (the search tries a few dozen a move).
EAGER: Mapping[str, tuple[type, ...]] = {"masume-tactics": (Kick, Charge)}


def eager(game: str) -> tuple[type, ...]:
    return EAGER.get(game, ())


#: Actions that record what the players declare or the table does, not moves: a player
#: (the computer, and the benchmark's random player) never chooses them, nor does a
#: playout. Shogi-piece soccer's foul, declared by the players, ends the game (a search
#: that may declare one declares the other side's and wins at once); the card games'
#: by-hand adjustments apply what a card's text says, in any amount; the table's
#: whistle and turn timeout. The players still record them on the page.
DECLARATIONS: Mapping[str, tuple[type, ...]] = {
    "shogi-soccer": (Foul,),
    "eyeshield21": (Eyeshield21Adjust,),
    "magic-number-eleven": (MagicNumberElevenAdjust,),
    "masume-tactics": (Whistle, Timeout),
}


def playable(position: AnyPosition) -> list[Any]:
    """The legal actions a player chooses among: all but the game's declarations (all,
    if nothing else is legal)."""
    actions = list(position.legal_actions())
    declared = DECLARATIONS.get(position.game)
    if not declared:
        return actions
    moves = [action for action in actions if not isinstance(action, declared)]
    return moves or actions


def evaluation(game: str) -> Evaluation:
    """The leaf evaluation of ``game``."""
    lean = LEANS.get(game)
    return by_score if lean is None else by_score_and_lean(lean)


def playout_depth(game: str) -> int:
    return PLAYOUT_DEPTHS.get(game, PLAYOUT_DEPTH)
