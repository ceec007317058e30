"""The shape every rules engine has, and the one generic game object.

A rules engine is a package under ``masume.rules`` whose ``RULES`` follows the
:class:`Rules` protocol and whose ``Position`` class the :class:`Position`
protocol: an immutable, hashable value, generic over the game's own action type
(like python-chess's ``Board`` and ``Move``). It is pure: no I/O (a card game is
given its card set), no randomness (a die roll is an explicit chance action,
:class:`Roll`, chosen by whoever holds the die), and it knows nothing of sensors,
LEDs or links.

What a game has beyond that it declares, and the layers above check it with
``isinstance`` on these protocols, never by probing for attributes:

- :class:`HidesInformation`: a position that hides things (face-down cards, hands)
  says what each viewer may see (``seen_by``) and read (``notation_for``);
  :class:`SamplesUnseen`: one that can draw what a viewer cannot see (``sample_unseen``:
  the computer player's determinization);
- :class:`OnCards`: a position whose pieces are the cards of a set (``card_set``);
- :class:`CardRules`: rules that read card sets (``check_cards``), given the
  loader that finds a set by name (``with_card_source``; ``masume.games`` does it);
  :class:`WarnsOfCards`: card rules with warnings about a set that passed (``card_warnings``);
- chance: ``Status.awaiting`` names the chance event the rules wait for, and a die's
  outcomes are :class:`Roll` actions.

And every game declares its :class:`Legend`: its sides' colours and how each of its
highlights shows, so that the LED policy and the pages know no game.

Everything above the engines (tracker, LED policy, records, web view) works only
through this protocol, so none of them ever asks which game is being played:

- ``legal_actions()`` says what may happen next (including chance outcomes),
- ``apply(action)`` says what follows (a new position; the old one is unchanged),
- ``layout()`` says where every physical piece stands, which is what the board's
  sensors can check and what the LEDs can point at.

Usage, in the manner of python-chess::

    >>> from masume.games import load_rules
    >>> rules = load_rules("soccer-shogi")
    >>> game = Game(rules.start())
    >>> action = next(iter(game.legal_actions()))
    >>> after = game.push(action)
    >>> game.pop() == action
    True
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Generic,
    Literal,
    Protocol,
    Self,
    TypeVar,
    overload,
    runtime_checkable,
)

from .card_set import CardSet, CardSetError

if TYPE_CHECKING:
    from os import PathLike
    from random import Random

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


#: The chance events a game may wait for (``Status.awaiting``).
Awaiting = Literal["die", "reveal"]


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
    #: The chance event the rules wait for: the die (its outcomes are :class:`Roll`
    #: actions), or a card turned up from a shuffled pile (the game's own actions).
    awaiting: Awaiting | None = None
    #: One line for humans: "blue, action 2 of 2", "goal! red to kick off", ...
    message: str = ""
    #: Squares the rules want lit now, by meaning, e.g. {"flip": ("B4",)} after a
    #: steal, {"goal": ("C0",)} after a goal, {"setup": (...)} before a restart.
    highlights: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Time limits the rules set now, by name ("turn", "half 1", ...). The engine has
    #: no clock: the table counts them and plays ``Timer.action`` when one runs out.
    timers: Mapping[str, Timer] = field(default_factory=dict)
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
class Roll:
    """The chance action of a die: it showed ``die`` (1-6). Legal only while the
    status is ``awaiting == "die"``; the table finds it among the legal actions by
    its face.

    >>> Roll(4).die, str(Roll(4))
    (4, 'die 4')
    """

    die: int

    def __str__(self) -> str:
        return f"die {self.die}"


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


#: An LED colour, red, green, blue 0-255.
RGB = tuple[int, int, int]
#: How a lamp shows (the wire protocol's patterns, but for off).
Pattern = Literal["steady", "blink", "pulse"]


@dataclass(frozen=True)
class Light:
    """How one of a game's highlights shows on the board.

    ``rgb`` None: in the colour of the side whose lamp the cell is (``home-score-2``,
    ``turn-away``: the side's name starts or ends the cell's name).
    """

    rgb: RGB | None
    pattern: Pattern = "steady"
    #: Lit over every other highlight (where the card or piece in play may go).
    foremost: bool = False
    #: What the players choose next: lit only while the board shows the game, not
    #: while the pieces still follow a die roll (it would hide where they go).
    when_still: bool = False
    #: The meaning in people's words, for the page's key ("whose turn"); "": the
    #: meaning's own name reads well as it is ("goal", "path").
    label: str = ""


@dataclass(frozen=True)
class Legend:
    """What a game's lights mean: each side's colour, in the order of play, and
    how each meaning of ``Status.highlights`` shows. The LED policy and the web
    view read it; a meaning missing here shows in a plain colour.

    ``places``: people's words for the cells whose name is no coordinate (a lamp,
    a pile), for the page: "turn-away" -> "away's lamp".
    ``score``: what ``Status.score`` counts, as the page labels it.

    >>> legend = Legend({"blue": (0, 90, 255), "red": (255, 30, 0)},
    ...                 {"goal": Light((255, 255, 255), "blink")},
    ...                 places={"turn-red": "red's lamp"})
    >>> legend.side_of("turn-red"), legend.side_of("A7")
    ('red', None)
    >>> legend.place("turn-red"), legend.place("A7"), legend.label("goal")
    ("red's lamp", 'A7', 'goal')
    """

    sides: Mapping[str, RGB]
    highlights: Mapping[str, Light] = field(default_factory=dict)
    places: Mapping[str, str] = field(default_factory=dict)
    score: str = "score"

    def side_of(self, cell: str) -> str | None:
        """The side whose lamp ``cell`` is (its name starts or ends it), or None."""
        for side in self.sides:
            if cell.startswith(f"{side}-") or cell.endswith(f"-{side}"):
                return side
        return None

    def place(self, cell: str) -> str:
        """``cell`` in people's words: its entry in ``places``, else its name."""
        return self.places.get(cell, cell)

    def label(self, meaning: str) -> str:
        """The highlight ``meaning`` in people's words (its light's label, else itself)."""
        light = self.highlights.get(meaning)
        return light.label if light is not None and light.label else meaning


#: An action is a frozen, hashable value; ``str(action)`` is its notation.
A = TypeVar("A", bound=Hashable)
#: An action type only taken in (a protocol that only reads actions).
A_contra = TypeVar("A_contra", bound=Hashable, contravariant=True)


class Position(Protocol[A]):
    """The protocol every game's ``Position`` class follows; ``A`` is the game's
    action type (a union of small frozen dataclasses)."""

    #: The game's registered name, e.g. "soccer-shogi".
    game: ClassVar[str]
    #: The side names in order of play, e.g. ("blue", "red").
    sides: ClassVar[tuple[str, ...]]
    #: The sides' colours and what the highlights mean.
    legend: ClassVar[Legend]

    def __hash__(self) -> int:
        """Positions are values: equal positions hash alike (the tracker keeps them)."""

    def legal_actions(self) -> Iterator[A]:
        """Every legal action from here, each once."""

    def is_legal(self, action: A) -> bool: ...

    def apply(self, action: A) -> Self:
        """The position after ``action``; raises :class:`IllegalAction`."""

    def layout(self) -> Layout:
        """Where the physical pieces stand."""

    def status(self) -> Status: ...

    def outcome(self) -> Outcome | None:
        """None while the game goes on."""

    def parse_action(self, text: str) -> A:
        """Read one action in the game's notation, in the context of this position.

        Raises :class:`NotationError` for text that is not an action, and
        :class:`IllegalAction` for a well-formed action that is not legal here.
        """

    def notation(self, action: A) -> str:
        """The action written in the game's notation (round-trips with parse_action)."""

    def diagram(self) -> str:
        """A text drawing of the position."""

    def to_text(self) -> str:
        """The whole position on one line (like chess FEN); ``Rules.from_text`` reads it."""


#: A position of any game, for the layers above that know no game.
AnyPosition = Position[Any]


@runtime_checkable
class HidesInformation(Protocol[A_contra]):
    """A position of a game that hides things from some viewers (the card games)."""

    def seen_by(self, viewer: str | None) -> TableView:
        """What ``viewer`` (a side, or None for a spectator) may see."""

    def notation_for(self, action: A_contra, viewer: str | None) -> str:
        """The action as ``viewer`` may read it (a face-down card unnamed)."""


@runtime_checkable
class SamplesUnseen(Protocol):
    """A position that hides things (:class:`HidesInformation`) and can draw what a
    viewer cannot see: a computer player searches such draws (determinization), never
    the position itself, so that it plays only on what its side may see."""

    def sample_unseen(self, viewer: str, rng: Random) -> Self:
        """A position ``viewer`` cannot tell from this one (the same ``seen_by(viewer)``),
        with each card it cannot see drawn at random from the cards it might be. The draw
        depends only on what ``viewer`` sees and on ``rng``, never on the hidden cards."""


@runtime_checkable
class HoldsHands(Protocol):
    """A card game's position that can know a side's hand card by card (docs/ai.md,
    "The computer's hand"). The record counts a hand; the host may know some of its
    cards (the computer's, read face down on its hand slots) and says so with
    :meth:`holding`. The actions that play a card from a side's hand then name only the
    cards held, while the hand holds no card unknown; a card drawn is unknown until held.
    What one side holds is hidden from the other: ``sample_unseen`` for the other side
    forgets it, ``seen_by`` shows it to its own side only."""

    def hand_size(self, side: str) -> int:
        """How many cards ``side``'s hand holds."""

    def hand_of(self, side: str) -> tuple[str, ...]:
        """The copies known to be in ``side``'s hand (held), in the order given."""

    def drawable(self, side: str) -> tuple[str, ...]:
        """The copies an unknown card of ``side``'s hand may be (what a draw could give)."""

    def holding(self, side: str, copies: Sequence[str]) -> Self:
        """This position with ``copies`` known as ``side``'s hand (at most its size);
        ValueError, saying why, for a copy that cannot be in that hand."""


@runtime_checkable
class KnowsFootprints(Protocol[A]):
    """A position that can say cheaply where an action may change the board: the
    tracker then applies only the actions that could explain a reading (on a
    set-piece's re-placements, some fifteen hundred are legal)."""

    def footprint(self, action: A) -> frozenset[str] | None:
        """The squares where ``action`` may change what stands (every square whose
        stack differs after it is among them), or None when it cannot say cheaply."""

    def actions_changing(self, squares: frozenset[str]) -> Iterator[A]:
        """The legal actions, in the order of ``legal_actions``, whose footprint holds
        every one of ``squares`` or is None; it may list the others too, it need not."""


@runtime_checkable
class KeepsPieces(Protocol):
    """A game whose actions neither take a piece off the board nor put one on: every
    position has as many pieces (its layout's), all on the squares :meth:`kept_on`. A board
    that reads each of those squares by identity (a stack of pieces) and shows fewer
    pieces on them than the position has shows no position of the game, nor any with
    pieces lingering (a reading wants at least its pieces on every square): the tracker
    then searches no reading for it (a piece in the hand, mid-move: issue 17, sixth
    round)."""

    def kept_on(self) -> frozenset[str]:
        """The squares every piece of every position of the game stands on (the same
        for all of them)."""


@runtime_checkable
class OnCards(Protocol):
    """A position whose pieces are the cards of a set (on a card mat)."""

    @property
    def card_set(self) -> CardSet:
        """The set the game is played with: the tracker names a card by its tag."""


#: Finds a card set by name (a shipped set's name, or a path): ``masume.cards.load_card_set``.
#: Raises CardSetError (a ValueError) for a set that cannot be read.
CardSource = Callable[[str], CardSet]


@runtime_checkable
class CardRules(Protocol):
    """The rules of a game played with card sets. They read the sets they are given:
    a ``CardSet``, or a name they look up through the source given to
    :meth:`with_card_source` (the engine itself never opens a file)."""

    def check_cards(self, card_set: CardSet) -> list[str]:
        """The game's checks of a card set, one line per problem ([] when it is fine)."""

    def with_card_source(self, cards: CardSource) -> Self:
        """The same rules, finding the card sets that options and positions name
        through ``cards``."""


@runtime_checkable
class WarnsOfCards(Protocol):
    """Card rules (:class:`CardRules`) that have more to say of a set that passed their
    checks: never a refusal (what the players apply by hand, say)."""

    def card_warnings(self, card_set: CardSet) -> list[str]:
        """One line per warning ([] when there is nothing to say)."""


class Rules(Protocol):
    """A game's entry point, as returned by :func:`masume.games.load_rules`."""

    name: str
    #: Board definition id of the game's table (see hardware/boards/).
    board: str

    @property
    def start(self) -> Callable[..., AnyPosition]:
        """``start(**options)``: the starting position; options are the game's named
        rule options (each game names its own)."""

    def from_text(self, text: str, **options: Any) -> AnyPosition:
        """The position written by ``Position.to_text``; NotationError if malformed."""

    def resign(self, position: Any, side: str) -> AnyPosition:
        """The position after ``side`` resigns."""


def no_card_source(name: str) -> CardSet:
    """The card source of rules that were given none: a name cannot be looked up."""
    raise CardSetError(f"card set {name!r}: these rules were given no card-set loader; "
                       "give a CardSet, or load the rules with masume.games.load_rules")


class ReadsCardSets:
    """What the rules of every card game share (:class:`CardRules`): they find the
    card sets options and positions name through the source they were given."""

    def __init__(self, cards: CardSource = no_card_source) -> None:
        self._cards = cards

    def with_card_source(self, cards: CardSource) -> Self:
        """These rules, finding the sets that options and positions name through ``cards``."""
        return type(self)(cards)

    def _card_set(self, cards: str | PathLike[str] | CardSet) -> CardSet:
        """The set given, or the one named (a shipped set's name, or a path)."""
        return cards if isinstance(cards, CardSet) else self._cards(str(cards))


def resigning(position: AnyPosition, side: str) -> int:
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


class Game(Generic[A]):
    """A position with its history: push, pop, and what a record needs.

    >>> from masume.games import load_rules
    >>> game = Game(load_rules("soccer-shogi").start())
    >>> action = game.push_notation("A7-A6")
    >>> [str(a) for a in game.actions]
    ['A7-A6']
    """

    def __init__(self, start: Position[A]) -> None:
        self.start = start
        self._positions: list[Position[A]] = [start]
        self.actions: list[A] = []

    @property
    def position(self) -> Position[A]:
        return self._positions[-1]

    def legal_actions(self) -> Iterator[A]:
        return self.position.legal_actions()

    def push(self, action: A) -> Position[A]:
        """Play ``action``; raises IllegalAction and leaves the game as it was."""
        after = self.position.apply(action)
        self._positions.append(after)
        self.actions.append(action)
        return after

    def push_notation(self, text: str) -> A:
        action = self.position.parse_action(text)
        self.push(action)
        return action

    def pop(self) -> A:
        """Take back the last action and return it."""
        if not self.actions:
            raise IndexError("no action to take back")
        self._positions.pop()
        return self.actions.pop()

    def positions(self) -> Sequence[Position[A]]:
        """The start and the position after each action, oldest first."""
        return tuple(self._positions)

    def notations(self) -> list[str]:
        return [p.notation(a) for p, a in zip(self._positions, self.actions, strict=False)]

    def replay(self, actions: Iterable[A]) -> None:
        for action in actions:
            self.push(action)


_CachedT = TypeVar("_CachedT")


class cached(Generic[_CachedT]):
    """``functools.cached_property`` without its lock: Python 3.11's takes an RLock on
    every first read, about 0.3 us (a Soccer Shogi listing reads four; shogi-piece
    soccer's set-up, several per placement). Two threads reading one position at once
    may each compute the value (the same value: the later one is kept)."""

    def __init__(self, compute: Callable[[Any], _CachedT]) -> None:
        self._compute = compute
        self._name = compute.__name__
        self.__doc__ = compute.__doc__

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> cached[_CachedT]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> _CachedT: ...

    def __get__(self, instance: object, owner: type | None = None) -> _CachedT | cached[_CachedT]:
        if instance is None:  # read on the class (doctest, help)
            return self
        value = instance.__dict__[self._name] = self._compute(instance)
        return value
