"""Magic Number Eleven notation: an action read from text (:func:`parse`), written for
a viewer who may not see its card (:func:`redacted`), and a position as one line of
text (``Position.to_text``, :func:`write`) and back (``RULES.from_text``, :func:`read`).

>>> parse("pick st03"), str(parse("shoot h2b at h1b^"))
(Pick(card='ST03'), 'shoot H2b at H1b^')

The line is ``mne1`` then ``key=value`` fields separated by ``;``, every field of
the position, in a fixed order; lists use ``,``, pairs of a side use ``|``
(home first). Free text (the last shot's result) is percent-encoded.

>>> from masume.games import load_rules
>>> rules = load_rules("magic-number-eleven")
>>> text = rules.start().to_text()
>>> text.split(";")[:4]
['mne1', 'cards=magic-number-eleven-demo', 'first=home', 'shootout=0']
>>> rules.from_text(text) == rules.start()
True
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar, cast
from urllib.parse import quote, unquote

from ..base import NotationError, read_fields
from ..card_set import CardSet, CardSetError
from .actions import (
    Action,
    Adjust,
    Bench,
    Clear,
    Done,
    Effect,
    EndTurn,
    Link,
    Penalty,
    Pick,
    Place,
    Press,
    Ready,
    Reveal,
    Shoot,
    Sub,
    Synergy,
)
from .position import PHASES, Options, Position, Shot

MAGIC = "mne1"
T = TypeVar("T")


HELP = ("(pick ST03, link 2, press, H07 H2b, effect, shoot H2b at H1b^, deck SY05 on 1, "
        "hand SY05 on 2, done, end, kick PK03, sub out H04 in ST02, ready)")
_CARD = r"([A-Za-z0-9][A-Za-z0-9_.-]*)"
_CELL = r"([HAha][1-4][a-fA-F])"
_SYMBOL = r"([HAha][1-4][a-fA-F](?:\^|\*\d+|[|/][HAha][1-4][a-fA-F]))"
_FORMS: tuple[tuple[re.Pattern[str], type], ...] = ()


def _cell(text: str) -> str:
    return text[0].upper() + text[1] + text[2].lower()


def _symbol(text: str) -> str:
    if len(text) > 3 and text[3] in "|/":
        return _cell(text[:3]) + text[3] + _cell(text[4:])
    return _cell(text[:3]) + text[3:]


def parse(text: str) -> Action:
    """Read one action (case and spacing are forgiven); NotationError otherwise."""
    words = " ".join(str(text).split())
    low = words.lower()
    simple: dict[str, Action] = {
        "press": Press(), "effect": Effect(True), "no effect": Effect(False),
        "shoot blind": Shoot(kind="blind"), "end": EndTurn(), "done": Done(),
        "ready": Ready(), "clear": Clear()}
    if low in simple:
        return simple[low]
    if m := re.fullmatch(rf"(reveal|pick|bench) {_CARD}", words, re.IGNORECASE):
        makers: dict[str, type[Reveal | Pick | Bench]] = {"reveal": Reveal, "pick": Pick,
                                                           "bench": Bench}
        make = makers[m.group(1).lower()]
        return make(m.group(2).upper())
    if m := re.fullmatch(r"link (\d)", low):
        return Link(int(m.group(1)))
    if m := re.fullmatch(rf"(shoot|power shot) {_CELL}(?: at {_SYMBOL})?", words, re.IGNORECASE):
        kind = "power" if m.group(1).lower() == "power shot" else "normal"
        return Shoot(_cell(m.group(2)), _symbol(m.group(3)) if m.group(3) else "", kind)
    if m := re.fullmatch(rf"(deck|hand) {_CARD} on ([123])", words, re.IGNORECASE):
        return Synergy(m.group(2).upper(), int(m.group(3)), m.group(1).lower())
    if m := re.fullmatch(rf"(kick|save) {_CARD}", words, re.IGNORECASE):
        return Penalty(m.group(1).lower(), m.group(2).upper())
    if m := re.fullmatch(rf"sub out {_CARD} in {_CARD}", words, re.IGNORECASE):
        return Sub(m.group(1).upper(), m.group(2).upper())
    if m := re.fullmatch(r"adjust (home|away) (?:power ([+-]\d+)|(draw|discard|press) (\d+))",
                         low):
        if m.group(2):
            return Adjust("power", m.group(1), int(m.group(2)))
        return Adjust(m.group(3), m.group(1), int(m.group(4)))
    if m := re.fullmatch(rf"adjust discard {_CARD}", words, re.IGNORECASE):
        return Adjust("discard", card=m.group(1).upper())
    if m := re.fullmatch(rf"adjust move {_CELL} ?> ?{_CELL}", words, re.IGNORECASE):
        return Adjust("move", card=_cell(m.group(1)), to=_cell(m.group(2)))
    if m := re.fullmatch(rf"{_CARD} {_CELL}", words):
        return Place(m.group(1).upper(), _cell(m.group(2)))
    raise NotationError(f"{words!r} is not magic-number-eleven notation {HELP}")


def redacted(action: Action) -> str:
    """The action with the card it hides left unnamed (``deck card on 1``)."""
    if isinstance(action, Synergy):
        return f"{action.source} card on {action.area}"
    if isinstance(action, Penalty):
        return f"{action.role} card"
    return str(action)


def _ids(values: Any) -> str:
    return ",".join(sorted(values) if isinstance(values, frozenset) else values)


def _pair(values: Any, each: Callable[[Any], str]) -> str:
    return "|".join(each(v) for v in values)


def write(p: Position) -> str:
    fields = [
        ("cards", p.options.cards),
        ("first", p.options.first),
        ("shootout", str(int(p.options.shootout))),
        ("phase", p.phase),
        ("half", str(p.half)),
        ("turn", str(p.turn)),
        ("additional", str(int(p.additional))),
        ("ran_out", str(int(p.ran_out))),
        ("field", ",".join(f"{c}:{i}" for c, i in p.field)),
        ("unplaced", _pair(p.unplaced, _ids)),
        ("bench", _pair(p.bench, lambda b: ",".join(f"{c}:{i}:{int(o)}" for c, i, o in b))),
        ("subs", _pair(p.subs, str)),
        ("used", _ids(p.used)),
        ("initiative", str(p.initiative)),
        ("score", _pair(p.score, str)),
        ("hands", _pair(p.hands, str)),
        ("deck", str(p.deck)),
        ("discard", _ids(p.discard_known)),
        ("discard_unknown", str(p.discard_unknown)),
        ("areas", _pair(p.areas, lambda a: ",".join(f"{n}:{i}:{s}" for n, i, s in a))),
        ("team_symbols", _pair(p.team_symbols, str)),
        ("placed", p.placed),
        ("shot", p.shot.text() if p.shot else ""),
        ("penalty", _pair(p.penalty, str)),
        ("stars", _pair(p.stars, _ids)),
        ("revealed", _ids(p.revealed)),
        ("boxed", _ids(p.boxed)),
        ("ready", _pair(p.ready, lambda r: str(int(r)))),
        ("shootout_kicks", _pair(p.shootout, str)),
        ("last", quote(p.last, safe=" :!-")),
        ("shown", _pair(p.shown, lambda r: str(int(r)))),
        ("then", p.then),
        ("resigned", str(p.resigned)),
    ]
    if p.mods != (0, 0):  # by-hand power adjustments in the shot under way
        fields.append(("mods", _pair(p.mods, str)))
    if p.held != ((), ()):  # the hand cards the host knows (read on the hand slots)
        fields.append(("held", _pair(p.held, ",".join)))
    return ";".join([MAGIC] + [f"{k}={v}" for k, v in fields])


def read(text: str, overrides: dict[str, Any], load: Callable[[Any], CardSet]) -> Position:
    """The position written by :func:`write`; NotationError if it is not one."""
    def bad(why: str) -> NotationError:
        return NotationError(f"not a magic-number-eleven position ({why}): {text!r}")

    if not isinstance(text, str) or not text.startswith(MAGIC + ";"):
        raise bad(f"it starts with {MAGIC};")
    values = read_fields(text[len(MAGIC) + 1:], bad, ";")
    try:
        cards_name = overrides.get("cards", values["cards"])
        cards = load(cards_name)
        options = Options(cards=cards_name if isinstance(cards_name, str) else cards.id,
                          first=str(overrides.get("first", values["first"])),
                          shootout=bool(overrides.get("shootout", values["shootout"] == "1")))
        def ids(v: str) -> tuple[str, ...]:
            return tuple(x for x in v.split(",") if x)

        def sides(v: str, each: Callable[[str], T]) -> tuple[T, T]:
            # (home, away); a pair that is not two is refused below, in its own words.
            return cast("tuple[T, T]", tuple(each(x) for x in v.split("|")))

        def flag(v: str) -> bool:
            return v == "1"

        shot = None
        if values["shot"]:
            a, shooter, base, crack, token, kind = values["shot"].split(":")
            shot = Shot(int(a), shooter, int(base), int(crack), token, kind)
        position = Position(
            cards=cards, options=options, phase=values["phase"], half=int(values["half"]),
            turn=int(values["turn"]), additional=flag(values["additional"]),
            ran_out=flag(values["ran_out"]),
            field=cast("tuple[tuple[str, str], ...]",
                       tuple(tuple(x.split(":")) for x in ids(values["field"]))),
            unplaced=sides(values["unplaced"], ids),
            bench=sides(values["bench"], lambda b: tuple(
                (c, i, o == "1") for c, i, o in (x.split(":") for x in ids(b)))),
            subs=sides(values["subs"], int), used=frozenset(ids(values["used"])),
            initiative=int(values["initiative"]), score=sides(values["score"], int),
            hands=sides(values["hands"], int), deck=int(values["deck"]),
            discard_known=frozenset(ids(values["discard"])),
            discard_unknown=int(values["discard_unknown"]),
            areas=sides(values["areas"], lambda a: tuple(
                (int(n), i, s) for n, i, s in (x.split(":") for x in ids(a)))),
            team_symbols=sides(values["team_symbols"], int), placed=values["placed"], shot=shot,
            penalty=sides(values["penalty"], str), stars=sides(values["stars"], ids),
            revealed=ids(values["revealed"]), boxed=ids(values["boxed"]),
            ready=sides(values["ready"], flag), shootout=sides(values["shootout_kicks"], str),
            last=unquote(values["last"]), shown=sides(values["shown"], flag),
            then=values["then"], resigned=int(values["resigned"]),
            mods=sides(values.get("mods", "0|0"), int),
            held=sides(values.get("held", "|"), ids),
        )
    except (KeyError, ValueError, TypeError, CardSetError) as exc:
        raise bad(str(exc)) from None
    if position.phase not in PHASES:
        raise bad(f"phase {position.phase!r}")
    for pair in (position.unplaced, position.bench, position.subs, position.score, position.hands,
                 position.areas, position.team_symbols, position.penalty, position.stars,
                 position.ready, position.shootout, position.shown, position.mods,
                 position.held):
        if len(pair) != 2:
            raise bad("a pair of sides has not two parts")
    try:  # every card named must be in the set
        named = [i for _, i in position.field] + [i for u in position.unplaced for i in u]
        named += [i for b in position.bench for _, i, _ in b]
        named += [i for a in position.areas for _, i, _ in a]
        named += list(position.discard_known) + [i for i in position.penalty if i]
        named += [i for h in position.held for i in h]
        for copy_id in named:
            cards.copy(copy_id)
    except KeyError as exc:
        raise bad(str(exc.args[0])) from None
    return replace(position)


__all__ = ["HELP", "parse", "read", "redacted", "write"]
