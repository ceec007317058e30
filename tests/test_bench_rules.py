"""``masume bench rules``: runs, and prints its figures as positive numbers."""

from __future__ import annotations

import re
import subprocess
import sys

NUMBER = r"([0-9]+(?:\.[0-9]+)?)"


def test_bench_rules_prints_positive_figures() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "masume.cli", "bench", "rules", "--game", "soccer-shogi", "--seconds", "0.2"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    generation = next(line for line in lines if line.startswith("legal actions:"))
    playouts = next(line for line in lines if line.startswith("random playouts:"))
    for line, unit in ((generation, "positions/s"), (playouts, "playouts/s")):
        ours, chess = (float(x) for x in re.findall(NUMBER + " " + unit, line))
        ratio = float(re.search("ratio " + NUMBER, line).group(1))
        assert ours > 0 and chess > 0 and ratio > 0
        assert abs(ratio - ours / chess) <= 0.0001 + ratio * 0.01  # printed rounded


def test_bench_rules_refuses_an_unknown_game() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "masume.cli", "bench", "rules", "--game", "tiddlywinks", "--seconds", "0.1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "unknown game 'tiddlywinks'" in result.stderr


def test_bench_rules_times_board_readings_on_a_card_mat() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "masume.cli", "bench", "rules", "--game", "eyeshield21",
         "--seconds", "0.2", "--cpu"],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].endswith("; CPU time")  # timed with --cpu's clock
    line = next(line for line in result.stdout.splitlines() if line.startswith("board readings:"))
    mean, slowest = (float(x) for x in re.findall(NUMBER + " ms", line))
    read, cases = (int(x) for x in re.search(r"(\d+) of (\d+) read", line).groups())
    assert 0 < mean <= slowest and 0 < read <= cases
