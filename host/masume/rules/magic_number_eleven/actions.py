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
``adjust home power +2``   a by-hand effect applied by the players, for
                           either side (also ``draw N``, ``discard N``,
                           ``press N``, ``adjust discard SY05``,
                           ``adjust move H2b>H3c``), see :class:`Adjust`
=========================  ==================================================

>>> from masume.rules.magic_number_eleven.notation import parse
>>> parse("deck SY05 on 1")
Synergy(card='SY05', area=1, source='deck')
>>> str(parse("shoot  h2b  at h1b^"))
'shoot H2b at H1b^'
"""

from __future__ import annotations

from dataclasses import dataclass


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


@dataclass(frozen=True)
class Adjust:
    """What a card's by-hand effect does, applied by the players while the card lies on
    the field, for either side (the effect may concern the opponent): ``power`` (±N to
    ``side``'s attack or defence in the shot under way), ``draw`` (``side`` draws N synergy
    cards), ``discard`` (N from ``side``'s hand, unseen; or the synergy card ``card`` from
    its synergy area, named), ``press`` (the initiative marker N spaces toward ``side``'s
    opponent), ``move`` (the player card read at the cell ``card`` to the free cell ``to``
    of its own field).

    >>> str(Adjust("power", "home", 2)), str(Adjust("discard", "away", 1))
    ('adjust home power +2', 'adjust away discard 1')
    >>> str(Adjust("discard", card="SY05")), str(Adjust("move", card="H2b", to="H3c"))
    ('adjust discard SY05', 'adjust move H2b>H3c')
    """

    what: str
    side: str = ""
    amount: int = 0
    card: str = ""
    to: str = ""

    def __str__(self) -> str:
        if self.what == "move":
            return f"adjust move {self.card}>{self.to}"
        if self.card:
            return f"adjust {self.what} {self.card}"
        amount = f"{self.amount:+d}" if self.what == "power" else str(self.amount)
        return f"adjust {self.side} {self.what} {amount}"


Action = (Reveal | Pick | Bench | Link | Press | Place | Effect | Shoot | EndTurn | Synergy |
          Done | Penalty | Sub | Ready | Clear | Adjust)

__all__ = ["Action", "Adjust", "Bench", "Clear", "Done", "Effect", "EndTurn", "Link", "Penalty",
           "Pick", "Place", "Press", "Ready", "Reveal", "Shoot", "Sub", "Synergy"]
