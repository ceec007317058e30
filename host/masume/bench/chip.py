"""``masume bench chip``: the firmware on the emulated chip (masume.sim.chip), in
board time with the data sheets' timing, per board (recorded in docs/benchmarks.md).

- boot: board time from power-up to the first scan pass (the reader check and the
  boot sweep included);
- RAM: the firmware's heap after boot (gc.mem_free() before the firmware's import
  and after its boot, both after a collection, as .py source compiled on the VM),
  and what that leaves on a Pico W and an ESP32-S3;
- scan pass: board time of one pass of main.py's loop at rest, its 1 ms sleep apart;
- settle to event: a piece (a card on a card zone) put down on one cell, or lifted,
  to the event's board time (the event's own ticks_ms), p50 and p99: debounce,
  reeds, readers included;
- identity sweep: every identity cell given a piece at once, to the last of their
  events: the whole board read.

Board time does not depend on this host's speed or load: the figures are the
emulated chip's, not this machine's. Wall time is printed for scale.
"""

from __future__ import annotations

import random
import time

from masume.boards import Board, board_ids, load_board

#: gc.mem_free() of MicroPython at boot, before any module: the Pico W (264 KB of
#: SRAM; firmware/README.md) and the ESP32-S3-DevKitC-1 N8R8 (its heap in the 8 MB PSRAM).
HEAP_KB = {"pico-w": 170, "esp32-s3": 8000}


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(board: Board, trials: int = 40, seed: int = 1) -> dict[str, float]:
    from masume.link import BoardSession, SerialTransport
    from masume.sim.chip.board import ChipBoard

    rng = random.Random(seed)
    out: dict[str, float] = {}
    started = time.perf_counter()
    with ChipBoard(board, seed=seed, paced=False, hold=0.3) as chip:
        out["boot_ms"] = chip.first_pass_us / 1000
        out["firmware_kb"] = (chip.memory["emulation"] - chip.memory["boot"]) / 1024
        with BoardSession(SerialTransport(chip.port), resolve=lambda _id: board) as session:
            session.wait_connected(120)
            session.take(timeout=0.5)
            polls, board_us = chip.polls, chip.board_us
            while chip.polls < polls + 200:
                time.sleep(0.01)
            out["pass_ms"] = ((chip.board_us - board_us) / (chip.polls - polls) - 1000) / 1000

            def settle(moves: list[tuple[str, str | None]]) -> list[float]:
                """Board ms from the moves landing to each of their events."""
                if not moves:
                    return []
                landed = len(chip.applied_us)
                for square, piece in moves:
                    chip.place(square, piece) if piece else chip.lift(square)
                waiting = {square for square, _ in moves}
                at: list[int] = []
                deadline = time.monotonic() + 300
                while waiting and time.monotonic() < deadline:
                    for event in session.events(timeout=0.5):
                        if event.type == "square" and event.square in waiting:
                            waiting.discard(event.square)
                            at.append(event.ms or 0)
                if waiting:
                    raise RuntimeError(f"no event from {sorted(waiting)} on {board.id}")
                down = chip.applied_us[landed] / 1000
                return [(ms - down) % (1 << 30) for ms in at]

            squares = [c.name for c in board.sensed]
            pieces = [p for p in board.pieces if "rest" not in p] or ["piece"]

            def thing(square: str) -> str:  # a piece, or on a card zone a card
                if board.cell(square).sensor == "card":
                    return f"tag:04{rng.getrandbits(48):012x}"
                return rng.choice(pieces)

            latencies: list[float] = []
            for _ in range(trials):
                square = rng.choice(squares)
                piece = None if chip.table.stacks[square] else thing(square)
                latencies += settle([(square, piece)])
            out["settle_p50_ms"] = _percentile(latencies, 0.5)
            out["settle_p99_ms"] = _percentile(latencies, 0.99)
            identity = [c.name for c in board.sensed if c.sensor == "identity"]
            if identity:
                settle([(sq, None) for sq in identity if chip.table.stacks[sq]])  # empty first
                moves: list[tuple[str, str | None]] = [(sq, thing(sq)) for sq in identity]
                out["sweep_ms"] = max(settle(moves))
                out["identity_cells"] = len(identity)
    out["wall_s"] = time.perf_counter() - started
    return out


def run(board: str | None = None, trials: int = 40) -> int:
    boards = [load_board(board)] if board else [load_board(b) for b in board_ids()]
    print("the firmware on the emulated chip, board time (datasheet timing); "
          f"RAM left against a Pico W ({HEAP_KB['pico-w']} KB heap) and an ESP32-S3 "
          f"({HEAP_KB['esp32-s3']} KB in PSRAM)")
    for b in boards:
        m = measure(b, trials)
        kinds = sorted({c.sensor for c in b.sensed})
        sweep = (f"identity sweep {m['sweep_ms']:.0f} ms ({m['identity_cells']:.0f} cells at once)"
                 if "sweep_ms" in m else "identity sweep -")
        print(f"{b.id} ({len(b.sensed)} sensed: {', '.join(kinds)}): boot {m['boot_ms']:.0f} ms, "
              f"scan pass {m['pass_ms']:.2f} ms, settle to event p50 {m['settle_p50_ms']:.0f} ms "
              f"p99 {m['settle_p99_ms']:.0f} ms (n={trials}), {sweep}, firmware heap "
              f"{m['firmware_kb']:.0f} KB: left {HEAP_KB['pico-w'] - m['firmware_kb']:.0f} KB "
              f"on a Pico W, {HEAP_KB['esp32-s3'] - m['firmware_kb']:.0f} KB on an ESP32-S3 "
              f"(wall {m['wall_s']:.0f} s)", flush=True)
    return 0
