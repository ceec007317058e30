"""Rules engines, one module per game, all following :mod:`masume.rules.base`.

>>> rules = load_rules("soccer-shogi")
>>> rules.start().status().to_move
'blue'
"""

from __future__ import annotations

import importlib

from .base import Game, IllegalAction, NotationError, Outcome, Position, Rules, Status

#: Game name -> module that defines ``RULES``. The one place a game is registered.
GAMES: dict[str, str] = {
    "soccer-shogi": "masume.rules.soccer_shogi",
    "shogi-soccer": "masume.rules.shogi_soccer",
    "masume-tactics": "masume.rules.masume_tactics",
    "magic-number-eleven": "masume.rules.magic_number_eleven",
    "eyeshield21": "masume.rules.eyeshield21",
}


def load_rules(name: str) -> Rules:
    """The rules of the game called ``name``; ValueError names the known games."""
    try:
        module = GAMES[name]
    except KeyError:
        known = ", ".join(sorted(GAMES))
        raise ValueError(f"unknown game {name!r}; known games: {known}") from None
    return importlib.import_module(module).RULES


__all__ = [
    "GAMES",
    "Game",
    "IllegalAction",
    "NotationError",
    "Outcome",
    "Position",
    "Rules",
    "Status",
    "load_rules",
]
