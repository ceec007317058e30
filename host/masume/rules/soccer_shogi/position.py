"""The Soccer Shogi position: an immutable value, its legal actions and what each leads to."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Union

from ..base import (
    IllegalAction,
    Legend,
    Light,
    NotationError,
    Outcome,
    Restart,
    Status,
    cached,
)
from . import footprints as _footprints
from .actions import STEP_ACTIONS, Action, Jump, Kick, Pass, Step, Take
from .geometry import (
    _ALONE,
    _PITCH_NAMED,
    _WITH_BALL,
    ACTIVE,
    ALL_GOALS,
    AREA_SQUARES,
    BB_AREAS,
    BB_PITCH,
    BB_QUIET,
    BB_SQUARES,
    BB_STEPS,
    BLUE,
    CORNER_SHOT_GUARD,
    EMPTY,
    FILES,
    GOAL_SQUARES,
    JUMPS,
    KEEPER_AREA,
    PIECE_CHARS,
    PIECE_NAMES,
    PITCH,
    QUIET_SQUARES,
    QUIET_STEPS,
    RAYS,
    RED,
    RESTING,
    SANDWICH_LINES,
    SIDES,
    SQUARE_INDEX,
    SQUARE_NAMES,
    STEPS,
    _index,
    _side_of,
    _square,
    _start_cells,
    active_squares,
    empty_and_active,
    position_sets,
)

# --------------------------------------------------------------------------- options


@dataclass(frozen=True)
class Options:
    """Named rule options (RULES.start keyword arguments); defaults follow the source text."""

    #: Goals that win the match (the source: "先に2点取ったら勝ち").
    goals_to_win: int = 2
    #: Published clarification: the keeper may not jump.
    keepers_cannot_jump: bool = False
    #: Published clarification: a keeper who takes the ball on the first action must
    #: pass or leave the keeper area on the second. Rule 1-4 already says so
    #: (「ボールを持ったままキーパーエリアから出るか、ボールを蹴ってキーパーエリアからボールを
    #: 出さなければなりません」), so the option restricts nothing more; it is kept so that
    #: positions and records naming it still read (docs: "Rule options").
    keeper_first_action_no_pass: bool = False

    @classmethod
    def make(cls, **options: Any) -> Options:
        known = {f for f in cls.__dataclass_fields__}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ValueError(
                f"unknown soccer-shogi option(s) {', '.join(unknown)}; "
                f"known: {', '.join(sorted(known))}"
            )
        made = cls(**options)
        if not isinstance(made.goals_to_win, int) or made.goals_to_win < 1:
            raise ValueError("goals_to_win must be a whole number of at least 1, not "
                             f"{made.goals_to_win!r}")
        for name in ("keepers_cannot_jump", "keeper_first_action_no_pass"):
            if not isinstance(getattr(made, name), bool):
                raise ValueError(f"{name} must be true or false")
        return made


# --------------------------------------------------------------------------- position

#: ``functools.cached_property`` without its lock (``base.cached``).
_cached = cached


#: Each chain met so far, as ``Position._chains`` lists it (the Jump, its start and end
#: squares, whether the jumper has the ball there), by its path (written as an int),
#: the square the ball was taken from and whether the jumper ends with the ball:
#: actions are immutable, so are these.
_JUMPS: dict[int, tuple[Jump, int, int, bool]] = {}
#: The same chains where the ball changes no hands, by their path alone: those of a
#: player without the ball, and those of its holder (:func:`_still_chains` reads them
#: with no key to make); emptied with ``_JUMPS``.
_STILL_JUMPS: tuple[dict[int, tuple[Jump, int, int, bool]], ...] = ({}, {})
#: The chains that take the ball and end with it, by their path alone, per square the
#: ball was taken from (the last: a free ball; ``_TAKEN_JUMPS[victim]`` with -1 for
#: none): :func:`_ball_chains` reads them; emptied with ``_JUMPS``.
_TAKEN_JUMPS: tuple[dict[int, tuple[Jump, int, int, bool]], ...] = tuple(
    {} for _ in range(51))

#: Per pitch square, each step from it: (target, the Step, (square, target)).
_STEP_TABLE: dict[int, tuple[tuple[int, Step, tuple[int, int]], ...]] = {
    square: tuple((target, action, (square, target)) for target, action in steps)
    for square, steps in STEP_ACTIONS.items()
}

#: Per pitch square, per set of its steps' targets: the Steps there, in ``_STEP_TABLE``'s
#: order; filled by :func:`_plain_steps`.
_PLAIN_STEPS: dict[int, dict[int, tuple[Step, ...]]] = {square: {} for square in PITCH}

#: ``BB_STEPS`` and ``_PLAIN_STEPS`` read by index (all 50 squares; none off the pitch).
_STEPS_AT: tuple[int, ...] = tuple(BB_STEPS.get(square, 0) for square in range(50))
_PLAIN_STEPS_AT = tuple(_PLAIN_STEPS.get(square, {}) for square in range(50))


def _plain_steps(square: int, targets: int) -> tuple[Step, ...]:
    """The steps from ``square`` to the squares of ``targets`` (a subset of its steps'
    targets, at most 2**8 a square: a table of constants, made as it is read)."""
    made = _PLAIN_STEPS[square][targets] = tuple(
        action for target, action, _ in _STEP_TABLE[square] if targets & BB_SQUARES[target])
    return made


#: Per family (orthogonal, diagonal), per square (all 50): its hops (jumped, landing).
_FAMILY_HOPS: tuple[tuple[tuple[tuple[int, int], ...], ...], ...] = tuple(
    tuple(JUMPS[s][family] if s in JUMPS else () for s in range(50)) for family in (0, 1))

#: Per square (all 50): its hops of both families.
_ALL_HOPS = tuple(orthogonal + diagonal for orthogonal, diagonal in zip(*_FAMILY_HOPS))
#: Every square's byte 127 (126): added to counts of one byte a square, the top bit set
#: where the count is one or more (two or more).
_ONE_OR_MORE, _TWO_OR_MORE = 127 * sum(BB_SQUARES), 126 * sum(BB_SQUARES)
#: The squares of both keeper areas.
BB_BOTH_AREAS = BB_AREAS[0] | BB_AREAS[1]
#: Per square of the ball: the squares of plain movers (quiet, not the ball's), as flags.
_PLAIN_FROM: tuple[bytes, ...] = tuple((BB_QUIET & ~BB_SQUARES[ball]).to_bytes(50, "little")
                                       for ball in range(50))
#: Per square of the ball: the quiet squares, and the keeper areas' squares, but that one
#: (``_QuickTest``'s free squares are the empty ones of these).
_QUIET_BUT = tuple(BB_QUIET & ~BB_SQUARES[ball] for ball in range(50))
_AREAS_BUT = tuple(BB_BOTH_AREAS & ~BB_SQUARES[ball] for ball in range(50))
#: A step's flag (``_QuickTest.step_flags``): legal, or not, whatever the mover's verdict.
_LEGAL, _NOT_LEGAL = 3, 2
#: Per square of the ball: what the quick test reads by it (``_QUIET_BUT``, ``_AREAS_BUT``,
#: ``_PLAIN_FROM``).
_BALL_READS = tuple(zip(_QUIET_BUT, _AREAS_BUT, _PLAIN_FROM))
#: The quiet squares (rule 1-4 counts nothing there).
_QUIET = frozenset(QUIET_SQUARES)
#: Per square (all 50): the quiet squares a step from it reaches.
_QUIET_STEPS_AT = tuple(steps & BB_QUIET for steps in _STEPS_AT)
#: Per side, the codes of its players (active, resting).
_MINE = ((ACTIVE[0], RESTING[0]), (ACTIVE[1], RESTING[1]))
#: Per side, its keeper area's three squares (they are consecutive) as a slice of the
#: cells; and per side, the number of its players in an area by that slice (the cell
#: codes of its squares, 0-4 each): rule 1-4's counts, one lookup an area.
_AREA_SLICES = tuple(slice(squares[0], squares[-1] + 1) for squares in AREA_SQUARES)
assert all(tuple(range(50))[cut] == squares for cut, squares in zip(_AREA_SLICES, AREA_SQUARES))
_IN_AREA: tuple[dict[tuple[int, ...], int], ...] = tuple(
    {(a, b, c): (a in mine) + (b in mine) + (c in mine)
     for a in range(5) for b in range(5) for c in range(5)} for mine in _MINE)
#: Per side, what ``_QuickTest`` reads by it: ``_IN_AREA``, the slices of its area and the
#: opponent's, its codes (``_MINE``), its keeper area and the opponent's.
_SIDE_READS = tuple((_IN_AREA[me], _AREA_SLICES[me], _AREA_SLICES[1 - me], _MINE[me],
                     KEEPER_AREA[me], KEEPER_AREA[1 - me]) for me in (BLUE, RED))
#: No square where a move closes a sandwich (``_QuickTest._closers`` where no opponent
#: holds the ball: read, never changed).
_NO_CLOSERS: dict[int, int] = {}
#: No square flagged (``bytes`` of 50 zeros).
_NO_FLAGS = bytes(50)
#: ``_QuickTest.mover_steps``' flags and verdict where nothing is decided.
_NO_VERDICT: tuple[bytes, bool | None, int] = (_NO_FLAGS, None, -1)
#: What a position's pickled or copied state leaves out (``Position.__getstate__``).
_NOT_COPIED = frozenset(("_hash", "_identities"))

#: Per pitch square, per square a kick from it may reach: (the Kick, the Kick free).
_KICKS: dict[int, dict[int, tuple[Kick, Kick]]] = {
    frm: {target: (Kick(SQUARE_NAMES[frm], SQUARE_NAMES[target]),
                   Kick(SQUARE_NAMES[frm], SQUARE_NAMES[target], free=True))
          for ray in RAYS[frm] for target in ray}
    for frm in PITCH
}


def _kick_ray(frm: int, ray: tuple[int, ...]) -> tuple[
        tuple[tuple[int, int, Kick, Kick], ...], tuple[int, int, int, Kick] | None]:
    """A ray of ``_KICK_RAYS``: its pitch squares, up to a goal, each as (the square, the
    side whose keeper area it is in or -1, the Kick, the Kick free); and the goal it ends
    in as (the square, the side whose goal it is, the square guarding a shot from a
    corner there or -1 (rule 2-2), the Kick), or None."""
    squares: list[tuple[int, int, Kick, Kick]] = []
    for target in ray:
        kick, free_kick = _KICKS[frm][target]
        for goal in (BLUE, RED):
            if target in GOAL_SQUARES[goal]:
                return tuple(squares), (target, goal, CORNER_SHOT_GUARD.get((frm, target), -1),
                                        kick)
        area = BLUE if target in KEEPER_AREA[BLUE] else RED if target in KEEPER_AREA[RED] \
            else -1
        squares.append((target, area, kick, free_kick))
    return tuple(squares), None


#: Per pitch square, its kick rays (``geometry.RAYS``), as :func:`_kick_ray` makes them.
_KICK_RAYS = {frm: tuple(_kick_ray(frm, ray) for ray in RAYS[frm]) for frm in PITCH}

#: A kick line (see :func:`_kick_line`): its pitch squares as a set, whether its squares
#: rise (by index), per square that stops the ball (all 50; -1: none, the line's end) the
#: free kicks before it and the pass to a team-mate there, and the shot at its end.
_KickLine = tuple[int, bool, tuple[tuple[Kick, ...], ...],
                  tuple[tuple[Kick, bool] | None, ...], tuple[Kick, int] | None]


def _kick_line(side: int, frm: int, squares: tuple[tuple[int, int, Kick, Kick], ...],
               shot: tuple[int, int, int, Kick] | None) -> _KickLine:
    """A ray of ``_KICK_RAYS`` for a kick of ``side`` from ``frm``, as ``_generated`` reads
    it: the first occupied square found from the set of the ray's squares, all the ray's
    kicks up to there are read in one go. Per stopping square, the free kicks before it
    (not into the own keeper area from it: rule 1-4) and the pass to a team-mate there
    as (the Kick, whether into the own keeper area), None where a kick from the own area
    may not end there; per ray, the shot at its end as (the Kick, the square guarding a
    corner shot or -1) where it is into the opponent's goal, else None (``_kicks``)."""
    stays = side if frm in KEEPER_AREA[side] else 2
    frees: list[tuple[Kick, ...]] = [()] * 51  # [50], read as [-1]: no square stops the ball
    passes: list[tuple[Kick, bool] | None] = [None] * 50
    free: list[Kick] = []
    for target, area, kick, free_kick in squares:
        frees[target] = tuple(free)
        if area != stays:
            passes[target] = (kick, area == side)
            free.append(free_kick)
    frees[50] = tuple(free)
    bb = sum(BB_SQUARES[target] for target, _, _, _ in squares)
    rising = len(squares) < 2 or squares[0][0] < squares[1][0]
    on_goal = None
    if shot is not None and shot[1] != side:
        on_goal = (shot[3], shot[2])
    return bb, rising, tuple(frees), tuple(passes), on_goal


#: Per side, per pitch square: its kick lines (:func:`_kick_line`), in ``_KICK_RAYS``' order.
_KICK_LINES: tuple[dict[int, tuple[_KickLine, ...]], ...] = tuple(
    {frm: tuple(_kick_line(side, frm, squares, shot) for squares, shot in rays)
     for frm, rays in _KICK_RAYS.items()} for side in (BLUE, RED))

PLAY, TAKE, GOAL, OVER = "play", "take", "goal", "over"

#: Where Soccer Shogi's pieces stand: the pitch and the goals (``Position.kept_on``).
_KEPT_ON = frozenset(SQUARE_NAMES[i] for i in (*PITCH, *sorted(ALL_GOALS)))


class _Effect:
    """What an action does to the pieces, before the turn rules are applied.

    Kept as a change of the position's cells (the mover's two squares, the player
    a steal turns over), the new cells made only when asked for (``cells``): the
    quick test judges most actions on the change alone."""

    __slots__ = ("_cells", "action", "ball", "base", "flipped", "goal", "keepers",
                 "mover_from", "mover_to", "side")

    def __init__(self, action: Action, base: tuple[int, ...], ball: int,
                 keepers: tuple[int, int], flipped: tuple[int, ...], goal: bool,
                 mover_from: int, mover_to: int, side: int) -> None:
        self.action = action
        self.base = base  # the cells before the action
        self.ball = ball
        self.keepers = keepers
        self.flipped = flipped  # squares turned over by a jump steal
        self.goal = goal  # the ball went into the opponent's goal
        self.mover_from = mover_from  # -1 for a kick
        self.mover_to = mover_to
        self.side = side  # the mover's
        self._cells: tuple[int, ...] | None = None

    @property
    def cells(self) -> tuple[int, ...]:
        """The cells after the action."""
        if self._cells is None:
            if self.mover_from < 0:  # a kick: only the ball moves
                self._cells = self.base
            else:
                new = list(self.base)
                new[self.mover_from] = EMPTY
                new[self.mover_to] = ACTIVE[self.side]
                for square in self.flipped:
                    new[square] = RESTING[1 - self.side]
                self._cells = tuple(new)
        return self._cells


#: What a legal action the full test judged leads to, as generated: the position, or the
#: effect of a second action the full test found legal (``Position.apply`` makes the
#: position from it). An action the quick test found legal has none: ``apply`` makes its
#: effect from the action itself.
_Found = Union["Position", _Effect]

#: The sides' colours, and how the highlights of ``status()`` show.
LEGEND = Legend(
    sides={"blue": (0, 90, 255), "red": (255, 30, 0)},
    highlights={
        "flip": Light((255, 200, 0), "blink", label="turn over"),  # players a steal turned over
        "goal": Light((255, 255, 255), "blink"),  # the ball in a goal: set up again
        "take": Light((0, 200, 200), label="one takes the ball"),  # the sandwiching players
        "sandwich": Light((0, 200, 200)),  # the sandwiched players
    },
)


@dataclass(frozen=True, repr=False)
class Position:
    """A moment of a Soccer Shogi match. Immutable and hashable.

    Build one with ``RULES.start()`` or ``RULES.from_text(...)``. Fields are
    internal codes (square indices); use the methods for names.

    >>> from masume.rules.soccer_shogi import RULES
    >>> position = RULES.start(first="red")
    >>> position.status().to_move, position.ball_square
    ('red', 'C4')
    """

    game: ClassVar[str] = "soccer-shogi"
    sides: ClassVar[tuple[str, ...]] = SIDES
    legend: ClassVar[Legend] = LEGEND

    cells: tuple[int, ...]  # 50 cell codes: EMPTY, ACTIVE[side], RESTING[side]
    ball: int  # square of the ball (on a holder, on the ground, or in a goal)
    side: int  # BLUE or RED: whose action it is
    done: int  # actions the side to move has made in this turn (0, 1 or 2)
    phase: str = PLAY  # PLAY, TAKE (a sandwich to resolve), GOAL (restart due), OVER
    keepers: tuple[int, int] = (_index(2, 8), _index(2, 1))  # each side's keeper square
    entered: int = -1  # a non-keeper that entered its own keeper area on action 1
    score: tuple[int, int] = (0, 0)
    resigned: int = -1
    flipped: tuple[int, ...] = ()  # squares just turned over by a steal (to highlight)
    options: Options = field(default_factory=Options)

    def __post_init__(self) -> None:
        # The sets every listing reads, kept with the position as python-chess keeps its
        # bitboards in the Board: made here for a position built from its fields (a start,
        # a text), carried from the parent by ``apply`` (``_carry_sets``).
        made = self.__dict__
        made["_empty"], made["_active_squares"] = empty_and_active(self.cells, self.side)
        made["_other_active"] = active_squares(self.cells, 1 - self.side)

    def __repr__(self) -> str:
        return f"Position({self.to_text()!r})"

    def __hash__(self) -> int:
        # The dataclass's hash (of all fields), computed once: positions are dict
        # keys throughout the tracker's search.
        try:
            hashed: int = self.__dict__["_hash"]
            return hashed
        except KeyError:
            value = self.__dict__["_hash"] = hash((
                self.cells, self.ball, self.side, self.done, self.phase, self.keepers,
                self.entered, self.score, self.resigned, self.flipped, self.options,
            ))
            return value

    def __getstate__(self) -> dict[str, Any]:
        # Not the cached hash (a string's hash differs from one process to another),
        # nor the legal actions' ids (a copy's actions are other objects).
        return {k: v for k, v in self.__dict__.items() if k not in _NOT_COPIED}

    # ------------------------------------------------------------- reading

    @property
    def to_move(self) -> str:
        return SIDES[self.side]

    @property
    def ball_square(self) -> str:
        return SQUARE_NAMES[self.ball]

    def ball_holder(self) -> str | None:
        """The side whose player holds the ball, or None for a free ball."""
        cell = self.cells[self.ball]
        return SIDES[_side_of(cell)] if cell else None

    def piece_at(self, square: str) -> str | None:
        """``blue``, ``red``, ``blue-rest``, ``red-rest`` or None (the ball is not a player)."""
        return PIECE_NAMES.get(self.cells[_square(square)])

    def keeper(self, side: str) -> str:
        """The square of ``side``'s keeper (it may stand outside its keeper area)."""
        return SQUARE_NAMES[self.keepers[SIDES.index(side)]]

    def players(self, side: str) -> tuple[str, ...]:
        s = SIDES.index(side)
        return tuple(
            SQUARE_NAMES[i] for i in PITCH if self.cells[i] in (ACTIVE[s], RESTING[s])
        )

    def layout(self) -> dict[str, tuple[str, ...]]:
        """Square name -> piece names, bottom to top (the ball lies under its holder).

        >>> from masume.rules.soccer_shogi import RULES
        >>> RULES.start().layout()["C5"], RULES.start().layout()["C1"]
        (('ball', 'blue'), ('red',))
        """
        cells, ball = self.cells, self.ball
        out: dict[str, tuple[str, ...]] = {
            name: _ALONE[cell] for i, name in _PITCH_NAMED if (cell := cells[i])}
        # The ball: under its holder (in place, so the order stays the pitch's), or alone last.
        out[SQUARE_NAMES[ball]] = _WITH_BALL[cells[ball]]
        return out

    def kept_on(self) -> frozenset[str]:
        """``KeepsPieces`` (masume.rules.base): no action takes a player or the ball off
        the board or puts one on, and they stand on the pitch or, the ball, in a goal
        (docs/rules/soccer-shogi.md: a steal turns its victim over, 3-2 "奪われた選手ゴマは
        裏返して"; a goal sets the same pieces up again, "初期状態に戻してゲームを再開します";
        players never enter a goal, 1-5 "ここには選手ゴマは入れません")."""
        return _KEPT_ON

    def footprint(self, action: Action) -> frozenset[str] | None:
        """The squares whose stack ``action`` changes (``KnowsFootprints``; footprints.py)."""
        return _footprints.footprint(self, action)

    def actions_changing(self, squares: frozenset[str]) -> Iterator[Action]:
        """The legal actions that may change every one of ``squares`` (footprints.py)."""
        return _footprints.actions_changing(self, squares)

    def outcome(self) -> Outcome | None:
        goals = self.options.goals_to_win
        if self.resigned < 0 and self.score[0] < goals and self.score[1] < goals:
            return None  # the common case, asked once an action: nothing built
        score = {SIDES[0]: self.score[0], SIDES[1]: self.score[1]}
        if self.resigned >= 0:
            return Outcome(SIDES[1 - self.resigned], "resignation", score)
        for s in (BLUE, RED):
            if self.score[s] >= self.options.goals_to_win:
                return Outcome(SIDES[s], "goals", score)
        return None

    def status(self) -> Status:
        """Whose action, which of the two, the score, a message and squares to light.

        >>> from masume.rules.soccer_shogi import RULES
        >>> RULES.start().status().message
        'blue, action 1 of 2'
        """
        score = {SIDES[0]: self.score[0], SIDES[1]: self.score[1]}
        who = self.to_move
        highlights: dict[str, tuple[str, ...]] = {}
        if self.flipped:
            highlights["flip"] = tuple(SQUARE_NAMES[i] for i in self.flipped)
        number = min(self.done + 1, 2)
        outcome = self.outcome()
        if outcome is not None:
            winner = SIDES.index(outcome.winner or SIDES[0])
            tally = f"{self.score[winner]}-{self.score[1 - winner]}"
            message = f"{outcome.winner} wins {tally} ({outcome.reason})"
            if self.phase == OVER and self.cells[self.ball] == EMPTY and self.ball in ALL_GOALS:
                highlights["goal"] = (self.ball_square,)
            return Status(who, number, 2, score, None, message, highlights)
        if self.phase == GOAL:
            scorer = SIDES[1 - self.side]
            setup = Position._start(self.side, self.score, self.options)
            highlights = {
                "goal": (self.ball_square,),
                "setup": tuple(sorted(setup.layout(), key=SQUARE_INDEX.__getitem__)),
            }
            message = (
                f"goal! {scorer} scores ({self.score[0]}-{self.score[1]}); "
                f"{who} kicks off: set the pieces up and restart"
            )
            return Status(who, 1, 2, score, None, message, highlights)
        if self.phase == TAKE:
            receivers, run = _sandwich(self.cells, self.ball, self.side)
            highlights["take"] = tuple(SQUARE_NAMES[i] for i in receivers)
            highlights["sandwich"] = tuple(SQUARE_NAMES[i] for i in run)
            choices = " or ".join(SQUARE_NAMES[i] for i in receivers)
            message = (
                f"{who} sandwiches {self.ball_square}: move the ball to {choices} "
                f"and turn the sandwiched pieces over"
            )
            return Status(who, max(self.done, 1), 2, score, None, message, highlights)
        return Status(who, number, 2, score, None, f"{who}, action {number} of 2", highlights)

    # ------------------------------------------------------------- actions

    def legal_actions(self) -> Iterator[Action]:
        """Every legal action, each once.

        A chain of jumps can wander (the source's own example revisits squares),
        so only one chain per distinct result is listed: the shortest.
        :meth:`is_legal` and :meth:`apply` accept any legal path.

        >>> from masume.rules.soccer_shogi import RULES
        >>> len(list(RULES.start().legal_actions())) > 0
        True
        """
        return iter(self._generated[0])

    def is_legal(self, action: object) -> bool:
        if self._index(action) >= 0:
            return True
        if isinstance(action, Jump):
            try:
                self._apply_jump_path(action)
            except (IllegalAction, NotationError, TypeError):
                return False
            return True
        return False

    def apply(self, action: Action) -> Position:
        """The position after ``action``; IllegalAction says why it is not allowed."""
        index = self._index(action)
        if index >= 0:
            found = self._generated[1].get(index)
            if isinstance(found, Position):
                return found
            if isinstance(found, _Effect):  # a second action the full test found legal
                child = self._resolve(found)[0]
                assert child is not None
                return child
            # An action the quick test found legal: made now from the action, and not
            # kept here. A kept child keeps the children applied from it: a game's
            # positions then held every position a search or the tracker ever made (a
            # million objects after 30 moves against the computer; 31,000 without; the
            # bench's figures equal).
            return self._quickly_legal_child(self._quick_effect(action))
        if isinstance(action, Jump):
            return self._apply_jump_path(action)
        raise IllegalAction(f"{action}: {self._why_illegal(action)}")

    def _quick_effect(self, action: Action) -> _Effect:
        """The effect of a legal action the quick test found legal (a Step, a Kick or a
        Jump: ``_generated`` keeps nothing else for it)."""
        if isinstance(action, Step):
            return self._step_effect(SQUARE_INDEX[action.frm], SQUARE_INDEX[action.to], action)
        if isinstance(action, Kick):  # the ball ends where the kick goes
            return self._kick_effect(action, SQUARE_INDEX[action.to])
        assert isinstance(action, Jump)
        # The jumper ends with the ball if it had it, took it from its holder on the way,
        # or landed on it where it lay free.
        ball, path = self.ball, action.path
        square = SQUARE_INDEX[path[0]]
        has_ball = ball == square or action.steal > 0 or (
            self.cells[ball] == EMPTY and SQUARE_NAMES[ball] in path)
        return self._jump_effect(action, square, SQUARE_INDEX[path[-1]], has_ball)

    @property
    def _children(self) -> dict[Action, Position]:
        """Legal action -> resulting position, every one made."""
        return {action: self.apply(action) for action in self._generated[0]}

    def _index(self, action: object) -> int:
        """Where a legal action is in :meth:`_generated` (-1: not legal). An action
        taken from :meth:`legal_actions` is found by identity, without hashing (a
        playout applies one action a position); any other by equality."""
        try:
            return self._identities.index(id(action))
        except ValueError:
            pass
        try:
            return self._legal.get(action, -1)
        except TypeError:  # not hashable, so not an action
            return -1

    @_cached
    def _identities(self) -> list[int]:
        """``id()`` of each legal action, in order: searched in C (``list.index``)."""
        return list(map(id, self._generated[0]))

    @_cached
    def _legal(self) -> dict[object, int]:
        """Legal action -> its index in :meth:`_generated`; made when an action is first
        looked up by equality, not when they are only listed (hashing the actions is a
        fair part of listing them)."""
        return {action: index for index, action in enumerate(self._generated[0])}

    @_cached
    def _generated(self) -> tuple[list[Action], dict[int, _Found]]:
        """The legal actions in the order of :meth:`_effects`, and by index, for each one
        the full test judged, the position it leads to or its effect (a second action's,
        see :meth:`_full_test`); an action the quick test found legal has no entry:
        :meth:`apply` makes it from the action (:meth:`_quick_effect`)."""
        score, goals = self.score, self.options.goals_to_win
        # (outcome()'s common case inlined: a position in play, no game over)
        if self.phase != PLAY or self.resigned >= 0 or score[0] >= goals or score[1] >= goals:
            if self.phase == OVER or self.outcome() is not None:
                return [], {}
            if self.phase == GOAL:
                return [Restart()], {0: Position._start(self.side, score, self.options)}
            # the Take
            every, legal = self._take_variants()
            # Should no choice let the turn go on, the steal still happens (docs: "Pass").
            chosen = legal or every
            return list(chosen), dict(enumerate(chosen.values()))
        actions: list[Action] = []
        found: dict[int, _Found] = {}
        # The step flags of the movers that are not plain, and their verdicts (``mover_steps``)
        mover_verdicts: dict[int, tuple[bytes, bool | None, int]] = {}
        add_action = actions.append
        ball = self.ball
        # _quick_test, inlined: only an opponent holding the ball can be sandwiched
        closers = _closing_squares(self.cells, ball, self.side) \
            if self.cells[ball] == ACTIVE[1 - self.side] else _NO_CLOSERS
        quick = None if closers is None else _QuickTest(self, closers)
        if quick is None:  # a sandwich on the board: the full test for every step
            for square, target, action, _, _ in self._judged_steps(quick):
                made = self._full_test(self._step_effect(square, target, action))
                if made is not None:
                    found[len(actions)] = made
                    add_action(action)
        else:  # _judged_steps, inlined: the hottest loop
            cells, verdict_of = self.cells, quick.verdict
            plain_from, plain_step = quick.plain_from_flags, quick.plain_step
            plain_steps, keeper = b"", self.keepers[self.side]
            step_sets = quick.step_sets
            step_legal, step_open = step_sets if step_sets is not None else (0, -1)
            mover_decided, keeper_decided = step_sets is not None, plain_step is not None
            second, me = self.done != 0, self.side
            extend_actions = actions.extend
            plain_to_set, empty = quick._plain_to, self._empty
            for square in self._active_squares:
                # A plain mover (the keeper too, outside its area) whose steps its class
                # decides but those to a few targets (``step_sets``' second set: the free
                # ball's square, where a sandwich may close; the keeper's into an area):
                # those judged first; where none needs the full test, its legal steps in
                # one go, from the set of their targets (``_plain_steps``). (A plain mover
                # does not hold the ball.) The others (a player in its own area, the ball's
                # holder) alike, from the sets of their flags (``mover_steps``).
                reach = _STEPS_AT[square]
                if plain_from[square]:
                    # (at the second action the keeper's steps are judged as any plain
                    # mover's: only the first's lets it enter its area unlike the others)
                    if square != keeper or second:
                        targets = reach & step_legal
                        if not step_open:  # (mostly: all its steps decided, in one go)
                            try:
                                extend_actions(_PLAIN_STEPS_AT[square][targets])
                            except KeyError:
                                extend_actions(_plain_steps(square, targets))
                            continue
                        opened, decided = reach & step_open, mover_decided
                    else:  # its steps to plain_to's squares have the verdict plain_step
                        targets = reach & plain_to_set
                        opened = reach & empty ^ targets
                        if not plain_step:
                            targets = 0
                        elif opened and (quick.own or quick.plenty):
                            # Into its area where the position owes nothing: legal where
                            # a team-mate stands there (the keeper may step back out) or
                            # a quiet step is left whatever the move (``plenty``).
                            into = opened & quick._areas_free & BB_AREAS[me]
                            targets |= into
                            opened ^= into
                        decided = keeper_decided
                else:
                    to_flags, sure, lone, legal_to, unflagged = quick.mover_steps(square)
                    mover_verdicts[square] = to_flags, sure, lone
                    targets, opened = reach & legal_to, reach & unflagged
                    decided = unflagged >= 0
                if decided:
                    while opened:
                        low = opened & -opened
                        target = (low.bit_length() - 1) >> 3
                        # a dribble carries the ball; a step onto the free ball takes it
                        verdict = verdict_of(
                            square, target, target if ball == square or ball == target else ball)
                        if verdict is None:
                            break
                        if verdict:
                            targets |= low
                        opened ^= low
                    else:
                        try:
                            extend_actions(_PLAIN_STEPS_AT[square][targets])
                        except KeyError:
                            extend_actions(_plain_steps(square, targets))
                        continue
                # A mover's steps whose verdict its class decides (see ``step_flags``):
                # one flag read a step.
                if plain_from[square]:
                    if square == keeper:
                        to_flags = quick.plain_to_flags
                    else:
                        to_flags = plain_steps = plain_steps or quick.step_flags()
                    sure, lone = plain_step, -1
                else:  # a player in its own area, the ball's holder (or none)
                    to_flags, sure, lone = mover_verdicts[square]
                for target, action, _ in _STEP_TABLE[square]:
                    if cells[target]:
                        continue
                    flag = to_flags[target]
                    if flag == 1:
                        verdict = None if target == lone else sure
                    elif flag == _LEGAL:
                        verdict = True
                    elif flag:  # _NOT_LEGAL
                        continue
                    else:  # a dribble carries the ball; a step onto the free ball takes it
                        verdict = verdict_of(
                            square, target, target if ball == square or ball == target else ball)
                    if verdict:
                        add_action(action)
                    elif verdict is None:
                        made = self._full_test(self._step_effect(square, target, action))
                        if made is not None:
                            found[len(actions)] = made
                            add_action(action)
        cells, me = self.cells, self.side
        if cells[ball] == ACTIVE[me]:
            # quick.verdict(-1, -1, target), inlined: the verdict of every kick that does
            # not score (only the ball moves: the counts of rule 1-4 are the position's),
            # but a pass to a team-mate in the own keeper area (the ball held there) and,
            # at the first action where ``plenty`` does not decide, the quiet steps left
            # (``_others``, by the target).
            by_others = False
            if quick is None:
                usual = into_area = None
            elif self.done != 0:  # (the kicker is not one that entered its area)
                usual = quick.own <= 1 and quick.their == 0 and self.entered < 0
                into_area = False
            else:
                usual = into_area = None
                if quick.own <= 1 and quick.their == 0:
                    usual, by_others = quick.plenty or None, not quick.plenty
                    if by_others:
                        # A free target's ``_others`` is every quiet step's target (no
                        # player's there): where two squares or more, every free kick
                        # leaves one (a pass asks ``_others`` of the team-mate's square).
                        quiet_targets = quick._every_target
                        if quiet_targets < 0:
                            quiet_targets = quick._make_targets()
                        if quiet_targets & (quiet_targets - 1):
                            usual = True
            if usual:
                # _kicks, inlined, a ray at a time: the kicks up to the first occupied
                # square in one go (``_KICK_LINES``), all legal but a pass into the own
                # keeper area (the ball held there: ``into_area``) and, ``by_others``, a
                # pass where the team-mate's steps are the only quiet ones left.
                occupied, mate = BB_PITCH ^ self._empty, ACTIVE[me]
                for line, rising, frees, passes, shot in _KICK_LINES[me][ball]:
                    stop = line & occupied
                    if not stop:  # the ray's end: a shot where it is at the opponent's goal
                        actions.extend(frees[-1])
                        if shot is not None:
                            kick, guard = shot
                            if guard < 0 or cells[guard] != ACTIVE[1 - me] \
                                    and cells[guard] != RESTING[1 - me]:
                                add_action(kick)
                        continue
                    at = (stop & -stop if rising else stop).bit_length() >> 3
                    actions.extend(frees[at])
                    passed = passes[at]
                    if passed is not None and cells[at] == mate:
                        kick, into_own = passed
                        if not (into_own or by_others) or into_area:
                            add_action(kick)
                            continue
                        if into_own:
                            verdict = into_area
                        else:  # (quick.verdict(-1, -1, at), as in the loop below)
                            others = quick._others(at)  # type: ignore[union-attr]
                            verdict = True if others and others != BB_SQUARES[at] else None
                        if verdict:
                            add_action(kick)
                        elif verdict is None:
                            made = self._full_test(self._kick_effect(kick, at))
                            if made is not None:
                                found[len(actions)] = made
                                add_action(kick)
            else:
                own_area = KEEPER_AREA[me]
                for kick, target in self._kicks():
                    if target in ALL_GOALS:
                        verdict = True  # a goal: nothing to look ahead to
                    elif target in own_area and cells[target]:  # (a kick reaches no other piece)
                        verdict = into_area
                    elif by_others:
                        # (a target other than the ball's: neither empty nor that square)
                        others = quick._others(target)  # type: ignore[union-attr]
                        verdict = True if others and others != BB_SQUARES[target] else None
                    else:
                        verdict = usual
                    if verdict:
                        add_action(kick)
                    elif verdict is None:
                        made = self._full_test(self._kick_effect(kick, target))
                        if made is not None:
                            found[len(actions)] = made
                            add_action(kick)
        # _chain_setting, _jumpers and _search_chains's two searches, inlined; the square
        # search reads the cells as they are, the state search (0.4 a listing) a list
        # of them it may write to
        free_ball = ball if cells[ball] == EMPTY else -1
        victim = ball if cells[ball] == ACTIVE[1 - me] else -1
        jumpers, keeper = self._active_squares, self.keepers[me]
        if self.options.keepers_cannot_jump:
            jumpers = [square for square in jumpers if square != keeper]
        # What the verdicts of a plain jumper's chains read (quick.judge, inlined): a
        # chain that takes no ball, from and to plain squares, has the verdict of its
        # player's plain steps (one that takes the ball too, to a free quiet square: it
        # closes no sandwich).
        free_flags = None  # (quick.free_flags(), made at the first chain with the ball)
        if quick is not None:
            plain_from, plain, plain_to = quick.plain_from_flags, quick.plain, quick.plain_to_flags
            may_spare = plain is None and quick._may_spare
            # What the verdict of a plain jumper's chain into a keeper area reads.
            areas_free, first_free, second_plain = quick._areas_free, quick._may_spare, plain
            own_none, own_area, empty = quick.own == 0, quick._own_area, self._empty
            if may_spare and quick.plenty:  # every first action leaves a quiet step
                plain, may_spare = True, False
        else:
            plain_from, plain, plain_to, may_spare = _NO_FLAGS, None, b"", False
            areas_free, first_free, second_plain, own_none = 0, False, None, False
            own_area = frozenset()
            empty = 0
        for square in jumpers:
            # _search_chains's first test, inlined: most players have no first hop; the
            # search goes on from the first one found
            for mid, land, start in _FIRST_HOP_STARTS[square]:
                if cells[mid] and not cells[land]:
                    break
            else:
                continue
            chains = _still_chains(square, ball, cells, free_ball, victim, start)
            if chains is None:
                chains = _ball_chains(square, list(cells), free_ball, victim)
            if not plain_from[square]:
                # The holder's chains (with the ball) and the keeper's in its area (without
                # it): the verdict of its steps where their flag is 1, which says the same
                # for any target (see ``mover_steps``; the others assume the target next to
                # the mover).
                to_flags, sure, lone = mover_verdicts.get(square, _NO_VERDICT)
                carries = square == ball
                for jump, _, end, has_ball in chains:
                    if to_flags[end] == 1 and has_ball == carries:
                        verdict = None if end == lone else sure
                    else:
                        verdict = quick.verdict(square, end, end if has_ball else ball) \
                            if quick is not None else None
                    if verdict:
                        add_action(jump)
                    elif verdict is None:
                        made = self._full_test(self._jump_effect(jump, square, end, has_ball))
                        if made is not None:
                            found[len(actions)] = made
                            add_action(jump)
                continue
            assert quick is not None
            sure, lone = plain, -1
            if may_spare:  # quick.plain_verdict, inlined
                spare = quick._others(square)
                if spare:
                    sure = True
                    if not spare & (spare - 1):  # one quiet step left: not onto it
                        lone = (spare.bit_length() - 1) >> 3
            # The common case first: a chain that takes no ball to a plain square, where
            # that is legal whatever the square (no quiet step alone left to spare).
            sure_to = plain_to if sure and lone < 0 else _NO_FLAGS
            for jump, _, end, has_ball in chains:
                if sure_to[end] and not has_ball:
                    add_action(jump)
                    continue
                if has_ball and free_flags is None and end != square:
                    free_flags = quick.free_flags()
                # A chain back to its start took the ball (one without it never ends
                # there): the player stays on its quiet square, rule 1-4's counts are the
                # position's and the ball, no team-mate's before, is its own, so
                # ``verdict`` says what it says of the player's plain moves (``lone`` is
                # an empty square: never this one).
                if end == square or (plain_to[end] if not has_ball
                                     else free_flags[end]):  # type: ignore[index]
                    verdict = None if end == lone else sure
                elif has_ball or square == keeper or not areas_free & BB_SQUARES[end]:
                    verdict = quick.verdict(square, end, end if has_ball else ball)
                elif first_free:
                    # Into a keeper area at the first action, the position owing nothing:
                    # legal where the jumper may step out to a free quiet square with the
                    # second (``_steps_out``; a chain never ends next to its start: no hop
                    # changes one parity of file or rank alone).
                    verdict = True if _QUIET_STEPS_AT[end] & empty else None
                elif second_plain is not None:  # at the second: as a plain step there
                    verdict = second_plain and own_none and end in own_area
                else:
                    verdict = quick.verdict(square, end, end if has_ball else ball)
                if verdict:
                    add_action(jump)
                elif verdict is None:
                    made = self._full_test(self._jump_effect(jump, square, end, has_ball))
                    if made is not None:
                        found[len(actions)] = made
                        add_action(jump)
        if not actions:
            add_action(Pass())
            found[0] = self._end_turn(self.cells, self.ball, self.keepers, ())
        return actions, found

    @_cached
    def _boards(self) -> tuple[int, int, int]:
        """(empty pitch squares, the side to move's active players, all its players): the
        sets of ``geometry.position_sets`` (a listing reads :meth:`_empty` alone)."""
        return position_sets(self.cells, self.side)[0]

    def _judged_steps(self, quick: _QuickTest | None, mover: int = -1) -> Iterator[
            tuple[int, int, Step, tuple[int, int], bool | None]]:
        """Every step of the side to move (``mover``: of the player on that square only),
        in the order of :meth:`_effects`: (square, target, the Step, (square, target), the
        quick test's verdict or None).

        A *plain* step (from and to outside both keeper areas, not touching the ball,
        not where it may close a sandwich) changes nothing the quick test counts, so one
        verdict per position holds for all of them (:attr:`_QuickTest.plain_step`): they
        are judged with two flag reads."""
        cells, ball = self.cells, self.ball
        for square in self._active_squares if mover < 0 else (mover,):
            plain_to = b""
            if quick is not None and quick.plain_from_flags[square]:
                plain_to = quick.plain_to_flags
            for target, action, pair in _STEP_TABLE[square]:
                if cells[target]:
                    continue
                if plain_to and plain_to[target]:
                    yield square, target, action, pair, quick.plain_step if quick else None
                    continue
                # A dribble carries the ball; a step onto the free ball takes it.
                new_ball = target if ball == square or ball == target else ball
                yield square, target, action, pair, (
                    quick.verdict(square, target, new_ball) if quick else None)

    @_cached
    def _active_squares(self) -> list[int]:
        """The squares of the side to move's active players, in PITCH order. A position
        built from its fields has them from its constructor, a first action's child from
        its parent (``_carry_sets``); another child (the turn's end: the other side's)
        makes them on first use, not with the position, as the tracker makes many
        positions it never lists the actions of."""
        if "_empty" in self.__dict__:
            return active_squares(self.cells, self.side)
        self.__dict__["_empty"], squares = empty_and_active(self.cells, self.side)
        return squares

    @_cached
    def _empty(self) -> int:
        """The empty pitch squares, as a set (see :meth:`_active_squares`; a child of a
        listed position has it from its parent, ``_carry_sets``)."""
        empty, self.__dict__["_active_squares"] = empty_and_active(self.cells, self.side)
        return empty

    def _carry_sets(self, child: Position, effect: _Effect) -> Position:
        """``child``, the position ``effect`` leads to, given this position's sets moved
        by the effect where this position has them (it does once its actions are listed):
        the empty set (a move empties one square and fills one; a kick, a steal and the
        turn's end change no square's occupancy), and the squares of each side's active
        players: ``_active_squares`` (the side to move's) and ``_other_active`` (the other
        side's; kept only for this, from the constructor on). A steal turns players of
        the other side over; at the turn's end the two swap, the side that moved getting
        its turned-over players back (then its squares are left to be made). A list left
        as it was is shared with the child: no reader changes one in place."""
        known = self.__dict__
        if "_empty" not in known:
            return child
        frm, to = effect.mover_from, effect.mover_to
        carried = child.__dict__
        active, other = known.get("_active_squares"), known.get("_other_active")
        if frm < 0:  # a kick
            carried["_empty"] = known["_empty"]
        else:  # (to == frm, a chain back to its start: both flips cancel, as they should)
            carried["_empty"] = known["_empty"] ^ BB_SQUARES[frm] ^ BB_SQUARES[to]
            if active is not None:
                active = [to if square == frm else square for square in active]
                active.sort()
        if other is not None and effect.flipped:
            other = [square for square in other if square not in effect.flipped]
        if child.side == self.side:
            if active is not None:
                carried["_active_squares"] = active
            if other is not None:
                carried["_other_active"] = other
            return child
        if other is not None:
            carried["_active_squares"] = other
        # The turn's end makes new cells only where it turns the side's players back
        # (``_end_turn``): the same cells, none came back.
        if active is not None and child.cells is effect.cells:
            carried["_other_active"] = active
        return child

    def _quick_test(self) -> _QuickTest | None:
        """The quick test of this position's actions, or None where it cannot be used
        (a sandwich on the board)."""
        cells, ball, me = self.cells, self.ball, self.side
        if cells[ball] != ACTIVE[1 - me]:
            return _QuickTest(self, _NO_CLOSERS)
        closers = _closing_squares(cells, ball, me)
        return None if closers is None else _QuickTest(self, closers)

    def _has_legal_action(self) -> bool:
        """Whether any action is legal, stopping at the first one found."""
        if self.phase == OVER:
            return False
        if self.phase != PLAY:
            return True
        if self.done == 1:  # the turn rules alone decide; no need to build the positions
            if self._has_quiet_step():
                return True
            quick = self._quick_test()
            if quick is None:
                return any(self._may_end_turn(effect) for effect in self._effects())
            return self._may_end_turn_quickly(quick)
        # The first action: a step the quick test finds legal says so (a position to
        # move in after a sandwich was taken, say); the look ahead of every action else.
        quick = self._quick_test()
        if quick is not None:
            for _, _, _, _, verdict in self._judged_steps(quick):
                if verdict:
                    return True
        return any(self._resolve(effect)[0] is not None for effect in self._effects())

    def _may_end_turn_quickly(self, quick: _QuickTest) -> bool:
        """``any(self._may_end_turn(e) for e in self._effects())``, with the quick test
        deciding where it can (no effect made for a step it decides), and only the actions
        of the one player that must move where there is one (``_bound_mover``)."""
        mover = self._bound_mover()
        for square, target, action, _, verdict in self._judged_steps(quick, mover):
            if verdict or (verdict is None and self._may_end_turn(
                    self._step_effect(square, target, action))):
                return True
        for effect in self._kick_and_jump_effects(mover):
            if effect.goal:
                return True
            verdict = quick.judge(effect.mover_from, effect.mover_to, effect.ball)
            if verdict or (verdict is None and self._may_end_turn(effect)):
                return True
        return False

    def _bound_mover(self) -> int:
        """At the second action, the square of the one player whose steps and chains may
        end the turn (rule 1-4), or -1: the player that entered its keeper area with the
        first (it must leave it with this one), else an active player holding the ball in
        its own keeper area (only its moves and kicks take the ball out), else the one
        active player in the opponent's keeper area (only its moves take it out). Any
        other player's step or chain leaves that player where the turn may not end; a
        kick that scores is legal whoever kicks (``_may_end_turn``)."""
        if self.entered >= 0:
            return self.entered
        cells, ball, me = self.cells, self.ball, self.side
        mine = ACTIVE[me]
        if ball in KEEPER_AREA[me] and cells[ball] == mine:
            return ball
        a, b, c = AREA_SQUARES[1 - me]
        if (cells[a] == mine) + (cells[b] == mine) + (cells[c] == mine) == 1:
            return a if cells[a] == mine else b if cells[b] == mine else c
        return -1

    def _has_quiet_step(self) -> bool:
        """A shortcut for the common case: with nothing owed under rule 1-4, a step
        between two squares outside both keeper areas, not touching the ball, is
        always a legal second action (a sandwich it closes is taken by the mover,
        who stands outside its area)."""
        me = self.side
        if self.entered >= 0 or _turn_end_problem(self.cells, self.ball, me):
            return False
        cells, ball, mine = self.cells, self.ball, ACTIVE[me]
        for square in QUIET_SQUARES:
            if cells[square] == mine and square != ball:
                for target in QUIET_STEPS[square]:
                    if cells[target] == EMPTY and target != ball:
                        return True
        return False

    def _may_end_turn(self, effect: _Effect) -> bool:
        """The second action's test of :meth:`_resolve`, without building the position."""
        if effect.goal:
            return True
        me = self.side
        if self.entered >= 0 and (
            effect.mover_from != self.entered or effect.mover_to in KEEPER_AREA[me]
        ):
            return False
        if _turn_end_problem(effect.cells, effect.ball, me):
            return False
        receivers, _ = _sandwich(effect.cells, effect.ball, me)
        return not receivers or any(r not in KEEPER_AREA[me] for r in receivers)

    # ------------------------------------------------------------- generation

    def _effects(self) -> Iterator[_Effect]:
        """Every step, jump chain and kick the pieces allow, before the turn rules."""
        mine = ACTIVE[self.side]
        cells = self.cells
        for square in PITCH:
            if cells[square] == mine:
                yield from self._step_effects(square)
        yield from self._kick_and_jump_effects()

    def _kick_and_jump_effects(self, mover: int = -1) -> Iterator[_Effect]:
        """The kicks and chains of the side to move (``mover``: the chains of the player
        on that square only)."""
        if self.cells[self.ball] == ACTIVE[self.side]:
            yield from self._kick_effects()
        for square in self._jumpers():
            if mover < 0 or square == mover:
                yield from self._jump_effects(square)

    def _jumpers(self) -> list[int]:
        """The players that may start a chain (``_chains`` finds none for most)."""
        if not self.options.keepers_cannot_jump:
            return self._active_squares
        keeper = self.keepers[self.side]
        return [square for square in self._active_squares if square != keeper]

    def _moved_keepers(self, frm: int, to: int) -> tuple[int, int]:
        if self.keepers[self.side] != frm:
            return self.keepers
        return (to, self.keepers[1]) if self.side == BLUE else (self.keepers[0], to)

    def _step_effects(self, square: int) -> Iterator[_Effect]:
        cells = self.cells
        for target, action in STEP_ACTIONS[square]:
            if cells[target] == EMPTY:
                yield self._step_effect(square, target, action)

    def _step_effect(self, square: int, target: int, action: Action) -> _Effect:
        ball, keepers = self.ball, self.keepers
        # A dribble carries the ball; a step onto the free ball takes it.
        new_ball = target if ball == square or ball == target else ball
        return _Effect(
            action, self.cells, new_ball,
            self._moved_keepers(square, target) if keepers[self.side] == square else keepers,
            (), False, square, target, self.side,
        )

    def _kick_effects(self) -> Iterator[_Effect]:
        for kick, target in self._kicks():
            yield self._kick_effect(kick, target)

    def _kick_effect(self, kick: Action, target: int) -> _Effect:
        """What a kick of the ball to ``target`` does (a shot if it is a goal square)."""
        return _Effect(kick, self.cells, target, self.keepers, (), target in ALL_GOALS, -1, -1,
                       self.side)

    def _kicks(self) -> list[tuple[Kick, int]]:
        """Every kick of the player holding the ball (the side to move's), and where the
        ball ends: on a team-mate, free on an empty square, or in the opponent's goal."""
        cells, me = self.cells, self.side
        frm = self.ball
        opponent_pieces = (ACTIVE[1 - me], RESTING[1 - me])
        mate = ACTIVE[me]
        # Rule 1-4: a kick from the own keeper area takes the ball out of it.
        stays = me if frm in KEEPER_AREA[me] else 2
        out = []
        for squares, shot in _KICK_RAYS[frm]:
            for target, area, kick, free_kick in squares:
                occupant = cells[target]
                if area == stays:
                    if occupant == EMPTY:
                        continue
                    break
                if occupant == EMPTY:
                    out.append((free_kick, target))
                    continue
                if occupant == mate:
                    out.append((kick, target))
                break
            else:  # the end of the board: a shot into the opponent's goal, if the ray has one
                if shot is not None:
                    target, goal, guard, kick = shot
                    if goal != me and not (guard >= 0 and cells[guard] in opponent_pieces):
                        out.append((kick, target))
        return out

    def _jump_effects(self, square: int) -> Iterator[_Effect]:
        """The effects of :meth:`_chains`."""
        for jump, _, end, has_ball in self._chains(square, self._chain_setting()):
            yield self._jump_effect(jump, square, end, has_ball)

    def _jump_effect(self, jump: Jump, square: int, end: int, has_ball: bool) -> _Effect:
        ball = self.ball
        return _Effect(
            jump, self.cells, end if has_ball else ball, self._moved_keepers(square, end),
            (ball,) if jump.steal else (), False, square, end, self.side,
        )

    def _chains(self, square: int, setting: tuple[list[int], int, int]) -> list[
            tuple[Jump, int, int, bool]]:
        """One chain per distinct result (end square, ball taken or not), the shortest:
        (the Jump, its start and end squares, whether the jumper has the ball there).

        While the jumper is in the air its own square is empty; the only thing
        a chain changes on the way is the ball (picked up from the ground, or
        taken from the opponent who is then flipped), so (square, has ball) is
        the whole state of a chain. A breadth-first search per family (orthogonal,
        then diagonal), on the cells (one index a square); the shortest path is the
        first found, the orthogonal one on a tie. Where the ball was taken follows
        from the path (the first hop over its holder), found only for a chain that
        took it.
        """
        return _search_chains(square, self.ball, setting)

    def _chain_setting(self) -> tuple[list[int], int, int]:
        """What the chain searches of one listing read: the cells as a list (a search
        empties the jumper's square in it, and restores it: one list a listing, not one
        a position, so that two threads listing the same position share none), the free
        ball's square and the square of the opponent holding the ball (-1: none)."""
        cells, ball = self.cells, self.ball
        return (list(cells), ball if cells[ball] == EMPTY else -1,
                ball if cells[ball] == ACTIVE[1 - self.side] else -1)

    # ------------------------------------------------------------- turn rules

    def _resolve(self, effect: _Effect) -> tuple[Position | None, str]:
        """The position an effect leads to under the turn rules, or None and why not."""
        me, options = self.side, self.options
        if effect.goal:
            score = ((self.score[0] + 1, self.score[1]) if me == BLUE
                     else (self.score[0], self.score[1] + 1))
            over = max(score) >= options.goals_to_win
            return (
                _position(effect.cells, effect.ball, 1 - me, 0, OVER if over else GOAL,
                         effect.keepers, -1, score, -1, (), options),
                "",
            )
        sandwich = _sandwich(effect.cells, effect.ball, me)
        thief_receivers = sandwich[0]
        if self.done == 0:
            entered = -1
            if (
                effect.mover_to in KEEPER_AREA[me]
                and effect.mover_from != self.keepers[me]
                and effect.mover_from not in KEEPER_AREA[me]
            ):
                entered = effect.mover_to
            child = self._carry_sets(_position(
                effect.cells, effect.ball, me, 1, TAKE if thief_receivers else PLAY,
                effect.keepers, entered, self.score, -1, effect.flipped, options), effect)
            if child._has_legal_action() if child.phase == PLAY \
                    else child._has_legal_take(sandwich):
                return child, ""
            return None, self._dead_end_reason(effect, entered)
        # The second action ends the turn: the keeper-area rules apply now.
        if self.entered >= 0 and (
            effect.mover_from != self.entered or effect.mover_to in KEEPER_AREA[me]
        ):
            return None, (
                f"{SQUARE_NAMES[self.entered]} entered {SIDES[me]}'s keeper area on the first "
                f"action and must leave it with the second"
            )
        problem = _turn_end_problem(effect.cells, effect.ball, me)
        if problem:
            return None, problem
        if thief_receivers:
            child = self._carry_sets(_position(effect.cells, effect.ball, me, 2, TAKE,
                                               effect.keepers, -1, self.score, -1,
                                               effect.flipped, options), effect)
            if not child._has_legal_take(sandwich):
                return None, "the ball would end the turn in the keeper area"
            return child, ""
        return self._carry_sets(
            self._end_turn(effect.cells, effect.ball, effect.keepers, effect.flipped), effect), ""

    def _full_test(self, effect: _Effect) -> Position | _Effect | None:
        """What an action the quick test could not decide leads to, or None where it is
        not legal: at the first action the position (it must leave a legal second one),
        at the second the effect, when the turn may end so (:meth:`_may_end_turn`, which
        makes no position: the position, a sandwich's to resolve maybe, is made on
        :meth:`apply`)."""
        if self.done != 0:
            return effect if self._may_end_turn(effect) else None
        return self._resolve(effect)[0]

    def _quickly_legal_child(self, effect: _Effect) -> Position:
        """What :meth:`_resolve` makes of an effect the quick test found legal (no
        sandwich, a turn that may end; or a goal, always legal), without its look ahead."""
        if effect.goal:
            child, _ = self._resolve(effect)  # a goal: no look ahead
            assert child is not None
            return child
        me = self.side
        if self.done == 0:
            entered = -1
            if (effect.mover_to in KEEPER_AREA[me] and effect.mover_from != self.keepers[me]
                    and effect.mover_from not in KEEPER_AREA[me]):
                entered = effect.mover_to
            child = _position(effect.cells, effect.ball, me, 1, PLAY, effect.keepers, entered,
                              self.score, -1, effect.flipped, self.options)
        else:
            child = self._end_turn(effect.cells, effect.ball, effect.keepers, effect.flipped)
        return self._carry_sets(child, effect)

    def _dead_end_reason(self, effect: _Effect, entered: int) -> str:
        me = self.side
        if entered >= 0:
            return (
                f"a player other than the keeper may enter the keeper area on the first action "
                f"only if it can leave it with the second, and {SQUARE_NAMES[entered]} could not"
            )
        if effect.ball in KEEPER_AREA[me] and effect.cells[effect.ball] == ACTIVE[me]:
            return (
                f"{SIDES[me]} could not get the ball out of its keeper area with the second action"
            )
        if effect.mover_to in KEEPER_AREA[1 - me]:
            return (
                f"{SQUARE_NAMES[effect.mover_to]} could not leave {SIDES[1 - me]}'s keeper area "
                f"(or shoot) with the second action"
            )
        return f"{SIDES[me]} would have no legal second action"

    def _end_turn(
        self,
        cells: tuple[int, ...],
        ball: int,
        keepers: tuple[int, int],
        flipped: tuple[int, ...],
    ) -> Position:
        """Close the turn of the side to move: keeper role, resting players, rule 3-5."""
        me = self.side
        in_area = [i for i in KEEPER_AREA[me] if cells[i] in (ACTIVE[me], RESTING[me])]
        if len(in_area) == 1:  # whoever stands alone in the area is the keeper now
            keepers = (in_area[0], keepers[1]) if me == BLUE else (keepers[0], in_area[0])
        if RESTING[me] in cells:  # a flipped player sits out one turn of its own side
            cells = tuple(ACTIVE[me] if c == RESTING[me] else c for c in cells)
        receivers, _ = _sandwich(cells, ball, 1 - me)
        return _position(cells, ball, 1 - me, 0, TAKE if receivers else PLAY, keepers, -1,
                        self.score, -1, flipped, self.options)

    def _take_variants(self) -> tuple[dict[Action, Position], dict[Action, Position]]:
        """The Take variants, one per sandwiching piece: all, and those that let the
        turn go on legally (the receiver may not end the turn in its keeper area
        holding the ball; after a first action a legal second one must follow)."""
        receivers, run = _sandwich(self.cells, self.ball, self.side)
        me = self.side
        flipped = tuple(sorted(run))
        cells = list(self.cells)
        for i in run:
            cells[i] = RESTING[1 - me]
        frozen_cells = tuple(cells)
        variants: dict[Action, Position] = {}
        for receiver in receivers:
            action = Take(SQUARE_NAMES[self.ball], SQUARE_NAMES[receiver])
            if self.done == 2:
                variants[action] = self._end_turn(frozen_cells, receiver, self.keepers, flipped)
            else:
                variants[action] = _position(frozen_cells, receiver, me, self.done, PLAY,
                                             self.keepers, self.entered, self.score, -1, flipped,
                                             self.options)
        legal: dict[Action, Position]
        if self.done == 2:
            legal = {a: p for a, p in variants.items()
                     if isinstance(a, Take) and SQUARE_INDEX[a.to] not in KEEPER_AREA[me]}
        else:
            legal = {a: p for a, p in variants.items() if p._has_legal_action()}
        return variants, legal

    def _has_legal_take(
            self, sandwich: tuple[tuple[int, ...], tuple[int, ...]] | None = None) -> bool:
        """``bool(self._take_variants()[1])``, stopping at the first legal variant, no
        Take made (the look ahead of an action that closes a sandwich asks only that);
        ``sandwich``: this position's ``_sandwich``, where the caller has it."""
        receivers, run = _sandwich(self.cells, self.ball, self.side) if sandwich is None \
            else sandwich
        me = self.side
        if self.done == 2:
            return any(receiver not in KEEPER_AREA[me] for receiver in receivers)
        flipped = tuple(sorted(run))
        cells = list(self.cells)
        for i in run:
            cells[i] = RESTING[1 - me]
        frozen_cells = tuple(cells)
        for receiver in receivers:
            if _position(frozen_cells, receiver, me, self.done, PLAY, self.keepers,
                         self.entered, self.score, -1, flipped,
                         self.options)._has_legal_action():
                return True
        return False

    # ------------------------------------------------------------- explaining

    def _apply_jump_path(self, jump: Jump) -> Position:
        """Check a chain of jumps square by square (any path, revisits included)."""
        if not isinstance(jump.steal, int) or not 0 <= jump.steal < max(len(jump.path), 1):
            raise IllegalAction(f"{jump}: steal must be the index of a landing square in the path")
        effect = self._simulate_jump(jump.path)
        simulated = effect.action
        assert isinstance(simulated, Jump)
        if jump.steal != simulated.steal:
            if simulated.steal:
                where = jump.path[simulated.steal]
                raise IllegalAction(f"{jump}: the ball is taken on {where} (mark that square with "
                                    "!)")
            raise IllegalAction(f"{jump}: no ball is taken on {jump.path[jump.steal]}")
        child, reason = self._resolve(effect)
        if child is None:
            raise IllegalAction(f"{jump}: {reason}")
        return child

    def _simulate_jump(self, names: tuple[str, ...]) -> _Effect:
        """What a chain along ``names`` does; IllegalAction names the first bad hop."""
        if not isinstance(names, (tuple, list)) or not names:
            raise IllegalAction(f"{names!r}: a jump's path is a tuple of square names")
        written = "・".join(map(str, names))
        if self.phase != PLAY or self.outcome() is not None:
            raise IllegalAction(f"{written}: {self._phase_reason()}")
        try:
            path = [_square(s) for s in names]
        except NotationError as exc:
            raise IllegalAction(f"{written}: {exc}") from None
        me = self.side
        start = path[0]
        problem = self._mover_problem(start)
        if problem:
            raise IllegalAction(f"{written}: {problem}")
        if len(path) < 2:
            raise IllegalAction(f"{written}: a jump needs a landing square")
        if self.options.keepers_cannot_jump and start == self.keepers[me]:
            raise IllegalAction(f"{written}: the keeper may not jump (rule option)")
        board = list(self.cells)
        board[start] = EMPTY
        has_ball = self.ball == start
        free_ball = self.ball if self.cells[self.ball] == EMPTY else -1
        victim = self.ball if self.cells[self.ball] == ACTIVE[1 - me] else -1
        family = -1
        steal = 0
        for k in range(1, len(path)):
            at, land = path[k - 1], path[k]
            df, dr = land % 5 - at % 5, land // 5 - at // 5
            hop = f"{SQUARE_NAMES[at]}・{SQUARE_NAMES[land]}: " if len(path) > 2 else ""
            where = f"{written}: {hop}"
            if (abs(df), abs(dr)) not in ((2, 0), (0, 2), (2, 2)):
                raise IllegalAction(f"{where}a jump goes over one piece to the square right behind "
                                    "it")
            hop_family = 1 if df and dr else 0
            if family >= 0 and hop_family != family:
                kind = "orthogonal" if family == 0 else "diagonal"
                raise IllegalAction(f"{where}a chain that starts {kind} stays {kind}")
            family = hop_family
            mid = _index(at % 5 + df // 2, at // 5 + dr // 2)
            if land in ALL_GOALS:
                raise IllegalAction(f"{where}no player may enter a goal")
            if board[mid] == EMPTY:
                raise IllegalAction(f"{where}there is no player on {SQUARE_NAMES[mid]} to jump "
                                    "over")
            if board[land] != EMPTY:
                raise IllegalAction(f"{where}{SQUARE_NAMES[land]} is taken")
            if not has_ball and (land == free_ball or mid == victim):
                has_ball = True
                if mid == victim:
                    steal = k
                    board[victim] = RESTING[1 - me]
        end = path[-1]
        if end == start and has_ball == (self.ball == start):
            raise IllegalAction(f"{written}: the chain ends where it started without taking the "
                                "ball")
        return _Effect(
            Jump(tuple(names), steal), self.cells, end if has_ball else self.ball,
            self._moved_keepers(start, end), (victim,) if steal else (), False, start, end, me,
        )

    def _phase_reason(self) -> str:
        outcome = self.outcome()
        if outcome is not None:
            return f"the game is over ({outcome})"
        if self.phase == GOAL:
            return "a goal was scored: the pieces go back to the start first (restart)"
        if self.phase == TAKE:
            choices = " or ".join(str(a) for a in self._generated[0])
            return (f"{self.to_move} first takes the ball from the sandwiched {self.ball_square} "
                    f"({choices})")
        return ""

    def _mover_problem(self, square: int) -> str:
        me = self.side
        cell = self.cells[square]
        name = SQUARE_NAMES[square]
        if cell == EMPTY:
            return f"there is no player on {name}"
        if _side_of(cell) != me:
            return f"{name} is a {SIDES[1 - me]} player and it is {SIDES[me]}'s turn"
        if cell == RESTING[me]:
            return f"{name} lost the ball and rests (turned over) until {SIDES[me]}'s turn ends"
        return ""

    def _why_illegal(self, action: object) -> str:
        """A reason a player understands, for an action not in the legal list."""
        if not isinstance(action, (Step, Jump, Kick, Take, Restart, Pass)):
            return "not a soccer-shogi action"
        phase_reason = self._phase_reason()
        if isinstance(action, Restart):
            return phase_reason if self.outcome() else "restart only follows a goal"
        if isinstance(action, Take):
            if self.phase != TAKE:
                return "no sandwich to resolve: a kick never goes to an opponent"
            choices = " or ".join(str(a) for a in self._generated[0])
            return (f"the ball goes from {self.ball_square} to one of the sandwiching pieces "
                    f"({choices})")
        if phase_reason:
            return phase_reason
        if isinstance(action, Pass):
            return "pass only when no action is possible"
        try:
            frm, to = _square(action.frm), _square(action.to)
        except NotationError as exc:
            return str(exc)
        if isinstance(action, Step):
            problem = self._mover_problem(frm)
            if problem:
                return problem
            if to in ALL_GOALS:
                return "no player may enter a goal"
            if to not in STEPS[frm]:
                return "a step goes to one of the 8 neighbouring squares"
            if self.cells[to] != EMPTY:
                return f"{action.to} is taken"
        if isinstance(action, Kick):
            return self._kick_problem(action, frm, to)
        for effect in self._effects():
            if effect.action == action:
                return self._resolve(effect)[1] or "not allowed here"
        return "not allowed here"

    def _kick_problem(self, kick: Kick, frm: int, to: int) -> str:
        me = self.side
        if self.ball != frm or self.cells[frm] != ACTIVE[me]:
            return f"{SIDES[me]} has no player with the ball on {kick.frm}"
        for ray in RAYS[frm]:
            if to not in ray:
                continue
            for passed in ray[: ray.index(to)]:
                if passed in ALL_GOALS or self.cells[passed] != EMPTY:
                    return f"the ball cannot pass {SQUARE_NAMES[passed]}: a piece stands there"
            if to in GOAL_SQUARES[me]:
                return f"{SIDES[me]} may not kick into its own goal"
            if frm in KEEPER_AREA[me] and to in KEEPER_AREA[me]:
                return "a kick from the own keeper area must take the ball out of it"
            guard = CORNER_SHOT_GUARD.get((frm, to))
            if guard is not None and self.cells[guard] in (ACTIVE[1 - me], RESTING[1 - me]):
                return (f"a {SIDES[1 - me]} player on {SQUARE_NAMES[guard]} blocks the shot from "
                        "the corner")
            occupant = self.cells[to]
            if occupant in (ACTIVE[1 - me], RESTING[1 - me]):
                return f"the ball may not be kicked to an opponent ({kick.to})"
            if occupant == RESTING[me]:
                return f"{kick.to} is resting (turned over) and cannot receive the ball"
            if occupant == ACTIVE[me] and kick.free:
                return f"{kick.to} holds a team-mate: that is a pass, not a free ball (drop the f)"
            if occupant == EMPTY and to not in ALL_GOALS and not kick.free:
                return (f"{kick.to} is empty: the ball would be free (write "
                        f"b({kick.frm}-{kick.to})f)")
            for effect in self._effects():
                if effect.action == kick:
                    return self._resolve(effect)[1] or "not allowed here"
            return "not allowed here"
        return "a kick goes straight along one of the 8 lines through the ball"

    # ------------------------------------------------------------- notation

    def parse_action(self, text: str) -> Action:
        """Read one action in the source's notation, in the context of this position.

        ``A7-A6`` step; ``C5・C3`` jump (``*`` also accepted); ``E2・C2・C4・A4・A6!``
        chain (``!`` after the square where the ball is taken, optional);
        ``b(C5-A5)`` kick, optionally followed by ``f`` (free ball) or ``goal``;
        ``b(B4-B3)!`` taking the ball after a sandwich; ``restart``; ``pass``.

        >>> from masume.rules.soccer_shogi import RULES
        >>> position = RULES.start()
        >>> position.parse_action("b(C5-E5)")
        Kick(frm='C5', to='E5', free=True)
        >>> position.parse_action("C5 to C4")
        Traceback (most recent call last):
        ...
        masume.rules.base.NotationError: 'C5 to C4' is not soccer-shogi notation (A7-A6, ...)
        """
        from .notation import parse_notation

        action = parse_notation(text)
        if isinstance(action, Kick) and self.phase == TAKE and action.frm == self.ball_square:
            action = Take(action.frm, action.to)  # the ! is optional
        if isinstance(action, Take) and self.phase == PLAY:
            raise IllegalAction(f"{text.strip()}: {self._why_illegal(action)}")
        if isinstance(action, Kick):
            action = self._complete_kick(action, text)
        if isinstance(action, Jump):
            action = self._complete_jump(action, text)
        if not self.is_legal(action):
            self.apply(action)  # raises IllegalAction with the reason
        return action

    def _complete_kick(self, kick: Kick, text: str) -> Kick:
        """Fill in ``free`` from the board: the f after a kick is optional emphasis."""
        try:
            to = _square(kick.to)
        except NotationError as exc:
            raise NotationError(f"{text.strip()}: {exc}") from None
        occupant = self.cells[to]
        if to in ALL_GOALS or occupant != EMPTY:
            if kick.free:
                if to in ALL_GOALS:
                    raise IllegalAction(f"{text.strip()}: a kick into {kick.to} is a shot, not a "
                                        "free ball")
                raise IllegalAction(
                    f"{text.strip()}: {kick.to} is not empty, so the ball would not be free"
                )
            return kick
        return Kick(kick.frm, kick.to, free=True)

    def _complete_jump(self, jump: Jump, text: str) -> Jump:
        """Put the steal mark where the ball is really taken (the ! is optional)."""
        if jump.steal:
            return jump
        simulated = self._simulate_jump(jump.path).action
        assert isinstance(simulated, Jump)
        return Jump(jump.path, simulated.steal)

    def notation(self, action: Action) -> str:
        """The action in the source's notation; round-trips with :meth:`parse_action`.

        >>> from masume.rules.soccer_shogi import RULES
        >>> position = RULES.start()
        >>> position.notation(position.parse_action("b(C5-E5)"))
        'b(C5-E5)f'
        """
        return str(action)

    # ------------------------------------------------------------- text

    def to_text(self) -> str:
        """The whole position on one line; ``RULES.from_text`` reads it back.

        >>> from masume.rules.soccer_shogi import RULES
        >>> RULES.start().to_text()
        '2B2/BB1BB/5/2B2/5/5/RRRRR/2R2 blue 0 ball=C5 keepers=C8,C1 score=0-0'
        """
        ranks = []
        for rank in range(8, 0, -1):
            row, gap = "", 0
            for file in range(5):
                cell = self.cells[_index(file, rank)]
                if cell == EMPTY:
                    gap += 1
                    continue
                if gap:
                    row, gap = row + str(gap), 0
                row += PIECE_CHARS[cell]
            ranks.append(row + (str(gap) if gap else ""))
        fields = [
            "/".join(ranks),
            self.to_move,
            str(self.done),
            f"ball={self.ball_square}",
            f"keepers={SQUARE_NAMES[self.keepers[0]]},{SQUARE_NAMES[self.keepers[1]]}",
            f"score={self.score[0]}-{self.score[1]}",
        ]
        if self.phase != PLAY:
            fields.append(f"phase={self.phase}")
        if self.entered >= 0:
            fields.append(f"entered={SQUARE_NAMES[self.entered]}")
        if self.flipped:
            fields.append("flip=" + ",".join(SQUARE_NAMES[i] for i in self.flipped))
        if self.resigned >= 0:
            fields.append(f"resigned={SIDES[self.resigned]}")
        defaults = Options()
        if self.options.goals_to_win != defaults.goals_to_win:
            fields.append(f"goals={self.options.goals_to_win}")
        if self.options.keepers_cannot_jump:
            fields.append("keepers-cannot-jump")
        if self.options.keeper_first_action_no_pass:
            fields.append("keeper-first-action-no-pass")
        return " ".join(fields)

    def diagram(self) -> str:
        """A text drawing, blue's goal (row 9) on top.

        >>> from masume.rules.soccer_shogi import RULES
        >>> print(RULES.start().diagram())
              A   B   C   D   E
         9        .   .   .        blue goal
         8    .   .   Bk  .   .
         7    B   B   .   B   B
         6    .   .   .   .   .
         5    .   .   B*  .   .
         4    .   .   .   .   .
         3    .   .   .   .   .
         2    R   R   R   R   R
         1    .   .   Rk  .   .
         0        .   .   .        red goal
        blue, action 1 of 2; score blue 0 red 0
        B/R player, b/r resting, * with the ball, o free ball, k keeper
        """
        lines = ["      " + "   ".join(FILES)]
        for rank in range(9, -1, -1):
            cells = []
            for file in range(5):
                i = _index(file, rank)
                if i not in SQUARE_NAMES:
                    cells.append("  ")
                    continue
                cell = self.cells[i]
                mark = PIECE_CHARS.get(cell, "")
                if cell and i == self.keepers[_side_of(cell)]:
                    mark += "k"
                if i == self.ball:
                    mark = mark + "*" if cell else "o"
                cells.append((mark or ".").ljust(2))
            row = f"{rank:>2}    " + "  ".join(cells)
            if rank in (0, 9):
                row = row.rstrip() + "        " + ("blue goal" if rank == 9 else "red goal")
            lines.append(row.rstrip())
        lines.append(f"{self.status().message}; score blue {self.score[0]} red {self.score[1]}")
        lines.append("B/R player, b/r resting, * with the ball, o free ball, k keeper")
        return "\n".join(lines)

    @staticmethod
    def _start(first: int, score: tuple[int, int], options: Options) -> Position:
        cells, ball, keepers = _start_cells(first)
        return Position(cells, ball, first, 0, PLAY, keepers, -1, score, -1, (), options)


def _position(cells: tuple[int, ...], ball: int, side: int, done: int, phase: str,
              keepers: tuple[int, int], entered: int, score: tuple[int, int], resigned: int,
              flipped: tuple[int, ...], options: Options) -> Position:
    """``Position(...)`` with every field given, without the frozen dataclass's
    ``__init__`` (one ``object.__setattr__`` per field): the same object, made in a
    quarter of the time. The generation makes one or two per legal action."""
    made = _new_object(Position)
    fields = made.__dict__
    fields["cells"] = cells
    fields["ball"] = ball
    fields["side"] = side
    fields["done"] = done
    fields["phase"] = phase
    fields["keepers"] = keepers
    fields["entered"] = entered
    fields["score"] = score
    fields["resigned"] = resigned
    fields["flipped"] = flipped
    fields["options"] = options
    return made


_new_object = object.__new__


class _QuickTest:
    """Whether an action of a position in play is legal, from what it moves alone,
    without making the position it leads to: True or False where that is sure, None
    where only the full test (``Position._resolve``) can tell.

    Rule 1-4 at the turn's end is counted, not searched: the side's players in each
    keeper area and whether it holds the ball in its own. A second action is legal when
    its mover may move (a player that entered its own keeper area must leave it) and
    the turn may end. A first action is legal when the turn could then end at once
    and a *quiet* step (between squares outside both keeper areas, away from the ball;
    see ``Position._has_quiet_step``) is left for the second: one of this position's
    quiet steps that the action does not take, or, when the turn could not end at once
    (the mover entered a keeper area, or the ball stays in the own area), a step of the
    mover out to a free square outside both areas (``_steps_out``). A plain step leaves
    its own quiet step, back (``plain_step``). An action that closes a sandwich on the
    ball's holder goes to the full test (tested only for a move landing right behind
    the holder and the opponents lined up with it on its file or rank), as does every
    action where a sandwich stands on the board already. The sets of squares involved
    are bitboards (``geometry.BB_*``), read per square as byte flags: a step whose
    verdict its mover's class decides (``step_flags``, ``mover_steps``) is one flag
    read; the others ask :meth:`verdict`.
    """

    __slots__ = ("_areas_free", "_closers", "_counts", "_every_target", "_free", "_keeper",
                 "_may_spare", "_mine", "_own_area", "_plain_to", "_their_area", "_twice",
                 "own", "plain", "plain_from_flags", "plain_step",
                 "plain_to_flags", "plenty", "position", "step_sets", "their")

    plain: bool | None
    plain_step: bool | None
    step_sets: tuple[int, int] | None

    def __init__(self, position: Position, closers: dict[int, int]) -> None:
        """``closers``: ``_closing_squares`` of the position where the opponent holds the
        ball (no sandwich standing), else ``_NO_CLOSERS`` (see ``Position._quick_test``)."""
        self.position = position
        me, ball, cells = position.side, position.ball, position.cells
        empty = position._empty
        #: the side's players in its own keeper area, and in the opponent's (rule 1-4's
        #: counts); the side's codes and the areas, which verdict() reads on every call
        in_area, own_cut, their_cut, mine, own_area, self._their_area = _SIDE_READS[me]
        self._mine, self._own_area = mine, own_area
        own = self.own = in_area[cells[own_cut]]
        their = self.their = in_area[cells[their_cut]]
        self._keeper = position.keepers[me]
        #: the squares of plain movers, as one byte per square (a set's bytes: square i
        #: is byte i), read with one index per square
        quiet_but, areas_but, quiet_from = _BALL_READS[ball]
        self.plain_from_flags = quiet_from
        #: the free quiet squares, the targets of the first action's quiet steps
        free = self._free = empty & quiet_but
        #: where a move may close a sandwich on the opponent holding the ball (see
        #: ``_closing_squares``): the full test decides a move that lands there
        self._closers = closers
        #: the targets of plain steps (see ``Position._judged_steps``), and the keeper
        #: areas' free squares (see ``step_sets``), neither where a sandwich may close
        areas_free = empty & areas_but
        closing = 0
        if closers:
            for square in closers:
                closing |= BB_SQUARES[square]
            plain_to = free & ~closing
            areas_free &= ~closing
        else:
            plain_to = free
        self._plain_to, self._areas_free = plain_to, areas_free
        #: the targets of plain steps, as flags
        self.plain_to_flags = plain_to.to_bytes(50, "little")
        bad = own > 1 or their > 0 or (ball in own_area and cells[ball] in mine)
        #: the targets of the first action's quiet steps, all, and those of two players
        #: or more, and the count of players reaching each: made with ``plenty`` below
        #: (all but the first), or when first asked for (``_others``; -1: not yet)
        self._every_target = -1
        #: the verdict of a plain step (a plain mover's to a ``plain_to`` square): at the
        #: second action ``plain``; at the first, where the position owes nothing, legal:
        #: the mover may step back with the second (a quiet step, ``_has_quiet_step``)
        #:
        #: ``plenty``: whether three squares or more are the targets of two players'
        #: quiet steps or more: then whichever player moves first, and to whichever two
        #: squares it and the ball go, a quiet step is left for the second action
        #: (``_others`` holds those targets, whatever ``frm``): every use of ``_others``
        #: says legal. Made with the targets where the position owes nothing at the
        #: first action (a listing then asks ``_others`` eight times on average); else
        #: False, and ``_others`` decides.
        #:
        #: ``step_sets``: a plain mover's steps (the keeper's at the second action only)
        #: as two sets: the targets where its step is legal, and the free targets left
        #: to :meth:`verdict` (None: every step goes to the full test; at the second
        #: action, where ``plain`` is not, only where a sandwich may close). A mover with no
        #: step of the second set takes its steps in one go (``_plain_steps``). Per
        #: target of a plain mover's step (``step_flags``): 1 its verdict is the mover's
        #: (``plain``, or ``plain_verdict``), _LEGAL, _NOT_LEGAL, or 0: ask
        #: :meth:`verdict`. Where the position owes nothing (rule 1-4), the keeper areas'
        #: free squares are decided too (not the ball's square, nor where a sandwich may
        #: close). At the first action a step into an area is legal: the mover may step
        #: back out with the second (its square is quiet and left empty; ``_steps_out``);
        #: at the second, a step into the own area is legal while the area holds none of
        #: the side's players, one into the other area never. A step onto the free ball
        #: on a quiet square, taking it, counts as a plain step: legal at the second
        #: action where a plain step is, at the first where ``plenty`` holds (else
        #: ``verdict`` asks ``_others``). (The quiet squares and the areas' are the
        #: pitch: the free squares that are neither ``plain_to``'s nor ``areas_free``'s
        #: are those ``closing`` holds, only where an opponent holds the ball, and the
        #: free ball's square; the sets are made from that, without a set operation in
        #: the common case.)
        ball_free = cells[ball] == EMPTY
        if position.done:
            plain = self.plain = self.plain_step = not bad and position.entered < 0
            self._may_spare = self.plenty = False
            self._counts = -1
            if not plain:  # (a plain step changes no count: none is legal)
                self.step_sets = (0, closing)
            else:
                legal = plain_to | areas_free & BB_AREAS[me] if own == 0 else plain_to
                if not ball_free:
                    self.step_sets = (legal, closing)
                elif ball in _QUIET:
                    self.step_sets = (legal | BB_SQUARES[ball], 0)
                else:
                    self.step_sets = (legal, BB_SQUARES[ball])
        elif bad:
            self.plain = self.plain_step = self.step_sets = None
            self._may_spare = self.plenty = False
            self._counts = -1
        else:
            self.plain, self.plain_step, self._may_spare = None, True, True
            counts = 0  # _quiet_counts, inlined
            for square in position._active_squares:
                if quiet_from[square]:
                    counts += _STEPS_AT[square]
            self._counts = counts
            twice = self._twice = (counts + _TWO_OR_MORE) >> 7 & free
            plenty = self.plenty = twice.bit_count() >= 3  # (one bit a square)
            if not ball_free:
                self.step_sets = (empty ^ closing, closing) if closing else (empty, 0)
            elif plenty and ball in _QUIET:
                self.step_sets = (empty, 0)
            else:
                self.step_sets = (empty ^ BB_SQUARES[ball], BB_SQUARES[ball])

    def free_flags(self) -> bytes:
        """Where a chain of a plain mover that takes the ball may end with its player's
        plain verdict, as flags: the free quiet squares, the free ball's too (the ball
        goes with the mover; a free ball has no holder to sandwich). Made only for a
        chain that ends with the ball (0.2 a listing), not with every quick test."""
        p = self.position
        ball = p.ball
        if p.cells[ball] == EMPTY:
            return (self._free | BB_QUIET & BB_SQUARES[ball]).to_bytes(50, "little")
        return self._free.to_bytes(50, "little") if self._closers else self.plain_to_flags

    def step_flags(self) -> bytes:
        """Per target of a plain mover's step (not the keeper's), its flag (see
        ``step_sets``), as one byte a square: made only for a mover whose steps are not
        taken in one go (most listings have none)."""
        plain_to, areas_free = self._plain_to, self._areas_free
        if self._may_spare:  # the first action, where the position owes nothing
            return (plain_to | areas_free * _LEGAL).to_bytes(50, "little")
        if self.plain:
            legal = areas_free & BB_AREAS[self.position.side] if self.own == 0 else 0
            return (plain_to | legal * _LEGAL | (areas_free & ~legal)
                    * _NOT_LEGAL).to_bytes(50, "little")
        return self.plain_to_flags

    def mover_steps(self, frm: int) -> tuple[bytes, bool | None, int, int, int]:
        """What ``step_flags`` and :meth:`plain_verdict` are to a plain mover (the flags,
        ``sure`` and ``lone``), for a mover that is not plain, where its class decides
        when the position owes nothing (rule 1-4): the holder of the ball (then outside
        the keeper areas: a dribble to a quiet square changes nothing counted, one into an
        area is legal at the first action, as a plain mover's, not at the second) and a
        player alone in its own area, the keeper or another (a step out of it or within it
        leaves no count too high: :meth:`verdict` tells neither from the other there);
        else nothing decided. Then the sets of its flags, as ``step_sets`` are to a plain
        mover: the targets where the step is legal, and the free targets without a flag
        (ask :meth:`verdict`); -1 for the second where a flagged step needs the full test
        (its verdict None: ``lone``'s, or every one's), its steps then judged one by one.
        At the second action where the position owes something, the sets alone
        (:meth:`_owing_steps`)."""
        p = self.position
        if not (self.plain or self._may_spare):
            if p.done:
                return self._owing_steps(frm)
            return _NO_FLAGS, None, -1, 0, p._empty
        plain_to, areas_free = self._plain_to, self._areas_free
        if frm == p.ball:
            ones = plain_to
            if self._may_spare:
                flagged = legal = ones | areas_free
                flags = (ones | areas_free * _LEGAL).to_bytes(50, "little")
            else:
                flagged, legal = ones | areas_free, ones
                flags = (ones | areas_free * _NOT_LEGAL).to_bytes(50, "little")
        elif frm in self._own_area:
            flagged = legal = ones = plain_to | areas_free & BB_AREAS[p.side]
            flags = ones.to_bytes(50, "little")
        else:
            return _NO_FLAGS, None, -1, 0, p._empty
        # (plain_verdict's first answers, inlined)
        sure, lone = (True, -1) if self.plain or self.plenty else self.plain_verdict(frm)
        if lone >= 0 or sure is None:
            return flags, sure, lone, 0, -1
        if not sure:  # (only the legal flags' steps are)
            legal ^= ones
        return flags, sure, lone, legal, p._empty ^ flagged

    def _owing_steps(self, frm: int) -> tuple[bytes, bool | None, int, int, int]:
        """:meth:`mover_steps` at the second action where the position owes something
        (rule 1-4's counts too high, or a player that entered its own keeper area must
        leave it): no flags (a chain asks :meth:`verdict`), the sets alone. A step is
        legal where the turn may then end: only the player that entered moves (not back
        into its area); a step out to a quiet square where the counts without the mover
        are right, into the own area where they are none there (not with the ball:
        held there), into the opponent's never. The full test decides where a sandwich
        may close, :meth:`verdict` the free ball's square."""
        p = self.position
        ball, cells, own_area, entered = p.ball, p.cells, self._own_area, p.entered
        plain_to, areas_free = self._plain_to, self._areas_free
        opened = p._empty ^ plain_to ^ areas_free \
            if self._closers or cells[ball] == EMPTY else 0
        if entered >= 0 and frm != entered:
            return _NO_FLAGS, None, -1, 0, opened
        own = self.own - (frm in own_area)
        if own > 1 or self.their - (frm in self._their_area) > 0:
            return _NO_FLAGS, None, -1, 0, opened
        if frm == ball:  # a dribble: the ball goes with the mover
            return _NO_FLAGS, None, -1, plain_to, opened
        if ball in own_area and cells[ball] in self._mine:  # held there by a team-mate
            return _NO_FLAGS, None, -1, 0, opened
        if own == 0 and entered < 0:
            return _NO_FLAGS, None, -1, plain_to | areas_free & BB_AREAS[p.side], opened
        return _NO_FLAGS, None, -1, plain_to, opened

    def spare(self, frm: int) -> int:
        """The targets of the quiet steps left for the second action when ``frm`` moves
        first (0 at the second action, or where the turn could not end at once): a plain
        step from ``frm`` to a square outside this set leaves one of them."""
        return self._others(frm) if self._may_spare else 0

    def _make_targets(self) -> int:
        """Makes ``_every_target`` (and ``_twice``, where the constructor did not), the
        targets of the first action's quiet steps reached by one player or more (and by
        two or more); returns the first.

        A square's byte of ``_quiet_counts`` counts the players reaching it, and a byte
        plus 127 (126) reaches its top bit where one (two) or more do."""
        counts, free = self._counts, self._free
        if counts < 0:
            counts = self._counts = self._quiet_counts()
            self._twice = (counts + _TWO_OR_MORE) >> 7 & free
        every = self._every_target = (counts + _ONE_OR_MORE) >> 7 & free
        return every

    def _quiet_counts(self) -> int:
        """The steps' targets of the quiet players summed: a square's byte counts the
        players reaching it (at most 8: no carry into the next square's)."""
        counts = 0
        quiet_from = self.plain_from_flags
        for square in self.position._active_squares:
            if quiet_from[square]:
                counts += _STEPS_AT[square]
        return counts

    def _others(self, frm: int) -> int:
        """The targets of the first action's quiet steps of the players other than ``frm``:
        all the targets, less those of ``frm``'s steps that no other player's reaches."""
        every = self._every_target
        quiet_from, position = self.plain_from_flags, self.position
        if every < 0:
            every = self._make_targets()
        if quiet_from[frm] and position.cells[frm] == ACTIVE[position.side]:
            # (frm's targets are among every target: the ^ take off those no other reaches)
            mine = _STEPS_AT[frm] & self._free
            return every ^ mine ^ (mine & self._twice)
        return every

    def _steps_out(self, frm: int, to: int, new_ball: int) -> bool:
        """Whether, after a first action moving a player ``frm`` -> ``to``, a step of
        that player to a free square outside both keeper areas is a legal second
        action (rule 1-4 at the turn's end; a sandwich that step closes is taken by
        the mover, outside its area)."""
        p = self.position
        me, cells = p.side, p.cells
        empty = (p._empty | BB_SQUARES[frm]) & ~BB_SQUARES[to]
        if not BB_STEPS[to] & empty & BB_QUIET:
            return False
        own_area = KEEPER_AREA[me]
        if self.own - (frm in own_area) > 1 or self.their - (frm in KEEPER_AREA[1 - me]) > 0:
            return False
        # The ball: carried by the mover (out with it), or where the first action left it.
        return new_ball == to or not (
            new_ball in own_area and cells[new_ball] in (ACTIVE[me], RESTING[me]))

    def plain_verdict(self, frm: int) -> tuple[bool | None, int]:
        """The verdict on the plain moves of the player on ``frm`` (see
        ``Position._judged_steps``), and the one target (-1: none) where it is None
        instead: at the first action, the target of the only quiet step left."""
        if self.plain is not None:
            return self.plain, -1
        if self.plenty:
            return True, -1
        spare = self.spare(frm)
        if not spare:
            return None, -1
        if spare & (spare - 1):  # two or more targets: one is left whatever the move
            return True, -1
        return True, (spare.bit_length() - 1) >> 3

    def judge(self, frm: int, to: int, new_ball: int) -> bool | None:
        """:meth:`verdict`, for a plain move (see ``Position._judged_steps``) from flags."""
        if new_ball == self.position.ball and frm >= 0 and self.plain_from_flags[frm] \
                and self.plain_to_flags[to]:
            sure, lone = self.plain_verdict(frm)
            return None if to == lone else sure
        return self.verdict(frm, to, new_ball)

    def verdict(self, frm: int, to: int, new_ball: int) -> bool | None:
        """A player moving ``frm`` -> ``to`` (-1, -1 for a kick), the ball ending on
        ``new_ball`` (with the mover, a team-mate, free, or where it was)."""
        p = self.position
        ball = p.ball
        if new_ball == ball and to in self._closers and self._closers[to] != frm:
            # It closes a sandwich (the other end stays closed: it is not the mover's)
            return None
        own_area, their_area = self._own_area, self._their_area
        done = p.done
        if done == 0:
            if to in own_area and frm != self._keeper and frm not in own_area:
                # it enters its keeper area: the second action must take it out
                return True if self._steps_out(frm, to, new_ball) else None
        elif p.entered >= 0 and (frm != p.entered or to in own_area):
            return False  # rule 1-4: the player that entered must leave with this one
        own, their = self.own, self.their
        if frm >= 0:
            own += (to in own_area) - (frm in own_area)
            their += (to in their_area) - (frm in their_area)
            holds = new_ball == to if new_ball == frm or new_ball == to \
                else p.cells[new_ball] in self._mine
        else:
            holds = p.cells[new_ball] in self._mine
        if own > 1 or their > 0 or (holds and new_ball in own_area):
            if done != 0:
                return False  # the turn may not end so
            return True if frm >= 0 and self._steps_out(frm, to, new_ball) else None
        if done != 0 or self.plenty:
            return True
        # A quiet step of another player left for the second action, not to the
        # squares the ball and the mover end on (the ball's is no player's step:
        # a mover's new_ball is the ball's square or its landing; a kick's may be a
        # team-mate's).
        # (a target outside the set of those two: no complement of a 400-bit set made)
        if frm >= 0:
            others = self._others(frm)
            return True if others & (BB_SQUARES[to] | BB_SQUARES[new_ball]) != others \
                else None
        others = self._others(new_ball)
        return True if others and others != BB_SQUARES[new_ball] else None


#: Per family (orthogonal, diagonal), per square (all 50): its hops as (jumped, landing,
#: twice the landing: a chain's state there without the ball).
_HOPS: tuple[tuple[tuple[tuple[int, int, int], ...], ...], ...] = tuple(
    tuple(tuple((mid, land, 2 * land) for mid, land in hops) for hops in family)
    for family in _FAMILY_HOPS)
#: Per family, per square (all 50): its hops as (jumped, landing, the path of that hop,
#: as ``_search_chains`` writes it: the square, then the landing).
_FIRST_HOPS: tuple[tuple[tuple[tuple[int, int, int], ...], ...], ...] = tuple(
    tuple(tuple((mid, land, square << 6 | land) for mid, land in hops)
          for square, hops in enumerate(family))
    for family in _FAMILY_HOPS)
#: Per family, per hop (its last two squares, ``path & 4095`` of a path written as
#: :func:`_still_chains` writes it): the onward hops from its landing, all but the one
#: back over the same square (it lands where the hop came from: never a new square).
_ONWARD_HOPS: tuple[tuple[tuple[tuple[int, int], ...], ...], ...] = tuple(
    tuple(tuple(hop for hop in family[last & 63] if hop[1] != last >> 6)
          if last & 63 < 50 else () for last in range(4096))
    for family in _FAMILY_HOPS)
#: Per family, what :func:`_ball_chains` reads: every hop from a square (``_HOPS``)
#: and the onward hops after a hop (``_ONWARD_HOPS``).
_BALL_FAMILIES = tuple(zip(_HOPS, _ONWARD_HOPS))
#: A square's first hop, as :func:`_still_chains` starts from it: its family, jumped
#: square and landing, its path, and the family's hops after it from that square (as
#: ``_FIRST_HOPS`` has them; those before it are no hops).
_Start = tuple[int, int, int, int, tuple[tuple[int, int, int], ...]]

#: Per square (all 50), its hops of both families in ``_ALL_HOPS``' order, each as
#: (jumped, landing, the search's start where it is the square's first hop): the test
#: for a first hop finds where the search starts, which tests no hop twice.
_FIRST_HOP_STARTS: tuple[tuple[tuple[int, int, _Start], ...], ...] = tuple(
    tuple((mid, land, (family, mid, land, path, _FIRST_HOPS[family][square][k + 1:]))
          for family in (0, 1)
          for k, (mid, land, path) in enumerate(_FIRST_HOPS[family][square]))
    for square in range(50))
assert all(tuple(hop[:2] for hop in hops) == all_hops
           for hops, all_hops in zip(_FIRST_HOP_STARTS, _ALL_HOPS))
#: The last 7 bits of a chain's key in ``_JUMPS`` (see :func:`_ball_chains`) for a
#: chain that takes no ball, and for one whose jumper had it from the start.
_NO_BALL, _HELD_BALL = 126, 127


def _search_chains(square: int, ball: int, setting: tuple[list[int], int, int]) -> list[
        tuple[Jump, int, int, bool]]:
    """``Position._chains`` of the player on ``square`` (``ball``: the ball's square; the
    ``setting``: ``Position._chain_setting``): none without a first hop (most players have
    none: nothing set up), else :func:`_still_chains` from that hop, or where a chain
    changes the ball's hands on the way, :func:`_ball_chains`."""
    board, free_ball, victim = setting
    for mid, land, start in _FIRST_HOP_STARTS[square]:
        if board[mid] and not board[land]:
            break
    else:
        return []
    chains = _still_chains(square, ball, board, free_ball, victim, start)
    if chains is None:
        return _ball_chains(square, board, free_ball, victim)
    return chains


def _still_chains(square: int, ball: int, board: Sequence[int], free_ball: int, victim: int,
                  start: _Start) -> list[tuple[Jump, int, int, bool]] | None:
    """``Position._chains`` of the player on ``square`` where no chain changes the ball's
    hands on the way, on ``board`` (the cells, or a list of them); None where one does (a
    hop lands on ``free_ball``, the free ball's square, or jumps ``victim``, the square of
    the opponent holding it; -1: none): the state search of :func:`_ball_chains` says those.
    A breadth-first search per family (orthogonal, then diagonal) whose state is the
    square alone, the path to each kept as an int (6 bits a square, the first highest: a
    pitch square's index is 5-44, so its top bits are never all 0), extended by one shift
    and or. The shortest path to a square is the first found, the orthogonal one on a tie
    (a shorter diagonal path replaces it, in its place).

    The jumper's square is left taken: a chain ending there is no result, and it is no
    other hop's jumped square (another parity class's). Where no chain takes the ball,
    the states without it are all :func:`_ball_chains` meets, in the same order: the
    same chains. (A hop that takes it is looked for before the test of squares met: one
    onto a square met, over the holder, is a new state there.)

    Most searches meet no ball, and cost no more for the two tests: a chain keeps its
    jumper's parity class (each hop moves two files, two ranks or both), landing only on
    its squares and jumping only the others', and of the searches where the ball's
    class allows, most meet it not (0.8 of 1.16 a listing, the bench's sample); the rest
    pay for the part of this search made before the hop that takes the ball.

    The search starts at ``start``, the square's first hop (``_FIRST_HOP_STARTS``): its
    family's hops before it are none, and that family's search is the first made."""
    # Two lists a family, not a dictionary: the squares met and, in the same place, the
    # path to each (read while they grow: breadth first); a path's last 6 bits are its
    # square. The start's family first, then, after the orthogonal one, the diagonal one:
    # written out twice, not as a loop over the families (no test of which family runs,
    # no lists swapped; a second family with no first hop costs its four tests alone).
    family, mid, land, path, hops = start
    if land == free_ball or mid == victim:
        return None
    routes, lands = [path], [land]
    for mid, land, path in hops:
        if board[mid] and not board[land]:
            if land == free_ball or mid == victim:
                return None
            routes.append(path)
            lands.append(land)
    onward = _ONWARD_HOPS[family]
    for path in routes:  # (its last two squares: the hop that reached its square)
        for mid, land in onward[path & 4095]:
            if board[mid] and not board[land]:
                if land == free_ball or mid == victim:
                    return None
                if land in lands:
                    continue
                lands.append(land)
                routes.append(path << 6 | land)
    if family == 0:
        reached: list[int] | None = None
        for mid, land, path in _FIRST_HOPS[1][square]:
            if board[mid] and not board[land]:
                if land == free_ball or mid == victim:
                    return None
                if reached is None:
                    reached, met = [path], [land]
                else:
                    reached.append(path)
                    met.append(land)
        if reached is not None:
            onward = _ONWARD_HOPS[1]
            for path in reached:
                for mid, land in onward[path & 4095]:
                    if board[mid] and not board[land]:
                        if land == free_ball or mid == victim:
                            return None
                        if land in met:
                            continue
                        met.append(land)
                        reached.append(path << 6 | land)
            for at, path in zip(met, reached):  # a shorter diagonal path replaces
                if at in lands:
                    i = lands.index(at)
                    if path.bit_length() < routes[i].bit_length():
                        routes[i] = path
                else:
                    lands.append(at)
                    routes.append(path)
    held = ball == square
    by_path = _STILL_JUMPS[held]
    out = []
    for path in routes:
        try:  # (a subscript: no method call; a chain missing is met once)
            chain = by_path[path]
        except KeyError:  # (the state search may have made it: one Jump a chain)
            key = path << 7 | (_HELD_BALL if held else _NO_BALL)
            chain = by_path[path] = _JUMPS.get(key) or _new_chain(key, -1)
        out.append(chain)
    return out


def _ball_chains(square: int, board: list[int], free_ball: int, victim: int) -> list[
        tuple[Jump, int, int, bool]]:
    """``Position._chains`` of the player on ``square`` where a chain changes the ball's
    hands on the way (where :func:`_still_chains` says None; ``free_ball``: the free ball's
    square, ``victim``: the square of the opponent holding it; one of them is -1; any
    player's chains where neither is): the search of :func:`_still_chains` over states
    2 * square + 1 where the jumper has the ball, 2 * square where not, the jumper's square
    emptied in ``board`` while it runs."""
    best: dict[int, int] | None = None
    queue: list[int]
    mover = board[square]
    board[square] = EMPTY  # while the jumper is in the air; nothing else empties or fills
    start = 2 * square
    for hops, onward in _BALL_FAMILIES:
        paths = None
        # The queue holds a state that took the ball as its complement (~state, < 0): it
        # tries every hop, the one back too (back with the ball: a new state); any
        # other state tries its hop's onward hops alone (the hop back reaches the state
        # it came from).
        for mid, land, state in hops[square]:
            if board[mid] and not board[land]:
                if paths is None:
                    paths = {start: square}
                    queue = []
                if land == free_ball or mid == victim:
                    state += 1
                    queue.append(~state)
                else:
                    queue.append(state)
                paths[state] = square << 6 | land
        if paths is None:
            continue
        for state in queue:
            if state < 0:
                state = ~state
                path = paths[state] << 6
                for mid, land, new in hops[state >> 1]:
                    if board[mid] and not board[land]:
                        new += 1
                        if new not in paths:
                            paths[new] = path | land
                            queue.append(new)
                continue
            path = paths[state]
            if state & 1:  # the jumper has the ball: every state after has it too
                for mid, land in onward[path & 4095]:
                    if board[mid] and not board[land]:
                        new = 2 * land + 1
                        if new not in paths:
                            paths[new] = path << 6 | land
                            queue.append(new)
            else:
                for mid, land in onward[path & 4095]:
                    if board[mid] and not board[land]:
                        if land == free_ball or mid == victim:
                            new = 2 * land + 1
                            if new not in paths:
                                paths[new] = path << 6 | land
                                queue.append(~new)
                        else:
                            new = 2 * land
                            if new not in paths:
                                paths[new] = path << 6 | land
                                queue.append(new)
        del paths[start]
        if best is None:
            best = paths
            continue
        for state, found in paths.items():
            old = best.get(state)
            if old is None or found.bit_length() < old.bit_length():
                best[state] = found
    board[square] = mover
    if best is None:
        return []
    # A chain's key: its path, then 7 bits: for a chain that took the ball from a
    # holder, the holder's square (where it was taken is the path's first hop over
    # it), 63 for none; and 1 where the jumper ends with the ball.
    with_ball = (victim if victim >= 0 else 63) << 1 | 1
    # Read by path from the tables of the chains with the ball taken from ``victim``
    # and of those without it (the still search's: no key to make but on a miss).
    taken, kept = _TAKEN_JUMPS[victim], _STILL_JUMPS[False]
    out = []
    for state, path in best.items():
        by_path = taken if state & 1 else kept
        try:
            chain = by_path[path]
        except KeyError:
            key = path << 7 | (with_ball if state & 1 else _NO_BALL)
            chain = by_path[path] = _JUMPS.get(key) or _new_chain(key, victim)
        out.append(chain)
    return out


def _new_chain(key: int, victim: int) -> tuple[Jump, int, int, bool]:
    """The chain of a key of ``_JUMPS`` (see :func:`_ball_chains`), kept there."""
    if len(_JUMPS) >= 1 << 16:  # bounded: chains are many, few are met
        _JUMPS.clear()
        for by_path in (*_STILL_JUMPS, *_TAKEN_JUMPS):
            by_path.clear()
    squares = _path_squares(key >> 7)
    stolen = (key >> 1) & 63 != 63
    jump = Jump(tuple(SQUARE_NAMES[i] for i in squares), _steal(squares, victim) if stolen else 0)
    chain = _JUMPS[key] = (jump, squares[0], squares[-1], bool(key & 1))
    return chain


def _path_squares(path: int) -> tuple[int, ...]:
    """The squares of a path written as an int, 6 bits a square, the first highest.

    >>> _path_squares(12 << 12 | 22 << 6 | 32)
    (12, 22, 32)
    """
    squares = []
    while path:
        squares.append(path & 63)
        path >>= 6
    return tuple(reversed(squares))


def _steal(path: tuple[int, ...], victim: int) -> int:
    """The index in ``path`` of the landing after the first hop over ``victim`` (0: none).
    A hop's jumped square is halfway between its two squares (index = rank * 5 + file)."""
    for k in range(1, len(path)):
        if path[k - 1] + path[k] == 2 * victim:
            return k
    return 0


def _closing_squares(cells: tuple[int, ...], ball: int, thief: int) -> dict[int, int] | None:
    """Where a ``thief`` player would close a sandwich on the opponent holding the ball
    (none when none holds it): square -> what closes the other end, a ``thief`` player's
    square (a move from there closes nothing) or -1 (the end line). None where a sandwich
    stands already (what :func:`_sandwich` finds: both ends of a line closed, one of them
    by a ``thief`` player; the quick test is not made then), found on the same walk.

    On the holder's file and rank, each end of the holder and the opponents lined up
    with it is the first square past them, or the end of the pitch (rules 3-3 and 3-4:
    closed at an end line behind a corner, ``SANDWICH_LINES``). A move onto an empty
    end closes the sandwich where the other end is closed; only the mover leaves a
    square, and no sandwich stands before (else the answer is None).

    >>> cells = [EMPTY] * 50
    >>> cells[SQUARE_INDEX["C4"]], cells[SQUARE_INDEX["C3"]] = ACTIVE[RED], ACTIVE[BLUE]
    >>> {SQUARE_NAMES[k]: SQUARE_NAMES[v] for k, v in
    ...  _closing_squares(tuple(cells), SQUARE_INDEX["C4"], BLUE).items()}
    {'C5': 'C3'}
    """
    victim = 1 - thief
    if cells[ball] != ACTIVE[victim]:
        return {}
    victims = (ACTIVE[victim], RESTING[victim])
    closer = ACTIVE[thief]
    out: dict[int, int] = {}
    for (line_a, closes_a), (line_b, closes_b) in SANDWICH_LINES[ball]:
        # Per side: the first square past the run, or -1 at the pitch's edge (where the
        # end line may close it), and whether it closes (the two sides written out: no
        # loop over them, nor a list of their ends).
        end_a = end_b = -1
        for square in line_a:
            if cells[square] not in victims:
                end_a, closes_a = square, cells[square] == closer
                break
        for square in line_b:
            if cells[square] not in victims:
                end_b, closes_b = square, cells[square] == closer
                break
        if closes_a and closes_b and (end_a >= 0 or end_b >= 0):
            return None  # (an end closed at a square: closed by a thief player there)
        if end_a >= 0 and cells[end_a] == EMPTY and closes_b:
            out[end_a] = end_b
        if end_b >= 0 and cells[end_b] == EMPTY and closes_a:
            out[end_b] = end_a
    return out


def _sandwich(cells: tuple[int, ...], ball: int,
              thief: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(sandwiching pieces, sandwiched squares) when ``thief`` sandwiches the ball holder.

    Rules 3-3 and 3-4: the holder, with any opponents lined up with it, between
    two active ``thief`` players along a file or a rank; at a board corner the
    end line closes the file (rule 3-3: "エンドラインと味方のコマではさむ").
    """
    victim = 1 - thief
    if cells[ball] != ACTIVE[victim]:
        return (), ()
    victims = (ACTIVE[victim], RESTING[victim])
    closer = ACTIVE[thief]
    # A side of a line closes only where its first square holds a victim or the
    # closer (or, with no square, at an end line): look no further in the common case.
    near = (victims[0], victims[1], closer)
    for (line_a, end_a), (line_b, end_b) in SANDWICH_LINES[ball]:
        if ((cells[line_a[0]] in near if line_a else end_a)
                and (cells[line_b[0]] in near if line_b else end_b)):
            break
    else:
        return (), ()
    receivers: list[int] = []
    run_squares: set[int] = set()
    for axis in SANDWICH_LINES[ball]:
        closers: list[int] = []
        closed = 0
        run = [ball]
        for line, ends_at_end_line in axis:
            for square in line:
                cell = cells[square]
                if cell in victims:
                    run.append(square)
                    continue
                if cell == closer:
                    closers.append(square)
                    closed += 1
                break
            else:  # the run reached the edge of the pitch
                closed += ends_at_end_line
        if closed == 2 and closers:
            receivers.extend(closers)
            run_squares.update(run)
    return tuple(sorted(receivers)), tuple(sorted(run_squares))


def _turn_end_problem(cells: tuple[int, ...], ball: int, side: int) -> str:
    """Why ``side`` may not end its turn with these cells (rule 1-4), or ''."""
    mine = (ACTIVE[side], RESTING[side])
    # The common case first, without building anything: nothing to say.
    a, b, c = AREA_SQUARES[side]
    if (cells[a] in mine) + (cells[b] in mine) + (cells[c] in mine) <= 1 \
            and not (ball in KEEPER_AREA[side] and cells[ball] in mine):
        a, b, c = AREA_SQUARES[1 - side]
        if not (cells[a] in mine or cells[b] in mine or cells[c] in mine):
            return ""
    own = [i for i in AREA_SQUARES[side] if cells[i] in mine]
    if len(own) > 1:
        squares = " and ".join(SQUARE_NAMES[i] for i in own)
        return f"only one player may stay in the keeper area when the turn ends ({squares})"
    if ball in KEEPER_AREA[side] and cells[ball] in mine:
        return (
            f"{SQUARE_NAMES[ball]} may not end the turn holding the ball in its own keeper area: "
            "carry it out or kick it out"
        )
    for i in AREA_SQUARES[1 - side]:
        if cells[i] in mine:
            return (
                f"{SQUARE_NAMES[i]} may not end the turn in {SIDES[1 - side]}'s keeper area "
                "(an attacker must leave it, or shoot, with the second action)"
            )
    return ""
