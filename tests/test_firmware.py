"""The codec and the firmware modules, checked on CPython and on the real
MicroPython VM with the same checks (tests/firmware_checks.py)."""

from __future__ import annotations

import sys

import pytest

from micropython_vm import ROOT, run_checks, run_micropython

sys.path.insert(0, str(ROOT / "firmware"))  # the firmware's flat module layout

import firmware_checks  # noqa: E402

firmware_checks.VECTORS = str(ROOT / "protocol" / "vectors.json")


@pytest.mark.parametrize("name", firmware_checks.CHECKS)
def test_on_cpython(name: str) -> None:
    getattr(firmware_checks, name)()


@pytest.fixture(scope="module")
def micropython_results() -> dict[str, str]:
    source = (ROOT / "tests" / "firmware_checks.py").read_text()
    return run_checks(
        "import firmware_checks\nfirmware_checks.VECTORS = '/input/vectors.json'\n"
        "firmware_checks.run_all()\n",
        extra={"firmware_checks.py": source},
    )


@pytest.mark.parametrize("name", firmware_checks.CHECKS)
def test_on_micropython(name: str, micropython_results: dict[str, str]) -> None:
    assert micropython_results.get(name) == "PASS", micropython_results.get(name, "not run")


def test_micropython_is_the_real_interpreter() -> None:
    out = run_micropython("print(sys.implementation.name, sys.implementation.version[:2])")
    assert out.split() == ["micropython", "(1,", "27)"]
