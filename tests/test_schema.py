"""The schemas of the data files (masume.schema): every shipped file is valid, a
wrong one is refused with its line and the nearest known key, and the JSON Schemas
published for editors (hardware/schema/) are the ones the host checks with."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from masume.boards import BoardError, BoardFile, board_ids, boards_dir, load_board
from masume.cards import SETS_DIR, CardSetError, CardSetFile, load_card_set
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
    """Issue 13: card set files are checked by the schema as board files are: a key no
    field of the game names is refused, with the file, the line and the nearest known
    key, by the loader and by ``masume cards check`` (exit 1); editors flag it too."""
    source = (SETS_DIR / "eyeshield21-demo.toml").read_text(encoding="utf-8")
    odd = source.replace('name = "Aoki"\n', 'name = "Aoki"\npowr = 3\n', 1)
    with pytest.raises(msgspec.ValidationError, match="unknown field `powr`"):
        msgspec.toml.decode(odd, type=CardSetFile)
    path = tmp_path / "odd.toml"
    path.write_text(odd.replace('id = "eyeshield21-demo"', 'id = "odd"'), encoding="utf-8")
    line = odd.splitlines().index("powr = 3") + 1
    expected = f"{path}: line {line}: [[card]] 1: unknown key 'powr' (did you mean 'power'?)"
    with pytest.raises(CardSetError) as error:
        load_card_set(path)
    assert str(error.value) == expected
    result = subprocess.run([sys.executable, "-m", "masume.cli", "cards", "check", str(path)],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 1 and result.stdout.strip() == expected
    # a table written inline is named by its key, on that key's line
    mne = (SETS_DIR / "magic-number-eleven-demo.toml").read_text(encoding="utf-8")
    lines = mne.splitlines()
    n = next(k for k, text in enumerate(lines) if 'left = "press"' in text)
    path = tmp_path / "mne.toml"
    path.write_text(mne.replace('left = "press"', 'lft = "press"', 1), encoding="utf-8")
    card = sum(1 for text in lines[:n] if text == "[[card]]")
    with pytest.raises(CardSetError, match=re.escape(
            f"line {n + 1}: [[card]] {card}: symbols: unknown key 'lft' (did you mean 'left'?)")):
        load_card_set(path)
    path.write_text(mne.replace('position = "FW"', 'position = "FW"\nshirt = 9', 1),
                    encoding="utf-8")
    with pytest.raises(CardSetError, match=r"unknown key 'shirt' \(known: id, name, kind"):
        load_card_set(path)
    # a wrong type is refused in the game's words where its checks have them ...
    path.write_text(mne.replace('left = "press"', 'left = 3', 1), encoding="utf-8")
    with pytest.raises(CardSetError, match="card H05: symbol 3 is not one of shot, defence"):
        load_card_set(path)
    # ... else with the schema's: the line, the key and the type (also where a value is odd
    # enough to trip the game's checks: never a crash)
    es21 = tmp_path / "es21.toml"
    es21.write_text(source.replace('play = ["pass"]', "play = 5", 1), encoding="utf-8")
    play = source.splitlines().index('play = ["pass"]') + 1
    with pytest.raises(CardSetError, match=re.escape(
            f"line {play}: [[card]] 1: 'play': expected str | array, got int")):
        load_card_set(es21)
    path.write_text(mne.replace('title = "Magic', 'title = 3\n# "Magic', 1), encoding="utf-8")
    title = next(k for k, text in enumerate(lines) if text.startswith("title = ")) + 1
    with pytest.raises(CardSetError, match=re.escape(
            f"line {title}: the top level: 'title': expected str, got int")):
        load_card_set(path)


@pytest.mark.parametrize("path", sorted(SETS_DIR.glob("*.toml")), ids=lambda p: p.stem)
def test_every_shipped_card_set_loads_through_the_schema_and_keeps_its_cards(path: Path) -> None:
    """The schema refuses only what is wrong: each shipped set loads, with the cards, ids
    and fields the file holds (its TOML read as it is)."""
    import tomllib

    data = tomllib.loads(path.read_text(encoding="utf-8"))
    cards = load_card_set(path)
    assert [c.id for c in cards] == [c["id"] for c in data["card"]]
    assert [dict(c.fields) for c in cards] == [
        {k: v for k, v in c.items() if k not in ("id", "name", "kind", "copies", "tags")}
        for c in data["card"]]
