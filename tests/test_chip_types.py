"""The emulated chip's modules (masume.sim.chip.VM_MODULES), which the host's
mypy run leaves out (they are MicroPython code, and machine, time and os are the
names of the real chip's modules), type-check against MicroPython's own stubs, one
stub set per reference controller, as the firmware does (tests/test_firmware_types.py):

- their bodies: what they use of MicroPython (gc, json, binascii) is there, with
  those arguments;
- their API: every public name of the emulated ``machine``, ``neopixel``, ``time``
  and ``os`` is in the real module's stub, and stands in for it there. A function
  or method accepts every call the stub allows and returns what the stub says (a
  method is checked as an override of the stub's, overloads and all), a class is
  built as the stub's is (its first form), a constant has the stub's type. So the
  firmware, checked against the stubs, calls on the emulated chip only what the
  real chip has, as the real chip takes it.

The API check is a module written from the emulation's syntax tree
(:func:`conformance`), checked with mypy beside copies of the emulated modules
renamed ``vm_<name>`` (their own names are the stubs')."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from masume.boards import load_board
from masume.deploy import stage
from masume.sim.chip import VM_MODULES

ROOT = Path(__file__).resolve().parents[1]
STUBS = ROOT / ".venv" / "micropython-stubs"
CHIP = ROOT / "host" / "masume" / "sim" / "chip"
#: The emulated modules that stand for the real chip's (the rest, world and boot, are
#: the virtual board and its power-up: their bodies are checked, their API is ours).
REAL = ("machine", "neopixel", "time", "os")
#: The reader emulation world.py imports as the package ``chip`` (CONTRACT.md).
READERS = ("readers.py", "mfrc522.py")

# As tests/test_firmware_types.py: the stubs' own errors are not ours; our functions
# carry no annotations, so check their bodies.
CONFIG = """[mypy]
follow_imports = silent
follow_imports_for_stubs = True
check_untyped_defs = True
warn_unreachable = True
"""

HEADER = '''"""Written by tests/test_chip_types.py: the emulated chip against the stubs."""
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


def stands_in_for(real: Callable[P, R]) -> Callable[[Callable[P, R]], None]:
    """The emulated callable must take every call ``real`` takes, and return its type."""
    def check(emulated: Callable[P, R]) -> None:
        pass
    return check


def built_as(real: Callable[P, object]) -> Callable[[Callable[P, object]], None]:
    """The emulated class must be built with every argument list the real one takes
    (its instances are the emulation's own class: the methods are checked apart)."""
    def check(emulated: Callable[P, object]) -> None:
        pass
    return check


def same_type(real: T) -> Callable[[T], None]:
    def check(emulated: T) -> None:
        pass
    return check
'''


def _public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def conformance(module: str, source: str) -> list[str]:
    """The checks, as Python lines, that the emulated ``module`` (its ``source``) stands
    in for the real one: ``module`` is the stub, ``vm_<module>`` the emulation."""
    vm = f"vm_{module}"
    lines = [f"import {module}", f"import {vm}"]
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and _public(node.name):
            lines.append(f"stands_in_for({module}.{node.name})({vm}.{node.name})")
        elif isinstance(node, ast.Assign):
            lines += [f"same_type({module}.{t.id})({vm}.{t.id})" for t in node.targets
                      if isinstance(t, ast.Name) and _public(t.id)]
        elif isinstance(node, ast.ClassDef) and _public(node.name):
            real, emulated = f"{module}.{node.name}", f"{vm}.{node.name}"
            lines.append(f"built_as({real})({emulated})")
            # The methods as overrides of the stub's: mypy checks each against the
            # stub's (every overload); their bodies were checked in the module itself.
            body: list[str] = []
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and _public(item.name):
                    lines.append(f"{real}.{item.name}")  # the stub has it (an override may be new)
                    item.body = [ast.parse("raise NotImplementedError").body[0]]
                    body.append(ast.unparse(item))
                elif isinstance(item, ast.Assign):
                    for t in item.targets:
                        if not (isinstance(t, ast.Name) and _public(t.id)):
                            continue
                        if isinstance(item.value, ast.Name):  # an alias of a method
                            body.append(f"{t.id} = {item.value.id}")
                        else:  # a constant
                            lines.append(f"same_type({real}.{t.id})({emulated}.{t.id})")
            class_lines = [f"class {module}_{node.name}({real}):"]
            class_lines += ["    " + line for text in body for line in text.splitlines()]
            lines += class_lines if body else []
    return lines


def test_conformance_sees_a_method_the_stub_has_not() -> None:
    lines = conformance("machine", "class Pin:\n    def blink(self, n):\n        pass\n")
    assert "built_as(machine.Pin)(vm_machine.Pin)" in lines
    assert "class machine_Pin(machine.Pin):" in lines
    assert "    def blink(self, n):" in lines


def _mypy(controller: str, sources: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """mypy over ``sources`` (file name -> text), beside the firmware as deployed (which
    boot.py imports), the emulated modules (renamed ``vm_<name>``, but world and boot)
    and the reader emulation as the package ``chip``."""
    stubs = STUBS / controller
    assert (stubs / "machine.pyi").is_file(), f"no stubs in {stubs}: run ./scripts/setup"
    board = next(b for b in ("shogi-soccer", "masume-tactics")
                 if load_board(b).controller == controller)
    with tempfile.TemporaryDirectory() as folder:
        vm = Path(folder) / "vm"
        stage(load_board(board), vm, mpy=False)
        (vm / "chip").mkdir()
        for name in READERS:
            shutil.copy(CHIP / name, vm / "chip" / name)
        for name in VM_MODULES:
            shutil.copy(CHIP / f"{name}.py", vm / (f"vm_{name}.py" if name in REAL else
                                                   f"{name}.py"))
        for name, text in sources.items():
            (vm / name).write_text(text)
        (Path(folder) / "mypy.ini").write_text(CONFIG)
        files = [f"vm_{name}.py" if name in REAL else f"{name}.py" for name in VM_MODULES]
        env = dict(os.environ, MYPYPATH=f"{stubs}{os.pathsep}{vm / 'lib'}")
        return subprocess.run(
            [sys.executable, "-m", "mypy", "--config-file", str(Path(folder) / "mypy.ini"),
             "--custom-typeshed-dir", str(stubs), "--cache-dir", str(Path(folder) / "cache"),
             *files, *(name for name in sources if name not in files)],
            cwd=vm, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("controller", ["pico-w", "esp32-s3"])
def test_the_emulated_chip_type_checks_and_stands_in_for_the_real_one(controller: str) -> None:
    checks = [HEADER]
    for name in REAL:
        checks += conformance(name, (CHIP / f"{name}.py").read_text())
    result = _mypy(controller, {"conformance.py": "\n".join(checks) + "\n"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"no issues found in {len(VM_MODULES) + 1} source files" in result.stdout


def test_the_check_sees_an_emulation_the_real_chip_does_not_match() -> None:
    """A method the stub has not, a required argument the stub does not pass, and a
    public name the real module has not: each one is found."""
    source = (CHIP / "machine.py").read_text()
    broken = source.replace("    def on(self):", "    def on(self, level):").replace(
        "    def feed(self):", "    def feed(self):\n        pass\n\n    def starve(self):")
    broken += "\nBOARD_TIME = 0\n"
    checks = [HEADER, *conformance("machine", broken)]
    result = _mypy("pico-w", {"conformance.py": "\n".join(checks) + "\n",
                              "vm_machine.py": broken})
    out = result.stdout
    assert '"on" incompatible with supertype' in out, out
    assert '"starve"' in out and '"BOARD_TIME"' in out, out
