"""Masume Soccer Tactics (リアルに迫れ! マス目サッカー TACTICS, Office Verymuch): rules engine.

The rules, each with the sentence of the source text (seed 000) it comes from and
every reading chosen where the text or a lost figure leaves a gap, are in
docs/rules/masume-tactics.md. The table is hardware/boards/masume-tactics.toml.

Two sides, ``home`` (defends the goal F0-H0 at the bottom, attacks F17-H17) and
``away``, eleven players each (shirt 1 is the goalkeeper) and one ball on an
11 x 16 pitch B1-L16. Files A and M lie outside the touchlines. The side with
the ball (the offence) has 2 actions a turn, the other side (the defence) 3.

Every die roll is a chance action :class:`Roll` (``roll.die`` is 1-6): when the
rules wait for the die, ``status().awaiting == "die"`` and the legal actions are
the six outcomes. The host never rolls; the board's electronic die does.

Modules: ``geometry`` (the pitch, areas, spots, directions, the formation),
``actions`` (the actions), ``cards`` (specialist cards: a card set's fields and
checks; the rules are given the set, as ``card_set`` names it, through the loader
``masume.games.load_rules`` gives them), ``position`` (options and the rules of play),
``notation`` (actions and positions read from text).

Usage, in the manner of python-chess::

    >>> position = RULES.start()
    >>> position.status().message
    'home, offence, action 1 of 2: kick-off by home-9 on G8'
    >>> position.layout()["G8"]
    ('ball', 'home-9')
    >>> position = position.apply(position.parse_action("G8 inside SW2"))
    >>> position.layout()["E6"]
    ('ball', 'home-8')
    >>> position = position.apply(position.parse_action("keep"))
    >>> position.status().message
    'home, offence, action 2 of 2'
    >>> position = position.apply(position.parse_action("E6 ground N"))
    >>> position.status().awaiting
    'die'
    >>> position.status().highlights["line"][:3]
    ('E7', 'E8', 'E9')
    >>> sorted(action.die for action in position.legal_actions())
    [1, 2, 3, 4, 5, 6]
    >>> position = position.apply(Roll(3))
    >>> position.status().highlights["path"]
    ('E7', 'E8', 'E9')
    >>> position.layout()["E9"]
    ('ball',)
    >>> position.status().to_move
    'away'
    >>> position.parse_action("G8-G9")
    Traceback (most recent call last):
    ...
    masume.rules.base.IllegalAction: G8-G9: there is no away player on G8
"""


from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..base import ReadsCardSets, Restart, Roll, resigning
from ..card_set import CardSet
from .actions import Action, Charge, Choice, Kick, Move, Pass, Setup, Timeout, Whistle
from .cards import card_warnings, check_cards
from .geometry import (
    CENTRE_MARK,
    GAME,
    PIECE_NAMES,
    PITCH,
    SIDES,
    SQUARE_INDEX,
    SQUARE_NAMES,
    TOUCH,
    _formation,
)
from .notation import impossible, parse_notation, read_text
from .position import Options, Position


class MasumeTacticsRules(ReadsCardSets):
    """The entry point, as ``masume.games.load_rules("masume-tactics")`` returns it:
    given the card-set loader, for the specialist cards. ``RULES`` here has none: it
    plays without specialist cards.

    >>> RULES.start(rules="beginner").status().actions_per_turn
    1
    """

    name = GAME
    board = "masume-tactics"
    Options = Options


    def start(self, first: str = "home", **options: Any) -> Position:
        """The kick-off: ``first`` kicks off; ``options`` see :class:`Options`."""
        if first not in SIDES:
            raise ValueError(f"first must be home or away, not {first!r}")
        side = SIDES.index(first)
        made = Options.make(self._cards, **options)
        return Position(_formation(side), CENTRE_MARK[side], offence=side, to_move=side,
                        must_kick=side * 11 + 8, restart="kickoff", kicked_off=side, options=made,
                        pending=("lineup", side, "k", 0) if made.lineup else ())

    def from_text(self, text: str, **options: Any) -> Position:
        """The position written by :meth:`Position.to_text`; options given here override."""
        return read_text(text, options, self._cards)

    def check_cards(self, card_set: CardSet) -> list[str]:
        """The game's checks of a specialist card set (see :func:`check_cards`)."""
        return check_cards(card_set)

    def card_warnings(self, card_set: CardSet) -> list[str]:
        """Card fields the game does not read (see :func:`cards.card_warnings`)."""
        return card_warnings(card_set)

    def resign(self, position: Position, side: str) -> Position:
        """The position after ``side`` resigns.

        >>> RULES.resign(RULES.start(), "away").outcome().winner
        'home'
        """
        return replace(position, over="resignation", resigned=resigning(position, side),
                       pending=())


RULES = MasumeTacticsRules()

__all__ = [
    "PIECE_NAMES", "PITCH", "RULES", "SQUARE_INDEX", "SQUARE_NAMES", "TOUCH",
    "Action", "Charge", "Choice", "Kick", "MasumeTacticsRules", "Move", "Options", "Pass",
    "Position", "Restart", "Roll", "Setup", "Timeout", "Whistle", "check_cards", "impossible",
    "parse_notation",
]
