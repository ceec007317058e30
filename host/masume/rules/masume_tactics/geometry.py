"""The board of Masume Soccer Tactics: squares, goals, areas, set-piece spots, the
8 directions and the kick-off formation."""

from __future__ import annotations

from ..base import NotationError

GAME = "masume-tactics"
FILES = "ABCDEFGHIJKLM"
SIDES: tuple[str, str] = ("home", "away")
HOME, AWAY = 0, 1
WIDTH = 13  # files A-M, x = 0-12
#: Square index = y * 13 + x, y = rank 0-17.


def _sq(x: int, y: int) -> int:
    return y * WIDTH + x


def _xy(square: int) -> tuple[int, int]:
    return square % WIDTH, square // WIDTH


def _on_pitch(x: int, y: int) -> bool:
    return 1 <= x <= 11 and 1 <= y <= 16


def _is_board(x: int, y: int) -> bool:
    if 1 <= y <= 16:
        return 0 <= x <= 12
    return y in (0, 17) and 5 <= x <= 7


SQUARE_NAMES: dict[int, str] = {
    _sq(x, y): f"{FILES[x]}{y}" for y in range(18) for x in range(13) if _is_board(x, y)
}
SQUARE_INDEX: dict[str, int] = {name: i for i, name in SQUARE_NAMES.items()}
PITCH = frozenset(_sq(x, y) for y in range(1, 17) for x in range(1, 12))
TOUCH = frozenset(_sq(x, y) for y in range(1, 17) for x in (0, 12))
#: GOALS[side]: the goal squares ``side`` defends.
GOALS = (frozenset(_sq(x, 0) for x in (5, 6, 7)), frozenset(_sq(x, 17) for x in (5, 6, 7)))
PENALTY_AREA = (
    frozenset(_sq(x, y) for x in range(3, 10) for y in (1, 2, 3)),
    frozenset(_sq(x, y) for x in range(3, 10) for y in (14, 15, 16)),
)
CENTRE_CIRCLE = (
    frozenset(_sq(x, y) for x in (5, 6, 7) for y in (7, 8)),
    frozenset(_sq(x, y) for x in (5, 6, 7) for y in (9, 10)),
)
CENTRE_MARK = (_sq(6, 8), _sq(6, 9))
#: The penalty kicker's square (behind the penalty mark) when ``side`` attacks.
PENALTY_SPOT = (_sq(6, 14), _sq(6, 3))
#: Where the keeper of ``side`` may stand for a penalty, with the die faces he covers
#: (the faces printed in the net behind each square; see the board file).
PENALTY_GUARD = (
    {_sq(5, 1): (1, 2), _sq(6, 1): (3, 4), _sq(7, 1): (5, 6)},
    {_sq(7, 16): (1, 2), _sq(6, 16): (3, 4), _sq(5, 16): (5, 6)},
)
CORNERS = {  # (end defended by side, left?) -> corner square
    (HOME, True): _sq(1, 1), (HOME, False): _sq(11, 1),
    (AWAY, True): _sq(1, 16), (AWAY, False): _sq(11, 16),
}
GOAL_KICK = {(HOME, True): _sq(4, 1), (HOME, False): _sq(8, 1),
             (AWAY, True): _sq(4, 16), (AWAY, False): _sq(8, 16)}

DIRECTIONS: dict[str, tuple[int, int]] = {
    "N": (0, 1), "NE": (1, 1), "E": (1, 0), "SE": (1, -1),
    "S": (0, -1), "SW": (-1, -1), "W": (-1, 0), "NW": (-1, 1),
}
DIRECTION_NAMES = {v: k for k, v in DIRECTIONS.items()}

PIECE_NAMES = tuple(f"{SIDES[i // 11]}-{i % 11 + 1}" for i in range(22))


def _side(player: int) -> int:
    return player // 11


def _is_keeper(player: int) -> bool:
    return player % 11 == 0


def square_name(index: int) -> str:
    return SQUARE_NAMES[index]


def _square(name: str) -> int:
    index = SQUARE_INDEX.get(name.upper()) if isinstance(name, str) else None
    if index is None:
        raise NotationError(
            f"{name!r} is not a square of the board (pitch B1-L16, touch files A and M)")
    return index


def _progress(side: int, square: int) -> int:
    """How far up the pitch ``square`` is for ``side`` (1 = own goal line, 16 = the opponent's)."""
    y = square // WIDTH
    return y if side == HOME else 17 - y


def _mirror(square: int) -> int:
    x, y = _xy(square)
    return _sq(x, 17 - y)


#: Kick-off formation of home, shirt 1-11; shirt 9 stands on the centre mark when
#: home kicks off and on G6 otherwise. Away's is the mirror image (rank r -> 17 - r).
FORMATION = ("G2", "C4", "E3", "I3", "K4", "G5", "C7", "E6", "G8", "I6", "K7")


def _formation(kicking_off: int) -> tuple[int, ...]:
    home = [SQUARE_INDEX[n] for n in FORMATION]
    if kicking_off != HOME:
        home[8] = SQUARE_INDEX["G6"]
    away = [SQUARE_INDEX[n] for n in FORMATION]
    if kicking_off != AWAY:
        away[8] = SQUARE_INDEX["G6"]
    return tuple(home) + tuple(_mirror(s) for s in away)
