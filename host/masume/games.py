"""The games masume knows, each ready to play (layer 2, with the board definitions
and the card sets).

A game is a package of ``masume.rules`` (``magic_number_eleven`` is the game
"magic-number-eleven") whose ``RULES`` is its entry point: adding the package (and
its board file) adds the game; nothing here names one. A card game's rules
(:class:`masume.rules.CardRules`) are given the one card-set loader,
:func:`masume.cards.load_card_set`, so that the sets options, records and
positions name are read the one way, with the one cache.

>>> sorted(GAMES)[:2]
['eyeshield21', 'magic-number-eleven']
>>> load_rules("magic-number-eleven").start().card_set.id
'magic-number-eleven-demo'
>>> load_rules("chess")
Traceback (most recent call last):
...
ValueError: unknown game 'chess'; known games: eyeshield21, magic-number-eleven, ...
"""

from __future__ import annotations

import importlib
import pkgutil

import masume.rules
from masume.cards import load_card_set
from masume.rules.base import CardRules, Rules


def _discover() -> dict[str, str]:
    """Game name -> the module that defines its ``RULES``: every package of masume.rules."""
    return {info.name.replace("_", "-"): f"masume.rules.{info.name}"
            for info in pkgutil.iter_modules(masume.rules.__path__) if info.ispkg}


#: Game name -> module that defines ``RULES`` (tests add games of their own to it).
GAMES: dict[str, str] = _discover()

#: Each engine's RULES -> the same rules given the card-set loader (a card game's).
_READY: dict[Rules, Rules] = {}


def load_rules(name: str) -> Rules:
    """The rules of the game called ``name``, ready to play; ValueError names the
    known games. The same object each time."""
    try:
        module = GAMES[name]
    except KeyError:
        known = ", ".join(sorted(GAMES))
        raise ValueError(f"unknown game {name!r}; known games: {known}") from None
    rules: Rules = importlib.import_module(module).RULES
    ready = _READY.get(rules)
    if ready is None:
        ready = rules.with_card_source(load_card_set) if isinstance(rules, CardRules) else rules
        _READY[rules] = ready
    return ready


__all__ = ["GAMES", "load_rules"]
