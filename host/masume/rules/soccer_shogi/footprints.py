"""Soccer Shogi's footprints (``KnowsFootprints``, masume.rules.base): the squares whose
stack an action changes, so that the tracker's search applies only the actions that
could explain a reading (issue 17, part 5).

What an action changes, by the rules of docs/rules/soccer-shogi.md (the seed text's
sentences quoted there; ``layout()`` shows the players, the ball under its holder, and
``blue-rest`` / ``red-rest`` for a resting player):

- A step (1-1 "タテヨコななめの空きマスに移動できます…移動先にボールがあれば、ボールと
  選手ゴマを重ねます"): its two squares; a dribble carries the ball along, a step onto the
  free ball takes it there.
- A kick (2-1 "ボールを…8方向に蹴ることができます"): the kicker's square and where the
  ball ends (a team-mate, an empty square, or the goal).
- A jump or a chain (1-2, 1-3): its first and last squares (the landings between are
  empty before and after: "連続ジャンプ…好きなところでやめてかまいません"); the free ball's
  square where a landing takes it (1-2 "着地点にボールだけがあるときにはそのマスでボールを
  取ることになります"); the holder's square where it steals (3-2 "ボールを持った敵選手を
  飛び越すことでボールを奪えます。奪われた選手ゴマは裏返して").
- The end of the side's turn (its second action, a pass, a sandwich's ``Take`` after the
  second action) turns its resting players face up ("Resting" under 3-2: a flipped
  player "is turned face up when that turn ends"): their squares too. A second action
  that scores (the turn ends with the restart) or that leaves a sandwich to take (3-5:
  "2手目が終了したときにはさまれる位置にいたら"; the turn ends with the ``Take``)
  turns nobody over yet.
- A ``Take`` (3-3, 3-4 "挟まれた選手は全員1回休みになります"): the holder's square, the
  receiver's and every sandwiched player not already resting.
- ``Restart`` sets the whole board up again: no footprint (None), as the protocol allows.

Every footprint is exact: it holds every square the action changes and no other
(tests/test_footprints.py checks both on random games).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from . import position as _rules
from .actions import Jump, Kick, Pass, Step, Take
from .geometry import ACTIVE, EMPTY, GOAL_NAMES, PITCH, RESTING, SQUARE_INDEX, SQUARE_NAMES

if TYPE_CHECKING:
    from .actions import Action
    from .position import Position


#: The last position :func:`standing_up` read, and its answer: the tracker asks the
#: footprints of a position's actions one after the other.
_last: tuple[object, tuple[str, ...]] = (None, ())


def standing_up(position: Position) -> tuple[str, ...]:
    """The squares of the resting players of the side to move: they are turned face up
    when its turn ends (``Position._end_turn``). Mostly none."""
    global _last
    known, squares = _last
    if known is not position:
        cells, resting = position.cells, RESTING[position.side]
        squares = tuple(SQUARE_NAMES[i] for i in PITCH if cells[i] == resting) \
            if resting in cells else ()
        _last = (position, squares)
    return squares


def _ends_turn(position: Position, action: Step | Kick | Jump) -> bool:
    """Does a second action end the turn (no goal, no sandwich left to take)? Only asked
    where the side has resting players to turn face up."""
    if isinstance(action, Kick):
        # The kicker held the ball: no holder of the other side to sandwich after it.
        return action.to not in GOAL_NAMES
    cells, ball, me = position.cells, position.ball, position.side
    if cells[ball] != ACTIVE[1 - me] or (isinstance(action, Jump) and action.steal):
        return True  # the ball is not the other side's after it: nothing to sandwich
    frm, to = SQUARE_INDEX[action.frm], SQUARE_INDEX[action.to]
    after = list(cells)
    after[frm] = EMPTY
    after[to] = ACTIVE[me]
    receivers, _ = _rules._sandwich(tuple(after), ball, me)
    return not receivers


def _core(position: Position, action: Step | Kick | Jump) -> tuple[str, ...]:
    """The squares an action's pieces change, without the end of the turn."""
    if not isinstance(action, Jump):
        return action.frm, action.to
    path = action.path
    ball = SQUARE_NAMES[position.ball]
    if action.steal or (position.cells[position.ball] == EMPTY and ball in path[1:]):
        return path[0], path[-1], ball  # the holder robbed, or the free ball taken
    return path[0], path[-1]


def footprint(position: Position, action: Action) -> frozenset[str] | None:
    """``Position.footprint``: the squares whose stack ``action`` changes (exact)."""
    if position.phase == _rules.PLAY:
        if isinstance(action, (Step, Kick, Jump)):
            squares = _core(position, action)
            if position.done == 1:
                rest = standing_up(position)
                if rest and _ends_turn(position, action):
                    squares += rest
            return frozenset(squares)
        if isinstance(action, Pass):  # it ends the turn
            return frozenset(standing_up(position))
        return None
    if position.phase == _rules.TAKE and isinstance(action, Take):
        cells, other = position.cells, ACTIVE[1 - position.side]
        _, run = _rules._sandwich(cells, position.ball, position.side)
        squares = (action.frm, action.to,
                   *(SQUARE_NAMES[i] for i in run if cells[i] == other))
        if position.done == 2:  # after the second action: the turn ends with it
            squares += standing_up(position)
        return frozenset(squares)
    return None  # Restart: the whole board set up again


def actions_changing(position: Position, squares: frozenset[str]) -> Iterator[Action]:
    """``Position.actions_changing``: the legal actions, in their order, whose footprint
    may hold every one of ``squares`` (a second action is counted as turning the resting
    players face up even where it does not: listed, never left out)."""
    legal: Sequence[Action] = list(position.legal_actions())
    if position.phase != _rules.PLAY:  # a Take, a Restart: one or two actions
        for action in legal:
            found = footprint(position, action)
            if found is None or squares <= found:
                yield action
        return
    rest = standing_up(position) if position.done == 1 else ()
    need = [square for square in squares if square not in rest]
    if not need:
        yield from legal
        return
    if len(need) > 3:  # no action changes more than three squares besides the turn's end
        return
    ball = SQUARE_NAMES[position.ball]
    free = position.cells[position.ball] == EMPTY
    for action in legal:
        if isinstance(action, (Step, Kick)):
            frm, to = action.frm, action.to
            for square in need:
                if square != frm and square != to:
                    break
            else:
                yield action
        elif isinstance(action, Jump):
            path = action.path
            frm, to = path[0], path[-1]
            for square in need:
                if square != frm and square != to and not (
                        square == ball and (action.steal or (free and square in path))):
                    break
            else:
                yield action
        # A Pass changes only the resting players' squares, and ``need`` has others.
