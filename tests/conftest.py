from __future__ import annotations

import sys
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

    from masume.bench.faults import Disk

    disk = Disk.mount(tmp_path / "disk", size="2m")
    if disk is None:
        pytest.skip("cannot mount a tmpfs here (not root?)")
    try:
        yield disk
    finally:
        disk.unmount()
        os.sync()
