"""Masume Soccer Tactics notation: an action read from text, and a position read from its
one line."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..base import CardSource, NotationError, Restart, Roll, read_fields
from .actions import Action, Charge, Choice, Kick, Move, Pass, Setup, Timeout, Whistle
from .geometry import (
    GAME,
    GOALS,
    PITCH,
    SIDES,
    SQUARE_INDEX,
    SQUARE_NAMES,
    TOUCH,
    _square,
)
from .position import Options, Pending, Position

_NOTATION_HELP = ("(G8-G9, G8-G9 leave, G8 ground N, G8 lob NE, G8 inside W2, G10 charge G9, "
                  "die 4, keep, touch E, head N2, bounce SW, kicker C5, C5>D9, ready, guard F1, "
                  "in B5, restart, whistle, time, pass)")
_SQ = r"[A-Za-z][0-9]{1,2}"
_DIR = r"(?:NE|NW|SE|SW|N|E|S|W)"
_PATTERNS = [
    (re.compile(rf"^({_SQ})\s*-\s*({_SQ})(\s+leave)?$", re.IGNORECASE), "move"),
    (re.compile(rf"^({_SQ})\s+(ground|lob|inside)\s+({_DIR})\s*([1-9])?$", re.IGNORECASE), "kick"),
    (re.compile(rf"^({_SQ})\s+charge\s+({_SQ})$", re.IGNORECASE), "charge"),
    (re.compile(r"^die\s+([0-9]+)$", re.IGNORECASE), "die"),
    (re.compile(r"^keep$", re.IGNORECASE), "keep"),
    (re.compile(rf"^(touch|bounce)\s+({_DIR})$", re.IGNORECASE), "dir"),
    (re.compile(rf"^head\s+({_DIR})\s*([12])$", re.IGNORECASE), "head"),
    (re.compile(rf"^(kicker|guard|in)\s+({_SQ})$", re.IGNORECASE), "setup"),
    (re.compile(rf"^({_SQ})\s*>\s*({_SQ})$", re.IGNORECASE), "replace"),
    (re.compile(r"^(ready|restart|whistle|time|pass)$", re.IGNORECASE), "word"),
]


def _name(text: str) -> str:
    name = text.upper()
    _square(name)
    return name


def parse_notation(text: str) -> Action:
    """One action from its notation, without a position (squares are checked to exist).

    >>> parse_notation("G8 lob ne")
    Kick(frm='G8', kind='lob', direction='NE', distance=0)
    >>> parse_notation("G8 inside N")
    Traceback (most recent call last):
    ...
    masume.rules.base.NotationError: 'G8 inside N': an inside kick says its distance, 1 or 2 ...
    """
    if not isinstance(text, str):
        raise NotationError(f"{text!r} is not {GAME} notation {_NOTATION_HELP}")
    clean = " ".join(text.strip().split())
    for pattern, kind in _PATTERNS:
        m = pattern.match(clean)
        if not m:
            continue
        g = m.groups()
        if kind == "move":
            return Move(_name(g[0]), _name(g[1]), bool(g[2]))
        if kind == "kick":
            kick_kind, distance = g[1].lower(), int(g[3]) if g[3] else 0
            if kick_kind == "inside" and not distance:
                example = f"{g[0].upper()} inside {g[2].upper()}2"
                raise NotationError(
                    f"{clean!r}: an inside kick says its distance, 1 or 2 ({example})")
            if kick_kind != "inside" and distance:
                raise NotationError(
                    f"{clean!r}: only an inside kick says a distance; the die decides the others")
            return Kick(_name(g[0]), kick_kind, g[2].upper(), distance)
        if kind == "charge":
            return Charge(_name(g[0]), _name(g[1]))
        if kind == "die":
            if not 1 <= int(g[0]) <= 6:
                raise NotationError(f"{clean!r}: a die shows 1 to 6")
            return Roll(int(g[0]))
        if kind == "keep":
            return Choice("keep")
        if kind == "dir":
            return Choice(g[0].lower(), g[1].upper())
        if kind == "head":
            return Choice("head", g[0].upper(), int(g[1]))
        if kind == "setup":
            return Setup(g[0].lower(), _name(g[1]))
        if kind == "replace":
            return Setup("replace", _name(g[0]), _name(g[1]))
        word = g[0].lower()
        words: dict[str, Action] = {"ready": Setup("ready"), "restart": Restart(),
                                    "whistle": Whistle(), "time": Timeout(), "pass": Pass()}
        return words[word]
    raise NotationError(f"{clean!r} is not {GAME} notation {_NOTATION_HELP}")


#: The fields a position header writes after its six positional ones, with the value
#: each has when it is not written (a position in open play writes none of them).
HEADER_DEFAULTS = {"used": "0", "last": "-1", "banned": "-1", "kicker": "-1", "restart": "-",
                   "half": "1", "kickoff": "home", "pending": "-"}
_POSITIONAL = ("ball", "move", "action", "offence", "score")


def write_header(position: Position) -> str:
    """The position as its header writes it (docs/rules/masume-tactics.md, "Position
    header"): the squares of home's shirts 1-11 ``/`` away's, the ball's square, the side to
    move, its action number, the side in possession (the offence), the score; then, only
    where they differ from open play, ``key=value`` fields for the rest of the state.

    >>> from masume.rules.masume_tactics import RULES
    >>> write_header(RULES.start())  # doctest: +NORMALIZE_WHITESPACE
    'G2,C4,E3,I3,K4,G5,C7,E6,G8,I6,K7/G15,C13,E14,I14,K13,G12,C10,E11,G11,I11,K10
     G8 home 1 home 0-0 kicker=8 restart=kickoff'
    """
    home = ",".join(SQUARE_NAMES[s] for s in position.players[:11])
    away = ",".join(SQUARE_NAMES[s] for s in position.players[11:])
    parts = [f"{home}/{away}", SQUARE_NAMES.get(position.ball, str(position.ball)),
             SIDES[position.to_move], str(position.action), SIDES[position.offence],
             f"{position.score[0]}-{position.score[1]}"]
    rest = {
        "used": str(position.used), "last": str(position.last_touch),
        "banned": str(position.banned), "kicker": str(position.must_kick),
        "restart": position.restart or "-", "half": str(position.half),
        "kickoff": SIDES[position.kicked_off],
        "pending": ":".join(str(p) for p in position.pending) or "-",
    }
    parts.extend(f"{k}={v}" for k, v in rest.items() if v != HEADER_DEFAULTS[k])
    if position.over:
        parts.append(f"over={position.over.replace(' ', '_')}")
    if position.resigned >= 0:
        parts.append(f"resigned={SIDES[position.resigned]}")
    options = position.options.text()
    if options:
        parts.append("options=" + ",".join(options.split()))
    return " ".join(parts)


def _header_fields(text: str, bad: Callable[[str], NotationError]) -> dict[str, str]:
    """The fields of a position header (:func:`write_header`) under the names of the
    older ``key=value`` form (``home=G2,... away=... ball=G8 ...``), which still reads."""
    if not isinstance(text, str):
        raise bad("not text")
    words = text.split()
    if not words or "=" in words[0]:
        return read_fields(text, bad)  # the older form: key=value items only
    teams = words[0].split("/")
    if len(teams) != 2:
        raise bad("the players are home's squares, shirts 1-11, '/', then away's")
    fields = {"home": teams[0], "away": teams[1]}
    positional = [w for w in words[1:] if "=" not in w]
    if len(positional) > len(_POSITIONAL) or any("=" not in w for w in
                                                  words[1 + len(positional):]):
        raise bad("after the players: ball, side to move, action, offence, score, "
                  "then key=value fields")
    if not positional:
        raise bad("the ball's square follows the players")
    fields.update(zip(_POSITIONAL, positional))
    fields.update(read_fields(" ".join(words[1 + len(positional):]), bad)
                  if len(words) > 1 + len(positional) else {})
    fields.setdefault("offence", fields.get("move", "home"))
    return fields


def read_text(text: str, overrides: dict[str, Any], cards: CardSource) -> Position:
    """The position written by ``Position.to_text`` (:func:`write_header`), or in the
    older ``key=value`` form; ``overrides``: options given by the caller; ``cards`` finds
    the specialist card set the options name."""

    def bad(why: str) -> NotationError:
        return NotationError(f"not a {GAME} position ({why}): {text!r}")

    fields = _header_fields(text, bad)
    try:
        players = tuple(SQUARE_INDEX[n.upper()] for n in fields["home"].split(",")) + tuple(
            SQUARE_INDEX[n.upper()] for n in fields["away"].split(","))
        if len(players) != 22:
            raise bad("11 players a side")
        ball_text = fields["ball"]
        ball = SQUARE_INDEX[ball_text.upper()] if not ball_text.isdigit() else int(ball_text)
        h, a = (int(v) for v in fields.get("score", "0-0").split("-"))
        pending: Pending = ()
        if fields.get("pending", "-") != "-":
            pending = tuple(int(p) if re.fullmatch(r"-?\d+", p) else p
                            for p in fields["pending"].split(":"))
        options: dict[str, Any] = {}
        if "options" in fields:
            for item in fields["options"].split(","):
                k, _, v = item.partition("=")
                flags = {"true": True, "false": False}
                options[k] = int(v) if v.isdigit() else flags.get(v.lower(), v)
        options.update(overrides)
        position = Position(
            players, ball, offence=SIDES.index(fields.get("offence", "home")),
            to_move=SIDES.index(fields.get("move", "home")), action=int(fields.get("action", "1")),
            used=int(fields.get("used", "0")), pending=pending, score=(h, a),
            last_touch=int(fields.get("last", "-1")), banned=int(fields.get("banned", "-1")),
            must_kick=int(fields.get("kicker", "-1")),
            restart="" if fields.get("restart", "-") == "-" else fields["restart"],
            half=int(fields.get("half", "1")),
            kicked_off=SIDES.index(fields.get("kickoff", "home")),
            over=fields.get("over", "").replace("_", " "),
            resigned=SIDES.index(fields["resigned"]) if "resigned" in fields else -1,
            options=Options.make(cards, **options),
        )
    except (KeyError, ValueError) as exc:
        if isinstance(exc, NotationError):
            raise
        raise bad(str(exc)) from None
    problem = impossible(position)
    if problem:
        raise bad(problem)
    return position


def impossible(position: Position) -> str:
    """Why a position cannot exist (22 players on distinct squares, one ball), or ""."""
    if len(set(position.players)) != 22:
        return "two players on one square"
    for s in position.players:
        if s not in PITCH and s not in TOUCH:
            return f"a player on {SQUARE_NAMES.get(s, s)}, off the board"
    ball = position.ball
    if ball not in PITCH and ball not in TOUCH and not any(ball in g for g in GOALS):
        return "the ball is off the board"
    return ""
