"""The board of Soccer Shogi: its squares, goals and keeper areas, and the steps,
jumps, kick rays and sandwich lines worked out once for every square."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import compress

from ..base import NotationError

FILES = "ABCDE"
SIDES: tuple[str, str] = ("blue", "red")
BLUE, RED = 0, 1

# Square index = rank * 5 + file, ranks 0-9 (0 and 9 are the goal rows).
EMPTY = 0
ACTIVE = (1, 2)  # cell code of an active blue / red player
RESTING = (3, 4)  # cell code of a flipped (resting) blue / red player
PIECE_NAMES = {1: "blue", 2: "red", 3: "blue-rest", 4: "red-rest"}
PIECE_CHARS = {1: "B", 2: "R", 3: "b", 4: "r"}


def _index(file: int, rank: int) -> int:
    return rank * 5 + file


def _is_square(file: int, rank: int) -> bool:
    if not (0 <= file < 5 and 0 <= rank <= 9):
        return False
    return 1 <= rank <= 8 or 1 <= file <= 3


SQUARE_NAMES: dict[int, str] = {
    _index(f, r): f"{FILES[f]}{r}" for r in range(10) for f in range(5) if _is_square(f, r)
}
SQUARE_INDEX: dict[str, int] = {name: i for i, name in SQUARE_NAMES.items()}
PITCH: tuple[int, ...] = tuple(_index(f, r) for r in range(1, 9) for f in range(5))
PITCH_SET = frozenset(PITCH)
GOAL_SQUARES: tuple[frozenset[int], frozenset[int]] = (
    frozenset(_index(f, 9) for f in (1, 2, 3)),  # blue's goal, defended by blue
    frozenset(_index(f, 0) for f in (1, 2, 3)),  # red's goal
)
ALL_GOALS = GOAL_SQUARES[BLUE] | GOAL_SQUARES[RED]
#: The keeper area in front of each side's goal.
KEEPER_AREA: tuple[frozenset[int], frozenset[int]] = (
    frozenset(_index(f, 8) for f in (1, 2, 3)),
    frozenset(_index(f, 1) for f in (1, 2, 3)),
)
AREA_SQUARES = (tuple(sorted(KEEPER_AREA[0])), tuple(sorted(KEEPER_AREA[1])))
CORNERS = frozenset(_index(f, r) for f in (0, 4) for r in (1, 8))
#: Rule 2-2: a kick from a corner into the goal square diagonally beside it is
#: blocked by an opponent on the keeper-area square between them.
CORNER_SHOT_GUARD: dict[tuple[int, int], int] = {
    (_index(0, 1), _index(1, 0)): _index(1, 1),  # A1 -> B0, guarded by B1
    (_index(4, 1), _index(3, 0)): _index(3, 1),  # E1 -> D0, guarded by D1
    (_index(0, 8), _index(1, 9)): _index(1, 8),  # A8 -> B9, guarded by B8
    (_index(4, 8), _index(3, 9)): _index(3, 8),  # E8 -> D9, guarded by D8
}

ORTHOGONAL = ((1, 0), (-1, 0), (0, 1), (0, -1))
DIAGONAL = ((1, 1), (-1, 1), (1, -1), (-1, -1))
DIRECTIONS = ORTHOGONAL + DIAGONAL


def _neighbour(square: int, direction: tuple[int, int]) -> int:
    """The square one step away, or -1 off the board."""
    file, rank = square % 5 + direction[0], square // 5 + direction[1]
    return _index(file, rank) if _is_square(file, rank) else -1


#: Pitch squares one step away (players never stand in a goal).
STEPS: dict[int, tuple[int, ...]] = {
    s: tuple(n for d in DIRECTIONS if (n := _neighbour(s, d)) in PITCH_SET) for s in PITCH
}


#: Pitch squares outside both keeper areas, and the steps between them.
QUIET_SQUARES: tuple[int, ...] = tuple(s for s in PITCH if s not in KEEPER_AREA[0] | KEEPER_AREA[1])
QUIET_STEPS: dict[int, tuple[int, ...]] = {
    s: tuple(t for t in STEPS[s] if t in QUIET_SQUARES) for s in QUIET_SQUARES
}
#: (jumped square, landing square) per family: 0 orthogonal, 1 diagonal.
JUMPS: dict[int, tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]] = {}
for _s in PITCH:
    _families = []
    for _family in (ORTHOGONAL, DIAGONAL):
        _hops = []
        for _d in _family:
            _mid = _neighbour(_s, _d)
            _land = _neighbour(_mid, _d) if _mid >= 0 else -1
            if _mid in PITCH_SET and _land in PITCH_SET:
                _hops.append((_mid, _land))
        _families.append(tuple(_hops))
    JUMPS[_s] = (_families[0], _families[1])
#: The squares a kick from a square passes, in order, in each of 8 directions.
RAYS: dict[int, tuple[tuple[int, ...], ...]] = {}
for _s in PITCH:
    _rays = []
    for _d in DIRECTIONS:
        _ray, _q = [], _neighbour(_s, _d)
        while _q >= 0:
            _ray.append(_q)
            if _q in ALL_GOALS:  # the goal row is the end of the board
                break
            _q = _neighbour(_q, _d)
        if _ray:
            _rays.append(tuple(_ray))
    RAYS[_s] = tuple(_rays)


#: (index, name) of the pitch squares in order; a piece code's layout entry alone,
#: and under the ball (0: the ball alone).
_PITCH_NAMED: tuple[tuple[int, str], ...] = tuple((i, SQUARE_NAMES[i]) for i in PITCH)
_ALONE = {code: (name,) for code, name in PIECE_NAMES.items()}
_WITH_BALL = {EMPTY: ("ball",), **{code: ("ball", name) for code, name in PIECE_NAMES.items()}}


def _side_of(cell: int) -> int:
    return (cell - 1) % 2


def square_name(index: int) -> str:
    return SQUARE_NAMES[index]


def _square(name: str) -> int:
    """Index of a square name; NotationError for anything else."""
    index = SQUARE_INDEX.get(name.upper()) if isinstance(name, str) else None
    if index is None:
        raise NotationError(
            f"{name!r} is not a square of the board (pitch A1-E8, goals B0-D0 and B9-D9)"
        )
    return index


def _start_cells(first: int) -> tuple[tuple[int, ...], int, tuple[int, int]]:
    """Cells, ball square and keeper squares of the starting position.

    The figure of the source is lost; the squares come from the game records
    (docs/rules/soccer-shogi.md, "Starting position"). They are written for
    blue moving first and mirrored (rank r -> 9 - r) when red does.
    """
    blue = ["A7", "B7", "D7", "E7", "C8", "C5"]
    red = ["A2", "B2", "C2", "D2", "E2", "C1"]
    ball, keepers = "C5", ("C8", "C1")
    if first == RED:
        blue = ["A7", "B7", "C7", "D7", "E7", "C8"]
        red = ["A2", "B2", "D2", "E2", "C1", "C4"]
        ball = "C4"
    cells = [EMPTY] * 50
    for name in blue:
        cells[SQUARE_INDEX[name]] = ACTIVE[BLUE]
    for name in red:
        cells[SQUARE_INDEX[name]] = ACTIVE[RED]
    return tuple(cells), SQUARE_INDEX[ball], (SQUARE_INDEX[keepers[0]], SQUARE_INDEX[keepers[1]])


GOAL_NAMES = frozenset(SQUARE_NAMES[i] for i in ALL_GOALS)


#: For each pitch square, per axis (rank, then file), the pitch squares outward
#: on each side in order, and whether that side ends at an end line behind a corner.
SANDWICH_LINES: dict[int, tuple[tuple[tuple[tuple[int, ...], bool], ...], ...]] = {}
for _s in PITCH:
    _axes = []
    for _axis in ((1, 0), (0, 1)):
        _sides = []
        for _sign in (1, -1):
            _d = (_axis[0] * _sign, _axis[1] * _sign)
            _line, _q = [], _neighbour(_s, _d)
            while _q in PITCH_SET:
                _line.append(_q)
                _q = _neighbour(_q, _d)
            _last = _line[-1] if _line else _s
            _sides.append((tuple(_line), _axis == (0, 1) and _last in CORNERS))
        _axes.append(tuple(_sides))
    SANDWICH_LINES[_s] = tuple(_axes)


# --------------------------------------------------------------------------- bitboards
# Sets of squares as Python ints, as python-chess's BB_* (one bit per square, there
# 64). Here a square is one *byte*: square i is bit 8 * i, so the set of squares
# holding a given cell code is read from the 50-cell tuple in one C call
# (``bytes(cells).translate(...)``, then ``int.from_bytes``; see ``position_sets``)
# instead of a Python loop over the squares. ``cells`` stays the position's field
# (notation, the tracker and the tests read it); the sets are derived, once a position,
# and a set is also 50 flags (``int.to_bytes``) read with one index a square.

#: The set holding square i alone.
BB_SQUARES: tuple[int, ...] = tuple(1 << (8 * i) for i in range(50))


def _bb(squares: Iterable[int]) -> int:
    out = 0
    for i in squares:
        out |= BB_SQUARES[i]
    return out


def bb_squares(bb: int) -> Iterator[int]:
    """The squares of a set, in ascending order (PITCH order).

    >>> list(bb_squares(BB_SQUARES[7] | BB_SQUARES[12]))
    [7, 12]
    """
    while bb:
        low = bb & -bb
        yield (low.bit_length() - 1) >> 3
        bb ^= low


def bb_count(bb: int) -> int:
    """How many squares a set holds."""
    return bb.bit_count()


BB_QUIET = _bb(QUIET_SQUARES)
BB_AREAS: tuple[int, int] = (_bb(KEEPER_AREA[0]), _bb(KEEPER_AREA[1]))
#: Per square: the steps' targets.
BB_STEPS: dict[int, int] = {s: _bb(STEPS[s]) for s in PITCH}

_CODES = bytes(range(5))
#: bytes.translate tables: cell code -> 1 where it is one of the wanted codes.
_EMPTY_TABLE = bytes.maketrans(_CODES, bytes([1, 0, 0, 0, 0]))
_ACTIVE_TABLES = (bytes.maketrans(_CODES, bytes([0, 1, 0, 0, 0])),
                  bytes.maketrans(_CODES, bytes([0, 0, 1, 0, 0])))
_PIECE_TABLES = (bytes.maketrans(_CODES, bytes([0, 1, 0, 1, 0])),
                 bytes.maketrans(_CODES, bytes([0, 0, 1, 0, 1])))
BB_PITCH = _bb(PITCH)
_SQUARE_RANGE = range(50)


def empty_and_active(cells: tuple[int, ...], side: int) -> tuple[int, list[int]]:
    """The empty pitch squares of a cell tuple, as a set, and the squares of ``side``'s
    active players in ascending order (``itertools.compress`` over the cells' flags):
    what a listing of legal actions reads, in C calls only.

    >>> empty, squares = empty_and_active(_start_cells(0)[0], RED)
    >>> bb_count(empty), [SQUARE_NAMES[i] for i in squares]
    (28, ['C1', 'A2', 'B2', 'C2', 'D2', 'E2'])
    """
    raw = bytearray(cells)  # made from a tuple in half the time of bytes (CPython 3.11)
    return (int.from_bytes(raw.translate(_EMPTY_TABLE), "little") & BB_PITCH,
            list(compress(_SQUARE_RANGE, raw.translate(_ACTIVE_TABLES[side]))))


def active_squares(cells: tuple[int, ...], side: int) -> list[int]:
    """The squares of ``side``'s active players in ascending order: the second half of
    :func:`empty_and_active`, for a position whose empty set is known already.

    >>> active_squares(_start_cells(0)[0], RED) == empty_and_active(_start_cells(0)[0], RED)[1]
    True
    """
    return list(compress(_SQUARE_RANGE, bytearray(cells).translate(_ACTIVE_TABLES[side])))


def position_sets(cells: tuple[int, ...], side: int) -> tuple[tuple[int, int, int], list[int]]:
    """(empty pitch squares, ``side``'s active players, ``side``'s players) of a cell
    tuple, as sets, and the squares of ``side``'s active players in ascending order
    (:func:`empty_and_active`, and two C calls more).

    >>> (empty, active, players), squares = position_sets(_start_cells(0)[0], RED)
    >>> bb_count(empty), bb_count(active), bb_count(players)
    (28, 6, 6)
    >>> [SQUARE_NAMES[i] for i in squares], list(bb_squares(active)) == squares
    (['C1', 'A2', 'B2', 'C2', 'D2', 'E2'], True)
    """
    empty, squares = empty_and_active(cells, side)
    raw = bytes(cells)
    return ((empty, int.from_bytes(raw.translate(_ACTIVE_TABLES[side]), "little"),
             int.from_bytes(raw.translate(_PIECE_TABLES[side]), "little")), squares)
