"""Soccer Shogi notation: an action read from text, and a position read from its one line."""

from __future__ import annotations

import itertools
import re
import unicodedata
from typing import Any

from ..base import NotationError, Restart
from .actions import Action, Jump, Kick, Pass, Step, Take
from .geometry import (
    ACTIVE,
    ALL_GOALS,
    BLUE,
    EMPTY,
    GOAL_NAMES,
    PIECE_CHARS,
    PITCH,
    PITCH_SET,
    RED,
    RESTING,
    SIDES,
    _index,
    _square,
)
from .position import GOAL, OVER, PLAY, TAKE, Options, Position, _sandwich

_NOTATION_HELP = "(A7-A6, C5・C3, b(C5-A5), b(A5-E5)f, b(B2-D0)goal, b(B4-B3)!, restart)"
_SQ = r"[A-Za-z][0-9]{1,2}"  # wider than the board, so that F7 is "not a square"
_KICK_RE = re.compile(rf"^b\(\s*({_SQ})\s*-\s*({_SQ})\s*\)\s*(f|goal|!)?$", re.IGNORECASE)
_STEP_RE = re.compile(rf"^({_SQ})\s*-\s*({_SQ})$")
_JUMP_RE = re.compile(rf"^{_SQ}!?(?:\s*[・*]?\s*{_SQ}!?)+$")


def parse_notation(text: str) -> Action:
    """Read an action without a position (context-free: no ``f`` or ``!`` filled in).

    >>> parse_notation("E2・C2・C4・A4・A6!")
    Jump(path=('E2', 'C2', 'C4', 'A4', 'A6'), steal=4)
    >>> parse_notation("b(A5-E5)f")
    Kick(frm='A5', to='E5', free=True)
    >>> parse_notation("E2-D3-C3")
    Traceback (most recent call last):
    ...
    masume.rules.base.NotationError: 'E2-D3-C3' is two steps: write each action on its own ...
    """
    if not isinstance(text, str):
        raise NotationError(f"{text!r} is not text")
    # NFKC folds full-width letters, digits and the half-width middle dot.
    normal = unicodedata.normalize("NFKC", text).strip()
    normal = normal.replace("·", "・").replace("→", "-").replace("ー", "-").replace("−", "-")
    lowered = normal.lower()
    if lowered in ("restart", "kickoff", "kick-off"):
        return Restart()
    if lowered == "pass":
        return Pass()
    if not normal:
        raise NotationError("empty action")
    kick = _KICK_RE.match(normal)
    if kick:
        frm, to = kick.group(1).upper(), kick.group(2).upper()
        suffix = (kick.group(3) or "").lower()
        for name in (frm, to):
            _square(name)
        if suffix == "!":
            return Take(frm, to)
        if suffix == "goal" and to not in GOAL_NAMES:
            raise NotationError(f"{text.strip()!r}: 'goal' follows only a kick into a goal square "
                                "(B0-D0, B9-D9)")
        if suffix == "f" and to in GOAL_NAMES:
            raise NotationError(f"{text.strip()!r}: a kick into a goal is written 'goal', not 'f'")
        return Kick(frm, to, free=suffix == "f")
    steps = normal.split("-")
    if len(steps) > 2 and all(re.fullmatch(_SQ, s.strip()) for s in steps):
        pairs = ", ".join(f"{a.strip().upper()}-{b.strip().upper()}"
                          for a, b in itertools.pairwise(steps))
        raise NotationError(f"{text.strip()!r} is two steps: write each action on its own "
                            f"({pairs})")
    step = _STEP_RE.match(normal)
    if step:
        frm, to = step.group(1).upper(), step.group(2).upper()
        _square(frm)
        _square(to)
        return Step(frm, to)
    if _JUMP_RE.match(normal):
        squares = re.findall(rf"({_SQ})(!?)", normal)
        path = tuple(s.upper() for s, _ in squares)
        for name in path:
            _square(name)
        marks = [i for i, (_, bang) in enumerate(squares) if bang]
        if marks and marks[0] == 0:
            raise NotationError(f"{text.strip()!r}: ! goes after the square where the ball is "
                                "taken")
        if len(marks) > 1:
            raise NotationError(f"{text.strip()!r}: the ball can be taken only once in a chain")
        return Jump(path, marks[0] if marks else 0)
    raise NotationError(f"{text.strip()!r} is not soccer-shogi notation {_NOTATION_HELP}")


def read_text(text: str, overrides: dict[str, Any]) -> Position:
    def bad(why: str) -> NotationError:
        return NotationError(f"not a soccer-shogi position ({why}): {text!r}")

    if not isinstance(text, str):
        raise bad("not text")
    parts = text.split()
    if len(parts) < 3:
        raise bad("expected the board, the side to move and the actions made")
    board, side_name, done_text, *rest = parts
    ranks = board.split("/")
    if len(ranks) != 8:
        raise bad("the board needs 8 ranks separated by /")
    cells = [EMPTY] * 50
    chars = {v: k for k, v in PIECE_CHARS.items()}
    for k, row in enumerate(ranks):
        rank, file = 8 - k, 0
        for char in row:
            if char.isdigit():
                file += int(char)
            elif char in chars:
                if file >= 5:
                    break
                cells[_index(file, rank)] = chars[char]
                file += 1
            else:
                raise bad(f"unknown piece {char!r}")
        if file != 5:
            raise bad(f"rank {rank} does not have 5 squares")
    if side_name not in SIDES:
        raise bad("the side to move is blue or red")
    if done_text not in ("0", "1", "2"):
        raise bad("actions made this turn is 0, 1 or 2")
    values: dict[str, str] = {}
    flags: set[str] = set()
    for item in rest:
        key, sep, value = item.partition("=")
        if sep:
            values[key] = value
        else:
            flags.add(key)
    known_values = {"ball", "keepers", "score", "phase", "entered", "flip", "resigned", "goals"}
    known_flags = {"keepers-cannot-jump", "keeper-first-action-no-pass"}
    unknown = sorted((set(values) - known_values) | (flags - known_flags))
    if unknown:
        raise bad(f"unknown field(s) {', '.join(unknown)}")
    try:
        ball = _square(values.get("ball", ""))
        keeper_names = values.get("keepers", "").split(",")
        if len(keeper_names) != 2:
            raise bad("keepers=<blue's square>,<red's square>")
        keepers = (_square(keeper_names[0]), _square(keeper_names[1]))
        entered = _square(values["entered"]) if "entered" in values else -1
        flipped = tuple(_square(s) for s in values["flip"].split(",")) if values.get("flip") else ()
    except NotationError as exc:
        raise bad(str(exc)) from None
    score_match = re.fullmatch(r"(\d+)-(\d+)", values.get("score", ""))
    if not score_match:
        raise bad("score=<blue>-<red>")
    phase = values.get("phase", PLAY)
    if phase not in (PLAY, TAKE, GOAL, OVER):
        raise bad("phase is take, goal or over")
    resigned = -1
    if "resigned" in values:
        if values["resigned"] not in SIDES:
            raise bad("resigned=blue or resigned=red")
        resigned = SIDES.index(values["resigned"])
    option_values: dict[str, Any] = {
        "keepers_cannot_jump": "keepers-cannot-jump" in flags,
        "keeper_first_action_no_pass": "keeper-first-action-no-pass" in flags,
    }
    if "goals" in values:
        if not values["goals"].isdigit():
            raise bad("goals=<number>")
        option_values["goals_to_win"] = int(values["goals"])
    option_values.update(overrides)
    try:
        options = Options.make(**option_values)
    except ValueError as exc:
        raise bad(str(exc)) from None
    side = SIDES.index(side_name)
    position = Position(
        tuple(cells), ball, side, int(done_text), phase, keepers, entered,
        (int(score_match.group(1)), int(score_match.group(2))), resigned, flipped, options,
    )
    problem = impossible(position)
    if problem:
        raise bad(problem)
    return position


def impossible(position: Position) -> str:
    """What makes a position impossible, or '' (also used by the tests)."""
    cells = position.cells
    for s in (BLUE, RED):
        count = sum(1 for i in PITCH if cells[i] in (ACTIVE[s], RESTING[s]))
        if count != 6:
            return f"{SIDES[s]} has {count} players, not 6"
        keeper = position.keepers[s]
        if keeper not in PITCH_SET or cells[keeper] not in (ACTIVE[s], RESTING[s]):
            return f"{SIDES[s]}'s keeper square holds no {SIDES[s]} player"
    if any(cells[i] for i in ALL_GOALS):
        return "a player stands in a goal"
    in_goal = position.ball in ALL_GOALS
    if position.phase == GOAL and not in_goal:
        return "phase=goal needs the ball in a goal"
    if position.phase in (PLAY, TAKE) and in_goal:
        return "the ball is in a goal only right after a goal"
    if cells[position.ball] in RESTING:
        return "a resting player cannot hold the ball"
    if position.phase == TAKE and not _sandwich(cells, position.ball, position.side)[0]:
        return "phase=take needs a sandwiched ball holder"
    if position.phase == PLAY and position.done == 2:
        return "a turn has two actions"
    return ""
