"""The actions of Soccer Shogi: small frozen values whose ``str()`` is their notation."""

from __future__ import annotations

from dataclasses import dataclass

from ..base import Restart
from .geometry import GOAL_NAMES, PITCH, SQUARE_NAMES, STEPS

#: Per pitch square, (target, the Step there) for each step (actions are immutable: shared).
STEP_ACTIONS: dict[int, tuple[tuple[int, Step], ...]] = {}


@dataclass(frozen=True)
class Step:
    """A player moves to a neighbouring square (a dribble if it holds the ball).

    >>> str(Step("A7", "A6"))
    'A7-A6'
    """

    frm: str
    to: str

    def __str__(self) -> str:
        return f"{self.frm}-{self.to}"


@dataclass(frozen=True)
class Jump:
    """A jump or a chain of jumps; ``path`` includes the starting square.

    ``steal`` is the index in ``path`` of the landing square where the ball was
    taken by jumping over the opponent who held it (0: no steal); the notation
    marks it with ``!``.

    >>> str(Jump(("E2", "C2", "C4", "A4", "A6"), steal=4))
    'E2・C2・C4・A4・A6!'
    >>> Jump(("A4", "A6"), steal=1).ascii()
    'A4*A6!'
    """

    path: tuple[str, ...]
    steal: int = 0

    def __str__(self) -> str:
        return self._written("・")

    def ascii(self) -> str:
        """The notation with ``*`` between the squares, for ASCII-only text."""
        return self._written("*")

    def _written(self, separator: str) -> str:
        return separator.join(
            square + ("!" if i and i == self.steal else "") for i, square in enumerate(self.path)
        )

    @property
    def frm(self) -> str:
        return self.path[0]

    @property
    def to(self) -> str:
        return self.path[-1]


@dataclass(frozen=True)
class Kick:
    """The player holding the ball kicks it along one of 8 lines.

    ``free`` says the ball stops on an empty square (the source writes an ``f``
    after it); a kick into a goal square is a shot and is written ``goal``.

    >>> str(Kick("C5", "A5")), str(Kick("A5", "E5", free=True)), str(Kick("B2", "D0"))
    ('b(C5-A5)', 'b(A5-E5)f', 'b(B2-D0)goal')
    """

    frm: str
    to: str
    free: bool = False

    def __str__(self) -> str:
        suffix = "goal" if self.to in GOAL_NAMES else ("f" if self.free else "")
        return f"b({self.frm}-{self.to}){suffix}"


@dataclass(frozen=True)
class Take:
    """After a sandwich, the stealing side moves the ball from the sandwiched
    holder (``frm``) to one of its sandwiching pieces (``to``). Procedural: it
    does not count as one of the turn's two actions.

    >>> str(Take("B4", "B3"))
    'b(B4-B3)!'
    """

    frm: str
    to: str

    def __str__(self) -> str:
        return f"b({self.frm}-{self.to})!"


@dataclass(frozen=True)
class Pass:
    """Ends the turn; legal only when the side to move has no legal action at all.

    >>> str(Pass())
    'pass'
    """

    def __str__(self) -> str:
        return "pass"


Action = Step | Jump | Kick | Take | Restart | Pass
STEP_ACTIONS.update(
    (s, tuple((t, Step(SQUARE_NAMES[s], SQUARE_NAMES[t])) for t in STEPS[s])) for s in PITCH
)
