"""Soccer Shogi (サッカーしょうぎ, by 水沢 三太 & 二三八): rules engine and notation.

The rules, each with the sentence of the source text it comes from and every
reading chosen where the text is unclear, are in docs/rules/soccer-shogi.md.

Two sides, blue and red, six players each and one ball on a 5 x 8 pitch
(A1-E8) with a goal row at each end (B0-D0 is red's goal, B9-D9 blue's). A turn
is two actions: a step (a dribble when the player holds the ball), a jump or a
chain of jumps, or a kick. Procedural actions that are not one of the two:
:class:`Take` (choosing which piece receives the ball after a sandwich),
:class:`~masume.rules.base.Restart` (after a goal: the pieces go back to the start,
the conceding side first) and :class:`Pass` (only when nothing is legal).

Modules: ``geometry`` (the board, and the steps, jumps and kicks worked out once),
``actions`` (the actions, each ``str()`` its notation), ``position`` (the rules of
play), ``notation`` (actions and positions read from text).

Usage, in the manner of python-chess::

    >>> position = RULES.start()
    >>> position.status().message
    'blue, action 1 of 2'
    >>> position = position.apply(Step("A7", "A6"))
    >>> position = position.apply(position.parse_action("A6-A5"))
    >>> position.status().to_move
    'red'
    >>> position.layout()["C5"]
    ('ball', 'blue')
    >>> position.is_legal(Step("C2", "C3"))
    True
    >>> position.parse_action("A2・B3")
    Traceback (most recent call last):
    ...
    masume.rules.base.IllegalAction: A2・B3: a jump goes over one piece to the square right ...

A chain of jumps that steals the ball, as the source's first game record notes
red could have played after C2-C3 (the ``!`` marks the steal)::

    >>> position = position.apply(position.parse_action("C2-C3"))
    >>> chain = position.parse_action("A2*C2*C4*C6*C4*C2*A2")
    >>> str(chain)
    'A2・C2・C4・C6!・C4・C2・A2'
    >>> after = position.apply(chain)
    >>> after.layout()["A2"], after.layout()["C5"]
    (('ball', 'red'), ('blue-rest',))
    >>> after.status().highlights
    {'flip': ('C5',)}
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..base import Restart, resigning
from .actions import Action, Jump, Kick, Pass, Step, Take
from .geometry import PIECE_NAMES, PITCH, SIDES, SQUARE_INDEX, SQUARE_NAMES
from .notation import impossible, parse_notation, read_text
from .position import OVER, Options, Position


class SoccerShogiRules:
    """The entry point, as ``masume.games.load_rules("soccer-shogi")`` returns it.

    >>> RULES.start(goals_to_win=3).options.goals_to_win
    3
    """

    name = "soccer-shogi"
    board = "soccer-shogi"
    Options = Options

    def start(self, first: str = "blue", **options: Any) -> Position:
        """The starting position; ``first`` moves first; ``options`` see :class:`Options`."""
        if first not in SIDES:
            raise ValueError(f"first must be blue or red, not {first!r}")
        return Position._start(SIDES.index(first), (0, 0), Options.make(**options))

    def from_text(self, text: str, **options: Any) -> Position:
        """The position written by :meth:`Position.to_text`; options given here override.

        >>> text = RULES.start(first="red").to_text()
        >>> RULES.from_text(text) == RULES.start(first="red")
        True
        """
        return read_text(text, options)

    def resign(self, position: Position, side: str) -> Position:
        """The position after ``side`` resigns.

        >>> RULES.resign(RULES.start(), "red").outcome()
        Outcome(winner='blue', reason='resignation', score={'blue': 0, 'red': 0})
        """
        return replace(position, phase=OVER, resigned=resigning(position, side), flipped=())


RULES = SoccerShogiRules()

__all__ = [
    "PIECE_NAMES",
    "PITCH",
    "RULES",
    "SQUARE_INDEX",
    "SQUARE_NAMES",
    "Action",
    "Jump",
    "Kick",
    "Options",
    "Pass",
    "Position",
    "Restart",
    "SoccerShogiRules",
    "Step",
    "Take",
    "impossible",
    "parse_notation",
]
