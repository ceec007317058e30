"""The cyclic garbage collector in a process that holds many tables (issue 17).

CPython's collector stops its whole process while it runs, and a full (generation 2)
collection walks every object the process holds. A club server running 1,000 tables
holds some 220 MB: its full collections took up to 250 ms of CPU, its two worker
processes' up to 160 ms, every 10-30 s while the boards played, and every board waiting on
that process waited with it (docs/benchmarks.md, issue 17, seventh round). They found
nothing to free: during play every collection of the server's found 0 objects. What it
holds is the tables' state, alive until their games end; what it makes and drops while
it plays (frames, events, answers) reference counting frees as soon as it is dropped.

:func:`settle`, called once a process has built its tables, takes what is alive then
out of the collector's sight (``gc.freeze``: the tables' long-lived state is walked no
more). The thresholds stay CPython's: raised (the young generation collected every
10,000 allocations, not 700) they made the full collections rarer but the young ones
10-25 ms of CPU and the middle ones up to 73 ms (same round).

Memory stays bounded: reference counting frees everything not in a cycle, as before;
cycles made after a freeze are collected as before; the cycles never collected are
those among the objects frozen that became garbage later, which are at most what was
alive at a freeze, and a process freezes only when it has started tables (at its
start, a failover, an assignment; not as the boards play).

:func:`watch` times every collection of the process from then on and says in the log
each that held it up longer than ``SAID_MS``: a hall's operator sees it if the heap
ever outgrows this.
"""

from __future__ import annotations

import gc
import logging
import time
from typing import Any

log = logging.getLogger("masume.heap")

SAID_MS = 50.0  # a collection this long is said in the log


def settle() -> None:
    """What is alive now is kept out of the collector's walks from now on (see the
    module's text). Cheap (no collection): call it after each start of tables."""
    gc.freeze()


class Pauses:
    """Every collection of this process timed (``gc.callbacks``): how many, the
    longest, and the ones over ``SAID_MS`` said in the log."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.collections = 0
        self.longest_ms = 0.0
        self._began = 0.0
        gc.callbacks.append(self._timed)

    def _timed(self, phase: str, info: dict[str, Any]) -> None:
        # A collector callback must not raise (CPython only prints it): nothing here can.
        if phase == "start":
            self._began = time.perf_counter()
            return
        took = (time.perf_counter() - self._began) * 1000
        self.collections += 1
        self.longest_ms = max(self.longest_ms, took)
        if took > SAID_MS:
            log.warning("%s: a generation %d collection held the process up %.0f ms "
                        "(%d objects freed)", self.name, info["generation"], took,
                        info["collected"])

    def close(self) -> None:
        if self._timed in gc.callbacks:
            gc.callbacks.remove(self._timed)

    def report(self) -> dict[str, Any]:
        return {"collections": self.collections, "longest_ms": round(self.longest_ms, 1),
                "frozen": gc.get_freeze_count()}


_watching: Pauses | None = None


def watch(name: str) -> Pauses:
    """This process's collections timed from now on (:class:`Pauses`; once a process:
    a second call returns the first one's)."""
    global _watching
    if _watching is None:
        _watching = Pauses(name)
    return _watching


def report() -> dict[str, Any] | None:
    """What :func:`watch` has seen in this process, or None if nothing watches."""
    return _watching.report() if _watching is not None else None
