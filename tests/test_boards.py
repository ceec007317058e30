"""Board definitions (hardware/boards/*.toml) and their loader (masume.boards)."""

from __future__ import annotations

import binascii
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from masume import boards
from masume.boards import READER_KINDS, BoardError, board_ids, boards_dir, load_board

#: The five tables and the game each one is for.
GAMES = {
    "soccer-shogi": "soccer-shogi",
    "shogi-soccer": "shogi-soccer",
    "masume-tactics": "masume-tactics",
    "magic-number-eleven": "magic-number-eleven",
    "eyeshield21": "eyeshield21",
}

ALL = board_ids()


def test_the_five_tables_are_defined() -> None:
    assert set(GAMES) <= set(ALL)


@pytest.mark.parametrize("board_id", ALL)
def test_board_loads_with_its_id_and_game(board_id: str) -> None:
    board = load_board(board_id)
    assert board.id == board_id
    if board_id in GAMES:
        assert board.games == (GAMES[board_id],)


@pytest.mark.parametrize("board_id", ALL)
def test_cells_are_numbered_and_named_once(board_id: str) -> None:
    board = load_board(board_id)
    assert [c.index for c in board.cells] == list(range(len(board.cells)))
    names = [c.name for c in board.cells]
    assert len(names) == len(set(names))
    for c in board.cells:
        assert board.cell(c.name) is c and board.cell(c.index) is c


@pytest.mark.parametrize("board_id", ALL)
def test_every_sensed_cell_has_one_address(board_id: str) -> None:
    board = load_board(board_id)
    rows, cols = board.matrix_size
    addresses = [c.matrix for c in board.sensed]
    assert None not in addresses
    assert len(set(addresses)) == len(addresses)
    for c in board.sensed:
        assert 0 <= c.matrix[0] < rows and 0 <= c.matrix[1] < cols
    for c in board.cells:
        if c.sensor == "none":
            assert c.matrix is None
    pins = board.pins
    readers = board.readers
    if readers:
        # Reader numbers run 0..n-1 in cell order and fit the address lines.
        assert [c.reader for c in readers] == list(range(len(readers)))
        assert len(readers) <= 2 ** len(pins["reader_mux"])
    else:
        assert rows <= len(pins["matrix_rows"]) and cols == len(pins["matrix_cols"])
        assert all(c.reader is None for c in board.cells)


@pytest.mark.parametrize("board_id", ALL)
def test_led_chain_has_no_gaps_or_overlaps(board_id: str) -> None:
    board = load_board(board_id)
    used = sorted(i for c in board.cells for i in c.leds)
    assert used == list(range(board.led_count))
    for c in board.cells:  # a cell's own LEDs are consecutive on the chain
        if c.leds:
            assert list(c.leds) == list(range(c.leds[0], c.leds[0] + len(c.leds)))


@pytest.mark.parametrize("board_id", ALL)
def test_serpentine_chain_steps_between_neighbours_within_a_row(board_id: str) -> None:
    board = load_board(board_id)
    if (
        tomllib.loads((boards_dir() / f"{board_id}.toml").read_text()).get("leds", "serpentine")
        != "serpentine"
    ):
        pytest.skip("not a serpentine chain")
    at = {i: c for c in board.cells for i in c.leds}
    lit = [c for c in board.cells if c.leds]
    for i in range(board.led_count - 1):
        a, b = at[i], at[i + 1]
        if a is b or a.y != b.y:
            continue
        lo, hi = sorted((a.x, b.x))
        between = [c.name for c in lit if c.y == a.y and lo < c.x < hi]
        assert not between, f"LED {i} -> {i + 1} ({a.name} -> {b.name}) skips {between}"


def test_serpentine_order_alternates_rows(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "snake",
        _board(
            grid="""
[[grid]]
files = ["a", "b", "c"]
ranks = ["1", "2", "3"]
"""
        ),
    )
    board = load_board(path)
    order = [board.cell(n).leds[0] for n in ("a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3")]
    assert order == [0, 1, 2, 5, 4, 3, 6, 7, 8]


def test_led_segments_are_chained_one_after_the_other(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "segments",
        _board(
            grid="""
[[grid]]
files = ["a", "b"]
ranks = ["1", "2"]

[[cell]]
name = "tray-1"
x = 5
y = 1
segment = "tray"
sensor = "none"

[[cell]]
name = "tray-2"
x = 6
y = 1
segment = "tray"
sensor = "none"
"""
        ),
    )
    board = load_board(path)
    # Without the segment, row y = 1 would run a1 b1 tray-1 tray-2; with it the
    # tray follows the whole grid.
    assert [board.cell(n).leds[0] for n in ("a1", "b1", "b2", "a2", "tray-1", "tray-2")] == list(
        range(6)
    )


def test_hash_is_the_crc32_of_the_canonical_json() -> None:
    for board_id in ALL:
        board = load_board(board_id)
        assert board.hash == binascii.crc32(board.firmware_json()) & 0xFFFFFFFF
        assert load_board(board_id).hash == board.hash


def test_hash_is_the_same_in_every_interpreter() -> None:
    """No set or hash order leaks into the expansion: fresh interpreters with
    different hash seeds compute the same hashes as this one."""
    script = (
        "from masume.boards import board_ids, load_board\n"
        "print(' '.join(f'{i}={load_board(i).hash:08x}' for i in board_ids()))"
    )
    here = " ".join(f"{i}={load_board(i).hash:08x}" for i in ALL)
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        ).stdout.strip()
        assert out == here


def test_hash_does_not_depend_on_the_order_of_pin_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    controller = tomllib.loads(
        (boards.controllers_dir() / "pico-w.toml").read_text(encoding="utf-8")
    )
    lines = ['id = "pico-w"', 'title = "x"', f"gpio = {controller['gpio']}", "[pins]"]
    for key, value in reversed(list(controller["pins"].items())):
        if isinstance(value, dict):
            value = "{ " + ", ".join(f"{k} = {v}" for k, v in reversed(list(value.items()))) + " }"
        elif isinstance(value, str):
            value = f'"{value}"'
        lines.append(f"{key} = {value}")
    (tmp_path / "pico-w.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = load_board("shogi-soccer").hash
    monkeypatch.setattr(boards, "controllers_dir", lambda: tmp_path)
    assert list(boards._load_controller("pico-w")["pins"]) != list(controller["pins"])
    assert load_board("shogi-soccer").hash == expected


@pytest.mark.parametrize(
    "change",
    [
        ('name = "score-home"', 'name = "score-h"'),  # a cell's name
        ('x = 8\ny = 0\nsensor = "none"', 'x = 8\ny = 0\nsensor = "identity"'),  # its sensor
        ('name = "score-home"', 'name = "score-home"\nleds = 2'),  # its LEDs
        ('name = "roll"\n[[button]]\nname = "ground"',
         'name = "ground"\n[[button]]\nname = "roll"'),  # a button's pin (two swapped)
    ],
)
def test_hash_changes_when_a_cell_or_button_changes(
    change: tuple[str, str], tmp_path: Path
) -> None:
    text = (boards_dir() / "masume-tactics.toml").read_text(encoding="utf-8")
    old, new = change
    assert old in text
    path = tmp_path / "masume-tactics.toml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    assert load_board(path).hash != load_board("masume-tactics").hash


def test_brightness_cap_reaches_the_firmware_only_when_defined(tmp_path: Path) -> None:
    assert "brightness" not in load_board(_write(tmp_path, "plain", _board())).firmware_dict()
    board = load_board("masume-tactics")
    assert board.firmware_dict()["brightness"] == board.power["brightness_cap"] < 255


@pytest.mark.parametrize("board_id", ALL)
def test_full_white_at_the_brightness_cap_fits_the_budget(board_id: str) -> None:
    board = load_board(board_id)
    if not board.power:
        pytest.skip("no [power] table")
    cap = board.power["brightness_cap"]
    draw = board.led_count * (1 + 59 * cap / 255)
    assert draw <= board.power["budget_ma"]
    # ...and the cap is as high as the budget allows (one step more would not fit).
    if cap < 255:
        assert board.led_count * (1 + 59 * (cap + 1) / 255) > board.power["budget_ma"]


# --- controllers ---------------------------------------------------------------

NOT_GPIO = {
    # GP23-25 and GP29 belong to the Wi-Fi chip; GP26-28 are the only ones above GP22.
    "pico-w": {23, 24, 25, 29},
    # USB D-/D+, SPI flash, octal PSRAM, UART0 to the USB-UART bridge.
    "esp32-s3": {19, 20, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 43, 44},
}


@pytest.mark.parametrize("name", sorted(NOT_GPIO))
def test_controller_pins_are_real_free_gpios(name: str) -> None:
    controller = boards._load_controller(name)
    always, matrix, readers = boards._pin_uses(controller["pins"])
    pins = {p for _, p in always + matrix + readers}
    assert pins <= set(controller["gpio"])
    assert not pins & NOT_GPIO[name]
    assert not set(controller["gpio"]) & NOT_GPIO[name]
    # LED data, buttons and the status LED never share a pin with anything.
    shared = {p for _, p in always} & {p for _, p in matrix + readers}
    assert not shared
    assert len(controller["pins"]["reader_mux"]) == 8  # 16 banks x 16 readers


def test_esp32_s3_strapping_pins_carry_only_buttons() -> None:
    pins = boards._load_controller("esp32-s3")["pins"]
    always, matrix, readers = boards._pin_uses(pins)
    strapping = {0, 3, 45, 46}
    for key, pin in always + matrix + readers:
        if pin in strapping:
            assert key == "buttons", f"{key} on strapping pin {pin}"
    # Boards with up to three buttons stay off the strapping pins.
    assert not set(pins["buttons"][:3]) & strapping


# --- the tables' geometry --------------------------------------------------------


def test_shogi_soccer_is_nine_by_eleven_plus_two_goal_mouths() -> None:
    board = load_board("shogi-soccer")
    squares = {c.name for c in board.sensed}
    assert squares == {f"{f}-{r}" for f in "123456789" for r in "ABCDEFGHIJK"} | {
        "goal-A",
        "goal-K",
    }
    assert all(c.sensor == "identity" for c in board.sensed)
    # The mouths stick out from 5-A and 5-K; files run left to right, A at the top.
    a, k = board.cell("5-A"), board.cell("5-K")
    assert (board.cell("goal-A").x, board.cell("goal-A").y) == (a.x, a.y + 1)
    assert (board.cell("goal-K").x, board.cell("goal-K").y) == (k.x, k.y - 1)
    assert board.cell("1-K").x < board.cell("9-K").x and k.y < a.y
    assert {c.name for c in board.zone("penalty-gote")} == {
        "4-A",
        "5-A",
        "6-A",
        "4-B",
        "5-B",
        "6-B",
    }
    assert {c.name for c in board.zone("penalty-sente")} == {
        "4-K",
        "5-K",
        "6-K",
        "4-J",
        "5-J",
        "6-J",
    }
    kinds = ("king", "rook", "bishop", "knight", "pawn")
    assert set(board.pieces) == {"ball"} | {f"{s}-{k}" for s in ("sente", "gote") for k in kinds}


def test_shogi_soccer_board_speaks_the_rules_engines_names() -> None:
    """Every square and piece name the rules engine's layout() can use is on the board."""
    from masume.rules.shogi_soccer import GOAL_CELLS, PIECE_NAMES
    from masume.rules.shogi_soccer.geometry import NAMES

    board = load_board("shogi-soccer")
    assert set(NAMES) == {c.name for c in board.sensed}
    assert set(GOAL_CELLS) <= {c.name for c in board.sensed}
    assert set(PIECE_NAMES) == set(board.pieces)


def test_masume_tactics_grid_fits_b3_with_an_odd_pitch_width() -> None:
    board = load_board("masume-tactics")
    sheet = [c for c in board.cells if c.zone not in ("timer", "actions", "die-tray")]
    cols = max(c.x for c in sheet) - min(c.x for c in sheet) + 1
    rows = max(c.y for c in sheet) - min(c.y for c in sheet) + 1
    assert 25 <= board.square_mm <= 30
    assert cols * board.square_mm <= 364 and rows * board.square_mm <= 515
    pitch = [c for c in board.cells if 1 <= c.x <= 11 and 1 <= c.y <= 16]
    assert len(pitch) == 11 * 16 and all(c.sensor == "identity" for c in pitch)
    # Centre file G (x = 6) is the middle of 11; the goals are 3 squares centred on it.
    assert [board.cell(f"{f}0").x for f in "FGH"] == [5, 6, 7]
    assert {c.name for c in board.zone("goal-away")} == {"F17", "G17", "H17"}
    # The centre circle touches 3 x 2 squares of each half.
    circle = board.zone("centre-circle")
    assert sorted(c.name for c in circle if c.y <= 8) == ["F7", "F8", "G7", "G8", "H7", "H8"]
    assert len(circle) == 12
    # Penalty area 7 x 3 (goal area inside it), throw-in squares along both touchlines.
    home_box = board.zone("penalty-area-home") + board.zone("goal-area-home")
    assert len(home_box) == 21 and {c.x for c in home_box} == set(range(3, 10))
    assert {c.y for c in home_box} == {1, 2, 3}
    assert len(board.zone("touch")) == 32 and {c.x for c in board.zone("touch")} == {0, 12}
    assert {c.name for c in board.zone("corner")} == {"B1", "L1", "B16", "L16"}


def test_masume_tactics_knows_shirts_and_kicks() -> None:
    board = load_board("masume-tactics")
    assert set(board.pieces) == {"ball"} | {
        f"{s}-{n}" for s in ("home", "away") for n in range(1, 12)
    }
    assert board.die
    assert {"roll", "ground", "lob", "inside"} <= {b.name for b in board.buttons}
    assert len(board.zone("die-tray")) == 7 and len(board.zone("timer")) == 10


def test_magic_number_eleven_field_and_tracks() -> None:
    board = load_board("magic-number-eleven")
    for side in "HA":
        field = {c.name for c in board.cells if re.fullmatch(side + r"[1-4][a-f]", c.name)}
        assert len(field) == 24
        assert all(board.cell(n).sensor == "card" for n in field)
        # Columns run from the owner's left: home's a is on the left, away's on the right.
        a, f = board.cell(f"{side}1a"), board.cell(f"{side}1f")
        assert (a.x < f.x) == (side == "H")
        # Row 1 (the front) meets the other side's front row at the halfway line.
        assert board.cell(f"{side}1a").y in (3, 4)
    for side in ("home", "away"):
        assert len(board.zone(f"{side}-synergy")) == 3
        assert len(board.zone(f"{side}-bench")) == 3
        assert all(c.sensor == "none" for c in board.zone(f"{side}-score"))
    track = board.zone("initiative")
    assert len(track) % 2 == 1 and all(c.sensor == "none" and c.leds for c in track)
    assert {"penalty-home", "penalty-away", "synergy-deck"} <= {c.name for c in board.sensed}


def test_eyeshield21_zones_per_side() -> None:
    board = load_board("eyeshield21")
    sizes = {
        "character": 5,
        "reaction": 2,
        "bench": 3,
        "guts": 1,
        "deck": 1,
        "discard": 1,
        "pass": 8,
        "run": 8,
    }
    for side in ("home", "away"):
        for zone, n in sizes.items():
            cells = board.zone(f"{side}-{zone}")
            assert len(cells) == n, (side, zone)
            assert all(c.sensor == "card" for c in cells)
        assert board.has_cell(f"{side}-pass-ball") and board.has_cell(f"{side}-run-ball")
    # Each side's halves of the pass and run areas lie on its own side of the middle.
    assert max(c.y for c in board.zone("home-pass")) < min(c.y for c in board.zone("away-pass"))


# --- malformed definitions ------------------------------------------------------------


def _board(controller: str = "pico-w", extra: str = "", grid: str | None = None) -> str:
    head = f'id = "t"\ntitle = "test"\ncontroller = "{controller}"\n{extra}\n'
    return head + (grid if grid is not None else '[[grid]]\nfiles = ["a", "b"]\nranks = ["1"]\n')


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


MALFORMED = {
    "unknown-sensor": (_board(extra='sensor = "sonar"'), r"unknown sensor kind 'sonar'"),
    "duplicate-names": (
        _board(grid='[[grid]]\nfiles = ["a", "a"]\nranks = ["1"]\n'),
        r"cell names used twice: a1",
    ),
    "unknown-controller": (_board(controller="arduino-uno"), r"unknown controller 'arduino-uno'"),
    "too-many-buttons": (
        _board() + "".join(f'[[button]]\nname = "b{i}"\n' for i in range(6)),
        r"6 buttons but the controller has 5 button pins",
    ),
    "die-without-roll": (
        _board(extra="die = true") + '[[button]]\nname = "confirm"\n',
        r"a board with a die needs a button named 'roll'",
    ),
    "duplicate-buttons": (
        _board() + '[[button]]\nname = "roll"\n[[button]]\nname = "roll"\n',
        r"button names used twice: roll",
    ),
    "missing-id": ('title = "x"\ncontroller = "pico-w"\n', r"missing 'id'"),
    "no-cells": (_board(grid=""), r"no cells"),
    "presence-over-matrix": (
        _board(
            grid='[[grid]]\nfiles = ["a","b","c","d","e","f","g","h","i"]\n'
            'ranks = ["1","2","3","4","5","6","7","8"]\n'
        ),
        r"72 sensed cells need a 9 x 8 matrix; controller pico-w drives 8 rows",
    ),
    "readers-over-capacity": (
        _board(
            extra='sensor = "card"',
            grid="[[grid]]\nfiles = [" + ",".join(f'"{i}"' for i in range(17)) + "]\n"
            "ranks = [" + ",".join(f'"r{j}"' for j in range(16)) + "]\n",
        ),
        r"272 sensed cells on the reader tree but controller pico-w addresses 256",
    ),
    "unknown-top-level-key": (_board(extra="colour = 3"), r"the top level: unknown key 'colour'"),
    "unknown-grid-key": (
        _board(grid='[[grid]]\nfiles = ["a"]\nranks = ["1"]\nsenser = "card"\n'),
        r"line 8: \[\[grid\]\] 1: unknown key 'senser' \(did you mean 'sensor'\?\)",
    ),
    "unknown-readers-key": (
        _board(extra='sensor = "card"\n[readers]\nfeilds = 2\n'),
        r"\[readers\]: unknown key 'feilds'",
    ),
    "readers-without-readers": (
        _board(extra="[readers]\nfields = 2\n"), r"a \[readers\] table, but no identity or card"
    ),
    "readers-too-many-fields": (
        _board(extra='sensor = "card"\n[readers]\nfields = 17\n'),
        r"\[readers\] fields must be a whole number 1-16",
    ),
    "readers-reeds-not-bool": (
        _board(extra='sensor = "card"\n[readers]\nreeds = "yes"\n'),
        r"line 6: \[readers\]: 'reeds': expected bool, got str",
    ),
    "reeds-under-cards": (
        _board(extra='sensor = "card"\n[readers]\nreeds = true\n'),
        r"reeds = true needs identity cells \(a card carries no magnet\)",
    ),
    "identity-without-pieces": (
        _board(extra='sensor = "identity"'),
        r"identity cells need a \[pieces\] table",
    ),
    "bad-piece-code": (
        _board(extra='sensor = "identity"\n[pieces]\nball = 300\n'),
        r"piece codes must be",
    ),
    "zone-unknown-cell": (
        _board() + '[zones]\ngoal = ["z9"]\n',
        r"zone 'goal' lists 'z9', which is not a cell",
    ),
    "zone-twice": (
        _board() + '[zones]\ngoal = ["a1"]\nbox = ["a1"]\n',
        r"cell a1 is listed in zones 'goal' and 'box'",
    ),
    "unknown-chain": (_board(extra='leds = "zigzag"'), r"unknown LED chain 'zigzag'"),
    "explicit-gap": (
        _board(extra='leds = "explicit"', grid="")
        + '[[cell]]\nname = "p"\nx = 0\ny = 0\nled = 0\n'
        + '[[cell]]\nname = "q"\nx = 1\ny = 0\nled = 2\n',
        r"explicit LED chain has gaps at 1",
    ),
    "explicit-shared": (
        _board(extra='leds = "explicit"', grid="")
        + '[[cell]]\nname = "p"\nx = 0\ny = 0\nled = 0\n'
        + '[[cell]]\nname = "q"\nx = 1\ny = 0\nled = 0\n',
        r"two cells share an LED",
    ),
    "negative-leds": (
        _board(grid='[[grid]]\nfiles = ["a"]\nranks = ["1"]\nleds = -1\n'),
        r"'leds' must be",
    ),
    "grid-without-files": (_board(grid='[[grid]]\nranks = ["1"]\n'),
                           r"line \d+: \[\[grid\]\] 1: missing 'files'"),
    "power-over-budget": (
        _board() + "[power]\nbudget_ma = 100\nbrightness_cap = 255\n",
        r"2 LEDs at full white with brightness_cap 255 draw 120 mA, over the budget of 100 mA",
    ),
    "power-incomplete": (_board() + "[power]\nbudget_ma = 100\n", r"line \d+: \[power\]: missing 'brightness_cap'"),
    "not-toml": ("id = ", r"t.toml: "),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_definitions_are_refused_with_a_reason(case: str, tmp_path: Path) -> None:
    text, message = MALFORMED[case]
    path = _write(tmp_path, "t", text)
    with pytest.raises(BoardError, match=message) as info:
        load_board(path)
    assert "t.toml" in str(info.value)  # the message names the file


def test_unknown_board_id_lists_the_known_ones() -> None:
    with pytest.raises(BoardError, match=r"unknown board 'chess'; known boards: .*masume-tactics"):
        load_board("chess")


def test_controller_with_a_pin_used_twice_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (boards.controllers_dir() / "pico-w.toml").read_text(encoding="utf-8")
    (tmp_path / "bad.toml").write_text(
        text.replace("buttons = [17,", "buttons = [16,"), encoding="utf-8"
    )
    (tmp_path / "gp29.toml").write_text(
        text.replace("led_data = 16", "led_data = 29"), encoding="utf-8"
    )
    monkeypatch.setattr(boards, "controllers_dir", lambda: tmp_path)
    with pytest.raises(
        BoardError, match=r"controller bad: pin 16 used twice \(led_data, buttons\)"
    ):
        load_board(_write(tmp_path / "..", "t1", _board(controller="bad")))
    with pytest.raises(BoardError, match=r"controller gp29: led_data pin 29 is not a usable GPIO"):
        load_board(_write(tmp_path / "..", "t2", _board(controller="gp29")))


NO_SENSE_LINE = {
    "presence-beside-readers": (
        _board() + '[[cell]]\nname = "zone"\nx = 3\ny = 0\nsensor = "card"\n',
        r"presence cells beside readers need the reader sense line; controller nosense",
    ),
    "reeds": (
        _board(extra='sensor = "identity"\n[pieces]\nball = 1\n[readers]\nreeds = true\n'),
        r"reeds under identity cells need the reader sense line; controller nosense",
    ),
}


@pytest.mark.parametrize("case", sorted(NO_SENSE_LINE))
def test_reeds_need_a_controller_with_a_sense_line(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (boards.controllers_dir() / "pico-w.toml").read_text(encoding="utf-8")
    assert "reader_sense = 10" in text
    (tmp_path / "nosense.toml").write_text(
        text.replace("reader_sense = 10", "").replace('id = "pico-w"', 'id = "nosense"'),
        encoding="utf-8",
    )
    monkeypatch.setattr(boards, "controllers_dir", lambda: tmp_path)
    board, message = NO_SENSE_LINE[case]
    with pytest.raises(BoardError, match=message):
        load_board(_write(tmp_path / "..", "t", board.replace('"pico-w"', '"nosense"')))


def test_presence_cells_beside_readers_sit_on_the_reader_tree(tmp_path: Path) -> None:
    """The hybrid the sensing design allows: a presence cell is a reed on the sense
    line at its tree address, between the readers' addresses, with no reader."""
    text = _board(extra='sensor = "card"', grid='[[grid]]\nfiles = ["a", "b"]\nranks = ["1"]\n')
    text += '[[cell]]\nname = "tray"\nx = 3\ny = 0\nsensor = "presence"\n'
    text += '[[cell]]\nname = "deck"\nx = 4\ny = 0\n'
    board = load_board(_write(tmp_path, "mixed", text))
    assert [c.matrix for c in board.sensed] == [(0, 0), (0, 1), (0, 2), (0, 3)]
    assert board.cell("tray").reader is None and board.cell("deck").reader == 3
    assert [c.name for c in board.readers] == ["a1", "b1", "deck"]
    cells = board.firmware_dict()["cells"]
    assert cells[2] == ["tray", "presence", [2], [0, 2]]
    assert cells[3] == ["deck", "card", [3], [0, 3, 8, 0]]  # position in half units
    assert board.firmware_dict()["readers"] == {"fields": 1, "reeds": False}


def test_reader_boards_give_the_firmware_their_reader_setup() -> None:
    tactics = load_board("masume-tactics")
    assert tactics.firmware_dict()["readers"] == {"fields": 8, "reeds": True}
    g5 = tactics.cell("G5")
    assert tactics.firmware_dict()["cells"][g5.index][3] == [*g5.matrix, 12, 10]
    assert load_board("magic-number-eleven").reader_setup == {"fields": 8, "reeds": False}
    assert "readers" not in load_board("soccer-shogi-reed").firmware_dict()


def test_reader_cells_are_addressed_bank_and_channel(tmp_path: Path) -> None:
    grid = (
        "[[grid]]\nfiles = ["
        + ",".join(f'"{i}"' for i in range(20))
        + ']\nranks = ["r"]\nname = "c{file}"\n'
    )
    board = load_board(_write(tmp_path, "cards", _board(extra='sensor = "card"', grid=grid)))
    assert board.cell("c0").matrix == (0, 0)
    assert board.cell("c15").matrix == (0, 15)
    assert board.cell("c16").matrix == (1, 0) and board.cell("c16").reader == 16
    assert board.matrix_size == (2, 16)
    assert all(c.sensor in READER_KINDS for c in board.readers)


# --- the documentation agrees with the definitions ----------------------------------

HARDWARE = boards_dir().parent


def test_readme_example_loads_as_described(tmp_path: Path) -> None:
    text = (HARDWARE / "README.md").read_text(encoding="utf-8")
    example = re.search(r"```toml\n(.*?)```", text, re.S).group(1)
    board = load_board(_write(tmp_path, "mini", example))
    assert [board.cell(n).leds[0] for n in ("A1", "B1", "C1", "C2", "B2", "A2", "goal")] == list(
        range(7)
    )
    assert [c.matrix for c in board.cells] == [(0, k) for k in range(7)]
    assert board.cell("A1").zone == "corner" and board.button("confirm").pin == 17


@pytest.mark.parametrize("board_id", ALL)
def test_parts_list_counts_match_the_definition(board_id: str) -> None:
    text = (HARDWARE / "parts.md").read_text(encoding="utf-8")
    section = re.search(rf"^## {re.escape(board_id)} \(.*?(?=^## |\Z)", text, re.S | re.M)
    assert section, f"parts.md has no section for {board_id}"
    body = section.group(0)
    board = load_board(board_id)

    def count(part: str) -> int:
        row = re.search(rf"^\| {part}[^|]*\| (\d+)", body, re.M)
        assert row, f"{board_id}: no '{part}' row"
        return int(row.group(1))

    assert count("WS2812B") == board.led_count
    assert count("buttons") == len(board.buttons)
    if board.readers:
        assert count("readers") == len(board.readers)
        assert count("74HC154") == 1 + board.matrix_size[0]
        identity = [c for c in board.readers if c.sensor == "identity"]
        if board.reader_setup["reeds"]:
            assert count("reed switches") == count("BAT54") == len(identity)
        else:
            assert not re.search(r"^\| reed switches", body, re.M)
    else:
        assert count("reed switches") == count("diodes") == len(board.sensed)
    assert f"full white, uncapped | {board.led_count * 60} mA" in body
    if board.power:
        assert f"**{board.power['brightness_cap']}**" in body
