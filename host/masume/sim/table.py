"""The simulated physical table in board time: stacks of pieces on cells, held
buttons, and when each of them changed.

It answers what the sensors would read (in the firmware's slot layout, see
firmware/scanner.py), so the simulated board's firmware sees exactly what a
real board's sensors would report:

- presence: 01 when anything stands on the cell;
- identity: the codes of the pieces, bottom to top (at most 10);
- card: the tag of the card on the zone (a piece named ``tag:04a1b2c3``); of a pile,
  the top card's.

Every change is stamped with the board time it happens (:class:`BoardClock`, in ms:
now, or the ``at`` a script gives), and the board asks for the sensors as they were
at its pass's board time (:meth:`Table.sample`). So a board whose passes run late,
on a slow or loaded host, still sees each change at its instant and each reading for
as long as it lasted: a piece put down and lifted 120 ms later is two events however
slow the host. :attr:`Table.stacks` is the table as scripted so far (the present, or
a scripted future).
"""

from __future__ import annotations

import heapq
import threading
import time
from collections import deque
from collections.abc import Callable

from masume.boards import Board, Cell
from masume_protocol.codec import READING_MAX

SLOT = 1 + READING_MAX  # bytes per sensor in the firmware's sample buffer (firmware/scanner.py)
BUTTON_PRESS_S = 0.12  # how long a simulated press holds the button down


class TableError(ValueError):
    """A command that cannot be done on this table, with the reason."""


class BoardClock:
    """Board time in whole milliseconds since the simulated board was made: what its
    firmware reads as ``ticks_ms``. It follows the host's monotonic clock, but the
    board's passes run at instants of it the simulator chooses (masume.sim.board):
    :attr:`passed` is the board time of the latest pass, which lags behind
    :meth:`wall_ms` while the host is slow and catches up when it can."""

    def __init__(self) -> None:
        self._epoch = time.monotonic()
        self.passed = -1  # board time of the board's latest scan pass
        #: Held to stamp a change and to choose a pass's board time: a change is
        #: either stamped after the pass's time or seen at its own instant.
        self.lock = threading.RLock()

    def wall_ms(self) -> int:
        """The board time the host's clock says it is."""
        return int((time.monotonic() - self._epoch) * 1000)

    def seconds_until(self, board_ms: int) -> float:
        """How long the host waits for :meth:`wall_ms` to reach ``board_ms``."""
        return max(0.0, self._epoch + board_ms / 1000 - time.monotonic())


class Table:
    def __init__(self, board: Board, clock: BoardClock | None = None) -> None:
        self.board = board
        self.clock = clock or BoardClock()
        self.stacks: dict[str, list[str]] = {c.name: [] for c in board.sensed}
        #: Called after every change (the simulated board wakes up for it).
        self.on_change: Callable[[], None] = lambda: None
        #: Delays after a change at which the firmware decides on it (its debounce
        #: holds, ms): the board passes then too (masume.sim.board sets them).
        self.settle_ms: tuple[int, ...] = ()
        self._sensor = {c.name: k for k, c in enumerate(board.sensed)}
        self._lock = self.clock.lock
        self._last_stamp = 0
        # The sensors as the board last sampled them, and what comes after.
        self._seen = bytearray(SLOT * len(board.sensed))
        self._seen_version = 0
        self._changes: deque[tuple[int, int, bytes]] = deque()  # (board ms, sensor, reading)
        self._presses: list[tuple[int, int, int]] = []  # (button index, down ms, up ms)
        self._instants: list[int] = []  # heap: board times at which the board must pass

    def _cell(self, square: str) -> Cell:
        if not self.board.has_cell(square):
            raise TableError(f"no square {square!r} on board {self.board.id!r}")
        cell = self.board.cell(square)
        if cell.sensor == "none":
            raise TableError(f"{square} is a light, not a place for pieces")
        return cell

    def _stamp(self, at: int | None) -> int:
        """The board time of a change (``at``, or now); under the lock."""
        floor = max(self._last_stamp, self.clock.passed + 1)
        if at is None:
            return max(self.clock.wall_ms(), floor)
        if at < self._last_stamp:
            raise TableError(f"changes go in time order: {at} ms is before the last one "
                             f"({self._last_stamp} ms)")
        if at <= self.clock.passed:
            raise TableError(f"board time {at} ms has passed (the board is at "
                             f"{self.clock.passed} ms): script changes ahead of it "
                             f"(SimulatedBoard.script)")
        return at

    def _changed(self, when: int, *instants: int) -> None:
        """Under the lock: the board must pass at these instants and settle after."""
        self._last_stamp = when
        for t in instants:
            heapq.heappush(self._instants, t)
            for delay in self.settle_ms:
                heapq.heappush(self._instants, t + delay)

    def _record(self, square: str, when: int) -> None:
        k = self._sensor[square]
        self._changes.append((when, k, self.reading(square)))
        self._changed(when, when)

    def place(self, square: str, piece: str, at: int | None = None) -> None:
        """Put ``piece`` on ``square`` now, or at board time ``at`` (ms)."""
        cell = self._cell(square)
        if cell.sensor == "card":
            _tag(piece)
        elif piece not in self.board.pieces:
            known = ", ".join(self.board.pieces)
            raise TableError(f"unknown piece {piece!r}; this board has: {known}")
        with self._lock:
            if len(self.stacks[square]) >= SLOT - 1:
                raise TableError(f"{square} cannot hold more pieces")
            when = self._stamp(at)
            self.stacks[square].append(piece)
            self._record(square, when)
        self.on_change()

    def lift(self, square: str, at: int | None = None) -> str:
        """Take the top piece off ``square`` now, or at board time ``at`` (ms)."""
        self._cell(square)
        with self._lock:
            if not self.stacks[square]:
                raise TableError(f"{square} is empty")
            when = self._stamp(at)
            piece = self.stacks[square].pop()
            self._record(square, when)
        self.on_change()
        return piece

    def clear(self) -> None:
        with self._lock:
            when = self._stamp(None)
            for square, stack in self.stacks.items():
                if stack:
                    stack.clear()
                    self._record(square, when)
        self.on_change()

    def press(self, button: int, at: int | None = None) -> None:
        """Press a button now (or at board time ``at``) for BUTTON_PRESS_S."""
        with self._lock:
            down = self._stamp(at)
            up = down + round(BUTTON_PRESS_S * 1000)
            self._presses.append((button, down, up))
            self._changed(down, down, up)
        self.on_change()

    def buttons(self, at: int) -> int:
        """The buttons held at board time ``at``, a bit mask."""
        with self._lock:
            self._presses = [p for p in self._presses if p[2] > at]
            bits = 0
            for b, down, _ in self._presses:
                if down <= at:
                    bits |= 1 << b
            return bits

    def reading(self, square: str) -> bytes:
        """What ``square``'s sensor reads with the table as scripted so far."""
        cell = self.board.cell(square)
        stack = self.stacks[square]
        if cell.sensor == "presence":
            return b"\x01" if stack else b""
        if cell.sensor == "identity":
            return bytes(self.board.pieces[p] for p in stack)
        return _tag(stack[-1]) if stack else b""

    def sample(self, at: int, held: int = -1) -> tuple[int, bytes] | None:
        """(version, all sensor slots) as the sensors read at board time ``at``; None
        if that is version ``held``. The version changes whenever a reading may have.
        Board time only goes forward: what happened up to ``at`` is applied for good."""
        with self._lock:
            seen = self._seen
            changes = self._changes
            if changes and changes[0][0] <= at:
                while changes and changes[0][0] <= at:
                    _, k, value = changes.popleft()
                    base = k * SLOT
                    seen[base:base + SLOT] = bytes(SLOT)
                    seen[base] = len(value)
                    seen[base + 1:base + 1 + len(value)] = value
                self._seen_version += 1
            if self._seen_version == held:
                return None
            return self._seen_version, bytes(seen)

    def next_instant(self, after: int) -> int | None:
        """The first board time after ``after`` at which something changes or settles."""
        with self._lock:
            instants = self._instants
            while instants and instants[0] <= after:
                heapq.heappop(instants)
            return instants[0] if instants else None


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
