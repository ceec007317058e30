"""The firmware's modules run on CPython too (the tests, `masume bench readers`):
its folder on ``sys.path`` (flat, as on the chip), and a stand-in for MicroPython's
built-in ``micropython`` module, which firmware written the micropython-lib way
imports (``from micropython import const``). The heap lock does nothing here: the
allocation checks mean something on the real VM (tests/micropython_vm.py)."""

from __future__ import annotations

import sys
import types
from importlib import resources


def use_firmware() -> None:
    """Make ``import readers``, ``import app``... work in this interpreter."""
    folder = str(resources.files("masume_firmware"))
    if folder not in sys.path:
        sys.path.insert(0, folder)
    if "micropython" not in sys.modules:
        stand_in = types.ModuleType("micropython", __doc__)
        stand_in.const = lambda value: value  # type: ignore[attr-defined]
        stand_in.heap_lock = lambda: 0  # type: ignore[attr-defined]
        stand_in.heap_unlock = lambda: 0  # type: ignore[attr-defined]
        sys.modules["micropython"] = stand_in
