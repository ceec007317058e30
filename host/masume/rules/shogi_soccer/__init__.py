"""Shogi-piece soccer (サッカーのルール, seed 002): the rules engine.

Two teams of shogi pieces (goalkeeper = king, rook, bishop, two knights, six
pawns) play soccer on a 9 x 11 board with a goal mouth off 5-A and off 5-K.
Sente (先手, the first player) defends goal-K and attacks goal-A; gote (後手)
the other way round. The rules, the seed's sentences and every reading chosen
where the seed is silent are in docs/rules/shogi-soccer.md.

The game, from the empty table to the kick-off:

>>> from masume.games import load_rules
>>> from masume.rules import Game
>>> rules = load_rules("shogi-soccer")
>>> game = Game(rules.start())
>>> _ = game.push_notation("システム 3-4-3 飛歩歩-角歩歩歩-桂桂歩")
>>> for text in ("5-K王打", "5-F角打", "3-H歩打", "7-H歩打", "5-H歩打", "4-K飛打",
...              "2-K歩打", "7-K歩打", "2-C桂打", "6-C桂打", "4-C歩打"):
...     _ = game.push_notation(text)
>>> for text in ("5-AGK打", "6-ARO打", "3-APA打", "7-APA打", "4-DBI打", "2-DPA打",
...              "6-DPA打", "8-DPA打", "2-INI打", "8-INI打", "4-IPA打"):
...     _ = game.push_notation(text)
>>> game.position.status().message
'sente: kick-off pass from 5-F to a team-mate'
>>> sorted(game.position.notation(a) for a in game.legal_actions())
['2-Cパス', '3-Hパス', '7-Hパス', '先手反則', '後手反則']
>>> _ = game.push_notation("3-Hパス")
>>> _ = game.push_notation("3-G歩")
>>> game.position.layout()["3-G"]
('ball', 'sente-pawn')
>>> game.position.status().to_move
'gote'

A position can be given on one line (the ``[Position "..."]`` header of a record);
figure 6 of the seed, sente to move and win in three:

>>> p = rules.from_text("4k4/4P4/6N2/2B6/9/9/9/9/9/9/4K4 sente play 3-D - -")
>>> for text in ("5-Bパス", "同GK", "同桂"):
...     p = p.apply(p.parse_action(text)) if p.outcome() is None else p
>>> p.outcome() is not None
True
>>> str(p.outcome())
'sente wins (checkmate)'
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..base import NotationError
from .actions import Action, Declare, EndTurn, Foul, Move, Pass, Place, Shot
from .geometry import GOAL_A, GOAL_K, NAMES, SIDES
from .notation import parse_position_text, parse_system
from .position import OPTIONS, STAGES, Position, all_systems, system_problem

#: Names of the two goal-mouth cells (the board definition uses the same).
GOAL_CELLS = (NAMES[GOAL_A], NAMES[GOAL_K])
#: Piece names of ``layout()``: ``<side>-<kind>`` and ``ball``.
PIECE_NAMES = tuple(f"{s}-{k}" for s in SIDES
                    for k in ("king", "rook", "bishop", "knight", "pawn")) + ("ball",)


def _options(options: dict[str, Any]) -> dict[str, Any]:
    unknown = set(options) - set(OPTIONS)
    if unknown:
        raise ValueError(
            f"unknown shogi-soccer option(s) {', '.join(sorted(unknown))}; "
            f"options: {', '.join(OPTIONS)}"
        )
    play_out = options.get("play_out", False)
    if not isinstance(play_out, bool):
        raise ValueError("play_out is True or False")
    return {"play_out": play_out}


class ShogiSoccerRules:
    """The entry point (``masume.games.load_rules("shogi-soccer")``)."""

    name = "shogi-soccer"
    board = "shogi-soccer"
    sides = SIDES
    options = OPTIONS

    def start(self, **options: Any) -> Position:
        """The empty table, the ball on 5-F, gote to declare its system.

        Option ``play_out`` (default False): when True a checkmate does not end
        the game; the players play on until the goal or the ejection.
        """
        return Position(**_options(options))

    def from_text(self, text: str, **options: Any) -> Position:
        """The position written by ``Position.to_text``; NotationError if malformed.

        >>> RULES.from_text("4k4/9/9/9/9/9/9/9/9/9/4K4 sente play 5-A - -").ball_holder()
        '5-A'
        >>> RULES.from_text("4k4 sente play 5-A - -")
        Traceback (most recent call last):
        ...
        masume.rules.base.NotationError: the board has 11 ranks (A to K), not 1
        """
        fields = parse_position_text(text)
        return Position(**fields, **_options(options))  # type: ignore[arg-type]

    def resign(self, position: Position, side: str) -> Position:
        """The position after ``side`` resigns (投了)."""
        return self._end(position, side, "resignation")

    def foul(self, position: Position, side: str) -> Position:
        """The position after ``side`` commits a foul (反則): the other side wins."""
        return self._end(position, side, "foul")

    @staticmethod
    def _end(position: Position, side: str, reason: str) -> Position:
        if side not in SIDES:
            raise ValueError(f"side is sente or gote, not {side!r}")
        if position.outcome() is not None:
            return position
        return replace(position, result=(1 - SIDES.index(side), reason))

    def __repr__(self) -> str:
        return "RULES(shogi-soccer)"


RULES = ShogiSoccerRules()

__all__ = [
    "GOAL_CELLS",
    "PIECE_NAMES",
    "RULES",
    "STAGES",
    "Action",
    "Declare",
    "EndTurn",
    "Foul",
    "Move",
    "NotationError",
    "Pass",
    "Place",
    "Position",
    "ShogiSoccerRules",
    "Shot",
    "all_systems",
    "parse_system",
    "system_problem",
]
