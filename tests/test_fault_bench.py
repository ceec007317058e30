"""`masume bench faults` as a user runs it, small: one table, one SIGKILL, every other
fault once, a short fuzz. Its figures (the goals of issue 11) are read from what it
prints; the time to recover is a benchmark's figure and not asserted here."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

#: Seconds between two hand movements: the board still longer than the tracker's
#: settle (masume.tracker.SETTLE_S, 0.35 s) between two actions, as in test_club.py;
#: the bench's own 0.7 s is a person's pace, which adds only waiting here (some 50
#: movements).
PACE_S = 0.5


def test_the_fault_bench_loses_nothing_and_shows_nothing_hidden() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "masume.cli", "bench", "faults", "--tables", "1", "--kills", "1",
         "--payloads", "2000", "--pace", str(PACE_S)],
        capture_output=True, text=True, timeout=900, check=False,
        env=dict(os.environ, PYTHONUNBUFFERED="1"))
    out = done.stdout
    assert re.search(r"^actions played (\d+), recorded \1: 0 lost$", out, re.MULTILINE), (
        out + done.stderr)
    assert re.search(r"^workers: \d+ alive, 0 dead;", out, re.MULTILINE), out
    assert "hidden cards visible to a spectator: 0 " in out
    assert "client-id takeover: refused" in out
    assert "records still differ" not in out
    for fault in ("server SIGKILL 1 of 1", "broker restart", "noise", "Wi-Fi cut",
                  "malformed frames", "client-id takeover"):
        said = re.search(rf"^  {re.escape(fault)}.*: every record exact", out, re.MULTILINE)
        assert said, (fault, out)
    if os.geteuid() == 0:
        assert "disk full: shown on the live page" in out
    assert re.search(r"^fuzz: 2000 payloads, 0 non-FrameError exceptions", out, re.MULTILINE), out
