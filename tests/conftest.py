from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # helpers: micropython_vm, firmware_checks

from masume.firmware_host import use_firmware  # noqa: E402

use_firmware()  # the firmware's modules, and the micropython module, on CPython too


@pytest.fixture
def make_sim(tmp_path: Path) -> Iterator[Callable[..., "SimulatedBoard"]]:  # noqa: F821
    """Start simulated boards (real firmware on the MicroPython VM, real pty); all
    are closed at the end of the test."""
    from masume.sim.board import SimulatedBoard

    started: list[SimulatedBoard] = []

    def make(board: str = "soccer-shogi", **kwargs) -> SimulatedBoard:
        kwargs.setdefault("link", tmp_path / f"port-{len(started)}")
        kwargs.setdefault("seed", 1234 + len(started))
        kwargs.setdefault("on_log", lambda message: print(f"sim: {message}", file=sys.stderr))
        sim = SimulatedBoard(board, **kwargs)
        started.append(sim)
        return sim

    yield make
    for sim in started:
        sim.close()


@pytest.fixture
def connect() -> Iterator[Callable[..., "BoardSession"]]:  # noqa: F821
    """Open host sessions (pyserial on the port); all are closed at the end."""
    from masume.link import BoardSession, SerialTransport

    sessions: list[BoardSession] = []

    def open_session(port: str, **kwargs) -> BoardSession:
        session = BoardSession(SerialTransport(port), **kwargs).start()
        sessions.append(session)
        return session

    yield open_session
    for session in sessions:
        session.close()


@pytest.fixture
def broker(tmp_path: Path):
    """A Mosquitto of this test's own on a free loopback port."""
    from mqtt_broker import Broker

    b = Broker(tmp_path / "broker").start()
    yield b
    b.stop()


@pytest.fixture
def small_disk(tmp_path: Path):
    """A small file system of the test's own (tmpfs, 2 MiB), to fill up or make
    read-only: ``fill()`` takes all its room, ``free()`` gives it back,
    ``read_only(True/False)`` remounts it. Needs root (mount); skipped otherwise."""
    import os
    import subprocess

    folder = tmp_path / "disk"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(folder)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip() or 'not root'}")

    class Disk:
        path = folder
        filler = folder / "filler"

        def fill(self) -> None:
            fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            try:
                for size in (1 << 16, 4096, 1):  # to the last byte
                    while True:
                        try:
                            os.write(fd, bytes(size))
                        except OSError:
                            break
            finally:
                os.close(fd)

        def free(self) -> None:
            self.filler.unlink()

        def read_only(self, on: bool) -> None:
            # A file open for writing makes the remount busy for a moment: try again.
            for _ in range(200):
                done = subprocess.run(["mount", "-o", f"remount,{'ro' if on else 'rw'}",
                                       str(folder)], capture_output=True, text=True)
                if done.returncode == 0:
                    return
                time.sleep(0.05)
            raise AssertionError(f"cannot remount {folder}: {done.stderr}")

    try:
        yield Disk()
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(folder)], capture_output=True)
        if subprocess.run(["umount", str(folder)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(folder)], capture_output=True)
        os.sync()
