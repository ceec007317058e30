"""What the board reports and what the host asks it to show, as host-side values."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Union

from masume.boards import Board, Cell
from masume_protocol import codec as c

#: A cell's reading: presence -> bool; identity -> piece names bottom to top;
#: card -> the tag's UID in hex, or None when the zone is empty.
Reading = Union[bool, tuple[str, ...], str, None]


def decode_reading(board: Board, cell: Cell, raw: bytes) -> Reading:
    if cell.sensor == "presence":
        return bool(raw and raw[0])
    if cell.sensor == "identity":
        return tuple(board.piece_name(code) for code in raw)
    return raw.hex() if raw else None


@dataclass(frozen=True)
class BoardEvent:
    """One event from the board, in order, once. ``type`` is square, die, button
    or snapshot (every reading at once, after a resynchronisation).

    ``ms`` is the board's own time of the event (its ticks_ms, protocol 2; None
    from a version 1 board and for snapshots). ``at`` is that moment on this
    host's monotonic clock, as far as the link can tell (the board's clock
    mapped by its heartbeats): an event resent from the board's journal after a
    cut arrives late, but its ``at`` says when it happened. None when unknown.
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
