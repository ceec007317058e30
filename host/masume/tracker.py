"""From sensor readings to actions, the robust way.

The tracker never trusts the order of single lift and place events. When the
board has been still for a moment (``settle``), it compares what the sensors
read with what the rules say the board would look like after each possible
continuation of the game, and picks the first reading that fits, in this order:

1. nothing happened (the board matches the game);
2. the last action was really a different one (a chain of jumps continued, a
   piece slid one square further);
3. one new action;
4. two new actions (a fast second action, or a quick reply), also on top of
   a changed last action; where both orders end alike, in the order the board
   saw them begin;
5. a takeback: the board is back where it was one or two actions ago.

While pieces are in the air it says which ones and where they may go (the LED
policy lights that at once). A board that fits no reading is a mismatch: it
names the squares that differ from the game, records nothing, and waits until
the board fits again. Chance actions (a die) never come from the sensors.

While pieces are in the air it says which ones and where they may go, and how:
a destination is a *move* when the lifted piece itself arrives there, and a
*send* when only what lay under it does (the ball a piece stands on, passed or
kicked). Lifting the top piece of a stack gives the hand all of the stack, so
the actions that take only what lies under it are shown too (``View.sent``;
the LED policy lights them in a second colour).

An action that takes pieces off the board (a capture, an ejection) is read as
soon as the rest of the board shows it, even while the removed pieces still
stand on their squares: the view is then ``remove`` and names those squares,
until the pieces are taken off. Actions the sensors cannot see at all (a die
roll, a choice declared on the web view) come in through :meth:`Tracker.push`.

It works from the :mod:`masume.rules.base` protocol only (legal actions,
``apply``, ``layout``), so it knows no game. With identity sensors it compares
pieces; with presence sensors only occupancy, and where that leaves a real
choice (two readings fit equally well, or an action the sensors cannot see, like
the ball passing between two players) the ``confirm`` button steps through the
choices.

>>> from masume.boards import load_board
>>> from masume.games import load_rules
>>> from masume.rules import Game
>>> game = Game(load_rules("soccer-shogi").start())
>>> tracker = Tracker(game, load_board("soccer-shogi"))
>>> readings = tracker.expected_readings()
>>> readings["A7"], readings["A6"] = (), ("blue",)
>>> tracker.observe(readings, now=0.0)
>>> [str(a) for a in tracker.tick(now=1.0).pushed]
['A7-A6']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache, partial
from itertools import pairwise
from typing import Any, Literal, TypedDict, cast

from masume.boards import Board
from masume.cards import CardSet
from masume.link.events import Reading
from masume.rules.base import (
    ANY_CARD,
    AnyPosition,
    Game,
    HidesInformation,
    IllegalAction,
    KeepsPieces,
    KnowsFootprints,
    Layout,
    NotationError,
)

SETTLE_S = 0.35
#: Pieces missing on this many squares or more is a board being set up, not a lift.
SET_UP_SQUARES = 3

#: The signatures a tracker keeps, counted in cells (a Masume Tactics signature has 214,
#: a Soccer Shogi one 40): those of the last readings, in two generations (the newer
#: filled, it becomes the older; a position found in the older moves back). Kept for the
#: whole game, 50,000 Masume Tactics signatures came to some 370 MB a table.
SIGNATURE_CELLS_KEPT = 250_000

#: A layout entry on a cell without a sensor (Tracker.signature leaves it out).
_UNSENSED = None

#: What one cell shows to its sensor, comparable across sensor kinds:
#: presence -> bool, identity and card -> sorted piece names.
Signature = bool | tuple[str, ...]

#: A position's signature (sensed cell -> Signature) and the layout it was read from,
#: whose cells are the only ones that may read other than empty (see Tracker._signed).
_Signed = tuple[dict[str, Signature], Layout]


@cache
def _knows_footprints(kind: type) -> bool:
    """``isinstance(position, KnowsFootprints)``, asked once per class (a protocol's
    isinstance looks at every member each time: some 60 us)."""
    return issubclass(kind, KnowsFootprints)


@dataclass(frozen=True)
class Change:
    """What a tick did to the game: actions taken back, then actions played."""

    popped: tuple[Hashable, ...] = ()
    pushed: tuple[Hashable, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.popped or self.pushed)


class TrackerMemory(TypedDict):
    """What the tracker knows beyond the game and the readings (:meth:`Tracker.memory`)."""

    settled: bool  # it decided on the board as it stands, and will not read it again
    pushed: list[int]  # which of the last two actions it was given, not read (by index)
    follow: int | None  # the position the pieces must follow from (index), if any


#: What the tracker sees (see :class:`View`).
ViewState = Literal["in-sync", "lifted", "moving", "mismatch", "ambiguous", "remove", "follow"]


@dataclass(frozen=True)
class View:
    """What the tracker sees now, for the LED policy and the web view.

    state: in-sync, lifted, moving (changed, not settled yet), mismatch,
    ambiguous (a reading was chosen among others; confirm steps through them),
    remove (the last action took pieces off the board that still stand there), or
    follow (the game went on by what the sensors cannot see, a die roll or a choice,
    and the pieces must be moved to show it: ``put`` and ``take``).
    """

    state: ViewState
    message: str = ""
    #: lifted: square -> every square where what was lifted there may go
    destinations: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: lifted: square -> the destinations where only what lay under the lifted
    #: piece arrives (a pass, a kick), not the piece itself; a subset of destinations
    sent: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: mismatch: squares that differ from the game; placed: where a piece stands wrongly;
    #: remove: the squares where the pieces to take off stand
    differing: tuple[str, ...] = ()
    placed: tuple[str, ...] = ()
    #: ambiguous: the squares of the reading chosen now
    choice: tuple[str, ...] = ()
    #: follow: where pieces must be put down, and where pieces must be taken from
    put: tuple[str, ...] = ()
    take: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Reading:
    """One way to explain the board: take back ``pops`` actions, then play ``pushes``."""

    pops: int
    pushes: tuple[Hashable, ...]


class Tracker:
    """``cards``: on a card mat, the game's card set (a :class:`masume.cards.CardSet`);
    a tag that belongs to none of its cards is then named as unknown, and a card of
    the set where the game does not expect it is named."""

    def __init__(self, game: Game[Any], board: Board, *, settle: float = SETTLE_S,
                 cards: CardSet | None = None) -> None:
        self.game = game
        self.board = board
        self.settle = settle
        self.cards = cards
        self._successors: dict[AnyPosition, list[tuple[Hashable, AnyPosition]]] = {}
        #: base -> action -> the position it leads to, for a bounded number of bases
        self._children: dict[AnyPosition, dict[Hashable, AnyPosition]] = {}
        # The hand slots hold what the record counts (a hand): never the game's layout.
        self._cells = [c for c in board.sensed if c.name not in board.hand_cells]
        #: What each sensed cell reads with nothing on it, in the cells' order: a
        #: signature starts as a copy of it, and only occupied cells are filled in.
        self._empty = {c.name: self._expected(c.sensor, ()) for c in self._cells}
        #: cell -> its place in that order (comparisons list the cells in it)
        self._order = {c.name: k for k, c in enumerate(self._cells)}
        self._sensor_of = {c.name: c.sensor for c in self._cells}
        #: The position's class -> the squares it keeps its pieces on, where this board
        #: reads each as a stack (None: a game that does not say, or another board)
        self._kept_on: dict[type, frozenset[str] | None] = {}
        #: (cell, pieces) -> what its sensor reads (_UNSENSED where none), kept
        self._expected_of: dict[tuple[str, tuple[str, ...]], Signature | None] = {}
        #: _same_origin's (base, current position, the cells the last action took
        #: pieces from), kept while the search asks about the same two positions
        self._origin: tuple[AnyPosition, AnyPosition, set[str]] | None = None
        #: _readings' last layout made: (position, its layout)
        self._layout_of: tuple[AnyPosition, Mapping[str, Any]] | None = None
        self._sensed: dict[str, Signature] | None = None
        #: The sensed cells that read something (not what they read with nothing on
        #: them): only these and the cells of a position's layout can differ from it.
        self._sensed_occupied: set[str] = set()
        #: position -> the sensed cells that do not show it, while the readings stand
        self._mismatches: dict[AnyPosition, tuple[str, ...]] = {}
        #: _lifted's last answer: (position, the one before it, the readings, answer)
        self._lifted_memo: tuple[AnyPosition, AnyPosition | None, dict[str, Signature],
                                 dict[str, dict[str, str]] | None] | None = None
        #: The board has been read here (all its readings at once), not only taken up
        #: from a save (:meth:`restore`): the table's clocks count from then.
        self.board_read = False
        self._changed_at = 0.0
        #: The order the cells changed in since the board was last still (``_still``):
        #: cell -> the number of the change that moved it off what it read then (the
        #: order the board sent them, even in a burst from its journal; one number for
        #: a snapshot's); a cell put back as it was is forgotten (a hand that hesitated).
        #: It orders two actions read at once.
        self._first_changes: dict[str, int] = {}
        self._changes = 0
        self._still: dict[str, Signature] = {}
        self._settled_on: dict[str, Signature] | None = None
        #: position -> its signature and its layout (two signatures differ only on the
        #: cells of the two layouts)
        self._signatures: dict[AnyPosition, _Signed] = {}
        self._older_signatures: dict[AnyPosition, _Signed] = {}
        self._signatures_kept = max(1000, SIGNATURE_CELLS_KEPT // max(1, len(self._empty)))
        self._choices: list[_Reading] = []  # the readings that fit equally well
        self._choice_index = 0
        self._chosen_popped: tuple[Hashable, ...] = ()
        #: Where the board can be read several ways, readings whose notation says this
        #: word come first (a button the players pressed: "ground", "lob", ...).
        self.prefer = ""
        #: The action lit for the players to make next (the computer's, or a hint):
        #: where the board can be read several ways, making it comes first, and is no
        #: question (the players did what the lights showed). None: nothing is lit.
        self.expect: Hashable | None = None
        self._worded = False  # the reading chosen now was picked by ``prefer``/select
        #: Indices (in game.actions) of actions pushed, not read: the sensors never
        #: take them back or read them as something else.
        self._pushed: set[int] = set()
        #: The position the board last showed, while the game has gone on without the
        #: board (a die roll): the pieces must follow; None when there is nothing to follow.
        self._follow_from: AnyPosition | None = None
        #: The action the takeback button took back while the board still shows it
        #: (the view then says how to undo it by hand); None once the board changes.
        self.taken_back: str | None = None
        self.view = View("in-sync")

    # ---- what the board should read -----------------------------------------

    def signature(self, position: AnyPosition) -> dict[str, Signature]:
        """Per sensed cell, what its sensor reads when the board shows ``position``
        (kept, and the same for positions the board shows alike: not to be changed)."""
        return self._signed(position)[0]

    def _signed(self, position: AnyPosition) -> _Signed:
        """The signature of ``position`` and its layout, kept. Only the layout's cells
        can read other than empty: the search compares positions on these few cells,
        not on every sensed cell (a Masume Tactics board has 214)."""
        cached = self._signatures.get(position)
        if cached is None:
            cached = self._older_signatures.get(position) or self._sign(position)
            if len(self._signatures) >= self._signatures_kept:
                self._older_signatures, self._signatures = self._signatures, {}
            self._signatures[position] = cached
        return cached

    def _sign(self, position: AnyPosition) -> _Signed:
        """The signature of ``position`` and its layout, made (not kept)."""
        layout = position.layout()
        signature = dict(self._empty)
        known = self._expected_of
        for item in layout.items():
            try:  # _cell_reading, its common case inline: this runs for every cell
                sig = known[item]
            except (KeyError, TypeError):
                sig = self._cell_reading(*item)
            if sig is not _UNSENSED:
                signature[item[0]] = sig
        return signature, layout

    def _cell_reading(self, name: str, pieces: Any) -> Signature | None:
        """What the sensor of cell ``name`` reads with ``pieces`` (a layout's stack) on
        it, kept by (cell, pieces); _UNSENSED where no sensor is."""
        known = self._expected_of
        item = (name, pieces)
        try:
            return known[item]
        except KeyError:
            if len(known) > 100_000:
                known.clear()
            sig = known[item] = self._expected_at(name, pieces)
            return sig
        except TypeError:  # a layout that gives lists
            return self._expected_at(name, pieces)

    def _expected_at(self, name: str, pieces: tuple[str, ...]) -> Signature | None:
        """What the sensor of cell ``name`` reads with ``pieces`` on it; _UNSENSED
        where no sensor is."""
        sensor = self._sensor_of.get(name)
        return _UNSENSED if sensor is None else self._expected(sensor, tuple(pieces))

    @staticmethod
    def _expected(sensor: str, pieces: tuple[str, ...]) -> Signature:
        if sensor == "presence":
            return bool(pieces)
        if sensor == "card":
            # A card reader reads the top card of what lies on its zone.
            return (pieces[-1],) if pieces else ()
        return tuple(sorted(pieces))

    def _match(self, sensed: Signature, want: Signature) -> bool:
        """Does a sensed cell show what the game wants there? ``tag:*`` (a pile whose
        top card the host cannot know) is any one card of the game's set."""
        if sensed == want:
            return True
        if want == (ANY_CARD,) and isinstance(sensed, tuple) and len(sensed) == 1:
            tag = sensed[0]
            if not isinstance(tag, str) or not tag.startswith("tag:"):
                return False
            return self.cards is None or self.cards.by_tag(tag[4:]) is not None
        return False

    def _after(self, base: AnyPosition, action: Hashable) -> AnyPosition:
        """``base.apply(action)``: from ``base``'s successors where they are kept (all of
        them, see _successors_of), else kept here (the view's destinations, the one- and
        the two-action search apply many of the same actions)."""
        for known, after in self._successors.get(base, ()):
            if known == action:
                return after
        children = self._children.get(base)
        if children is None:
            if len(self._children) > 512:
                self._children.clear()
            children = self._children[base] = {}
        kept = children.get(action)
        if kept is None:
            kept = children[action] = base.apply(action)
        return kept

    def _successors_changing(
        self, base: AnyPosition, every: Iterable[str], some: set[str] | None = None,
    ) -> Iterable[tuple[Hashable, AnyPosition]]:
        """The successors of ``base`` (in the rules' order) that may change the reading
        of every one of ``every`` and, given ``some``, of at least one of ``some``: where
        the game knows its actions' footprints (:class:`KnowsFootprints`), the others
        are not even applied; else all of them, kept."""
        if base in self._successors or not _knows_footprints(type(base)):
            return self._successors_of(base)
        if not self._may_act(base):
            return []
        every = frozenset(every)
        out = []
        known = cast("KnowsFootprints[Any]", base)
        actions = known.actions_changing(every) if every else base.legal_actions()
        for action in actions:
            footprint = known.footprint(action)
            if footprint is not None and (not every <= footprint
                                          or (some is not None and footprint.isdisjoint(some))):
                continue
            out.append((action, self._after(base, action)))
        return out

    def _successors_of(self, base: AnyPosition) -> list[tuple[Hashable, AnyPosition]]:
        """Every action the sensors may show from ``base``, with the position it leads to."""
        found = self._successors.get(base)
        if found is None:
            found = [(a, base.apply(a)) for a in self._actions(base)]
            if len(self._successors) > 16:
                self._successors.clear()
            self._successors[base] = found
        return found

    def expected_readings(self) -> dict[str, Reading]:
        """The readings a board showing the current position gives (for tests, sims)."""
        layout = self.game.position.layout()
        out: dict[str, Reading] = {}
        for c in self._cells:
            pieces = tuple(layout.get(c.name, ()))
            if c.sensor == "presence":
                out[c.name] = bool(pieces)
            elif c.sensor == "card":
                out[c.name] = pieces[-1][4:] if pieces and pieces[-1].startswith("tag:") else None
            else:
                out[c.name] = pieces
        return out

    def _sensed_signature(self, sensor: str, reading: Reading) -> Signature:
        if sensor == "presence":
            return bool(reading)
        if sensor == "card":
            # Readers report the UID in hex; the card set writes it in upper case.
            return (f"tag:{str(reading).upper()}",) if reading else ()
        return tuple(sorted(cast("tuple[str, ...]", reading or ())))

    # ---- input ------------------------------------------------------------------

    def observe(self, readings: Mapping[str, Reading], now: float) -> None:
        """All readings at once (after a connect or resynchronisation)."""
        sensed = {
            c.name: self._sensed_signature(c.sensor, readings.get(c.name)) for c in self._cells
        }
        if self._sensed is None:
            self._first_changes, self._still = {}, dict(sensed)
            self._changed_at = now
        else:
            # A snapshot after a journal's burst confirms what the events said: their
            # order stands, and so does the time the board last changed (a loaded table
            # may handle it after the board's next movement began: "now" would keep
            # the last action from settling before it). Cells it changes come after
            # them, all at once (a tie), now.
            self._changes += 1
            changed = [name for name, sig in sensed.items() if sig != self._sensed[name]]
            for name in changed:
                self._note_change(name, sensed[name])
            if changed:
                self._changed_at = now
        self._sensed = sensed
        empty = self._empty
        self._sensed_occupied = {name for name, sig in sensed.items() if sig != empty[name]}
        self._mismatches.clear()
        self.board_read = True
        self._update_view()

    def memory(self) -> TrackerMemory:
        """What the tracker knows beyond the game and the readings, to be saved with
        them: whether it has decided on the board as it stands (``settled``: it will
        not read it again, e.g. after a takeback while the board still shows the
        action), which of the last two actions it was given rather than read
        (``pushed``, by index: the sensors never take those back, and take back no
        more than two), and the position the pieces must follow from (``follow``,
        by index in the game's positions), if any."""
        follow = None
        if self._follow_from is not None:
            positions = self.game.positions()
            follow = max(i for i, p in enumerate(positions) if p == self._follow_from)
        n = len(self.game.actions)
        return {"settled": self._sensed is not None and self._settled_on == self._sensed,
                "pushed": sorted(i for i in self._pushed if i >= n - 2), "follow": follow}

    def restore(self, readings: Mapping[str, Reading], memory: TrackerMemory,
                now: float, *, read: bool = False) -> None:
        """Take up a saved state: the board read ``readings`` and the tracker knew
        ``memory`` (:meth:`memory`) when the game was saved. ``read``: the readings
        are the board's as it stands (else it is not read until its next snapshot)."""
        self.observe(readings, now)
        self.board_read = read
        n = len(self.game.actions)
        self._pushed = {i for i in memory["pushed"] if i < n}
        follow = memory["follow"]
        positions = self.game.positions()
        self._follow_from = (positions[follow] if follow is not None
                             and 0 <= follow < len(positions) else None)
        if memory["settled"]:
            self._settled_on = dict(self._sensed or {})
        self._update_view(settled=memory["settled"])

    def observe_square(self, square: str, reading: Reading, now: float) -> None:
        if self._sensed is None or square not in self._sensor_of:
            return  # no cell, or a hand slot (not the game's)
        cell = self.board.cell(square)
        sensed = self._sensed_signature(cell.sensor, reading)
        if sensed != self._sensed[square]:
            self._changes += 1
            self._note_change(square, sensed)
            self._mismatches.clear()
            if sensed != self._empty[square]:
                self._sensed_occupied.add(square)
            else:
                self._sensed_occupied.discard(square)
        self._sensed[square] = sensed
        self._changed_at = now
        self._update_view()

    def due(self) -> float | None:
        """When :meth:`tick` may next decide (the board still for ``settle`` since its
        last change); None while there is nothing to decide until the board changes."""
        if self._sensed is None or self._settled_on == self._sensed:
            return None
        return self._changed_at + self.settle

    def _note_change(self, square: str, sensed: Signature) -> None:
        """``square`` now reads ``sensed``, in change number ``_changes``."""
        if sensed == self._still.get(square):
            self._first_changes.pop(square, None)
        else:
            self._first_changes.setdefault(square, self._changes)

    def tick(self, now: float, *, force: bool = False) -> Change:
        """Decide, once the board has been still for ``settle`` seconds, or at once with
        ``force`` (a button press says the hand is done)."""
        if self._sensed is None or (not force and now - self._changed_at < self.settle):
            return Change()
        # The board is still: what changed from now on is a new hand (below, the
        # search still orders by what changed until now).
        first_changes = self._first_changes
        if first_changes:  # else the board reads as it did when last still
            self._first_changes, self._still = {}, dict(self._sensed)
        if self._settled_on == self._sensed:
            return Change()
        self._settled_on = dict(self._sensed)
        if self._differences(self.game.position) == () or self._last_leftovers():
            # In sync, or the last action is shown but for pieces still to take off.
            self._update_view()
            return Change()
        # A board short of pieces (one in the hand) shows no reading of a game that
        # keeps its pieces: nothing to search (KeepsPieces).
        choices = [] if self._short_of_pieces() else self._explain(first_changes)
        if not choices:
            self._choices = []
            self._update_view(settled=True)
            return Change()
        self._worded = False
        if len(choices) > 1 and (self.prefer or self.expect is not None):
            # The lit action first, then readings that say the word the players
            # pressed (a stable sort).
            expected = self._expected_reading()
            choices = sorted(choices, key=lambda r: (r != expected,
                                                     not _says(r, self.prefer)))
            self._worded = choices[0] == expected or _says(choices[0], self.prefer)
        change = self._apply(choices[0])
        # Keep the other readings only where there are others, for confirm.
        self._choices, self._choice_index = (choices if len(choices) > 1 else []), 0
        self._update_view(settled=True)
        return change

    def _short_of_pieces(self) -> bool:
        """Does the board show fewer pieces than the position has, in a game whose
        actions keep every piece on squares this board reads by identity
        (:class:`~masume.rules.base.KeepsPieces`)? Then no position of the game fits
        it, nor any with pieces lingering (:meth:`_leftovers` refuses a square short of
        a piece wanted): what the search would find, without the search."""
        position = self.game.position
        kind = type(position)
        try:
            kept = self._kept_on[kind]
        except KeyError:
            squares = cast("KeepsPieces", position).kept_on() \
                if issubclass(kind, KeepsPieces) else None
            if squares is not None and any(
                    self._sensor_of.get(name) in (None, "presence", "card") for name in squares):
                squares = None  # a square this board does not read as a stack
            kept = self._kept_on[kind] = squares
        if kept is None:
            return False
        sensed = self._sensed
        assert sensed is not None
        have = 0
        for name in kept:
            reading = sensed.get(name)
            if isinstance(reading, tuple):
                have += len(reading)
        return have < sum(map(len, position.layout().values()))

    def push(self, action: Hashable) -> Change:
        """Play an action the sensors cannot see: a die roll, a choice made on the web view.

        Raises IllegalAction (and changes nothing) when the rules refuse it. When it
        changes where pieces stand, the view is ``follow`` until the board shows it.
        """
        before = self.game.position
        self.game.push(action)
        self.taken_back = None
        self._pushed.add(len(self.game.actions) - 1)
        self._choices = []
        if self._follow_from is None and self._sensed is not None and self._fits(before):
            self._follow_from = before
        self._update_view(settled=True)
        return Change(pushed=(action,))

    def select(self, word: str) -> Change:
        """Where the board was read one way among several, switch to the reading whose
        notation says ``word`` (a button pressed after the pieces were put down)."""
        for k, reading in enumerate(self._choices):
            if _says(reading, word):
                change = self._switch(k) if k != self._choice_index else Change()
                self._worded = True
                self._update_view(settled=True)
                return change
        return Change()

    # ---- buttons --------------------------------------------------------------------

    def takeback(self) -> Change:
        """Take back the last action (the board then shows what to put back)."""
        self._choices = []
        if not self.game.actions:
            return Change()
        action = self.game.pop()
        position = self.game.position
        # Said to the whole table: a face-down card is not named.
        self.taken_back = (position.notation_for(action, None)
                           if isinstance(position, HidesInformation)
                           else position.notation(action))
        self._forget_popped()
        self._follow_from = None
        # The board still shows the action: that is not a new one, it is what
        # to put back. Only a change of the board is looked at again.
        self._settled_on = dict(self._sensed) if self._sensed is not None else None
        self._update_view(settled=True)
        return Change(popped=(action,))

    def confirm(self) -> Change:
        """Step to the next reading of what happened, where the sensors left a choice."""
        if not self._choices:
            invisible = self._invisible_actions()
            if not invisible:
                return Change()
            self._choices = [_Reading(0, ())] + [_Reading(0, (a,)) for a in invisible]
            self._choice_index = 0
            self._chosen_popped = ()
        change = self._switch((self._choice_index + 1) % len(self._choices))
        self._worded = False
        self._update_view(settled=True)
        return change

    def _switch(self, index: int) -> Change:
        """Undo the reading chosen now and apply reading ``index`` of the choices."""
        current = self._choices[self._choice_index]
        undo = Change(popped=tuple(self.game.pop() for _ in current.pushes)[::-1])
        for action in self._chosen_popped:
            self.game.push(action)
        self._choice_index = index
        redo = self._apply(self._choices[self._choice_index])
        return Change(popped=undo.popped + redo.popped,
                      pushed=tuple(self._chosen_popped) + redo.pushed)

    def _forget_popped(self) -> None:
        """Actions taken back are no longer pushed ones."""
        self._pushed = {i for i in self._pushed if i < len(self.game.actions)}

    def _may_pop(self, count: int) -> bool:
        """May the sensors take back the last ``count`` actions? Not a die roll, nor
        anything pushed rather than read (a choice made on the web view)."""
        positions = self.game.positions()
        n = len(self.game.actions)
        return all(n - k not in self._pushed and not positions[-1 - k].status().awaiting
                   for k in range(1, count + 1))

    # ---- the search ---------------------------------------------------------------

    def _differences(self, position: AnyPosition) -> tuple[str, ...]:
        """The sensed cells that do not show ``position``, in the cells' order, kept while
        the readings stand. Only a cell occupied on the board or in the position can
        differ (elsewhere both read empty), so only those are compared."""
        found = self._mismatches.get(position)
        if found is None:
            assert self._sensed is not None
            want, layout = self._signed(position)
            sensed, match = self._sensed, self._match
            differing = [name for name in layout
                         if name in sensed and sensed[name] != want[name]
                         and not match(sensed[name], want[name])]
            differing += [name for name in self._sensed_occupied
                          if name not in layout and sensed[name] != want[name]
                          and not match(sensed[name], want[name])]
            if len(differing) > 1:
                differing.sort(key=self._order.__getitem__)
            found = tuple(differing)
            if len(self._mismatches) > 50_000:
                self._mismatches.clear()
            self._mismatches[position] = found
        return found

    def _fits(self, position: AnyPosition) -> bool:
        return not self._differences(position)

    def _actions(self, position: AnyPosition) -> Iterable[Hashable]:
        """Actions the sensors may show: none while the rules wait for a die."""
        return position.legal_actions() if self._may_act(position) else ()

    @staticmethod
    def _may_act(position: AnyPosition) -> bool:
        """May the sensors show an action from ``position``? Not once the game is
        over, nor while the rules wait for a die."""
        return position.outcome() is None and not position.status().awaiting

    def _explain(self, order: Mapping[str, int]) -> list[_Reading]:
        """The readings that fit the board, best first; ``order``: the order the cells
        changed in (see ``_first_changes``)."""
        positions = self.game.positions()
        bases = [positions[-1 - k] for k in range(min(3, len(positions)))]
        target = self._sensed
        assert target is not None

        # An action read in place of the last one changes the cells that one took pieces
        # from (_same_origin): with footprints, the others are not even applied.
        def origin(pops: int) -> set[str]:
            return self._last_sources(bases[1]) if pops else set()

        def one(base: AnyPosition, pops: int) -> list[_Reading]:
            need = self._differences(base)
            if pops and not origin(pops):
                return []
            return [_Reading(pops, (a,)) for a, after
                    in self._successors_changing(base, origin(pops).union(need))
                    if (not pops or self._same_origin(base, after))
                    and self._reads_as(base, a, after, need)]

        def two(base: AnyPosition, pops: int) -> list[_Reading]:
            if pops and not origin(pops):
                return []
            differ = set(self._differences(base))
            out = []
            for a, mid in self._successors_changing(base, origin(pops), differ):
                if pops and not self._same_origin(base, mid):
                    continue
                # The first action must change a cell that ended up changed, and
                # leave at least one of those as the board shows it: the second
                # action does not undo all that the first did. This keeps the
                # search to a few first actions where hundreds are legal (a card
                # from hand onto any zone), see docs/benchmarks.md.
                if not self._progress(base, mid, differ):
                    continue
                # The second action changes every cell that still differs (a cheap
                # test before the whole comparison).
                need = self._differences(mid)
                out += [_Reading(pops, (a, b)) for b, after in self._successors_changing(mid, need)
                        if self._reads_as(mid, b, after, need)]
            return out

        # Each step of the search: amending the last action first (a chain that
        # went on, a slide that went further), then new actions; both kinds stay
        # on offer, so confirm can switch between them where both fit.
        def back(pops: int) -> list[_Reading]:
            return [_Reading(pops, ())] if self._fits(bases[pops]) else []

        searches: list[Callable[[], list[_Reading]]] = []
        if len(bases) > 1 and self._may_pop(1):
            searches.append(lambda: one(bases[1], 1) + one(bases[0], 0))
            searches.append(lambda: two(bases[1], 1) + two(bases[0], 0))
        else:
            searches += [lambda: one(bases[0], 0), lambda: two(bases[0], 0)]
        for pops in (1, 2):
            if len(bases) > pops and self._may_pop(pops):
                searches.append(partial(back, pops))
        expected = self._expected_reading()
        for search in searches:
            found = search()
            if found:
                # Where the lit action and another reading end in the same position,
                # the lit action is what the players made (_distinct keeps the first).
                found.sort(key=lambda r: r != expected)
                return self._distinct(found, bases, order)
        return []

    def _expected_reading(self) -> _Reading | None:
        """The reading that makes the lit action (``expect``), if one is lit."""
        return None if self.expect is None else _Reading(0, (self.expect,))

    def _progress(self, base: AnyPosition, mid: AnyPosition, differ: set[str]) -> bool:
        """Does ``base -> mid`` change a differing cell to what the board shows there?"""
        assert self._sensed is not None
        had, want = self.signature(base), self.signature(mid)
        return any(had[name] != want[name] and self._match(self._sensed[name], want[name])
                   for name in differ)

    def _changes_all(self, before: AnyPosition, after: AnyPosition,
                     cells: Collection[str]) -> bool:
        """Does ``before -> after`` change the reading of every one of ``cells``?
        (``set(cells) <= self.touched(before, after)``, without building the set.)"""
        a = self.signature(before)
        for name, sig in zip(cells, self._readings(after, cells)):
            if a[name] == sig:
                return False
        return True

    def _reads_as(self, base: AnyPosition, action: Hashable, after: AnyPosition,
                  need: tuple[str, ...]) -> bool:
        """Does the board show ``action`` (``base -> after``), which must change the
        reading of every one of ``need``? The whole comparison (_shows) comes last."""
        return (self._changes_all(base, after, need)
                and not self._short_of(after, self._changed_by(base, action, need))
                and self._shows(base, after))

    def _changed_by(self, base: AnyPosition, action: Hashable,
                    need: tuple[str, ...]) -> Collection[str]:
        """The sensed cells ``action`` changes from ``base`` as far as is known cheaply:
        its footprint's where the game knows footprints, else ``need``."""
        if not _knows_footprints(type(base)):
            return need
        footprint = cast("KnowsFootprints[Any]", base).footprint(action)
        if footprint is None:
            return need
        empty = self._empty
        return [name for name in footprint if name in empty]

    def _short_of(self, after: AnyPosition, cells: Collection[str]) -> bool:
        """Does the board show, on one of ``cells``, fewer pieces than ``after`` wants
        there, or differ from it on a presence cell? Then it does not show ``after``,
        not even with removed pieces lingering (_shows, _leftovers): a necessary test
        of a few cells before the whole comparison. After a lift, most second actions
        of the two-action search put the piece in the hand somewhere the board shows
        none (issue 17: the settle after a lift was half a club worker's CPU)."""
        assert self._sensed is not None
        sensed_of, match = self._sensed, self._match
        for name, wanted in zip(cells, self._readings(after, cells)):
            sensed = sensed_of[name]
            if sensed == wanted or match(sensed, wanted):
                continue
            if isinstance(sensed, bool) or isinstance(wanted, bool) or len(sensed) < len(wanted):
                return True
        return False

    def _readings(self, position: AnyPosition, cells: Collection[str]) -> list[Signature]:
        """``[self.signature(position)[name] for name in cells]``, but for a position
        not signed yet made from its layout alone, and not kept: the search asks
        this of every successor of every first action, and most fail it, so their
        whole signatures would never be needed (Tracker._sign)."""
        kept = self._signatures.get(position) or self._older_signatures.get(position)
        if kept is not None:
            signature = kept[0]
            return [signature[name] for name in cells]
        memo = self._layout_of
        if memo is not None and memo[0] is position:
            layout = memo[1]
        else:
            layout = position.layout()
            self._layout_of = (position, layout)
        empty, out = self._empty, []
        for name in cells:
            pieces = layout.get(name)
            sig = empty[name] if pieces is None else self._cell_reading(name, pieces)
            out.append(empty[name] if sig is _UNSENSED else sig)
        return out

    def _shows(self, before: AnyPosition, after: AnyPosition) -> bool:
        """Does the board show the action ``before -> after`` (removed pieces may linger)?"""
        return self._fits(after) or self._leftovers(before, after) is not None

    def _leftovers(self, before: AnyPosition, after: AnyPosition) -> tuple[str, ...] | None:
        """The squares where pieces that ``before -> after`` took off the board still
        stand, when they are all that keeps the board from showing ``after``.

        None when the board differs from ``after`` in any other way, or not at all.
        Only sensors that tell pieces apart can see this; presence sensors cannot.
        """
        assert self._sensed is not None
        differing = self._differences(after)
        if not differing:
            return None
        want, had = self.signature(after), self.signature(before)
        for name in differing:
            sensed, wanted = self._sensed[name], want[name]
            if isinstance(sensed, bool) or isinstance(wanted, bool):
                return None
            if len(sensed) < len(wanted):
                return None  # a piece wanted is missing (most of the search's candidates)
            extra, missing = Counter(sensed) - Counter(wanted), Counter(wanted) - Counter(sensed)
            # Only pieces that stood on this very square before the action may linger.
            if missing or extra - (_as_counter(had[name]) - Counter(wanted)):
                return None
        # ... and only pieces the action took off the board, not moved elsewhere.
        gone = _total(had) - _total(want)
        lingering = sum((_as_counter(self._sensed[n]) - _as_counter(want[n]) for n in differing),
                        Counter[str]())
        if lingering - gone:
            return None
        return tuple(differing)

    def _last_leftovers(self) -> tuple[str, ...] | None:
        positions = self.game.positions()
        if len(positions) < 2:
            return None
        return self._leftovers(positions[-2], positions[-1])

    def _same_origin(self, base: AnyPosition, after: AnyPosition) -> bool:
        """Does the action ``base -> after`` take pieces from where the last action took
        them? Only then can it be the last action, read again."""
        last = self._last_sources(base)
        if not last:
            return False
        # ``last <= self._sources(base, after)``, a cell at a time (_less is False
        # where the readings are the same, i.e. for a cell ``touched`` leaves out).
        a = self.signature(base)
        return all(_less(sig, a[name]) for name, sig in zip(last, self._readings(after, last)))

    def _last_sources(self, base: AnyPosition) -> set[str]:
        """The cells the last action (``base`` -> the game's position) took pieces from."""
        current = self.game.position
        memo = self._origin
        if memo is None or memo[0] is not base or memo[1] is not current:
            memo = self._origin = (base, current, self._sources(base, current))
        return memo[2]

    def _sources(self, before: AnyPosition, after: AnyPosition) -> set[str]:
        """The cells ``before -> after`` takes pieces from."""
        a, b = self.signature(before), self.signature(after)
        return {name for name in self.touched(before, after) if _less(b[name], a[name])}

    def _distinct(self, readings: list[_Reading], bases: list[AnyPosition],
                  order: Mapping[str, int]) -> list[_Reading]:
        """One reading per resulting position: two orders of the same two moves are
        no question worth asking. Of those, the one in the order the board saw them
        (``order``): the record says what was played, as a watcher would write it."""
        index_of: dict[AnyPosition, int] = {}
        out: list[_Reading] = []
        for reading in readings:
            result = bases[reading.pops]
            for action in reading.pushes:
                result = self._after(result, action)
            k = index_of.get(result)
            if k is None:
                index_of[result] = len(out)
                out.append(reading)
            elif reading.pops == out[k].pops and (self._disorder(reading, bases, order)
                                                  < self._disorder(out[k], bases, order)):
                out[k] = reading
        return out

    def _disorder(self, reading: _Reading, bases: list[AnyPosition],
                  order: Mapping[str, int]) -> int:
        """How many of the reading's actions follow one that the board saw begin later:
        an action begins when the first of the cells it alone changes left what it
        read when the board was last still (``order``); a cell absent from ``order``
        changed before that, so its action begins first."""
        positions = [bases[reading.pops]]
        for action in reading.pushes:
            positions.append(self._after(positions[-1], action))
        cells = [self.touched(a, b) for a, b in pairwise(positions)]
        starts = []
        for i, touched in enumerate(cells):
            others = set().union(*(c for j, c in enumerate(cells) if j != i))
            own = (touched - others) or touched
            starts.append(min((order.get(c, -1) for c in own), default=-1))
        return sum(a > b for a, b in pairwise(starts))

    def touched(self, before: AnyPosition, after: AnyPosition) -> set[str]:
        """The sensed cells whose reading differs between two positions (only a cell
        on the cells of one of their layouts can)."""
        (a, layout_a), (b, layout_b) = self._signed(before), self._signed(after)
        # A cell whose stack is the same object in both layouts reads the same (a
        # signature is kept by (cell, stack)): most of them, where a game's layout
        # shares its stacks (Soccer Shogi's), compared without their readings.
        out = {name for name, pieces in layout_a.items()
               if layout_b.get(name) is not pieces and a.get(name) != b.get(name)}
        out.update(name for name in layout_b
                   if name not in layout_a and a.get(name) != b.get(name))
        return out

    def _apply(self, reading: _Reading) -> Change:
        self.taken_back = None
        popped = tuple(self.game.pop() for _ in range(reading.pops))[::-1]
        self._forget_popped()
        self._chosen_popped = popped
        for action in reading.pushes:
            self.game.push(action)
        return Change(popped=popped, pushed=reading.pushes)

    def _invisible_actions(self) -> list[Hashable]:
        """Actions that move pieces where these sensors cannot feel it (a pass
        between two players on presence sensors). Actions that move no piece at
        all (declaring a system) are not among them: they are chosen by name
        (masume.play.table.TableSession.choices), not stepped through."""
        position = self.game.position
        if self._sensed is None or not self._fits(position):
            return []
        layout = position.layout()
        out = []
        for action, after in self._successors_of(position):
            if self._fits(after) and after.layout() != layout:
                out.append(action)
        return out

    # ---- the view -------------------------------------------------------------------

    def _update_view(self, settled: bool = False) -> None:
        if self._sensed is None:
            self.view = View("in-sync", "waiting for the board")
            return
        # Readings already decided on (a snapshot or an event saying them again) are
        # not "moving": nothing is left to decide on them (due() is None).
        settled = settled or self._settled_on == self._sensed
        position = self.game.position
        differing = self._differences(position)
        if not differing:
            self._follow_from = None
            self.taken_back = None
            if len(self._choices) > 1 and not self._worded:
                chosen = self._choices[self._choice_index]
                squares = self._squares_of(chosen)
                self.view = View(
                    "ambiguous",
                    f"the sensors allow {len(self._choices)} readings; press confirm for the next",
                    choice=squares,
                )
            else:
                self.view = View("in-sync")
            return
        leftovers = self._last_leftovers()
        if leftovers:
            names = ", ".join(leftovers)
            self.view = View("remove", f"take off the piece the last action removed: {names}",
                             differing=leftovers)
            return
        if self._follow_from is not None:
            self.view = self._follow_view(position, differing)
            return
        empty = not self._sensed_occupied
        if (len(differing) >= SET_UP_SQUARES or empty) and self._only_missing(position, differing):
            self.view = self._set_up_view(position, differing)
            return
        lifted = self._lifted(position, differing)
        if lifted is not None:
            destinations = {sq: tuple(sorted(kinds)) for sq, kinds in lifted.items()}
            sent = {sq: tuple(sorted(d for d, kind in kinds.items() if kind == SEND))
                    for sq, kinds in lifted.items()}
            self.view = View("lifted", "", destinations=destinations,
                             sent={sq: d for sq, d in sent.items() if d}, differing=differing)
            return
        want = self.signature(position)
        placed = tuple(sq for sq in differing if _more(self._sensed[sq], want[sq]))
        if settled:
            names = ", ".join(differing[:6]) + (" ..." if len(differing) > 6 else "")
            steps, put, take = self._hand_steps(want, differing, worded=True)
            problems = self._card_problems(position, differing, want)
            message = "; ".join(problems) or f"the board does not match the game at {names}"
            if problems:
                # A card is named by what it is, never by its tag (no one's word).
                steps = self._card_steps(differing, want)
            if self.taken_back is not None:
                # The takeback button: the board still shows the action; say how to undo it.
                message = f"take back {self.taken_back}: " + "; ".join(steps)
            elif problems:
                message += "; to put it right: " + "; ".join(steps)
            else:
                reason = self._refusal(position, want, differing)
                if reason:
                    message += f": {reason}"
                if steps:
                    message += "; to put it right: " + "; ".join(steps)
            self.view = View("mismatch", message, differing=differing, placed=placed,
                             put=put, take=take)
        else:
            self.view = View("moving", differing=differing, placed=placed)

    def _hand_steps(self, want: Mapping[str, Signature], differing: tuple[str, ...], *,
                    worded: bool = False) -> tuple[list[str], tuple[str, ...], tuple[str, ...]]:
        """The hand movements that make the board read ``want``: each piece from where
        it is to where the game has it (as words, or ``piece A→B`` with ``worded``
        False), then where pieces must be put down, and where they must be taken from."""
        assert self._sensed is not None
        extra: dict[str, list[str]] = {}
        missing: dict[str, list[str]] = {}
        for name in differing:
            sensed, wanted = _as_counter(self._sensed[name]), _as_counter(want[name])
            for piece, n in (sensed - wanted).items():
                extra.setdefault(piece, []).extend([name] * n)
            for piece, n in (wanted - sensed).items():
                missing.setdefault(piece, []).extend([name] * n)
        steps = []
        for piece, squares in missing.items():
            label = "a piece" if piece == "?" else piece
            the = "the piece" if piece == "?" else piece
            for square in squares:
                source = extra.get(piece, [])
                if source:
                    start = source.pop(0)
                    steps.append(f"move {the} from {start} to {square}" if worded
                                 else f"{label} {start}\u2192{square}")
                else:
                    steps.append(f"put {label} on {square}" if worded else f"{label} to {square}")
        for piece, squares in extra.items():
            the = "the piece" if piece == "?" else piece
            steps += [f"take {the} off {square}" if worded
                      else f"{'a piece' if piece == '?' else piece} off {square}"
                      for square in squares]
        put = tuple(sq for sq in differing if _more(want[sq], self._sensed[sq]))
        take = tuple(sq for sq in differing if _more(self._sensed[sq], want[sq]))
        return steps, put, take

    def _refusal(self, position: AnyPosition, want: Mapping[str, Signature],
                 differing: tuple[str, ...]) -> str:
        """Where the board shows one piece moved from one square to another that no legal
        action explains: the engine's own reason why that move is not legal (its
        IllegalAction, read through ``parse_action``), or "" where the game's notation
        has no plain ``from-to`` move for it."""
        assert self._sensed is not None
        if not self._may_act(position):
            return ""
        sources = [sq for sq in differing if _less(self._sensed[sq], want[sq])]
        targets = [sq for sq in differing if _more(self._sensed[sq], want[sq])]
        if not sources and len(targets) == 1 == len(differing):
            return self._drop_refusal(position, targets[0], want)
        if len(sources) != 1 or len(targets) != 1 or len(differing) != 2:
            return ""
        for form in ("{}-{}", "{}{}", "{} {}"):
            text = form.format(sources[0], targets[0])
            try:
                position.parse_action(text)
                return ""  # a legal move: the board is not that move (a stale board)
            except IllegalAction as exc:
                reason = str(exc)
                return f"{text} is not legal ({reason.removeprefix(text + ': ')})"
            except (NotationError, ValueError, KeyError):
                continue
        return ""

    def _drop_refusal(self, position: AnyPosition, square: str,
                      want: Mapping[str, Signature]) -> str:
        """A piece put down from the hand on ``square`` that no legal action puts there
        (a drop, a set-up piece): the squares the rules let it go on now, from the legal
        actions. "" where the sensors cannot tell pieces apart."""
        assert self._sensed is not None
        extra = _as_counter(self._sensed[square]) - _as_counter(want[square])
        if len(extra) != 1 or "?" in extra:
            return ""
        (piece,) = extra
        allowed = sorted({sq for _, after in self._successors_of(position)
                          for sq, sig in self.signature(after).items()
                          if (_as_counter(sig) - _as_counter(want[sq]))[piece] > 0})
        if not allowed:
            return f"no {piece} may be put down now"
        shown = ", ".join(allowed[:8]) + (" ..." if len(allowed) > 8 else "")
        return f"{piece} may not go on {square} now; it may go on {shown}"

    def _set_up_view(self, position: AnyPosition, differing: tuple[str, ...]) -> View:
        """Pieces missing on many squares at once (an empty board, a board being set up):
        where each piece goes, lit as a die roll's follow-up is."""
        want = self.signature(position)
        by_piece: dict[str, list[str]] = {}
        for name in differing:
            assert self._sensed is not None
            for piece in (_as_counter(want[name]) - _as_counter(self._sensed[name])):
                # Cards by kind only: the terminal is shared, a face-down card is no one's word.
                label = ("pieces" if piece == "?" else "a card"
                         if piece.startswith(("tag:", "card:")) else piece)
                by_piece.setdefault(label, []).append(name)
        parts = [f"{piece} on {', '.join(sq[:8])}{' ...' if len(sq) > 8 else ''}"
                 for piece, sq in sorted(by_piece.items())]
        return View("follow", f"set up the pieces on the lit squares ({len(differing)} to go): "
                    + "; ".join(parts), differing=differing, put=differing)

    def _card_problems(self, position: AnyPosition, differing: tuple[str, ...],
                       want: Mapping[str, Signature]) -> list[str]:
        """On a card mat, what is wrong in words: an unknown tag, a card out of place
        (with the engine's reason why it may not be played there)."""
        assert self._sensed is not None
        out: list[str] = []
        for name in differing:
            sensed = self._sensed[name]
            if not (isinstance(sensed, tuple) and len(sensed) == 1
                    and isinstance(sensed[0], str) and sensed[0].startswith("tag:")):
                continue
            tag = sensed[0][4:]
            copy = self.cards.by_tag(tag) if self.cards is not None else None
            if self.cards is not None and copy is None:
                out.append(f"unknown card on {name} (tag {tag}): "
                           "enroll it with masume cards enroll")
                continue
            label = (f"{copy.card.name} ({copy.id})" if copy is not None
                     else f"the card with tag {tag}")
            wanted = want.get(name, ())
            if wanted and not isinstance(wanted, bool):
                out.append(f"{label} is on {name}, where the game has "
                           f"{self._card_label(wanted[-1])}")
            else:
                out.append(f"{label} is on {name}: the game has no card there")
            if copy is not None:
                out[-1] += self._card_refusal(position, copy.id, name)
        for name in differing:
            wanted = want.get(name, ())
            if self._sensed[name] == () and wanted and not isinstance(wanted, bool) \
                    and str(wanted[-1]).startswith(("tag:", "card:")):
                out.append(f"{name} is empty: the game has {self._card_label(wanted[-1])} there")
        return out

    def _card_refusal(self, position: AnyPosition, copy_id: str, cell: str) -> str:
        """Why the engine refuses card ``copy_id`` laid on ``cell`` (its IllegalAction,
        the card called "it"), as " (not legal: ...)"; "" where the game's notation has
        no such laying, or it is legal (the board is then not that action alone)."""
        if position.outcome() is not None:
            return ""
        for form in ("{}@{}", "{} {}"):
            text = form.format(copy_id, cell)
            try:
                position.parse_action(text)
                return ""
            except IllegalAction as exc:
                reason = str(exc).removeprefix(text + ": ")
                reason = reason.replace(text, f"laying it on {cell}").replace(copy_id, "it")
                return f" ({reason})" if "not legal" in reason else f" (not legal: {reason})"
            except (NotationError, ValueError, KeyError):
                continue
        return ""

    def _card_steps(self, differing: tuple[str, ...],
                    want: Mapping[str, Signature]) -> list[str]:
        """The hand movements that put a card mat right, each card by what the game
        has there: take a card off, put one back (lit on the board as any fix is)."""
        assert self._sensed is not None
        steps: list[str] = []
        for name in differing:
            sensed, wanted = self._sensed[name], want.get(name, ())
            if isinstance(sensed, bool) or isinstance(wanted, bool):
                continue
            other = bool(sensed and wanted) and wanted[-1] not in (sensed[-1], ANY_CARD)
            if sensed and (not wanted or other):
                steps.append(f"take the card off {name}")
            if wanted and (not sensed or other):
                steps.append(f"put {self._card_label(wanted[-1])} on {name}")
        return steps

    def _card_label(self, piece: str) -> str:
        if piece == ANY_CARD:
            return "a card"
        if piece.startswith("tag:") and self.cards is not None:
            copy = self.cards.by_tag(piece[4:])
            if copy is not None:
                return f"{copy.card.name} ({copy.id})"
        if piece.startswith("card:") and self.cards is not None:
            try:
                copy = self.cards.copy(piece[5:])
                return f"{copy.card.name} ({copy.id}, not enrolled)"
            except KeyError:
                pass
        return piece

    def _follow_view(self, position: AnyPosition, differing: tuple[str, ...]) -> View:
        """What to move so that the board shows the game again (after a die roll):
        each piece from where it is to where the game has it."""
        assert self._sensed is not None and self._follow_from is not None
        want, was = self.signature(position), self.signature(self._follow_from)
        steps, put, take = self._hand_steps(want, differing)
        # A piece where neither the game nor the board before it had one is misplaced.
        placed = tuple(sq for sq in take if _more(self._sensed[sq], was[sq]))
        return View("follow", "move as the lights show: " + ", ".join(steps),
                    differing=differing, placed=placed, put=put, take=take)

    def _squares_of(self, reading: _Reading) -> tuple[str, ...]:
        positions = self.game.positions()
        before = positions[-1 - len(reading.pushes)]
        squares = self.touched(before, self.game.position)
        if not squares and reading.pushes:
            squares = set(_action_squares(reading.pushes[-1], self.board))
        return tuple(sorted(squares))

    def _lifted(self, position: AnyPosition,
                differing: tuple[str, ...]) -> dict[str, dict[str, str]] | None:
        """If the only differences are pieces missing: for each lifted square, where
        what was lifted may go (destination -> MOVE or SEND).

        Checked against the current position and, for a chain of jumps going on,
        the one before it (then the lifted piece's square is where the chain began).
        Kept while the game and the readings stand: the view is made again on every
        change of a cell and at the settle, which reads the same board.
        """
        assert self._sensed is not None
        positions = self.game.positions()
        before = positions[-2] if len(positions) > 1 else None
        memo = self._lifted_memo
        if (memo is not None and memo[0] is position and memo[1] is before
                and memo[2] == self._sensed):
            return memo[3]
        found = self._lifted_from(position, before, differing)
        self._lifted_memo = (position, before, dict(self._sensed), found)
        return found

    def _lifted_from(self, position: AnyPosition, before: AnyPosition | None,
                     differing: tuple[str, ...]) -> dict[str, dict[str, str]] | None:
        """:meth:`_lifted`, found (``before``: the position before ``position``)."""
        if not self._only_missing(position, differing):
            return None
        out: dict[str, dict[str, str]] = {sq: {} for sq in differing}
        if before is not None:
            missing = self._differences(before)
            if missing and self._only_missing(before, missing):
                for square, kinds in self._destinations(before, set(missing)).items():
                    _merge_kinds(out.setdefault(square, {}), kinds)
        for square, kinds in self._destinations(position, set(differing)).items():
            _merge_kinds(out[square], kinds)
        return out

    def _only_missing(self, position: AnyPosition, differing: Iterable[str]) -> bool:
        assert self._sensed is not None
        want = self.signature(position)
        return all(_less(self._sensed[sq], want[sq]) for sq in differing)

    def _destinations(self, base: AnyPosition, lifted: set[str]) -> dict[str, dict[str, str]]:
        """For each lifted square, the squares the actions from it fill, as MOVE or SEND.

        An action fits a lift when it leaves on each lifted square just what is
        still there, or, when the top piece of the square is in the hand, when it
        takes anything of that square's stack (the hand reaches what lay under).
        """
        assert self._sensed is not None
        now = self.signature(base)
        layout = base.layout()
        out: dict[str, dict[str, str]] = {sq: {} for sq in lifted}
        for action, after_position in self._successors_changing(base, (), lifted):
            after = self.signature(after_position)
            changed = self.touched(base, after_position)
            left = changed & lifted
            if not left or not all(self._lift_fits(sq, now[sq], after[sq], layout) for sq in left):
                continue
            gained = {n for n in changed if _more(after[n], now[n])} - lifted
            after_layout = after_position.layout()
            for sq in left:
                # MOVE when the top piece (the one in the hand) leaves with the action.
                stack = layout.get(sq, ())
                top = stack[-1] if stack else None
                kind = (MOVE if stack and stack.count(top) > after_layout.get(sq, ()).count(top)
                        else SEND)
                _merge_kinds(out[sq], {dest: kind for dest in gained})
        return out

    def _lift_fits(self, square: str, now: Signature, after: Signature, layout: Layout) -> bool:
        assert self._sensed is not None
        sensed = self._sensed[square]
        if self._match(sensed, after):
            return True
        if isinstance(sensed, bool) or _more(after, now):
            return False
        stack = layout.get(square, ())
        return bool(stack) and sensed.count(stack[-1]) < now.count(stack[-1])  # type: ignore[union-attr]


#: How what was lifted reaches a destination (see View.sent): the lifted piece itself
#: arrives there, or only what lay under it.
Reach = Literal["move", "send"]
MOVE: Reach = "move"
SEND: Reach = "send"


def _merge_kinds(into: dict[str, str], kinds: Mapping[str, str]) -> None:
    """Add destinations; a square both a move and a send reach is a move."""
    for square, kind in kinds.items():
        if into.get(square) != MOVE:
            into[square] = kind


def _says(reading: _Reading, word: str) -> bool:
    """Does a reading's notation hold ``word`` (as a word; never an empty one)?"""
    return bool(word) and any(word in str(action).split() for action in reading.pushes)


def _total(signature: Mapping[str, Signature]) -> Counter[str]:
    """All pieces a board signature names (identity and card sensors)."""
    out: Counter[str] = Counter()
    for sig in signature.values():
        if not isinstance(sig, bool):
            out.update(sig)
    return out


def _as_counter(sig: Signature) -> Counter[str]:
    if isinstance(sig, bool):
        return Counter({"?": 1} if sig else {})
    return Counter(sig)


def _less(sensed: Signature, want: Signature) -> bool:
    """Fewer pieces than wanted, and nothing that should not be there."""
    if sensed == want:
        return False
    if sensed is False or sensed == ():  # nothing there: less if anything is wanted
        return bool(want)
    s, w = _as_counter(sensed), _as_counter(want)
    return s != w and all(s[k] <= w[k] for k in s)


def _more(sig: Signature, other: Signature) -> bool:
    if sig == other or sig is False or sig == ():
        return False
    a, b = _as_counter(sig), _as_counter(other)
    return any(a[k] > b[k] for k in a)


def _action_squares(action: Hashable, board: Board) -> list[str]:
    """Square names written in an action's notation (for showing invisible actions)."""
    import re

    return [m for m in re.findall(r"[A-Za-z0-9-]+", str(action)) if board.has_cell(m)]
