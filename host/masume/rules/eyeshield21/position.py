"""The Eyeshield 21 TCG position: set-up, the turn's phases, the attack, the piles.

Steps (``Position.step``) in the order of the seed (docs/rules/eyeshield21.md):

- ``setup``: the side to move lays three characters face down, then ``deal``
  (draws its hand and sets its guts); first the side that starts, then the other;
- ``show``: ``reveal`` turns every character face up; the first turn begins;
- ``draw``: benched characters return (``home-bench-1>home-character-4``), ``draw``;
- ``guts``: ``guts`` sets one card from the deck as guts;
- ``main``: characters, reactions, discards, main-phase abilities, ``buy``
  (guts for a card), then ``attack``;
- ``allot`` (attacker), ``block`` (defender): every character to the side's half
  of the pass or run area face down, tactics from the hand, the attacker's two
  ball cards, then ``ready``;
- ``guess``: the defender lays its ball-mark card face up in one area;
- ``flip``: the attacker's ``reveal``: the ball cards and the attack area turn face up;
- ``refill``: after a right guess the defender's ``refill N``;
- ``play-attack``, ``play-block``: abilities, combination cards, reactions; ``done``;
- ``tactics-attack``, ``tactics-block``: ``use`` the tactics cards; ``done``;
- ``damage``: the defender's ``damage N`` (N cards from its deck to the discard);
- ``change``: the attacker changes characters; ``done`` (then the end-of-attack
  and end-of-turn abilities apply by themselves);
- ``tidy``: each side clears its play areas (attacker first), the attacker keeps
  to the hand limit (``discard N``); then the other side's turn.

Steps where a side could only say ``done`` (or ``refill 0``) pass by themselves.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from random import Random
from typing import Any, ClassVar, NamedTuple

from ..base import (
    ANY_CARD,
    IllegalAction,
    Legend,
    Light,
    Outcome,
    Status,
    TableView,
)
from ..card_set import Card, CardSet
from .actions import OFF_MAT, Action, Adjust, Call, Move, Place, Use
from .cards import (
    Ability,
    Table,
    abilities_of,
    by_hand_of,
    is_lasting,
    label,
    members_of,
    play_types,
    power_of,
    team_of,
)
from .geometry import (
    AREA_PLACES,
    AREAS,
    SIDES,
    area_cells,
    area_of,
    area_place,
    ball_cell,
    bench_cells,
    character_cells,
    owner_of,
    pile_cell,
    reaction_cells,
)

GAME = "eyeshield21"
SETUP, SHOW, DRAW, GUTS, MAIN = "setup", "show", "draw", "guts", "main"
ALLOT, BLOCK, GUESS, FLIP, REFILL = "allot", "block", "guess", "flip", "refill"
PLAY_ATTACK, PLAY_BLOCK = "play-attack", "play-block"
TACTICS_ATTACK, TACTICS_BLOCK = "tactics-attack", "tactics-block"
DAMAGE, CHANGE, TIDY, OVER = "damage", "change", "tidy", "over"
STEPS = (SETUP, SHOW, DRAW, GUTS, MAIN, ALLOT, BLOCK, GUESS, FLIP, REFILL, PLAY_ATTACK,
         PLAY_BLOCK, TACTICS_ATTACK, TACTICS_BLOCK, DAMAGE, CHANGE, TIDY, OVER)
#: Steps that pass by themselves when ``done`` (or ``refill 0``) is all a side could do.
SKIPPABLE = (REFILL, PLAY_ATTACK, PLAY_BLOCK, TACTICS_ATTACK, TACTICS_BLOCK)
ATTACK_STEPS = STEPS[5:17]
#: The seed: 開始手札 先攻 4枚、後攻 5枚; 開始時コスト (ガッツ) 先攻 4枚、後攻 5枚.
START_HAND = (4, 5)  # (the side that starts, the other)
START_CHARACTERS = 3
FIELD_LIMIT = 5  # characters and combination cards a side may have
#: The largest power change and draw one by-hand adjustment offers: a menu must end
#: somewhere, and adjustments add up, so a card that says more is recorded in two.
ADJUST_POWER = 10
READY, DONE = Call("ready"), Call("done")


class Piles(NamedTuple):
    """A side's counted cards: the deck, the hand, the guts, the discard pile."""

    deck: int
    hand: int
    guts: int
    discard: int


@dataclass(frozen=True)
class Options:
    """Rule options (``RULES.start`` keywords besides the cards).

    ``draw_cost``: guts paid for one extra card in the main phase (the seed gives no
    figure; docs: "Readings"); ``hand_limit``: the seed's 上限は 5枚.
    """

    first: str = "home"
    draw_cost: int = 1
    hand_limit: int = 5

    @classmethod
    def make(cls, **options: Any) -> Options:
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(options) - known)
        if unknown:
            raise ValueError(f"unknown eyeshield21 option(s) {', '.join(unknown)}; known: "
                             f"cards, deck_home, deck_away, {', '.join(sorted(known))}")
        made = cls(**options)
        if made.first not in SIDES:
            raise ValueError(f"first must be home or away, not {made.first!r}")
        for name in ("draw_cost", "hand_limit"):
            value = getattr(made, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a whole number of at least 1, not {value!r}")
        return made


#: The piles of both sides: a count that reaches or leaves 0 shows or hides one.
_PILES = frozenset(pile_cell(side, pile) for side in SIDES for pile in ("deck", "guts", "discard"))


@cache
def _touching(*cells: str) -> frozenset[str]:
    """A footprint: ``cells`` (those of the mat: not ``discard``, ``hand``, ``off`` nor
    none) and the piles."""
    return _PILES.union(cell for cell in cells if cell and cell not in OFF_MAT)


def _other(side: int) -> int:
    return 1 - side


#: The sides' colours, and how the highlights of ``status()`` show: where the card in
#: play may go (over every other light), the play areas in play, the phase and turn
#: lamps, the deck to damage and the cards to tidy away.
LEGEND = Legend(
    sides={"home": (0, 90, 255), "away": (255, 30, 0)},
    highlights={
        "place": Light((0, 255, 60), foremost=True, label="where the card may go"),
        "area": Light((0, 60, 140), label="play area"),
        "turn": Light(None, label="whose turn"),
        "phase": Light((255, 255, 255)),
        "damage": Light((255, 0, 0), "pulse", label="deck to damage"),
        "tidy": Light((255, 150, 0), "pulse", label="tidy away"),
    },
    # People's words for the mat's places and lamps, as the rules name them.
    places={
        **{f"turn-{side}": f"{side}'s lamp" for side in SIDES},
        **{f"phase-{p}": f"{p} phase lamp" for p in ("draw", "guts", "main", "attack")},
        **{pile_cell(side, pile): f"{side}'s {pile}" for side in SIDES
           for pile in ("deck", "guts", "discard")},
        **{cell: f"{side}'s {kind} {cell.rsplit('-', 1)[1]}" for side in SIDES
           for kind, cells in (("character", character_cells(side)),
                               ("bench", bench_cells(side)),
                               ("reaction", reaction_cells(side)))
           for cell in cells},
        **{cell: f"{side}'s {area} area {area_place(cell)}" for side in SIDES
           for area in AREAS for cell in area_cells(side, area)},
        **{ball_cell(side, area): f"{side}'s {area} ball card" for side in SIDES
           for area in AREAS},
    },
    # The game is won by deck-out: the score the rules keep is each deck's cards.
    score="cards left in deck",
)


@dataclass(frozen=True, repr=False)
class Position:
    """A moment of an Eyeshield 21 TCG game. Immutable and hashable.

    ``cells``: (cell, copy id, face up) for every card on the mat, sorted by cell.
    ``piles``: each side's counts. ``gone``: copies each side is known to have put
    in its discard pile (public). ``known``: copies known to be back in a hand
    (combination and tactics cards). ``used``: characters whose ability was used
    this turn, and tactics and reactions spent. ``area``: the attack area once
    revealed; ``hit``: the defender guessed it. ``mods``: each side's power
    modifiers in this attack.
    """

    game: ClassVar[str] = GAME
    sides: ClassVar[tuple[str, ...]] = SIDES
    legend: ClassVar[Legend] = LEGEND

    table: Table
    step: str
    mover: int
    turn: int = 0
    number: int = 0
    cells: tuple[tuple[str, str, bool], ...] = ()
    piles: tuple[Piles, Piles] = (Piles(40, 0, 0, 0), Piles(40, 0, 0, 0))
    gone: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    known: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    used: tuple[str, ...] = ()
    area: str = ""
    hit: bool = False
    mods: tuple[int, int] = (0, 0)
    over: str = ""
    loser: int = -1  # the side that lost; -1 with over set: both decks ran out (a draw)
    options: Options = field(default_factory=Options)
    #: The cards of each hand the host knows (the computer's, read face down on its hand
    #: slots: docs/ai.md, "The computer's hand"); the rest of a hand are unknown.
    held: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())

    def __repr__(self) -> str:
        return f"Position({self.to_text()!r})"

    # ------------------------------------------------------------- reading

    @property
    def to_move(self) -> str:
        return SIDES[self.mover]

    @property
    def card_set(self) -> CardSet:
        """The cards in play (:class:`masume.rules.base.OnCards`: the tracker names a card
        by its tag)."""
        return self.table.card_set

    @property
    def first(self) -> int:
        return SIDES.index(self.options.first)

    @property
    def attacker(self) -> int:
        return self.turn

    @property
    def defender(self) -> int:
        return _other(self.turn)

    @cached_property
    def _at(self) -> dict[str, tuple[str, bool]]:
        return {cell: (copy, up) for cell, copy, up in self.cells}

    def _area(self, side: str, area: str) -> tuple[str, ...]:
        """The places of ``side``'s half of ``area``: the mat's 7, every place in use, and
        one free place more when they are all taken: no cap on a half
        (「ボールカード以外のカードは、どちらのエリアに割り振ってもよい(全部を片方に寄せてもよい)」)."""
        prefix = f"{side}-{area}-"
        used = [area_place(c) for c in self._at if c.startswith(prefix)]
        places = max([AREA_PLACES, *used])
        if sum(1 for n in used if n) >= places:
            places += 1
        return area_cells(side, area, places)

    def _half(self, side: str, area: str) -> tuple[str, ...]:
        return (ball_cell(side, area),) + self._area(side, area)

    def card_at(self, cell: str) -> str | None:
        """The copy id lying on ``cell``, or None."""
        found = self._at.get(cell)
        return found[0] if found else None

    def face_up(self, cell: str) -> bool:
        return self._at.get(cell, ("", False))[1]

    def card(self, copy: str) -> Card:
        return self.table.card(copy)

    @cached_property
    def _pools(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        on_mat = {copy for _, copy, _ in self.cells}
        return tuple(  # type: ignore[return-value]
            tuple(c for c in self.table.decks[s].copies
                  if c not in on_mat and c not in self.gone[s] and c not in self.held[s])
            for s in (0, 1)
        )

    def _hand_cards(self, side: int) -> tuple[str, ...]:
        """The cards ``side`` may play from its hand: those it holds, and while its hand
        holds a card nobody has read, any of its unseen cards."""
        if self.piles[side].hand > len(self.held[side]):
            return self.held[side] + self._pools[side]
        return self.held[side]

    # ---- the hands (masume.rules.base.HoldsHands)

    def hand_size(self, side: str) -> int:
        return self.piles[SIDES.index(side)].hand

    def hand_of(self, side: str) -> tuple[str, ...]:
        return self.held[SIDES.index(side)]

    def drawable(self, side: str) -> tuple[str, ...]:
        return self._pools[SIDES.index(side)]

    def holding(self, side: str, copies: Sequence[str]) -> Position:
        """This position with ``copies`` known as ``side``'s hand.

        >>> from masume.games import load_rules
        >>> p = load_rules("eyeshield21").start()
        >>> p.holding("home", ["F01.1"])
        Traceback (most recent call last):
        ...
        ValueError: home's hand holds 0 cards, not 1
        """
        s = SIDES.index(side)
        copies = tuple(copies)
        if len(copies) > self.piles[s].hand:
            raise ValueError(f"{side}'s hand holds {self.piles[s].hand} cards, not {len(copies)}")
        if len(set(copies)) != len(copies):
            raise ValueError(f"a card read twice in {side}'s hand: {', '.join(copies)}")
        free = set(self._pools[s]) | set(self.held[s])
        for copy in copies:
            if copy not in free:
                raise ValueError(f"{copy} cannot be in {side}'s hand (it is not one of "
                                 f"{side}'s cards nobody has seen)")
        held = list(self.held)
        held[s] = copies
        return replace(self, held=(held[0], held[1]))

    def pool(self, side: str) -> tuple[str, ...]:
        """The side's unseen cards (hand, deck, guts, discards nobody saw), by copy id.

        >>> from masume.games import load_rules
        >>> rules = load_rules("eyeshield21")
        >>> len(rules.start().pool("home"))
        40
        """
        return self._pools[SIDES.index(side)]

    def cards_on(self, cells: tuple[str, ...]) -> list[tuple[str, str]]:
        """(cell, copy) of the cards lying on ``cells``, in their order."""
        return [(cell, self._at[cell][0]) for cell in cells if cell in self._at]

    def free(self, cells: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(c for c in cells if c not in self._at)

    def _field(self, side: int) -> list[tuple[str, str]]:
        """(cell, copy) of the side's characters and combination cards, wherever they lie."""
        name = SIDES[side]
        return [(cell, copy) for cell, copy, _ in self.cells
                if owner_of(cell) == name and self.table.kind(copy) in ("character", "combination")]

    def _names_on_field(self, side: int) -> set[str]:
        return {self.card(copy).name for _, copy in self._field(side)
                if self.table.kind(copy) == "character"}

    def _counted(self, side: int) -> list[tuple[str, str]]:
        """(cell, copy) of the cards whose power counts in this attack (パワー計算)."""
        if not self.area:
            return []
        wanted = self.area if side == self.attacker else "line"
        out = []
        for cell, copy in self.cards_on(self._area(SIDES[side], self.area)):
            card = self.card(copy)
            if (card.kind in ("character", "combination") and self.face_up(cell)
                    and wanted in play_types(card)):
                out.append((cell, copy))
        return out

    def power(self, side: str) -> int:
        """The side's power in this attack: the counted cards, modifiers, lasting reactions.

        Never below 0 (docs: "Readings"). 0 before the attack area is revealed.
        """
        s = SIDES.index(side)
        if not self.area:
            return 0
        total = sum(power_of(self.card(copy)) for _, copy in self._counted(s)) + self.mods[s]
        for owner in (0, 1):
            role = "attack" if owner == self.attacker else "block"
            for cell, copy in self.cards_on(reaction_cells(SIDES[owner])):
                if not (self.face_up(cell) and is_lasting(self.card(copy))):
                    continue
                for ability in abilities_of(self.card(copy)):
                    if ability.when != role:
                        continue
                    if ability.effect == "weaken" and owner != s:
                        total -= ability.amount
                    elif ability.effect == "power" and owner == s:
                        total += ability.amount
                    elif ability.effect == "team-power" and owner == s:
                        total += ability.amount * self._team_count(s, ability.team)
        return max(0, total)

    def _team_count(self, side: int, team: str) -> int:
        return sum(1 for _, copy in self._counted(side) if team_of(self.card(copy)) == team)

    def damage(self) -> int:
        """ダメージ: attack power minus block power, when positive; 0 otherwise."""
        if not self.area:
            return 0
        return max(0, self.power(SIDES[self.attacker]) - self.power(SIDES[self.defender]))

    def refill_limit(self) -> int:
        """ガッツ補充: at most the attacker's characters in the attack area."""
        if not self.area:
            return 0
        cells = self._area(SIDES[self.attacker], self.area)
        return sum(1 for _, copy in self.cards_on(cells)
                   if self.table.kind(copy) == "character")

    # ------------------------------------------------------------- physical mat

    def layout(self) -> dict[str, tuple[str, ...]]:
        """Every card on its cell as ``tag:UID``; non-empty piles as ANY_CARD."""
        out: dict[str, tuple[str, ...]] = {cell: (self.table.piece(copy),)
                                           for cell, copy, _ in self.cells}
        for s, side in enumerate(SIDES):
            for pile, count in (("deck", self.piles[s].deck), ("guts", self.piles[s].guts),
                                ("discard", self.piles[s].discard)):
                if count:
                    out[pile_cell(side, pile)] = (ANY_CARD,)
        return out

    # ------------------------------------------------------------- outcome and status

    def outcome(self) -> Outcome | None:
        if self.step != OVER:
            return None
        score = {side: self.piles[s].deck for s, side in enumerate(SIDES)}
        winner = SIDES[_other(self.loser)] if self.loser >= 0 else None
        return Outcome(winner, self.over, score)

    def status(self) -> Status:
        side = SIDES[self.mover]
        score = {s: self.piles[k].deck for k, s in enumerate(SIDES)}
        highlights: dict[str, tuple[str, ...]] = {}
        if self.step != OVER and self.number:
            highlights["turn"] = (f"turn-{SIDES[self.turn]}",)
            phase = {DRAW: "draw", GUTS: "guts", MAIN: "main"}.get(self.step, "attack")
            highlights["phase"] = (f"phase-{phase}",)
        targets = sorted({a.cell if isinstance(a, Place) else a.to for a in self._legal
                          if isinstance(a, Place) or (isinstance(a, Move) and "-" in a.to)})
        if self.step == SETUP and Call("deal") in self._legal_set:
            targets = [pile_cell(side, "guts")]  # the guts dealt face down: lit where they go
        if targets:
            highlights["place"] = tuple(targets)
        if self.step in (ALLOT, BLOCK):
            highlights["area"] = tuple(c for a in AREAS for c in self._half(side, a))
        elif self.step == GUESS:
            highlights["area"] = tuple(ball_cell(side, a) for a in AREAS)
        elif self.area and self.step in ATTACK_STEPS:
            highlights["area"] = tuple(c for s in SIDES for c in self._half(s, self.area))
        if self.step == DAMAGE:
            highlights["damage"] = (pile_cell(side, "deck"),)
        if self.step == TIDY:
            leaving = sorted({a.frm for a in self._legal if isinstance(a, Move)})
            if leaving:
                highlights["tidy"] = tuple(leaving)
        return Status(to_move=side, score=score, message=self._message(),
                      highlights=highlights)

    def _message(self) -> str:
        side = SIDES[self.mover]
        piles = self.piles[self.mover]
        if self.step == OVER:
            return str(self.outcome())
        if self.step == SETUP:
            placed = len(self.cards_on(character_cells(side)))
            if placed < START_CHARACTERS:
                return (f"{side}: set-up: lay {START_CHARACTERS - placed} more character(s) face "
                        "down")
            n = START_HAND[0 if self.mover == self.first else 1]
            return (f"{side}: set-up: shuffle your deck on {pile_cell(side, 'deck')}, then deal: "
                    f"draw {n} cards into your hand and put {n} guts face down on "
                    f"{pile_cell(side, 'guts')} (lit)")
        if self.step == SHOW:
            return f"{side}: turn every character face up (reveal); {side} begins"
        if self.step == DRAW:
            if self.cards_on(bench_cells(side)):
                return f"{side}, draw phase: benched characters back to the character places"
            return f"{side}, draw phase: draw a card"
        if self.step == GUTS:
            return f"{side}, guts phase: set the top card of the deck as guts"
        if self.step == MAIN:
            return (f"{side}, main phase: characters, reactions, abilities, buy cards "
                    f"({self.options.draw_cost} guts each; {piles.guts} guts), then attack")
        if self.step in (ALLOT, BLOCK):
            left = len(self.cards_on(character_cells(side)))
            what = "attack" if self.step == ALLOT else "block"
            balls = " and both ball cards" if self.step == ALLOT else ""
            if left:
                return (f"{side} to {what}: every character ({left} left){balls} face down to pass "
                        "or run, tactics too; then ready")
            return f"{side} to {what}: tactics face down if any{balls}; then ready"
        if self.step == GUESS:
            return f"{side}: guess the attack: your ball-mark card face up in pass or run"
        if self.step == FLIP:
            return f"{side}: reveal the ball cards and the attack area"
        if self.step == REFILL:
            return f"{side} guessed the {self.area} attack: refill 0-{self._refill_max()} guts"
        if self.step in (PLAY_ATTACK, PLAY_BLOCK):
            return (f"{side}, {self.area} attack: abilities, combination cards, reactions; then "
                    "done "
                    f"(power {self.power(SIDES[self.attacker])} v "
                    f"{self.power(SIDES[self.defender])})")
        if self.step in (TACTICS_ATTACK, TACTICS_BLOCK):
            return (f"{side}, {self.area} attack: use tactics cards; then done "
                    f"(power {self.power(SIDES[self.attacker])} v "
                    f"{self.power(SIDES[self.defender])})")
        if self.step == DAMAGE:
            return (f"{side}: damage {self.damage()}: discard {self.damage()} cards from the top "
                    "of your deck")
        if self.step == CHANGE:
            return (f"{side}: change characters (discard, lay from the hand; at most "
                    f"{FIELD_LIMIT}), then done")
        if self.step == TIDY:
            if next(self._tidy_moves(self.mover), None) is not None:
                also = f" ({SIDES[self.defender]} too)" if self.mover == self.attacker else ""
                return (f"{side}: clear the play areas{also}: characters back, combination and "
                        "unused tactics cards to the hand, ball cards off")
            return (f"{side}: discard {piles.hand - self.options.hand_limit} to keep "
                    f"{self.options.hand_limit} cards in hand")
        return side

    # ------------------------------------------------------------- legal actions

    @cached_property
    def _legal(self) -> tuple[Action, ...]:
        return tuple(dict.fromkeys(self._actions()))

    @cached_property
    def _legal_set(self) -> frozenset[Action]:
        return frozenset(self._legal)

    def legal_actions(self) -> Iterator[Action]:
        return iter(self._legal)

    def is_legal(self, action: object) -> bool:
        return action in self._legal_set

    # ------------------------------------------------------------- footprints

    def footprint(self, action: Action) -> frozenset[str] | None:
        """Where ``action`` may change the mat (:class:`~masume.rules.KnowsFootprints`):
        the cells it lays a card on or takes one from, and the six piles (a count that
        reaches or leaves 0 shows or hides a pile). What ``_after`` and ``_settle`` do
        besides moves only counts piles and turns cards over, which the layout does not
        show. A combination card (its members go to the discard pile) says None."""
        if isinstance(action, Place):
            if self.table.kind(action.copy) == "combination":
                return None
            return _touching(action.cell)
        if isinstance(action, Move):
            return _touching(action.frm, action.to)
        if isinstance(action, Use):
            return _touching(action.cell, action.bench)
        if isinstance(action, Adjust):
            if action.what == "move":
                return _touching(action.card, action.to)
            if action.what == "discard":
                return _touching(*(cell for cell, copy, _ in self.cells if copy == action.card))
        return _touching()

    def actions_changing(self, squares: frozenset[str]) -> Iterator[Action]:
        """The legal actions, in their order, whose footprint holds all of ``squares`` or
        is unknown (:class:`~masume.rules.KnowsFootprints`)."""
        for action in self._legal:
            footprint = self.footprint(action)
            if footprint is None or squares <= footprint:
                yield action

    def _refill_max(self) -> int:
        return min(self.refill_limit(), self.piles[self.defender].deck)

    def _actions(self) -> Iterator[Action]:
        yield from self._rule_actions()
        if self.step not in (SETUP, SHOW, OVER) and self.by_hand():
            yield from self._adjustments()

    def _rule_actions(self) -> Iterator[Action]:
        step, me = self.step, self.mover
        side = SIDES[me]
        hand = self.piles[me].hand
        if step == OVER:
            return
        if step == SETUP:
            placed = self.cards_on(character_cells(side))
            if len(placed) < START_CHARACTERS:
                yield from self._place_characters(me, from_deck=True)
            else:
                yield Call("deal")
        elif step == SHOW:
            yield Call("reveal")
        elif step == DRAW:
            benched = self.cards_on(bench_cells(side))
            for cell, _ in benched:
                for target in self.free(character_cells(side)):
                    yield Move(cell, target)
            if not benched:
                yield Call("draw")
        elif step == GUTS:
            yield Call("guts")
        elif step == MAIN:
            if hand:
                yield from self._place_characters(me)
                for copy in self._hand_of(me, "reaction"):
                    for cell in self.free(reaction_cells(side)):
                        yield Place(copy, cell)
            # 「場のキャラクターカードを捨て場に送る」: the bench is part of 場
            # (「それぞれの場はキャラクターカード置場、ベンチ、パスエリア、ランエリアに大別される」)
            for cell, _ in self.cards_on(character_cells(side) + bench_cells(side)):
                yield Move(cell, "discard")
            yield from self._abilities(me, character_cells(side), "main")
            if self.piles[me].guts >= self.options.draw_cost:
                yield Call("buy")
            yield Call("attack")
        elif step in (ALLOT, BLOCK):
            spots = self.free(self._area(side, "pass") + self._area(side, "run"))
            waiting = self.cards_on(character_cells(side))
            for cell, _ in waiting:
                for target in spots:
                    yield Move(cell, target)
            if hand:  # a half has no last place: the next one opens (see _area)
                for copy in self._hand_of(me, "tactics"):
                    for target in spots:
                        yield Place(copy, target)
            ready = not waiting
            if step == ALLOT:
                ball_spots = self.free(tuple(ball_cell(side, a) for a in AREAS))
                on_mat = {copy for _, copy, _ in self.cells}
                for ball in self.table.balls(me):
                    if ball not in on_mat:
                        ready = False
                        for target in ball_spots:
                            yield Place(ball, target)
            if ready:
                yield READY
        elif step == GUESS:
            marked = self.table.balls(me)[0]
            for area in AREAS:
                yield Place(marked, ball_cell(side, area))
        elif step == FLIP:
            yield Call("reveal")
        elif step == REFILL:
            for n in range(self._refill_max() + 1):
                yield Call("refill", n)
        elif step in (PLAY_ATTACK, PLAY_BLOCK):
            cells = self._area(side, self.area)
            yield from self._abilities(me, cells, "play")
            role = "attack" if step == PLAY_ATTACK else "block"
            for cell, copy in self.cards_on(reaction_cells(side)):
                for n, ability in enumerate(abilities_of(self.card(copy)), 1):
                    if (not self.face_up(cell) and ability.when == role
                            and self._affordable(me, ability)):
                        yield Use(cell, ability=n)
            if hand:
                yield from self._combinations(me)
            yield DONE
        elif step in (TACTICS_ATTACK, TACTICS_BLOCK):
            role = "attack" if step == TACTICS_ATTACK else "block"
            for cell, copy in self.cards_on(self._area(side, self.area)):
                if self.table.kind(copy) != "tactics" or copy in self.used:
                    continue
                for n, ability in enumerate(abilities_of(self.card(copy)), 1):
                    if ability.when in (role, "any") and self._affordable(me, ability):
                        yield Use(cell, ability=n)
            yield DONE
        elif step == DAMAGE:
            yield Call("damage", self.damage())
        elif step == CHANGE:
            for cell, copy in self._field(me):
                if self.table.kind(copy) == "character":
                    yield Move(cell, "discard")
            if hand:
                yield from self._place_characters(me)
            yield DONE
        elif step == TIDY:
            moves = list(self._tidy_moves(me))
            yield from moves
            if not moves:
                over = self.piles[me].hand - self.options.hand_limit
                if me == self.attacker and over > 0:
                    yield Call("discard", over)
            if me == self.attacker:
                # the defender may clear its half at the same time (both players at the table)
                yield from self._tidy_moves(self.defender)

    # ------------------------------------------------------------- by hand

    def by_hand(self) -> tuple[tuple[str, str], ...]:
        """(cell, what it does) of the face-up cards whose abilities the players apply by
        hand (outside the vocabulary, docs/cards.md): while one lies face up, the
        adjustments are legal."""
        out = []
        for cell, copy, up in self.cells:
            if up:
                out += [(cell, text) for text in by_hand_of(self.card(copy))]
        return tuple(out)

    def _adjustments(self) -> Iterator[Adjust]:
        """What a by-hand ability may do, as the players apply it, to either side (an
        ability may concern the opponent): power ±1-ADJUST_POWER in an attack being resolved
        (the damage follows), draw up to ADJUST_POWER of what the deck holds, discard a named
        card (from the mat, or from its owner's hand), move a card on the mat to a free place
        of its owner's. Adjustments add up: the card says how much."""
        if self.area and self.step in ATTACK_STEPS and self.step not in (CHANGE, TIDY):
            for side in SIDES:
                for n in (*range(-ADJUST_POWER, 0), *range(1, ADJUST_POWER + 1)):
                    yield Adjust("power", side, n)
        for s, side in enumerate(SIDES):
            for n in range(1, min(ADJUST_POWER, self.piles[s].deck) + 1):
                yield Adjust("draw", side, n)
        for cell, copy, _ in self.cells:
            if self.table.kind(copy) != "ball":
                yield Adjust("discard", card=copy)
        for s in range(len(SIDES)):
            if self.piles[s].hand:
                for copy in self._hand_cards(s):
                    yield Adjust("discard", card=copy)
        for name in SIDES:
            places = (character_cells(name) + bench_cells(name) + reaction_cells(name)
                      + self._area(name, "pass") + self._area(name, "run"))
            free = self.free(places)
            for cell, copy, _ in self.cells:
                if owner_of(cell) == name and self.table.kind(copy) != "ball":
                    for target in free:
                        yield Adjust("move", card=cell, to=target)

    def _adjust(self, action: Adjust, cells: dict[str, tuple[str, bool]], piles: list[Piles],
                gone: list[list[str]], known: list[list[str]], changes: dict[str, Any]) -> None:
        if action.what == "power":
            mods = list(self.mods)
            mods[SIDES.index(action.side)] += action.amount
            changes["mods"] = tuple(mods)
            return
        if action.what == "draw":
            s = SIDES.index(action.side)
            piles[s] = piles[s]._replace(deck=piles[s].deck - action.amount,
                                         hand=piles[s].hand + action.amount)
            return
        if action.what == "move":
            cells[action.to] = cells.pop(action.card)
            return
        owner = self.table.owner_index(action.card)  # discard
        on_mat = [cell for cell, (copy, _) in cells.items() if copy == action.card]
        if on_mat:
            del cells[on_mat[0]]
        else:
            piles[owner] = piles[owner]._replace(hand=piles[owner].hand - 1)
            if action.card in known[owner]:
                known[owner].remove(action.card)
        gone[owner].append(action.card)
        piles[owner] = piles[owner]._replace(discard=piles[owner].discard + 1)

    def _pool_of(self, side: int, kind: str) -> list[str]:
        """The side's unseen cards of ``kind`` (a deck's cards)."""
        return [c for c in self._pools[side] if self.table.kind(c) == kind]

    def _hand_of(self, side: int, kind: str) -> list[str]:
        """The cards of ``kind`` the side may play from its hand (``_hand_cards``)."""
        return [c for c in self._hand_cards(side) if self.table.kind(c) == kind]

    def _place_characters(self, side: int, from_deck: bool = False) -> Iterator[Place]:
        """Characters from the pool onto free character places (limit 5, unique names)."""
        if len(self._field(side)) >= FIELD_LIMIT:
            return
        names = self._names_on_field(side)
        spots = self.free(character_cells(SIDES[side]))
        cards = self._pool_of(side, "character") if from_deck else self._hand_of(side, "character")
        for copy in cards:
            if self.card(copy).name in names:
                continue  # ユニーク処理: 自軍ユニーク
            for cell in spots:
                yield Place(copy, cell)

    def _affordable(self, side: int, ability: Ability) -> bool:
        return self.piles[side].guts >= ability.cost

    def _abilities(self, side: int, cells: tuple[str, ...], when: str) -> Iterator[Use]:
        """Uses of the characters' abilities on ``cells`` (once a turn each)."""
        wanted = ("line",) if side == self.defender and when == "play" else (self.area,)
        for cell, copy in self.cards_on(cells):
            card = self.card(copy)
            if card.kind != "character" or not self.face_up(cell):
                continue
            if when == "play" and not set(wanted) & set(play_types(card)):
                continue  # プレイタイプが一致するキャラクターだけ
            for n, ability in enumerate(abilities_of(card), 1):
                mark = copy if n == 1 else f"{copy}#{n}"  # once a turn, each ability
                if (ability.when != when or mark in self.used
                        or not self._affordable(side, ability)):
                    continue
                if ability.bench:
                    for bench in self.free(bench_cells(SIDES[side])):
                        yield Use(cell, bench, n)
                else:
                    yield Use(cell, ability=n)

    def _combinations(self, side: int) -> Iterator[Place]:
        """Combination cards whose characters are all in the side's half of the attack area."""
        cells = self._area(SIDES[side], self.area)
        present: dict[str, str] = {}
        for cell, copy in self.cards_on(cells):
            if self.table.kind(copy) == "character" and self.face_up(cell):
                present[self.card(copy).name] = cell
        spots = self.free(cells)
        for copy in self._hand_of(side, "combination"):
            members = members_of(self.card(copy))
            if all(m in present for m in members):
                freed = tuple(present[m] for m in members)
                for cell in sorted(spots + freed, key=cells.index):
                    yield Place(copy, cell)

    def _tidy_left(self, side: int) -> bool:
        """Has ``side`` still cards to clear, or (the attacker) cards over the hand limit?"""
        if next(self._tidy_moves(side), None) is not None:
            return True
        return side == self.attacker and self.piles[side].hand > self.options.hand_limit

    def _tidy_moves(self, side: int) -> Iterator[Move]:
        name = SIDES[side]
        spots = self.free(character_cells(name))
        for area in AREAS:
            for cell, copy in self.cards_on(self._half(name, area)):
                kind = self.table.kind(copy)
                if kind == "character":
                    for target in spots:
                        yield Move(cell, target)
                elif kind == "combination":
                    yield Move(cell, "hand")
                elif kind == "tactics":
                    yield Move(cell, "discard" if copy in self.used else "hand")
                elif kind == "ball":
                    yield Move(cell, "off")
        for cell, copy in self.cards_on(reaction_cells(name)):
            if self.face_up(cell) and not is_lasting(self.card(copy)):
                yield Move(cell, "discard")

    # ------------------------------------------------------------- applying

    def apply(self, action: Action) -> Position:
        """The position after ``action``; IllegalAction says why not."""
        if not self.is_legal(action):
            raise IllegalAction(f"{action}: {self._why_illegal(action)}")
        return self._after(action)._settle()

    def _why_illegal(self, action: object) -> str:
        if self.step == OVER:
            return f"the game is over ({self.outcome()})"
        if isinstance(action, Place):
            if not self.table.owns(action.copy):
                return f"{action.copy} is in neither deck"
            owner = self.table.owner(action.copy)
            if owner != self.to_move:
                return f"{action.copy} is {owner}'s card; it is {self.to_move}'s move"
            if self.card_at(action.cell) is not None:
                return f"{action.cell} is taken"
            if (self.table.kind(action.copy) != "ball"
                    and action.copy not in self._pools[self.mover] + self.held[self.mover]):
                return (f"{action.copy} is not in {owner}'s hand (it lies on the mat or in the "
                        "discard pile)")
            if self.table.kind(action.copy) == "character" and self.step in (MAIN, CHANGE, SETUP):
                if self.card(action.copy).name in self._names_on_field(self.mover):
                    return (f"{self.card(action.copy).name} is on {owner}'s field already (one of "
                            "a name)")
                if len(self._field(self.mover)) >= FIELD_LIMIT:
                    return f"{owner} has {FIELD_LIMIT} characters and combination cards already"
            if (self.table.kind(action.copy) == "combination"
                    and self.step in (PLAY_ATTACK, PLAY_BLOCK)):
                members = ", ".join(members_of(self.card(action.copy)))
                return (f"{self.card(action.copy).name} needs {members} face up in {owner}'s half "
                        f"of the {self.area} area")
        if isinstance(action, Move) and self.card_at(action.frm) is None:
            return f"no card on {action.frm}"
        if isinstance(action, (Place, Move)):
            source = action.copy if isinstance(action, Place) else action.frm
            targets = [a.cell if isinstance(a, Place) else a.to for a in self._legal
                       if (isinstance(a, Place) and a.copy == source)
                       or (isinstance(a, Move) and a.frm == source)]
            if targets:
                return f"{source} may go to {', '.join(targets)} now"
        if isinstance(action, Adjust):
            if not self.by_hand():
                return ("an adjustment applies a by-hand ability: no card with one lies face up "
                        "on the mat")
            return (f"not an adjustment of this moment ({self._message()}): power (1-"
                    f"{ADJUST_POWER} either way, several add up) in an attack being resolved, "
                    f"draw 1-{ADJUST_POWER} from a deck that has the cards, discard a card that is "
                    "on the mat or in its owner's hand, move a card on the mat to a free place "
                    "of its owner's")
        if isinstance(action, Call) and action.word in ("ready",) and self.step in (ALLOT, BLOCK):
            return ("every character must go to the pass or run area first (and both ball cards, "
                    "attacking)")
        if isinstance(action, Call) and action.word == "refill" and self.step == REFILL:
            return (f"refill 0 to {self._refill_max()}: at most the attacker's characters in the "
                    f"{self.area} area")
        if isinstance(action, Call) and action.word in ("damage", "discard"):
            wanted = [str(a) for a in self._legal if isinstance(a, Call) and a.word == action.word]
            if wanted:
                return f"now {wanted[0]}"
        return f"not now ({self._message()})"

    def _with_cells(self, cells: dict[str, tuple[str, bool]]) -> tuple[tuple[str, str, bool], ...]:
        return tuple(sorted((cell, copy, up) for cell, (copy, up) in cells.items()))

    def _after(self, action: Action) -> Position:
        me, step = self.mover, self.step
        cells = dict(self._at)
        piles = list(self.piles)
        gone = [list(g) for g in self.gone]
        known = [list(k) for k in self.known]
        held = [list(h) for h in self.held]
        used = list(self.used)
        changes: dict[str, Any] = {}

        def count(side: int, **delta: int) -> None:
            piles[side] = piles[side]._replace(
                **{k: getattr(piles[side], k) + v for k, v in delta.items()})

        def to_discard(cell: str) -> None:
            copy, _ = cells.pop(cell)
            owner = self.table.owner_index(copy)
            gone[owner].append(copy)
            count(owner, discard=1)

        if isinstance(action, Place):
            kind = self.table.kind(action.copy)
            face_up = not (step in (SETUP, ALLOT, BLOCK) or kind == "reaction")
            if step == GUESS:
                face_up = True  # ブロック時にはボールマークを持つカードのみ…表向きで
            if kind == "combination":  # 記載キャラクターをすべて捨て札とし、入れ替わりで配置
                present = {self.card(c).name: cell for cell, (c, up) in cells.items()
                           if owner_of(cell) == SIDES[me] and area_of(cell) == self.area
                           and self.table.kind(c) == "character" and up}
                for member in members_of(self.card(action.copy)):
                    to_discard(present[member])
            cells[action.cell] = (action.copy, face_up)
            if kind != "ball":
                if step == SETUP:
                    count(me, deck=-1)  # デッキより任意のキャラクターカードを 3枚
                else:
                    count(me, hand=-1)
                    if action.copy in known[me]:
                        known[me].remove(action.copy)
                    if action.copy in held[me]:
                        held[me].remove(action.copy)
            if step == GUESS:
                changes.update(step=FLIP, mover=self.attacker)
        elif isinstance(action, Move) and action.to == "discard":
            to_discard(action.frm)
        elif isinstance(action, Move):
            copy, _ = cells.pop(action.frm)
            owner = self.table.owner_index(copy)
            if action.to == "hand":
                count(owner, hand=1)
                known[owner].append(copy)
            elif action.to == "off":
                pass  # ボールカードは普段はそれぞれの手元に
            else:  # to the play areas face down (相手に内容がわからないよう); back face up
                cells[action.to] = (copy, step not in (ALLOT, BLOCK))
        elif isinstance(action, Adjust):
            self._adjust(action, cells, piles, gone, known, changes)
            if action.what == "discard":
                for h in held:
                    if action.card in h:
                        h.remove(action.card)
        elif isinstance(action, Use):
            copy, _up = cells[action.cell]
            card = self.card(copy)
            ability = abilities_of(card)[action.ability - 1]
            used.append(copy if action.ability == 1 else f"{copy}#{action.ability}")
            if card.kind != "character" and copy not in used:
                used.append(copy)  # a tactics or reaction card is spent by any of them
            if card.kind == "reaction":
                cells[action.cell] = (copy, True)
            if action.bench:  # 特殊能力の発動条件として一時的にベンチに移動する
                del cells[action.cell]
                cells[action.bench] = (copy, True)
            # ガッツ 1枚をデッキの一番上に戻すごとに 1
            count(me, guts=-ability.cost, deck=ability.cost)
            if not (card.kind == "reaction" and is_lasting(card)):  # a lasting one works in power()
                mods = list(self.mods)
                self._effect(me, ability, piles, mods, cells)
                changes["mods"] = tuple(mods)
        else:
            changes.update(self._after_call(action, cells, piles, known, used))
            if action.word == "discard":  # which cards went is not seen: read the slots again
                held[me].clear()
        changes.update(cells=self._with_cells(cells), piles=tuple(piles),
                       gone=tuple(tuple(sorted(g)) for g in gone),
                       known=tuple(tuple(sorted(k)) for k in known),
                       held=(tuple(held[0]), tuple(held[1])))
        changes.setdefault("used", tuple(sorted(used)))
        return replace(self, **changes)

    def _effect(self, side: int, ability: Ability, piles: list[Piles], mods: list[int],
                cells: dict[str, tuple[str, bool]]) -> None:
        """Apply one ability's effect (the vocabulary of docs/rules/eyeshield21.md)."""
        other = _other(side)
        amount = ability.amount
        if ability.effect == "power":
            mods[side] += amount
        elif ability.effect == "weaken":
            mods[other] -= amount
        elif ability.effect == "team-power":
            probe = replace(self, cells=self._with_cells(cells))
            mods[side] += amount * probe._team_count(side, ability.team)
        elif ability.effect == "draw":
            n = min(amount, piles[side].deck)
            piles[side] = piles[side]._replace(deck=piles[side].deck - n, hand=piles[side].hand + n)
        elif ability.effect == "guts":
            n = min(amount, piles[side].deck)
            piles[side] = piles[side]._replace(deck=piles[side].deck - n, guts=piles[side].guts + n)
        elif ability.effect == "mill":
            n = min(amount, piles[other].deck)
            piles[other] = piles[other]._replace(deck=piles[other].deck - n,
                                                 discard=piles[other].discard + n)

    def _after_call(self, action: Call, cells: dict[str, tuple[str, bool]], piles: list[Piles],
                    known: list[list[str]], used: list[str]) -> dict[str, Any]:
        me, step, word = self.mover, self.step, action.word
        n = action.count or 0

        def take(side: int, what: str, k: int) -> None:
            k = min(k, piles[side].deck)
            p = piles[side]
            piles[side] = p._replace(deck=p.deck - k, **{what: getattr(p, what) + k})

        if word == "deal":  # 手札として指定枚数を引く; ガッツ置場に裏向きに配置
            k = START_HAND[0 if me == self.first else 1]
            take(me, "hand", k)
            take(me, "guts", k)
            if me == self.first:
                return {"mover": _other(me)}
            return {"step": SHOW, "mover": self.first}
        if word == "reveal" and step == SHOW:  # キャラクターカードをすべて表向きにする
            for cell, (copy, _) in list(cells.items()):
                cells[cell] = (copy, True)
            # 先攻の 1ターン目はドローフェイズとガッツセットフェイズを飛ばす
            return {"step": MAIN, "mover": self.first, "turn": self.first, "number": 1}
        if word == "draw":
            take(me, "hand", 1)
            return {"step": GUTS}
        if word == "guts":
            take(me, "guts", 1)
            return {"step": MAIN}
        if word == "buy":  # ガッツを消費して、デッキからカードを引き手札に加える
            cost = self.options.draw_cost
            piles[me] = piles[me]._replace(guts=piles[me].guts - cost, deck=piles[me].deck + cost)
            take(me, "hand", 1)
            return {}
        if word == "attack":
            return {"step": ALLOT}
        if word == "ready":
            if step == ALLOT:
                return {"step": BLOCK, "mover": self.defender}
            return {"step": GUESS}
        if word == "reveal":  # ボールカード公開: ボール有りの側が今回のアタックエリア
            attacker = SIDES[self.attacker]
            marked = self.table.balls(self.attacker)[0]
            area = next(a for a in AREAS if cells.get(ball_cell(attacker, a), ("",))[0] == marked)
            for cell, (copy, _) in list(cells.items()):
                if area_of(cell) == area or cell in (ball_cell(attacker, a) for a in AREAS):
                    cells[cell] = (copy, True)
            guess = ball_cell(SIDES[self.defender], area)
            hit = cells.get(guess, ("",))[0] == self.table.balls(self.defender)[0]
            return {"step": REFILL if hit else PLAY_ATTACK, "area": area, "hit": hit,
                    "mover": self.defender if hit else self.attacker}
        if word == "refill":  # 0枚から攻撃側のキャラクターカードの枚数の範囲
            take(me, "guts", n)
            return {"step": PLAY_ATTACK, "mover": self.attacker}
        if word == "done":
            if step == PLAY_ATTACK:
                return {"step": PLAY_BLOCK, "mover": self.defender}
            if step == PLAY_BLOCK:
                return {"step": TACTICS_ATTACK, "mover": self.attacker}
            if step == TACTICS_ATTACK:
                return {"step": TACTICS_BLOCK, "mover": self.defender}
            if step == TACTICS_BLOCK:
                if self.damage() > 0:
                    return {"step": DAMAGE, "mover": self.defender}
                return self._to_change(cells)
            if step == CHANGE:
                mods = list(self.mods)
                for when in ("attack-end", "turn-end"):  # アタックフェイズ終了時 / ターン終了時
                    for side in (self.attacker, self.defender):
                        for cell, (copy, up) in sorted(cells.items()):
                            card = self.card(copy)
                            if not (owner_of(cell) == SIDES[side] and up
                                    and card.kind == "character"):
                                continue
                            for ability in abilities_of(card):
                                if ability.when == when:
                                    self._effect(side, ability, piles, mods, cells)
                return {"step": TIDY, "mover": self.attacker}
        if word == "damage":  # 差分値分だけ防御側のデッキを破棄する
            k = min(n, piles[me].deck)
            piles[me] = piles[me]._replace(deck=piles[me].deck - k, discard=piles[me].discard + k)
            return self._to_change(cells)
        if word == "discard":  # 手札が上限を超えている場合、上限に収まるように捨てる
            piles[me] = piles[me]._replace(hand=piles[me].hand - n, discard=piles[me].discard + n)
            known[me].clear()  # which cards went is not seen
            return {}
        raise AssertionError(f"unhandled {action}")

    def _to_change(self, cells: dict[str, tuple[str, bool]]) -> dict[str, Any]:
        """「ボール無し」のエリアの公開, then the attacker's character change."""
        other = next(a for a in AREAS if a != self.area)
        for cell, (copy, _) in list(cells.items()):
            if area_of(cell) == other:
                cells[cell] = (copy, True)
        return {"step": CHANGE, "mover": self.attacker}

    def _settle(self) -> Position:
        """Deck-out, the end of a side's tidying, and steps with nothing to choose."""
        position = self
        while True:
            empty = [s for s in (0, 1) if position.piles[s].deck == 0]
            if empty and position.number:  # デッキそのものがライフ: 0 枚で負け
                return replace(position, step=OVER, over="deck-out",
                               loser=empty[0] if len(empty) == 1 else -1)
            if position.step == TIDY and not position._tidy_left(position.mover):
                if position.mover == position.attacker:
                    position = replace(position, mover=position.defender)
                else:  # the other side's turn
                    nxt = position.defender
                    position = replace(position, step=DRAW, mover=nxt, turn=nxt,
                                       number=position.number + 1, used=(), area="",
                                       hit=False, mods=(0, 0))
                continue
            if position.step in SKIPPABLE:
                legal = position._legal
                if len(legal) == 1 and legal[0] in (DONE, Call("refill", 0)):
                    position = position._after(legal[0])
                    continue
            return position

    # ------------------------------------------------------------- notation

    def parse_action(self, text: str) -> Action:
        """Read one action; NotationError for bad text, IllegalAction when not legal here."""
        from .notation import parse_notation

        action = parse_notation(text)
        if not self.is_legal(action):
            raise IllegalAction(f"{action!s}: {self._why_illegal(action)}")
        return action

    def notation(self, action: Action) -> str:
        return str(action)

    def _lays_face_down(self, action: Action) -> bool:
        if not isinstance(action, Place):
            return False
        if self.step in (SETUP, ALLOT, BLOCK):
            return True
        return self.table.kind(action.copy) == "reaction"

    def notation_for(self, action: Action, viewer: str | None) -> str:
        """The action as ``viewer`` may read it: a card laid face down is ``?`` to the others.

        >>> from masume.games import load_rules
        >>> rules = load_rules("eyeshield21")
        >>> p = rules.start()
        >>> p.notation_for(Place("F01.1", "home-character-1"), "away")
        '?@home-character-1'
        >>> p.notation_for(Place("F01.1", "home-character-1"), "home")
        'F01.1@home-character-1'

        A character going face down to a play area is not named either:

        >>> allot = rules.from_text(p.to_text().replace("step=setup", "step=allot")
        ...     .replace("cells=-", "cells=home-character-1:F01.1").replace("home=40/", "home=39/"))
        >>> allot.notation_for(Move("home-character-1", "home-run-2"), None)
        '?>home-run-2'
        """
        if self._lays_face_down(action) and viewer != self.to_move:
            return f"?@{action.cell}"  # type: ignore[union-attr]
        if isinstance(action, Move) and self.step in (ALLOT, BLOCK) and viewer != self.to_move:
            return f"?>{action.to}"  # which character went to which area is the bluff
        return str(action)

    # ------------------------------------------------------------- views

    def sample_unseen(self, viewer: str, rng: Random) -> Position:
        """This position with each card ``viewer`` cannot see drawn at random
        (:class:`masume.rules.base.SamplesUnseen`), each keeping its kind: the other side's
        face-down characters and ball cards in the play areas change places among themselves
        (which went where is the bluff; the viewer saw them go), and its other face-down
        cards are drawn from the unseen copies of its deck.

        >>> import random
        >>> from masume.games import load_rules
        >>> p = load_rules("eyeshield21").start()
        >>> p = p.apply(next(iter(p.legal_actions())))
        >>> p.sample_unseen("away", random.Random(1)).seen_by("away") == p.seen_by("away")
        True
        """
        if any(self.held[s] for s, side in enumerate(SIDES) if side != viewer):
            # what the other side holds, the viewer does not know
            mine = SIDES.index(viewer)
            forgot = (self.held[0] if mine == 0 else (), self.held[1] if mine == 1 else ())
            return replace(self, held=forgot).sample_unseen(viewer, rng)
        cells = list(self.cells)
        for side in SIDES:
            if side == viewer:
                continue
            hidden = [k for k, (cell, _, up) in enumerate(cells)
                      if not up and owner_of(cell) == side]
            placed = [k for k in hidden if area_of(cells[k][0])
                      and self.table.kind(cells[k][1]) in ("character", "ball")]
            drawn = [k for k in hidden if k not in placed]
            for kind in ("character", "ball"):
                among = [k for k in placed if self.table.kind(cells[k][1]) == kind]
                copies = sorted(cells[k][1] for k in among)
                rng.shuffle(copies)
                for k, copy in zip(among, copies, strict=True):
                    cells[k] = (cells[k][0], copy, False)
            unseen = sorted({*self.pool(side), *(cells[k][1] for k in drawn)})
            for kind in sorted({self.table.kind(cells[k][1]) for k in drawn}):
                among = [k for k in drawn if self.table.kind(cells[k][1]) == kind]
                copies = rng.sample([c for c in unseen if self.table.kind(c) == kind], len(among))
                for k, copy in zip(among, copies, strict=True):
                    cells[k] = (cells[k][0], copy, False)
        return replace(self, cells=tuple(cells))

    def seen_by(self, viewer: str | None) -> TableView:
        """What ``viewer`` ("home", "away", or None for a spectator) may see."""
        cells: dict[str, tuple[str, ...]] = {}
        for cell, copy, up in self.cells:
            if up:
                cells[cell] = (f"{copy} {label(self.card(copy))}",)
            elif viewer == owner_of(cell):
                cells[cell] = (f"{copy} {label(self.card(copy))}, face down",)
            else:
                cells[cell] = ("face down",)
        panel: list[tuple[str, str]] = []
        for s, side in enumerate(SIDES):
            p = self.piles[s]
            for pile, n in (("deck", p.deck), ("guts", p.guts), ("discard", p.discard)):
                if n:
                    cells[pile_cell(side, pile)] = (f"{pile} ({n})",)
            panel += [(f"{side} deck", str(p.deck)), (f"{side} hand", str(p.hand)),
                      (f"{side} guts", str(p.guts)), (f"{side} discard", str(p.discard))]
        if self.area and self.step in ATTACK_STEPS:
            panel += [("attack area", self.area),
                      ("guess", "right" if self.hit else "wrong"),
                      (f"{SIDES[self.attacker]} attack power",
                       str(self.power(SIDES[self.attacker]))),
                      (f"{SIDES[self.defender]} block power",
                       str(self.power(SIDES[self.defender]))),
                      ("damage", str(self.damage()))]
        hand: tuple[str, ...] = ()
        if viewer in SIDES:
            s = SIDES.index(viewer)
            hand = tuple(f"{c} {label(self.card(c))}" for c in self.known[s] + tuple(
                c for c in self.held[s] if c not in self.known[s]))
        return TableView(viewer, cells, hand, tuple(panel))

    def diagram(self) -> str:
        """A text drawing: each side's zones, face-down cards in brackets.

        >>> from masume.games import load_rules
        >>> rules = load_rules("eyeshield21")
        >>> print(rules.start().diagram().splitlines()[0])
        away: deck 40 hand 0 guts 0 discard 0
        """
        lines = []
        for side in ("away", "home"):
            s = SIDES.index(side)
            p = self.piles[s]
            lines.append(f"{side}: deck {p.deck} hand {p.hand} guts {p.guts} discard {p.discard}")
            for zone, cells in (("characters", character_cells(side)), ("bench", bench_cells(side)),
                                ("reactions", reaction_cells(side)),
                                ("pass", self._half(side, "pass")),
                                ("run", self._half(side, "run"))):
                shown = [(copy if up else f"[{copy}]")
                         for copy, up in (self._at[c] for c in cells if c in self._at)]
                if shown:
                    lines.append(f"  {zone}: {' '.join(shown)}")
        lines.append(self._message())
        return "\n".join(lines)

    # ------------------------------------------------------------- text

    def to_text(self) -> str:
        """The whole position on one line (``RULES.from_text`` reads it back)."""
        opts = self.options
        parts = [f"cards={self.table.name}",
                 f"decks={self.table.deck_ids[0]}/{self.table.deck_ids[1]}",
                 f"first={opts.first}"]
        if opts.draw_cost != Options.draw_cost:
            parts.append(f"draw_cost={opts.draw_cost}")
        if opts.hand_limit != Options.hand_limit:
            parts.append(f"hand_limit={opts.hand_limit}")
        parts += [f"step={self.step}", f"move={SIDES[self.mover]}", f"turn={SIDES[self.turn]}",
                  f"n={self.number}"]
        for s, side in enumerate(SIDES):
            parts.append(f"{side}={'/'.join(str(v) for v in self.piles[s])}")
        parts.append("cells=" + (",".join(f"{cell}:{copy}" + ("" if up else ":down")
                                         for cell, copy, up in self.cells) or "-"))
        for s, side in enumerate(SIDES):
            if self.gone[s]:
                parts.append(f"gone-{side}={','.join(self.gone[s])}")
            if self.known[s]:
                parts.append(f"known-{side}={','.join(self.known[s])}")
        for s, side in enumerate(SIDES):
            if self.held[s]:
                parts.append(f"held-{side}={','.join(self.held[s])}")
        if self.used:
            parts.append(f"used={','.join(self.used)}")
        if self.area:
            parts += [f"area={self.area}", f"hit={int(self.hit)}"]
        if self.mods != (0, 0):
            parts.append(f"mods={self.mods[0]}/{self.mods[1]}")
        if self.over:
            loser = SIDES[self.loser] if self.loser >= 0 else "both"
            parts += [f"over={self.over}", f"loser={loser}"]
        return " ".join(parts)


__all__ = ["STEPS", "Options", "Piles", "Position"]
