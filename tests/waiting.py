"""Waiting in the tests: on events and states, never on the clock.

A test waits for what it expects (an event, a state) for as long as that takes: a
loaded machine makes it slower, not wrong. The only limit is HANG_S, a guard that
turns a hang (what is awaited never comes) into a failure that says what was
awaited; it is no deadline any run is meant to approach.
"""

from __future__ import annotations

import time
from collections.abc import Callable

HANG_S = 600.0


def until(condition: Callable[[], object], what: str = "the condition",
          limit: float = HANG_S) -> None:
    """Return once ``condition()`` is true (checked every 10 ms)."""
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, f"{what} never came (waited {limit:.0f} s)"
        time.sleep(0.01)


def take(session, count: int, limit: float = HANG_S) -> list:
    """The next ``count`` square/die/button events of a BoardSession (snapshots are
    kept aside), in order."""
    got: list = []
    deadline = time.monotonic() + limit
    while len(got) < count:
        assert time.monotonic() < deadline, (
            f"only {len(got)} of {count} events came: {got[-3:]}; link {session.state}, "
            f"{session.stats}")
        for event in session.events(timeout=0.5):
            if event.type != "snapshot":
                got.append(event)
            if len(got) == count:
                break
    return got


def connected(session, limit: float = HANG_S) -> bool:
    """Wait for a BoardSession's handshake (BoardMismatch if the board is refused)."""
    return session.wait_connected(limit)
