"""How a worker thread is doing: what the page, the terminal and a fault bench read.

Every thread that serves a board or a table (the board link, the table, the club
server's workers) keeps one :class:`Health`. It catches every exception at its
top, records it here (:meth:`Health.fault`), and recovers; :meth:`Health.recovered`
then says how long that took. Nothing dies quietly: a fault is logged, counted and
shown until the thread has recovered from it.

>>> health = Health("board link", "table-3")
>>> health.fault("bad frame", "resynchronising")
'board link: bad frame from table-3, resynchronising'
>>> health.recovered()
>>> health.to_dict()["faults"], health.to_dict()["state"]
(1, 'running')
"""

from __future__ import annotations

import threading
import time
from typing import Any


class Health:
    """One worker's health. ``state`` is ``starting``, ``running``, ``recovering``
    (a fault was caught and the worker is getting back), ``paused`` (it waits for
    something outside it, e.g. room on the disk), ``failed`` (it stopped for a
    reason it cannot recover from, e.g. a board with another map) or ``stopped``."""

    def __init__(self, worker: str, name: str) -> None:
        self.worker = worker  # "board link", "table", ...
        self.name = name  # whose: the table or board it serves
        self.state = "starting"
        self.problem: str | None = None  # what is wrong now, as shown; None when all is well
        self.faults = 0
        self.recoveries = 0
        self.last_fault: str | None = None
        self.last_fault_at: float | None = None  # wall clock (time.time())
        self.recovery_s: float | None = None  # how long the last recovery took
        self._fault_t: float | None = None  # monotonic time of the fault not yet recovered
        self._lock = threading.Lock()

    def fault(self, problem: str, then: str, *, recover: bool = True) -> str:
        """Count a fault; the line that says it: what went wrong, whose, and what
        the worker does now ("board link: bad frame from table-3, resynchronising").

        ``recover=False``: the fault was dealt with on the spot (a bad frame
        dropped); it is counted and shown as the last fault, the state is unchanged.
        """
        message = f"{self.worker}: {problem} from {self.name}, {then}"
        with self._lock:
            self.faults += 1
            self.last_fault = message
            self.last_fault_at = time.time()
            if recover:
                if self._fault_t is None:
                    self._fault_t = time.monotonic()
                self.state = "recovering"
                self.problem = message
        return message

    def pause(self, problem: str) -> None:
        """Waiting on something outside the worker (counted once per pause)."""
        with self._lock:
            if self.state != "paused":
                self.faults += 1
                self.last_fault = problem
                self.last_fault_at = time.time()
                self._fault_t = time.monotonic()
            self.state = "paused"
            self.problem = problem

    def recovered(self) -> None:
        """Working again; the time since the first fault not yet recovered is kept."""
        with self._lock:
            if self._fault_t is not None:
                self.recoveries += 1
                self.recovery_s = round(time.monotonic() - self._fault_t, 3)
                self._fault_t = None
            self.state = "running"
            self.problem = None

    def running(self) -> None:
        """Started (or working), with no fault to recover from."""
        with self._lock:
            if self._fault_t is None:
                self.state = "running"
                self.problem = None

    def stop(self, state: str = "stopped", problem: str | None = None) -> None:
        with self._lock:
            self.state = state
            self.problem = problem

    def to_dict(self, alive: bool | None = None) -> dict[str, Any]:
        with self._lock:
            out: dict[str, Any] = {
                "state": self.state, "problem": self.problem, "faults": self.faults,
                "recoveries": self.recoveries, "last_fault": self.last_fault,
                "last_fault_at": self.last_fault_at, "recovery_s": self.recovery_s,
            }
        if alive is not None:
            out["alive"] = alive
        return out
