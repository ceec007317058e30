"""The board link on the emulated chip (masume.sim.chip): the firmware's own main.py,
hw_chip.py and reader driver over emulated peripherals, a real pseudo-terminal,
pyserial and the host session. test_link.py's tests run here on the chip as they
are (its ``make_sim`` is this module's); the end-to-end check runs on the two
reader boards the issue names, with the die on the Tactics table.

Also a card mat (eyeshield21) and `masume sim --chip` as a user runs it.

Not here: test_link's journal overflow test (it turns all 46 cells of
soccer-shogi over every 0.12 s: its reader tree takes longer than that to read
46 changed cells, as a real one would); its LED test as it is (a person sees the chain after the
board's brightness cap: test_leds_as_the_chain_shows_them below); the club
(MQTT) tests, which are the simulator's (the chip's link to a broker is Wi-Fi).
"""

from __future__ import annotations

import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import test_link
from waiting import connected, take, until

from masume.link import BoardEvent, Led

pytestmark = pytest.mark.slow


@pytest.fixture
def make_sim(tmp_path: Path) -> Iterator[Callable[..., object]]:
    """Start emulated chips; all are closed at the end of the test."""
    from masume.sim.chip.board import ChipBoard

    started: list[ChipBoard] = []

    def make(board: object = "soccer-shogi", **kwargs: object) -> ChipBoard:
        kwargs.setdefault("link", tmp_path / f"port-{len(started)}")
        kwargs.setdefault("seed", 1234 + len(started))
        kwargs.setdefault("on_log", lambda message: print(f"chip: {message}", file=sys.stderr))
        chip = ChipBoard(board, **kwargs)  # type: ignore[arg-type]
        started.append(chip)
        return chip

    yield make
    for chip in started:
        chip.close()


# test_link's tests, on the chip.
test_reboot_is_resynchronised_with_a_snapshot = (
    test_link.test_reboot_is_resynchronised_with_a_snapshot)
test_a_board_with_another_map_is_refused = test_link.test_a_board_with_another_map_is_refused
test_an_unknown_board_is_refused = test_link.test_an_unknown_board_is_refused
test_die_and_buttons = test_link.test_die_and_buttons


def reading_of(chip, square: str) -> object:
    stack = tuple(chip.table.stacks[square])
    return bool(stack) if chip.board.cell(square).sensor == "presence" else stack


# The check is 90 rounds (over 2000 changes) on both boards; the suite runs 30
# (some 700 changes, three unplugs, ten rolls on the Tactics table) to keep its time: 90
# passed on both (docs/benchmarks.md, "Emulated chip"), and their chip runs below real
# time on a loaded machine (masume-tactics' 90 took 140 s beside busy-machine).
@pytest.mark.parametrize(("board", "rounds"), [("shogi-soccer", 30), ("masume-tactics", 30)])
def test_thousands_of_changes_arrive_once_in_order_through_noise_and_unplugging(
    make_sim, connect, board: str, rounds: int
) -> None:
    rng = random.Random(7)
    # Every move of a round at once, and each round waits for the board's events: a
    # longer pause of the hand means nothing to the link (ChipBoard's hold).
    chip = make_sim(board, hold=0.3)
    session = connect(chip.port)
    assert connected(session)
    squares = [c.name for c in chip.board.sensed if c.sensor == "identity"]
    pieces = list(chip.board.pieces)
    received: list[BoardEvent] = []
    changes = rolls = 0
    for round_no in range(rounds):
        if round_no % 9 == 4:
            chip.unplug()
        expected: Counter = Counter()
        for square in rng.sample(squares, rng.randint(10, 35)):
            if chip.table.stacks[square]:
                chip.lift(square)
            else:
                chip.place(square, rng.choice(pieces))
            expected[(square, reading_of(chip, square))] += 1
        if chip.board.die and round_no % 3 == 1:
            face = rng.randint(1, 6)
            chip.roll(face)
            expected[("die", face)] += 1
            rolls += 1
        changes += sum(expected.values())
        if round_no % 3 == 0:
            chip.noise(rng.randint(1, 300))
        if round_no % 9 == 4:
            time.sleep(0.15)
            chip.replug()
        events = take(session, sum(expected.values()))
        got = Counter(("die", e.value) if e.type == "die" else (e.square, e.reading)
                      for e in events)
        assert got == expected, (f"round {round_no}: missing {expected - got}, "
                                 f"extra {got - expected}; {session.stats}; "
                                 f"chip: {chip.reboots} reboots")
        received += events
    assert changes >= 20 * rounds
    seqs = [e.seq for e in received]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # each once, in order
    if rolls:
        ids = [e.roll_id for e in received if e.type == "die"]
        assert ids == list(range(ids[0], ids[0] + rolls))
    assert session.stats.connects >= rounds // 9 + 1
    assert session.stats.bad_frames > 0
    assert session.readings == {sq: reading_of(chip, sq) for sq in session.readings}
    assert chip.reboots == 0 and chip.collections >= 1
    assert not session.stats.board_errors  # no faulty sensor


def test_leds_as_the_chain_shows_them(make_sim, connect) -> None:
    chip = make_sim("shogi-soccer")
    cap = chip.board.power["brightness_cap"]
    session = connect(chip.port)
    assert connected(session)
    session.set_leds({"5-K": Led((0, 255, 0), "blink"), "1-K": Led((255, 0, 0)),
                      "9-K": Led((0, 0, 255), "pulse")})
    # What a person sees: the colours after the brightness cap, steady, blinking, pulsing.
    until(lambda: chip.led_patterns == {"5-K": 2, "1-K": 1, "9-K": 3}, "the three patterns")
    assert chip.led_colours["1-K"] == (cap, 0, 0) and chip.led_colours["5-K"] == (0, cap, 0)
    position = chip.board.cell("1-K").leds[0]
    assert chip.chain[position] == (cap, 0, 0)
    session.set_leds({"1-K": Led((0, 0, 255))})  # a whole frame: the others go dark
    until(lambda: (chip.led_colours, chip.led_patterns) == ({"1-K": (0, 0, cap)}, {"1-K": 1}),
          "the new frame")


def test_masume_sim_chip_as_a_user_runs_it_with_a_dead_reader() -> None:
    import json
    import subprocess

    masume = [sys.executable, "-m", "masume.cli"]
    sim = subprocess.Popen([*masume, "sim", "--board", "shogi-soccer", "--chip",
                            "--fault", "dead-reader:5-K"], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
    monitor = None
    try:
        first = sim.stdout.readline()
        assert first.startswith("port: "), first + sim.stderr.read()
        port = first.split(": ", 1)[1].strip()
        monitor = subprocess.Popen([*masume, "board", "monitor", "--port", port, "--json",
                                    "--count", "2"], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        # The board's report of its dead reader may come before or after the handshake's line.
        said = [monitor.stderr.readline()]
        while not said[-1].startswith("monitor: connected to shogi-soccer"):
            assert said[-1], "".join(said)  # the monitor ended without connecting
            said.append(monitor.stderr.readline())
        for line in ("place 1-K ball", "place 9-K nope", "lift 1-K"):
            sim.stdin.write(line + "\n")
            sim.stdin.flush()
            answers = sim.stdout.readline().strip()
            if line == "place 1-K ball":  # the second change must come after the first
                monitor_line = monitor.stdout.readline()
        assert answers == "ok lift 1-K ball"
        # Through the same text streams as readline: communicate() reads the pipes
        # beneath them and would miss what readline has already buffered.
        monitor.wait(timeout=120)
        out, err = monitor.stdout.read(), monitor.stderr.read()
        events = [json.loads(x) for x in [monitor_line, *out.splitlines()]]
        assert [(e["square"], e["reading"]) for e in events] == [("1-K", ["ball"]), ("1-K", [])]
        err = "".join(said) + err
        assert "5-K" in err and "does not answer" in err  # the board said which reader
    finally:
        if monitor is not None and monitor.poll() is None:
            monitor.kill()  # a failed check must not leave it waiting on the port
            monitor.wait()
        sim.stdin.close()
        sim.wait(timeout=60)


def test_a_card_on_the_eyeshield21_mat_is_read_by_its_uid(make_sim, connect) -> None:
    chip = make_sim("eyeshield21")
    session = connect(chip.port)
    assert connected(session)
    zone = next(c.name for c in chip.board.sensed if c.sensor == "card")
    readings = []
    for act in (lambda: chip.place(zone, "tag:04a1b2c3d4e5f6"),
                lambda: chip.place(zone, "tag:08c0ffee"),  # on top: only the top card answers
                lambda: chip.lift(zone)):
        act()
        readings += [(e.square, e.reading) for e in take(session, 1)]
    assert readings == [(zone, "04a1b2c3d4e5f6"), (zone, "08c0ffee"), (zone, "04a1b2c3d4e5f6")]


def test_masume_bench_chip_prints_the_figures_in_board_time() -> None:
    import re
    import subprocess

    done = subprocess.run([sys.executable, "-m", "masume.cli", "bench", "chip", "--board",
                           "soccer-shogi-reed", "--trials", "5"], capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    line = done.stdout.splitlines()[1]
    figures = re.match(r"soccer-shogi-reed \(46 sensed: presence\): boot (\d+) ms, scan pass "
                       r"([\d.]+) ms, settle to event p50 (\d+) ms p99 (\d+) ms \(n=5\), "
                       r"identity sweep -, firmware heap (\d+) KB: left (-?\d+) KB on a Pico W",
                       line)
    assert figures, line
    boot, scan, p50, p99, heap, left = (float(x) for x in figures.groups())
    assert 49 <= p50 <= p99 < 100, line  # the 50 ms debounce (to the ms), a pass or two of 1 ms
    assert boot > 0 and 0 < scan < 5 and 0 < heap < 170 and left == 170 - heap, line
