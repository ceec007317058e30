"""A card set: the cards of a card game as data, and the tags that identify them.

The engines read a :class:`CardSet` they are given; they never open a file. Card
set files, where the shipped sets live and the one cache of what was read are
``masume.cards`` (layer 2), which also says the file format.

Every physical card is a :class:`Copy` with its own id: the card id when the card
has one copy, ``ID.N`` (N from 1) when it has several.

>>> cards = CardSet({"id": "mini", "game": "some-game", "card": [
...     {"id": "A1", "name": "Keeper", "kind": "player", "tags": ["04A1B2C3"]},
...     {"id": "B2", "name": "Pass", "kind": "action", "copies": 2}]})
>>> [c.id for c in cards.copies()]
['A1', 'B2.1', 'B2.2']
>>> cards.by_tag("04a1b2c3").card.name
'Keeper'
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from pathlib import Path

_TAG = re.compile(r"(?:[0-9A-F]{8}|[0-9A-F]{14}|[0-9A-F]{20})")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_GENERIC = {"id", "name", "kind", "copies", "tags"}


class CardSetError(ValueError):
    """A card set that cannot be used; the message lists every problem found."""


def normalise_tag(text: str) -> str:
    """A tag id as the readers report it: upper-case hex, no separators.

    >>> normalise_tag("04:a1:b2:c3")
    '04A1B2C3'
    """
    tag = re.sub(r"[\s:.-]", "", text).upper()
    if not _TAG.fullmatch(tag):
        raise ValueError(f"{text!r} is not an NFC tag id (4, 7 or 10 bytes in hex)")
    return tag


class CardEntry(msgspec.Struct, omit_defaults=True):
    """``[[card]]``: one card, the fields every game has. A game declares its own entry
    as a subclass with its fields (``forbid_unknown_fields``: the JSON Schema editors read
    refuses a key the game does not know; :func:`unknown_fields` names it)."""

    id: str
    name: str
    kind: str
    copies: int = 1
    #: NFC tag ids, one per physical copy (``masume cards enroll`` writes them).
    tags: list[str] = []


def unknown_fields(card_set: CardSet, entry: type[CardEntry]) -> list[str]:
    """One line per card field that the game's entry ``entry`` does not declare (a warning:
    the game does not read it; a file valid before stays valid)."""
    known = set(entry.__struct_fields__)
    return [f"card {card.id}: field {key!r} is not one the {card_set.game} rules read"
            for card in card_set for key in card.fields if key not in known]


@dataclass(frozen=True, eq=False)
class Card:
    """One card entry of a set: what is printed on it, and the tags of its copies."""

    id: str
    name: str
    kind: str
    copies: int
    tags: tuple[str, ...]
    #: The game's own fields, as read from the file (validated by the game's rules).
    fields: Mapping[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.fields[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)

    def copy_ids(self) -> tuple[str, ...]:
        if self.copies == 1:
            return (self.id,)
        return tuple(f"{self.id}.{n}" for n in range(1, self.copies + 1))

    def __repr__(self) -> str:
        return f"Card({self.id!r}, {self.name!r}, {self.kind!r})"


@dataclass(frozen=True)
class Copy:
    """One physical card: ``id`` is the card id, or ``ID.N`` for the N-th copy."""

    id: str
    card: Card = None  # type: ignore[assignment]
    tag: str | None = None

    @property
    def piece(self) -> str:
        """The name a layout gives this card where it lies: ``tag:UID``."""
        return f"tag:{self.tag}" if self.tag else f"card:{self.id}"

    def __hash__(self) -> int:
        return hash(self.id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Copy) and other.id == self.id and other.tag == self.tag


class CardSet:
    """A game's cards, loaded from a card set file.

    Equal card sets (same id and same content) compare equal, so positions that
    hold one stay comparable across loads.
    """

    def __init__(self, data: Mapping[str, Any], *, path: Path | None = None,
                 source: str = "") -> None:
        problems: list[str] = []
        self.path = path
        self.id = str(data.get("id", ""))
        self.game = str(data.get("game", ""))
        self.title = str(data.get("title", self.id))
        self.notice = str(data.get("notice", ""))
        #: The file's other top-level keys and tables, for the game to read (e.g.
        #: Eyeshield 21's ``[[deck]]`` lists).
        self.extra: Mapping[str, Any] = {k: v for k, v in data.items()
                                         if k not in ("id", "game", "title", "notice", "card")}
        if not _ID.fullmatch(self.id):
            problems.append(f"id: {self.id!r} is not a set id (letters, digits, - and _)")
        if not self.game:
            problems.append("game: missing (the game whose rules read this set)")
        cards: list[Card] = []
        entries = data.get("card", [])
        if not isinstance(entries, list) or not entries:
            problems.append("no [[card]] entries")
            entries = []
        seen_ids: set[str] = set()
        seen_tags: dict[str, str] = {}
        for n, entry in enumerate(entries, 1):
            card = _card(entry, n, problems)
            if card is None:
                continue
            if card.id in seen_ids:
                problems.append(f"card {card.id}: the id is used twice")
            seen_ids.add(card.id)
            for copy_id, tag in zip(card.copy_ids(), card.tags):
                if tag in seen_tags:
                    problems.append(f"card {card.id}: tag {tag} is already {seen_tags[tag]}'s")
                seen_tags[tag] = copy_id
            cards.append(card)
        if problems:
            where = f"{path}: " if path else ""
            raise CardSetError(where + "; ".join(problems))
        self.cards: tuple[Card, ...] = tuple(cards)
        self._by_id = {c.id: c for c in cards}
        self._copies = tuple(Copy(copy_id, card, tag)
                             for card in cards
                             for copy_id, tag in zip(card.copy_ids(),
                                                     card.tags + (None,) * card.copies))
        self._copy_by_id = {c.id: c for c in self._copies}
        self._copy_by_tag = {c.tag: c for c in self._copies if c.tag}
        self.digest = hashlib.sha256((source or repr(sorted(seen_tags))).encode()).hexdigest()[:16]

    # ---- lookups ----------------------------------------------------------------------

    def card(self, card_id: str) -> Card:
        """The entry called ``card_id``; KeyError names the set."""
        try:
            return self._by_id[card_id]
        except KeyError:
            raise KeyError(f"no card {card_id!r} in card set {self.id}") from None

    def copy(self, copy_id: str) -> Copy:
        """The physical card ``copy_id`` (``H01``, ``E12.2``)."""
        try:
            return self._copy_by_id[copy_id]
        except KeyError:
            raise KeyError(f"no card {copy_id!r} in card set {self.id}") from None

    def by_tag(self, tag: str) -> Copy | None:
        """The physical card carrying ``tag`` (as a reader reports it), or None."""
        return self._copy_by_tag.get(tag.upper())

    def copies(self, kind: str | None = None) -> tuple[Copy, ...]:
        """Every physical card, in file order; only those of ``kind`` if given."""
        if kind is None:
            return self._copies
        return tuple(c for c in self._copies if c.card.kind == kind)

    def __iter__(self) -> Iterator[Card]:
        return iter(self.cards)

    def __len__(self) -> int:
        return len(self.cards)

    def untagged(self) -> tuple[Copy, ...]:
        """Copies without a tag yet: they cannot be read on a real mat until enrolled."""
        return tuple(c for c in self._copies if not c.tag)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CardSet) and (other.id, other.digest) == (self.id, self.digest)

    def __hash__(self) -> int:
        return hash((self.id, self.digest))

    def __repr__(self) -> str:
        return f"CardSet({self.id!r}, game={self.game!r}, {len(self.cards)} cards)"


def _card(entry: Any, n: int, problems: list[str]) -> Card | None:
    if not isinstance(entry, dict):
        problems.append(f"card #{n}: not a table")
        return None
    card_id = str(entry.get("id", ""))
    label = f"card {card_id}" if card_id else f"card #{n}"
    if not _ID.fullmatch(card_id) or "." in card_id:
        problems.append(f"{label}: id {card_id!r} is not an id (letters, digits, - and _)")
        return None
    name, kind = entry.get("name"), entry.get("kind")
    if not isinstance(name, str) or not name:
        problems.append(f"{label}: name missing")
    if not isinstance(kind, str) or not kind:
        problems.append(f"{label}: kind missing")
    copies = entry.get("copies", 1)
    if not isinstance(copies, int) or isinstance(copies, bool) or copies < 1:
        problems.append(f"{label}: copies must be a whole number of at least 1")
        copies = 1
    raw_tags = entry.get("tags", [])
    tags: list[str] = []
    if not isinstance(raw_tags, list):
        problems.append(f"{label}: tags must be a list of tag ids")
        raw_tags = []
    for raw in raw_tags:
        try:
            tags.append(normalise_tag(str(raw)))
        except ValueError as exc:
            problems.append(f"{label}: {exc}")
    if len(tags) > copies:
        copy_word = "copy" if copies == 1 else "copies"
        problems.append(f"{label}: {len(tags)} tags for {copies} {copy_word}")
    fields = {k: v for k, v in entry.items() if k not in _GENERIC}
    return Card(card_id, str(name or ""), str(kind or ""), copies, tuple(tags), fields)


__all__ = ["Card", "CardSet", "CardSetError", "Copy", "normalise_tag"]
