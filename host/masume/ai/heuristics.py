"""What the search knows of a game beyond its rules: where a playout stopped early
stands (the score, and in the soccer games the ball), and how long a playout is.

Only where random playouts alone see too little (docs/ai.md): in Masume Soccer
Tactics and Soccer Shogi goals are rare among random actions, so an unfinished
playout is judged by the ball's row as well as by the score.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from masume.rules.base import AnyPosition
from masume.rules.masume_tactics.actions import Charge, Kick

#: A leaf's value for each side, in [0, 1].
Evaluation = Callable[[AnyPosition], Mapping[str, float]]

#: Actions a playout plays at most before it is judged (and a game's own length).
PLAYOUT_DEPTH = 40
PLAYOUT_DEPTHS: Mapping[str, int] = {"masume-tactics": 8, "soccer-shogi": 12}

_ROW = re.compile(r"[A-Z](\d+)$")


@dataclass(frozen=True)
class Pitch:
    """A soccer game's rows, 0 to ``last``, and the side attacking towards ``last``."""

    last: int
    attacks_up: str

    def ball_row(self, position: AnyPosition) -> int | None:
        for square, stack in position.layout().items():
            if "ball" in stack:
                found = _ROW.match(square)
                return int(found.group(1)) if found else None
        return None


#: The soccer games' pitches (the diagrams of their positions: Soccer Shogi's blue goal
#: is row 9, Masume Soccer Tactics' home goal row 0).
PITCHES: Mapping[str, Pitch] = {
    "masume-tactics": Pitch(17, "home"),
    "soccer-shogi": Pitch(9, "red"),
}

#: How much the ball at the other side's goal line counts, against a goal's 1.
BALL_WEIGHT = 0.3


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


def by_score_and_ball(pitch: Pitch) -> Evaluation:
    """:func:`by_score`, the ball's advance towards the other side's goal added."""

    def evaluate(position: AnyPosition) -> Mapping[str, float]:
        over = outcome_values(position)
        if over is not None:
            return over
        row = pitch.ball_row(position)
        up = 0.0 if row is None else 2 * row / pitch.last - 1  # -1 .. 1 towards ``last``
        out = {}
        for side in position.sides:
            advance = up if side == pitch.attacks_up else -up
            out[side] = 0.5 + 0.5 * math.tanh((score_lead(position, side)
                                               + BALL_WEIGHT * advance) / 2)
        return out

    return evaluate


#: Actions the search tries first and a playout plays one time in two when it can: in
#: Masume Soccer Tactics the ball moves only by kicks and changes sides only by charges,
#: among some fifty steps of players a turn (the search tries a few dozen a move).
EAGER: Mapping[str, tuple[type, ...]] = {"masume-tactics": (Kick, Charge)}


def eager(game: str) -> tuple[type, ...]:
    return EAGER.get(game, ())


def evaluation(game: str) -> Evaluation:
    """The leaf evaluation of ``game``."""
    pitch = PITCHES.get(game)
    return by_score if pitch is None else by_score_and_ball(pitch)


def playout_depth(game: str) -> int:
    return PLAYOUT_DEPTHS.get(game, PLAYOUT_DEPTH)
