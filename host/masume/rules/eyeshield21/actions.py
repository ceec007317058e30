"""Eyeshield 21 TCG actions and their notation.

Four kinds, each a frozen value whose ``str`` is its notation:

- :class:`Place` ``COPY@CELL``: a card from an unseen pool (the hand; the deck at
  set-up) or a ball card from beside the mat is laid on a cell;
- :class:`Move` ``CELL>CELL`` or ``CELL>discard|hand|off``: a card on the mat moves,
  or leaves it (to the discard pile, back to the hand, off the mat for a ball card);
- :class:`Use` ``use CELL`` (``use CELL>BENCH`` when the character goes to the bench
  for it): a character's ability, a tactics card, a reaction turned face up;
- :class:`Call` ``WORD`` or ``WORD N``: what no sensor sees (deal, reveal, draw,
  guts, buy, attack, ready, done, refill N, damage N, discard N);
- :class:`Adjust` ``adjust SIDE power +N``, ``adjust SIDE draw N``, ``adjust discard
  COPY``, ``adjust move CELL>CELL``: what a card's by-hand ability does, applied by the
  players while the card lies face up (docs/cards.md, "By hand").

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
    """The card on ``cell`` is used; a character paying with the bench goes to ``bench``;
    ``ability``: which of the card's abilities in the vocabulary (``use CELL#2``).

    >>> str(Use("home-pass-3", ability=2))
    'use home-pass-3#2'
    """

    cell: str
    bench: str = ""
    ability: int = 1

    def __str__(self) -> str:
        number = f"#{self.ability}" if self.ability != 1 else ""
        return f"use {self.cell}{number}" + (f">{self.bench}" if self.bench else "")


#: What an adjustment changes.
ADJUSTMENTS = ("power", "draw", "discard", "move")


@dataclass(frozen=True)
class Adjust:
    """A by-hand ability's effect, applied by the players and recorded: ``power`` (+N or
    -N to ``side``'s power in this attack), ``draw`` (``side`` draws N), ``discard`` (the
    copy ``card``, from the mat or its owner's hand, to the discard pile), ``move`` (the
    card on ``card``, a cell, to the cell ``to``).

    >>> str(Adjust("power", "home", -2)), str(Adjust("move", card="home-pass-1", to="home-bench-1"))
    ('adjust home power -2', 'adjust move home-pass-1>home-bench-1')
    """

    what: str
    side: str = ""
    amount: int = 0
    card: str = ""
    to: str = ""

    def __str__(self) -> str:
        if self.what == "power":
            return f"adjust {self.side} power {self.amount:+d}"
        if self.what == "draw":
            return f"adjust {self.side} draw {self.amount}"
        if self.what == "discard":
            return f"adjust discard {self.card}"
        return f"adjust move {self.card}>{self.to}"


@dataclass(frozen=True)
class Call:
    """A declaration no sensor sees, with a count for refill, damage and discard."""

    word: str
    count: int | None = None

    def __str__(self) -> str:
        return self.word if self.count is None else f"{self.word} {self.count}"


Action = Place | Move | Use | Call | Adjust
