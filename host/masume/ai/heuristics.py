"""What the players know of a game beyond its rules: where a playout stopped early
stands (the score, and a lean: the ball, the initiative), how long a playout is, which
actions to try first (``EAGER``), and which are declarations no player chooses
(``DECLARATIONS``).

Only where random playouts alone see too little (docs/ai.md): goals are rare among
random actions, so an unfinished playout is judged by a lean as well as by the
score: in Soccer Shogi the ball's row, in Masume Soccer Tactics the ball's rank and who
has it (or stands nearer a loose ball), in Magic Number Eleven the initiative marker.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from masume.rules.base import AnyPosition
from masume.rules.eyeshield21.actions import Adjust as Eyeshield21Adjust
from masume.rules.magic_number_eleven.actions import Adjust as MagicNumberElevenAdjust
from masume.rules.magic_number_eleven.position import MIDDLE
from masume.rules.magic_number_eleven.position import Position as MagicNumberEleven
from masume.rules.masume_tactics.actions import Charge, Kick, Timeout, Whistle
from masume.rules.masume_tactics.geometry import PENALTY_AREA as TACTICS_PENALTY
from masume.rules.masume_tactics.geometry import SIDES as TACTICS_SIDES
from masume.rules.masume_tactics.geometry import WIDTH as TACTICS_WIDTH
from masume.rules.masume_tactics.position import Position as MasumeTactics
from masume.rules.shogi_soccer.actions import Foul, Shot
from masume.rules.shogi_soccer.actions import Move as ShogiSoccerMove
from masume.rules.shogi_soccer.geometry import GOAL_A, SIZE
from masume.rules.shogi_soccer.position import Position as ShogiSoccer

#: A leaf's value for each side, in [0, 1].
Evaluation = Callable[[AnyPosition], Mapping[str, float]]

#: Actions a playout plays at most before it is judged.
PLAYOUT_DEPTH = 40
#: Shorter where the engine is slow for the time a move has (Magic Number Eleven: some
#: 2 ms an action mid-game, 3 iterations in 0.2 s at 40) and a lean judges the rest.
#: 0 (no playout) in Masume Soccer Tactics and shogi-piece soccer: the lean judges the
#: leaf where the tree ends (random steps of 22 players only blur it, a goal needs a
#: dozen purposeful turns; shogi-piece soccer lists its actions dearly, and the search
#: runs ten times the iterations without playouts).
PLAYOUT_DEPTHS: Mapping[str, int] = {"masume-tactics": 0, "shogi-soccer": 0, "soccer-shogi": 12,
                                     "magic-number-eleven": 10}

#: UCT's exploration constant (values in [0, 1]).
EXPLORATION = 0.7
#: Smaller where leaves are judged by a lean alone (no playout): the values of the
#: actions differ by hundredths, and 0.7 would spread the visits evenly among them. In
#: shogi-piece soccer 0.2 still spread them so that 0.2 s a move went no deeper than
#: 0.02 s (10 won, 10 lost of 20 against it); at 0.05, 16 won, 39 of 60 in three seeds,
#: the visits still nearly even among some forty actions (two plies deep at 0.2 s, one
#: at 0.02 s); at 0.02, 52 of 60 in the same seeds (docs/benchmarks.md, h-ai7).
EXPLORATIONS: Mapping[str, float] = {"masume-tactics": 0.1, "shogi-soccer": 0.02}

#: Implicit minimax backups: how much the value of the best line below a child (the
#: leaves judged by the evaluation) counts beside its mean in selection (0: plain UCT).
#: Masume Soccer Tactics: a side plays two or three actions a turn among some eighty
#: each, so a node below the root expands every action before revisiting one, and
#: its mean is that of its side's random next actions, not of the best (docs/ai.md).
MINIMAX_WEIGHTS: Mapping[str, float] = {"masume-tactics": 0.5}

_ROW = re.compile(r"[A-Z](\d+)$")


def ball_advance(last_row: int) -> Callable[[AnyPosition], float]:
    """The ball's row on a pitch of rows 0 to ``last_row``, from -1 (row 0) to 1."""

    def measure(position: AnyPosition) -> float:
        for square, stack in position.layout().items():
            if "ball" in stack:
                found = _ROW.match(square)
                return 2 * int(found.group(1)) / last_row - 1 if found else 0.0
        return 0.0

    return measure


def tactics_play(position: AnyPosition) -> float:
    """Masume Soccer Tactics from home's side, from -1 to 1: the ball's rank (half; home
    attacks rank 17) and who has it (half): its keeper's side, or for a loose ball who
    stands nearer it (king's steps, as players move), so that a side runs for a loose ball."""
    assert isinstance(position, MasumeTactics)
    ball_x, ball_y = position.ball % TACTICS_WIDTH, position.ball // TACTICS_WIDTH
    keeper = position.keeper
    if keeper >= 0:
        having = (1.0 if keeper < 11 else -1.0) * (2 * tactics_keeping(position) - 1)
    else:
        nearest = [99, 99]
        for player, square in enumerate(position.players):
            steps = max(abs(square % TACTICS_WIDTH - ball_x), abs(square // TACTICS_WIDTH - ball_y))
            side = player // 11
            nearest[side] = min(nearest[side], steps)
        having = 0.8 * max(-1.0, min(1.0, (nearest[1] - nearest[0]) / 4))
    return 0.5 * (2 * ball_y / 17 - 1) + 0.5 * having


#: The chance a defender wins a charge, by his bonus (0; +1 in his own penalty area, +2
#: the goalkeeper there): his die and bonus at least the keeper's ("同じ数字のときはまもり
#: がわの勝ち").
_CHARGE_WINS = tuple(sum(a + bonus >= b for a in range(1, 7) for b in range(1, 7)) / 36
                     for bonus in range(3))


def tactics_keeping(position: AnyPosition) -> float:
    """Masume Soccer Tactics: the chance that the ball's keeper still keeps it when his
    side acts next: 1 while his side acts, or for the goalkeeper (nobody charges him);
    else each opponent who may charge him now (next to him, in front or beside: from
    behind is a foul; not yet used this turn; as many as the turn's actions left) wins
    the ball with the chance of his die (and bonus) against the keeper's."""
    assert isinstance(position, MasumeTactics)
    keeper = position.keeper
    side = keeper // 11
    if keeper < 0 or position.to_move == side or keeper % 11 == 0 or position.pending:
        return 1.0
    kx, ky = position.ball % TACTICS_WIDTH, position.ball // TACTICS_WIDTH
    forward = 1 if side == 0 else -1
    chances = []
    for player in range(11 * (1 - side), 11 * (2 - side)):
        if (position.used >> player) & 1:
            continue
        square = position.players[player]
        dx, dy = square % TACTICS_WIDTH - kx, square // TACTICS_WIDTH - ky
        if max(abs(dx), abs(dy)) == 1 and dy != -forward:
            bonus = (2 if player % 11 == 0 else 1) if square in TACTICS_PENALTY[1 - side] else 0
            chances.append(_CHARGE_WINS[bonus])
    left = position.actions_per_turn() - position.action + 1
    keeping = 1.0
    for chance in sorted(chances, reverse=True)[:left]:
        keeping *= 1 - chance
    return keeping


#: A lob's length by the die's face: 1, 2, 3 get the lob advantage (+2), 4, 5, 6 stay.
_LOB_LENGTH = (3, 4, 5, 4, 5, 6)


def tactics_shot(position: AnyPosition) -> float:
    """Masume Soccer Tactics: the chance that the ball's keeper scores with one kick from
    where he stands (0 for a loose ball), the best of a ground kick (the die's face, and a
    card's bonus, at least the distance to the goal, nobody on the way), a lob (its
    length exactly the distance: "着地点のマス目がゴール内であれば、ゴールイン", over
    everyone) and an inside kick (a goal one or two squares away, no opponent on the
    first two squares), along the three directions towards the goal. A diagonal into
    the goal from outside the posts hits the post (docs/rules/masume-tactics.md), and a
    player on the way stops a ground kick, as a rule (a bounce he or his side chooses
    may go on: not counted)."""
    assert isinstance(position, MasumeTactics)
    keeper = position.keeper
    if keeper < 0:
        return 0.0
    side = keeper // 11
    x, y = position.ball % TACTICS_WIDTH, position.ball // TACTICS_WIDTH
    forward, goal_rank = (1, 17) if side == 0 else (-1, 0)
    if abs(goal_rank - y) > 8:  # out of any kick's reach (6, and 2 a card may add)
        return 0.0
    at = position._at
    shirt = keeper % 11 + 1
    square = position.ball
    ground_bonus = position.options.bonus(side, shirt, "ground", square)
    lob_bonus = position.options.bonus(side, shirt, "lob", square)
    best = 0.0
    for dx in (-1, 0, 1):
        distance = 0
        blocked = closed = False  # a player before the goal; an opponent within two
        cx, cy = x, y
        while True:
            nx, ny = cx + dx, cy + forward
            distance += 1
            if ny == goal_rank:
                scores = 5 <= nx <= 7 and 5 <= cx <= 7  # else wide, or the post
                break
            if not 1 <= nx <= 11:
                scores = False
                break
            occupant = at.get(ny * TACTICS_WIDTH + nx, -1)
            if occupant >= 0:
                blocked = True
                closed = closed or (distance <= 2 and occupant // 11 != side)
            cx, cy = nx, ny
        if not scores:
            continue
        if distance <= 2 and not closed:
            return 1.0  # an inside kick: no die
        faces = 0 if blocked else sum(face + ground_bonus >= distance for face in range(1, 7))
        lobs = sum(length + lob_bonus == distance for length in _LOB_LENGTH)
        best = max(best, faces / 6, lobs / 6)
    return best


def shogi_soccer_play(position: AnyPosition) -> float:
    """Shogi-piece soccer from sente's side, from -1 to 1: the ball's rank (0.4; sente
    shoots at rank A), who holds it (0.3) and the pieces each side has left (0.3, two
    pieces ahead counting fully: an ejection loses a piece for good)."""
    assert isinstance(position, ShogiSoccer)
    ball, board = position.ball, position.board
    if ball >= SIZE:
        return 1.0 if ball == GOAL_A else -1.0
    advance = 1 - 2 * (ball // 9) / 10
    holder = board[ball]
    holding = 0.0 if holder == "." else 1.0 if holder.isupper() else -1.0
    pieces = sum(1 if c.isupper() else -1 for c in board if c != ".")
    return 0.4 * advance + 0.3 * holding + 0.3 * max(-1.0, min(1.0, pieces / 2))


def initiative(position: AnyPosition) -> float:
    """Magic Number Eleven's initiative marker, from -1 (space 1, home's end) to 1."""
    assert isinstance(position, MagicNumberEleven)
    return (position.initiative - MIDDLE) / (MIDDLE - 1)


#: How much the lean at its end counts, against a goal's 1.
LEAN_WEIGHT = 0.3


@dataclass(frozen=True)
class Lean:
    """Who stands better beside the score: ``measure`` from -1 to 1 in favour of ``side``,
    counting ``weight`` against a goal's 1."""

    side: str
    measure: Callable[[AnyPosition], float]
    weight: float = LEAN_WEIGHT


#: The games' leans (from their diagrams: Soccer Shogi's blue goal is row 9, Masume
#: Soccer Tactics' home goal row 0; Magic Number Eleven's initiative space 7 is home's
#: attacking end).
LEANS: Mapping[str, Lean] = {
    "masume-tactics": Lean("home", tactics_play, weight=0.8),
    "soccer-shogi": Lean("red", ball_advance(9)),
    "shogi-soccer": Lean("sente", shogi_soccer_play, weight=0.8),
    "magic-number-eleven": Lean("home", initiative),
}


def score_lead(position: AnyPosition, side: str) -> int:
    score = position.status().score
    return 2 * score.get(side, 0) - sum(score.values())  # own minus the other's


def outcome_values(position: AnyPosition) -> Mapping[str, float] | None:
    outcome = position.outcome()
    if outcome is None:
        return None
    return {side: 0.5 if outcome.winner is None else float(side == outcome.winner)
            for side in position.sides}


def by_score(position: AnyPosition) -> Mapping[str, float]:
    """The outcome once the game is over, else the score's lead, squeezed (a goal
    ahead is worth about 0.73)."""
    over = outcome_values(position)
    if over is not None:
        return over
    return {side: 0.5 + 0.5 * math.tanh(score_lead(position, side) / 2)
            for side in position.sides}


def by_score_and_lean(lean: Lean) -> Evaluation:
    """:func:`by_score`, the game's lean added."""

    def evaluate(position: AnyPosition) -> Mapping[str, float]:
        over = outcome_values(position)
        if over is not None:
            return over
        measure = lean.measure(position)
        out = {}
        for side in position.sides:
            towards = measure if side == lean.side else -measure
            out[side] = 0.5 + 0.5 * math.tanh((score_lead(position, side)
                                               + lean.weight * towards) / 2)
        return out

    return evaluate


#: Whether an action is one to try first in ``position``.
Eagerness = Callable[[AnyPosition, Any], bool]


def tactics_eager(position: AnyPosition, action: Any) -> bool:
    """Masume Soccer Tactics: the ball moves only by kicks and changes sides only by
    charges, among some fifty steps of players a turn."""
    return isinstance(action, (Kick, Charge))


def shogi_soccer_eager(position: AnyPosition, action: Any) -> bool:
    """Shogi-piece soccer: shots and ejections (a move onto a piece), the actions that win
    or lose a game at once: tried first, a reply that wins is seen among some hundred."""
    if isinstance(action, Shot):
        return True
    assert isinstance(position, ShogiSoccer)
    return isinstance(action, ShogiSoccerMove) and position.piece_at(action.target) is not None


#: Actions the search tries first and a playout plays one time in two when it can.
EAGER: Mapping[str, Eagerness] = {"masume-tactics": tactics_eager,
                                  "shogi-soccer": shogi_soccer_eager}


def eager(game: str) -> Eagerness | None:
    return EAGER.get(game)


#: Actions that record what the players declare or the table does, not moves: a player
#: (the computer, and the benchmark's random player) never chooses them, nor does a
#: playout. Shogi-piece soccer's foul, declared by the players, ends the game (a search
#: that may declare one declares the other side's and wins at once); the card games'
#: by-hand adjustments apply what a card's text says, in any amount; the table's
#: whistle and turn timeout. The players still record them on the page.
DECLARATIONS: Mapping[str, tuple[type, ...]] = {
    "shogi-soccer": (Foul,),
    "eyeshield21": (Eyeshield21Adjust,),
    "magic-number-eleven": (MagicNumberElevenAdjust,),
    "masume-tactics": (Whistle, Timeout),
}


def playable(position: AnyPosition) -> list[Any]:
    """The legal actions a player chooses among: all but the game's declarations (all,
    if nothing else is legal)."""
    actions = list(position.legal_actions())
    declared = DECLARATIONS.get(position.game)
    if not declared:
        return actions
    moves = [action for action in actions if not isinstance(action, declared)]
    return moves or actions


def tactics_evaluation(position: AnyPosition) -> Mapping[str, float]:
    """Masume Soccer Tactics: the score and the lean (:func:`tactics_play`), and the shot
    the ball's keeper has (:func:`tactics_shot`): with its chance the goal's value (the
    game won, where it is the goal that wins), else the rest; when the other side acts
    first, only if the keeper keeps the ball (:func:`tactics_keeping`)."""
    assert isinstance(position, MasumeTactics)
    judged = by_score_and_lean(LEANS["masume-tactics"])(position)
    chance = 0.0 if position.outcome() is not None else tactics_shot(position)
    if not chance:
        return judged
    shooter = position.keeper // 11
    side, other = TACTICS_SIDES[shooter], TACTICS_SIDES[1 - shooter]
    chance *= tactics_keeping(position)
    goals_to_win = position.options.goals_to_win
    if goals_to_win and position.score[shooter] + 1 >= goals_to_win:
        goal = 1.0
    else:
        goal = 0.5 + 0.5 * math.tanh((score_lead(position, side) + 1) / 2)
    value = chance * goal + (1 - chance) * judged[side]
    return {side: value, other: 1 - value}


#: Games whose leaf is judged otherwise than by the score and a lean.
EVALUATIONS: Mapping[str, Evaluation] = {"masume-tactics": tactics_evaluation}


def shogi_soccer_wins_in_one(position: AnyPosition) -> str | None:
    """Shogi-piece soccer: the side to move, if it can score or eject the goalkeeper with
    its next action (:meth:`~masume.rules.shogi_soccer.position.Position.wins_now`)."""
    assert isinstance(position, ShogiSoccer)
    return position.side_to_move if position.wins_now() else None


#: Where a game can tell cheaply that the side to move wins with its next action (a
#: solver at the leaves: the search then knows the position won, not only likely).
WINS_IN_ONE: Mapping[str, Callable[[AnyPosition], str | None]] = {
    "shogi-soccer": shogi_soccer_wins_in_one}


def decided(position: AnyPosition) -> str | None:
    """The side that has won, or wins with its next action where the game can tell
    (:data:`WINS_IN_ONE`); None if neither (a draw too)."""
    outcome = position.outcome()
    if outcome is not None:
        return outcome.winner
    wins_in_one = WINS_IN_ONE.get(position.game)
    return None if wins_in_one is None else wins_in_one(position)


def evaluation(game: str) -> Evaluation:
    """The leaf evaluation of ``game``: a position :func:`decided` is won (1) or lost
    (0), else the game's judgement."""
    if game in EVALUATIONS:
        judge = EVALUATIONS[game]
    else:
        lean = LEANS.get(game)
        judge = by_score if lean is None else by_score_and_lean(lean)
    if game not in WINS_IN_ONE:
        return judge

    def evaluate(position: AnyPosition) -> Mapping[str, float]:
        winner = decided(position)
        if winner is None:
            return judge(position)
        return {side: float(side == winner) for side in position.sides}

    return evaluate


def playout_depth(game: str) -> int:
    return PLAYOUT_DEPTHS.get(game, PLAYOUT_DEPTH)


def exploration(game: str) -> float:
    return EXPLORATIONS.get(game, EXPLORATION)


def minimax_weight(game: str) -> float:
    return MINIMAX_WEIGHTS.get(game, 0.0)
