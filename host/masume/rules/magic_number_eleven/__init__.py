"""MAGIC NUMBER ELEVEN (by BONGHWAN JU and OLIN JEONG): rules engine and notation.

Two teams, home and away, each place player cards on their field of 4 x 6
cells; tactic symbols complete where cards meet; shots add synergy cards'
stars to the completed shot symbols, against the defence symbols; 11 is the
wonder goal, 12 or more a line out. Every rule, with the seed sentence it comes
from and the readings chosen, is in docs/rules/magic-number-eleven.md; the card
data (a card set, ``masume.cards``) in the same page. The engine is given the set:
a ``CardSet``, or a name it reads through the loader ``masume.games.load_rules`` gives
it (``RULES`` here has none).

Modules: ``cards`` (a card set's game fields and checks), ``geometry`` (cells,
placement, completed symbols), ``actions`` (the actions), ``position`` (the rules
of play), ``notation`` (actions and positions read from and written to text).

Usage, in the manner of python-chess::

    >>> from masume.games import load_rules
    >>> from masume.rules import Game
    >>> rules = load_rules("magic-number-eleven")
    >>> game = Game(rules.start())
    >>> game.position.status().message
    'away, star draft round 1: reveal a star'
    >>> for text in ("reveal ST01", "reveal ST02", "reveal ST03", "pick ST02", "pick ST01"):
    ...     _ = game.push_notation(text)
    >>> game.position.stars, game.position.boxed
    ((('ST01',), ('ST02',)), ('ST03',))

A quicker start with the draft and the bench given as options::

    >>> position = rules.start(home_stars="ST01/ST04/ST07", away_stars="ST02/ST05/ST08",
    ...                        home_bench="H08/H09/H10", away_bench="A08/A09/A10")
    >>> sorted(position.unplaced[0])[:3], position.status().to_move
    (['H01', 'H02', 'H03'], 'home')
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..base import ReadsCardSets, resigning
from ..card_set import CardSet, CardSetError
from . import notation as _text
from .actions import (
    Action,
    Adjust,
    Bench,
    Clear,
    Done,
    Effect,
    EndTurn,
    Link,
    Penalty,
    Pick,
    Place,
    Press,
    Ready,
    Reveal,
    Shoot,
    Sub,
    Synergy,
)
from .cards import card_warnings, check_cards
from .notation import parse
from .position import (
    AWAY,
    BENCH_SIZE,
    BENCH_UP,
    HOME,
    OVER,
    SIDES,
    Options,
    Position,
    _State,
    _to_bench_phase,
)

if TYPE_CHECKING:
    from os import PathLike


class MagicNumberElevenRules(ReadsCardSets):
    """The entry point, as ``masume.games.load_rules("magic-number-eleven")`` returns it:
    given the card-set loader. ``RULES`` here has none, so it plays only a CardSet it is given.
    """

    name = "magic-number-eleven"
    board = "magic-number-eleven"
    Options = Options

    def edge_marks(self, position: Position) -> dict[str, dict[str, str]]:
        """The half symbols on the field's cards, cell by cell, for the page to draw
        (:func:`masume.rules.magic_number_eleven.marks.edge_marks`)."""
        from .marks import edge_marks

        return edge_marks(position)

    def start(self, cards: str | PathLike[str] | CardSet = "magic-number-eleven-demo",
              first: str = "home",
              shootout: bool = False, home_stars: str = "", away_stars: str = "",
              home_bench: str = "", away_bench: str = "") -> Position:
        """The position before the star draft (set-up ①-⑦ done).

        ``cards``: a shipped card set's name or a path (read through the card source),
        or a CardSet (its game checks must pass). ``first``: who starts the first half (home by the
        rules). ``shootout``: a drawn match goes to a penalty shoot-out. Given
        ``home_stars`` and ``away_stars`` (star ids separated by ``/``) the draft
        is skipped; given the benches too, the set-up.

        >>> from masume.games import load_rules
        >>> rules = load_rules("magic-number-eleven")
        >>> rules.start(first="away", home_stars="ST01/ST02/ST03",
        ...             away_stars="ST04/ST05/ST06").status().message
        'home, set-up: put a substitute on home-bench-1'
        """
        card_set = self._card_set(cards)
        problems = check_cards(card_set)
        if problems:
            raise CardSetError(f"card set {card_set.id}: " + "; ".join(problems))
        if first not in SIDES:
            raise ValueError(f"first must be home or away, not {first!r}")
        name = card_set.id if isinstance(cards, CardSet) else str(cards)
        options = Options(cards=name, first=first, shootout=bool(shootout))
        position = Position(card_set, options, deck=len(card_set.copies("synergy")))
        if home_stars or away_stars:
            position = _given_draft(position, home_stars, away_stars)
        if home_bench or away_bench:
            if position.phase != BENCH_UP:
                raise ValueError("the benches need the stars (home_stars, away_stars) too")
            for side, text in ((HOME, home_bench), (AWAY, away_bench)):
                for copy_id in _ids(text, BENCH_SIZE, f"{SIDES[side]}_bench"):
                    if copy_id not in position.unplaced[side]:
                        raise ValueError(f"{SIDES[side]}_bench: {copy_id} is not one of "
                                         f"{SIDES[side]}'s 13 players")
                    position = position.apply(Bench(copy_id))
        return position

    def from_text(self, text: str, **options: Any) -> Position:
        """The position written by :meth:`Position.to_text`; options given here override.

        >>> from masume.games import load_rules
        >>> rules = load_rules("magic-number-eleven")
        >>> rules.from_text(rules.start(first="away").to_text()).options.first
        'away'
        """
        return _text.read(text, options, self._card_set)

    def resign(self, position: Position, side: str) -> Position:
        """The position after ``side`` resigns.

        >>> from masume.games import load_rules
        >>> rules = load_rules("magic-number-eleven")
        >>> rules.resign(rules.start(), "away").outcome().winner
        'home'
        """
        return replace(position, phase=OVER, resigned=resigning(position, side))

    def check_cards(self, card_set: CardSet) -> list[str]:
        """The game's checks of a card set (see :func:`cards.check_cards`)."""
        return check_cards(card_set)

    def card_warnings(self, card_set: CardSet) -> list[str]:
        """Counts that differ from the published set (see :func:`cards.card_warnings`)."""
        return card_warnings(card_set)


def _ids(text: str, count: int, what: str) -> tuple[str, ...]:
    ids = tuple(i.strip().upper() for i in str(text).replace(",", "/").split("/") if i.strip())
    if len(ids) != count or len(set(ids)) != count:
        raise ValueError(f"{what}: give {count} different card ids separated by /, not {text!r}")
    return ids


def _given_draft(position: Position, home: str, away: str) -> Position:
    """The draft's result given as options: three stars each."""
    stars = (_ids(home, 3, "home_stars"), _ids(away, 3, "away_stars"))
    known = {c.id for c in position.cards.copies("player") if c.card.get("team") == "star"}
    for side, chosen in zip(SIDES, stars):
        for copy_id in chosen:
            if copy_id not in known:
                raise ValueError(f"{side}_stars: {copy_id} is not a star player")
    if set(stars[0]) & set(stars[1]):
        raise ValueError("a star cannot play for both teams")
    s = _State(position)
    s.stars = stars
    left = sorted(known - set(stars[0]) - set(stars[1]))
    s.boxed = tuple(left[:3])
    _to_bench_phase(s)
    return s.now()


RULES = MagicNumberElevenRules()

__all__ = [
    "RULES",
    "Action",
    "Adjust",
    "Bench",
    "Clear",
    "Done",
    "Effect",
    "EndTurn",
    "Link",
    "MagicNumberElevenRules",
    "Options",
    "Penalty",
    "Pick",
    "Place",
    "Position",
    "Press",
    "Ready",
    "Reveal",
    "Shoot",
    "Sub",
    "Synergy",
    "check_cards",
    "parse",
]
