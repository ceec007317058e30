"""Board definitions: hardware/boards/*.toml read into one explicit table.

A definition is data (format in hardware/README.md), checked by its schema
(:class:`BoardFile`: unknown keys and wrong types are refused with the file, the
line and the nearest known key; hardware/schema/board.schema.json for editors). This
module then expands its
compact grid blocks into cells, numbers the cells (the protocol's addresses),
assigns LED chain positions and sensor addresses (a (row, column) in the presence
matrix, or a (bank, channel) reader chip-select address for identity and card
sensors), and checks the result against the controller's pin map.
The firmware gets the expanded table as JSON (:meth:`Board.firmware_json`) and
reports its CRC-32 in the handshake, so the host never drives a board with a
different map.

>>> board = load_board("soccer-shogi")
>>> board.cell("C5").sensor
'identity'
>>> board.cell(board.cell("C5").index).name
'C5'
"""

from __future__ import annotations

import binascii
import json
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec

from masume.schema import explain

SENSOR_KINDS = ("presence", "identity", "card", "none")
#: Sensor kinds read by a reader (RFID/NFC) behind the reader chip-select tree.
READER_KINDS = ("identity", "card")
LED_CHAINS = ("serpentine", "rows", "explicit")
FORMAT_VERSION = 1
#: Readers per bank of the chip-select tree: one 4-to-16 decoder (74HC154) per bank.
READERS_PER_BANK = 16
#: The [readers] table (hardware/README.md, "Sensing identity and cards"): how many
#: readers may have their RF field on at once, and whether a reed switch under every
#: identity cell (on the reader sense line) tells which cell changed.
READER_SETUP_DEFAULTS = {"fields": 1, "reeds": False}
MAX_FIELDS = 16
#: Worst-case current of one WS2812B at full white (3 x 20 mA), for the power check,
#: of which about 1 mA is drawn even when the LED is dark.
LED_FULL_WHITE_MA = 60
LED_DARK_MA = 1


#: A zone named ``SIDE-hand`` holds that side's hand slots (:meth:`Board.hand_slots`).
HAND_ZONE = "-hand"


class BoardError(ValueError):
    """A board definition that cannot be used, with the file and the reason."""


# ---- the schema of a definition (hardware/README.md): what it may say -------------------
# Anything else is refused, so a misspelt key is an error rather than a silently
# ignored setting (renaming ``sensor`` to ``sensors`` once turned 46 identity cells
# into presence cells). The values' meaning is checked below (_expand).


class GridBlock(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """``[[grid]]``: a block of cells, one per file and rank."""

    files: list[str | int]
    ranks: list[str | int]
    #: The cells' names, from ``{file}`` and ``{rank}``.
    name: str = "{file}{rank}"
    x: float = 0
    y: float = 0
    zone: str = "pitch"
    #: One of SENSOR_KINDS; the definition's ``sensor`` by default.
    sensor: str | None = None
    leds: int = 1
    segment: str = ""


class CellEntry(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """``[[cell]]``: one cell (a goal square, a card zone, a status light)."""

    name: str
    x: float
    y: float
    zone: str = "other"
    sensor: str | None = None
    leds: int = 1
    #: Its first position on an ``explicit`` LED chain.
    led: int | None = None
    segment: str = ""


class ButtonEntry(msgspec.Struct, forbid_unknown_fields=True):
    """``[[button]]``: a button, on the controller's next button pin."""

    name: str


class PowerTable(msgspec.Struct, forbid_unknown_fields=True):
    """``[power]``: the LEDs' current budget and the firmware's brightness cap (1-255)."""

    budget_ma: int
    brightness_cap: int


class ReadersTable(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """``[readers]``: RF fields on at once (1-16), and reeds under identity cells."""

    fields: int = 1  # as READER_SETUP_DEFAULTS
    reeds: bool = False


class BoardFile(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """A board definition file (hardware/boards/*.toml), as written."""

    id: str
    title: str
    controller: str
    games: list[str] = []
    square_mm: float = 30
    #: The cells' sensor kind unless they say otherwise (one of SENSOR_KINDS).
    sensor: str = "presence"
    #: How the LED chain runs (one of LED_CHAINS).
    leds: str = "serpentine"
    die: bool = False
    #: Piece name -> the code (1-255) its identity tag holds.
    pieces: dict[str, int] = {}
    power: PowerTable | None = None
    readers: ReadersTable | None = None
    #: Zone name -> the cells in it, whatever their block says.
    zones: dict[str, list[str]] = {}
    grid: list[GridBlock] = []
    cell: list[CellEntry] = []
    button: list[ButtonEntry] = []


@dataclass(frozen=True)
class Cell:
    """One addressable place: a square, a goal square, a card zone or a status light."""

    index: int
    name: str
    zone: str
    x: float
    y: float
    sensor: str  # one of SENSOR_KINDS
    leds: tuple[int, ...]  # positions on the LED chain; () for none
    #: Sensor address, for sensed cells: (row, column) in the presence matrix, or,
    #: on a board with readers, (bank, channel) on the reader chip-select tree
    #: (the cell's reader, and for a presence cell its reed on the sense line).
    matrix: tuple[int, int] | None

    @property
    def reader(self) -> int | None:
        """The reader number (bank * 16 + channel) of an identity or card cell, else None."""
        if self.sensor in READER_KINDS and self.matrix is not None:
            return self.matrix[0] * READERS_PER_BANK + self.matrix[1]
        return None

    @property
    def half_units(self) -> tuple[int, int]:
        """The position in half grid units, as the firmware gets it for a reader cell
        (it keeps the fields of neighbouring readers from being on at once)."""
        return round(2 * self.x), round(2 * self.y)


@dataclass(frozen=True)
class Button:
    index: int
    name: str
    pin: int


@dataclass(frozen=True)
class Board:
    """An expanded board definition. Cells are addressed by index or by name."""

    id: str
    title: str
    games: tuple[str, ...]
    controller: str
    pins: dict[str, Any]
    square_mm: float
    pieces: dict[str, int]
    cells: tuple[Cell, ...]
    buttons: tuple[Button, ...]
    die: bool
    led_count: int
    #: (rows, columns) of the presence matrix in use, or (banks, channels per bank)
    #: of the reader chip-select tree on a board sensed by readers.
    matrix_size: tuple[int, int]
    source: str = ""
    #: Optional LED power limits from the definition's [power] table:
    #: {"budget_ma": int, "brightness_cap": int}; {} when the definition has none.
    power: dict[str, int] = field(default_factory=dict)
    #: The [readers] table with its defaults filled in ({"fields": int, "reeds": bool})
    #: on a board with identity or card cells; {} on a board without readers.
    reader_setup: dict[str, Any] = field(default_factory=dict)
    _by_name: dict[str, Cell] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._by_name.update({c.name: c for c in self.cells})

    def cell(self, key: int | str) -> Cell:
        """The cell with this index or name; KeyError names the board."""
        if isinstance(key, int):
            if 0 <= key < len(self.cells):
                return self.cells[key]
        elif key in self._by_name:
            return self._by_name[key]
        raise KeyError(f"board {self.id!r} has no cell {key!r}")

    def has_cell(self, name: str) -> bool:
        return name in self._by_name

    @property
    def sensed(self) -> tuple[Cell, ...]:
        """Cells with a sensor, in index order."""
        return tuple(c for c in self.cells if c.sensor != "none")

    def button(self, key: int | str) -> Button:
        for b in self.buttons:
            if b.index == key or b.name == key:
                return b
        raise KeyError(f"board {self.id!r} has no button {key!r}")

    def piece_name(self, code: int) -> str:
        for name, c in self.pieces.items():
            if c == code:
                return name
        return f"piece-{code}"

    def piece_code(self, name: str) -> int:
        try:
            return self.pieces[name]
        except KeyError:
            known = ", ".join(self.pieces)
            raise KeyError(f"board {self.id!r} has no piece {name!r} (pieces: {known})") from None

    @property
    def readers(self) -> tuple[Cell, ...]:
        """Cells read by a reader (identity and card), in reader-number order."""
        return tuple(c for c in self.cells if c.sensor in READER_KINDS)

    def zone(self, zone: str) -> tuple[Cell, ...]:
        """The cells of one zone, in index order (empty if the zone is unknown)."""
        return tuple(c for c in self.cells if c.zone == zone)

    def hand_slots(self, side: str) -> tuple[Cell, ...]:
        """The side's hand slots (zone ``SIDE-hand``), in index order: the computer's
        hand lies there face down, read by their readers (docs/ai.md, "The computer's
        hand"). They are no part of the game's layout: the tracker never reads them."""
        return self.zone(f"{side}{HAND_ZONE}")

    @cached_property  # asked for every cell a tracker reads (frozen: it stays)
    def hand_cells(self) -> frozenset[str]:
        """The names of every side's hand slots (:meth:`hand_slots`)."""
        return frozenset(c.name for c in self.cells if c.zone.endswith(HAND_ZONE))

    def firmware_dict(self) -> dict[str, Any]:
        """What the firmware needs, in a compact canonical form."""
        out = {
            "format": FORMAT_VERSION,
            "id": self.id,
            "controller": self.controller,
            "pins": self.pins,
            "cells": [[c.name, c.sensor, list(c.leds), self._address(c)] for c in self.cells],
            "buttons": [[b.name, b.pin] for b in self.buttons],
            "die": self.die,
            "led_count": self.led_count,
            "matrix": list(self.matrix_size),
        }
        # The firmware's LED brightness cap (0-255, scales every colour), from the
        # definition's [power] table. Only present when there is one, so
        # definitions without it keep their bytes (and their hash) exactly; the
        # firmware then runs at 255.
        if self.power:
            out["brightness"] = self.power["brightness_cap"]
        # Only on boards with readers, for the same reason.
        if self.reader_setup:
            out["readers"] = self.reader_setup
        return out

    @staticmethod
    def _address(cell: Cell) -> list[int]:
        """A cell's fourth entry in board.json: its sensor address, and for a reader
        cell its position in half grid units after it ([bank, channel, x2, y2])."""
        if cell.matrix is None:
            return []
        if cell.sensor in READER_KINDS:
            return [*cell.matrix, *cell.half_units]
        return list(cell.matrix)

    def firmware_json(self) -> bytes:
        """The canonical bytes the firmware stores as board.json."""
        return json.dumps(self.firmware_dict(), sort_keys=True, separators=(",", ":")).encode()

    @cached_property  # asked at every handshake: a club server meets many (frozen: it stays)
    def hash(self) -> int:
        """CRC-32 of :meth:`firmware_json`; both sides compare it in the handshake."""
        return binascii.crc32(self.firmware_json()) & 0xFFFFFFFF


def json_schema() -> dict[str, Any]:
    """The JSON Schema of board definition files (:class:`BoardFile`)."""
    return msgspec.json.schema(BoardFile)


def boards_dir() -> Path:
    return Path(str(resources.files("masume_hardware"))) / "boards"


def controllers_dir() -> Path:
    return Path(str(resources.files("masume_hardware"))) / "controllers"


def board_ids() -> list[str]:
    return sorted(p.stem for p in boards_dir().glob("*.toml"))


def load_board(key: str | Path) -> Board:
    """Load a board by id (a file in hardware/boards/) or by path to a .toml file."""
    path = Path(key)
    if path.suffix != ".toml":
        path = boards_dir() / f"{key}.toml"
        if not path.is_file():
            known = ", ".join(board_ids())
            raise BoardError(f"unknown board {str(key)!r}; known boards: {known}")
    try:
        source = path.read_text(encoding="utf-8")
        data = tomllib.loads(source)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise BoardError(f"{path}: {exc}") from exc
    try:
        msgspec.convert(data, BoardFile)
    except msgspec.ValidationError as exc:
        raise BoardError(f"{path.name}: {explain(exc, BoardFile, source)}") from None
    try:
        return _expand(data, path)
    except BoardError as exc:
        raise BoardError(f"{path.name}: {exc}") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise BoardError(f"{path.name}: malformed definition ({exc})") from None


def _load_controller(name: str) -> dict[str, Any]:
    path = controllers_dir() / f"{name}.toml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in controllers_dir().glob("*.toml")))
        raise BoardError(f"unknown controller {name!r}; known controllers: {known}")
    controller = tomllib.loads(path.read_text(encoding="utf-8"))
    _check_controller(name, controller)
    return controller


def _pin_uses(
    pins: dict[str, Any],
) -> tuple[list[tuple[str, int]], list[tuple[str, int]], list[tuple[str, int]]]:
    """The controller's GPIOs as (key, pin) pairs: (always used, matrix, readers)."""
    always = [("led_data", pins["led_data"])] if "led_data" in pins else []
    always += [("buttons", p) for p in pins.get("buttons", [])]
    if isinstance(pins.get("status_led"), int):  # "LED" names the Pico W's Wi-Fi-chip LED
        always.append(("status_led", pins["status_led"]))
    matrix = [("matrix_rows", p) for p in pins.get("matrix_rows", [])]
    matrix += [("matrix_cols", p) for p in pins.get("matrix_cols", [])]
    readers = [(f"reader_spi.{k}", v) for k, v in pins.get("reader_spi", {}).items() if k != "id"]
    for key in ("reader_cs", "reader_sense"):
        if key in pins:
            readers.append((key, pins[key]))
    readers += [("reader_mux", p) for p in pins.get("reader_mux", [])]
    return always, matrix, readers


def _check_controller(name: str, controller: dict[str, Any]) -> None:
    """Pins must be usable GPIOs, and a pin serves one purpose.

    The presence matrix and the readers may share pins with each other (a board
    senses through one of them, see _expand), but never with the LED data line,
    the buttons or the status LED, which every board uses.
    """
    pins = controller.get("pins")
    if not isinstance(pins, dict) or "led_data" not in pins:
        raise BoardError(f"controller {name}: no [pins] table with led_data")
    always, matrix, readers = _pin_uses(pins)
    usable = controller.get("gpio")
    if usable is not None:
        for key, pin in always + matrix + readers:
            if pin not in usable:
                raise BoardError(f"controller {name}: {key} pin {pin} is not a usable GPIO")
    for group in (always + matrix, always + readers):
        seen: dict[int, str] = {}
        for key, pin in group:
            if pin in seen:
                raise BoardError(f"controller {name}: pin {pin} used twice ({seen[pin]}, {key})")
            seen[pin] = key


def _names(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not value:
        raise BoardError(f"{what} must be a non-empty list")
    return [str(v) for v in value]


def _expand(data: dict[str, Any], path: Path) -> Board:
    """The definition ``data`` (valid by its schema, :class:`BoardFile`) expanded."""
    controller = _load_controller(data["controller"])
    pins = dict(controller["pins"])
    default_sensor = data.get("sensor", "presence")

    raw: list[dict[str, Any]] = []
    for n, block in enumerate(data.get("grid", []), 1):
        files = _names(block.get("files"), f"grid block {n}: 'files'")
        ranks = _names(block.get("ranks"), f"grid block {n}: 'ranks'")
        fmt = block.get("name", "{file}{rank}")
        for j, rank in enumerate(ranks):
            for i, file in enumerate(files):
                raw.append(
                    {
                        "name": fmt.format(file=file, rank=rank),
                        "zone": block.get("zone", "pitch"),
                        "x": block.get("x", 0) + i,
                        "y": block.get("y", 0) + j,
                        "sensor": block.get("sensor", default_sensor),
                        "leds": block.get("leds", 1),
                        "segment": block.get("segment", ""),
                    }
                )
    for cell in data.get("cell", []):
        raw.append(
            {
                "name": cell["name"],
                "zone": cell.get("zone", "other"),
                "x": cell["x"],
                "y": cell["y"],
                "sensor": cell.get("sensor", default_sensor),
                "leds": cell.get("leds", 1),
                "led": cell.get("led"),
                "segment": cell.get("segment", ""),
            }
        )
    if not raw:
        raise BoardError("no cells")

    names = [c["name"] for c in raw]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise BoardError(f"cell names used twice: {', '.join(dupes)}")
    for c in raw:
        if c["sensor"] not in SENSOR_KINDS:
            raise BoardError(
                f"cell {c['name']}: unknown sensor kind {c['sensor']!r} "
                f"(one of {', '.join(SENSOR_KINDS)})"
            )
        if not isinstance(c["leds"], int) or isinstance(c["leds"], bool) or c["leds"] < 0:
            raise BoardError(f"cell {c['name']}: 'leds' must be a whole number >= 0")
        for axis in ("x", "y"):
            if not isinstance(c[axis], (int, float)) or isinstance(c[axis], bool):
                raise BoardError(f"cell {c['name']}: {axis!r} must be a number")
    _apply_zones(raw, data.get("zones", {}))

    chain = data.get("leds", "serpentine")
    if chain not in LED_CHAINS:
        raise BoardError(f"unknown LED chain {chain!r} (one of {', '.join(LED_CHAINS)})")
    leds = _assign_leds(raw, chain)
    led_count = sum(len(v) for v in leds.values())

    sensed = [c for c in raw if c["sensor"] != "none"]
    presence = [c for c in sensed if c["sensor"] == "presence"]
    readers = [c for c in sensed if c["sensor"] in READER_KINDS]
    reader_setup = _reader_setup(data.get("readers"), readers, presence, pins, data["controller"])
    if readers:
        # Every sensed cell sits on the reader chip-select tree: identity and card
        # cells with their reader, presence cells with a reed on the sense line.
        matrix, matrix_size = _reader_addresses(sensed, pins, data["controller"])
        if any(c["sensor"] == "identity" for c in readers) and not data.get("pieces"):
            raise BoardError("identity cells need a [pieces] table of piece codes")
    else:
        cols = len(pins.get("matrix_cols", [])) or 1
        rows_needed = -(-len(sensed) // cols)
        rows_avail = len(pins.get("matrix_rows", [])) or rows_needed
        if presence and rows_needed > rows_avail:
            raise BoardError(
                f"{len(sensed)} sensed cells need a {rows_needed} x {cols} matrix; "
                f"controller {data['controller']} drives {rows_avail} rows"
            )
        matrix = {c["name"]: divmod(k, cols) for k, c in enumerate(sensed)}
        matrix_size = (rows_needed, cols)

    button_pins = pins.get("buttons", [])
    buttons_raw = data.get("button", [])
    if len(buttons_raw) > len(button_pins):
        raise BoardError(
            f"{len(buttons_raw)} buttons but the controller has {len(button_pins)} button pins"
        )
    button_names = [b["name"] for b in buttons_raw]
    dupes = sorted({n for n in button_names if button_names.count(n) > 1})
    if dupes:
        raise BoardError(f"button names used twice: {', '.join(dupes)}")
    buttons = tuple(Button(i, b["name"], button_pins[i]) for i, b in enumerate(buttons_raw))

    pieces = {str(k): int(v) for k, v in data.get("pieces", {}).items()}
    codes = list(pieces.values())
    if any(not 1 <= v <= 255 for v in codes) or len(set(codes)) != len(codes):
        raise BoardError("piece codes must be distinct numbers 1-255")

    cells = tuple(
        Cell(
            index=i,
            name=c["name"],
            zone=c["zone"],
            x=float(c["x"]),
            y=float(c["y"]),
            sensor=c["sensor"],
            leds=leds[c["name"]],
            matrix=matrix.get(c["name"]),
        )
        for i, c in enumerate(raw)
    )
    die = bool(data.get("die", False))
    if die and "roll" not in {b.name for b in buttons}:
        raise BoardError("a board with a die needs a button named 'roll'")
    power = _power(data.get("power"), led_count)
    return Board(
        id=data["id"],
        title=data["title"],
        games=tuple(data.get("games", ())),
        controller=data["controller"],
        pins=pins,
        square_mm=float(data.get("square_mm", 30)),
        pieces=pieces,
        cells=cells,
        buttons=buttons,
        die=die,
        led_count=led_count,
        matrix_size=matrix_size,
        source=str(path),
        power=power,
        reader_setup=reader_setup,
    )


def _apply_zones(raw: list[dict[str, Any]], zones: dict[str, Any]) -> None:
    """[zones] overrides: zone name -> the cells that belong to it, whatever their block said."""
    by_name = {c["name"]: c for c in raw}
    claimed: dict[str, str] = {}
    for zone, members in zones.items():
        for name in _names(members, f"zone {zone!r}"):
            if name not in by_name:
                raise BoardError(f"zone {zone!r} lists {name!r}, which is not a cell")
            if name in claimed:
                raise BoardError(f"cell {name} is listed in zones {claimed[name]!r} and {zone!r}")
            claimed[name] = zone
            by_name[name]["zone"] = zone


def _reader_setup(
    table: Any,
    readers: list[dict[str, Any]],
    presence: list[dict[str, Any]],
    pins: dict[str, Any],
    controller: str,
) -> dict[str, Any]:
    """The [readers] table, checked against the cells and the controller."""
    if not readers:
        if table is not None:
            raise BoardError("a [readers] table, but no identity or card cells")
        return {}
    setup = dict(READER_SETUP_DEFAULTS)
    setup.update(table or {})
    fields, reeds = setup["fields"], setup["reeds"]
    if not isinstance(fields, int) or isinstance(fields, bool) or not 1 <= fields <= MAX_FIELDS:
        raise BoardError(f"[readers] fields must be a whole number 1-{MAX_FIELDS}")
    if not isinstance(reeds, bool):
        raise BoardError("[readers] reeds must be true or false")
    if reeds and not any(c["sensor"] == "identity" for c in readers):
        raise BoardError("[readers] reeds = true needs identity cells (a card carries no magnet)")
    if (reeds or presence) and "reader_sense" not in pins:
        what = "reeds under identity cells" if reeds else "presence cells beside readers"
        raise BoardError(f"{what} need the reader sense line; controller {controller} has "
                         "no reader_sense pin")
    return setup


def _reader_addresses(
    sensed: list[dict[str, Any]], pins: dict[str, Any], controller: str
) -> tuple[dict[str, tuple[int, int]], tuple[int, int]]:
    """(bank, channel) per sensed cell, numbered in cell order, and the (banks, channels) in use."""
    lines = pins.get("reader_mux", [])
    if not lines or "reader_spi" not in pins or "reader_cs" not in pins:
        raise BoardError(
            f"identity/card cells need readers, but controller {controller} has no reader pins"
        )
    per_bank = min(READERS_PER_BANK, 2 ** len(lines))
    capacity = 2 ** len(lines)
    if len(sensed) > capacity:
        raise BoardError(
            f"{len(sensed)} sensed cells on the reader tree but controller {controller} "
            f"addresses {capacity} ({len(lines)} reader_mux lines)"
        )
    addresses = {c["name"]: divmod(k, per_bank) for k, c in enumerate(sensed)}
    return addresses, (-(-len(sensed) // per_bank), per_bank)


def _power(table: Any, led_count: int) -> dict[str, int]:
    """The optional [power] table: the LEDs' current budget and the firmware's brightness cap."""
    if table is None:
        return {}
    try:
        budget = int(table["budget_ma"])
        cap = int(table["brightness_cap"])
    except (KeyError, TypeError, ValueError):
        raise BoardError("[power] needs whole numbers budget_ma and brightness_cap") from None
    if not 1 <= cap <= 255 or budget <= 0:
        raise BoardError("[power]: brightness_cap must be 1-255 and budget_ma positive")
    full_white = led_count * (LED_DARK_MA + (LED_FULL_WHITE_MA - LED_DARK_MA) * cap / 255)
    if full_white > budget:
        raise BoardError(
            f"[power]: {led_count} LEDs at full white with brightness_cap {cap} draw "
            f"{full_white:.0f} mA, over the budget of {budget} mA"
        )
    return {"budget_ma": budget, "brightness_cap": cap}


def _assign_leds(raw: Iterable[dict[str, Any]], chain: str) -> dict[str, tuple[int, ...]]:
    """Chain positions per cell.

    Serpentine: rows (cells of equal y) bottom to top, the first left to right,
    then alternating direction. Rows: every row left to right. Cells may name a
    ``segment``: the chain runs through the segments in the order they first
    appear (grid blocks, then cells), each laid out on its own; the unnamed
    segment is an ordinary one.
    """
    lit = [c for c in raw if c["leds"] > 0]
    out: dict[str, tuple[int, ...]] = {}
    if chain == "explicit":
        for c in lit:
            if c.get("led") is None:
                raise BoardError(f"cell {c['name']}: explicit LED chain needs 'led'")
            out[c["name"]] = tuple(range(c["led"], c["led"] + c["leds"]))
        used = sorted(i for v in out.values() for i in v)
        if len(used) != len(set(used)):
            raise BoardError("two cells share an LED")
        if used and used != list(range(len(used))):
            gaps = sorted(set(range(used[-1] + 1)) - set(used))
            raise BoardError(f"the explicit LED chain has gaps at {', '.join(map(str, gaps[:8]))}")
    else:
        segments: dict[str, list[dict[str, Any]]] = {}
        for c in lit:
            segments.setdefault(c.get("segment", ""), []).append(c)
        n = 0
        for cells in segments.values():
            rows: dict[float, list[dict[str, Any]]] = {}
            for c in cells:
                rows.setdefault(c["y"], []).append(c)
            for k, y in enumerate(sorted(rows)):
                row = sorted(rows[y], key=lambda c: c["x"])
                if chain == "serpentine" and k % 2 == 1:
                    row.reverse()
                for c in row:
                    out[c["name"]] = tuple(range(n, n + c["leds"]))
                    n += c["leds"]
    for c in raw:
        out.setdefault(c["name"], ())
    return out
