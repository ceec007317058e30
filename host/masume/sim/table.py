"""The simulated physical table: stacks of pieces on cells, and held buttons.

It answers what the sensors would read (in the firmware's slot layout, see
firmware/scanner.py), so the simulated board's firmware sees exactly what a
real board's sensors would report:

- presence: 01 when anything stands on the cell;
- identity: the codes of the pieces, bottom to top (at most 10);
- card: the tag of the card on the zone (a piece named ``tag:04a1b2c3``); of a pile,
  the top card's.
"""

from __future__ import annotations

import threading
import time

from masume.boards import Board, Cell
from masume_protocol.codec import READING_MAX

SLOT = 1 + READING_MAX  # bytes per sensor in the firmware's sample buffer (firmware/scanner.py)
BUTTON_PRESS_S = 0.12  # how long a simulated press holds the button down


class TableError(ValueError):
    """A command that cannot be done on this table, with the reason."""


class Table:
    def __init__(self, board: Board) -> None:
        self.board = board
        self.stacks: dict[str, list[str]] = {c.name: [] for c in board.sensed}
        self._lock = threading.Lock()
        self._version = 0
        self._presses: list[tuple[int, float]] = []  # (button index, release time)

    def _cell(self, square: str) -> Cell:
        if not self.board.has_cell(square):
            raise TableError(f"no square {square!r} on board {self.board.id!r}")
        cell = self.board.cell(square)
        if cell.sensor == "none":
            raise TableError(f"{square} is a light, not a place for pieces")
        return cell

    def place(self, square: str, piece: str) -> None:
        cell = self._cell(square)
        if cell.sensor == "card":
            _tag(piece)
        elif piece not in self.board.pieces:
            known = ", ".join(self.board.pieces)
            raise TableError(f"unknown piece {piece!r}; this board has: {known}")
        with self._lock:
            if len(self.stacks[square]) >= SLOT - 1:
                raise TableError(f"{square} cannot hold more pieces")
            self.stacks[square].append(piece)
            self._version += 1

    def lift(self, square: str) -> str:
        self._cell(square)
        with self._lock:
            if not self.stacks[square]:
                raise TableError(f"{square} is empty")
            self._version += 1
            return self.stacks[square].pop()

    def clear(self) -> None:
        with self._lock:
            for stack in self.stacks.values():
                stack.clear()
            self._version += 1

    def press(self, button: int) -> None:
        with self._lock:
            self._presses.append((button, time.monotonic() + BUTTON_PRESS_S))

    def buttons_now(self) -> int:
        now = time.monotonic()
        with self._lock:
            self._presses = [(b, until) for b, until in self._presses if until > now]
            bits = 0
            for b, _ in self._presses:
                bits |= 1 << b
            return bits

    def reading(self, square: str) -> bytes:
        cell = self.board.cell(square)
        stack = self.stacks[square]
        if cell.sensor == "presence":
            return b"\x01" if stack else b""
        if cell.sensor == "identity":
            return bytes(self.board.pieces[p] for p in stack)
        return _tag(stack[-1]) if stack else b""

    def sample(self) -> tuple[int, bytes]:
        """(version, all sensor slots): the version changes whenever a reading may have."""
        with self._lock:
            out = bytearray(SLOT * len(self.board.sensed))
            for k, cell in enumerate(self.board.sensed):
                value = self.reading(cell.name)
                out[k * SLOT] = len(value)
                out[k * SLOT + 1 : k * SLOT + 1 + len(value)] = value
            return self._version, bytes(out)


def _tag(piece: str) -> bytes:
    if not piece.startswith("tag:"):
        raise TableError(f"a card zone takes a card tag like tag:04a1b2c3, not {piece!r}")
    try:
        uid = bytes.fromhex(piece[4:])
    except ValueError:
        raise TableError(f"{piece!r}: the tag must be hex digits") from None
    if not 4 <= len(uid) <= 10:
        raise TableError(f"{piece!r}: an NFC UID has 4 to 10 bytes")
    return uid
