from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable, Iterator

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # helpers: micropython_vm, firmware_checks

from masume.firmware_host import use_firmware  # noqa: E402
from masume.sim.vm import compile_once  # noqa: E402

use_firmware()  # the firmware's modules, and the micropython module, on CPython too
compile_once()  # every MicroPython VM of the tests (micropython_vm.run_micropython too)


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


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    """One headless Chromium for the test module (tests/browser.py): each test opens
    its own pages on it, each in a context of its own (browser.open_page)."""
    from browser import launch_chromium
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            yield browser
        finally:
            browser.close()


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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files with slow tests first (a stable sort: the order within each group
    stays). `--dist loadfile --no-loadscope-reorder` (scripts/test) gives each file
    whole to a worker in this order; a long file taken last would run on alone while
    the other workers have nothing left. (Without --no-loadscope-reorder xdist hands
    the files out by their number of tests, most first: the long end-to-end files,
    which have few, went last.)"""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)
