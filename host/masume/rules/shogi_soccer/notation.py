"""Notation of shogi-piece soccer: actions, one-line positions and diagrams.

Actions, in the manner of the seed's record ``先手5−Bパス、同GK、同桂まで``:

============================  =================================================
``5-B桂``                      a move: target square, then the piece
``5-B桂(7-C)``                 the same with its origin, needed when two pieces
                              of a kind could go there (like KIF's ``(77)``)
``同GK``                       to the square the last action went to (同)
``5-Bパス``                    a pass by the ball holder to 5-B
``シュート``                   a shot at the opponent's goal mouth
``5-F角打``                    setting a piece up (shogi's 打, a drop)
``システム 3-4-3 飛歩歩-角歩歩歩-桂桂歩``   gote's system: own area, midfield, opponent area
``5-E飛(5-H)スルー``             a bishop or rook runs past the free ball and leaves it
``手番終了``                    sente ends its first turn after the kick-off pass
``先手反則`` / ``後手反則``       a foul by that side: the other side wins
============================  =================================================

Sente's pieces are written 王 飛 角 桂 歩, gote's GK RO BI NI PA (the seed's figure 1).
The reader is lenient: either side's letters for any piece, the long names
(飛車, 桂馬...), ASCII letters ``K R B N P`` and English words, full-width
characters, ``−`` or ``－`` for the hyphen, ``pass``/``shoot``/``system`` and a
``*`` for 打, a leading ``▲``/``△``/``先手``/``後手`` (checked against the side to move)
and a trailing ``まで``.

>>> from masume.rules.shogi_soccer import RULES
>>> p = RULES.from_text("4k4/4P4/6N2/2B6/9/9/9/9/9/9/4K4 sente play 3-D - -", play_out=True)
>>> a = p.parse_action("先手5−Bパス")
>>> p.notation(a)
'5-Bパス'
>>> p = p.apply(a)
>>> p.notation(p.parse_action("同GK"))
'5-BGK'

Positions on one line (like shogi's SFEN)::

    <ranks A..K, files 1..9> <side to move> <stage> <ball> <system> <result>

Pieces are ``KRBNP`` for sente and ``krbnp`` for gote, digits count empty
squares; the ball is a square name or ``goal-A``/``goal-K`` and belongs to the
piece standing there, if any; the system is gote's declared one as piece letters
per area (``RPP-BPPP-NNP``, ``0`` for an area without pieces) or ``-``; the
result is ``-`` or ``<winner>:<reason>``.

>>> RULES.start().to_text()
'9/9/9/9/9/9/9/9/9/9/9 gote system 5-F - -'
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from typing import TYPE_CHECKING

from ..base import IllegalAction, NotationError
from .actions import (
    DROP_WORD,
    END_WORD,
    ENGLISH,
    FOUL_WORD,
    KANJI,
    NO_PIECES,
    PASS_WORD,
    SHOT_WORD,
    THROUGH_WORD,
    Action,
    Declare,
    EndTurn,
    Foul,
    Move,
    Pass,
    Place,
    Shot,
    piece_word,
)
from .geometry import (
    ATTACKED_GOAL,
    EMPTY,
    FULL_SET,
    GOAL_A,
    GOAL_K,
    GOTE,
    INDEX,
    KIND_OF_LETTER,
    LETTER_OF_KIND,
    NAMES,
    RANK_LETTERS,
    SENTE,
    SIDES,
    SIZE,
    SYSTEM_ORDER,
    move_targets,
    side_of,
)

if TYPE_CHECKING:
    from .position import Position

# ---------------------------------------------------------------------- words

_PIECE_WORDS: dict[str, str] = {}
for _kind in KANJI:
    _PIECE_WORDS[KANJI[_kind]] = _kind
    _PIECE_WORDS[ENGLISH[_kind]] = _kind
    _PIECE_WORDS[_kind.upper()] = _kind
    _PIECE_WORDS[LETTER_OF_KIND[_kind]] = _kind
_PIECE_WORDS.update(
    {
        "玉": "king",
        "王将": "king",
        "玉将": "king",
        "GOALKEEPER": "king",
        "KEEPER": "king",
        "飛車": "rook",
        "角行": "bishop",
        "桂馬": "knight",
        "KN": "knight",
        "歩兵": "pawn",
    }
)
#: Longest first, so that "PA" wins over "P" and "王将" over "王".
_WORDS_BY_LENGTH = sorted(_PIECE_WORDS, key=len, reverse=True)
_HYPHENS = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"
_SQUARE = r"([1-9])-?([A-Ka-k])"
_SIDE_MARKS = {"▲": "sente", "☗": "sente", "先手": "sente",
               "△": "gote", "☖": "gote", "後手": "gote"}


def _normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    for h in _HYPHENS:
        text = text.replace(h, "-")
    return text.strip()


def _square_name(file: str, rank: str) -> str:
    return f"{file}-{rank.upper()}"


def _piece_kind(word: str) -> str | None:
    return _PIECE_WORDS.get(word.upper() if word.isascii() else word)


def _kinds_in(group: str) -> list[str]:
    """The piece kinds in a system group such as ``飛歩歩`` or ``RO PA PA`` or ``RPP``."""
    rest = re.sub(r"\s+", "", group)
    out: list[str] = []
    while rest:
        for word in _WORDS_BY_LENGTH:
            head = rest[: len(word)]
            if (head.upper() if head.isascii() else head) == word:
                out.append(_PIECE_WORDS[word])
                rest = rest[len(word) :]
                break
        else:
            raise NotationError(f"{rest[0]!r} is not a piece in the system group {group!r}")
    return out


# ---------------------------------------------------------------------- actions


def parse_system(text: str) -> tuple[str, str, str]:
    """``"3-4-3 飛歩歩-角歩歩歩-桂桂歩"`` -> ``("RPP", "BPPP", "NNP")`` (counts optional).

    >>> parse_system("RO PA PA / BI PA PA PA / NI NI PA")
    ('RPP', 'BPPP', 'NNP')
    """
    body = _normalize(text)
    counts: tuple[int, ...] | None = None
    m = re.match(r"^(\d+)\s*-\s*(\d+)\s*-\s*(\d+)(?![\d-])\s*[:：]?\s*(.*)$", body)
    if m:
        counts = tuple(int(x) for x in m.group(1, 2, 3))
        body = m.group(4)
    if not body:
        raise NotationError(
            "a system names its pieces per area, e.g. システム 3-4-3 飛歩歩-角歩歩歩-桂桂歩"
        )
    groups = re.split(r"\s*[-/]\s*", body)
    if len(groups) != 3:
        raise NotationError(
            f"a system has three groups (own area, midfield, opponent area), not {len(groups)}: "
            f"{text!r}"
        )
    letters = []
    for group in groups:
        if group in ("", "0", NO_PIECES) or group.lower() == "none":
            letters.append("")
            continue
        kinds = _kinds_in(group)
        letters.append(
            "".join(sorted((LETTER_OF_KIND[k] for k in kinds), key=lambda c: "KRBNP".index(c)))
        )
    system = (letters[0], letters[1], letters[2])
    if counts is not None and counts != tuple(len(g) for g in system):
        said = "-".join(map(str, counts))
        real = "-".join(str(len(g)) for g in system)
        raise NotationError(f"the system says {said} but lists {real} pieces")
    return system


_ACTION = re.compile(
    r"^(?:(?P<file>[1-9])-?(?P<rank>[A-Ka-k])|(?P<same>同))\s*(?P<rest>.*?)"
    r"\s*(?:\(\s*(?P<ofile>[1-9])-?(?P<orank>[A-Ka-k])\s*\))?$"
)


def parse_action(position: Position, text: str) -> Action:
    """Read ``text`` as an action in ``position``; see the module docstring for the forms."""
    if not isinstance(text, str):
        raise NotationError(f"an action is text, not {type(text).__name__}")
    body = _normalize(text)
    if body.endswith("まで"):
        body = body[: -len("まで")].rstrip()
    foul = re.match(rf"^(先手|後手|sente|gote|▲|☗|△|☖)?\s*(?:{FOUL_WORD}|foul)\s*(sente|gote)?$",
                    body, re.IGNORECASE)
    if foul:
        named = (foul.group(1) or foul.group(2) or position.side_to_move).lower()
        committed = _SIDE_MARKS.get(named, named)
        return _checked(position, Foul(committed))
    side = position.side_to_move
    for mark, claimed in _SIDE_MARKS.items():
        if body.startswith(mark):
            body = body[len(mark) :].lstrip()
            if claimed != side:
                raise IllegalAction(f"it is {side}'s turn, not {claimed}'s")
            break
    if not body:
        raise NotationError(f"empty action {text!r}")
    lowered = body.lower()
    if body == END_WORD or lowered in ("end", "end turn"):
        return _checked(position, EndTurn(side))
    through = False
    for word in (THROUGH_WORD, "through"):
        if lowered.endswith(word.lower()) and len(body) > len(word):
            body, through = body[: -len(word)].rstrip(), True
            lowered = body.lower()
    for word in ("システム", "system"):
        if lowered.startswith(word):
            action: Action = Declare(parse_system(body[len(word) :]))
            return _checked(position, action)
    m = re.match(rf"^(?:{SHOT_WORD}|shoot|shot)\s*(?:\(\s*{_SQUARE}\s*\))?$", body, re.IGNORECASE)
    if m:
        holder = _own_holder(position)
        if m.group(1) and _square_name(m.group(1), m.group(2)) != NAMES[holder]:
            raise IllegalAction(f"the ball is on {NAMES[holder]}, not {m.group(1)}-{m.group(2)}")
        kind = KIND_OF_LETTER[position.board[holder].upper()]
        goal = NAMES[ATTACKED_GOAL[position.turn]]
        return _checked(position, Shot(side, kind, NAMES[holder], goal))
    m = _ACTION.match(body)
    if not m:
        raise NotationError(
            f"cannot read {text!r}: write e.g. 5-B歩, 5-Bパス, シュート, 5-F角打 or 同GK"
        )
    if m.group("same"):
        if position.last_target < 0 or position.last_target >= SIZE:
            raise NotationError(f"{text!r}: 同 needs the square of the previous action")
        target = NAMES[position.last_target]
    else:
        target = _square_name(m.group("file"), m.group("rank"))
    origin = _square_name(m.group("ofile"), m.group("orank")) if m.group("ofile") else None
    rest = m.group("rest")
    if rest.lower() in (PASS_WORD, "pass"):
        holder = _own_holder(position)
        if origin is not None and origin != NAMES[holder]:
            raise IllegalAction(f"the ball is on {NAMES[holder]}, not {origin}")
        kind = KIND_OF_LETTER[position.board[holder].upper()]
        return _checked(position, Pass(side, kind, NAMES[holder], target))
    drop = False
    for mark in (DROP_WORD, "*"):
        if rest.endswith(mark):
            rest, drop = rest[: -len(mark)].rstrip(), True
    if rest.lower().endswith("drop"):
        rest, drop = rest[:-4].rstrip(), True
    piece_kind = _piece_kind(rest)
    if piece_kind is None:
        raise NotationError(
            f"{rest!r} in {text!r} is not a piece: write 王 飛 角 桂 歩, "
            "GK RO BI NI PA or K R B N P"
        )
    if drop or position.stage == "setup":
        if origin is not None:
            raise NotationError(f"{text!r}: a piece set up has no origin square")
        return _checked(position, Place(side, piece_kind, target))
    if origin is not None:
        return _checked(position, Move(side, piece_kind, origin, target, trap=not through))
    move = _resolve_move(position, side, piece_kind, target)
    if through and isinstance(move, Move):
        return _checked(position, Move(move.side, move.kind, move.origin, move.target, trap=False))
    return move


def _own_holder(position: Position) -> int:
    ball = position.ball
    if ball >= SIZE or position.board[ball] == EMPTY:
        raise IllegalAction("nobody has the ball: only the ball holder passes or shoots")
    if side_of(position.board[ball]) != position.turn:
        raise IllegalAction(f"{SIDES[1 - position.turn]} has the ball, not {position.side_to_move}")
    return ball


def _checked(position: Position, action: Action) -> Action:
    reason = position._why_illegal(action)
    if reason is not None:
        raise IllegalAction(reason)
    return action


def _movers(position: Position, kind: str, target: int) -> tuple[list[int], list[int]]:
    """(pieces of ``kind`` of the side to move, those of them that may move to ``target``)."""
    letter = LETTER_OF_KIND[kind]
    letter = letter if position.turn == SENTE else letter.lower()
    board = position.board
    pieces = [i for i, c in enumerate(board) if c == letter]
    able = [i for i in pieces if target in move_targets(board, position.ball, i)]
    return pieces, able


def _resolve_move(position: Position, side: str, kind: str, target: str) -> Action:
    """The move of a ``kind`` to ``target`` when the text names no origin."""
    pieces, able = _movers(position, kind, INDEX[target])
    playing = position.stage in ("kickoff-2", "play") and position.outcome() is None
    if playing and len(able) == 1:
        return _checked(position, Move(side, kind, NAMES[able[0]], target))
    if playing and len(able) > 1:
        origins = " or ".join(f"{target}{piece_word(side, kind)}({NAMES[i]})" for i in able)
        raise NotationError(f"{len(able)} {kind}s can move to {target}: write {origins}")
    if pieces:
        # the piece the player most likely meant says why: the only one, or the only
        # one whose way of moving reaches the square
        meant = [i for i in pieces if INDEX[target] in position._pattern(i, True)]
        one = pieces[0] if len(pieces) == 1 else meant[0] if len(meant) == 1 else None
        if one is not None or not playing:
            origin = NAMES[pieces[0] if one is None else one]
            reason = position._why_illegal(Move(side, kind, origin, target))
            raise IllegalAction(reason or f"the {kind} cannot move to {target}")
        raise IllegalAction(f"none of {side}'s {kind}s can move to {target}")
    if not playing:
        decided = position.outcome()
        if decided is not None:
            raise IllegalAction(f"the game is over: {decided}")
        if position.stage == "kickoff":
            raise IllegalAction("the game starts with the kick-off: a pass from 5-F to a team-mate")
    raise IllegalAction(f"{side} has no {kind} on the board")


def format_action(position: Position, action: Action) -> str:
    """``action`` as a record writes it in ``position``."""
    if isinstance(action, (Declare, Place, EndTurn, Foul)):
        return str(action)
    if isinstance(action, Shot):
        return SHOT_WORD
    if isinstance(action, Pass):
        return f"{action.target}{PASS_WORD}"
    if isinstance(action, Move):
        word = piece_word(action.side, action.kind)
        t = INDEX.get(action.target, SIZE)
        if t < SIZE and position.side_to_move == action.side:
            _, able = _movers(position, action.kind, t)
            if len(able) == 1 and NAMES[able[0]] == action.origin:
                return f"{action.target}{word}{'' if action.trap else THROUGH_WORD}"
        return f"{action.target}{word}({action.origin}){'' if action.trap else THROUGH_WORD}"
    raise TypeError(f"{action!r} is not a shogi-soccer action")


# ---------------------------------------------------------------------- positions


def _system_field(system: tuple[str, str, str] | None) -> str:
    if system is None:
        return "-"
    return "-".join(group or "0" for group in system)


def position_text(position: Position) -> str:
    ranks = []
    for r in range(11):
        row, run = "", 0
        for c in position.board[r * 9 : r * 9 + 9]:
            if c == EMPTY:
                run += 1
                continue
            if run:
                row += str(run)
                run = 0
            row += c
        if run:
            row += str(run)
        ranks.append(row)
    if position.result is None:
        result = "-"
    else:
        winner, reason = position.result
        result = f"{'draw' if winner is None else SIDES[winner]}:{reason}"
    return " ".join(
        [
            "/".join(ranks),
            position.side_to_move,
            position.stage,
            NAMES[position.ball],
            _system_field(position.system),
            result,
        ]
    )


def parse_position_text(text: str) -> dict[str, object]:
    """The fields of a position written by :func:`position_text`; NotationError if bad."""
    from .position import STAGES, system_problem

    if not isinstance(text, str):
        raise NotationError(f"a position is text, not {type(text).__name__}")
    fields = text.split()
    if len(fields) not in (5, 6):
        raise NotationError(
            "a shogi-soccer position has 5 or 6 fields: "
            f"ranks, side, stage, ball, system[, result]; got {len(fields)} in {text!r}"
        )
    ranks = fields[0].split("/")
    if len(ranks) != 11:
        raise NotationError(f"the board has 11 ranks (A to K), not {len(ranks)}")
    cells: list[str] = []
    for r, row in enumerate(ranks):
        width = 0
        for ch in row:
            if ch in "123456789":
                cells.extend(EMPTY * int(ch))
                width += int(ch)
            elif ch in "KRBNPkrbnp":
                cells.append(ch)
                width += 1
            else:
                raise NotationError(
                    f"rank {RANK_LETTERS[r]}: {ch!r} is not a piece (KRBNP for sente, krbnp for "
                    "gote)"
                )
        if width != 9:
            raise NotationError(f"rank {RANK_LETTERS[r]} has {width} squares, not 9")
    board = "".join(cells)
    side, stage, ball_name, system_field = fields[1:5]
    if side not in SIDES:
        raise NotationError(f"the side to move is sente or gote, not {side!r}")
    if stage not in STAGES:
        raise NotationError(f"the stage is one of {', '.join(STAGES)}, not {stage!r}")
    if ball_name not in INDEX:
        raise NotationError(f"the ball is on a square (5-F) or in goal-A/goal-K, not {ball_name!r}")
    ball = INDEX[ball_name]
    system: tuple[str, str, str] | None = None
    if system_field != "-":
        groups = system_field.split("-")
        if len(groups) != 3 or any(g != "0" and set(g) - set(SYSTEM_ORDER) for g in groups):
            raise NotationError(
                f"the system is three groups of R B N P such as RPP-BPPP-NNP (0 for none), "
                f"not {system_field!r}"
            )
        system = tuple(
            "".join(sorted(g.replace("0", ""), key=SYSTEM_ORDER.index)) for g in groups
        )  # type: ignore[assignment]
        problem = system_problem(system)  # type: ignore[arg-type]
        if problem:
            raise NotationError(f"system {system_field!r}: {problem}")
    result: tuple[int | None, str] | None = None
    if len(fields) == 6 and fields[5] != "-":
        who, _, reason = fields[5].partition(":")
        if who not in SIDES + ("draw",) or not reason:
            raise NotationError(f"the result is - or <winner>:<reason>, not {fields[5]!r}")
        result = (None if who == "draw" else SIDES.index(who), reason)
    turn = SIDES.index(side)
    _check_consistency(board, ball, turn, stage, system, result)
    return {
        "board": board,
        "ball": ball,
        "turn": turn,
        "stage": stage,
        "system": system,
        "result": result,
    }


def _check_consistency(
    board: str,
    ball: int,
    turn: int,
    stage: str,
    system: tuple[str, str, str] | None,
    result: tuple[int | None, str] | None,
) -> None:
    for s in (SENTE, GOTE):
        have = Counter(c.upper() for c in board if c != EMPTY and side_of(c) == s)
        for letter, n in have.items():
            if n > FULL_SET[letter]:
                raise NotationError(
                    f"{SIDES[s]} has {n} {KIND_OF_LETTER[letter]}s; a side has only "
                    f"{FULL_SET[letter]}"
                )
    if stage == "system" and (board != EMPTY * SIZE or system is not None or turn != GOTE):
        raise NotationError("before the system is declared the board is empty and gote is to move")
    if stage == "setup":
        if system is None:
            raise NotationError("the set-up comes after gote's system: give the system")
        if turn == SENTE and any(c.islower() for c in board):
            raise NotationError("gote sets up after sente, so gote has no piece out while sente "
                                "sets up")
    if stage in ("kickoff", "kickoff-2") and turn != SENTE:
        raise NotationError("the kick-off is sente's")
    if stage == "kickoff" and (ball >= SIZE or not board[ball].isupper()):
        raise NotationError("at the kick-off a sente piece holds the ball")
    if stage in ("system", "setup"):
        if ball >= SIZE:
            raise NotationError("the ball cannot be in a goal before the kick-off")
        return
    goal_by = {GOAL_A: SENTE, GOAL_K: GOTE}.get(ball)
    if goal_by is not None and result != (goal_by, "goal"):
        raise NotationError(f"the ball is in {NAMES[ball]}: write the result {SIDES[goal_by]}:goal")
    for s in (SENTE, GOTE):
        if board.find("K" if s == SENTE else "k") < 0 and result is None:
            raise NotationError(
                f"{SIDES[s]} has no goalkeeper: the game is over, write the result "
                f"{SIDES[1 - s]}:keeper-ejected"
            )


# ---------------------------------------------------------------------- diagram

_SENTE_CELLS = {"K": "王将", "R": "飛車", "B": "角行", "N": "桂馬", "P": "歩兵"}
_GOTE_CELLS = {"k": "GK", "r": "RO", "b": "BI", "n": "NI", "p": "PA"}
_PENALTY_RANKS = (0, 1, 9, 10)
_HOLDING = {"K": "王球", "R": "飛球", "B": "角球", "N": "桂球", "P": "歩球",
            "k": "G球", "r": "R球", "b": "B球", "n": "N球", "p": "P球"}  # fmt: skip


def diagram(position: Position) -> str:
    """The position drawn as the seed draws it (sente's kanji, gote's letters, 球 = ball).

    >>> from masume.rules.shogi_soccer import RULES
    >>> print(RULES.from_text("4k4/4P4/6N2/2B6/9/9/9/9/9/9/4K4 sente play 3-D - -").diagram())
       1  2  3  4  5  6  7  8  9
                 |  |
    A|  |  |  ┃  |GK|  ┃  |  |  |
    B|  |  |  ┃  |歩兵|  ┃  |  |  |
    C|  |  |  |  |  |  |桂馬|  |  |
      ――――――――――――――――――――――――――
    D|  |  |角球|  |  |  |  |  |  |
    E|  |  |  |  |  |  |  |  |  |
    F|  |  |  |  |  |  |  |  |  |
    G|  |  |  |  |  |  |  |  |  |
    H|  |  |  |  |  |  |  |  |  |
      ――――――――――――――――――――――――――
    I|  |  |  |  |  |  |  |  |  |
    J|  |  |  ┃  |  |  ┃  |  |  |
    K|  |  |  ┃  |王将|  ┃  |  |  |
                 |  |
    sente to move
    """
    board, ball = position.board, position.ball

    def goal_line(goal: int) -> str:
        return "             |" + ("球" if ball == goal else "  ") + "|"

    lines = ["   " + "  ".join(str(f) for f in range(1, 10)), goal_line(GOAL_A)]
    for r in range(11):
        row = RANK_LETTERS[r] + "|"
        for f in range(1, 10):
            i = r * 9 + f - 1
            c = board[i]
            if c == EMPTY:
                cell = "空球" if i == ball else "  "
            elif i == ball:
                cell = _HOLDING[c]
            else:
                cell = _SENTE_CELLS[c] if c.isupper() else _GOTE_CELLS[c]
            # the penalty areas (files 4-6 of ranks A-B and J-K) are fenced with ┃
            row += cell + ("┃" if r in _PENALTY_RANKS and f in (3, 6) else "|")
        lines.append(row)
        if r in (2, 7):
            lines.append("  " + "―" * 26)
    lines.append(goal_line(GOAL_K))
    lines.append(position.status().message)
    return "\n".join(lines)


__all__ = [
    "diagram",
    "format_action",
    "parse_action",
    "parse_position_text",
    "parse_system",
    "position_text",
]
