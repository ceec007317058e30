"""The MFRC522 driver and the reader scan (firmware/mfrc522.py, iso14443a.py,
readers.py) against the register-level emulation (host/masume/sim/chip/), with
the same checks on CPython and on the real MicroPython VM (tests/reader_checks.py)."""

from __future__ import annotations

import pytest

import reader_checks
from micropython_vm import ROOT, chip_emulation, run_checks


@pytest.mark.parametrize("name", reader_checks.CHECKS)
def test_on_cpython(name: str) -> None:
    getattr(reader_checks, name)()


@pytest.fixture(scope="module")
def micropython_results() -> dict[str, str]:
    extra = chip_emulation()
    extra["reader_checks.py"] = (ROOT / "tests" / "reader_checks.py").read_text()
    return run_checks("import reader_checks\nreader_checks.run_all()\n", extra=extra)


@pytest.mark.parametrize("name", reader_checks.CHECKS)
def test_on_micropython(name: str, micropython_results: dict[str, str]) -> None:
    assert micropython_results.get(name) == "PASS", micropython_results.get(name, "not run")


def test_bench_readers_prints_its_figures() -> None:
    """`masume bench readers` (docs/benchmarks.md) runs and says what it measured."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "masume.cli", "bench", "readers", "--board", "soccer-shogi",
         "--seconds", "0.3", "--trials", "3"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("readers on soccer-shogi: 46 readers, 8 fields at once, reeds on")
    for start in ("  boot:", "  jobs", "  round", "  every reader by RF", "  scan pass",
                  "  set down", "  onto the ball"):
        assert any(line.startswith(start) for line in lines), start
