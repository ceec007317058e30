"""Card sets: the cards of a card game as data, and the tags that identify them.

Neither card game publishes its card texts, so a game's cards are a data file
(TOML) that an owner fills in from the cards they hold, in the format below,
with one NFC tag id per physical copy. This module reads those files (layer 2, like
the board definitions): :func:`load_card_set` is the one loader, with the one cache,
and says what is wrong with a file by :class:`CardSetError`. A file is checked by its
game's schema first (:data:`SET_FILES`, msgspec, as board files are): a key no field of
the game names, or a value of the wrong type, is refused with the line and, for a key,
the nearest known one. The engines are given
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
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import msgspec

from masume.rules.card_set import Card, CardEntry, CardSet, CardSetError, Copy, normalise_tag
from masume.rules.eyeshield21.cards import SetFile as Es21SetFile
from masume.rules.eyeshield21.cards import check_cards as es21_check
from masume.rules.magic_number_eleven.cards import SetFile as MneSetFile
from masume.rules.magic_number_eleven.cards import check_cards as mne_check
from masume.rules.masume_tactics.cards import SetFile as TacticsSetFile
from masume.rules.masume_tactics.cards import check_cards as tactics_check
from masume.schema import explain

#: Where the shipped card sets live (``NAME`` -> ``sets/NAME.toml``).
SETS_DIR = Path(__file__).with_name("sets")


#: A card set file as written, by its ``game``: each game declares its entries
#: (``CardFields``); the loader and the JSON Schema editors read refuse a key no field
#: of the game names.
CardSetFile = MneSetFile | Es21SetFile | TacticsSetFile
#: The schema of each game's card set files, by ``game``.
SET_FILES: dict[str, type[msgspec.Struct]] = {
    str(cls.__struct_config__.tag): cls for cls in (MneSetFile, Es21SetFile, TacticsSetFile)}
#: Each game's own checks of a set, whose words say a value of the wrong type best.
_GAME_CHECKS: dict[str, Callable[[CardSet], list[str]]] = {
    "magic-number-eleven": mne_check, "eyeshield21": es21_check, "masume-tactics": tactics_check}


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
    _check_schema(data, source, path)
    return CardSet(data, path=path, source=source)


def _check_schema(data: dict[str, Any], source: str, path: Path) -> None:
    """Refuse a file its game's schema refuses (a set for no known game: CardSet and the
    games say so). An unknown key is named with its line and the nearest known key; a
    value of the wrong type is said in the game's own words where its checks have them
    (every problem of the set, as ``masume cards check`` lists them), else the schema's."""
    game = str(data.get("game", ""))
    schema = SET_FILES.get(game)
    if schema is None:
        return
    try:
        msgspec.convert(data, schema)
        return
    except msgspec.ValidationError as exc:
        problem, unknown = explain(exc, schema, source), "unknown field" in str(exc)
    if unknown:
        fits = [other for other, file in SET_FILES.items()
                if other != game and _fits(data | {"game": other}, file)]
        if fits:
            problem += f" (the file reads as a {fits[0]} set: is game = {game!r} right?)"
        raise CardSetError(f"{path}: {problem}")
    cards = CardSet(data, path=path, source=source)  # the generic checks, every problem
    try:
        problems = _GAME_CHECKS[game](cards)
    except Exception:  # noqa: BLE001 (a value odd enough to trip the game's checks)
        problems = []  # the schema's words then
    raise CardSetError(f"{path}: " + "; ".join(problems or [problem]))


def _fits(data: dict[str, Any], schema: type[msgspec.Struct]) -> bool:
    try:
        msgspec.convert(data, schema)
    except msgspec.ValidationError:
        return False
    return True


def shipped_sets() -> list[str]:
    """Names of the card sets that ship with masume."""
    return sorted(p.stem for p in SETS_DIR.glob("*.toml"))


__all__ = ["SET_FILES", "Card", "CardEntry", "CardSet", "CardSetError", "CardSetFile", "Copy",
           "find_card_set", "json_schema", "load_card_set",
           "normalise_tag", "shipped_sets"]
