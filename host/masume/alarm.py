"""A wake-up on an asyncio loop at the earliest of the deadlines asked for: what a
table or a board's link on the club's loop keeps instead of a thread that polls."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class Alarm:
    """One wake-up on an asyncio loop: set for the earliest deadline asked for (a later
    one leaves it as it is), gone once it rings (calling ``ring``) or is cancelled.
    A deadline is a ``time.monotonic()`` (the loop's clock). The club's tables keep
    one each (masume.club.runner), a board's link on the loop two (masume.link.loop)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, ring: Callable[[], None]) -> None:
        self.loop = loop
        self._ring = ring
        self._handle: asyncio.TimerHandle | None = None
        self.when = float("inf")

    @property
    def armed(self) -> bool:
        return self._handle is not None

    def at(self, when: float) -> None:
        if self._handle is not None and self.when <= when:
            return
        self.cancel()
        self.when = when
        self._handle = self.loop.call_at(when, self._rung)

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._handle, self.when = None, float("inf")

    def _rung(self) -> None:
        self._handle, self.when = None, float("inf")
        self._ring()
