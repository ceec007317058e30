"""The emulated chip's peripherals (host/masume/sim/chip: machine, neopixel, time,
os over world.py) on the real MicroPython VM, at their own interfaces: the matrix
electrically, the watchdog, the LED chain's bytes, board time, the random source."""

from __future__ import annotations

import json

from masume.boards import load_board
from micropython_vm import ROOT, run_micropython


def chip_files(board: str) -> dict[str, str]:
    folder = ROOT / "host" / "masume" / "sim" / "chip"
    files = {f"chip/{p.name}": p.read_text() for p in sorted(folder.glob("*.py"))
             if p.name != "board.py"}
    files["board.json"] = load_board(board).firmware_json().decode()
    return files


PRELUDE = """
import sys, json
sys.path.insert(1, '/input/chip')
import world
with open('/input/board.json') as f:
    definition = json.load(f)
state = [[], [[i, 0, []] for i, c in enumerate(definition['cells']) if c[1] != 'none']]
sent = []
host = {'tick': lambda *a: None, 'read': lambda n: '', 'write': sent.append,
        'urandom': lambda n: '05' * n, 'state': lambda: state}
"""


def run(board: str, code: str, faults: dict | None = None) -> list[str]:
    script = PRELUDE + f"board = world.start(definition, {json.dumps(faults or {})}, host)\n" + code
    return run_micropython(script, extra=chip_files(board)).split()


def test_a_row_driven_low_pulls_a_column_low_through_a_closed_switch_only() -> None:
    out = run("soccer-shogi-reed", """
import machine
from machine import Pin
rows = definition['pins']['matrix_rows']; cols = definition['pins']['matrix_cols']
board._apply([[], [[9, 1, []]]])  # a piece on cell 9
k = [i for i, c in enumerate(definition['cells']) if c[1] != 'none'].index(9)
r, c = k // len(cols), k % len(cols)
row = [Pin(p, Pin.OPEN_DRAIN, value=1) for p in rows]
col = [Pin(p, Pin.IN, Pin.PULL_UP) for p in cols]
print(''.join(str(x.value()) for x in col))       # no row driven: all high
row[r].value(0)
print(''.join(str(x.value()) for x in col))       # its column low
row[r].value(1); row[(r + 1) % len(rows)].value(0)
print(''.join(str(x.value()) for x in col))       # another row: the diode blocks
print(r, c)
""")
    c = int(out[4])
    assert out[0] == "1" * 8 and out[2] == "1" * 8
    assert out[1] == "".join("0" if k == c else "1" for k in range(8)), out


def test_swapped_column_wires_read_on_each_others_pin() -> None:
    out = run("soccer-shogi-reed", """
from machine import Pin
rows = definition['pins']['matrix_rows']; cols = definition['pins']['matrix_cols']
sensed = [i for i, c in enumerate(definition['cells']) if c[1] != 'none']
board._apply([[], [[sensed[1], 1, []]]])  # row 0, column 1
Pin(rows[0], Pin.OPEN_DRAIN, value=0)
print(''.join(str(Pin(p, Pin.IN).value()) for p in cols))
""", {"swapped_columns": [[1, 2]]})
    assert out == ["11011111"]


def test_the_watchdog_resets_a_chip_that_misses_it_and_spares_one_that_feeds_it() -> None:
    out = run("soccer-shogi-reed", """
import machine, time
wdt = machine.WDT(timeout=100)
for _ in range(10):
    time.sleep_us(60000)
    wdt.feed()
print('fed')
try:
    time.sleep_us(60000); time.sleep_us(60000)
    print('missed but alive')
except world.WatchdogReset:
    print('reset')
""")
    assert out == ["fed", "reset"]


def test_board_time_moves_with_work_and_sleep_only() -> None:
    out = run("soccer-shogi-reed", """
import time, machine
t0 = time.ticks_us()
p = machine.Pin(17, machine.Pin.IN)
for _ in range(100): p.value()
t1 = time.ticks_us()
time.sleep_ms(5)
t2 = time.ticks_us()
print(time.ticks_diff(t1, t0), time.ticks_diff(t2, t1), time.ticks_ms())
""")
    assert out == ["300", "5000", "5"], out  # 3 us a pin call (world.PIN_US)


def test_the_led_chain_gets_the_neopixel_buffer_in_grb_and_the_die_the_host_bytes() -> None:
    out = run("soccer-shogi-reed", """
import neopixel, machine, os
np = neopixel.NeoPixel(machine.Pin(16), 3)
np[1] = (10, 20, 30)
np.write()
print(board.chain.hex(), board.clock.t, os.urandom(2).hex())
""")
    assert out == ["000000140a1e000000", str(3 * 30 + 50), "0505"]
