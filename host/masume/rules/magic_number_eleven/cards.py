"""Magic Number Eleven cards as data: the game's fields of a card set and their checks.

A card set (``masume.cards``) holds three kinds of cards for this game; the
fields each kind needs are documented in docs/rules/magic-number-eleven.md:

- ``player``: ``team`` (``home``, ``away`` or ``star``), ``position`` (``FW``,
  ``MF``, ``DF``, or a list of them), ``symbols`` (the half symbols on the
  card's edges, see :class:`Symbols`), optional ``effect`` (the instant effect,
  one word of :data:`EFFECTS`);
- ``synergy``: ``stars`` (1-5), optional ``tackle = true``;
- ``penalty``: ``role`` (``kick``, ``save`` or ``reference``) and ``course``.

>>> from masume.cards import load_card_set
>>> cards = load_card_set("magic-number-eleven-demo")
>>> check_cards(cards)
[]
>>> player(cards.card("H01")).positions, player(cards.card("H01")).symbols.top
(('FW',), ('shot', 'shot'))
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import msgspec

from ..card_set import Card, CardEntry, CardSet, unknown_fields

#: Tactic symbols (戦術シンボル): shot ⊙, defence 〇, link 連携, press プレス, crack ☒.
SYMBOL_KINDS: tuple[str, ...] = ("shot", "defence", "link", "press", "crack")
#: Player positions (ポジション) and the field rows (1 = front) each may be placed on.
POSITION_ROWS: dict[str, tuple[int, ...]] = {"FW": (1, 2), "MF": (2, 3), "DF": (3, 4)}
#: The instant effects (即発効果, ⚡) the rules text describes, one word each.
EFFECTS: dict[str, str] = {
    "press-1": "push the initiative marker one space",
    "press-2": "push the initiative marker two spaces",
    "draw": "draw one synergy card",
    "draw2-keep1": "draw two synergy cards, keep one, discard the other",
    "discard-opponent": "discard one card, unseen, from the opponent's hand",
    "power-shot": "shoot with this card, ignoring the opponent's base defence",
}
PENALTY_ROLES = ("kick", "save", "reference")
TEAMS = ("home", "away", "star")

#: What is public about the real set (issue 7): counts the game's checks hold a set to.
PLAYER_COUNTS = {"home": 10, "away": 10, "star": 12}
#: Counts read from a lost figure (the synergy card list's star values) or from public
#: pages, not from a sentence of the rules: a set that differs draws a warning
#: (:func:`card_warnings`), a refusal only under the set's option ``published_counts``.
SYNERGY_STARS = {1: 3, 2: 5, 3: 10, 4: 5, 5: 2}
TACKLES = 2
PENALTY_CARDS = 11
#: The set's top-level option that makes the published counts binding.
PUBLISHED_COUNTS = "published_counts"


class SymbolsTable(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """``symbols = {...}`` of a player card, as written (see :class:`Symbols`)."""

    top: list[str] = []
    bottom: list[str] = []
    left: str = ""
    right: str = ""
    full: list[str] | str = []


class ByHand(msgspec.Struct, forbid_unknown_fields=True):
    """``effect = { by_hand = true, text = "..." }``: an effect the players apply."""

    by_hand: bool
    text: str


class CardFields(CardEntry, forbid_unknown_fields=True, omit_defaults=True):
    """A Magic Number Eleven ``[[card]]`` as written: player, synergy or penalty fields."""

    team: str = ""
    position: str | list[str] = ""
    symbols: SymbolsTable | None = None
    effect: str | ByHand = ""
    stars: int = 0
    tackle: bool = False
    role: str = ""
    course: str = ""


class SetFile(msgspec.Struct, tag_field="game", tag="magic-number-eleven",
              forbid_unknown_fields=True, omit_defaults=True):
    """A Magic Number Eleven card set file, as written."""

    id: str
    card: list[CardFields]
    title: str = ""
    notice: str = ""
    #: The published counts (synergy stars, tackles, penalty cards) bind: see card_warnings.
    published_counts: bool = False


@dataclass(frozen=True)
class Symbols:
    """The half symbols on a player card's edges, seen by its owner.

    ``top`` and ``bottom`` are (left half, right half): a card is two cells wide,
    so its front (top) and back (bottom) edges each touch two cells of the next
    rows. ``left`` and ``right`` are the short edges. ``full`` lists symbols
    printed already completed (完成した状態のシンボル). An empty string is no symbol.
    """

    top: tuple[str, str] = ("", "")
    bottom: tuple[str, str] = ("", "")
    left: str = ""
    right: str = ""
    full: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlayerCard:
    """A player card's game fields, read from a card set entry."""

    id: str
    name: str
    team: str
    positions: tuple[str, ...]
    symbols: Symbols
    effect: str = ""
    #: An effect outside :data:`EFFECTS`, as the card says it: the players apply it
    #: through adjustments (``adjust home power +2``) while the card lies on the field.
    by_hand: str = ""

    @property
    def rows(self) -> tuple[int, ...]:
        """The field rows this card may be placed on (1 = the front row)."""
        return tuple(sorted({r for p in self.positions for r in POSITION_ROWS.get(p, ())}))

    @property
    def label(self) -> str:
        return f"{self.id} {self.name} ({'/'.join(self.positions)})"


def _halves(value: Any) -> tuple[str, str]:
    if isinstance(value, list) and len(value) == 2:
        return (str(value[0] or ""), str(value[1] or ""))
    return ("", "")


def player(card: Card) -> PlayerCard:
    """The game fields of a player card entry (unchecked: see :func:`check_cards`)."""
    raw = card.get("symbols", {}) or {}
    positions = card.get("position", ())
    if isinstance(positions, str):
        positions = (positions,)
    symbols = Symbols(
        top=_halves(raw.get("top")),
        bottom=_halves(raw.get("bottom")),
        left=str(raw.get("left", "") or ""),
        right=str(raw.get("right", "") or ""),
        full=tuple(str(s) for s in raw.get("full", ()) or ()),
    )
    effect = card.get("effect", "") or ""
    by_hand = ""
    if isinstance(effect, dict):
        by_hand, effect = str(effect.get("text", "")), ""
    elif str(effect) not in EFFECTS:
        by_hand, effect = str(effect), ""
    return PlayerCard(card.id, card.name, str(card.get("team", "")), tuple(positions), symbols,
                      str(effect), by_hand)


def stars(card: Card) -> int:
    """The ★ of a synergy card."""
    return int(card.get("stars", 0))


def is_tackle(card: Card) -> bool:
    return bool(card.get("tackle", False))


def check_cards(card_set: CardSet) -> list[str]:
    """The game's own checks of a card set: one line per problem, [] when it is fit to play.

    >>> from masume.cards import CardSet
    >>> tiny = CardSet({"id": "t", "game": "magic-number-eleven", "card": [
    ...     {"id": "P1", "name": "X", "kind": "player", "team": "home", "position": "GK"}]})
    >>> check_cards(tiny)[:2]
    ["card P1: position 'GK' is not FW, MF or DF", 'home players: 1, the game needs 10']
    """
    problems: list[str] = []
    if card_set.game != "magic-number-eleven":
        problems.append(f"the set is for {card_set.game!r}, not magic-number-eleven")
    teams: Counter[str] = Counter()
    star_counts: Counter[int] = Counter()
    tackles = 0
    synergy = 0
    penalty: Counter[str] = Counter()
    for card in card_set:
        where = f"card {card.id}"
        if card.kind == "player":
            teams[str(card.get("team"))] += card.copies
            problems += _player_problems(card, where)
        elif card.kind == "synergy":
            synergy += card.copies
            value = card.get("stars")
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 5:
                problems.append(f"{where}: stars must be a whole number from 1 to 5, not {value!r}")
            else:
                star_counts[value] += card.copies
            if not isinstance(card.get("tackle", False), bool):
                problems.append(f"{where}: tackle must be true or false")
            tackles += card.copies if card.get("tackle") is True else 0
        elif card.kind == "penalty":
            role = card.get("role")
            if role not in PENALTY_ROLES:
                problems.append(f"{where}: role {role!r} is not kick, save or reference")
                continue
            penalty[role] += card.copies
            course = card.get("course")
            if role != "reference" and (not isinstance(course, str) or not course):
                problems.append(f"{where}: a {role} card needs a course")
        else:
            problems.append(f"{where}: kind {card.kind!r} is not player, synergy or penalty")
    for team, count in PLAYER_COUNTS.items():
        if teams[team] != count:
            problems.append(f"{team} players: {teams[team]}, the game needs {count}")
    for team in sorted(set(teams) - set(PLAYER_COUNTS)):
        problems.append(f"players with team {team!r}: team must be home, away or star")
    if not synergy:
        problems.append("synergy cards: none (the attack and the defence draw them)")
    option = card_set.extra.get(PUBLISHED_COUNTS, False)
    if not isinstance(option, bool):
        problems.append(f"{PUBLISHED_COUNTS} must be true or false, not {option!r}")
    elif option:
        problems += _count_differences(synergy, star_counts, tackles, sum(penalty.values()))
    if not penalty["kick"] or not penalty["save"]:
        problems.append("penalty-kick cards: at least one kick and one save card are needed")
    return problems


def _unguessable(card_set: CardSet) -> list[str]:
    """Kick courses no save card names: the courses are printed on the cards (a lost
    figure), and 「守備側が攻撃側のシュートコースを当てられたら守備に成功する」 only says a
    guess saves, so such a box plays (that kick always scores), with a warning."""
    kicks = {str(c.get("course")) for c in card_set
             if c.kind == "penalty" and c.get("role") == "kick"}
    saves = {str(c.get("course")) for c in card_set
             if c.kind == "penalty" and c.get("role") == "save"}
    if not saves or not kicks - saves:
        return []
    return ["penalty-kick courses no save card can guess: " + ", ".join(sorted(kicks - saves))]


def card_warnings(card_set: CardSet) -> list[str]:
    """Where the set's counts differ from the published ones (:data:`SYNERGY_STARS`,
    :data:`TACKLES`, :data:`PENALTY_CARDS`): read from a lost figure or a public page,
    they never refuse a box that differs unless the set asks (``published_counts = true``).

    >>> from masume.cards import CardSet
    >>> box = {"id": "b", "game": "magic-number-eleven", "card": [
    ...     {"id": "S1", "name": "One", "kind": "synergy", "stars": 1, "tackle": True,
    ...      "copies": 3}]}
    >>> card_warnings(CardSet(box))[0]
    'synergy cards: 3, the published set has 25'
    """
    star_counts: Counter[int] = Counter()
    synergy = tackles = penalty = 0
    by_hand: list[str] = []
    for card in card_set:
        effect = card.get("effect", "")
        if card.kind == "player" and isinstance(effect, dict):
            by_hand.append(f"card {card.id}: by hand: {effect.get('text', '')}")
        elif card.kind == "player" and effect and effect not in EFFECTS:
            by_hand.append(f"card {card.id}: effect {effect!r} is not one of "
                           f"{', '.join(EFFECTS)}; the players apply it by hand")
        if card.kind == "synergy":
            synergy += card.copies
            value = card.get("stars")
            if isinstance(value, int) and not isinstance(value, bool):
                star_counts[value] += card.copies
            tackles += card.copies if card.get("tackle") is True else 0
        elif card.kind == "penalty":
            penalty += card.copies
    return (unknown_fields(card_set, CardFields) + by_hand
            + _count_differences(synergy, star_counts, tackles, penalty)
            + _unguessable(card_set))


def _count_differences(synergy: int, star_counts: Counter[int], tackles: int,
                       penalty: int) -> list[str]:
    out: list[str] = []
    if synergy != sum(SYNERGY_STARS.values()):
        out.append(f"synergy cards: {synergy}, the published set has "
                   f"{sum(SYNERGY_STARS.values())}")
    for value, count in SYNERGY_STARS.items():
        if synergy and star_counts[value] != count:
            out.append(f"synergy cards with {value} stars: {star_counts[value]}, "
                       f"the published set has {count}")
    if synergy and tackles != TACKLES:
        out.append(f"tackle cards: {tackles}, the published set has {TACKLES}")
    if penalty != PENALTY_CARDS:
        out.append(f"penalty-kick cards: {penalty}, the published set has {PENALTY_CARDS}")
    return out


def _player_problems(card: Card, where: str) -> list[str]:
    problems: list[str] = []
    if card.get("team") not in TEAMS:
        problems.append(f"{where}: team {card.get('team')!r} is not home, away or star")
    positions = card.get("position")
    if isinstance(positions, str):
        positions = [positions]
    if not isinstance(positions, list) or not positions:
        problems.append(f"{where}: position missing (FW, MF or DF)")
    else:
        for value in positions:
            if value not in POSITION_ROWS:
                problems.append(f"{where}: position {value!r} is not FW, MF or DF")
    symbols = card.get("symbols", {})
    if not isinstance(symbols, dict):
        problems.append(f"{where}: symbols must be a table (top, bottom, left, right, full)")
        symbols = {}
    for edge, value in symbols.items():
        if edge in ("top", "bottom"):
            if not isinstance(value, list) or len(value) != 2:
                problems.append(f"{where}: symbols.{edge} must be [left half, right half]")
                continue
            names = value
        elif edge in ("left", "right"):
            names = [value]
        elif edge == "full":
            names = value if isinstance(value, list) else [value]
        else:
            problems.append(f"{where}: symbols.{edge} is not an edge "
                            "(top, bottom, left, right, full)")
            continue
        for name in names:
            if name and name not in SYMBOL_KINDS:
                problems.append(f"{where}: symbol {name!r} is not one of {', '.join(SYMBOL_KINDS)}")
    effect = card.get("effect", "")
    if isinstance(effect, dict) and (effect.get("by_hand") is not True
                                     or not isinstance(effect.get("text"), str)):
        problems.append(f"{where}: an effect table is {{ by_hand = true, text = \"...\" }}")
    elif not isinstance(effect, (str, dict)):
        problems.append(f"{where}: effect must be a word or {{ by_hand = true, text = ... }}")
    return problems


__all__ = [
    "EFFECTS",
    "PENALTY_ROLES",
    "POSITION_ROWS",
    "SYMBOL_KINDS",
    "PlayerCard",
    "Symbols",
    "card_warnings",
    "check_cards",
    "is_tackle",
    "player",
    "stars",
]
