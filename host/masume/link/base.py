"""What a table needs of its board link: one typed contract every link implements.

:class:`masume.link.BoardSession` is the link to a board (serial or MQTT);
:class:`NoBoard` is a link with no board behind it (a table driven by its API
alone, as the tests of a table's rules do). A table asks nothing else of a link,
and never probes one for what it has.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Literal, Protocol

from masume.health import Health

from .events import BoardEvent, Led, Reading

#: Where a link stands: before its start, shaking hands, serving a board, refused
#: (the board is not the one expected), or closed.
LinkState = Literal["idle", "connecting", "connected", "failed", "closed"]
#: An LED picture: cell name (or index) -> what it shows; every other cell dark.
LedPicture = Mapping[str, Led] | Mapping[int, Led]


class Link(Protocol):
    """One board's link as a table uses it (see :class:`masume.link.BoardSession`)."""

    #: Whose board it is, in messages.
    name: str
    #: Set while a board is connected.
    connected: threading.Event
    #: Why the link last failed, if it did.
    error: str | None
    state: LinkState
    health: Health
    #: The board's readings as last known: square -> reading.
    readings: dict[str, Reading]

    @property
    def alive(self) -> bool:
        """Is the link's thread running?"""

    @property
    def connections(self) -> int:
        """How many times a board has connected (handshakes done): a table that looks
        at :attr:`connected` now and then learns from it that a connection came and
        went between two looks."""

    def rewind(self, boot: int, ack: int, readings: Mapping[str, Reading] | None = None) -> None:
        """Go back to where a saved state left the board's event stream."""

    def clock(self) -> float:
        """Now on ``time.monotonic()``, as far as the board's events are known."""

    def take(self, timeout: float | None = None, limit: int = 64) -> list[BoardEvent]:
        """The events that came in (waiting up to ``timeout`` for the first), not yet
        acknowledged: :meth:`commit` does that once they are saved."""

    def commit(self, boot: int, seq: int) -> None:
        """The events of ``boot`` up to ``seq`` are saved: the board may forget them."""

    def set_leds(self, picture: LedPicture) -> None:
        """Show ``picture`` on the board's LEDs (RuntimeError while no board is there)."""


class NoBoard:
    """A :class:`Link` with no board behind it: no events come, the LED pictures
    sent are kept in :attr:`sent`. For a table driven through its API alone (its
    ``name`` empty: the table names itself after its board).

    >>> link = NoBoard()
    >>> link.set_leds({"A1": Led((255, 0, 0))})
    >>> link.sent[-1]["A1"].rgb, link.take(timeout=0)
    ((255, 0, 0), [])
    """

    def __init__(self, name: str = "") -> None:
        self.name = name
        self.connected = threading.Event()
        self.connected.set()
        self.error: str | None = None
        self.state: LinkState = "connected"
        self.health = Health("board link", name)
        self.readings: dict[str, Reading] = {}
        self.sent: list[LedPicture] = []
        self._nothing = threading.Event()

    @property
    def alive(self) -> bool:
        return True

    @property
    def connections(self) -> int:
        return 1

    def rewind(self, boot: int, ack: int, readings: Mapping[str, Reading] | None = None) -> None:
        if readings is not None:
            self.readings = dict(readings)

    def clock(self) -> float:
        return time.monotonic()

    def take(self, timeout: float | None = None, limit: int = 64) -> list[BoardEvent]:
        if timeout:
            self._nothing.wait(timeout)  # no board: nothing comes, as a quiet board's link
        return []

    def commit(self, boot: int, seq: int) -> None:
        pass

    def set_leds(self, picture: LedPicture) -> None:
        self.sent.append(dict(picture))
