"""The mat's cells (names as in hardware/boards/eyeshield21.toml) and the cards in play.

>>> character_cells("home")[0], area_cells("away", "run")[-1], ball_cell("home", "pass")
('home-character-1', 'away-run-7', 'home-pass-ball')
>>> owner_of("away-bench-2")
'away'
>>> table = make_table("eyeshield21-demo", "", "")
>>> table.deck_ids
('falcons', 'sharks')
>>> table.owner("F01.1"), table.owner("B1.2"), table.card("S02.1").name
('home', 'away', 'Fujii')
"""

from __future__ import annotations

from functools import lru_cache

from masume.cards import Card, CardSet

from .cards import Deck, check_cards, deck_lists, deck_problems, resolve_cards

SIDES: tuple[str, str] = ("home", "away")
HOME, AWAY = 0, 1
AREAS: tuple[str, str] = ("pass", "run")
#: Places per side: characters (the limit of 5), bench, reactions (the limit of 2),
#: and the places of each play area besides the ball card's.
CHARACTER_PLACES, BENCH_PLACES, REACTION_PLACES, AREA_PLACES = 5, 3, 2, 7


def character_cells(side: str) -> tuple[str, ...]:
    return tuple(f"{side}-character-{n}" for n in range(1, CHARACTER_PLACES + 1))


def bench_cells(side: str) -> tuple[str, ...]:
    return tuple(f"{side}-bench-{n}" for n in range(1, BENCH_PLACES + 1))


def reaction_cells(side: str) -> tuple[str, ...]:
    return tuple(f"{side}-reaction-{n}" for n in range(1, REACTION_PLACES + 1))


def area_cells(side: str, area: str) -> tuple[str, ...]:
    """The side's half of a play area, without the ball card's place."""
    return tuple(f"{side}-{area}-{n}" for n in range(1, AREA_PLACES + 1))


def ball_cell(side: str, area: str) -> str:
    return f"{side}-{area}-ball"


def half_cells(side: str, area: str) -> tuple[str, ...]:
    """Every place of the side's half of a play area, the ball card's included."""
    return (ball_cell(side, area),) + area_cells(side, area)


def pile_cell(side: str, pile: str) -> str:
    """``deck``, ``guts`` or ``discard``: one place, a pile the reader sees as a card."""
    return f"{side}-{pile}"


def owner_of(cell: str) -> str:
    return cell.split("-", 1)[0]


def area_of(cell: str) -> str:
    """``pass`` or ``run`` for a play-area cell, else ''."""
    parts = cell.split("-")
    return parts[1] if len(parts) >= 2 and parts[1] in AREAS else ""


ALL_CELLS: frozenset[str] = frozenset(
    cell
    for side in SIDES
    for cell in (character_cells(side) + bench_cells(side) + reaction_cells(side)
                 + half_cells(side, "pass") + half_cells(side, "run")
                 + tuple(pile_cell(side, p) for p in ("deck", "guts", "discard")))
)


class Table:
    """A card set and the two decks in play: who owns which copy, and what it is.

    Positions hold one; two tables are equal when the set and the decks are.
    """

    def __init__(self, card_set: CardSet, decks: tuple[Deck, Deck], name: str) -> None:
        self.card_set = card_set
        self.decks = decks
        self.deck_ids = (decks[0].id, decks[1].id)
        #: How positions write the set (a shipped set's name, or a path).
        self.name = name
        self._owner: dict[str, int] = {}
        for side, deck in enumerate(decks):
            for copy in deck.copies + deck.balls:
                self._owner[copy] = side
        self.deck_sets = (frozenset(decks[0].copies), frozenset(decks[1].copies))
        self._key = (card_set, self.deck_ids)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Table) and other._key == self._key

    def __hash__(self) -> int:
        return hash(self._key)

    def owner(self, copy: str) -> str:
        return SIDES[self._owner[copy]]

    def owner_index(self, copy: str) -> int:
        return self._owner[copy]

    def owns(self, copy: str) -> bool:
        return copy in self._owner

    def card(self, copy: str) -> Card:
        return self.card_set.copy(copy).card

    def piece(self, copy: str) -> str:
        return self.card_set.copy(copy).piece

    def kind(self, copy: str) -> str:
        return self.card(copy).kind

    def balls(self, side: int) -> tuple[str, str]:
        """The side's ball pair: (with the ball mark, without)."""
        return self.decks[side].balls


def make_table(cards: str | CardSet, deck_home: str, deck_away: str) -> Table:
    """The table for a card set (name, path or CardSet) and two deck lists ('' = default).

    ValueError says what is wrong (unknown deck, a set that fails the game's checks).
    """
    card_set = resolve_cards(cards)
    name = cards if isinstance(cards, str) else (str(card_set.path) if card_set.path else card_set.id)
    return _table(card_set, name, deck_home, deck_away)


@lru_cache(maxsize=16)
def _table(card_set: CardSet, name: str, deck_home: str, deck_away: str) -> Table:
    problems: list[str] = []
    decks = deck_lists(card_set, problems)
    ids = list(decks)
    chosen = (deck_home or (ids[0] if ids else ""), deck_away or (ids[1] if len(ids) > 1 else ""))
    for side, deck_id in zip(SIDES, chosen):
        if deck_id not in decks:
            known = ", ".join(ids) or "none"
            raise ValueError(f"no deck list {deck_id!r} for {side} in card set {card_set.id} (deck lists: {known})")
    if chosen[0] == chosen[1]:
        raise ValueError(f"both sides cannot play deck {chosen[0]!r}: each physical card belongs to one deck")
    pair = (decks[chosen[0]], decks[chosen[1]])
    shared = (set(pair[0].copies) | set(pair[0].balls)) & (set(pair[1].copies) | set(pair[1].balls))
    if shared:
        raise ValueError(f"decks {chosen[0]} and {chosen[1]} share {', '.join(sorted(shared))}")
    card_problems = [p for p in check_cards(card_set) if not p.startswith("deck ")]
    for deck in pair:
        card_problems += deck_problems(card_set, deck)
    card_problems += [p for p in problems if p.startswith(tuple(f"deck {d}:" for d in chosen))]
    if card_problems:
        raise ValueError(f"card set {card_set.id}: " + "; ".join(card_problems))
    return Table(card_set, pair, name)
