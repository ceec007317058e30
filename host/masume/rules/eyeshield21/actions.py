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

>>> str(Place("F01.2", "home-character-1")), str(Use("home-character-2", "home-bench-1"))
('F01.2@home-character-1', 'use home-character-2>home-bench-1')
"""

from __future__ import annotations

from dataclasses import dataclass

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


Action = Place | Move | Use | Call
