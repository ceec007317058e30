"""Card sets: the cards of a card game as data, and the tags that identify them.

Neither card game publishes its card texts, so a game's cards are a data file
(TOML) that an owner fills in from the cards they hold, in the format below,
with one NFC tag id per physical copy. This module reads those files (layer 2, like
the board definitions): :func:`load_card_set` is the one loader, with the one cache,
and says what is wrong with a file by :class:`CardSetError`. The engines are given
the :class:`CardSet` it reads (``masume.rules.card_set``: they never open a file);
the tracker sees tags (a card reader reports the sticker's UID) and the engine's
layout names them as ``tag:UID``, so a card is known wherever it lies, face up
or face down.

File format (``docs/cards.md`` has the whole story)::

    id = "mne-demo"                     # the set's id, also its file name
    game = "magic-number-eleven"        # the game whose rules read it
    title = "Demonstration set"
    notice = "Made for masume; NOT the publisher's cards."

    [[card]]
    id = "H01"                          # unique in the set; records name cards by it
    name = "Home goalkeeper"
    kind = "player"                     # the game's vocabulary (see its rules page)
    copies = 1                          # physical copies (default 1)
    tags = ["04A1B2C3D4E5F6"]           # NFC UIDs, one per copy (masume cards enroll)
    # ... the game's own fields (position, symbols, power, abilities, ...)

Every physical card is a :class:`Copy` with its own id: the card id when the card
has one copy, ``ID.N`` (N from 1) when it has several.

A file is read again only once it changed (enrolling tags rewrites it):

>>> cards = load_card_set("magic-number-eleven-demo")
>>> cards.game
'magic-number-eleven'
>>> copy = cards.copies()[0]
>>> cards.by_tag(copy.tag) == copy
True
>>> load_card_set("magic-number-eleven-demo") is cards
True
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any

import msgspec

from masume.rules.card_set import Card, CardEntry, CardSet, CardSetError, Copy, normalise_tag
from masume.rules.eyeshield21.cards import SetFile as Es21SetFile
from masume.rules.magic_number_eleven.cards import SetFile as MneSetFile
from masume.rules.masume_tactics.cards import SetFile as TacticsSetFile

#: Where the shipped card sets live (``NAME`` -> ``sets/NAME.toml``).
SETS_DIR = Path(__file__).with_name("sets")


#: A card set file as written, by its ``game``: each game declares its entries
#: (``CardFields``), so the JSON Schema editors read refuses a key no game field names.
CardSetFile = MneSetFile | Es21SetFile | TacticsSetFile


def json_schema() -> dict[str, Any]:
    """The JSON Schema of card set files."""
    schema: dict[str, Any] = msgspec.json.schema(CardSetFile)
    return schema


def find_card_set(name: str | Path) -> Path:
    """The file of a card set given by path, or by the name of a shipped set."""
    path = Path(name)
    if path.suffix == ".toml" or path.exists():
        return path
    shipped = SETS_DIR / f"{name}.toml"
    if shipped.exists():
        return shipped
    known = ", ".join(sorted(p.stem for p in SETS_DIR.glob("*.toml"))) or "none"
    raise CardSetError(f"no card set {str(name)!r}: give a file, or one of: {known}")


def load_card_set(name: str | Path) -> CardSet:
    """The card set named (a shipped set) or at a path, checked (generic checks; the
    game's own come from its rules). Read again only when the file changed since it
    was last read; CardSetError says what is wrong.
    """
    path = find_card_set(name)
    try:
        stat = path.stat()
    except OSError as exc:
        raise CardSetError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return _read(path.resolve(), stat.st_mtime_ns, stat.st_size, path)


@lru_cache(maxsize=16)
def _read(resolved: Path, mtime_ns: int, size: int, path: Path) -> CardSet:
    """The card set in a file, kept while the file keeps its time and size (the key)."""
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CardSetError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as exc:
        raise CardSetError(f"{path}: not TOML: {exc}") from None
    return CardSet(data, path=path, source=source)


def shipped_sets() -> list[str]:
    """Names of the card sets that ship with masume."""
    return sorted(p.stem for p in SETS_DIR.glob("*.toml"))


__all__ = ["Card", "CardEntry", "CardSet", "CardSetError", "CardSetFile", "Copy",
           "find_card_set", "json_schema", "load_card_set",
           "normalise_tag", "shipped_sets"]
