"""The board of shogi-piece soccer and how each piece moves and passes on it.

Everything here works on two plain values, so that it is fast and easy to test:

- ``board``: a string of 99 characters, one per square, ranks A..K, files 1..9
  (index ``rank * 9 + file - 1``). ``.`` is an empty square; the first player's
  (sente's) pieces are upper case ``K R B N P`` (goalkeeper, rook, bishop, knight,
  pawn), the second player's (gote's) lower case.
- ``ball``: the index of the square the ball is on (0..98), or :data:`GOAL_A` /
  :data:`GOAL_K` once it is in a goal mouth. The ball is held by the piece on its
  square; on an empty square it is a free ball (空球).

Seen from sente (the seed's figures): file 1 is on the left, rank A at the top
(gote's end, whose goal mouth is off 5-A), rank K at the bottom (sente's end).

>>> NAMES[square(5, 5)], NAMES[GOAL_A], NAMES[GOAL_K]
('5-F', 'goal-A', 'goal-K')
>>> [NAMES[i] for i in sorted(PENALTY_AREA[GOTE])]
['4-A', '5-A', '6-A', '4-B', '5-B', '6-B']
"""

from __future__ import annotations

from typing import Final

RANK_LETTERS: Final = "ABCDEFGHIJK"
FILES: Final = 9
RANKS: Final = 11
SIZE: Final = FILES * RANKS  # 99 squares
GOAL_A: Final = 99  # the goal mouth off 5-A: gote's goal, sente shoots at it
GOAL_K: Final = 100  # the goal mouth off 5-K: sente's goal, gote shoots at it

SENTE: Final = 0  # 先手, the first player, pieces written in kanji in the seed
GOTE: Final = 1  # 後手, the second player, pieces written in English letters
SIDES: Final = ("sente", "gote")

EMPTY: Final = "."
KINDS: Final = ("king", "rook", "bishop", "knight", "pawn")
LETTER_OF_KIND: Final = {"king": "K", "rook": "R", "bishop": "B", "knight": "N", "pawn": "P"}
KIND_OF_LETTER: Final = {v: k for k, v in LETTER_OF_KIND.items()}
#: One side's eleven pieces (【手駒】).
FULL_SET: Final = {"K": 1, "R": 1, "B": 1, "N": 2, "P": 6}
#: The order pieces are listed in a system, as in the seed's 飛歩歩−角歩歩歩−桂桂歩.
SYSTEM_ORDER: Final = "RBNP"


def square(file: int, rank: int) -> int:
    """Index of the square on ``file`` (1..9) and ``rank`` (0 = A .. 10 = K)."""
    return rank * FILES + file - 1


NAMES: Final[tuple[str, ...]] = tuple(
    f"{f}-{RANK_LETTERS[r]}" for r in range(RANKS) for f in range(1, FILES + 1)
) + ("goal-A", "goal-K")
INDEX: Final[dict[str, int]] = {name: i for i, name in enumerate(NAMES)}
FILE_OF: Final = tuple(i % FILES + 1 for i in range(SIZE))
RANK_OF: Final = tuple(i // FILES for i in range(SIZE))


def area_of_rank(rank: int) -> int:
    """0 for A-C, 1 for D-H, 2 for I-K (the same lines for both sides)."""
    return 0 if rank <= 2 else 1 if rank <= 7 else 2


AREA_OF: Final = tuple(area_of_rank(RANK_OF[i]) for i in range(SIZE))
AREA_NAMES: Final = ("A-C", "D-H", "I-K")

#: The six squares around each side's own goal mouth (the ┃ marks of the figures).
PENALTY_AREA: Final = (
    frozenset(square(f, r) for r in (9, 10) for f in (4, 5, 6)),
    frozenset(square(f, r) for r in (0, 1) for f in (4, 5, 6)),
)
OWN_GOAL: Final = (GOAL_K, GOAL_A)
ATTACKED_GOAL: Final = (GOAL_A, GOAL_K)
GOAL_COORD: Final = {GOAL_A: (5, -1), GOAL_K: (5, RANKS)}
#: The square in front of each goal mouth; the defending goalkeeper there stops every shot.
GOAL_FRONT: Final = {GOAL_A: square(5, 0), GOAL_K: square(5, RANKS - 1)}
KING_HOME: Final = (square(5, 10), square(5, 0))
KICKOFF: Final = square(5, 5)  # 5-F, the centre
#: Rows each side sets up on: the row of each area nearest its own end, in the
#: order own area, midfield, opponent's area (the order of a declared system).
SETUP_RANKS: Final = ((10, 7, 2), (0, 3, 8))

ORTHOGONAL: Final = ((0, -1), (0, 1), (-1, 0), (1, 0))
DIAGONAL: Final = ((-1, -1), (1, -1), (-1, 1), (1, 1))
ALL_EIGHT: Final = ORTHOGONAL + DIAGONAL
KNIGHT_JUMPS: Final = ((-1, -2), (1, -2), (-2, -1), (2, -1), (-2, 1), (2, 1), (-1, 2), (1, 2))


def on_board(file: int, rank: int) -> bool:
    return 1 <= file <= FILES and 0 <= rank < RANKS


def side_of(piece: str) -> int:
    return SENTE if piece.isupper() else GOTE


def depth(side: int, rank: int) -> int:
    """How far forward a rank is for ``side``: 0 on its own end row, 10 on the far one."""
    return RANKS - 1 - rank if side == SENTE else rank


def pass_reach(side: int, rank: int) -> int:
    """The deepest rank (as a :func:`depth`) a bishop's or rook's forward pass reaches.

    【大駒のパス】: up to the nearest row of the area in front; from the front row
    of one's own area up to the nearest row of the opponent's area; from the front
    row of the midfield up to the far end. Back passes are not limited.
    """
    d = depth(side, rank)
    if d <= 1:
        return 3  # own area: up to the midfield's nearest row
    if d == 2:
        return 8  # own area's front row: up to the opponent area's nearest row
    if d <= 6:
        return 8  # midfield: up to the opponent area's nearest row
    return 10  # midfield's front row, or in the opponent's area: the far end


def _ray(i: int, df: int, dr: int) -> tuple[int, ...]:
    f, r = FILE_OF[i] + df, RANK_OF[i] + dr
    out = []
    while on_board(f, r):
        out.append(square(f, r))
        f, r = f + df, r + dr
    return tuple(out)


#: RAYS[i][d]: the squares from i outwards in direction d of ALL_EIGHT, nearest first.
RAYS: Final = tuple(tuple(_ray(i, df, dr) for df, dr in ALL_EIGHT) for i in range(SIZE))
_ORTH_DIRS: Final = (0, 1, 2, 3)
_DIAG_DIRS: Final = (4, 5, 6, 7)
_ALL_DIRS: Final = tuple(range(8))
KNIGHT_SQUARES: Final = tuple(
    tuple(
        square(FILE_OF[i] + df, RANK_OF[i] + dr)
        for df, dr in KNIGHT_JUMPS
        if on_board(FILE_OF[i] + df, RANK_OF[i] + dr)
    )
    for i in range(SIZE)
)


#: The squares next to each square: orthogonally, and in all eight directions.
NEIGHBOURS_4: Final = tuple(tuple(RAYS[i][d][0] for d in _ORTH_DIRS if RAYS[i][d])
                            for i in range(SIZE))
NEIGHBOURS_8: Final = tuple(tuple(RAYS[i][d][0] for d in _ALL_DIRS if RAYS[i][d])
                            for i in range(SIZE))
#: The opponent's piece letters, by the letter of a piece.
_THEIRS: Final = {**{c: "krbnp" for c in "KRBNP"}, **{c: "KRBNP" for c in "krbnp"}}


def move_targets(board: str, ball: int, i: int) -> list[int]:
    """Squares the piece on ``i`` may move to
    (【駒の動き】, 【退場】, 【トラップ】, 【大駒の移動】).

    A target holding an opponent is an ejection; it is only listed when the mover
    holds the ball, or when the opponent there holds it. A bishop or rook passing
    over a free ball picks it up (trap) and may then not end on an opponent.
    """
    piece = board[i]
    theirs = _THEIRS[piece]
    kind = piece.upper()
    holder = ball == i
    out: list[int] = []
    if kind == "N" or kind == "P" or kind == "K":
        if kind == "N":
            targets: tuple[int, ...] = KNIGHT_SQUARES[i]
        elif kind == "K" and i in PENALTY_AREA[side_of(piece)]:
            targets = NEIGHBOURS_8[i]
        else:
            targets = NEIGHBOURS_4[i]
        for t in targets:
            occupant = board[t]
            if occupant == EMPTY or (occupant in theirs and (holder or ball == t)):
                out.append(t)
        return out
    area = AREA_OF[i]
    rays = RAYS[i]
    for d in _ORTH_DIRS if kind == "R" else _DIAG_DIRS:
        ray = rays[d]
        if not ray:
            continue
        if AREA_OF[ray[0]] != area:
            # across an area line: one row only, from the row before it
            t = ray[0]
            occupant = board[t]
            if occupant == EMPTY or (occupant in theirs and (holder or ball == t)):
                out.append(t)
            continue
        trapped = False
        for t in ray:
            if AREA_OF[t] != area:
                break  # stop before the line
            occupant = board[t]
            if occupant != EMPTY:
                if occupant in theirs and not trapped and (holder or ball == t):
                    out.append(t)
                break
            out.append(t)
            if t == ball:
                trapped = True  # picks the free ball up and goes on with it
    return out


#: A line a pass follows: its squares, whether each is listed, whether it ends in the goal.
PassLine = tuple[tuple[int, ...], tuple[bool, ...], bool]


def _pass_lines(side: int, kind: str, i: int) -> tuple[PassLine, ...]:
    """The lines a pass of ``kind`` (a letter; any but N, B, R, K passes as a pawn) from
    ``i`` follows, in order: (its squares, whether each is listed, whether it goes on into
    the attacked goal mouth). A knight's jumps are lines of one square (or none: the goal).
    Made once per (side, kind, square) for :func:`pass_targets`."""
    goal = ATTACKED_GOAL[side]
    gf, gr = GOAL_COORD[goal]
    f0, r0 = FILE_OF[i], RANK_OF[i]
    lines: list[PassLine] = []
    if kind == "N":
        for df, dr in KNIGHT_JUMPS:
            f, r = f0 + df, r0 + dr
            if f == gf and r == gr:
                lines.append(((), (), True))
            elif on_board(f, r):
                lines.append(((square(f, r),), (True,), False))
        return tuple(lines)
    dirs: tuple[tuple[int, int], ...]
    if kind in ("B", "R"):
        dirs = DIAGONAL if kind == "B" else ORTHOGONAL
        steps = RANKS
        reach = pass_reach(side, r0)
    else:
        dirs = ALL_EIGHT if kind == "K" and i in PENALTY_AREA[side] else ORTHOGONAL
        steps = 2
        reach = RANKS
    for df, dr in dirs:
        squares: list[int] = []
        listed: list[bool] = []
        to_goal = False
        f, r = f0, r0
        for _ in range(steps):
            f, r = f + df, r + dr
            if f == gf and r == gr:
                to_goal = True
                break
            if not on_board(f, r):
                break
            squares.append(square(f, r))
            listed.append(depth(side, r) <= reach)
        lines.append((tuple(squares), tuple(listed), to_goal))
    return tuple(lines)


_PASS_LINES: Final = {
    (side, kind, i): _pass_lines(side, kind, i)
    for side in (SENTE, GOTE) for kind in "KRBNP" for i in range(SIZE)
}


def pass_targets(board: str, ball: int, i: int) -> list[int]:
    """Where the piece on ``i`` can play the ball: squares, and the goal it attacks.

    Passes stop at the first piece on their path (which may receive them); a
    knight's pass jumps. The attacked goal mouth is listed when a shot along the
    same trajectories reaches it (any distance for a bishop or rook) and the
    defending goalkeeper is not on the square in front of it.
    """
    piece = board[i]
    side = side_of(piece)
    kind = piece.upper()
    lines = _PASS_LINES.get((side, kind, i))
    if lines is None:
        lines = _PASS_LINES[side, "P", i]
    goal = ATTACKED_GOAL[side]
    shot_open = board[GOAL_FRONT[goal]] != ("k" if side == SENTE else "K")
    out: list[int] = []
    for squares, listed, to_goal in lines:
        for t, shown in zip(squares, listed):
            if shown:
                out.append(t)
            if board[t] != EMPTY:
                break
        else:
            if to_goal and shot_open:
                out.append(goal)
    return out


def path_between(i: int, t: int) -> tuple[int, ...]:
    """The squares strictly between two squares on one line (empty if not on a line)."""
    df = FILE_OF[t] - FILE_OF[i]
    dr = RANK_OF[t] - RANK_OF[i]
    n = max(abs(df), abs(dr))
    if n <= 1 or (df and dr and abs(df) != abs(dr)):
        return ()
    sf, sr = (df > 0) - (df < 0), (dr > 0) - (dr < 0)
    return tuple(square(FILE_OF[i] + sf * k, RANK_OF[i] + sr * k) for k in range(1, n))
