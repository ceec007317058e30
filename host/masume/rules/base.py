"""The shape every rules engine has, and the one generic game object.

A rules engine is a module under ``masume.rules`` that defines an immutable,
hashable ``Position`` class following the :class:`Position` protocol below. It is
pure: no I/O, no randomness (a die roll is an explicit chance action chosen by
whoever holds the die), and it knows nothing of sensors, LEDs or links.

Everything above the engines (tracker, LED policy, records, web view) works only
through this protocol, so none of them ever asks which game is being played:

- ``legal_actions()`` says what may happen next (including chance outcomes),
- ``apply(action)`` says what follows (a new position; the old one is unchanged),
- ``layout()`` says where every physical piece stands, which is what the board's
  sensors can check and what the LEDs can point at.

Usage, in the manner of python-chess::

    >>> from masume.rules import load_rules
    >>> rules = load_rules("soccer-shogi")
    >>> game = Game(rules.start())
    >>> action = next(iter(game.legal_actions()))
    >>> after = game.push(action)
    >>> game.pop() == action
    True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Iterable, Iterator, Mapping, Protocol, Sequence

#: Where the physical pieces stand: square name -> piece names, bottom to top.
#: Piece names are those of the board definition (``blue``, ``red``, ``ball``,
#: ``blue-rest`` for a flipped piece, ...). A card lies as ``tag:UID`` (its
#: :attr:`masume.cards.Copy.piece`), face up or face down: the reader sees it
#: either way. A pile whose top card the host cannot know (a shuffled deck) is
#: ``tag:*``: any one card. Empty squares are left out.
Layout = Mapping[str, tuple[str, ...]]

#: The layout's name for "some card" on a pile whose top card is unknown.
ANY_CARD = "tag:*"


class IllegalAction(ValueError):
    """An action that the rules do not allow from this position.

    The message says why in words a player understands ("B1 is taken",
    "the keeper area would hold two players").
    """


class NotationError(ValueError):
    """Text that is not an action in the game's notation."""


@dataclass(frozen=True)
class Outcome:
    """How a game ended: ``winner`` is a side name, or None for a draw."""

    winner: str | None
    reason: str  # "goals", "resignation", "checkmate", "deck-out", ...
    score: Mapping[str, int] = field(default_factory=dict)

    def __str__(self) -> str:
        who = self.winner or "nobody"
        return f"{who} wins ({self.reason})" if self.winner else f"draw ({self.reason})"


@dataclass(frozen=True)
class Status:
    """What the players need to see at every moment (turn lights, score, web view)."""

    to_move: str  # side name whose action it is
    action_number: int = 1  # 1-based, within the side's turn
    actions_per_turn: int = 1
    score: Mapping[str, int] = field(default_factory=dict)
    #: A chance event the rules wait for, e.g. "die" (shown as "roll the die").
    awaiting: str | None = None
    #: One line for humans: "blue, action 2 of 2", "goal! red to kick off", ...
    message: str = ""
    #: Squares the rules want lit now, by meaning, e.g. {"flip": ("B4",)} after a
    #: steal, {"goal": ("C0",)} after a goal, {"setup": (...)} before a restart.
    highlights: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Time limits the rules set now, by name ("turn", "half 1", ...). The engine has
    #: no clock: the table counts them and plays ``Timer.action`` when one runs out.
    timers: Mapping[str, "Timer"] = field(default_factory=dict)
    #: The turn's number, counted by the rules: a new number is a new turn, even for the
    #: same side (under the beginner rules a steal gives the stealing side a fresh turn).
    #: The table starts a ``per_turn`` timer afresh when it or ``to_move`` changes.
    #: 0: the rules do not count turns.
    turn: int = 0
    #: The side whose player makes the choice now when it is not ``to_move`` (the other
    #: side's player receiving a kick keeps the ball or lets it run); None: ``to_move``.
    deciding: str | None = None


@dataclass(frozen=True)
class Timer:
    """A time limit of the rules, kept by the table (engines are pure: no clock).

    ``seconds`` long; when it runs out the table plays ``action`` as soon as it is
    legal. A ``per_turn`` timer starts afresh with every turn (``Status.turn``, ``to_move``);
    any other timer counts from when its name first appears in the status (so a
    match clock names its period: "half 1", "half 2").
    """

    seconds: float
    action: Hashable
    per_turn: bool = False


@dataclass(frozen=True)
class Restart:
    """The procedural action after a goal: the players set the pieces up again.

    Shared by the games that restart (each says from which position and who
    begins); the tracker sees it when the board shows the restart position.

    >>> str(Restart())
    'restart'
    """

    def __str__(self) -> str:
        return "restart"


@dataclass(frozen=True)
class TableView:
    """What one viewer may see of a game that hides things (the card games).

    The tracker and the LED policy see everything (``layout``); a player sees
    their own cards and the public ones; a spectator only the public ones.

    ``cells``: cell -> labels of what lies there, bottom to top, as the viewer
    may read them ("H03 Sato (FW/MF)", or "face down"). ``hand``: the viewer's
    own cards known to the host (none for a spectator). ``panel``: lines for the
    side panel, e.g. ("home attack", "7"), ("initiative", "normal").
    """

    viewer: str | None
    cells: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    hand: tuple[str, ...] = ()
    panel: tuple[tuple[str, str], ...] = ()


class Action(Protocol):
    """An action is a frozen, hashable value. ``str(action)`` is its notation."""

    def __hash__(self) -> int: ...


class Position(Protocol):
    """The protocol every game's ``Position`` class follows."""

    #: The game's registered name, e.g. "soccer-shogi".
    game: str
    #: The side names in order of play, e.g. ("blue", "red").
    sides: tuple[str, ...]

    def legal_actions(self) -> Iterator[Hashable]:
        """Every legal action from here, each once."""

    def is_legal(self, action: Hashable) -> bool: ...

    def apply(self, action: Hashable) -> "Position":
        """The position after ``action``; raises :class:`IllegalAction`."""

    def layout(self) -> Layout:
        """Where the physical pieces stand."""

    def status(self) -> Status: ...

    def outcome(self) -> Outcome | None:
        """None while the game goes on."""

    def parse_action(self, text: str) -> Hashable:
        """Read one action in the game's notation, in the context of this position.

        Raises :class:`NotationError` for text that is not an action, and
        :class:`IllegalAction` for a well-formed action that is not legal here.
        """

    def notation(self, action: Hashable) -> str:
        """The action written in the game's notation (round-trips with parse_action)."""

    def diagram(self) -> str:
        """A text drawing of the position."""

    def to_text(self) -> str:
        """The whole position on one line (like chess FEN); ``Rules.from_text`` reads it."""

    # Games with hidden information (the card games) also define:
    #
    #   def seen_by(self, viewer: str | None) -> TableView:
    #       """What ``viewer`` (a side, or None for a spectator) may see."""
    #
    #   def notation_for(self, action, viewer: str | None) -> str:
    #       """The action as ``viewer`` may read it (a face-down card unnamed)."""
    #
    # and their Rules define ``check_cards(card_set) -> list[str]`` (the game's
    # checks of a masume.cards.CardSet, each problem as one line).


class Rules(Protocol):
    """A game's entry point, as returned by :func:`masume.rules.load_rules`."""

    name: str
    #: Board definition id of the game's table (see hardware/boards/).
    board: str

    def start(self, **options: Any) -> Position:
        """The starting position; options are the game's named rule options."""

    def from_text(self, text: str, **options: Any) -> Position:
        """The position written by ``Position.to_text``; NotationError if malformed."""

    def resign(self, position: Position, side: str) -> Position:
        """The position after ``side`` resigns."""


def resigning(position: "Position", side: str) -> int:
    """The index of ``side``, about to resign from ``position`` (each game's
    ``Rules.resign`` starts here). ValueError for a name that is no side of the game,
    IllegalAction once the game is over.
    """
    if side not in position.sides:
        raise ValueError(f"side must be {' or '.join(position.sides)}, not {side!r}")
    if position.outcome() is not None:
        raise IllegalAction(f"the game is already over ({position.outcome()})")
    return position.sides.index(side)


def read_fields(text: object, bad: Callable[[str], NotationError],
                sep: str | None = None) -> dict[str, str]:
    """The ``key=value`` items of a position's one-line text (``Position.to_text``),
    split at ``sep`` (whitespace by default); ``bad(why)`` makes the game's error.

    >>> read_fields("move=home half=1", NotationError)
    {'move': 'home', 'half': '1'}
    """
    if not isinstance(text, str):
        raise bad("not text")
    fields: dict[str, str] = {}
    for item in text.split(sep):
        key, eq, value = item.partition("=")
        if not eq:
            raise bad(f"{item!r} is not key=value")
        fields[key] = value
    return fields


class Game:
    """A position with its history: push, pop, and what a record needs.

    >>> from masume.rules import load_rules
    >>> game = Game(load_rules("soccer-shogi").start())
    >>> action = game.push_notation("A7-A6")
    >>> [str(a) for a in game.actions]
    ['A7-A6']
    """

    def __init__(self, start: Position) -> None:
        self.start = start
        self._positions: list[Position] = [start]
        self.actions: list[Hashable] = []

    @property
    def position(self) -> Position:
        return self._positions[-1]

    def legal_actions(self) -> Iterator[Hashable]:
        return self.position.legal_actions()

    def push(self, action: Hashable) -> Position:
        """Play ``action``; raises IllegalAction and leaves the game as it was."""
        after = self.position.apply(action)
        self._positions.append(after)
        self.actions.append(action)
        return after

    def push_notation(self, text: str) -> Hashable:
        action = self.position.parse_action(text)
        self.push(action)
        return action

    def pop(self) -> Hashable:
        """Take back the last action and return it."""
        if not self.actions:
            raise IndexError("no action to take back")
        self._positions.pop()
        return self.actions.pop()

    def positions(self) -> Sequence[Position]:
        """The start and the position after each action, oldest first."""
        return tuple(self._positions)

    def notations(self) -> list[str]:
        return [p.notation(a) for p, a in zip(self._positions, self.actions)]

    def replay(self, actions: Iterable[Hashable]) -> None:
        for action in actions:
            self.push(action)
