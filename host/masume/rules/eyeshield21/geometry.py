"""The mat's cells (names as in hardware/boards/eyeshield21.toml).

>>> character_cells("home")[0], area_cells("away", "run")[-1], ball_cell("home", "pass")
('home-character-1', 'away-run-7', 'home-pass-ball')
>>> owner_of("away-bench-2")
'away'
"""

from __future__ import annotations

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


def area_cells(side: str, area: str, places: int = AREA_PLACES) -> tuple[str, ...]:
    """The side's half of a play area, without the ball card's place: places 1 to
    ``places`` (the mat's 7, or more: a half holds any number of cards,
    「全部を片方に寄せてもよい」; the position says how many are in use)."""
    return tuple(f"{side}-{area}-{n}" for n in range(1, max(places, AREA_PLACES) + 1))


def area_place(cell: str) -> int:
    """The number of a play-area place (``home-pass-9`` -> 9), 0 for any other cell.

    >>> area_place("away-run-12"), area_place("away-run-ball"), area_place("home-bench-1")
    (12, 0, 0)
    """
    parts = cell.split("-")
    if (len(parts) == 3 and parts[0] in SIDES and parts[1] in AREAS and parts[2].isdigit()
            and not parts[2].startswith("0")):
        return int(parts[2])
    return 0


def ball_cell(side: str, area: str) -> str:
    return f"{side}-{area}-ball"


def half_cells(side: str, area: str, places: int = AREA_PLACES) -> tuple[str, ...]:
    """Every place of the side's half of a play area, the ball card's included."""
    return (ball_cell(side, area),) + area_cells(side, area, places)


def is_cell(name: str) -> bool:
    """Is ``name`` a place of the game: one of the mat's, or a play-area place past its 7."""
    return name in ALL_CELLS or area_place(name) > 0


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


__all__ = ["ALL_CELLS", "AREAS", "AWAY", "HOME", "SIDES", "area_cells", "area_of", "area_place",
           "ball_cell", "bench_cells", "character_cells", "half_cells", "is_cell", "owner_of",
           "pile_cell", "reaction_cells"]
