"""Magic Number Eleven actions and their notation.

Every action is a frozen dataclass whose ``str()`` is its notation; :func:`parse`
reads it back (``parse(str(a)) == a``). Cards are named by their copy id in the
card set (``H07``, ``ST03``, ``SY12``), field cells as the board names them
(``H2b``), shot tokens by the name of the symbol they cover (see ``field.py``).

=========================  ==================================================
notation                   action
=========================  ==================================================
``reveal ST03``            star draft: this star is turned up (a chance event)
``pick ST03``              star draft: take a revealed star
``bench H09``              put a player on the next free bench cell (set-up)
``link 2``                 team action: draw 2 synergy cards
``press``                  team action: push the initiative marker
``H07 H2b``                build-up: place H07 read at H2b (covers H2b, H2c)
``effect`` / ``no effect`` use or skip the placed card's instant effect
``shoot H2b at H1b^``      shoot with the card at H2b, token on symbol H1b^
``power shot H2b at H1b^`` the power-shot instant effect (base defence ignored)
``shoot blind``            the shot without base attack (nothing else possible)
``end``                    end the turn without shooting
``deck SY05 on 1``         a synergy card from the deck onto synergy area 1
``hand SY05 on 2``         a synergy card from the hand onto synergy area 2
``done``                   no more synergy cards
``kick PK03``              penalty kick: the kicker's card
``save PK08``              penalty kick: the keeper's card
``sub out H04 in ST02``    substitution (not an action of the turn)
``clear``                  the cards of a judgement, a penalty kick or the first
                           half are taken off the mat (the confirm button)
``ready``                  half time: this side's substitutions are done
=========================  ==================================================

>>> parse("deck SY05 on 1")
Synergy(card='SY05', area=1, source='deck')
>>> str(parse("shoot  h2b  at h1b^"))
'shoot H2b at H1b^'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

from ..base import NotationError


@dataclass(frozen=True)
class Reveal:
    card: str

    def __str__(self) -> str:
        return f"reveal {self.card}"


@dataclass(frozen=True)
class Pick:
    card: str

    def __str__(self) -> str:
        return f"pick {self.card}"


@dataclass(frozen=True)
class Bench:
    card: str

    def __str__(self) -> str:
        return f"bench {self.card}"


@dataclass(frozen=True)
class Link:
    count: int

    def __str__(self) -> str:
        return f"link {self.count}"


@dataclass(frozen=True)
class Press:
    def __str__(self) -> str:
        return "press"


@dataclass(frozen=True)
class Place:
    card: str
    cell: str

    def __str__(self) -> str:
        return f"{self.card} {self.cell}"


@dataclass(frozen=True)
class Effect:
    use: bool = True

    def __str__(self) -> str:
        return "effect" if self.use else "no effect"


@dataclass(frozen=True)
class Shoot:
    """A shot: ``kind`` is ``normal`` (build-up or quick attack), ``power`` (the
    instant effect) or ``blind`` (no base attack); ``token`` the symbol the shot
    token covers ("" when there is none)."""

    cell: str = ""
    token: str = ""
    kind: str = "normal"

    def __str__(self) -> str:
        if self.kind == "blind":
            return "shoot blind"
        text = ("power shot " if self.kind == "power" else "shoot ") + self.cell
        return f"{text} at {self.token}" if self.token else text


@dataclass(frozen=True)
class EndTurn:
    def __str__(self) -> str:
        return "end"


@dataclass(frozen=True)
class Synergy:
    card: str
    area: int
    source: str  # "deck" or "hand"

    def __str__(self) -> str:
        return f"{self.source} {self.card} on {self.area}"


@dataclass(frozen=True)
class Done:
    def __str__(self) -> str:
        return "done"


@dataclass(frozen=True)
class Penalty:
    role: str  # "kick" or "save"
    card: str

    def __str__(self) -> str:
        return f"{self.role} {self.card}"


@dataclass(frozen=True)
class Sub:
    out: str
    into: str

    def __str__(self) -> str:
        return f"sub out {self.out} in {self.into}"


@dataclass(frozen=True)
class Clear:
    def __str__(self) -> str:
        return "clear"


@dataclass(frozen=True)
class Ready:
    def __str__(self) -> str:
        return "ready"


Action = Union[Reveal, Pick, Bench, Link, Press, Place, Effect, Shoot, EndTurn, Synergy, Done,
               Penalty, Sub, Ready, Clear]

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
    simple = {"press": Press(), "effect": Effect(True), "no effect": Effect(False),
              "shoot blind": Shoot(kind="blind"), "end": EndTurn(), "done": Done(),
              "ready": Ready(), "clear": Clear()}
    if low in simple:
        return simple[low]
    if m := re.fullmatch(rf"(reveal|pick|bench) {_CARD}", words, re.IGNORECASE):
        kind = {"reveal": Reveal, "pick": Pick, "bench": Bench}[m.group(1).lower()]
        return kind(m.group(2).upper())
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


__all__ = ["Action", "Bench", "Clear", "Done", "Effect", "EndTurn", "HELP", "Link", "Penalty",
           "Pick",
           "Place", "Press", "Ready", "Reveal", "Shoot", "Sub", "Synergy", "parse", "redacted"]
