"""Eyeshield 21 TCG actions and their notation.

Four kinds, each a frozen value whose ``str`` is its notation:

- :class:`Place` ``COPY@CELL``: a card from an unseen pool (the hand; the deck at
  set-up) or a ball card from beside the mat is laid on a cell;
- :class:`Move` ``CELL>CELL`` or ``CELL>discard|hand|off``: a card on the mat moves,
  or leaves it (to the discard pile, back to the hand, off the mat for a ball card);
- :class:`Use` ``use CELL`` (``use CELL>BENCH`` when the character goes to the bench
  for it): a character's ability, a tactics card, a reaction turned face up;
- :class:`Call` ``WORD`` or ``WORD N``: what no sensor sees (deal, reveal, draw,
  guts, buy, attack, ready, done, refill N, damage N, discard N).

>>> parse_notation("F01.2@home-character-1")
Place(copy='F01.2', cell='home-character-1')
>>> str(parse_notation(" home-character-1 > home-pass-3 "))
'home-character-1>home-pass-3'
>>> parse_notation("use home-character-2>home-bench-1")
Use(cell='home-character-2', bench='home-bench-1')
>>> str(parse_notation("Damage 3")), str(parse_notation("ready"))
('damage 3', 'ready')
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

from ..base import NotationError

#: Calls without a count, and those with one.
WORDS = ("deal", "reveal", "draw", "guts", "buy", "attack", "ready", "done")
COUNTED = ("refill", "damage", "discard")
#: Where a card goes when it leaves the mat.
OFF_MAT = ("discard", "hand", "off")


@dataclass(frozen=True)
class Place:
    """A card from an unseen pool (or a ball card) laid on ``cell``."""

    copy: str
    cell: str

    def __str__(self) -> str:
        return f"{self.copy}@{self.cell}"


@dataclass(frozen=True)
class Move:
    """A card on ``frm`` moves to the cell ``to``, or leaves the mat (discard, hand, off)."""

    frm: str
    to: str

    def __str__(self) -> str:
        return f"{self.frm}>{self.to}"


@dataclass(frozen=True)
class Use:
    """The card on ``cell`` is used; a character paying with the bench goes to ``bench``."""

    cell: str
    bench: str = ""

    def __str__(self) -> str:
        return f"use {self.cell}" + (f">{self.bench}" if self.bench else "")


@dataclass(frozen=True)
class Call:
    """A declaration no sensor sees, with a count for refill, damage and discard."""

    word: str
    count: int | None = None

    def __str__(self) -> str:
        return self.word if self.count is None else f"{self.word} {self.count}"


Action = Union[Place, Move, Use, Call]

_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]*"
_PLACE = re.compile(rf"^({_NAME})\s*@\s*({_NAME})$")
_MOVE = re.compile(rf"^({_NAME})\s*>\s*({_NAME})$")
_USE = re.compile(rf"^use\s+({_NAME})(?:\s*>\s*({_NAME}))?$", re.IGNORECASE)
_CALL = re.compile(r"^([a-z]+)(?:\s+(\d+))?$", re.IGNORECASE)
HELP = "(F01.2@home-character-1, home-character-1>home-pass-3, home-pass-3>hand, use home-pass-3, draw, refill 2)"


def parse_notation(text: str) -> Action:
    """An action from its notation, without a position (legality is the position's).

    >>> parse_notation("pass home")
    Traceback (most recent call last):
    ...
    masume.rules.base.NotationError: 'pass home' is not eyeshield21 notation (F01.2@home-character-1, home-character-1>home-pass-3, home-pass-3>hand, use home-pass-3, draw, refill 2)
    """
    if not isinstance(text, str):
        raise NotationError(f"{text!r} is not text")
    normal = text.strip()
    if not normal:
        raise NotationError("empty action")
    if match := _USE.match(normal):
        return Use(match.group(1), match.group(2) or "")
    if match := _PLACE.match(normal):
        return Place(match.group(1), match.group(2))
    if match := _MOVE.match(normal):
        to = match.group(2)
        return Move(match.group(1), to.lower() if to.lower() in OFF_MAT else to)
    if match := _CALL.match(normal):
        word, count = match.group(1).lower(), match.group(2)
        if word in WORDS and count is None:
            return Call(word)
        if word in COUNTED and count is not None:
            return Call(word, int(count))
        if word in COUNTED:
            raise NotationError(f"{normal!r}: {word} needs a number ({word} 2)")
    raise NotationError(f"{normal!r} is not eyeshield21 notation {HELP}")
