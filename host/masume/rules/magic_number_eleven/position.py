"""A moment of a Magic Number Eleven match: the Position and every rule of the turn.

The rules, each with the seed sentence it comes from and the readings chosen,
are in docs/rules/magic-number-eleven.md. The host never knows a person's
synergy hand or the deck's order: a hand is a count, and a card that comes from
a hand or from the deck onto a synergy area is whichever unseen card the reader
reports (the legal actions list every candidate). The computer's hand is known
card by card once its hand slots are read (``held``, ``holding``: docs/ai.md,
"The computer's hand"): its cards are then the only ones it may lay from it.

>>> from masume.games import load_rules
>>> rules = load_rules("magic-number-eleven")
>>> position = rules.start(home_stars="ST01/ST04/ST07", away_stars="ST02/ST05/ST08",
...                        home_bench="H08/H09/H10", away_bench="A08/A09/A10")
>>> position.status().message
'home, first half: player action (place a player or shoot)'
>>> position = position.apply(position.parse_action("H04 H2a"))
>>> position.layout()["H2a"]
('tag:D0000000000004',)
>>> position.status().to_move
'away'
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from operator import attrgetter
from random import Random
from typing import TYPE_CHECKING, Any, ClassVar

from ..base import ANY_CARD, Awaiting, IllegalAction, Legend, Light, Outcome, Status, TableView
from ..card_set import CardSet
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
from .cards import EFFECTS, PlayerCard, is_tackle, player, stars
from .geometry import Symbol, completed_symbols, free_cells, placements

SIDES: tuple[str, str] = ("home", "away")
HOME, AWAY = 0, 1
HAND_LIMIT = 5
MAX_SUBS = 3
BENCH_SIZE = 3
TRACK = 7  # initiative spaces, 1 at home's end
MIDDLE = 4
#: How many synergy cards an attack may use by the attacker's initiative.
ATTACK_CARDS = {"attacking": 3, "normal": 2, "defending": 1}
DEFENCE_CARDS = 2
WONDER = 11  # the magic number
#: The largest power change one by-hand adjustment offers: a menu must end somewhere,
#: and adjustments add up, so a card that says more is recorded in two.
ADJUST_POWER = 10
SHOOTOUT_KICKS = 5
#: Draft rounds: who picks first in each (away, home, away).
DRAFT_FIRST = (AWAY, HOME, AWAY)

# Phases.
DRAFT, BENCH_UP, TEAM, PLAYER, EFFECT, AFTER = "draft", "bench", "team", "player", "effect", "after"
ATTACK, DEFENCE, PK, HALF, SHOOTOUT, OVER = "attack", "defence", "pk", "half", "shootout", "over"
#: Cards to take off the mat: after a judgement, a penalty kick, the end of the first half.
CLEAR = "clear"
PHASES = (DRAFT, BENCH_UP, TEAM, PLAYER, EFFECT, AFTER, ATTACK, DEFENCE, PK, HALF, SHOOTOUT, OVER,
          CLEAR)


@dataclass(frozen=True)
class Options:
    """The named rule options of :meth:`RULES.start <MagicNumberElevenRules.start>`.

    ``cards``: the card set's name (a shipped set or a path). ``first``: who
    starts the first half (the rules: home). ``shootout``: a drawn match goes
    to a penalty shoot-out (the rules: only if both teams agree, so off by
    default). The draft and the bench may be given instead of played:
    ``home_stars``/``away_stars`` (three star ids each, separated by ``/``) and
    ``home_bench``/``away_bench`` (three player ids each).
    """

    cards: str = "magic-number-eleven-demo"
    first: str = "home"
    shootout: bool = False


@dataclass(frozen=True)
class Shot:
    """The shot under way: attacker, shooter's cell ("" for a blind shot), base
    attack, crack, the symbol under the shot token and the kind of shot."""

    attacker: int
    shooter: str
    base: int
    crack: int
    token: str
    kind: str  # normal, power, blind

    def text(self) -> str:
        return f"{self.attacker}:{self.shooter}:{self.base}:{self.crack}:{self.token}:{self.kind}"


def _initiative_state(initiative: int, side: int) -> str:
    """攻勢 / 普通 / 守勢 of ``side`` for the marker on space ``initiative`` (1-7)."""
    advantage = initiative - MIDDLE if side == HOME else MIDDLE - initiative
    if advantage >= 2:
        return "attacking"
    if advantage <= -2:
        return "defending"
    return "normal"


#: People's words for the mat's lamps, piles and side areas (the field's cells are
#: coordinates, "H2b": the notation's own words).
PLACES: dict[str, str] = {
    **{f"initiative-{k}": (f"lamp {k} of {TRACK}: home {_initiative_state(k, HOME)}, "
                           f"away {_initiative_state(k, AWAY)}") for k in range(1, TRACK + 1)},
    **{f"{side}-score-{k}": f"{side}'s goal lamp {k}" for side in SIDES for k in range(1, 6)},
    **{f"turn-{side}": f"{side}'s lamp" for side in SIDES},
    **{f"{side}-{area}-{k}": f"{side}'s {area} {k}" for side in SIDES
       for area in ("bench", "synergy") for k in range(1, 4)},
    **{f"penalty-{side}": f"{side}'s penalty-kick card" for side in SIDES},
    "synergy-deck": "synergy deck",
    "synergy-discard": "synergy discard pile",
}

#: The sides' colours, and how the highlights of ``status()`` show: where the card in
#: play may go (over every other light), the cards to take off, the shooter and the
#: card just placed; the score and turn lamps in their side's colour.
LEGEND = Legend(
    sides={"home": (0, 90, 255), "away": (255, 30, 0)},
    highlights={
        "legal": Light((0, 255, 60), foremost=True, label="where the card may go"),
        "initiative": Light((255, 255, 255)),
        "score": Light(None, label="goals"),
        "turn": Light(None, label="whose turn"),
        "shooter": Light((255, 0, 160), "pulse"),
        "clear": Light((255, 150, 0), "pulse", label="take off"),
        "placed": Light((255, 255, 255), "pulse", label="card just placed"),
    },
    places=PLACES,
)


@dataclass(frozen=True, repr=False)
class Position:
    """A moment of a match. Immutable and hashable; build it with ``RULES.start()``.

    Card fields hold copy ids of the card set; per-side pairs are (home, away).
    """

    game: ClassVar[str] = "magic-number-eleven"
    sides: ClassVar[tuple[str, ...]] = SIDES
    legend: ClassVar[Legend] = LEGEND

    cards: CardSet
    options: Options = field(default_factory=Options)
    phase: str = DRAFT
    half: int = 1
    turn: int = HOME  # whose turn it is (in the draft/bench/half time: who acts)
    additional: bool = False  # this turn is the additional time (アディショナルタイム)
    ran_out: bool = False  # the synergy deck ran out during this turn
    field: tuple[tuple[str, str], ...] = ()  # (reading cell, player id), sorted
    unplaced: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())  # in front of each player
    bench: tuple[tuple[tuple[str, str, bool], ...], ...] = ((), ())  # (cell, id, substituted out)
    subs: tuple[int, int] = (0, 0)
    used: frozenset[str] = frozenset()  # symbols under a turned-over shot token
    initiative: int = MIDDLE
    score: tuple[int, int] = (0, 0)
    hands: tuple[int, int] = (0, 0)  # synergy cards in each hand (counted)
    #: The synergy cards of each hand the host knows (the computer's, read face down on its
    #: hand slots: docs/ai.md, "The computer's hand"); the rest of a hand are unknown.
    held: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    deck: int = 0
    discard_known: frozenset[str] = frozenset()  # discarded cards the host saw
    discard_unknown: int = 0  # discarded cards it did not (from a hand)
    areas: tuple[tuple[tuple[int, str, str], ...], ...] = ((), ())  # (area, id, source)
    #: Link and press symbols the team action may use: completed at the turn's start
    #: (「ターン開始時に既に完成しているシンボルだけが効果を発揮できる」) and counted again
    #: when a player leaves before the team action (see ``do_sub``).
    team_symbols: tuple[int, int] = (0, 0)
    placed: str = ""  # reading cell of the card placed this turn
    shot: Shot | None = None
    penalty: tuple[str, str] = ("", "")  # kick card, save card laid
    stars: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())  # drafted stars
    revealed: tuple[str, ...] = ()  # stars turned up in this draft round, not taken
    boxed: tuple[str, ...] = ()  # stars returned to the box, one per round
    ready: tuple[bool, bool] = (False, False)
    shootout: tuple[str, str] = ("", "")  # kicks of each side: "1" goal, "0" saved
    last: str = ""  # the last shot's result, for the message
    shown: tuple[bool, bool] = (False, False)  # synergy cards turned face up by the judgement
    then: str = ""  # in the clear phase, what follows: "pk", "turn", "shootout" or "half"
    resigned: int = -1
    #: By-hand power adjustments to (home, away) in the shot under way (``adjust``).
    mods: tuple[int, int] = (0, 0)

    @property
    def card_set(self) -> CardSet:
        """The cards in play (:class:`masume.rules.base.OnCards`: the tracker names a card
        by its tag)."""
        return self.cards

    def __repr__(self) -> str:
        return f"Position({self.to_text()!r})"

    # ------------------------------------------------------------- reading

    @property
    def to_move(self) -> str:
        return SIDES[self._mover()]

    def _mover(self) -> int:
        if self.phase == DRAFT:
            first = DRAFT_FIRST[len(self.boxed)]
            picks = len(self.stars[HOME]) + len(self.stars[AWAY]) - 2 * len(self.boxed)
            return first if picks == 0 else 1 - first
        if self.phase == BENCH_UP:
            return HOME if len(self.bench[HOME]) < BENCH_SIZE else AWAY
        if self.phase == HALF:
            return HOME if not self.ready[HOME] else AWAY
        if self.phase == DEFENCE:
            return 1 - self.turn
        if self.phase in (PK, SHOOTOUT):
            return self.turn if not self.penalty[0] else 1 - self.turn
        if self.phase == CLEAR and self.then == "half":
            return HOME
        return self.turn

    def player_card(self, copy_id: str) -> PlayerCard:
        """The game fields of the player card ``copy_id``."""
        players = _cache(self.cards, "players")
        if copy_id not in players:
            players[copy_id] = player(self.cards.copy(copy_id).card)
        found: PlayerCard = players[copy_id]
        return found

    def field_of(self, side: int) -> dict[str, PlayerCard]:
        """Reading cell -> player card, for one side's field."""
        prefix = "HA"[side]
        return {c: self.player_card(i) for c, i in self.field if c[0] == prefix}

    def symbols(self, side: int) -> tuple[Symbol, ...]:
        """``side``'s completed symbols that still count (not under a used token)."""
        every = _symbols(self.cards, self._side_field(side))
        return tuple(s for s in every if s.name not in self.used)

    def _side_field(self, side: int) -> tuple[tuple[str, str], ...]:
        prefix = "HA"[side]
        return tuple(p for p in self.field if p[0][0] == prefix)

    def count(self, side: int, kind: str) -> int:
        return sum(1 for s in self.symbols(side) if s.kind == kind)

    def shot_symbols(self, cell: str) -> tuple[Symbol, ...]:
        """The completed, unused shot symbols of the card read at ``cell``."""
        if not cell:  # no card (the card just placed was substituted out)
            return ()
        side = HOME if cell[0] == "H" else AWAY
        return tuple(s for s in self.symbols(side) if s.kind == "shot" and cell in s.cards)

    def initiative_state(self, side: str) -> str:
        """``attacking``, ``normal`` or ``defending`` (攻勢 / 普通 / 守勢)."""
        return _initiative_state(self.initiative, SIDES.index(side))

    def pool(self) -> tuple[str, ...]:
        """Synergy cards the host cannot see: in a hand (not held), in the deck, or
        discarded unseen."""
        out = ({c for _, c, _ in self.areas[HOME] + self.areas[AWAY]} | self.discard_known
               | set(self.held[HOME]) | set(self.held[AWAY]))
        return tuple(c.id for c in self.cards.copies("synergy") if c.id not in out)

    def _hand_cards(self, side: int) -> tuple[str, ...]:
        """The synergy cards ``side`` may lay from its hand: those it holds, and while its
        hand holds a card nobody has read, any card the host cannot see."""
        if self.hands[side] > len(self.held[side]):
            return self.held[side] + self.pool()
        return self.held[side]

    # ---- the hands (masume.rules.base.HoldsHands)

    def hand_size(self, side: str) -> int:
        return self.hands[SIDES.index(side)]

    def hand_of(self, side: str) -> tuple[str, ...]:
        return self.held[SIDES.index(side)]

    def drawable(self, side: str) -> tuple[str, ...]:
        return self.pool()

    def holding(self, side: str, copies: Sequence[str]) -> Position:
        """This position with ``copies`` (synergy cards) known as ``side``'s hand.

        >>> from masume.games import load_rules
        >>> p = load_rules("magic-number-eleven").start()
        >>> p.holding("away", ["SY01"])
        Traceback (most recent call last):
        ...
        ValueError: away's hand holds 0 synergy cards, not 1
        """
        s = SIDES.index(side)
        copies = tuple(copies)
        if len(copies) > self.hands[s]:
            raise ValueError(f"{side}'s hand holds {self.hands[s]} synergy cards, "
                             f"not {len(copies)}")
        if len(set(copies)) != len(copies):
            raise ValueError(f"a card read twice in {side}'s hand: {', '.join(copies)}")
        free = set(self.pool()) | set(self.held[s])
        for copy_id in copies:
            if copy_id not in free:
                raise ValueError(f"{copy_id} cannot be in {side}'s hand (it is not a synergy "
                                 "card nobody has seen)")
        held = list(self.held)
        held[s] = copies
        return replace(self, held=(held[0], held[1]))

    def attack_total(self) -> int:
        if self.shot is None:
            return 0
        cards = self.areas[self.shot.attacker]
        return max(0, self.shot.base + sum(_stars(self.cards, c) for _, c, _ in cards)
                   + self.mods[self.shot.attacker])

    def defence_base(self) -> int:
        """The defender's base defence for the shot under way (crack and power shot applied)."""
        if self.shot is None:
            return 0
        if self.shot.kind == "power":
            return 0
        return max(0, self.count(1 - self.shot.attacker, "defence") - self.shot.crack)

    def defence_total(self) -> int:
        if self.shot is None:
            return 0
        return max(0, self.defence_base() + sum(
            _stars(self.cards, c) for _, c, _ in self.areas[1 - self.shot.attacker])
            + self.mods[1 - self.shot.attacker])

    # ------------------------------------------------------------- layout

    def layout(self) -> dict[str, tuple[str, ...]]:
        """Cell -> cards lying there (``tag:UID``); a deck or discard pile is ``tag:*``.

        >>> from masume.games import load_rules
        >>> rules = load_rules("magic-number-eleven")
        >>> rules.start().layout()
        {'synergy-deck': ('tag:*',)}
        """
        out: dict[str, tuple[str, ...]] = {}
        def piece(copy_id: str) -> str:
            return self.cards.copy(copy_id).piece

        for cell, copy_id in self.field:
            out[cell] = (piece(copy_id),)
        for side in (HOME, AWAY):
            for cell, copy_id, _ in self.bench[side]:
                out[cell] = (piece(copy_id),)
            for area, copy_id, _ in self.areas[side]:
                out[f"{SIDES[side]}-synergy-{area}"] = (piece(copy_id),)
        if self.deck:
            out["synergy-deck"] = (ANY_CARD,)
        if self.discard_known or self.discard_unknown:
            out["synergy-discard"] = (ANY_CARD,)
        for k, copy_id in enumerate(self.penalty):
            if copy_id:
                out[f"penalty-{SIDES[self.turn if k == 0 else 1 - self.turn]}"] = (piece(copy_id),)
        return out

    # ------------------------------------------------------------- outcome, status

    def outcome(self) -> Outcome | None:
        score = {SIDES[0]: self.score[0], SIDES[1]: self.score[1]}
        if self.resigned >= 0:
            return Outcome(SIDES[1 - self.resigned], "resignation", score)
        if self.phase != OVER:
            return None
        if self.score[HOME] != self.score[AWAY]:
            winner = HOME if self.score[HOME] > self.score[AWAY] else AWAY
            return Outcome(SIDES[winner], "goals", score)
        kicks = [k.count("1") for k in self.shootout]
        if kicks[HOME] != kicks[AWAY]:
            return Outcome(SIDES[HOME if kicks[HOME] > kicks[AWAY] else AWAY], "shoot-out", score)
        return Outcome(None, "full time", score)

    def status(self) -> Status:
        """Whose action, what the rules wait for, the score and the cells to light.

        >>> from masume.games import load_rules
        >>> rules = load_rules("magic-number-eleven")
        >>> rules.start().status().message
        'away, star draft round 1: reveal a star'
        """
        who = self.to_move
        score = {SIDES[0]: self.score[0], SIDES[1]: self.score[1]}
        highlights: dict[str, tuple[str, ...]] = {
            "initiative": (f"initiative-{self.initiative}",),
            "score": tuple(f"{SIDES[s]}-score-{k}" for s in (HOME, AWAY)
                           for k in range(1, min(self.score[s], 5) + 1)),
        }
        outcome = self.outcome()
        if outcome is not None:
            message = f"{outcome}, {self.score[HOME]}-{self.score[AWAY]}"
            if self.shootout != ("", ""):
                message += (f" (shoot-out {self.shootout[HOME].count('1')}-"
                            f"{self.shootout[AWAY].count('1')})")
            return Status(who, 1, 1, score, None, message, highlights)
        highlights["turn"] = (f"turn-{who}",)
        legal = self._legal_cells()
        if legal:
            highlights["legal"] = legal
        if self.shot is not None and self.shot.shooter:
            highlights["shooter"] = (self.shot.shooter,)
        if self.phase == CLEAR:  # what the players take off the mat now
            wanted = ("H", "A") if self.then == "half" else ("home-synergy", "away-synergy",
                                                             "penalty-")
            highlights["clear"] = tuple(sorted(c for c in self.layout() if c.startswith(wanted)))
        if self.placed and self.phase in (EFFECT, AFTER):
            highlights["placed"] = (self.placed,)
        awaiting: Awaiting | None = ("reveal" if self.phase == DRAFT and self._draft_revealing()
                                     else None)
        message = f"{who}, {self._half_name()}: {self._doing()}"
        if self.last and self.phase in (TEAM, PLAYER, PK, HALF, SHOOTOUT, CLEAR):
            message = f"{self.last}; {message}"
        return Status(who, 1, 1, score, awaiting, message, highlights)

    def _half_name(self) -> str:
        if self.phase in (DRAFT, BENCH_UP):
            return f"star draft round {len(self.boxed) + 1}" if self.phase == DRAFT else "set-up"
        if self.phase == HALF:
            return "half time"
        if self.phase == SHOOTOUT:
            return "penalty shoot-out"
        name = "first half" if self.half == 1 else "second half"
        return f"{name}, additional time" if self.additional else name

    def _doing(self) -> str:
        phase = self.phase
        if phase == DRAFT:
            return "reveal a star" if self._draft_revealing() else \
                "pick a star (" + ", ".join(self.revealed) + ")"
        if phase == BENCH_UP:
            side = self._mover()
            return f"put a substitute on {SIDES[side]}-bench-{len(self.bench[side]) + 1}"
        if phase == TEAM:
            return "team action (link or press)"
        if phase == PLAYER:
            return "player action (place a player or shoot)"
        if phase == EFFECT:
            card = self.player_card(dict(self.field)[self.placed])
            return f"instant effect of {card.id}: {EFFECTS[card.effect]}, or no effect"
        if phase == AFTER:
            return "shoot with the placed player, or end the turn"
        if phase == ATTACK:
            area = len(self.areas[self.turn]) + 1
            source = "from the deck" if area == 1 else "from the hand, or done"
            return f"attack {self.attack_total()}: synergy card {source} on synergy area {area}"
        if phase == DEFENCE:
            area = len(self.areas[1 - self.turn]) + 1
            source = "from the deck" if area == 1 else "from the hand or the deck, or done"
            return f"defence: synergy card {source} on synergy area {area}"
        if phase == PK:
            return "penalty kick: the kicker lays a kick card" if not self.penalty[0] else \
                "penalty kick: the keeper lays a save card"
        if phase == HALF:
            return "substitutions, then ready"
        if phase == CLEAR:
            if self.then == "half":
                return "half time: take the players off the field and shuffle every synergy card " \
                       "into the deck, then clear"
            if self.penalty[1]:
                return "the penalty-kick cards go back to their pile; clear"
            return "the synergy cards go to the discard pile; clear"
        if phase == SHOOTOUT:
            return "lay a kick card" if not self.penalty[0] else "lay a save card"
        return ""

    def _legal_cells(self) -> tuple[str, ...]:
        cells: set[str] = set()
        for action in self.legal_actions():
            if isinstance(action, Place):
                cells.add(action.cell)
            elif isinstance(action, Synergy):
                side = self._mover()
                cells.add(f"{SIDES[side]}-synergy-{action.area}")
            elif isinstance(action, Penalty):
                cells.add(f"penalty-{self.to_move}")
            elif isinstance(action, Bench):
                side = self._mover()
                cells.add(f"{SIDES[side]}-bench-{len(self.bench[side]) + 1}")
        return tuple(sorted(cells))

    def _draft_revealing(self) -> bool:
        picks = len(self.stars[HOME]) + len(self.stars[AWAY]) - 2 * len(self.boxed)
        return len(self.revealed) + picks < 3

    # ------------------------------------------------------------- legal actions

    @cached_property
    def _legal(self) -> tuple[Action, ...]:
        if self.resigned >= 0 or self.phase == OVER:
            return ()
        actions = getattr(self, f"_actions_{self.phase}")()
        if self.phase not in (DRAFT, BENCH_UP) and self.by_hand():
            actions = (*actions, *self._adjustments())
        return tuple(dict.fromkeys(actions))

    def by_hand(self) -> tuple[tuple[str, str], ...]:
        """(cell, what it does) of the field's cards with an effect outside the vocabulary
        (docs/cards.md, "by hand"): while one lies there, the adjustments are legal."""
        return tuple((cell, self.player_card(c).by_hand) for cell, c in self.field
                     if self.player_card(c).by_hand)

    def _adjustments(self) -> Iterator[Action]:
        """What a by-hand effect may do, applied by the players, to either side (the effect
        may concern the opponent): power ±1-ADJUST_POWER in the shot under way, draw within
        the hand of five and the cards left, discard from a hand what it holds, press the
        track's length; discard a named synergy card lying on a synergy area; move a player
        card of the field to free cells of its own field (not off it: a card lifted a moment
        is no action). Adjustments add up: the card says how much."""
        for side in (HOME, AWAY):
            name = SIDES[side]
            if self.shot is not None and self.phase in (ATTACK, DEFENCE):
                for n in (*range(-ADJUST_POWER, 0), *range(1, ADJUST_POWER + 1)):
                    yield Adjust("power", name, n)
            for n in range(1, min(HAND_LIMIT - self.hands[side],
                                  self.deck + self._discard_size()) + 1):
                yield Adjust("draw", name, n)
            for n in range(1, self.hands[side] + 1):
                yield Adjust("discard", name, n)
            if self._may_press(side, 1):
                for n in range(1, TRACK):
                    yield Adjust("press", name, n)
        for side in (HOME, AWAY):
            for _, copy_id, _ in self.areas[side]:
                yield Adjust("discard", card=copy_id)
        for side in (HOME, AWAY):
            own = self.field_of(side)
            for cell in own:
                others = {c: p for c, p in own.items() if c != cell}
                for target in free_cells(others, SIDES[side]):
                    if target != cell:
                        yield Adjust("move", card=cell, to=target)

    def legal_actions(self) -> Iterator[Action]:
        """Every legal action, each once (cards from unseen pools: every candidate)."""
        return iter(self._legal)

    def is_legal(self, action: object) -> bool:
        try:
            return action in self._legal_set
        except TypeError:
            return False

    @cached_property
    def _legal_set(self) -> frozenset[Action]:
        return frozenset(self._legal)

    def _actions_draft(self) -> Iterator[Action]:
        if self._draft_revealing():
            taken = set(self.revealed) | set(self.boxed) | set(self.stars[0]) | set(self.stars[1])
            for copy in self.cards.copies("player"):
                if copy.card.get("team") == "star" and copy.id not in taken:
                    yield Reveal(copy.id)
        else:
            for copy_id in self.revealed:
                yield Pick(copy_id)

    def _actions_bench(self) -> Iterator[Action]:
        side = self._mover()
        for copy_id in self.unplaced[side]:
            yield Bench(copy_id)

    def _actions_team(self) -> Iterator[Action]:
        yield from self._team_actions()
        yield from self._subs()

    def _team_actions(self) -> list[Action]:
        """The team actions proper of the team phase: links and the press (not the
        substitutions, nor the by-hand adjustments, also legal then)."""
        side = self.turn
        actions: list[Action] = [Link(n) for n in range(1, self._link_max(side) + 1)]
        if self._may_press(side, self.team_symbols[1]):
            actions.append(Press())
        return actions

    def _actions_player(self) -> Iterator[Action]:
        side = self.turn
        found = False
        own = self.field_of(side)
        for copy_id in self.unplaced[side]:
            for cell in placements(own, self.player_card(copy_id), SIDES[side]):
                found = True
                yield Place(copy_id, cell)
        for cell, _ in self._side_field(side):
            for symbol in self.shot_symbols(cell):
                found = True
                yield Shoot(cell, symbol.name)
        if not found:
            yield Shoot(kind="blind")
        yield from self._subs()

    def _actions_effect(self) -> Iterator[Action]:
        card = self.player_card(dict(self.field)[self.placed])
        if card.effect == "power-shot":
            tokens = self.shot_symbols(self.placed)
            for symbol in tokens:
                yield Shoot(self.placed, symbol.name, "power")
            if not tokens:
                yield Shoot(self.placed, "", "power")
        else:
            yield Effect(True)
        yield Effect(False)
        yield from self._subs()

    def _actions_after(self) -> Iterator[Action]:
        for symbol in self.shot_symbols(self.placed):
            yield Shoot(self.placed, symbol.name)
        yield EndTurn()
        yield from self._subs()

    def _actions_attack(self) -> Iterator[Action]:
        area = len(self.areas[self.turn]) + 1
        if area == 1:
            for copy_id in self.pool():
                yield Synergy(copy_id, 1, "deck")
        else:
            for copy_id in self._hand_cards(self.turn):
                yield Synergy(copy_id, area, "hand")
            yield Done()
        yield from self._subs()

    def _actions_defence(self) -> Iterator[Action]:
        side = 1 - self.turn
        area = len(self.areas[side]) + 1
        if area == 1:
            for copy_id in self.pool():
                yield Synergy(copy_id, 1, "deck")
        else:
            if self.hands[side]:
                for copy_id in self._hand_cards(side):
                    yield Synergy(copy_id, 2, "hand")
            if self._drawable():
                for copy_id in self.pool():
                    yield Synergy(copy_id, 2, "deck")
            yield Done()
        yield from self._subs()  # the attacker's: the defence is within its turn

    def _actions_pk(self) -> Iterator[Action]:
        role = "kick" if not self.penalty[0] else "save"
        for copy in self.cards.copies("penalty"):
            if copy.card.get("role") == role:
                yield Penalty(role, copy.id)
        if self.phase == PK:  # the kicker's turn goes on until the judgement is over
            yield from self._subs()

    _actions_shootout = _actions_pk

    def _actions_clear(self) -> Iterator[Action]:
        yield Clear()
        if self.then == "pk":  # a tackle's judgement is over only after its penalty kick
            yield from self._subs()

    def _actions_half(self) -> Iterator[Action]:
        yield Ready()
        yield from self._subs()

    def _sub_side(self) -> int:
        """Whose substitutions are offered: at half time the side to act, else the side
        whose turn it is, through all of it (「自分のターン中いつでも」): the opponent's
        defence and a penalty kick are part of the turn (「得点判定が全部終わるとターンが
        終了する」), though the other side places its cards then."""
        return self._mover() if self.phase == HALF else self.turn

    def _subs(self) -> Iterator[Action]:
        """「選手交代は自分のターン中いつでも、そしてハーフタイムで行える」: any of one's
        own players, on the field (the card just placed too) or not yet placed, for a
        face-up bench card, at most 3 a match (「最大3回まで」)."""
        side = self._sub_side()
        if self.subs[side] >= MAX_SUBS:
            return
        incoming = [copy_id for _, copy_id, out in self.bench[side] if not out]
        if not incoming:
            return
        going = [c for _, c in self._side_field(side)] + list(self.unplaced[side])
        for out in going:
            for into in incoming:
                yield Sub(out, into)

    def _link_max(self, side: int) -> int:
        return max(0, min(self.team_symbols[0], HAND_LIMIT - self.hands[side],
                          self.deck + self._discard_size()))

    def _may_press(self, side: int, amount: int) -> bool:
        far_end = TRACK if side == HOME else 1
        return amount > 0 and self.initiative != far_end

    def _discard_size(self) -> int:
        return len(self.discard_known) + self.discard_unknown

    def _drawable(self) -> bool:
        return self.deck + self._discard_size() > 0

    def _effect_applies(self, card: PlayerCard, side: int) -> bool:
        effect = card.effect
        if effect in ("press-1", "press-2"):
            return self._may_press(side, 1)
        if effect in ("draw", "draw2-keep1"):
            return self.hands[side] < HAND_LIMIT and self._drawable()
        if effect == "discard-opponent":
            return self.hands[1 - side] > 0
        return effect == "power-shot"

    # ------------------------------------------------------------- applying

    def apply(self, action: Action) -> Position:
        """The position after ``action``; IllegalAction says why not."""
        if not self.is_legal(action):
            raise IllegalAction(f"{action}: {self._why_illegal(action)}")
        s = _State(self)
        getattr(s, f"do_{type(action).__name__.lower()}")(action)
        return s.settle()

    def _why_illegal(self, action: object) -> str:
        if self.outcome() is not None:
            return f"the game is over ({self.outcome()})"
        legal = self._legal
        kinds = {type(a) for a in legal}
        if type(action) not in kinds:
            return f"not now: {self._half_name()}, {self.to_move}'s {self._doing()}"
        if isinstance(action, Place):
            if action.card not in self.unplaced[self.turn]:
                return f"{action.card} is not a player of {self.to_move} waiting to be placed"
            cells = [a.cell for a in legal if isinstance(a, Place) and a.card == action.card]
            if not cells:
                return f"{action.card} has no free place on the rows its position allows"
            return f"{action.card} may go on {', '.join(cells)} (its rows, two free cells, " \
                   "the front row only next to another card)"
        if isinstance(action, Link):
            return f"link draws 1 to {self._link_max(self.turn)} cards here (link symbols, " \
                   f"hand of {HAND_LIMIT})"
        if isinstance(action, Shoot):
            return self._shot_problem(action)
        if isinstance(action, Synergy):
            return self._synergy_problem(action)
        if isinstance(action, Sub):
            return self._sub_problem(action)
        if isinstance(action, Adjust):
            if not self.by_hand():
                return "an adjustment applies a by-hand effect: no such card lies on the field"
            return ("power only in a shot under way; draw within the hand of five and the cards "
                    "left; discard what the hand holds, or a synergy card lying on an area; press "
                    f"while the marker can move (1-{TRACK - 1}); power 1-{ADJUST_POWER} either "
                    "way, several add up; move a player card of the field to free cells of its "
                    "own field")
        return "not allowed here"

    def _sub_problem(self, action: Sub) -> str:
        side = self._sub_side()
        name = SIDES[side]
        if self.subs[side] >= MAX_SUBS:
            return f"{name} has made its {MAX_SUBS} substitutions"
        own = [c for _, c in self._side_field(side)] + list(self.unplaced[side])
        if action.out not in own:
            return f"{action.out} is not a player of {name} on the field or in front " \
                   "of them"
        bench = {c: out for _, c, out in self.bench[side]}
        if action.into not in bench:
            return f"{action.into} is not on {name}'s bench"
        return f"{action.into} was substituted out: he cannot come back (「一度交代アウトされた" \
               "選手は試合が終わるまで投入できない」)"

    def _shot_problem(self, action: Shoot) -> str:
        if action.kind == "blind":
            return "a shot without base attack only when no card can be placed and none can shoot"
        if action.kind == "power" and self.phase != EFFECT:
            return "a power shot is the instant effect of the card just placed"
        if self.phase in (EFFECT, AFTER) and action.cell != self.placed:
            return f"only the player placed this turn ({self.placed}) may shoot now"
        if action.cell not in dict(self._side_field(self.turn)):
            return f"no player of {SIDES[self.turn]} is read at {action.cell}"
        tokens = [s.name for s in self.shot_symbols(action.cell)]
        if not tokens:
            return f"the player at {action.cell} has no completed shot symbol left"
        return f"the shot token goes on one of {action.cell}'s shot symbols: {', '.join(tokens)}"

    def _synergy_problem(self, action: Synergy) -> str:
        side = self._mover()
        if action.card not in self.pool() + self.held[side]:
            return f"{action.card} is not an unseen synergy card " \
                   "(it lies on the mat, was discarded or is in the other hand)"
        if action.source == "deck" and action.card in self.held[side]:
            return f"{action.card} is in {SIDES[side]}'s hand, not the deck"
        if action.source == "hand" and action.card not in self._hand_cards(side):
            return f"{action.card} is not in {SIDES[side]}'s hand (its cards are read)"
        expected = len(self.areas[side]) + 1
        if self.phase == ATTACK:
            state = self.initiative_state(SIDES[side])
            if action.area > ATTACK_CARDS[state]:
                return f"{SIDES[side]}'s initiative is {state}: synergy areas 1-" \
                       f"{ATTACK_CARDS[state]} only"
        elif action.area > DEFENCE_CARDS:
            return f"the defence uses synergy areas 1 and {DEFENCE_CARDS} only"
        if action.area != expected:
            return f"the next card goes on synergy area {expected}"
        if expected == 1:
            return "the first card comes from the deck, unseen"
        if action.source == "hand" and not self.hands[side]:
            return f"{SIDES[side]} has no synergy card in hand"
        return "in attack, the cards after the first come from the hand"

    # ------------------------------------------------------------- notation

    def parse_action(self, text: str) -> Action:
        from .notation import parse

        action = parse(text)
        if not self.is_legal(action):
            raise IllegalAction(f"{text.strip()}: {self._why_illegal(action)}")
        return action

    def notation(self, action: Action) -> str:
        return str(action)

    def notation_for(self, action: Action, viewer: str | None) -> str:
        """The action as ``viewer`` may read it: the other side's synergy cards and kick
        card, laid face down, unnamed (``hand card on 2``)."""
        hidden = isinstance(action, Synergy) or (
            isinstance(action, Penalty) and action.role == "kick")
        if hidden and viewer != self.to_move:  # a save card is turned up with the kick card
            from .notation import redacted

            return redacted(action)
        return str(action)

    # ------------------------------------------------------------- views

    def sample_unseen(self, viewer: str, rng: Random) -> Position:
        """This position with each card ``viewer`` cannot see drawn at random
        (:class:`masume.rules.base.SamplesUnseen`): the other side's face-down synergy
        cards from the synergy cards nobody has seen, its face-down penalty card from the
        penalty cards of the same role.

        >>> import random
        >>> from masume.games import load_rules
        >>> p = load_rules("magic-number-eleven").start()
        >>> p.sample_unseen("home", random.Random(1)) == p
        True
        """
        other = 1 - SIDES.index(viewer)
        if self.held[other]:  # what the other side holds, the viewer does not know
            held = list(self.held)
            held[other] = ()
            return replace(self, held=(held[0], held[1])).sample_unseen(viewer, rng)
        areas = list(self.areas)
        if not self.shown[other] and self.areas[other]:
            hidden = self.areas[other]
            unseen = sorted({*self.pool(), *(copy for _, copy, _ in hidden)})
            drawn = rng.sample(unseen, len(hidden))
            areas[other] = tuple((area, copy, source)
                                 for (area, _, source), copy in zip(hidden, drawn, strict=True))
        penalty = list(self.penalty)
        k = 0 if self.turn == other else 1  # the kicker's card first, then the keeper's
        if penalty[k] and not all(penalty):
            role = self.cards.copy(penalty[k]).card.get("role")
            penalty[k] = rng.choice(sorted(c.id for c in self.cards.copies("penalty")
                                           if c.card.get("role") == role))
        return replace(self, areas=(areas[0], areas[1]), penalty=(penalty[0], penalty[1]))

    def seen_by(self, viewer: str | None) -> TableView:
        """What ``viewer`` ("home", "away", or None for a spectator) may see."""
        cells: dict[str, tuple[str, ...]] = {}
        def label(copy_id: str) -> str:
            return f"{copy_id} {self.cards.copy(copy_id).card.name}"

        for cell, copy_id in self.field:
            cells[cell] = (self.player_card(copy_id).label,)
        for side in (HOME, AWAY):
            for cell, copy_id, out in self.bench[side]:
                text = self.player_card(copy_id).label
                cells[cell] = (text + " (substituted out)" if out else text,)
            for area, copy_id, _ in self.areas[side]:
                seen = viewer == SIDES[side] or self.shown[side]
                cells[f"{SIDES[side]}-synergy-{area}"] = (label(copy_id) if seen else "face down",)
        if self.deck:
            cells["synergy-deck"] = (f"deck ({self.deck})",)
        if self._discard_size():
            cells["synergy-discard"] = (f"discard ({self._discard_size()})",)
        for k, copy_id in enumerate(self.penalty):
            if copy_id:
                owner = SIDES[self.turn if k == 0 else 1 - self.turn]
                seen = viewer == owner or all(self.penalty)
                cells[f"penalty-{owner}"] = (label(copy_id) if seen else "face down",)
        hand: tuple[str, ...] = ()
        if viewer in SIDES:
            side = SIDES.index(viewer)
            hand = tuple(self.player_card(c).label for c in self.unplaced[side])
            hand += tuple(f"{c} {self.cards.copy(c).card.name}" for c in self.held[side])
        return TableView(viewer, cells, hand, self._panel(viewer))

    def _panel(self, viewer: str | None) -> tuple[tuple[str, str], ...]:
        lines = [("score", f"home {self.score[HOME]} - {self.score[AWAY]} away"),
                 ("time", self._half_name())]
        if self.phase not in (DRAFT, BENCH_UP):
            lines.append(("initiative", (f"home {self.initiative_state('home')}, "
                                        f"away {self.initiative_state('away')}")))
        for side in (HOME, AWAY):
            name = SIDES[side]
            counts = [f"{kind} {self.count(side, kind)}"
                      for kind in ("shot", "defence", "link", "press", "crack")]
            lines.append((f"{name} symbols", ", ".join(counts)))
            lines.append((f"{name} hand", f"{self.hands[side]} synergy cards"))
            lines.append((f"{name} substitutions", f"{self.subs[side]} of {MAX_SUBS}"))
            if self.stars[side] and self.phase == DRAFT:
                lines.append((f"{name} stars", ", ".join(self.stars[side])))
        if self.revealed:
            labels = (self.player_card(c).label for c in self.revealed)
            lines.append(("revealed stars", ", ".join(labels)))
        lines.append(("deck", f"{self.deck} cards, discard {self._discard_size()}"))
        if self.shot is not None:
            attacker = self.shot.attacker
            cards = self.areas[attacker]
            if viewer == SIDES[attacker]:
                attack = f"{self.attack_total()} ({self.shot.base} base + " \
                         f"{self.attack_total() - self.shot.base} stars)"
            else:
                attack = f"{self.shot.base} base + {len(cards)} face-down cards"
            lines.append(("attack", attack))
            base = self.defence_base()
            defender = 1 - attacker
            note = " (power shot: base ignored)" if self.shot.kind == "power" else \
                f" (crack {self.shot.crack})" if self.shot.crack else ""
            if viewer == SIDES[defender]:
                defence = f"{self.defence_total()} ({base} base{note} + " \
                          f"{self.defence_total() - base} stars)"
            else:
                defence = f"{base} base{note} + {len(self.areas[defender])} face-down cards"
            lines.append(("defence", defence))
        if self.shootout != ("", ""):
            lines.append(("shoot-out", f"home {self.shootout[HOME]} - away {self.shootout[AWAY]}"))
        if self.last:
            lines.append(("last shot", self.last))
        return tuple(lines)

    # ------------------------------------------------------------- text

    def to_text(self) -> str:
        """The whole position on one line; ``RULES.from_text`` reads it back."""
        from .notation import write
        return write(self)

    def diagram(self) -> str:
        """The mat's two fields as seen from home's seat (away's columns run f to a).

        >>> from masume.games import load_rules
        >>> rules = load_rules("magic-number-eleven")
        >>> print(rules.start().diagram().splitlines()[4])
        ------------------------------
        """
        by_cell = dict(self.field)
        rows = []
        for side, order in ((AWAY, (4, 3, 2, 1)), (HOME, (1, 2, 3, 4))):
            prefix = "HA"[side]
            columns = "abcdef" if side == HOME else "fedcba"
            for row in order:
                owner: list[str] = []
                for column in columns:
                    here = f"{prefix}{row}{column}"
                    k = "abcdef".index(column)
                    left = f"{prefix}{row}{'abcdef'[k - 1]}" if k else ""
                    owner.append(by_cell.get(here) or by_cell.get(left) or "")
                line, k = [], 0
                while k < 6:
                    if owner[k] and k + 1 < 6 and owner[k + 1] == owner[k]:
                        line.append(f"[{owner[k]:^7}]")
                        k += 2
                    else:
                        line.append(" .  ")
                        k += 1
                rows.append(f"{prefix}{row} " + "".join(line))
            if side == AWAY:
                rows.append("-" * 30)
        rows.append(f"score {self.score[HOME]}-{self.score[AWAY]}  initiative {self.initiative}/7  "
                    f"hands {self.hands[HOME]}/{self.hands[AWAY]}  deck {self.deck}")
        rows.append(self.status().message)
        return "\n".join(rows)


# ----------------------------------------------------------------- helpers

def _cache(cards: CardSet, name: str) -> dict[Any, Any]:
    """A cache kept on the card set object itself (freed with it, never shared by two sets)."""
    cache: dict[Any, Any] = cards.__dict__.setdefault(f"_mne_{name}", {})
    return cache


def _symbols(cards: CardSet, side_field: tuple[tuple[str, str], ...]) -> tuple[Symbol, ...]:
    """The completed symbols of one side's field, computed once per arrangement."""
    cache = _cache(cards, "symbols")
    found = cache.get(side_field)
    if found is None:
        if len(cache) > 20000:
            cache.clear()
        players = _cache(cards, "players")
        field = {}
        for cell, copy_id in side_field:
            if copy_id not in players:
                players[copy_id] = player(cards.copy(copy_id).card)
            field[cell] = players[copy_id]
        found = cache[side_field] = completed_symbols(field)
    return found


def _stars(cards: CardSet, copy_id: str) -> int:
    return stars(cards.copy(copy_id).card)


#: Position's fields by name, and a function giving their values (in C: every action
#: copies them).
_FIELD_NAMES = tuple(f.name for f in fields(Position))
_field_values = attrgetter(*_FIELD_NAMES)


class _State:
    """A mutable copy of a position's fields, for the steps of one action."""

    if TYPE_CHECKING:  # the fields the steps set, as Position has them (kept in _v)
        phase: str
        half: int
        turn: int
        ran_out: bool
        field: tuple[tuple[str, str], ...]
        used: frozenset[str]
        initiative: int
        hands: tuple[int, int]
        held: tuple[tuple[str, ...], tuple[str, ...]]
        deck: int
        discard_known: frozenset[str]
        discard_unknown: int
        areas: tuple[tuple[tuple[int, str, str], ...], ...]
        team_symbols: tuple[int, int]
        placed: str
        shot: Shot | None
        penalty: tuple[str, str]
        stars: tuple[tuple[str, ...], tuple[str, ...]]
        revealed: tuple[str, ...]
        boxed: tuple[str, ...]
        ready: tuple[bool, bool]
        last: str
        then: str
        mods: tuple[int, int]

    def __init__(self, position: Position) -> None:
        self.__dict__["_p"] = position
        self.__dict__["_v"] = dict(zip(_FIELD_NAMES, _field_values(position)))
        #: the position ``now`` made, until a field is set (the fields are immutable)
        self.__dict__["_now"] = None

    def __getattr__(self, name: str) -> Any:
        return self._v[name]

    def __setattr__(self, name: str, value: Any) -> None:
        self._v[name] = value
        self.__dict__["_now"] = None

    def now(self) -> Position:
        made: Position | None = self.__dict__["_now"]
        if made is None:
            made = self.__dict__["_now"] = Position(**self._v)
        return made

    def pair(self, name: str, side: int, value: Any) -> None:
        values = list(self._v[name])
        values[side] = value
        setattr(self, name, tuple(values))

    # ---- the set-up

    def do_reveal(self, action: Reveal) -> None:
        self.revealed = self.revealed + (action.card,)

    def do_pick(self, action: Pick) -> None:
        side = self.now()._mover()
        self.pair("stars", side, self.stars[side] + (action.card,))
        self.revealed = tuple(c for c in self.revealed if c != action.card)
        picks = len(self.stars[HOME]) + len(self.stars[AWAY]) - 2 * len(self.boxed)
        if picks == 2:
            self.boxed = self.boxed + self.revealed  # the card nobody took goes back to the box
            self.revealed = ()
            if len(self.boxed) == 3:
                _to_bench_phase(self)

    def do_bench(self, action: Bench) -> None:
        side = self.now()._mover()
        cell = f"{SIDES[side]}-bench-{len(self.bench[side]) + 1}"
        self.pair("bench", side, self.bench[side] + ((cell, action.card, False),))
        self.pair("unplaced", side, tuple(c for c in self.unplaced[side] if c != action.card))
        if len(self.bench[AWAY]) == BENCH_SIZE:
            _start_half(self, 1)

    # ---- team action

    def do_link(self, action: Link) -> None:
        self.last = ""  # the previous shot's result has been seen
        _draw(self, action.count, self.turn)
        self.phase = PLAYER

    def do_press(self, action: Press) -> None:
        self.last = ""
        _push(self, self.turn, self.team_symbols[1])
        self.phase = PLAYER

    # ---- player action

    def do_place(self, action: Place) -> None:
        self.last = ""
        side = self.turn
        self.field = tuple(sorted(self.field + ((action.cell, action.card),)))
        self.pair("unplaced", side, tuple(c for c in self.unplaced[side] if c != action.card))
        self.placed = action.cell
        position = self.now()
        card = position.player_card(action.card)
        if card.effect and position._effect_applies(card, side):
            self.phase = EFFECT
        else:
            self.phase = AFTER

    def do_effect(self, action: Effect) -> None:
        if action.use:
            side = self.turn
            card = self.now().player_card(dict(self.field)[self.placed])
            effect = card.effect
            if effect in ("press-1", "press-2"):
                _push(self, side, int(effect[-1]))
            elif effect == "draw":
                _draw(self, 1, side)
            elif effect == "draw2-keep1":
                drawn = _draw(self, 2, side)
                if drawn == 2:  # one of the two goes to the discard pile, unseen
                    _discard_unseen(self, side, 1)
            elif effect == "discard-opponent":
                _discard_unseen(self, 1 - side, 1)
        self.phase = AFTER

    def do_shoot(self, action: Shoot) -> None:
        self.last = ""
        position = self.now()
        side = self.turn
        if action.kind == "blind":
            self.shot = Shot(side, "", 0, 0, "", "blind")
        else:
            mine = position.shot_symbols(action.cell)
            crack = sum(1 for s in position.symbols(side)
                        if s.kind == "crack" and action.cell in s.cards)
            self.shot = Shot(side, action.cell, len(mine), crack, action.token, action.kind)
        self.phase = ATTACK

    def do_adjust(self, action: Adjust) -> None:
        if action.what == "move":
            _move_by_hand(self, action.card, action.to)
            return
        if action.card:  # a named synergy card from its area to the discard pile, seen
            self.areas = tuple(tuple(a for a in areas if a[1] != action.card)
                               for areas in self.areas)
            self.discard_known = frozenset(self.discard_known | {action.card})
            return
        side = SIDES.index(action.side)
        if action.what == "power":
            self.pair("mods", side, self.mods[side] + action.amount)
        elif action.what == "draw":
            _draw(self, action.amount, side)
        elif action.what == "discard":  # from the hand, unseen
            _discard_unseen(self, side, action.amount)
        else:
            _push(self, side, action.amount)

    def do_endturn(self, action: EndTurn) -> None:
        _end_turn(self)

    # ---- synergy cards

    def do_synergy(self, action: Synergy) -> None:
        side = self.turn if self.phase == ATTACK else 1 - self.turn
        if action.source == "deck":
            _take_from_deck(self)
        else:
            self.pair("hands", side, self.hands[side] - 1)
            if action.card in self.held[side]:
                self.pair("held", side, tuple(c for c in self.held[side] if c != action.card))
        self.pair("areas", side, self.areas[side] + ((action.area, action.card, action.source),))

    def do_done(self, action: Done) -> None:
        if self.phase == ATTACK:
            self.phase = DEFENCE
        else:
            _resolve(self)

    # ---- penalty kicks

    def do_penalty(self, action: Penalty) -> None:
        if not self.penalty[0]:
            self.penalty = (action.card, "")
            return
        self.penalty = (self.penalty[0], action.card)  # both cards face up: the judgement
        kick = self.cards.copy(self.penalty[0]).card.get("course")
        save = self.cards.copy(action.card).card.get("course")
        goal = kick != save
        kicker = self.turn
        if self.phase == PK:
            result = f"penalty kick {kick} vs save {save}: "
            if goal:
                result += f"goal! {SIDES[kicker]} scores"
                _goal(self, kicker)
            else:
                result += "saved"
            self.last, self.then = result, "turn"
        else:
            self.pair("shootout", kicker, self.shootout[kicker] + ("1" if goal else "0"))
            self.last = f"shoot-out: {SIDES[kicker]} {'scores' if goal else 'is saved'}"
            self.then = "shootout"
        self.phase = CLEAR

    def do_clear(self, action: Clear) -> None:
        then, self.then = self.then, ""
        if then == "half":
            _half_time(self)
            return
        seen = {c for side in (HOME, AWAY) for _, c, _ in self.areas[side]}
        self.discard_known = frozenset(self.discard_known | seen)
        self.areas, self.shown, self.penalty = ((), ()), (False, False), ("", "")
        if then == "pk":
            self.phase = PK
        elif then == "shootout":
            if _shootout_decided(self.shootout):
                self.phase = OVER
            else:
                self.phase, self.turn = SHOOTOUT, 1 - self.turn
        else:
            _end_turn(self)

    # ---- substitutions and half time

    def do_sub(self, action: Sub) -> None:
        side = self.now()._sub_side()
        position = self.now()
        cells = [cell for cell, c in self.field if c == action.out]
        if cells:
            cell = cells[0]
            gone = {s.name for s in _symbols(self.cards, position._side_field(side))
                    if cell in s.cards}
            # 「交代アウトされる選手カードの上にあったシュートトークンは全て保管所に戻す」
            self.used = frozenset(self.used - gone)
            self.field = tuple(p for p in self.field if p[1] != action.out)
            if self.shot is not None and self.shot.token in gone:
                # the shooter leaves during his own attack: the shot stands, its token
                # goes back to the supply
                self.shot = replace(self.shot, shooter="", token="")
            if cell == self.placed:  # the card just placed leaves: its instant effect too
                self.placed = ""
                if self.phase == EFFECT:
                    self.phase = AFTER
            if self.phase == TEAM:
                # a team-action symbol counts when it is used: a player who left before
                # the team action lends none (the seed's example subs *after* using one:
                # 「チーム行動で戦術シンボルの効果を使った後に選手を交代することも可能だ」)
                now = self.now()
                self.team_symbols = (min(self.team_symbols[0], now.count(side, "link")),
                                     min(self.team_symbols[1], now.count(side, "press")))
        unplaced = tuple(c for c in self.unplaced[side] if c != action.out) + (action.into,)
        self.pair("unplaced", side, unplaced)
        # the player going off lies face down where the one coming on lay
        self.pair("bench", side, tuple(
            (cell, action.out, True) if c == action.into else (cell, c, out)
            for cell, c, out in self.bench[side]))
        self.pair("subs", side, self.subs[side] + 1)

    def do_ready(self, action: Ready) -> None:
        side = self.now()._mover()
        self.pair("ready", side, True)
        if side == AWAY:
            _start_half(self, 2)

    # ---- automatic steps

    def settle(self) -> Position:
        """Take the steps nobody chooses (a team action that cannot be made, an attack
        with no card left to add), then return the position."""
        for _ in range(8):
            position = self.now()
            # (told without listing the legal actions: every apply settles)
            if self.phase == TEAM and (position.resigned >= 0 or not position._team_actions()):
                self.phase = PLAYER
            elif self.phase == AFTER and not position.shot_symbols(self.placed):
                _end_turn(self)
            elif self.phase == ATTACK:
                side, taken = self.turn, len(self.areas[self.turn])
                most = ATTACK_CARDS[_initiative_state(self.initiative, side)]
                if (taken == 0 and not position._drawable() or taken >= most
                        or (taken and not self.hands[side])):
                    self.phase = DEFENCE
                else:
                    break
            elif self.phase == DEFENCE:
                side, taken = 1 - self.turn, len(self.areas[1 - self.turn])
                if taken >= DEFENCE_CARDS or (taken == 0 and not position._drawable()) \
                        or (taken and not self.hands[side] and not position._drawable()):
                    _resolve(self)
                else:
                    break
            else:
                break
        position = self.now()
        return position


def _move_by_hand(s: _State, cell: str, to: str) -> None:
    """A by-hand effect moves the card read at ``cell`` to the free cell ``to`` of its own
    field. As for a substitution, the shot tokens on the symbols it leaves go back
    (「交代アウトされる選手カードの上にあったシュートトークンは全て保管所に戻す」), and a team
    action still to come uses no symbol it broke."""
    position = s.now()
    side = HOME if cell[0] == "H" else AWAY
    copy_id = dict(s.field)[cell]
    gone = {sym.name for sym in _symbols(s.cards, position._side_field(side))
            if cell in sym.cards}
    s.used = frozenset(s.used - gone)
    s.field = tuple(sorted(tuple(p for p in s.field if p[0] != cell) + ((to, copy_id),)))
    if s.shot is not None and s.shot.shooter == cell:
        # the shot stands; its token goes back if its symbol is gone
        token = "" if s.shot.token in gone else s.shot.token
        s.shot = replace(s.shot, shooter=to, token=token)
    if s.placed == cell:
        s.placed = to
    if s.phase == TEAM and side == s.turn:
        now = s.now()
        s.team_symbols = (min(s.team_symbols[0], now.count(side, "link")),
                          min(s.team_symbols[1], now.count(side, "press")))


def _to_bench_phase(s: _State) -> None:
    for side in (HOME, AWAY):
        team = SIDES[side]
        own = tuple(c.id for c in s.cards.copies("player") if c.card.get("team") == team)
        s.pair("unplaced", side, own + s.stars[side])
    s.phase = BENCH_UP


def _start_half(s: _State, half: int) -> None:
    """Kick-off of a half: the synergy cards all in one deck, the marker in the middle."""
    first = SIDES.index(s.options.first)
    s.half = half
    s.deck = len(s.cards.copies("synergy"))
    s.hands, s.held = (0, 0), ((), ())
    s.discard_known, s.discard_unknown = frozenset(), 0
    s.initiative = MIDDLE
    s.used = frozenset()
    s.ready = (False, False)
    s.additional = s.ran_out = False
    _start_turn(s, first if half == 1 else 1 - first)


def _start_turn(s: _State, side: int) -> None:
    s.turn = side
    s.placed = ""
    s.shot = None
    position = s.now()
    s.team_symbols = (position.count(side, "link"), position.count(side, "press"))
    s.phase = PLAYER if s.additional else TEAM


def _end_turn(s: _State) -> None:
    s.placed, s.shot = "", None
    if s.additional:
        _end_half(s)
        return
    s.additional, s.ran_out = s.ran_out, False
    _start_turn(s, 1 - s.turn)


def _end_half(s: _State) -> None:
    s.additional = s.ran_out = False
    if s.half == 1:
        s.phase, s.then, s.turn = CLEAR, "half", HOME
        return
    if s.score[HOME] == s.score[AWAY] and s.options.shootout:
        s.phase = SHOOTOUT
        s.turn = SIDES.index(s.options.first)
    else:
        s.phase = OVER


def _half_time(s: _State) -> None:
    """Half time (ハーフタイム) 1-5: the field cleared, one deck, the marker in the middle."""
    for side in (HOME, AWAY):  # 1. the players come off the field
        prefix = "HA"[side]
        back = tuple(c for cell, c in s.field if cell[0] == prefix)
        s.pair("unplaced", side, s.unplaced[side] + back)
    s.field = ()
    s.used = frozenset()  # 2. the shot tokens go back
    s.deck = len(s.cards.copies("synergy"))  # 3. every synergy card in one deck
    s.hands, s.held, s.discard_known, s.discard_unknown = (0, 0), ((), ()), frozenset(), 0
    s.initiative = MIDDLE  # 4.
    s.ready = (False, False)
    s.phase = HALF  # 5. substitutions
    s.turn = HOME


def _discard_unseen(s: _State, side: int, count: int) -> None:
    """``count`` cards of ``side``'s hand to the discard pile, unseen: which of the cards
    held went is not known (the hand slots are read again before the computer's next
    search)."""
    s.pair("hands", side, s.hands[side] - count)
    s.discard_unknown += count
    s.pair("held", side, ())


def _take_from_deck(s: _State) -> None:
    """One card leaves the deck; when the deck runs out the discard pile becomes the deck."""
    if s.deck == 0:
        _reshuffle(s)
    s.deck -= 1
    if s.deck == 0:
        s.ran_out = True
        _reshuffle(s)


def _reshuffle(s: _State) -> None:
    s.deck += len(s.discard_known) + s.discard_unknown
    s.discard_known, s.discard_unknown = frozenset(), 0


def _draw(s: _State, count: int, side: int) -> int:
    drawn = 0
    for _ in range(count):
        if s.deck + len(s.discard_known) + s.discard_unknown == 0:
            break
        _take_from_deck(s)
        drawn += 1
    s.pair("hands", side, s.hands[side] + drawn)
    return drawn


def _push(s: _State, side: int, amount: int) -> None:
    step = 1 if side == HOME else -1
    s.initiative = max(1, min(TRACK, s.initiative + step * amount))


def _goal(s: _State, side: int) -> None:
    s.pair("score", side, s.score[side] + 1)
    s.initiative = MIDDLE


def _resolve(s: _State) -> None:
    """STEP5: the judgement (得点判定), the shot token turned over, the cards discarded."""
    position = s.now()
    shot = s.shot
    assert shot is not None  # the judgement follows a shot
    attacker, defender = shot.attacker, 1 - shot.attacker
    attack = position.attack_total()
    tackle = any(is_tackle(s.cards.copy(c).card) for _, c, _ in s.areas[defender])
    magic = shot.kind != "blind"
    who = SIDES[attacker]
    if magic and attack > WONDER:
        result, goal, penalty = f"{who} attack {attack}: line out", False, False
    elif tackle:
        result, goal, penalty = f"{who} attack {attack}: tackle! penalty kick", False, True
    elif magic and attack == WONDER:
        result, goal, penalty = f"{who} attack 11: wonder goal!", True, False
    else:
        defence = position.defence_total()
        goal, penalty = attack > defence, False
        result = f"{who} attack {attack} vs defence {defence}: " + ("goal!" if goal else "saved")
    if shot.token:
        s.used = frozenset(s.used | {shot.token})
    s.last = result
    s.mods = (0, 0)
    if goal:
        _goal(s, attacker)
    line_out = magic and attack > WONDER  # the defence's cards are discarded unseen
    s.pair("shown", attacker, True)
    s.pair("shown", defender, not line_out)
    s.shot = None
    s.phase, s.then = CLEAR, "pk" if penalty else "turn"


def _shootout_decided(kicks: tuple[str, str]) -> bool:
    home, away = (k.count("1") for k in kicks)
    taken = (len(kicks[0]), len(kicks[1]))
    if max(taken) <= SHOOTOUT_KICKS:
        left = (SHOOTOUT_KICKS - taken[0], SHOOTOUT_KICKS - taken[1])
        return home + left[0] < away or away + left[1] < home
    return taken[0] == taken[1] and home != away


__all__ = ["ATTACK_CARDS", "PHASES", "SIDES", "Options", "Position", "Shot"]
