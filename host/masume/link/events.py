"""What the board reports and what the host asks it to show, as host-side values."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from masume.boards import Board, Cell
from masume_protocol import codec as c

#: A cell's reading: presence -> bool; identity -> piece names bottom to top;
#: card -> the tag's UID in hex, or None when the zone is empty.
Reading = bool | tuple[str, ...] | str | None


def check_frame(board: Board, mtype: int, fields: Any) -> None:
    """FrameError unless a decoded frame names only what ``board`` has: its cells
    (with a sensor, for readings), its buttons, its pieces, its die's faces.

    The codec checks a payload's layout; this checks it against the board, so a
    frame from a board that does not keep to its definition is a bad frame like a
    damaged one, never an exception further in.
    """
    if mtype == c.SQUARE:
        _check_reading(board, fields[0], fields[1])
    elif mtype == c.SNAPSHOT:
        for index, raw in fields:
            _check_reading(board, index, raw)
    elif mtype == c.BUTTON:
        if not any(b.index == fields[0] for b in board.buttons):
            raise c.FrameError(f"button {fields[0]}: board {board.id!r} has no such button")
    elif mtype == c.DIE:
        if not board.die:
            raise c.FrameError(f"a die roll, but board {board.id!r} has no die")
        if not 1 <= fields[1] <= 6:
            raise c.FrameError(f"die face {fields[1]}: a die shows 1 to 6")


def _check_reading(board: Board, index: int, raw: bytes) -> None:
    if not 0 <= index < len(board.cells) or board.cells[index].sensor == "none":
        raise c.FrameError(f"cell {index}: board {board.id!r} has no such sensed cell")
    cell = board.cells[index]
    if cell.sensor == "identity":
        known = set(board.pieces.values())
        unknown = [code for code in raw if code not in known]
        if unknown:
            raise c.FrameError(f"cell {cell.name}: piece code {unknown[0]} is not one of "
                               f"board {board.id!r}'s pieces")
    elif cell.sensor == "presence" and len(raw) > 1:
        raise c.FrameError(f"cell {cell.name}: a presence reading is one byte or none")


def decode_reading(board: Board, cell: Cell, raw: bytes) -> Reading:
    if cell.sensor == "presence":
        return bool(raw and raw[0])
    if cell.sensor == "identity":
        return tuple(board.piece_name(code) for code in raw)
    return raw.hex() if raw else None


def readings_text(board: Board, readings: Mapping[str, Reading]) -> str:
    """Readings as one line of text, ``CELL=VALUE`` separated by spaces (a saved
    game keeps them so): presence ``1``/``0``; identity the pieces bottom to top
    joined by ``+``, ``-`` for none; card the tag's UID in hex, ``-`` for none.

    >>> from masume.boards import load_board
    >>> board = load_board("soccer-shogi")
    >>> text = readings_text(board, {"C5": ("ball", "blue"), "A7": ()})
    >>> text, parse_readings(board, text) == {"C5": ("ball", "blue"), "A7": ()}
    ('A7=- C5=ball+blue', True)
    """
    out = []
    for name, reading in sorted(readings.items()):
        sensor = board.cell(name).sensor
        if sensor == "presence":
            value = "1" if reading else "0"
        elif sensor == "identity":
            value = "+".join(reading) if reading else "-"  # type: ignore[arg-type]
        else:
            value = str(reading) if reading else "-"
        out.append(f"{name}={value}")
    return " ".join(out)


def parse_readings(board: Board, text: str) -> dict[str, Reading]:
    """The readings :func:`readings_text` wrote; ValueError for anything else."""
    out: dict[str, Reading] = {}
    for item in text.split():
        name, sep, value = item.partition("=")
        if not sep or not board.has_cell(name):
            raise ValueError(f"{item!r} is not CELL=READING of board {board.id!r}")
        sensor = board.cell(name).sensor
        if sensor == "presence":
            out[name] = value == "1"
        elif sensor == "identity":
            out[name] = () if value == "-" else tuple(value.split("+"))
        else:
            out[name] = None if value == "-" else value
    return out


@dataclass(frozen=True)
class BoardEvent:
    """One event from the board, in order, once. ``type`` is square, die, button
    or snapshot (every reading at once, after a resynchronisation).

    ``ms`` is the board's own time of the event (its ticks_ms, protocol 2; None
    from a version 1 board and for snapshots). ``at`` is that moment on this
    host's monotonic clock, as far as the link can tell (the board's clock
    mapped by its heartbeats): an event resent from the board's journal after a
    cut arrives late, but its ``at`` says when it happened. None when unknown.
    ``seq`` and ``boot`` place it in the board's stream (a snapshot's ``seq`` is
    the last event it covers).
    """

    seq: int
    type: str
    square: str | None = None
    reading: Reading = None
    value: int | None = None
    roll_id: int | None = None
    button: str | None = None
    readings: dict[str, Reading] = field(default_factory=dict)
    ms: int | None = None
    at: float | None = None
    #: The boot of the board it came from: BoardSession.commit takes it with the seq.
    boot: int = 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seq": self.seq, "type": self.type}
        if self.ms is not None:
            out["ms"] = self.ms
        if self.type == "square":
            out.update(square=self.square, reading=_jsonable(self.reading))
        elif self.type == "die":
            out.update(value=self.value, roll_id=self.roll_id)
        elif self.type == "button":
            out.update(button=self.button)
        else:
            out.update(readings={k: _jsonable(v) for k, v in self.readings.items()})
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)


def _jsonable(reading: Reading) -> Any:
    return list(reading) if isinstance(reading, tuple) else reading


@dataclass(frozen=True)
class Led:
    """What one cell shows: a colour and a pattern (steady, blink, pulse)."""

    rgb: tuple[int, int, int]
    pattern: str = "steady"

    def __post_init__(self) -> None:
        if self.pattern not in c.PATTERNS:
            raise ValueError(f"unknown LED pattern {self.pattern!r} (one of {c.PATTERNS})")
        if any(not 0 <= v <= 255 for v in self.rgb) or len(self.rgb) != 3:
            raise ValueError(f"colour must be three numbers 0-255, not {self.rgb!r}")

    @property
    def pattern_code(self) -> int:
        return c.PATTERNS.index(self.pattern)
