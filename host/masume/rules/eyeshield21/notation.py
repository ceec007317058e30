"""Eyeshield 21 TCG notation: an action read from text, and a position read from its
one line (``Position.to_text``).

>>> parse_notation("F01.2@home-character-1")
Place(copy='F01.2', cell='home-character-1')
>>> str(parse_notation(" home-character-1 > home-pass-3 "))
'home-character-1>home-pass-3'
>>> parse_notation("use home-character-2>home-bench-1")
Use(cell='home-character-2', bench='home-bench-1', ability=1)
>>> str(parse_notation("adjust away power -2")), str(parse_notation("adjust discard S03.1"))
('adjust away power -2', 'adjust discard S03.1')
>>> str(parse_notation("Damage 3")), str(parse_notation("ready"))
('damage 3', 'ready')
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..base import NotationError, read_fields
from .actions import COUNTED, OFF_MAT, WORDS, Action, Adjust, Call, Move, Place, Use
from .cards import Table
from .geometry import AREAS, SIDES, is_cell, owner_of
from .position import SETUP, STEPS, Options, Piles, Position

_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]*"
_PLACE = re.compile(rf"^({_NAME})\s*@\s*({_NAME})$")
_MOVE = re.compile(rf"^({_NAME})\s*>\s*({_NAME})$")
_USE = re.compile(rf"^use\s+({_NAME})(?:#([1-9][0-9]*))?(?:\s*>\s*({_NAME}))?$", re.IGNORECASE)
_ADJUST = re.compile(rf"^adjust\s+(?:(home|away)\s+(power)\s+([+-][0-9]+)|(home|away)\s+(draw)\s+"
                     rf"([0-9]+)|(discard)\s+({_NAME})|(move)\s+({_NAME})\s*>\s*({_NAME}))$",
                     re.IGNORECASE)
_CALL = re.compile(r"^([a-z]+)(?:\s+(\d+))?$", re.IGNORECASE)
HELP = ("(F01.2@home-character-1, home-character-1>home-pass-3, home-pass-3>hand, use home-pass-3, "
        "draw, refill 2)")


def parse_notation(text: str) -> Action:
    """An action from its notation, without a position (legality is the position's).

    >>> parse_notation("pass home")
    Traceback (most recent call last):
    ...
    masume.rules.base.NotationError: 'pass home' is not eyeshield21 notation (F01.2@...)
    """
    if not isinstance(text, str):
        raise NotationError(f"{text!r} is not text")
    normal = text.strip()
    if not normal:
        raise NotationError("empty action")
    if match := _USE.match(normal):
        return Use(match.group(1), match.group(3) or "", int(match.group(2) or 1))
    if match := _ADJUST.match(normal):
        g = match.groups()
        if g[1]:
            return Adjust("power", g[0].lower(), int(g[2]))
        if g[4]:
            return Adjust("draw", g[3].lower(), int(g[5]))
        if g[6]:
            return Adjust("discard", card=g[7])
        return Adjust("move", card=g[9], to=g[10])
    if match := _PLACE.match(normal):
        return Place(match.group(1), match.group(2))
    if match := _MOVE.match(normal):
        to = match.group(2)
        return Move(match.group(1), to.lower() if to.lower() in OFF_MAT else to)
    if match := _CALL.match(normal):
        word, count = match.group(1).lower(), match.group(2)
        if word in WORDS and count is None:
            return Call(word)
        if word in COUNTED and count is not None:
            return Call(word, int(count))
        if word in COUNTED:
            raise NotationError(f"{normal!r}: {word} needs a number ({word} 2)")
    raise NotationError(f"{normal!r} is not eyeshield21 notation {HELP}")


def read_text(text: str, overrides: dict[str, Any],
              table_for: Callable[[Any, str, str], Table]) -> Position:
    """The position written by :meth:`Position.to_text`; ``overrides``: options given by the
    caller; ``table_for(cards, deck_home, deck_away)``: the table of the set named (or given)."""

    def bad(why: str) -> NotationError:
        return NotationError(f"not an eyeshield21 position ({why}): {text!r}")

    fields = read_fields(text, bad)
    known = {"cards", "decks", "first", "draw_cost", "hand_limit", "step", "move", "turn", "n",
             "home", "away", "cells", "gone-home", "gone-away", "known-home", "known-away", "used",
             "held-home", "held-away",
             "area", "hit", "mods", "over", "loser"}
    unknown = sorted(set(fields) - known)
    if unknown:
        raise bad(f"unknown field(s) {', '.join(unknown)}")
    try:
        decks = fields.get("decks", "/").split("/")
        options: dict[str, Any] = {"first": fields.get("first", "home")}
        for name in ("draw_cost", "hand_limit"):
            if name in fields:
                options[name] = int(fields[name])
        cards = overrides.pop("cards", fields.get("cards", "eyeshield21-demo"))
        deck_home = overrides.pop("deck_home", decks[0])
        deck_away = overrides.pop("deck_away", decks[1] if len(decks) > 1 else "")
        options.update(overrides)
        table = table_for(cards, deck_home, deck_away)
        opts = Options.make(**options)
        step = fields.get("step", SETUP)
        if step not in STEPS:
            raise bad(f"step {step!r} is not one of {', '.join(STEPS)}")
        piles = []
        for side in SIDES:
            values = [int(v) for v in fields.get(side, "40/0/0/0").split("/")]
            if len(values) != 4 or min(values) < 0:
                raise bad(f"{side}=deck/hand/guts/discard")
            piles.append(Piles(*values))
        cells = []
        if fields.get("cells", "-") != "-":
            for item in fields["cells"].split(","):
                bits = item.split(":")
                if len(bits) not in (2, 3) or (len(bits) == 3 and bits[2] != "down"):
                    raise bad(f"cell {item!r}: write cell:copy or cell:copy:down")
                table.card_set.copy(bits[1])
                cells.append((bits[0], bits[1], len(bits) == 2))

        def ids(key: str) -> tuple[str, ...]:
            return tuple(sorted(x for x in fields.get(key, "").split(",") if x))

        mods = tuple(int(v) for v in fields.get("mods", "0/0").split("/"))
        if len(mods) != 2:
            raise bad("mods=<home>/<away>")
        loser_text = fields.get("loser", "")
        position = Position(
            table, step, SIDES.index(fields.get("move", "home")),
            SIDES.index(fields.get("turn", "home")),
            int(fields.get("n", "0")), tuple(sorted(cells)), (piles[0], piles[1]),
            (ids("gone-home"), ids("gone-away")), (ids("known-home"), ids("known-away")),
            ids("used"),
            fields.get("area", ""), fields.get("hit", "0") == "1", (mods[0], mods[1]),
            fields.get("over", ""), SIDES.index(loser_text) if loser_text in SIDES else -1, opts,
            tuple(tuple(x for x in fields.get(f"held-{side}", "").split(",") if x)  # type: ignore[arg-type]
                  for side in SIDES),
        )
    except (KeyError, ValueError) as exc:
        if isinstance(exc, NotationError):
            raise
        raise bad(str(exc).strip("'\"")) from None
    problem = impossible(position)
    if problem:
        raise bad(problem)
    return position


def impossible(position: Position) -> str:
    """Why a position cannot exist, or '' (every card once, 40 cards a side, known cells)."""
    seen: set[str] = set()
    for cell, copy, _ in position.cells:
        if not is_cell(cell):
            return f"{cell} is not a place on the eyeshield21 mat"
        if copy in seen:
            return f"{copy} lies on two places"
        seen.add(copy)
        if not position.table.owns(copy):
            return f"{copy} is in neither deck"
        if owner_of(cell) != position.table.owner(copy):
            return f"{copy} is {position.table.owner(copy)}'s card, on {cell}"
    for s, side in enumerate(SIDES):
        on_mat = sum(1 for _, copy, _ in position.cells
                     if position.table.owner_index(copy) == s
                     and position.table.kind(copy) != "ball")
        if sum(position.piles[s]) + on_mat != len(position.table.decks[s].copies):
            return (f"{side}'s cards do not add up to its deck of "
                    f"{len(position.table.decks[s].copies)}")
    if position.area and position.area not in AREAS:
        return "area is pass or run"
    return ""


__all__ = ["HELP", "impossible", "parse_notation", "read_text"]
