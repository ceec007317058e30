"""Card set files: loading, lookups and the generic checks (masume.cards)."""

from __future__ import annotations

from pathlib import Path

import pytest

from masume.cards import CardSetError, load_card_set, normalise_tag

SET = """
id = "tiny"
game = "magic-number-eleven"
title = "Two cards"
published_counts = false

[[card]]
id = "P1"
name = "Keeper"
kind = "player"
tags = ["04a1b2c3d4e5f6"]
position = ["GK"]

[[card]]
id = "S1"
name = "Synergy"
kind = "synergy"
copies = 2
tags = ["04:00:00:00:00:00:01"]
stars = 3
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_set_loads_with_copies_tags_and_game_fields(tmp_path: Path) -> None:
    cards = load_card_set(write(tmp_path, SET))
    assert (cards.id, cards.game, len(cards)) == ("tiny", "magic-number-eleven", 2)
    assert [c.id for c in cards.copies()] == ["P1", "S1.1", "S1.2"]
    keeper = cards.by_tag("04A1B2C3D4E5F6")
    assert keeper is not None and keeper.card.name == "Keeper" and keeper.card["position"] == ["GK"]
    assert keeper.piece == "tag:04A1B2C3D4E5F6"
    assert cards.copy("S1.1").tag == "04000000000001"
    assert [c.id for c in cards.untagged()] == ["S1.2"]
    assert cards.card("S1")["stars"] == 3
    assert cards.extra == {"published_counts": False}  # the game's own keys, for the game
    # a key the game's schema does not name is refused (issue 13), with the nearest one
    with pytest.raises(CardSetError, match=r"tiny.toml: line 5: the top level: unknown key "
                                           r"'title_font' \(did you mean 'title'\?\)"):
        load_card_set(write(tmp_path, SET.replace("published_counts = false",
                                                  'title_font = "serif"')))
    assert load_card_set(write(tmp_path, SET)) == cards  # same content, equal sets


@pytest.mark.parametrize("change, message", [
    (('id = "P1"\nname = "Keeper"', 'id = "S1"\nname = "Keeper"'), "card S1: the id is used twice"),
    (('"04a1b2c3d4e5f6"', '"xyz"'), "'xyz' is not an NFC tag id"),
    (('["04:00:00:00:00:00:01"]', '["04a1b2c3d4e5f6"]'), "tag 04A1B2C3D4E5F6 is already P1's"),
    (("copies = 2", "copies = 0"), "copies must be a whole number"),
    (('kind = "player"\n', ""), "card P1: kind missing"),
    (('game = "magic-number-eleven"\n', ""), "game: missing"),
    (("[[card]]", "[[card]"), "not TOML"),
])
def test_every_problem_is_named(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    with pytest.raises(CardSetError, match=message.replace("(", r"\(")) as error:
        load_card_set(write(tmp_path, SET.replace(*change, 1)))
    assert str(tmp_path) in str(error.value)


def test_unknown_set_names_the_shipped_ones() -> None:
    with pytest.raises(CardSetError, match="no card set 'nonesuch'"):
        load_card_set("nonesuch")


def test_tags_are_normalised_as_readers_report_them() -> None:
    assert normalise_tag("04 a1-b2:c3") == "04A1B2C3"
    with pytest.raises(ValueError):
        normalise_tag("04A1B2")
