"""`masume sim` and `masume board monitor` run as a user runs them: two processes
on a real pty."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
MASUME = [sys.executable, "-m", "masume.cli"]


def start_sim(board: str = "soccer-shogi-reed") -> tuple[subprocess.Popen, str]:
    sim = subprocess.Popen([*MASUME, "sim", "--board", board], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
    first = sim.stdout.readline()
    assert first.startswith("port: "), first + sim.stderr.read()
    return sim, first.split(": ", 1)[1].strip()


def command(sim: subprocess.Popen, line: str, hold: float = 0.0) -> str:
    """Send one command; ``hold`` waits after it, as a hand rests before the next move
    (a reading must hold 50 ms to count)."""
    sim.stdin.write(line + "\n")
    sim.stdin.flush()
    answer = sim.stdout.readline().strip()
    time.sleep(hold)
    return answer


def test_monitor_prints_json_events_from_the_simulated_board() -> None:
    sim, port = start_sim()
    try:
        assert Path(port).exists()
        monitor = subprocess.Popen([*MASUME, "board", "monitor", "--port", port, "--json",
                                    "--count", "4"], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        assert monitor.stderr.readline().startswith("monitor: connected to soccer-shogi-reed")
        assert command(sim, "place C5 ball", 0.2) == "ok place C5 ball"
        assert command(sim, "place C5 blue", 0.2) == "ok place C5 blue"
        assert command(sim, "noise 64") == "ok noise 64"
        assert command(sim, "unplug") == "ok unplug"
        assert not Path(port).exists()
        assert command(sim, "place A1 red", 0.2) == "ok place A1 red"
        assert command(sim, "replug") == "ok replug"
        assert command(sim, "lift C5", 0.2) == "ok lift C5 blue"
        assert command(sim, "lift C5", 0.2) == "ok lift C5 ball"
        assert command(sim, "press takeback", 0.2) == "ok press takeback"
        out, _ = monitor.communicate(timeout=30)
        events = [json.loads(line) for line in out.splitlines()]
        assert [(e["type"], e.get("square"), e.get("reading"), e.get("button")) for e in events] == [
            ("square", "C5", True, None),
            ("square", "A1", True, None),
            ("square", "C5", False, None),
            ("button", None, None, "takeback"),
        ]
        assert [e["seq"] for e in events] == [1, 2, 3, 4]
        assert monitor.returncode == 0
    finally:
        sim.stdin.close()
        sim.wait(timeout=10)


def test_sim_answers_bad_commands_with_errors_and_goes_on() -> None:
    sim, _ = start_sim()
    try:
        assert command(sim, "place Z9 ball") == "error: no square 'Z9' on board 'soccer-shogi-reed'"
        assert command(sim, "place C5 dragon").startswith("error: unknown piece 'dragon'")
        assert command(sim, "lift A1") == "error: A1 is empty"
        assert command(sim, "roll 3") == "error: board 'soccer-shogi-reed' has no die"
        assert command(sim, "fly away").startswith("error: unknown command 'fly away'; "
                                                   "the commands: place SQ PIECE | lift SQ")
        assert command(sim, "help") == ("ok help: place SQ PIECE | lift SQ | roll [N] | "
                                        "press NAME | noise N | unplug | replug | leds | "
                                        "help | quit")
        assert command(sim, "place B2 red") == "ok place B2 red"
        assert command(sim, "leds") == "ok leds"
        assert command(sim, "quit") == ""
        assert sim.wait(timeout=10) == 0
    finally:
        if sim.poll() is None:
            sim.kill()


def test_monitor_refuses_a_board_it_was_not_asked_for() -> None:
    sim, port = start_sim()
    try:
        result = subprocess.run([*MASUME, "board", "monitor", "--port", port, "--board",
                                 "shogi-soccer"], capture_output=True, text=True, timeout=30)
        assert result.returncode == 2
        assert "expected board 'shogi-soccer', but 'soccer-shogi-reed' is connected" in result.stderr
    finally:
        sim.stdin.close()
        sim.wait(timeout=10)
