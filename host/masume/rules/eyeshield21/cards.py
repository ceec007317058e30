"""Eyeshield 21 TCG cards as data: the game's fields, the ability vocabulary, deck lists.

The card set file format is masume.cards' (docs/cards.md); this game's own fields
and the deck lists are documented in docs/rules/eyeshield21.md. In short::

    [[card]]
    id = "F01"
    name = "Aoki"
    kind = "character"            # character | combination | tactics | reaction | ball
    play = ["pass"]               # play types: run, pass, line (characters, combinations)
    power = 3
    team = "Falcons"
    ability = { when = "play", effect = "draw", amount = 1, cost = 1 }

    [[deck]]                      # a deck list: exactly 40 cards, at most 3 of a name
    id = "falcons"
    cards = ["F01", "F02.1"]      # a card id means all its copies, ID.N one copy
    balls = ["B1.1", "B0.1"]      # the pair of ball cards: with the ball mark, without

>>> from masume.cards import load_card_set
>>> cards = load_card_set("eyeshield21-demo")
>>> ability_of(cards.card("F01"))
Ability(when='play', effect='draw', amount=1, team='', cost=1, bench=False)
>>> sorted(deck_lists(cards))
['falcons', 'sharks']
>>> check_cards(cards)
[]

The cards in play, a :class:`Table`: the set and the two decks.

>>> table = make_table(cards, "eyeshield21-demo", "", "")
>>> table.deck_ids
('falcons', 'sharks')
>>> table.owner("F01.1"), table.owner("B1.2"), table.card("S02.1").name
('home', 'away', 'Fujii')
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import msgspec

from ..card_set import Card, CardEntry, CardSet, CardSetError, unknown_fields
from .geometry import SIDES

GAME = "eyeshield21"
KINDS = ("character", "combination", "tactics", "reaction", "ball")
PLAY_TYPES = ("run", "pass", "line")
DECK_SIZE = 40
MAX_OF_A_NAME = 3

#: The effects an ability may have (docs/rules/eyeshield21.md, "Ability vocabulary").
EFFECTS = ("power", "weaken", "team-power", "draw", "guts", "mill")
#: ``by_hand = true``: an ability the engine leaves to the players (``text`` says what it does).
BY_HAND = "by_hand"
#: Effects that change the power sums: only while an attack is being resolved.
POWER_EFFECTS = ("power", "weaken", "team-power")
#: When a card's ability may be used, by kind.
WHEN = {
    # main: in the owner's main phase; play: in the attack area, taking part in the play;
    # attack-end / turn-end: applied by themselves at the end of the attack phase / turn.
    "character": ("main", "play", "attack-end", "turn-end"),
    # who may use a tactics card that lies face up in the attack area
    "tactics": ("attack", "block", "any"),
    # when its owner may turn a reaction face up: attacking, or blocking
    "reaction": ("attack", "block"),
}


class CardFields(CardEntry, forbid_unknown_fields=True, omit_defaults=True):
    """An Eyeshield 21 ``[[card]]`` as written. ``ability``: one table or a list; a table
    outside the vocabulary is by hand, so its keys are open."""

    team: str = ""
    play: str | list[str] = ""
    power: int = 0
    members: list[str] = msgspec.field(default_factory=list)
    lasting: bool = False
    mark: bool = False
    ability: dict[str, Any] | list[dict[str, Any]] | None = None


class DeckEntry(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """``[[deck]]``: a deck list."""

    id: str
    title: str = ""
    cards: list[str] = []
    balls: list[str] = []


class SetFile(msgspec.Struct, tag_field="game", tag="eyeshield21", forbid_unknown_fields=True,
              omit_defaults=True):
    """An Eyeshield 21 card set file, as written."""

    id: str
    card: list[CardFields]
    title: str = ""
    notice: str = ""
    deck: list[DeckEntry] = []


@dataclass(frozen=True)
class Ability:
    """One card's ability in the vocabulary.

    >>> Ability("play", "power", 2).text()
    'play: power +2'
    >>> Ability("main", "draw", 1, cost=1, bench=True).text()
    'main: pay 1 guts, to the bench: draw 1'
    """

    when: str
    effect: str
    amount: int = 0
    team: str = ""
    cost: int = 0
    bench: bool = False

    def text(self) -> str:
        costs = []
        if self.cost:
            costs.append(f"pay {self.cost} guts")
        if self.bench:
            costs.append("to the bench")
        paid = f"{', '.join(costs)}: " if costs else ""
        sign = {"weaken": "-", "power": "+", "team-power": "+"}.get(self.effect, "")
        per = f" per {self.team} card" if self.effect == "team-power" else ""
        return f"{self.when}: {paid}{self.effect} {sign}{self.amount}{per}"


@dataclass(frozen=True)
class Deck:
    """A deck list of the set: 40 copy ids and the ball pair (with mark, without)."""

    id: str
    title: str
    copies: tuple[str, ...]
    balls: tuple[str, str]


# --------------------------------------------------------------------------- fields


def play_types(card: Card) -> tuple[str, ...]:
    """A character's or combination's play types (``play`` may be one word or a list)."""
    play = card.get("play", ())
    if isinstance(play, str):
        play = [play]
    return tuple(str(p) for p in play)


def power_of(card: Card) -> int:
    value = card.get("power", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def team_of(card: Card) -> str:
    return str(card.get("team", ""))


def members_of(card: Card) -> tuple[str, ...]:
    """The character names a combination card needs in one area."""
    return tuple(str(m) for m in card.get("members", ()))


def is_lasting(card: Card) -> bool:
    """A reaction that stays face up and keeps working (永続して効果を発揮する)."""
    return bool(card.get("lasting", False))


def has_mark(card: Card) -> bool:
    """A ball card with the ball mark (ボールマーク)."""
    return bool(card.get("mark", False))


def ability_tables(card: Card) -> list[Any]:
    """The card's ability tables as written: ``ability = {...}`` or a list of them."""
    raw = card.get("ability")
    if raw is None:
        return []
    return list(raw) if isinstance(raw, list) else [raw]


def _ability(raw: Any) -> Ability | None:
    try:
        return Ability(
            when=str(raw.get("when", "")), effect=str(raw.get("effect", "")),
            amount=int(raw.get("amount", 0)), team=str(raw.get("team", "")),
            cost=int(raw.get("cost", 0)), bench=bool(raw.get("bench", False)),
        )
    except (TypeError, ValueError):
        return None


def abilities_of(card: Card) -> tuple[Ability, ...]:
    """The card's abilities in the vocabulary, in the order written (``use CELL#N`` uses
    the N-th); an ability outside it is the players' to apply (:func:`by_hand_of`)."""
    found = []
    for raw in ability_tables(card):
        if isinstance(raw, dict) and not _outside_vocabulary(card, raw):
            ability = _ability(raw)
            if ability is not None:
                found.append(ability)
    return tuple(found)


def ability_of(card: Card) -> Ability | None:
    """The card's first ability in the vocabulary, or None."""
    found = abilities_of(card)
    return found[0] if found else None


def by_hand_of(card: Card) -> tuple[str, ...]:
    """What the card's abilities outside the vocabulary do, as their ``text`` says (or
    as written): the players apply them through adjustments (``adjust ...``)."""
    out = []
    for raw in ability_tables(card):
        if isinstance(raw, dict) and _outside_vocabulary(card, raw):
            out.append(str(raw.get("text") or ", ".join(f"{k} = {v}" for k, v in raw.items()
                                                       if k != BY_HAND)))
    return tuple(out)


def _outside_vocabulary(card: Card, raw: dict[str, Any]) -> bool:
    return raw.get(BY_HAND) is True or bool(_vocabulary_problems(card, raw, ""))


def label(card: Card) -> str:
    """What a player reads on the card: ``Aoki (PASS 3)``, ``Blitz (tactics)``."""
    if card.kind in ("character", "combination"):
        types = "/".join(t.upper() for t in play_types(card))
        return f"{card.name} ({types} {power_of(card)})"
    if card.kind == "ball":
        return f"{card.name} ({'ball mark' if has_mark(card) else 'no mark'})"
    return f"{card.name} ({card.kind})"


# --------------------------------------------------------------------------- decks


def _raw_decks(card_set: CardSet) -> list[Any]:
    """The ``[[deck]]`` tables of the set's file."""
    decks = card_set.extra.get("deck", [])
    return decks if isinstance(decks, list) else []


def _expand(card_set: CardSet, names: Any, where: str, problems: list[str]) -> tuple[str, ...]:
    out: list[str] = []
    if not isinstance(names, list):
        problems.append(f"{where}: a list of card ids")
        return ()
    for name in names:
        name = str(name)
        try:
            if "." in name:
                out.append(card_set.copy(name).id)
            else:
                out.extend(card_set.card(name).copy_ids())
        except KeyError:
            problems.append(f"{where}: no card {name!r} in the set")
    return tuple(out)


def deck_lists(card_set: CardSet, problems: list[str] | None = None) -> dict[str, Deck]:
    """The set's deck lists by id; problems reading them are appended to ``problems``."""
    problems = [] if problems is None else problems
    decks: dict[str, Deck] = {}
    for n, raw in enumerate(_raw_decks(card_set), 1):
        if not isinstance(raw, dict) or not raw.get("id"):
            problems.append(f"deck #{n}: needs an id")
            continue
        deck_id = str(raw["id"])
        where = f"deck {deck_id}"
        if deck_id in decks:
            problems.append(f"{where}: the id is used twice")
        copies = _expand(card_set, raw.get("cards", []), f"{where}: cards", problems)
        balls = _expand(card_set, raw.get("balls", []), f"{where}: balls", problems)
        pair = ("", "")
        if len(balls) == 2:
            marked = [b for b in balls if has_mark(card_set.copy(b).card)]
            if len(marked) == 1:
                pair = (marked[0], balls[1 - balls.index(marked[0])])
        if pair == ("", "") or any(card_set.copy(b).card.kind != "ball" for b in balls):
            problems.append(f"{where}: balls must be two ball cards, one with the ball mark and "
                            "one without")
        decks[deck_id] = Deck(deck_id, str(raw.get("title", deck_id)), copies, pair)
    return decks


def deck_problems(card_set: CardSet, deck: Deck) -> list[str]:
    """Deck building (デッキ構築): exactly 40 cards, at most 3 of a name, no ball cards."""
    problems: list[str] = []
    where = f"deck {deck.id}"
    if len(deck.copies) != DECK_SIZE:
        problems.append(f"{where}: {len(deck.copies)} cards; a deck holds exactly {DECK_SIZE}")
    repeated = [c for c, n in Counter(deck.copies).items() if n > 1]
    if repeated:
        problems.append(f"{where}: {', '.join(sorted(repeated))} listed twice")
    names = Counter(card_set.copy(c).card.name for c in set(deck.copies))
    for name, count in sorted(names.items()):
        if count > MAX_OF_A_NAME:
            problems.append(f"{where}: {count} cards named {name!r}; at most {MAX_OF_A_NAME} of a "
                            "name")
    balls = sorted(c for c in set(deck.copies) if card_set.copy(c).card.kind == "ball")
    if balls:
        problems.append(f"{where}: ball cards stay out of the deck ({', '.join(balls)})")
    return problems


# --------------------------------------------------------------------------- checks


def _card_problems(card: Card) -> list[str]:
    where = f"card {card.id}"
    problems: list[str] = []
    if card.kind not in KINDS:
        return [f"{where}: kind {card.kind!r} is not one of {', '.join(KINDS)}"]
    if card.kind in ("character", "combination"):
        types = play_types(card)
        if not types or any(t not in PLAY_TYPES for t in types):
            problems.append(f"{where}: play must be run, pass or line (or a list of them), not "
                            f"{card.get('play')!r}")
        power = card.get("power")
        if not isinstance(power, int) or isinstance(power, bool) or power < 0:
            problems.append(f"{where}: power must be a whole number of at least 0, not {power!r}")
    if card.kind == "combination":
        members = card.get("members")
        if (not isinstance(members, list) or len(members) < 2
                or not all(isinstance(m, str) for m in members)):
            problems.append(f"{where}: members must list at least two character names")
    if card.kind == "ball" and not isinstance(card.get("mark"), bool):
        problems.append(f"{where}: mark must be true (the ball mark) or false")
    tables = ability_tables(card)
    if card.kind in ("tactics", "reaction") and not tables:
        problems.append(f"{where}: a {card.kind} card needs an ability")
    if tables and card.kind not in WHEN:
        return problems + [f"{where}: a {card.kind} card has no ability"]
    for raw in tables:
        if not isinstance(raw, dict):
            problems.append(f"{where}: ability must be a table {{when = ..., effect = ..., "
                            "amount = ...}, or a list of them")
        elif raw.get(BY_HAND) is True and not isinstance(raw.get("text"), str):
            problems.append(f"{where}: a by-hand ability says what it does (text = \"...\")")
    return problems


def _vocabulary_problems(card: Card, raw: dict[str, Any], where: str) -> list[str]:
    """Why one ability table is outside the vocabulary ([] when the engine applies it)."""
    problems: list[str] = []
    if card.kind not in WHEN:
        return [f"{where}: a {card.kind} card has no ability"]
    unknown = sorted(set(raw) - {"when", "effect", "amount", "team", "cost", "bench"})
    if unknown:
        problems.append(f"{where}: ability has unknown field(s) {', '.join(unknown)}")
    when, effect = raw.get("when"), raw.get("effect")
    if when not in WHEN[card.kind]:
        problems.append(f"{where}: ability when must be one of {', '.join(WHEN[card.kind])}, not "
                        f"{when!r}")
    if effect not in EFFECTS:
        problems.append(f"{where}: ability effect must be one of {', '.join(EFFECTS)}, not "
                        f"{effect!r}")
    for key in ("amount", "cost"):
        value = raw.get(key, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            problems.append(f"{where}: ability {key} must be a whole number of at least 0, not "
                            f"{value!r}")
    if effect == "team-power" and not raw.get("team"):
        problems.append(f"{where}: a team-power ability names its team")
    if raw.get("bench") and card.kind != "character":
        problems.append(f"{where}: only a character goes to the bench for its ability")
    if effect in POWER_EFFECTS and when in ("main", "attack-end", "turn-end"):
        problems.append(f"{where}: {effect} works only during an attack, not at {when}")
    if card.kind == "reaction" and is_lasting(card) and effect not in POWER_EFFECTS:
        problems.append(f"{where}: a lasting reaction changes power (power, weaken or team-power)")
    return problems


def card_warnings(card_set: CardSet) -> list[str]:
    """Abilities outside the vocabulary, one line each: never a refusal. The engine does
    not apply them; while the card lies face up the players apply them by hand through
    adjustments (``adjust home power +2``, ``adjust discard F01.2``, ...), so the record
    stays exact.

    >>> from masume.cards import load_card_set
    >>> card_warnings(load_card_set("eyeshield21-demo"))
    []
    """
    out: list[str] = unknown_fields(card_set, CardFields)
    for card in card_set:
        for raw in ability_tables(card):
            if not isinstance(raw, dict) or card.kind not in WHEN:
                continue
            if raw.get(BY_HAND) is True:
                out.append(f"card {card.id}: by hand: {raw.get('text', '')}")
                continue
            for problem in _vocabulary_problems(card, raw, f"card {card.id}"):
                out.append(f"{problem}; the players apply it by hand")
    return out


def check_cards(card_set: CardSet) -> list[str]:
    """The game's checks of a card set, one line per problem ([] when it is fine)."""
    problems: list[str] = []
    if card_set.game != GAME:
        problems.append(f"the set is for {card_set.game!r}, not {GAME}")
    for card in card_set:
        problems.extend(_card_problems(card))
    decks = deck_lists(card_set, problems)
    if not decks:
        problems.append("the set has no deck lists ([[deck]] tables)")
    for deck in decks.values():
        problems.extend(deck_problems(card_set, deck))
    return problems


class Table:
    """A card set and the two decks in play: who owns which copy, and what it is.

    Positions hold one; two tables are equal when the set and the decks are.
    """

    def __init__(self, card_set: CardSet, decks: tuple[Deck, Deck], name: str) -> None:
        self.card_set = card_set
        self.decks = decks
        self.deck_ids = (decks[0].id, decks[1].id)
        #: How positions write the set (a shipped set's name, or a path).
        self.name = name
        self._owner: dict[str, int] = {}
        for side, deck in enumerate(decks):
            for copy in deck.copies + deck.balls:
                self._owner[copy] = side
        self.deck_sets = (frozenset(decks[0].copies), frozenset(decks[1].copies))
        self._key = (card_set, self.deck_ids)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Table) and other._key == self._key

    def __hash__(self) -> int:
        return hash(self._key)

    def owner(self, copy: str) -> str:
        return SIDES[self._owner[copy]]

    def owner_index(self, copy: str) -> int:
        return self._owner[copy]

    def owns(self, copy: str) -> bool:
        return copy in self._owner

    def card(self, copy: str) -> Card:
        return self.card_set.copy(copy).card

    def piece(self, copy: str) -> str:
        return self.card_set.copy(copy).piece

    def kind(self, copy: str) -> str:
        return self.card(copy).kind

    def balls(self, side: int) -> tuple[str, str]:
        """The side's ball pair: (with the ball mark, without)."""
        return self.decks[side].balls


def make_table(card_set: CardSet, name: str, deck_home: str, deck_away: str) -> Table:
    """The table for a card set, written ``name`` in positions (the name or path it was
    found by), and two deck lists ('' = default).

    ValueError says what is wrong (unknown deck, a set that fails the game's checks).
    """
    return _table(card_set, name, deck_home, deck_away)


@lru_cache(maxsize=16)
def _table(card_set: CardSet, name: str, deck_home: str, deck_away: str) -> Table:
    problems: list[str] = []
    decks = deck_lists(card_set, problems)
    ids = list(decks)
    chosen = (deck_home or (ids[0] if ids else ""), deck_away or (ids[1] if len(ids) > 1 else ""))
    for side, deck_id in zip(SIDES, chosen):
        if deck_id not in decks:
            known = ", ".join(ids) or "none"
            raise ValueError(f"no deck list {deck_id!r} for {side} in card set {card_set.id} (deck "
                             f"lists: {known})")
    if chosen[0] == chosen[1]:
        raise ValueError(f"both sides cannot play deck {chosen[0]!r}: each physical card belongs "
                         "to one deck")
    pair = (decks[chosen[0]], decks[chosen[1]])
    shared = (set(pair[0].copies) | set(pair[0].balls)) & (set(pair[1].copies) | set(pair[1].balls))
    if shared:
        raise ValueError(f"decks {chosen[0]} and {chosen[1]} share {', '.join(sorted(shared))}")
    card_problems = [p for p in check_cards(card_set) if not p.startswith("deck ")]
    for deck in pair:
        card_problems += deck_problems(card_set, deck)
    card_problems += [p for p in problems if p.startswith(tuple(f"deck {d}:" for d in chosen))]
    if card_problems:
        raise CardSetError(f"card set {card_set.id}: " + "; ".join(card_problems))
    return Table(card_set, pair, name)
