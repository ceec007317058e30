"""The firmware type-checks against MicroPython's own stubs, one stub set per
reference controller (installed by scripts/setup into .venv/micropython-stubs/):
what it calls on machine, time, micropython and the rest exists on that port,
with those arguments. The files are checked as `masume board deploy` lays them
out on the chip (firmware/package.json), with mypy."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from masume.boards import load_board
from masume.deploy import stage

ROOT = Path(__file__).resolve().parents[1]
STUBS = ROOT / ".venv" / "micropython-stubs"

# The stubs come with their own standard library (a typeshed), and their port
# modules have errors of their own that are not ours: follow imports silently,
# stubs included. Our functions carry no annotations, so check their bodies.
CONFIG = """[mypy]
follow_imports = silent
follow_imports_for_stubs = True
check_untyped_defs = True
warn_unreachable = True
"""


@pytest.mark.parametrize("controller", ["pico-w", "esp32-s3"])
def test_firmware_type_checks_against_the_stubs(controller: str) -> None:
    stubs = STUBS / controller
    assert (stubs / "machine.pyi").is_file(), f"no stubs in {stubs}: run ./scripts/setup"
    board = next(b for b in ("shogi-soccer", "masume-tactics") if
                 load_board(b).controller == controller)
    with tempfile.TemporaryDirectory() as folder:
        chip = Path(folder) / "chip"
        plan = stage(load_board(board), chip, mpy=False)
        (Path(folder) / "mypy.ini").write_text(CONFIG)
        files = [str(src) for src, dest in plan.files if dest.endswith(".py")]
        env = dict(os.environ, MYPYPATH=f"{stubs}{os.pathsep}{chip / 'lib'}")
        result = subprocess.run(
            [sys.executable, "-m", "mypy", "--config-file", str(Path(folder) / "mypy.ini"),
             "--custom-typeshed-dir", str(stubs), "--cache-dir", str(Path(folder) / "cache"),
             *files],
            cwd=chip, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"no issues found in {len(files)} source files" in result.stdout
