"""The schemas of the data files (masume.schema): every shipped file is valid, a
wrong one is refused with its line and the nearest known key, and the JSON Schemas
published for editors (hardware/schema/) are the ones the host checks with."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from masume.boards import BoardError, BoardFile, board_ids, boards_dir, load_board
from masume.cards import CardSetFile, SETS_DIR, load_card_set
from masume.cli.schema import schemas, text

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("board", board_ids())
def test_every_board_definition_is_valid_by_the_schema(board: str) -> None:
    source = (boards_dir() / f"{board}.toml").read_text(encoding="utf-8")
    assert msgspec.toml.decode(source, type=BoardFile).id == board


@pytest.mark.parametrize("path", sorted(SETS_DIR.glob("*.toml")), ids=lambda p: p.stem)
def test_every_card_set_is_valid_by_the_schema(path: Path) -> None:
    cards = msgspec.toml.decode(path.read_text(encoding="utf-8"), type=CardSetFile)
    assert cards.id == path.stem and cards.card


def test_a_misspelt_key_names_the_file_the_line_and_the_nearest_key(tmp_path: Path) -> None:
    source = (boards_dir() / "soccer-shogi.toml").read_text(encoding="utf-8")
    lines = source.splitlines()
    n = next(k for k, line in enumerate(lines) if line.startswith("sensor = "))
    lines[n] = lines[n].replace("sensor", "sensors", 1)
    path = tmp_path / "misspelt.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(BoardError) as error:
        load_board(path)
    assert str(error.value) == (f"misspelt.toml: line {n + 1}: the top level: unknown key "
                                "'sensors' (did you mean 'sensor'?)")


def test_a_wrong_type_says_the_key_and_the_type(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('id = "t"\ntitle = "t"\ncontroller = "pico-w"\ndie = "yes"\n')
    with pytest.raises(BoardError, match=r"^t.toml: line 4: the top level: 'die': "
                       r"expected bool, got str$"):
        load_board(path)


@pytest.mark.parametrize("name", sorted(schemas()))
def test_the_published_json_schemas_are_current(name: str) -> None:
    """``masume schema`` wrote them; run it again after changing a schema."""
    published = (ROOT / "hardware" / "schema" / name).read_text(encoding="utf-8")
    assert published == text(schemas()[name])


def test_each_game_declares_its_card_fields(tmp_path: Path) -> None:
    """A key no field of the game names: the schema refuses it (editors flag it), and
    ``masume cards check`` warns while the set still plays (it was valid before)."""
    from masume.games import load_rules

    source = (SETS_DIR / "eyeshield21-demo.toml").read_text(encoding="utf-8")
    odd = source.replace('name = "Aoki"\n', 'name = "Aoki"\ncolour = "red"\n', 1)
    with pytest.raises(msgspec.ValidationError, match="unknown field `colour`"):
        msgspec.toml.decode(odd, type=CardSetFile)
    path = tmp_path / "odd.toml"
    path.write_text(odd.replace('id = "eyeshield21-demo"', 'id = "odd"'), encoding="utf-8")
    rules = load_rules("eyeshield21")
    cards = load_card_set(path)
    assert rules.check_cards(cards) == []
    assert rules.card_warnings(cards) == [
        "card F01: field 'colour' is not one the eyeshield21 rules read"]
    mne = (SETS_DIR / "magic-number-eleven-demo.toml").read_text(encoding="utf-8")
    with pytest.raises(msgspec.ValidationError, match="unknown field `shirt`"):
        msgspec.toml.decode(mne.replace('position = "FW"', 'position = "FW"\nshirt = 9', 1),
                            type=CardSetFile)
