"""The engine contract and the layers, checked (issue 13).

- ``mypy --strict`` is clean over the whole host package and the codec, and ruff over
  the host, the protocol and the firmware (:data:`CHECKED`, :data:`LINTED`);
- every docstring example in the package runs in the test command (--doctest-modules);
- the layers of docs/architecture.md hold (import-linter, contracts in pyproject.toml):
  the rules import nothing above layer 1, the protocol nothing of the host, the
  firmware no host code;
- the rules engines open no file (an AST check: import-linter sees imports only);
- every game is a package of masume.rules with a legend for its sides and highlights.
"""

from __future__ import annotations

import ast
import pkgutil
import random
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import masume
import masume.rules
from masume.games import GAMES, load_rules
from masume.sim.chip import VM_MODULES

ROOT = Path(__file__).resolve().parent.parent
#: What mypy --strict checks: the whole host package and the codec.
CHECKED = ["host/masume", "protocol/codec.py"]
#: What ruff checks: the host, the protocol and the firmware.
LINTED = ["host", "protocol", "firmware"]
#: Modules that reach files: the rules import none of them.
FILE_MODULES = {"io", "os", "pathlib", "shutil", "glob", "tempfile", "tomllib", "sqlite3",
                "fileinput", "mmap", "zipfile", "tarfile"}


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)


def test_mypy_strict_passes() -> None:
    """The modules, and that every engine follows the contract (tests/engine_types.py)."""
    done = _run("mypy", "--strict", *CHECKED, "tests/engine_types.py")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_passes() -> None:
    done = _run("ruff", "check", *LINTED)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_layers_hold() -> None:
    """The contracts of ``[tool.importlinter]``: the layers of docs/architecture.md."""
    lint_imports = Path(sys.executable).with_name("lint-imports")  # import-linter's command
    done = subprocess.run([str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_layers_name_every_module_of_the_package() -> None:
    """import-linter checks only the modules its layers name: a module left out (a new
    one, say) could import anything. Each of the package's own must be in a layer."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in config["tool"]["importlinter"]["contracts"]
                    if c["type"] == "layers")
    layered = {name.strip() for layer in contract["layers"]
               for name in layer.replace(":", "|").split("|")}
    own = {f"masume.{m.name}" for m in pkgutil.iter_modules(masume.__path__)
           if m.name != "__main__"}  # the command, run by name, imported by none
    assert own - layered == set()


def test_the_doctests_run_over_the_package() -> None:
    """The test command runs every docstring example in the package (pytest's
    --doctest-modules over host/masume), but in the emulated chip's modules that run
    inside the MicroPython VM: those and only those are left out."""
    options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "tool"]["pytest"]["ini_options"]
    assert "host/masume" in options["testpaths"]
    words = options["addopts"].split()
    assert "--doctest-modules" in words
    ignored = {w.removeprefix("--ignore=") for w in words if w.startswith("--ignore=")}
    assert ignored == {f"host/masume/sim/chip/{name}.py" for name in VM_MODULES}


def _opens_files(path: Path) -> list[str]:
    """What in a module reaches files: imports of FILE_MODULES (but for type checking)
    and calls of ``open``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            typing_only |= {id(n) for n in ast.walk(node)}
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        found += [f"{path.name}:{node.lineno}: import {n}" for n in names
                  if n.split(".")[0] in FILE_MODULES]
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "open"):
            found.append(f"{path.name}:{node.lineno}: open()")
    return found


def test_the_rules_open_no_file() -> None:
    found = [problem for path in sorted((ROOT / "host/masume/rules").rglob("*.py"))
             for problem in _opens_files(path)]
    assert found == []


def test_the_file_check_sees_a_file_opened() -> None:
    tree = Path(__file__)  # this module imports pathlib
    assert any("import pathlib" in p for p in _opens_files(tree))


def test_every_game_is_a_package_of_the_rules() -> None:
    packages = {m.name for m in pkgutil.iter_modules(masume.rules.__path__) if m.ispkg}
    assert {name.replace("-", "_") for name in GAMES} == packages
    for name in GAMES:
        assert load_rules(name).name == name


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_legend_names_every_side_and_every_highlight(game: str) -> None:
    """Random games: every highlight meaning the rules light is in the game's legend."""
    rules = load_rules(game)
    rng = random.Random(game)
    position = rules.start()
    assert tuple(position.legend.sides) == position.sides
    seen: set[str] = set()
    for _ in range(3):
        position = rules.start()
        for _ in range(60):
            seen |= set(position.status().highlights)
            actions = list(position.legal_actions())
            if not actions or position.outcome() is not None:
                break
            position = position.apply(rng.choice(actions))
    assert seen <= set(position.legend.highlights)
