"""``masume bench readers``: the reader scan of a board in board time.

The firmware's reader scan (firmware/readers.py, on CPython as the tests run it)
over the register-level MFRC522 emulation, on the reader rig
(masume/sim/chip/rig.py): board time moves by what hardware/README.md budgets
for the firmware's SPI and pin calls, the datasheet's and ISO 14443-3's times
for every command and frame, and 1 ms asleep between two scan passes (main.py).
The firmware's own Python is not timed: the figures are those of the design's
arithmetic, measured rather than added up, with the scheduling (lanes, the
neighbour rule, rounds) as it really happens. The scanner's 50 ms debounce runs
on the raw readings, so latencies are from a piece settling to its event.
"""

from __future__ import annotations

import json
import random
import statistics
from collections.abc import Callable
from typing import Any

from masume.boards import Board, load_board
from masume.firmware_host import use_firmware

SECONDS = 3.0  # board time of steady scanning measured
TRIALS = 40  # hand movements per latency figure


def run(board: str | None = None, seconds: float = SECONDS, trials: int = TRIALS) -> int:
    use_firmware()
    b = load_board(board or "masume-tactics")
    if not b.readers:
        print(f"board {b.id} has no readers")
        return 2
    bench = _Bench(b, random.Random(12))
    bench.report(seconds, trials)
    return 0


class _Bench:
    def __init__(self, board: Board, rng: random.Random) -> None:
        import readers
        from masume.sim.chip.rig import Rig
        from scanner import Scanner

        self.board = board
        self.rng = rng
        self.definition = json.loads(board.firmware_json())
        self.rig = Rig(self.definition, boot=False)
        self.scan = self.rig.scan
        self.scanner = Scanner(self.scan.count)
        self.slot_of = {c.index: k for k, c in enumerate(board.sensed)}
        self.jobs: list[tuple[str, int]] = []  # (kind, board us)
        self.read_at: dict[int, int] = {}  # slot -> board time of its last job's end
        self.most_fields = 0
        self.serial = 1000
        self._instrument(readers)

    # ---- what the firmware does, seen from outside

    def _instrument(self, readers: Any) -> None:
        bench = self
        done: Callable[..., None] = readers.Lane._done

        def watched(lane: Any, ok: bool) -> None:
            took = (bench.rig.world.clock.ticks_us() - lane.started) & 0x3FFFFFFF
            if not ok:
                kind = "failed"
            elif lane.nresult == 0:
                kind = "empty cell"
            elif lane.selected:
                kind = "selected (a tag not seen before, or a card's whole UID)"
            elif lane.nresult == 1:
                kind = "one known tag"
            else:
                kind = f"{lane.nresult} known tags"
            bench.jobs.append((kind, took))
            bench.read_at[lane.slot] = bench.rig.now()
            done(lane, ok)

        readers.Lane._done = watched  # this process only: a benchmark's own interpreter

    def _pass(self) -> None:
        rig = self.rig
        rig.sample()
        self.scanner.raw[:] = rig.raw
        self.scanner.update(rig.now() // 1000)
        busy = sum(1 for lane in self.scan.lanes if lane.slot >= 0)
        self.most_fields = max(self.most_fields, busy)
        rig.world.clock.t += 1000  # main.py: time.sleep_ms(1)

    def _tag(self, code: int | None) -> Any:
        from masume.sim.chip.rig import tag

        self.serial += 1
        return tag(self.serial, code)

    # ---- the table

    def _set_up(self) -> tuple[list[int], int | None]:
        """Pieces as in a game: on an identity board every piece of [pieces] on its
        own cell and the ball under one of them; on a card mat a card on 40 % of the
        zones. Returns the cells used and the ball's cell."""
        cells = [c.index for c in self.board.readers]
        self.rng.shuffle(cells)
        board = self.board
        ball = None
        if any(c.sensor == "identity" for c in board.readers):
            codes = sorted(set(board.pieces.values()))
            ball_code = board.pieces.get("ball")
            players = [c for c in codes if c != ball_code] * 2
            players = players[:22]
            used = cells[:len(players)]
            for cell, code in zip(used, players):
                self.rig.world.put(cell, self._tag(code))
            if ball_code is not None:
                ball = used[0]
                self.rig.world.put(ball, self._tag(ball_code), *self.rig.world.tags_at(ball))
            return used, ball
        used = cells[:len(cells) * 2 // 5]
        for cell in used:
            self.rig.world.put(cell, self._tag(None))
        return used, None

    def _event_latency(self, change: Callable[[], int]) -> float:
        """Board ms from a change (settled at a random point of a pass) to the
        scanner reporting its cell."""
        for _ in range(self.rng.randrange(1, 6)):
            self._pass()
        self.rig.world.clock.t += self.rng.randrange(0, 1000)
        slot = change()
        at = self.rig.now()
        for _ in range(5000):
            self._pass()
            if self.scanner.changed[slot]:
                return (self.rig.now() - at) / 1000
        raise RuntimeError("no event in 5 s of board time")

    # ---- the figures

    def report(self, seconds: float, trials: int) -> None:
        board = self.board
        rig = self.rig
        used, ball = self._set_up()
        start = rig.now()
        self.scan.boot()
        rig.sample()
        boot_ms = (rig.now() - start) / 1000
        self.scanner.raw[:] = rig.raw
        self.scanner.baseline()
        setup = board.reader_setup
        print(f"readers on {board.id}: {len(board.readers)} readers, {setup['fields']} fields at "
              f"once, reeds {'on' if setup['reeds'] else 'off'}; {len(used)} cells hold "
              f"pieces{', one a player on the ball' if ball is not None else ''} (board time)")
        print(f"  boot: every reader checked and read once in {boot_ms:.0f} ms")
        self.jobs.clear()
        self.read_at.clear()
        rounds0, start = self.scan.rounds, rig.now()
        passes: list[float] = []
        while rig.now() - start < seconds * 1e6:
            before = rig.now()
            rig.sample()
            passes.append((rig.now() - before) / 1000)
            self.scanner.raw[:] = rig.raw
            self.scanner.update(rig.now() // 1000)
            self.most_fields = max(self.most_fields,
                                   sum(1 for lane in self.scan.lanes if lane.slot >= 0))
            rig.world.clock.t += 1000
        elapsed = (rig.now() - start) / 1e6
        rounds = self.scan.rounds - rounds0
        kinds: dict[str, list[int]] = {}
        for kind, took in self.jobs:
            kinds.setdefault(kind, []).append(took)
        print("  jobs (field on to field off), mean: " + ", ".join(
            f"{k} {statistics.mean(v) / 1000:.1f} ms" for k, v in sorted(kinds.items())))
        print(f"  round (every occupied cell and the audits): {1000 * elapsed / rounds:.1f} ms, "
              f"{len(self.jobs) / elapsed:.0f} jobs/s")
        sweep = self._sweep_time()
        print(f"  every reader by RF: {sweep:.2f} s")
        print(f"  scan pass (sample()): {_p(passes, 1)}; fields on at once: at most "
              f"{self.most_fields}")
        self._latencies(used, ball, trials)

    def _sweep_time(self) -> float:
        """Board seconds until every reader has been read again, from now."""
        rig = self.rig
        self.read_at.clear()
        start = rig.now()
        readers = {self.slot_of[c.index] for c in self.board.readers}
        while not readers <= set(self.read_at):
            self._pass()
            if rig.now() - start > 10e6:
                break
        return (rig.now() - start) / 1e6

    def _latencies(self, used: list[int], ball: int | None, trials: int) -> None:
        world = self.rig.world
        free = [c.index for c in self.board.readers if c.index not in used]
        lifted = list(used[1:])
        down: list[float] = []
        up: list[float] = []
        for k in range(trials):
            cell = free[k % len(free)]
            piece = world.tags_at(lifted[k % len(lifted)])
            if not piece:
                continue

            def put(cell: int = cell, piece: Any = piece) -> int:
                world.put(cell, *piece)
                return self.slot_of[cell]

            def take(cell: int = cell) -> int:
                world.put(cell)
                return self.slot_of[cell]

            down.append(self._event_latency(put))
            up.append(self._event_latency(take))
        print(f"  set down, to its event (50 ms debounce included): {_p(down)}; lifted: "
              f"{_p(up)} ({len(down)} each)")
        if ball is None or not self.board.reader_setup["reeds"]:
            return
        # A player steps onto the ball (lifted from its cell, carried for 0.4 s, set
        # on the ball's) and off it again (onto a free cell): the ball's cell keeps
        # its reed closed throughout.
        on: list[float] = []
        off: list[float] = []
        ball_tag = world.tags_at(ball)[0]
        for k in range(trials):
            src = lifted[k % len(lifted)]
            player = world.tags_at(src)
            if not player or src == ball:
                continue
            world.put(src)
            for _ in range(self.rng.randrange(300, 500) // 6):
                self._pass()

            def step_on(player: Any = player) -> int:
                world.put(ball, ball_tag, *player)
                return self.slot_of[ball]

            def step_off(player: Any = player, src: int = src) -> int:
                world.put(ball, ball_tag)
                world.put(src, *player)  # back where it came from: a reed closes there
                return self.slot_of[ball]

            on.append(self._event_latency(step_on))
            off.append(self._event_latency(step_off))
        print(f"  onto the ball (no reed changes there): {_p(on)}; off it: {_p(off)} "
              f"({len(on)} each)")


def _p(values: list[float], digits: int = 0) -> str:
    """'p50 x ms, p99 y ms' of ``values`` (ms)."""
    ordered = sorted(values)

    def at(p: int) -> float:
        return ordered[min(len(ordered) - 1, (len(ordered) * p) // 100)]

    return f"p50 {at(50):.{digits}f} ms, p99 {at(99):.{digits}f} ms"
