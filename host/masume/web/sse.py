"""Server-Sent Events, as both pages send them (the table's web view and the club's
live page): the whole state at connect and after every change, a burst of changes
coalesced into one push, a comment line as heartbeat on an idle stream, and every
stream of an app ended at once when it stops.

One small function rather than sse-starlette: a page's stream is one JSON document
pushed whole, and this is all of it.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.responses import StreamingResponse

#: A comment line on an idle stream this often, so proxies and browsers keep it open.
HEARTBEAT_S = 15.0


def to_json(state: Any) -> str:
    """A state as one compact line of JSON (what a ``data:`` line carries)."""
    return json.dumps(state, separators=(",", ":"), ensure_ascii=False, default=str)


class Streams:
    """The open event streams of one app, so they can all be ended at shutdown."""

    def __init__(self) -> None:
        self.closing = threading.Event()
        self._wakers: set[Callable[[], None]] = set()
        self._lock = threading.Lock()

    def add(self, waker: Callable[[], None]) -> None:
        with self._lock:
            self._wakers.add(waker)

    def discard(self, waker: Callable[[], None]) -> None:
        with self._lock:
            self._wakers.discard(waker)

    def close_all(self) -> None:
        self.closing.set()
        with self._lock:
            wakers = list(self._wakers)
        for wake in wakers:
            wake()

    def __len__(self) -> int:
        with self._lock:
            return len(self._wakers)


def event_stream(
    state: Callable[[], Any],
    subscribe: Callable[[Callable[[], None]], Callable[[], None]],
    streams: Streams,
    *,
    min_push_interval_s: float,
    heartbeat_s: float = HEARTBEAT_S,
) -> StreamingResponse:
    """A stream of ``state()`` (called in a worker thread), pushed again whenever it
    differs after ``subscribe``'s callback says it may have changed (from any thread);
    at most one push per ``min_push_interval_s``."""
    loop = asyncio.get_running_loop()
    changed = asyncio.Event()

    def wake() -> None:
        try:
            loop.call_soon_threadsafe(changed.set)
        except RuntimeError:  # the loop is gone: the server has stopped
            pass

    streams.add(wake)
    unsubscribe = subscribe(wake)

    async def events() -> AsyncIterator[str]:
        try:
            yield "retry: 1000\n\n"
            last = None
            while not streams.closing.is_set():
                changed.clear()
                body = to_json(await run_in_threadpool(state))
                if body != last:
                    yield f"data: {body}\n\n"
                    last = body
                pushed = loop.time()
                try:
                    await asyncio.wait_for(changed.wait(), heartbeat_s)
                except TimeoutError:
                    yield ": heartbeat\n\n"
                    continue
                # Coalesce a burst of changes into one push.
                wait = min_push_interval_s - (loop.time() - pushed)
                if wait > 0:
                    await asyncio.sleep(wait)
        finally:
            streams.discard(wake)
            unsubscribe()

    return StreamingResponse(
        events(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
