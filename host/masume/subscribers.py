"""Callbacks to tell when something changed (the web view's and the live page's pushes)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable


class Subscribers:
    """A thread-safe list of callbacks. A callback that fails is logged and the
    others are still called: a broken page must never stop a game.

    >>> seen = []
    >>> subscribers = Subscribers("example")
    >>> unsubscribe = subscribers.add(seen.append)
    >>> subscribers.notify("C5")
    >>> unsubscribe(); subscribers.notify("A1")
    >>> seen
    ['C5']
    """

    def __init__(self, name: str) -> None:
        self._log = logging.getLogger(name)
        self._lock = threading.Lock()
        self._callbacks: list[Callable[..., None]] = []

    def add(self, callback: Callable[..., None]) -> Callable[[], None]:
        """Subscribe ``callback``; returns the function that unsubscribes it."""
        with self._lock:
            self._callbacks.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._callbacks:
                    self._callbacks.remove(callback)

        return unsubscribe

    def notify(self, *args: object) -> None:
        with self._lock:
            callbacks = list(self._callbacks)
        for callback in callbacks:
            try:
                callback(*args)
            except Exception:  # noqa: BLE001 (logged: one subscriber's bug stops no other)
                self._log.exception("subscriber failed")

    def __len__(self) -> int:
        with self._lock:
            return len(self._callbacks)
