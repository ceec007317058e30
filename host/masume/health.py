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


#: The stages of a club server's loop whose CPU time :class:`LoopCpu` keeps apart.
LOOP_STAGES = ("mqtt-read", "frames", "resent", "link-timers", "tables", "pool", "publish",
               "commit")


class LoopCpu:
    """Where an event loop's thread spends its CPU, stage by stage (issue 17: a
    figure per board event that holds on a busy machine, where latency does not).

    Each stage's time is its own (a stage inside another, publishing inside a
    frame's handling, is taken from the outer one): :meth:`run` reads the thread's
    CPU clock on the way in and out. What no stage covers (the loop's own select
    and scheduling, the odd timer) is the rest of the thread's CPU time, which
    :meth:`report` reads from any thread. Off (``on`` False) it costs a call and a
    test per stage; on, two reads of the thread's clock (about 0.7 us each here).

    >>> cpu = LoopCpu()
    >>> cpu.on = True
    >>> cpu.run("frames", cpu.run, "publish", sum, [1, 2])
    3
    >>> cpu.calls["frames"], cpu.calls["publish"]
    (1, 1)
    """

    def __init__(self) -> None:
        self.on = False
        self.seconds = dict.fromkeys(LOOP_STAGES, 0.0)
        self.calls = dict.fromkeys(LOOP_STAGES, 0)
        self.events = 0  # board events the links took (new ones, not resent duplicates)
        self.messages = 0  # MQTT messages in and out (masume.link.mqtt.MqttHub)
        self.thread_id: int | None = None  # the loop's thread (threading.get_ident())
        self._stack: list[str] = []
        self._last = 0.0

    def run(self, stage: str, call: Any, *args: Any) -> Any:
        """``call(*args)``, its CPU time counted as ``stage``'s."""
        if not self.on:
            return call(*args)
        now = time.thread_time()
        stack = self._stack
        if stack:
            self.seconds[stack[-1]] += now - self._last
        stack.append(stage)
        self._last = now
        self.calls[stage] += 1
        try:
            return call(*args)
        finally:
            now = time.thread_time()
            self.seconds[stack.pop()] += now - self._last
            self._last = now

    def relabel(self, stage: str) -> None:
        """Count the stage running now (its time so far included) as ``stage``."""
        if self.on and self._stack:
            self._stack[-1] = stage
            self.calls[stage] += 1

    def report(self) -> dict[str, Any]:
        """The thread's CPU seconds in all, each stage's, the events (from any thread)."""
        total = float("nan")
        if self.thread_id is not None:
            try:
                total = time.clock_gettime(time.pthread_getcpuclockid(self.thread_id))
            except (OSError, ValueError):
                pass  # the loop's thread has ended
        return {"cpu_s": total, "events": self.events, "messages": self.messages,
                "stages": dict(self.seconds)}

    def line(self) -> str:
        """:meth:`report` as one line of the server's log (``masume bench club`` reads it)."""
        r = self.report()
        return (f"loop cpu: cpu_s {r['cpu_s']:.6f}, events {r['events']}, "
                f"messages {r['messages']}, "
                + ", ".join(f"{k} {v:.6f}" for k, v in r["stages"].items()))


#: The club server's loop (one a process): masume.link.mqtt, masume.link.loop and
#: masume.club count their stages here; the server turns it on (MASUME_LOOP_CPU=1).
LOOP_CPU = LoopCpu()
