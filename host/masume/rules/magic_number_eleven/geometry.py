"""The field (フィールド): cells, where a player card may lie, and the completed symbols.

Each team's field is four rows of six cells, named from the front as the rules
count the rows (1 = 最前方, the front row, next to the halfway line; 4 = 最後方)
and columns a-f from the owner's left: ``H2b`` is home's row 2, column b; ``A1f``
away's front row, column f (hardware/boards/magic-number-eleven.toml). A player
card lies over two side-by-side cells and is read by the cell under its left
half: a card "on H2b" covers H2b and H2c.

A symbol is completed where two half symbols of the same kind meet: the right
edge of one card and the left edge of the next in the row, or the back (bottom)
half of a card and the front (top) half of the card behind it in the same
column. The field's front edge prints a half shot symbol over every front-row
cell (the seed's striker has "two from the front row"). Each completed symbol
has a name, from where it lies, which is also where a shot token goes:

- ``H1b|H1c``: between the cells H1b and H1c of one row;
- ``H1b/H2b``: between H1b and the cell behind it, H2b;
- ``H1b^``: between H1b and the field's front edge;
- ``H2b*1``: printed complete on the card read at H2b (its first such symbol).

>>> from masume.cards import load_card_set
>>> from masume.rules.magic_number_eleven.cards import player
>>> cards = load_card_set("magic-number-eleven-demo")
>>> field = {"H1b": player(cards.card("H01")), "H2b": player(cards.card("H04"))}
>>> [(s.kind, s.name) for s in completed_symbols(field)]
[('shot', 'H1b^'), ('shot', 'H1c^'), ('shot', 'H1b/H2b'), ('link', 'H1c/H2c')]
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from .cards import PlayerCard

COLUMNS = "abcdef"
ROWS = (1, 2, 3, 4)
#: The kind of half symbol printed on the field's front edge over every column.
FRONT_EDGE = "shot"
TEAM_PREFIX = {"home": "H", "away": "A"}


def cell(team: str, row: int, column: int) -> str:
    """``cell("home", 2, 1) == "H2b"``."""
    return f"{TEAM_PREFIX[team]}{row}{COLUMNS[column]}"


def parse_cell(name: str) -> tuple[str, int, int] | None:
    """``"H2b"`` -> ``("home", 2, 1)``; None for anything else."""
    if len(name) != 3 or name[0] not in "HA" or name[1] not in "1234" or name[2] not in COLUMNS:
        return None
    return ("home" if name[0] == "H" else "away", int(name[1]), COLUMNS.index(name[2]))


#: Reading cells where a card may lie (its left half), per team: columns a-e.
def reading_cells(team: str) -> tuple[str, ...]:
    return tuple(cell(team, r, c) for r in ROWS for c in range(len(COLUMNS) - 1))


def covered(name: str) -> tuple[str, str]:
    """The two cells a card read at ``name`` covers."""
    team, row, column = parse_cell(name)  # type: ignore[misc]
    return cell(team, row, column), cell(team, row, column + 1)


@dataclass(frozen=True)
class Symbol:
    """A completed symbol: its kind, its name (where it lies) and the cards it joins."""

    kind: str
    name: str
    cards: tuple[str, ...]  # reading cells of the cards that share it


def _occupancy(field: Mapping[str, PlayerCard]) -> dict[tuple[int, int], tuple[str, int]]:
    """(row, column) -> (reading cell of the card there, which half: 0 left, 1 right)."""
    taken: dict[tuple[int, int], tuple[str, int]] = {}
    for name in field:
        _, row, column = parse_cell(name)  # type: ignore[misc]
        taken[(row, column)] = (name, 0)
        taken[(row, column + 1)] = (name, 1)
    return taken


def completed_symbols(field: Mapping[str, PlayerCard]) -> tuple[Symbol, ...]:
    """Every completed symbol of one team's field (reading cell -> card), in cell order."""
    if not field:
        return ()
    team = parse_cell(next(iter(field)))[0]  # type: ignore[index]
    taken = _occupancy(field)
    found: list[Symbol] = []
    for name in sorted(field, key=lambda n: (n[1], n[2])):
        card = field[name]
        _, row, column = parse_cell(name)  # type: ignore[misc]
        for half in (0, 1):
            kind = card.symbols.top[half]
            here = cell(team, row, column + half)
            if not kind:
                continue
            if row == 1:
                if kind == FRONT_EDGE:
                    found.append(Symbol(kind, f"{here}^", (name,)))
                continue
            ahead = taken.get((row - 1, column + half))
            if ahead and field[ahead[0]].symbols.bottom[ahead[1]] == kind:
                found.append(Symbol(kind, f"{cell(team, row - 1, column + half)}/{here}",
                                    (ahead[0], name)))
        beside = taken.get((row, column + 2))
        if card.symbols.right and beside and beside[1] == 0 \
                and field[beside[0]].symbols.left == card.symbols.right:
            found.append(Symbol(card.symbols.right,
                                f"{cell(team, row, column + 1)}|{cell(team, row, column + 2)}",
                                (name, beside[0])))
        for k, kind in enumerate(card.symbols.full, 1):
            if kind:
                found.append(Symbol(kind, f"{name}*{k}", (name,)))
    return tuple(found)


def placements(field: Mapping[str, PlayerCard], card: PlayerCard, team: str) -> Iterator[str]:
    """Reading cells where ``card`` may be placed (ビルトアップ STEP1).

    Its two cells must be free and on a row its position allows; on the front
    row the card must touch a card already placed (beside it, or behind it).
    """
    taken = _occupancy(field)
    for row in card.rows:
        for column in range(len(COLUMNS) - 1):
            if (row, column) in taken or (row, column + 1) in taken:
                continue
            if row == 1 and not _touches(taken, row, column):
                continue
            yield cell(team, row, column)


def free_cells(field: Mapping[str, PlayerCard], team: str) -> Iterator[str]:
    """Reading cells of ``team``'s field whose two cells no card covers (where a card moved
    by hand may go: a by-hand effect says where, so no row or neighbour is required)."""
    taken = _occupancy(field)
    for row in ROWS:
        for column in range(len(COLUMNS) - 1):
            if (row, column) not in taken and (row, column + 1) not in taken:
                yield cell(team, row, column)


def _touches(taken: Mapping[tuple[int, int], tuple[str, int]], row: int, column: int) -> bool:
    around = [(row, column - 1), (row, column + 2)]
    around += [(r, c) for r in (row - 1, row + 1) for c in (column, column + 1)]
    return any(spot in taken for spot in around)


__all__ = ["COLUMNS", "FRONT_EDGE", "ROWS", "Symbol", "cell", "completed_symbols", "covered",
           "free_cells", "parse_cell", "placements", "reading_cells"]
