"""The position of shogi-piece soccer: an immutable value, its legal actions and results.

>>> from masume.rules.shogi_soccer import RULES
>>> p = RULES.start()
>>> p.status().message
'gote: declare a system (pieces per area)'
>>> p = p.apply(p.parse_action("システム 3-4-3 飛歩歩-角歩歩歩-桂桂歩"))
>>> p.status().to_move, p.status().actions_per_turn
('sente', 11)
>>> p.layout()
{'5-F': ('ball',)}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from itertools import chain
from typing import ClassVar, Final

from ..base import IllegalAction, Legend, Light, Outcome, Status, cached
from .actions import Action, Declare, EndTurn, Foul, Move, Pass, Place, Shot
from .geometry import (
    AREA_NAMES,
    ATTACKED_GOAL,
    EMPTY,
    FILE_OF,
    FULL_SET,
    GOAL_A,
    GOAL_FRONT,
    GOAL_K,
    GOTE,
    INDEX,
    KICKOFF,
    KIND_OF_LETTER,
    KING_HOME,
    LETTER_OF_KIND,
    NAMES,
    OWN_GOAL,
    PENALTY_AREA,
    RANK_LETTERS,
    RANK_OF,
    SENTE,
    SETUP_RANKS,
    SIDES,
    SIZE,
    SYSTEM_ORDER,
    move_targets,
    pass_reach,
    pass_targets,
    path_between,
    side_of,
    square,
)

#: The stages of a game, in order. "kickoff" and "kickoff-2" are sente's first
#: turn (the kick-off pass, then one more action); "play" is one action a turn.
STAGES = ("system", "setup", "kickoff", "kickoff-2", "play")
PLAY_STAGES = ("kickoff", "kickoff-2", "play")
OPTIONS = ("play_out",)

_EMPTY_BOARD = EMPTY * SIZE
#: Squares each side may set its non-goalkeeper pieces on (5-F only for sente's kick-off piece).
_SETUP_SQUARES = tuple(
    frozenset(
        square(f, r) for r in SETUP_RANKS[side] for f in range(1, 10)
    ) - {KING_HOME[side]}
    for side in (SENTE, GOTE)
)


def _passing(candidates: list[int], reached: Collection[int],
             check: Callable[[int], bool]) -> list[int]:
    """The ``candidates`` that pass a set-up ``check``, asked once for all the squares
    not ``reached`` by a kick-off pass (it says the same for each: see
    :meth:`Position._kickoff_targets`)."""
    elsewhere = next((check(i) for i in candidates if i not in reached), False)
    return [i for i in candidates if (check(i) if i in reached else elsewhere)]


def _row(rank: int) -> tuple[int, ...]:
    return tuple(square(f, rank) for f in range(1, 10))


#: Sente's set-up squares in order, and gote's set-up rows (without its goalkeeper's 5-A).
_SENTE_SETUP_ORDER = tuple(sorted(_SETUP_SQUARES[SENTE]))
_GOTE_ROWS = tuple(tuple(i for i in _row(rank) if i != KING_HOME[GOTE])
                   for rank in SETUP_RANKS[GOTE])
#: The squares a kick-off pass from 5-F to each square crosses.
_WAY_FROM_KICKOFF = tuple(path_between(KICKOFF, t) for t in range(SIZE))


def _canonical_group(letters: str) -> str:
    return "".join(sorted(letters, key=SYSTEM_ORDER.index))


def system_problem(system: tuple[str, str, str]) -> str | None:
    """Why ``system`` cannot be declared, or None if it can.

    >>> system_problem(("RPP", "BPPP", "NNP")) is None
    True
    >>> system_problem(("RPP", "BPPP", "NNPP"))
    'a system places the ten pieces besides the goalkeeper (...); this one has 7 pawns'
    """
    if (
        not isinstance(system, tuple)
        or len(system) != 3
        or not all(isinstance(g, str) for g in system)
    ):
        return "a system names three areas: own area, midfield, opponent's area"
    letters = Counter("".join(system))
    if "K" in letters:
        return "the goalkeeper is not part of a system: it always starts in front of its goal"
    strange = sorted(set(letters) - set(SYSTEM_ORDER))
    if strange:
        return f"{', '.join(map(repr, strange))} is not a piece letter (R, B, N, P)"
    want = {k: v for k, v in FULL_SET.items() if k != "K"}
    if dict(letters) != want:
        have = ", ".join(
            f"{n} {KIND_OF_LETTER[c]}{'s' if n != 1 else ''}"
            for c, n in sorted(letters.items(), key=lambda x: SYSTEM_ORDER.find(x[0]))
            if want.get(c) != n
        )
        return (
            "a system places the ten pieces besides the goalkeeper "
            f"(1 rook, 1 bishop, 2 knights, 6 pawns); this one has {have}"
        )
    if len(system[0]) > 8:
        return "at most 8 pieces fit beside the goalkeeper on the own area's back row"
    for area in (1, 2):
        # 【盤面】「盤は9×11マス」 and 【配置】「各エリアで最も自陣寄りの段」: a row holds 9.
        if len(system[area]) > 9:
            where = ("midfield", "opponent's area")[area - 1]
            return f"at most 9 pieces fit on the {where}'s set-up row, not {len(system[area])}"
    return None


def all_systems() -> Iterator[tuple[str, str, str]]:
    """Every system gote may declare (1,501 of them: a row holds 9 pieces).

    >>> sum(1 for _ in all_systems())
    1501
    """
    for rook in range(3):
        for bishop in range(3):
            for k1 in range(3):
                for k2 in range(k1, 3):
                    for p_own in range(7):
                        for p_mid in range(7 - p_own):
                            groups = ["", "", ""]
                            groups[rook] += "R"
                            groups[bishop] += "B"
                            groups[k1] += "N"
                            groups[k2] += "N"
                            groups[0] += "P" * p_own
                            groups[1] += "P" * p_mid
                            groups[2] += "P" * (6 - p_own - p_mid)
                            system = tuple(_canonical_group(g) for g in groups)
                            if system_problem(system) is None:  # type: ignore[arg-type]
                                yield system  # type: ignore[misc]


#: The sides' colours, and how the highlights of ``status()`` show.
LEGEND = Legend(
    sides={"sente": (0, 200, 255), "gote": (255, 120, 0)},
    highlights={
        "goal": Light((255, 255, 255), "blink"),  # the ball in a goal mouth
        "eject": Light((255, 0, 0), "pulse", label="take off"),  # where a piece was ejected from
        "setup": Light((0, 200, 200), label="set up here"),  # the squares a piece may go on
        "checkmate": Light((255, 0, 0), "blink"),  # the goalkeeper that is mated
        "check": Light((255, 0, 120), "pulse"),  # the goalkeeper in check
    },
    places={"goal-K": "sente's goal mouth", "goal-A": "gote's goal mouth",
            "turn-sente": "sente's lamp", "turn-gote": "gote's lamp"},
)


@dataclass(frozen=True)
class Position:
    """One moment of a game. Immutable and hashable; :meth:`apply` returns a new one.

    Fields (see :mod:`.geometry` for the board encoding):

    - ``board``: 99 characters, ranks A..K, files 1..9; ``KRBNP`` sente, ``krbnp`` gote.
    - ``ball``: index of the ball's square, or of a goal mouth (99 = goal-A, 100 = goal-K).
    - ``turn``: 0 for sente, 1 for gote.
    - ``stage``: one of :data:`STAGES`.
    - ``system``: gote's declared system, or None.
    - ``result``: ``(winner, reason)`` once decided by a goal, an ejected
      goalkeeper, a resignation or a foul (a checkmate is seen, not stored).
    - ``play_out``: rule option; when True a checkmate is announced but the game
      goes on until the goal or the ejection happens.
    """

    board: str = _EMPTY_BOARD
    ball: int = KICKOFF
    turn: int = GOTE
    stage: str = "system"
    system: tuple[str, str, str] | None = None
    result: tuple[int | None, str] | None = None
    play_out: bool = False
    #: The square the last action went to (for 同 in the notation), -1 if unknown.
    last_target: int = field(default=-1, compare=False, repr=False)
    #: The square where the last action ejected a piece (its removal is lit), or -1.
    ejected_at: int = field(default=-1, compare=False, repr=False)

    game: ClassVar[str] = "shogi-soccer"
    sides: ClassVar[tuple[str, ...]] = SIDES
    legend: ClassVar[Legend] = LEGEND

    # ------------------------------------------------------------------ basics

    @property
    def side_to_move(self) -> str:
        """"sente" or "gote"."""
        return SIDES[self.turn]

    def piece_at(self, name: str) -> tuple[str, str] | None:
        """``(side, kind)`` of the piece on the square called ``name``, or None.

        >>> from masume.rules.shogi_soccer import RULES
        >>> RULES.from_text("4k4/9/9/9/9/9/9/9/9/9/4K4 sente play 5-K - -").piece_at("5-A")
        ('gote', 'king')
        """
        i = INDEX.get(name, SIZE)
        if i >= SIZE or self.board[i] == EMPTY:
            return None
        c = self.board[i]
        return SIDES[side_of(c)], KIND_OF_LETTER[c.upper()]

    @property
    def ball_square(self) -> str:
        """Where the ball is: a square name, or ``goal-A`` / ``goal-K``."""
        return NAMES[self.ball]

    def ball_holder(self) -> str | None:
        """The square of the piece holding the ball, or None for a free ball."""
        if self.ball < SIZE and self.board[self.ball] != EMPTY:
            return NAMES[self.ball]
        return None

    def _count(self, side: int) -> Counter[str]:
        return Counter(c.upper() for c in self.board if c != EMPTY and side_of(c) == side)

    def remaining(self, side: str) -> dict[str, int]:
        """Pieces ``side`` still has to set up, by kind (during the set-up)."""
        placed = self._count(SIDES.index(side))
        return {
            KIND_OF_LETTER[c]: n - placed[c] for c, n in FULL_SET.items() if n - placed[c] > 0
        }

    def ejected(self, side: str) -> dict[str, int]:
        """Pieces of ``side`` that have been ejected, by kind (once play has begun)."""
        if self.stage not in PLAY_STAGES:
            return {}
        return self.remaining(side)

    # ------------------------------------------------------------------ set-up

    def _placement_squares(self, letter: str) -> list[int]:
        """Squares where the side to move may set up a piece of kind ``letter``
        (computed once per letter: ``apply`` asks again for every placement)."""
        known = self._placements
        found = known.get(letter)
        if found is None:
            found = known[letter] = self._find_placement_squares(letter)
        return found

    @cached
    def _placements(self) -> dict[str, list[int]]:
        return {}

    def _find_placement_squares(self, letter: str) -> list[int]:
        side = self.turn
        board = self.board
        piece = letter if side == SENTE else letter.lower()
        if board.count(piece) >= FULL_SET[letter]:
            return []
        if letter == "K":
            home = KING_HOME[side]
            return [home] if board[home] == EMPTY else []
        if side == GOTE:
            assert self.system is not None
            out: list[int] = []
            for area, row in enumerate(_GOTE_ROWS):
                here = sum(1 for i in row if board[i] == piece)
                if self.system[area].count(letter) > here:
                    out.extend(i for i in row if board[i] == EMPTY)
            # Reading R6: gote leaves the kick-off a receiver (see _kickoff_stays_open).
            return _passing(sorted(out), self._reached_from_kickoff,
                            lambda i: self._gote_may_set_up(i, piece))
        # Sente's pieces still to set up once this one is (the goalkeeper aside: it has one square).
        rest = [c for c, n in FULL_SET.items() if c != "K"
                for _ in range(n - board.count(c) - (c == letter))]
        if board[KICKOFF] != EMPTY:
            kickers = frozenset(board[KICKOFF])
            more = bool(rest)
        else:
            kickers = frozenset(rest)
            more = len(rest) > 1
        # Off 5-F a piece's kind changes nothing but what is left to set up: the squares
        # are the same for every kind that leaves the same kick-off pieces.
        found = self._sente_squares.get((kickers, more))
        if found is None:
            reached = frozenset().union(*(self._kickoff_targets(x)[1] for x in kickers))
            found = self._sente_squares[kickers, more] = _passing(
                [i for i in _SENTE_SETUP_ORDER if board[i] == EMPTY], reached,
                lambda i: self._sente_setup_feasible(i, letter, rest))
        if board[KICKOFF] == EMPTY and self._sente_setup_feasible(KICKOFF, letter, rest):
            return [*found, KICKOFF]
        return found

    @cached
    def _sente_squares(self) -> dict[tuple[frozenset[str], bool], list[int]]:
        return {}

    # The set-up checks ask, for a piece set up on a square, whether the kick-off piece on
    # 5-F keeps a team-mate it can pass to. A piece changes the answer only on a square
    # that piece's passes reach (:meth:`_kickoff_targets`): elsewhere it blocks no pass,
    # is no receiver and narrows no pass's way, and gote's rows are counted, not placed
    # (:meth:`_gote_rows`). So each check is made once for all such squares, and once per
    # reached square (not once per kind of piece).

    @cached
    def _kickoff_reach(self) -> dict[str, tuple[str, tuple[int, ...]]]:
        return {}

    @cached
    def _kickoff_passes(self) -> dict[tuple[str, int, bool], bool]:
        return {}

    @cached
    def _open_passes(self) -> dict[int, bool]:
        return {}

    def _kickoff_targets(self, kicker: str) -> tuple[str, tuple[int, ...]]:
        """This board with ``kicker`` on 5-F and sente's goalkeeper on 5-K if it is still
        to set up (:meth:`_sente_setup_feasible` puts it there first), and the squares
        the kick-off's passes reach on it."""
        known = self._kickoff_reach.get(kicker)
        if known is None:
            board = self.board
            if "K" not in board:
                home = KING_HOME[SENTE]
                board = board[:home] + "K" + board[home + 1:]
            board = board[:KICKOFF] + kicker + board[KICKOFF + 1:]
            known = self._kickoff_reach[kicker] = (
                board, tuple(pass_targets(board, KICKOFF, KICKOFF)))
        return known

    @cached
    def _reached_from_kickoff(self) -> frozenset[int]:
        return frozenset(pass_targets(self.board, KICKOFF, KICKOFF))

    def _gote_may_set_up(self, i: int, piece: str) -> bool:
        """Does gote's ``piece`` on ``i`` leave the kick-off a receiver (reading R6)?

        :meth:`_kickoff_stays_open` of this board with ``piece`` on ``i``, from this
        board's passes and rows: a piece on a square the kick-off's passes reach blocks
        the passes beyond it (those with ``i`` on their way) and receives none; one
        elsewhere changes no pass. Its row has one free square and one piece due less,
        which leaves every pass's test of that row as it was (a pass with ``i`` on its
        way is blocked anyway)."""
        key = i if i in self._reached_from_kickoff else -1
        known = self._kickoff_passes.get(("", key, False))
        if known is None:
            board, rows = self.board, self._board_gote_rows
            known = self._kickoff_passes["", key, False] = any(
                t < SIZE and board[t].isupper() and (key < 0 or key not in _WAY_FROM_KICKOFF[t])
                and self._gote_can_leave_open(rows, t)
                for t in self._reached_from_kickoff)
        return known

    @cached
    def _board_gote_rows(self) -> list[tuple[list[int], int]]:
        """:meth:`_gote_rows` of this board."""
        return self._gote_rows(self.board)

    def _gote_rows(self, cells: list[str] | str) -> list[tuple[list[int], int]]:
        """Gote's set-up rows still to fill: (their free squares, the pieces still due there).
        The goalkeeper's square 5-A is not free: the goalkeeper goes there."""
        system = self.system or ("", "", "")
        out = []
        for row, group in zip(_GOTE_ROWS, system):
            pieces = [cells[i] for i in row]  # gote's pieces are the lower-case letters
            out.append(([i for i, c in zip(row, pieces) if c == EMPTY],
                        len(group) - sum(map(str.islower, pieces))))
        return out

    @staticmethod
    def _gote_can_leave_open(rows: list[tuple[list[int], int]], target: int) -> bool:
        """Can gote finish its set-up (its ``rows``, :meth:`_gote_rows`) leaving the
        kick-off's pass to ``target`` clear?"""
        way = _WAY_FROM_KICKOFF[target]
        return all(due <= len(free) - sum(1 for i in free if i in way) for free, due in rows)

    def _kickoff_stays_open(self, cells: list[str] | str) -> bool:
        """Reading R6 (gote's side): gote's set-up must leave the kick-off piece a
        team-mate it can pass to, which sente's set-up made possible (【配置】).

        The check on a board with gote's piece set up; the listing asks
        :meth:`_gote_may_set_up`, which says the same from this board's passes
        (tests/test_shogi_soccer_setup_checks.py)."""
        board = "".join(cells)
        rows = self._gote_rows(board)
        return any(t < SIZE and board[t] != EMPTY and side_of(board[t]) == SENTE
                   and self._gote_can_leave_open(rows, t)
                   for t in pass_targets(board, KICKOFF, KICKOFF))

    def _sente_setup_feasible(self, i: int, letter: str, rest: list[str]) -> bool:
        """Can sente finish setting up with a team-mate the kick-off can reach, after
        ``letter`` on ``i`` (``rest``: the pieces left to set up then, the goalkeeper aside)?

        【配置】「その駒がパス可能な地点に最低一つ、パスを受ける駒を配置しなければならない」: the
        kick-off piece stands on 5-F with at least one piece it can pass to. A receiver
        counts when gote's declared system can leave its pass clear (reading R6); gote's
        set-up is then held to leaving one clear (:meth:`_kickoff_stays_open`).
        """
        if self.board[KICKOFF] != EMPTY:
            return self._kickoff_can_pass(self.board[KICKOFF], i, letter, bool(rest))
        if i == KICKOFF:
            return self._kickoff_can_pass(letter, i, letter, bool(rest))
        return any(self._kickoff_can_pass(kicker, i, letter, len(rest) > 1)
                   for kicker in set(rest))

    def _kickoff_can_pass(self, kicker: str, i: int, letter: str, more_to_place: bool) -> bool:
        """With ``kicker`` on 5-F, sente's goalkeeper on 5-K and ``letter`` on ``i``: can
        the kick-off reach a receiver (``more_to_place``: a piece still to set up may be
        one)?"""
        board, targets = self._kickoff_targets(kicker)
        key = i if i != KICKOFF and i in targets else -1
        known = self._kickoff_passes.get((kicker, key, more_to_place))
        if known is None:
            if key >= 0:  # a piece the passes reach: a receiver, and in the way of others
                # (the passes with i on their way stop on it; the others reach as before)
                known = self._sente_pass_may_stay_open(i) or self._receivers_possible(
                    board, tuple(t for t in targets if t < SIZE and t != i
                                 and i not in _WAY_FROM_KICKOFF[t]), more_to_place)
            else:
                known = self._receivers_possible(board, targets, more_to_place)
            self._kickoff_passes[kicker, key, more_to_place] = known
        return known

    def _receivers_possible(self, board: str, targets: tuple[int, ...],
                            more_to_place: bool) -> bool:
        """Is one of the kick-off's ``targets`` on ``board`` a receiver whose pass gote can
        leave clear?"""
        for t in targets:
            if t >= SIZE:
                continue
            receiver = board[t].isupper() or (
                more_to_place and board[t] == EMPTY and t in _SETUP_SQUARES[SENTE])
            if receiver and self._sente_pass_may_stay_open(t):
                return True
        return False

    def _sente_pass_may_stay_open(self, target: int) -> bool:
        """:meth:`_gote_can_leave_open` in sente's set-up: gote's rows are as on this
        board whatever sente sets up (its rows are others), so once per target."""
        known = self._open_passes.get(target)
        if known is None:
            known = self._open_passes[target] = self._gote_can_leave_open(
                self._board_gote_rows, target)
        return known

    # ------------------------------------------------------------------ actions

    def legal_actions(self) -> Iterator[Action]:
        """Every legal action from here, each once (none once the game is decided).

        >>> from masume.rules.shogi_soccer import RULES
        >>> p = RULES.from_text("4k4/4P4/6N2/2B6/9/9/9/9/9/9/4K4 sente play 3-D - -")
        >>> sorted(p.notation(a) for a in p.legal_actions() if "パス" in str(a))
        ... # doctest: +NORMALIZE_WHITESPACE
        ['1-Bパス', '1-Fパス', '2-Cパス', '2-Eパス', '4-Cパス', '4-Eパス',
         '5-Bパス', '5-Fパス', '6-Gパス', '7-Hパス', '8-Iパス', '9-Jパス']
        """
        if self.outcome() is not None:
            return iter(())
        if self.stage == "system":
            return iter(_declarations())  # 1,501 of them: no generator in between
        if self.stage == "setup":
            return iter(self._placements_listed())  # a list: no generator in between
        return self._legal_actions()

    def _placements_listed(self) -> list[Action]:
        """The set-up's actions, in :meth:`_actions`'s order (piece kinds K, R, B, N, P,
        each on its squares in order), as one list."""
        out: list[Action] = []
        for letter, places in _PLACES_OF[self.turn]:
            squares = self._placement_squares(letter)
            if squares:
                out.extend(map(places.__getitem__, squares))
        return out

    def _legal_actions(self) -> Iterator[Action]:
        yield from self._actions()
        if self.stage == "kickoff-2":
            yield _END_TURN  # the second action is a "may" (【進行】)
        if self.stage in PLAY_STAGES:
            # 【勝敗】「反則が行われた場合に決定する」: either side's foul, declared by the players
            # (the table offers it as a choice: no piece moves).
            yield _FOULS[SENTE]
            yield _FOULS[GOTE]

    def _actions(self) -> Iterator[Action]:
        """The actions on the board (the checkmate search looks at these)."""
        stage = self.stage
        side = SIDES[self.turn]
        if stage == "system":
            yield from _declarations()
            return
        if stage == "setup":
            for letter in "KRBNP":
                for i in self._placement_squares(letter):
                    yield _PLACES[self.turn, letter, i]
            return
        board, ball, turn = self.board, self.ball, self.turn
        if stage == "kickoff":
            if ball < SIZE and board[ball] != EMPTY and side_of(board[ball]) == turn:
                kind = KIND_OF_LETTER[board[ball].upper()]
                for t in pass_targets(board, ball, ball):
                    if t < SIZE and board[t] != EMPTY and side_of(board[t]) == turn:
                        yield Pass(side, kind, NAMES[ball], NAMES[t])
            return
        for i, c in enumerate(board):
            if c == EMPTY or side_of(c) != turn:
                continue
            kind = KIND_OF_LETTER[c.upper()]
            origin = NAMES[i]
            if i == ball:
                for t in pass_targets(board, ball, i):
                    if t >= SIZE:
                        yield Shot(side, kind, origin, NAMES[t])
                    else:
                        yield Pass(side, kind, origin, NAMES[t])
            free = ball < SIZE and board[ball] == EMPTY and kind in ("rook", "bishop")
            free_ball = ball if free else -1
            for t in move_targets(board, ball, i):
                yield _move(side, kind, origin, NAMES[t])
                if free_ball >= 0 and free_ball in path_between(i, t):
                    # 【トラップ】「ボールの地点を越えて移動することが出来る」: a "may".
                    yield _move(side, kind, origin, NAMES[t], trap=False)

    def is_legal(self, action: object) -> bool:
        return self._why_illegal(action) is None

    def apply(self, action: object) -> Position:
        """The position after ``action``; :class:`IllegalAction` says why if it is not legal.

        >>> from masume.rules.shogi_soccer import RULES
        >>> p = RULES.from_text("4k4/4P4/6N2/2B6/9/9/9/9/9/9/4K4 sente play 3-D - -")
        >>> p.apply(p.parse_action("5-Bパス")).ball_holder()
        '5-B'
        >>> p.apply(Move("sente", "pawn", "5-B", "5-A"))
        Traceback (most recent call last):
        ...
        masume.rules.base.IllegalAction: only the ball holder may move onto an opponent, or ...
        """
        reason = self._why_illegal(action)
        if reason is not None:
            raise IllegalAction(reason)
        return self._apply(action)  # type: ignore[arg-type]

    def _apply(self, action: Action) -> Position:
        """The position after a legal ``action`` (no checks)."""
        if isinstance(action, Declare):
            return replace(
                self, system=action.system, stage="setup", turn=SENTE, last_target=-1, ejected_at=-1
            )
        if isinstance(action, Place):
            i = INDEX[action.square]
            letter = LETTER_OF_KIND[action.kind]
            letter = letter if self.turn == SENTE else letter.lower()
            board = self.board[:i] + letter + self.board[i + 1 :]
            stage, turn = self.stage, self.turn
            if sum(1 for c in board if c != EMPTY and side_of(c) == turn) == 11:
                stage, turn = ("setup", GOTE) if turn == SENTE else ("kickoff", SENTE)
            return replace(
                self, board=board, stage=stage, turn=turn, last_target=i, ejected_at=-1
            )
        if isinstance(action, Foul):
            return replace(self, result=(1 - SIDES.index(action.side), "foul"), ejected_at=-1)
        if isinstance(action, EndTurn):
            return replace(self, stage="play", turn=1 - self.turn, last_target=-1, ejected_at=-1)
        i = INDEX[action.origin]
        board, ball, result = self.board, self.ball, self.result
        ejected_at = -1
        if isinstance(action, Move):
            t = INDEX[action.target]
            piece, occupant = board[i], board[t]
            if ball == i:
                ball = t  # dribble
            elif (action.trap and ball != t and ball < SIZE and board[ball] == EMPTY
                  and piece in "BRbr" and ball in path_between(i, t)):
                ball = t  # trap
            cells = list(board)
            cells[i] = EMPTY
            cells[t] = piece
            board = "".join(cells)
            if occupant != EMPTY:
                ejected_at = t
                if occupant in "Kk":
                    result = (self.turn, "keeper-ejected")
        elif isinstance(action, Pass):
            t = INDEX[action.target]
            ball = t
        else:  # Shot
            t = INDEX[action.goal]
            ball = t
            result = (self.turn, "goal")
        stage, turn = self.stage, self.turn
        if stage == "kickoff":
            stage = "kickoff-2"
        else:
            stage, turn = "play", 1 - turn
        return replace(
            self,
            board=board,
            ball=ball,
            turn=turn,
            stage=stage,
            result=result,
            last_target=t,
            ejected_at=ejected_at,
        )

    # ------------------------------------------------------------------ why not

    def _why_illegal(self, action: object) -> str | None:
        if not isinstance(action, (Declare, Place, Move, Pass, Shot, EndTurn, Foul)):
            return f"{action!r} is not a shogi-soccer action"
        decided = self.outcome()
        if decided is not None:
            return f"the game is over: {decided}"
        side = SIDES[self.turn]
        if isinstance(action, Foul):
            if action.side not in SIDES:
                return f"a foul is committed by sente or gote, not {action.side!r}"
            if self.stage not in PLAY_STAGES:
                return "a foul is declared in play, from the kick-off on"
            return None
        if isinstance(action, EndTurn):
            if action.side != side:
                return f"it is {side}'s turn, not {action.side}'s"
            if self.stage != "kickoff-2":
                return ("only sente's second action after the kick-off pass may be left out "
                        "(【進行】); a turn is one action")
            return None
        if isinstance(action, Declare):
            if self.stage != "system":
                return "the system has already been declared"
            return system_problem(action.system)
        if self.stage == "system":
            return "gote must first declare its system (pieces per area)"
        if action.side != side:
            return f"it is {side}'s turn, not {action.side}'s"
        if isinstance(action, Place):
            return self._why_not_place(action)
        if self.stage == "setup":
            return f"{side} is still setting up: place a piece"
        i = INDEX.get(action.origin, SIZE)
        if i >= SIZE:
            return f"there is no square {action.origin!r}"
        c = self.board[i]
        if c == EMPTY:
            return f"there is no piece on {action.origin}"
        if side_of(c) != self.turn:
            return f"the piece on {action.origin} is {SIDES[side_of(c)]}'s"
        if KIND_OF_LETTER[c.upper()] != action.kind:
            return (f"the piece on {action.origin} is a {KIND_OF_LETTER[c.upper()]}, not a "
                    f"{action.kind}")
        if isinstance(action, Move):
            if self.stage == "kickoff":
                return "the game starts with the kick-off: a pass from 5-F to a team-mate"
            reason = self._why_not_move(i, action.target)
            if reason is None and not action.trap:
                t = INDEX[action.target]
                ball = self.ball
                if not (c in "BRbr" and ball < SIZE and self.board[ball] == EMPTY
                        and ball in path_between(i, t)):
                    return "only a bishop or rook running past a free ball may leave it (スルー)"
            return reason
        if self.ball != i:
            return f"the {action.kind} on {action.origin} does not have the ball"
        if isinstance(action, Shot):
            if self.stage == "kickoff":
                return "the kick-off must be a pass to a team-mate, not a shot"
            return self._why_not_shoot(i, action.goal)
        return self._why_not_pass(i, action.target)

    def _why_not_place(self, action: Place) -> str | None:
        if self.stage != "setup":
            return "the set-up is over: pieces are never put back on the board"
        letter = LETTER_OF_KIND.get(action.kind)
        if letter is None:
            return f"there is no piece called {action.kind!r}"
        i = INDEX.get(action.square, SIZE)
        if i >= SIZE:
            return f"there is no square {action.square!r}"
        if i in self._placement_squares(letter):
            return None
        side = self.turn
        name = SIDES[side]
        if self._count(side)[letter] >= FULL_SET[letter]:
            return f"all of {name}'s {action.kind}s are already on the board"
        if self.board[i] != EMPTY:
            return f"{action.square} is taken"
        if letter == "K":
            return f"the goalkeeper starts in front of its goal, on {NAMES[KING_HOME[side]]}"
        if i == KING_HOME[side]:
            return f"{action.square} is the goalkeeper's square"
        if side == SENTE and i == KICKOFF:
            return (
                "this kick-off piece could not be sure to reach a team-mate "
                "with the pieces left to set up"
            )
        if i not in _SETUP_SQUARES[side] and not (side == SENTE and i == KICKOFF):
            rows = ", ".join(RANK_LETTERS[r] for r in SETUP_RANKS[side])
            extra = " (and the kick-off piece on 5-F)" if side == SENTE else ""
            return (
                f"{name} sets up on the row of each area nearest its own end: "
                f"rows {rows}{extra}"
            )
        if side == GOTE:
            area = SETUP_RANKS[GOTE].index(RANK_OF[i])
            assert self.system is not None
            here = sum(1 for j in _row(RANK_OF[i]) if self.board[j] == letter.lower())
            if self.system[area].count(letter) > here:
                return ("this piece would leave sente's kick-off piece on 5-F no team-mate "
                        "to pass to (【配置】; reading R6)")
            return (
                f"the declared system has no more {action.kind}s for the "
                f"{('own area', 'midfield', 'opponent area')[area]} ({AREA_NAMES[area]})"
            )
        if self.board[KICKOFF] == EMPTY:
            return "keep a piece for the kick-off on 5-F and a team-mate it can pass to"
        return (
            "the kick-off piece on 5-F needs a team-mate it can pass to, "
            "on a line gote's declared system can leave clear; place one there"
        )

    def _pattern(self, i: int, moves: bool) -> list[int]:
        """Targets of the piece on ``i`` on an otherwise empty board."""
        lone = EMPTY * i + self.board[i] + EMPTY * (SIZE - i - 1)
        if moves:
            return move_targets(lone, i, i)
        return pass_targets(lone, i, i)

    def _describe(self, i: int, moves: bool) -> str:
        c = self.board[i]
        kind = c.upper()
        verb = "moves" if moves else "passes"
        if kind == "P":
            reach = "one square" if moves else "up to two squares"
            return f"a pawn {verb} {reach} forwards, backwards or sideways"
        if kind == "K":
            if i in PENALTY_AREA[side_of(c)]:
                reach = "one square" if moves else "up to two squares"
                return (f"in its penalty area the goalkeeper {verb} {reach} in any of the eight "
                        "directions")
            return f"outside its penalty area the goalkeeper {verb} like a pawn"
        if kind == "N":
            return f"a knight {verb} to the eight knight squares, jumping"
        line = "diagonally" if kind == "B" else "forwards, backwards or sideways"
        name = "bishop" if kind == "B" else "rook"
        return f"a {name} {verb} {line} along a clear line"

    def _why_not_move(self, i: int, target: str) -> str | None:
        t = INDEX.get(target, SIZE)
        if t >= SIZE:
            if target in ("goal-A", "goal-K"):
                return "no piece may enter a goal mouth"
            return f"there is no square {target!r}"
        if t in move_targets(self.board, self.ball, i):
            return None
        board, c = self.board, self.board[i]
        if t == i:
            return "a move must go somewhere"
        if t not in self._pattern(i, True):
            if c.upper() in "BR" and _on_line(c.upper(), i, t):
                return (
                    f"a {KIND_OF_LETTER[c.upper()]} crossing an area line must stop on the row "
                    "before it, then cross one row only (【大駒の移動】)"
                )
            return self._describe(i, True)
        if c.upper() != "N":
            for j in path_between(i, t):
                if board[j] != EMPTY:
                    return f"the way is blocked on {NAMES[j]}: only a knight jumps over pieces"
        occupant = board[t]
        if occupant != EMPTY and side_of(occupant) == side_of(c):
            return f"{target} is taken by a team-mate"
        if occupant != EMPTY:
            free = self.ball < SIZE and board[self.ball] == EMPTY
            if free and c in "BRbr" and self.ball in path_between(i, t):
                return "a piece that traps the ball may not eject an opponent in the same move"
            return (
                "only the ball holder may move onto an opponent, "
                "or a piece onto the opponent that holds the ball"
            )
        return f"the {KIND_OF_LETTER[c.upper()]} on {NAMES[i]} cannot move to {target}"

    def _why_not_pass(self, i: int, target: str) -> str | None:
        t = INDEX.get(target, SIZE)
        side = side_of(self.board[i])
        if t >= SIZE:
            if t == OWN_GOAL[side]:
                return "you may not play the ball into your own goal"
            if t == ATTACKED_GOAL[side]:
                return "to put the ball in the goal mouth, shoot (シュート)"
            return f"there is no square {target!r}"
        if t == i:
            return "a pass must go to another square"
        board = self.board
        if self.stage == "kickoff" and (board[t] == EMPTY or side_of(board[t]) != side):
            return "the kick-off pass must go to a team-mate"
        if t in pass_targets(board, self.ball, i):
            return None
        kind = board[i].upper()
        if t not in self._pattern(i, False):
            if kind in "BR" and _on_line(kind, i, t):
                reach = pass_reach(side, RANK_OF[i])
                rank = RANK_LETTERS[10 - reach if side == SENTE else reach]
                return (
                    f"from rank {NAMES[i][-1]} a {KIND_OF_LETTER[kind]}'s pass reaches forward "
                    f"only as far as rank {rank} (【大駒のパス】)"
                )
            return self._describe(i, False)
        for j in path_between(i, t):
            if board[j] != EMPTY and kind != "N":
                return f"the pass is blocked on {NAMES[j]}: only a knight passes over pieces"
        return f"the {KIND_OF_LETTER[kind]} on {NAMES[i]} cannot pass to {target}"

    def _why_not_shoot(self, i: int, goal: str) -> str | None:
        side = side_of(self.board[i])
        g = INDEX.get(goal, SIZE)
        if g != ATTACKED_GOAL[side]:
            return f"{SIDES[side]} shoots at {NAMES[ATTACKED_GOAL[side]]}"
        board = self.board
        targets = pass_targets(board, self.ball, i)
        if g in targets:
            return None
        lone = EMPTY * i + board[i] + EMPTY * (SIZE - i - 1)
        if g not in pass_targets(lone, i, i):
            return f"a shot follows the paths of a pass, and {self._describe(i, False)}"
        front = GOAL_FRONT[g]
        if board[front] == ("k" if side == SENTE else "K"):
            return f"the goalkeeper on {NAMES[front]} stops every shot"
        return "the shot is blocked: a shot follows a pass's path, which pieces stop"

    # ------------------------------------------------------------------ results

    def _threatens(self, attacker: int) -> bool:
        """Could ``attacker``, moving now, score or eject the opponent's goalkeeper?"""
        ball = self.ball
        if ball >= SIZE:
            return False
        board = self.board
        holder = board[ball]
        if holder == EMPTY:
            return False
        keeper = board.find("k" if attacker == SENTE else "K")
        if keeper < 0:
            return False
        if side_of(holder) == attacker:
            if ATTACKED_GOAL[attacker] in pass_targets(board, ball, ball):
                return True
            return keeper in move_targets(board, ball, ball)
        if ball != keeper:
            return False
        for j, c in enumerate(board):
            if c != EMPTY and side_of(c) == attacker and keeper in move_targets(board, ball, j):
                return True
        return False

    def _has_safe_continuation(self) -> bool:
        """Can the side to move finish its turn without a goal or ejection in reply?"""
        side = self.turn
        actions: Iterator[Action] = self._actions()
        if self.stage == "kickoff-2":
            actions = chain(actions, (_END_TURN,))
        for action in actions:
            after = self._apply(action)
            if after.result is not None:
                if after.result[0] == side:
                    return True
                continue
            if after.turn == side:
                if after._has_safe_continuation():
                    return True
            elif not after._threatens(after.turn):
                return True
        return False

    @cached
    def _checkmated(self) -> bool:
        if self.result is not None or self.stage not in PLAY_STAGES:
            return False
        if self._threatens(1 - self.turn):
            return not self._has_safe_continuation()
        return next(self._actions(), None) is None

    def is_checkmate(self) -> bool:
        """True when the side to move is in check (the opponent threatens to score or to
        eject its goalkeeper) and no action of its turn removes every such threat
        (【勝敗】: no 受け手 left), or when it has no action at all.

        >>> from masume.rules.shogi_soccer import RULES
        >>> RULES.from_text("4kp3/9/4R1p2/9/9/9/9/9/9/9/4K4 gote play 5-C - -").is_checkmate()
        True
        """
        return self._checkmated

    def is_check(self) -> bool:
        """True when the opponent, if it were to move, could score or eject the keeper."""
        if self.result is not None or self.stage not in PLAY_STAGES:
            return False
        return self._threatens(1 - self.turn)

    def wins_now(self) -> bool:
        """True when the side to move can score or eject the opponent's goalkeeper with its
        next action (a win in one): the threat :meth:`is_check` sees, for the side to move.

        >>> from masume.rules.shogi_soccer import RULES
        >>> RULES.from_text("3k5/9/4R4/9/9/9/9/9/9/9/4K4 sente play 5-C - -").wins_now()
        True
        >>> RULES.from_text("3k5/9/4R4/9/9/9/9/9/9/9/4K4 gote play 5-C - -").wins_now()
        False
        """
        if self.result is not None or self.stage not in ("kickoff-2", "play"):
            return False
        return self._threatens(self.turn)

    def score(self) -> dict[str, int]:
        return {
            "sente": int(self.ball == GOAL_A),
            "gote": int(self.ball == GOAL_K),
        }

    def outcome(self) -> Outcome | None:
        """None while the game goes on; else the winner and why.

        Reasons: "goal", "keeper-ejected", "checkmate", "resignation", "foul".
        """
        if self.result is not None:
            winner, reason = self.result
            return Outcome(None if winner is None else SIDES[winner], reason, self.score())
        if not self.play_out and self._checkmated:
            return Outcome(SIDES[1 - self.turn], "checkmate", self.score())
        return None

    def status(self) -> Status:
        side = SIDES[self.turn]
        highlights: dict[str, tuple[str, ...]] = {}
        if self.ejected_at >= 0:
            highlights["eject"] = (NAMES[self.ejected_at],)
        decided = self.outcome()
        number, per_turn = 1, 1
        if decided is not None:
            if self.ball >= SIZE:
                highlights["goal"] = (NAMES[self.ball],)
            if decided.reason == "goal":
                message = f"goal! {decided}"
            elif decided.reason == "checkmate":
                message = f"{side} is checkmated: {decided}"
                # The table shows whose goalkeeper is caught (the turn lights show the winner).
                keeper = self.board.find("K" if self.turn == SENTE else "k")
                if keeper >= 0:
                    highlights["checkmate"] = (NAMES[keeper],)
            else:
                message = str(decided)
        elif self.stage == "system":
            message = "gote: declare a system (pieces per area)"
        elif self.stage == "setup":
            placed = sum(self._count(self.turn).values())
            number, per_turn = placed + 1, 11
            squares = sorted(
                {i for letter in "KRBNP" for i in self._placement_squares(letter)}
            )
            highlights["setup"] = tuple(NAMES[i] for i in squares)
            message = f"{side} sets up: piece {placed + 1} of 11"
        elif self.stage in ("kickoff", "kickoff-2"):
            number, per_turn = (1, 2) if self.stage == "kickoff" else (2, 2)
            message = (
                "sente: kick-off pass from 5-F to a team-mate"
                if self.stage == "kickoff"
                else "sente, action 2 of 2"
            )
        else:
            message = f"{side} to move"
        if decided is None and self.is_check():
            keeper = self.board.find("K" if self.turn == SENTE else "k")
            highlights["check"] = (NAMES[keeper],)
            message += " (check)"
        if decided is None and self.play_out and self._checkmated:
            message += f" ({side} is checkmated)"
        return Status(
            to_move=side,
            action_number=number,
            actions_per_turn=per_turn,
            score=self.score(),
            message=message,
            highlights=highlights,
        )

    # ------------------------------------------------------------------ physical

    def layout(self) -> Mapping[str, tuple[str, ...]]:
        """Square -> piece names, bottom to top: ``sente-rook``, ``gote-pawn``, ``ball``...

        >>> from masume.rules.shogi_soccer import RULES
        >>> RULES.from_text("4k4/4P4/6N2/2B6/9/9/9/9/9/9/4K4 sente play 3-D - -").layout()["3-D"]
        ('ball', 'sente-bishop')
        """
        out: dict[str, tuple[str, ...]] = {}
        ball = self.ball
        for i, c in enumerate(self.board):
            if c != EMPTY:
                out[NAMES[i]] = _WITH_BALL[c] if i == ball else _ALONE[c]
        if self.ball >= SIZE or self.board[self.ball] == EMPTY:
            out[NAMES[self.ball]] = ("ball",)
        return out

    # ------------------------------------------------------------------ notation

    def parse_action(self, text: str) -> Action:
        """Read one action (see :mod:`.notation`); NotationError or IllegalAction if bad."""
        from .notation import parse_action

        return parse_action(self, text)

    def notation(self, action: Action) -> str:
        """The action as a record writes it here: the origin only when needed."""
        from .notation import format_action

        return format_action(self, action)

    def diagram(self) -> str:
        from .notation import diagram

        return diagram(self)

    def to_text(self) -> str:
        """The position on one line; ``RULES.from_text`` reads it back."""
        from .notation import position_text

        return position_text(self)

    def __str__(self) -> str:
        return self.to_text()


def _on_line(kind: str, i: int, t: int) -> bool:
    """Does ``t`` lie on one of the lines a rook (``R``) or bishop (``B``) on ``i`` uses?"""
    df = FILE_OF[t] - FILE_OF[i]
    dr = RANK_OF[t] - RANK_OF[i]
    if kind == "R":
        return df == 0 or dr == 0
    return abs(df) == abs(dr)


__all__ = ["OPTIONS", "PLAY_STAGES", "STAGES", "Position", "all_systems", "system_problem"]


#: A piece's letter -> its stack in a layout, alone or on the ball.
_ALONE: Final = {c: (f"{SIDES[side_of(c)]}-{KIND_OF_LETTER[c.upper()]}",)
                 for letter in KIND_OF_LETTER for c in (letter, letter.lower())}
_WITH_BALL: Final = {c: ("ball", *stack) for c, stack in _ALONE.items()}


@cache
def _declarations() -> tuple[Declare, ...]:
    """Every system gote may declare, as actions (made once: some fifteen hundred)."""
    return tuple(Declare(system) for system in all_systems())


#: Moves met so far: the generation lists the same ones again and again.
_MOVES: dict[tuple[str, str, str, str, bool], Move] = {}


def _move(side: str, kind: str, origin: str, target: str, trap: bool = True) -> Move:
    """``Move(side, kind, origin, target, trap)``, made once."""
    key = (side, kind, origin, target, trap)
    try:
        return _MOVES[key]
    except KeyError:
        made = _MOVES[key] = Move(side, kind, origin, target, trap)
        return made


#: Every set-up action, by (side, piece letter, square).
_PLACES: Final = {(side, letter, i): Place(SIDES[side], KIND_OF_LETTER[letter], NAMES[i])
                  for side in (SENTE, GOTE) for letter in "KRBNP" for i in range(SIZE)}
#: Per side, per piece letter in set-up order (K, R, B, N, P): its Place on each square.
_PLACES_OF: Final = tuple(
    tuple((letter, tuple(_PLACES[side, letter, i] for i in range(SIZE))) for letter in "KRBNP")
    for side in (SENTE, GOTE))
_END_TURN: Final = EndTurn("sente")
_FOULS: Final = (Foul("sente"), Foul("gote"))
