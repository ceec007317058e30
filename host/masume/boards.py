"""Board definitions: hardware/boards/*.toml read into one explicit table.

A definition is data (format in hardware/README.md). This module expands its
compact grid blocks into cells, numbers the cells (the protocol's addresses),
assigns LED chain positions and sensor matrix positions, and checks the result.
The firmware gets the expanded table as JSON (:meth:`Board.firmware_json`) and
reports its CRC-32 in the handshake, so the host never drives a board with a
different map.

>>> board = load_board("soccer-shogi")
>>> board.cell("C5").sensor
'presence'
>>> board.cell(board.cell("C5").index).name
'C5'
"""

from __future__ import annotations

import binascii
import json
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

SENSOR_KINDS = ("presence", "identity", "card", "none")
LED_CHAINS = ("serpentine", "rows", "explicit")
FORMAT_VERSION = 1


class BoardError(ValueError):
    """A board definition that cannot be used, with the file and the reason."""


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
    matrix: tuple[int, int] | None  # (row, column) in the sensor matrix, for sensed cells


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
    matrix_size: tuple[int, int]  # (rows, columns) of the sensor matrix in use
    source: str = ""
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

    def firmware_dict(self) -> dict[str, Any]:
        """What the firmware needs, in a compact canonical form."""
        return {
            "format": FORMAT_VERSION,
            "id": self.id,
            "controller": self.controller,
            "pins": self.pins,
            "cells": [[c.name, c.sensor, list(c.leds), list(c.matrix or ())] for c in self.cells],
            "buttons": [[b.name, b.pin] for b in self.buttons],
            "die": self.die,
            "led_count": self.led_count,
            "matrix": list(self.matrix_size),
        }

    def firmware_json(self) -> bytes:
        """The canonical bytes the firmware stores as board.json."""
        return json.dumps(self.firmware_dict(), sort_keys=True, separators=(",", ":")).encode()

    @property
    def hash(self) -> int:
        """CRC-32 of :meth:`firmware_json`; both sides compare it in the handshake."""
        return binascii.crc32(self.firmware_json()) & 0xFFFFFFFF


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
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise BoardError(f"{path}: {exc}") from exc
    try:
        return _expand(data, path)
    except BoardError as exc:
        raise BoardError(f"{path.name}: {exc}") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise BoardError(f"{path.name}: malformed definition ({exc})") from None


def _load_controller(name: str) -> dict[str, Any]:
    path = controllers_dir() / f"{name}.toml"
    if not path.is_file():
        raise BoardError(f"unknown controller {name!r}")
    return tomllib.loads(path.read_text(encoding="utf-8"))


def _expand(data: dict[str, Any], path: Path) -> Board:
    for key in ("id", "title", "controller"):
        if key not in data:
            raise BoardError(f"missing {key!r}")
    controller = _load_controller(data["controller"])
    pins = dict(controller["pins"])
    default_sensor = data.get("sensor", "presence")

    raw: list[dict[str, Any]] = []
    for block in data.get("grid", []):
        for j, rank in enumerate(block["ranks"]):
            for i, file in enumerate(block["files"]):
                fmt = block.get("name", "{file}{rank}")
                raw.append(
                    {
                        "name": fmt.format(file=file, rank=rank),
                        "zone": block.get("zone", "pitch"),
                        "x": block.get("x", 0) + i,
                        "y": block.get("y", 0) + j,
                        "sensor": block.get("sensor", default_sensor),
                        "leds": block.get("leds", 1),
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
            raise BoardError(f"cell {c['name']}: unknown sensor kind {c['sensor']!r}")

    chain = data.get("leds", "serpentine")
    if chain not in LED_CHAINS:
        raise BoardError(f"unknown LED chain {chain!r} (one of {', '.join(LED_CHAINS)})")
    leds = _assign_leds(raw, chain)
    led_count = sum(len(v) for v in leds.values())

    sensed = [c for c in raw if c["sensor"] != "none"]
    cols = len(pins.get("matrix_cols", [])) or 1
    rows_needed = -(-len(sensed) // cols)
    rows_avail = len(pins.get("matrix_rows", [])) or rows_needed
    presence = [c for c in sensed if c["sensor"] == "presence"]
    if presence and rows_needed > rows_avail:
        raise BoardError(
            f"{len(sensed)} sensed cells need a {rows_needed} x {cols} matrix; "
            f"controller {data['controller']} drives {rows_avail} rows"
        )
    matrix = {c["name"]: divmod(k, cols) for k, c in enumerate(sensed)}

    button_pins = pins.get("buttons", [])
    buttons_raw = data.get("button", [])
    if len(buttons_raw) > len(button_pins):
        raise BoardError(f"{len(buttons_raw)} buttons but the controller has {len(button_pins)} button pins")
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
        matrix_size=(rows_needed, cols),
        source=str(path),
    )


def _assign_leds(raw: Iterable[dict[str, Any]], chain: str) -> dict[str, tuple[int, ...]]:
    """Chain positions per cell. Serpentine: rows bottom to top, direction alternating."""
    lit = [c for c in raw if c["leds"] > 0]
    if chain == "explicit":
        out: dict[str, tuple[int, ...]] = {}
        for c in lit:
            if c.get("led") is None:
                raise BoardError(f"cell {c['name']}: explicit LED chain needs 'led'")
            out[c["name"]] = tuple(range(c["led"], c["led"] + c["leds"]))
        used = [i for v in out.values() for i in v]
        if len(used) != len(set(used)):
            raise BoardError("two cells share an LED")
    else:
        rows: dict[float, list[dict[str, Any]]] = {}
        for c in lit:
            rows.setdefault(c["y"], []).append(c)
        order: list[dict[str, Any]] = []
        for k, y in enumerate(sorted(rows)):
            row = sorted(rows[y], key=lambda c: c["x"])
            if chain == "serpentine" and k % 2 == 1:
                row.reverse()
            order.extend(row)
        out, n = {}, 0
        for c in order:
            out[c["name"]] = tuple(range(n, n + c["leds"]))
            n += c["leds"]
    for c in raw:
        out.setdefault(c["name"], ())
    return out
