"""``masume bench sim``: what a simulated board at rest costs (docs/benchmarks.md).

For each board, ``masume sim --board B`` runs in its own process, as a user starts
it, with a host's BoardSession connected (handshake, heartbeats every second: the
link as ``masume play`` keeps it), and nobody touches the table. Over the measured
window: the board process's CPU (user + system, from /proc, in % of one core) and its
memory (VmRSS). The board sleeps until a change, a byte from the host or its link's
next timer (masume.sim.board), so at rest this should be a few % at most.

Anchor, measured in the same run: a process that holds a pseudo-terminal and sleeps
in select() on it with a 100 ms timeout (the floor of a board that wakes for its
link's timers and does nothing else), and the load average of the machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BOARDS = ("soccer-shogi", "shogi-soccer", "masume-tactics")
SETTLE_S = 2.0  # after connecting: the snapshot and the first heartbeats pass
SECONDS = 10.0  # the measured window

_PTY_ANCHOR = """
import os, select, sys, tty
master, slave = os.openpty()
tty.setraw(slave)
print("ready", flush=True)
while True:
    ready, _, _ = select.select([master, sys.stdin], [], [], 0.1)
    if sys.stdin in ready:
        break
    if master in ready:
        os.read(master, 4096)
"""


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (/proc/PID/stat, fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _at_rest(pid: int, seconds: float) -> tuple[float, float]:
    """(% of a core, RSS MB) of a process over ``seconds``."""
    cpu0, wall0 = _cpu_s(pid), time.monotonic()
    time.sleep(seconds)
    cpu1, wall1 = _cpu_s(pid), time.monotonic()
    return 100 * (cpu1 - cpu0) / (wall1 - wall0), _rss_mb(pid)


def board_at_rest(board_id: str, seconds: float) -> tuple[float, float]:
    """(% of a core, RSS MB) of ``masume sim --board board_id`` at rest, a host connected."""
    from masume.boards import load_board
    from masume.link import BoardSession, SerialTransport

    board = load_board(board_id)
    link = Path(tempfile.mkdtemp(prefix="masume-bench-")) / "port"
    sim = subprocess.Popen([sys.executable, "-m", "masume.cli", "sim", "--board", board_id,
                            "--link", str(link)], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True, bufsize=1)
    try:
        assert sim.stdin is not None and sim.stdout is not None
        if not sim.stdout.readline().startswith("port: "):
            raise RuntimeError(f"masume sim --board {board_id} did not start")
        output = sim.stdout
        # Its later lines (the board's log) are read and dropped, so its pipe never fills.
        threading.Thread(target=lambda: [None for _ in output], daemon=True).start()
        with BoardSession(SerialTransport(str(link)), resolve=lambda _id: board) as session:
            if not session.wait_connected(60):
                raise RuntimeError(f"the simulated {board_id} did not answer")
            time.sleep(SETTLE_S)
            for _ in session.events(timeout=0):  # the snapshot after connecting
                pass
            return _at_rest(sim.pid, seconds)
    finally:
        if sim.stdin:
            sim.stdin.close()
        sim.wait(timeout=30)


def pty_anchor(seconds: float) -> tuple[float, float]:
    """(% of a core, RSS MB) of a process asleep on a pty (select, 100 ms timeout)."""
    proc = subprocess.Popen([sys.executable, "-c", _PTY_ANCHOR], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdin is not None
        proc.stdout.readline()
        return _at_rest(proc.pid, seconds)
    finally:
        if proc.stdin:
            proc.stdin.close()
        proc.wait(timeout=10)


def run(boards: list[str] | None = None, seconds: float = SECONDS) -> int:
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f}; each figure over {seconds:.0f} s at rest, a host connected")
    for board_id in boards or BOARDS:
        cpu, rss = board_at_rest(board_id, seconds)
        print(f"masume sim --board {board_id}: {cpu:.1f} % of a core, RSS {rss:.0f} MB")
    cpu, rss = pty_anchor(seconds)
    print(f"anchor: a process asleep on a pty (select, 100 ms): {cpu:.2f} % of a core, "
          f"RSS {rss:.0f} MB")
    return 0
