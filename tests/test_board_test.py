"""``masume board test`` as a user runs it, against the emulated chip with a built
board's faults injected: the command asks, this test is the person at the board
(it puts the pieces on the emulated chip and says which LED it sees lit)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from masume.sim.chip.board import ChipBoard
from waiting import HANG_S

pytestmark = pytest.mark.slow
MASUME = [sys.executable, "-m", "masume.cli"]


def walk(chip: ChipBoard, *options: str) -> tuple[int, list[str]]:
    """Run ``masume board test`` on the chip's port, acting as the person; its exit
    status and its report."""
    command = [*MASUME, "board", "test", "--port", chip.port, "--wait", str(HANG_S), *options]
    test = subprocess.Popen(command,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, bufsize=1)
    report: list[str] = []
    frames = chip.frames
    try:
        for line in test.stdout:
            words = line.split()
            if line.startswith("led "):
                asked = words[1].rstrip(":")
                deadline = time.monotonic() + HANG_S
                while chip.frames == frames:  # the chip has not shown the new picture yet
                    assert time.monotonic() < deadline, f"no LED frame for {asked}"
                    time.sleep(0.01)
                frames = chip.frames
                lit = chip.lit_cells()
                test.stdin.write(("" if lit == [asked] else lit[0] if lit else "none") + "\n")
                test.stdin.flush()
            elif line.startswith("put "):
                chip.place(words[-1], words[1])
            elif line.startswith("take it off "):
                chip.lift(words[-1])
            elif line.startswith(("wiring report", "  ")):
                report.append(line.rstrip())
        assert test.wait(timeout=60) in (0, 1), test.stderr.read()
    finally:
        if test.poll() is None:
            test.kill()
    return test.returncode, report


@pytest.fixture
def chip(tmp_path: Path, request):
    chips: list[ChipBoard] = []

    def start(board: str, *faults: str) -> ChipBoard:
        # The person puts a piece down, waits for the command to have read it, then
        # takes it off: each move waits on the board, so a quick hand (0.3 s of board
        # time between two moves, as test_chip_link's) misses nothing, and the
        # emulated chip, slower than a real one, has less board time to work through.
        c = ChipBoard(board, link=tmp_path / f"port-{len(chips)}", faults=faults, hold=0.3,
                      on_log=lambda m: print(f"chip: {m}", file=sys.stderr))
        chips.append(c)
        return c

    yield start
    for c in chips:
        c.close()


def test_a_presence_board_with_swapped_columns_and_a_missing_led(chip) -> None:
    board = chip("soccer-shogi-reed", "swapped-columns:1,2", "missing-led:20")
    # Every LED, and the cells of the matrix's first two rows (the suite's time: the
    # whole walk finds the same, row by row).
    columns = len(board.board.pins["matrix_cols"])
    sensed = [c.name for c in board.board.sensed][:2 * columns]
    status, report = walk(board, "--cells", ",".join(sensed))
    assert status == 1, report
    text = "\n".join(report)
    # The sensed cells of columns 1 and 2 of the matrix read on each other's cell.
    swapped = {(sensed[k], sensed[k + 1 if k % columns == 1 else k - 1])
               for k in range(len(sensed)) if k % columns in (1, 2) and
               (k + 1 if k % columns == 1 else k - 1) < len(sensed)}
    crossed = {tuple(line.split("a piece on ")[1].split(" is read on ")) for line in report
               if "crossed wires" in line}
    assert crossed == swapped, text
    cell20 = next(c.name for c in board.board.cells if c.leds and c.leds[0] == 20)
    assert f"LED chain offset +1 from position 20 (cell {cell20}) on" in text, text
    assert "dead reader" not in text


def test_a_reader_board_with_a_dead_reader_and_a_tag_with_crc_errors(chip) -> None:
    board = chip("soccer-shogi", "dead-reader:C5", "crc-errors:D4")
    status, report = walk(board, "--no-leds", "--cells", "B5,C5,D5,C4,D4,E4")
    assert status == 1, report
    text = "\\n".join(report)
    assert any(line.startswith("  dead reader: C5: cell C5") for line in report), report
    crc = "  tag reads with CRC errors: D4: cell D4"
    assert any(line.startswith(crc) for line in report), report
    assert not any("crossed" in line or "read nothing" in line for line in report), text


def test_a_sound_board_passes(chip) -> None:
    # The sensing walk of the largest board; its LED walk (239 LEDs, minutes on the
    # emulated chip) is the presence board's test above, which finds an offset chain.
    board = chip("masume-tactics")
    status, report = walk(board, "--no-leds", "--cells", "A1,B1,C1,D5,E5")
    assert (status, report[-1]) == (0, "  no fault found"), report
