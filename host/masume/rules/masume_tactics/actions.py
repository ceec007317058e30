"""The actions of Masume Soccer Tactics: small frozen values whose ``str()`` is their notation."""

from __future__ import annotations

from dataclasses import dataclass

from ..base import Restart, Roll


@dataclass(frozen=True)
class Move:
    """A player steps one square in one of 8 directions (a dribble when he keeps the ball).

    ``leave`` is True when a keeping player steps off and leaves the ball (a loose ball).

    >>> str(Move("G8", "G9")), str(Move("G8", "G9", leave=True))
    ('G8-G9', 'G8-G9 leave')
    """

    frm: str
    to: str
    leave: bool = False

    def __str__(self) -> str:
        return f"{self.frm}-{self.to}" + (" leave" if self.leave else "")


@dataclass(frozen=True)
class Kick:
    """The keeping player calls a kick: ``kind`` ground, lob or inside, a direction, and
    for an inside kick the distance (1 or 2). Ground and lob kicks wait for the die.

    >>> str(Kick("G8", "ground", "N")), str(Kick("G8", "inside", "NE", 2))
    ('G8 ground N', 'G8 inside NE2')
    """

    frm: str
    kind: str
    direction: str
    distance: int = 0

    def __str__(self) -> str:
        distance = str(self.distance) if self.distance else ""
        return f"{self.frm} {self.kind} {self.direction}{distance}"


@dataclass(frozen=True)
class Charge:
    """A defender on ``frm`` charges the ball keeper on ``to`` (then both roll the die).

    >>> str(Charge("G10", "G9"))
    'G10 charge G9'
    """

    frm: str
    to: str

    def __str__(self) -> str:
        return f"{self.frm} charge {self.to}"


@dataclass(frozen=True)
class Choice:
    """A choice while the ball is in play within one action.

    - ``keep``: the player the ball reached keeps it;
    - ``touch D``: he lets it run one square in direction D instead (one-touch);
    - ``head D1`` / ``head D2``: he heads a lob on, 1 or 2 squares;
    - ``bounce D``: the direction a ball bounces on in.

    >>> str(Choice("keep")), str(Choice("touch", "E")), str(Choice("head", "N", 2))
    ('keep', 'touch E', 'head N2')
    """

    kind: str
    direction: str = ""
    distance: int = 0

    def __str__(self) -> str:
        out = self.kind
        if self.direction:
            out += " " + self.direction + (str(self.distance) if self.distance else "")
        return out


@dataclass(frozen=True)
class Setup:
    """A set-piece step.

    - ``kicker C5``: the player on C5 takes the set piece (he goes to the spot);
    - ``C5>D9``: re-place a player (``frm``, ``to``);
    - ``ready``: the side has re-placed the players it wants to;
    - ``guard F1``: the keeper stands before a number of the net for a penalty;
    - ``in B5``: the thrower steps back onto the pitch after a throw-in.

    >>> str(Setup("kicker", "C5")), str(Setup("replace", "C5", "D9")), str(Setup("ready"))
    ('kicker C5', 'C5>D9', 'ready')
    """

    kind: str
    frm: str = ""
    to: str = ""

    def __str__(self) -> str:
        if self.kind == "replace":
            return f"{self.frm}>{self.to}"
        return f"{self.kind} {self.frm}" if self.frm else self.kind


@dataclass(frozen=True)
class Whistle:
    """The referee's clock ran out (option ``halves``): half time, or full time.

    >>> str(Whistle())
    'whistle'
    """

    def __str__(self) -> str:
        return "whistle"


@dataclass(frozen=True)
class Timeout:
    """The side's turn time ran out (option ``turn_seconds``): the rest of its turn is lost.

    The table keeps the time and plays this action; it is legal in open play only
    (a kick in the air finishes first) and not while a kick-off or set-piece kicker
    still has to kick.

    >>> str(Timeout())
    'time'
    """

    def __str__(self) -> str:
        return "time"


@dataclass(frozen=True)
class Pass:
    """Ends the turn; legal only when the side to move has nothing else to do.

    >>> str(Pass())
    'pass'
    """

    def __str__(self) -> str:
        return "pass"


Action = Move | Kick | Charge | Roll | Choice | Setup | Restart | Whistle | Timeout | Pass
