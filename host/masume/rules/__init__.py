"""Rules engines, one package per game, all following :mod:`masume.rules.base`.

Each game is a package here (``masume.rules.soccer_shogi`` is "soccer-shogi")
whose ``RULES`` is its entry point. The engines are layer 1: pure, they import
nothing above this package and open no file. The games ready to play, a card
game's rules given the card-set loader, are :func:`masume.games.load_rules`.

>>> from masume.games import load_rules
>>> rules = load_rules("soccer-shogi")
>>> rules.start().status().to_move
'blue'
"""

from __future__ import annotations

from .base import (
    AnyPosition,
    CardRules,
    CardSource,
    Game,
    HidesInformation,
    IllegalAction,
    KeepsPieces,
    KnowsFootprints,
    Legend,
    Light,
    NotationError,
    OnCards,
    Outcome,
    Position,
    Roll,
    Rules,
    SamplesUnseen,
    Status,
    WarnsOfCards,
)

__all__ = [
    "AnyPosition",
    "CardRules",
    "CardSource",
    "Game",
    "HidesInformation",
    "IllegalAction",
    "KeepsPieces",
    "KnowsFootprints",
    "Legend",
    "Light",
    "NotationError",
    "OnCards",
    "Outcome",
    "Position",
    "Roll",
    "Rules",
    "SamplesUnseen",
    "Status",
    "WarnsOfCards",
]
