"""Specialist cards: a card set's game fields and their checks.

The cards are chosen before kick-off and never lie on the board: a position holds
the chosen cards' abilities (``Options.specialists``), read from the set the rules
were given or named (the option ``card_set``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

import msgspec

from ..card_set import CardEntry, CardSet, CardSetError, unknown_fields
from .geometry import GAME, PENALTY_AREA, _progress

#: What a card's ability may change (docs/rules/masume-tactics.md, "Specialist cards"):
#:   ground        +value squares on his ground kicks
#:   lob           +value squares on his lob kicks
#:   charge        +value on his die when he charges
#:   hold          +value on his die when he is charged while keeping the ball
#:   inside-range  his inside kicks reach 2 + value squares
ABILITY_KINDS = ("ground", "lob", "charge", "hold", "inside-range")
#: Where an ability works ("" everywhere), seen from the card holder's side.
ABILITY_WHERE = ("", "own-half", "opponent-half", "own-penalty-area", "opponent-penalty-area")


@dataclass(frozen=True)
class Ability:
    """One ability of a specialist card: ``kind`` (see ABILITY_KINDS), ``value``, ``where``.

    >>> from masume.rules.masume_tactics.geometry import HOME, SQUARE_INDEX
    >>> Ability("ground", 1, "opponent-half").applies(HOME, SQUARE_INDEX["G12"])
    True
    """

    kind: str
    value: int
    where: str = ""

    def applies(self, side: int, square: int) -> bool:
        if not self.where:
            return True
        if self.where == "own-half":
            return _progress(side, square) <= 8
        if self.where == "opponent-half":
            return _progress(side, square) >= 9
        if self.where == "own-penalty-area":
            return square in PENALTY_AREA[side]
        return square in PENALTY_AREA[1 - side]


@dataclass(frozen=True)
class Card:
    """A specialist card: the shirt number it names and its abilities (either team may hold it)."""

    id: str
    name: str
    shirt: int
    abilities: tuple[Ability, ...]


#: The shipped specialist card set (host/masume/cards/sets/): the real cards' texts
#: are not public, so it is an EXAMPLE with their shape and made-up abilities. An
#: owner writes the cards they hold in the same card set format (masume.cards) and
#: passes it as the option ``card_set``.
EXAMPLE_SET = "masume-tactics-example"


class AbilityTable(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """``{ kind = ..., value = N, where = ... }``: one ability as written."""

    kind: str
    value: int
    where: str = ""


class CardFields(CardEntry, forbid_unknown_fields=True, omit_defaults=True):
    """A specialist ``[[card]]`` as written."""

    shirt: int = 0
    abilities: list[AbilityTable] = msgspec.field(default_factory=list)


class SetFile(msgspec.Struct, tag_field="game", tag="masume-tactics", forbid_unknown_fields=True,
              omit_defaults=True):
    """A specialist card set file, as written."""

    id: str
    card: list[CardFields]
    title: str = ""
    notice: str = ""


def card_warnings(card_set: CardSet) -> list[str]:
    """Card fields the game does not read (never a refusal)."""
    return unknown_fields(card_set, CardFields)


def specialists(card_set: CardSet) -> Mapping[str, Card]:
    """The specialist cards of a card set, by id; CardSetError says what is wrong with it.

    >>> from masume.cards import load_card_set
    >>> sorted(specialists(load_card_set(EXAMPLE_SET)))[:2]
    ['anchor', 'libero']
    """
    return dict(_specialists(card_set))


@lru_cache(maxsize=8)
def _specialists(card_set: CardSet) -> tuple[tuple[str, Card], ...]:
    problems = check_cards(card_set)
    if problems:
        raise CardSetError(f"{card_set.path or card_set.id}: " + "; ".join(problems))
    return tuple((c.id, Card(c.id, c.name, c["shirt"],
                             tuple(Ability(a["kind"], a["value"], a.get("where", ""))
                                   for a in c["abilities"])))
                 for c in card_set)


def check_cards(card_set: CardSet) -> list[str]:
    """The game's checks of a specialist card set, one line per problem.

    >>> from masume.cards import load_card_set
    >>> check_cards(load_card_set(EXAMPLE_SET))
    []
    """
    problems: list[str] = []
    if card_set.game != GAME:
        problems.append(f"game: {card_set.game!r}, not {GAME}")
    for card in card_set:
        label = f"card {card.id}"
        if card.kind != "specialist":
            problems.append(f"{label}: kind must be specialist, not {card.kind!r}")
        shirt = card.get("shirt")
        if not isinstance(shirt, int) or isinstance(shirt, bool) or not 1 <= shirt <= 11:
            problems.append(f"{label}: shirt must be a number from 1 to 11, not {shirt!r}")
        abilities = card.get("abilities")
        if not isinstance(abilities, list) or not abilities:
            problems.append(f"{label}: abilities must be a list of {{kind, value, where}}")
            continue
        for ability in abilities:
            if not isinstance(ability, dict):
                problems.append(f"{label}: an ability must be a table {{kind, value, where}}")
                continue
            kind, value = ability.get("kind"), ability.get("value")
            where = ability.get("where", "")
            if kind not in ABILITY_KINDS:
                problems.append(f"{label}: unknown ability kind {kind!r} "
                                f"(one of {', '.join(ABILITY_KINDS)})")
            if not isinstance(value, int) or isinstance(value, bool):
                problems.append(f"{label}: ability {kind}: value must be a whole number")
            if where not in ABILITY_WHERE:
                problems.append(f"{label}: ability {kind}: unknown where {where!r} "
                                f"(one of {', '.join(w for w in ABILITY_WHERE if w)})")
    return problems
