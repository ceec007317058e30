# The reader driver (firmware/mfrc522.py, iso14443a.py, readers.py) against the
# register-level MFRC522 emulation (host/masume/sim/chip/mfrc522.py, readers.py),
# through a minimal board of this file's own: a clock, pin levels, an SPI bus
# with chip selects. It is the same interface h-chip's emulated machine module
# gives the wiring (host/masume/sim/chip/CONTRACT.md), small enough to read.
#
# Plain functions with plain asserts, as in firmware_checks.py: tests/test_readers.py
# runs each on CPython and all of them on the real MicroPython VM. Time is board
# time: the clock moves only when the firmware works (every SPI call and pin
# write costs what hardware/README.md budgets) or sleeps, never by itself.

try:
    from masume.sim.chip import mfrc522 as emu  # CPython: the host package
    from masume.sim.chip.readers import ReaderTree
except ImportError:
    from chipsim import mfrc522 as emu  # the MicroPython VM: staged as a package
    from chipsim.readers import ReaderTree

import gc

import micropython

import iso14443a as iso
import mfrc522
import readers
from scanner import SLOT

# Board-time costs of the firmware's own work (hardware/README.md: a register
# access is 25 us: the call, two chip-select writes, two bytes at 4 MHz).
PIN_US = 3
SPI_CALL_US = 15
SPI_BYTE_US = 2

_locked = [False]  # the heap is locked by a check: unlock around the emulation


def _hardware_side():
    if _locked[0]:
        micropython.heap_unlock()


def _firmware_side():
    if _locked[0]:
        micropython.heap_lock()


class Clock:
    def __init__(self):
        self.t = 1000

    def now_us(self):
        return self.t

    def advance_us(self, us):
        self.t += us

    def ticks_us(self):
        return self.t & 0x3FFFFFFF


class Bus:
    def __init__(self):
        self.devices = []  # [device, selected(), selected now]

    def attach(self, device, selected):
        self.devices.append([device, selected, False])

    def pins_changed(self, gpio, level):
        for d in self.devices:
            now = d[1]()
            if now != d[2]:
                d[2] = now
                if now:
                    d[0].begin()
                else:
                    d[0].end()

    def transfer(self, out, into, n):
        for d in self.devices:
            if d[2]:
                d[0].exchange(out, into, n)
                return
        for i in range(n):
            into[i] = 0xFF


class World:
    """What the reader wiring needs from a world (CONTRACT.md), and no more."""

    def __init__(self):
        self.clock = Clock()
        self.levels = {}
        self.drives = {}
        self.callbacks = []
        self.buses = {}
        self.tags = {}

    def level(self, gpio):
        drive = self.drives.get(gpio)
        if drive is not None:
            v = drive()
            if v is not None:
                return v
        return self.levels.get(gpio, 1)  # pull-ups everywhere

    def set_level(self, gpio, level):
        self.levels[gpio] = level
        for cb in self.callbacks:
            cb(gpio, level)

    def on_pin_change(self, callback):
        self.callbacks.append(callback)

    def drive(self, gpio, level_fn):
        self.drives[gpio] = level_fn

    def spi_bus(self, spi_id):
        if spi_id not in self.buses:
            bus = self.buses[spi_id] = Bus()
            self.on_pin_change(bus.pins_changed)
        return self.buses[spi_id]

    def tags_at(self, cell):
        return self.tags.get(cell, ())

    def occupied(self, cell):
        return bool(self.tags.get(cell))

    def put(self, cell, *tags):
        self.tags[cell] = list(tags)


def pin_class(world):
    class Pin:
        IN, OUT, OPEN_DRAIN, PULL_UP = 0, 1, 2, 1

        def __init__(self, gpio, mode=0, pull=None, value=None):
            self.gpio = gpio
            if value is not None:
                self.value(value)

        def value(self, v=None):
            world.clock.t += PIN_US
            _hardware_side()
            if v is None:
                out = world.level(self.gpio)
            else:
                out = None
                world.set_level(self.gpio, 1 if v else 0)
            _firmware_side()
            return out

    return Pin


class SPI:
    def __init__(self, world, spi_id):
        self.world = world
        self.bus = world.spi_bus(spi_id)
        self.scratch = bytearray(80)

    def write(self, buf):
        self._transfer(buf, self.scratch, len(buf))

    def write_readinto(self, out, into):
        self._transfer(out, into, len(out))

    def _transfer(self, out, into, n):
        self.world.clock.t += SPI_CALL_US + SPI_BYTE_US * n
        _hardware_side()
        self.bus.transfer(out, into, n)
        _firmware_side()


# ---- boards ------------------------------------------------------------------

PINS = {"reader_spi": {"id": 1, "sck": 26, "mosi": 27, "miso": 28}, "reader_cs": 22,
        "reader_mux": [2, 3, 4, 5, 6, 7, 8, 9], "reader_sense": 10}


def definition(kinds, reeds=False, fields=1, columns=8):
    """A board.json of ``kinds`` (one per cell) on the reader tree, in a grid
    ``columns`` wide, as masume.boards lays one out."""
    cells = []
    k = 0
    for i, kind in enumerate(kinds):
        address = []
        if kind != "none":
            address = [k // 16, k % 16]
            if kind != "presence":
                address += [2 * (i % columns), 2 * (i // columns)]
            k += 1
        cells.append(["c%d" % i, kind, [i], address])
    return {"pins": PINS, "cells": cells, "readers": {"fields": fields, "reeds": reeds},
            "led_count": len(kinds), "buttons": [], "id": "t"}


class Rig:
    """The driver's scan over the emulated readers of a board definition."""

    def __init__(self, defn, boot=True):
        self.world = World()
        self.defn = defn
        self.tree = ReaderTree(self.world, defn)
        Pin = pin_class(self.world)
        self.spi = SPI(self.world, 1)
        clock = self.world.clock
        self.scan = readers.ReaderScan(defn, self.spi, Pin, clock.ticks_us, clock.advance_us)
        self.raw = bytearray(self.scan.count * SLOT)
        if boot:
            self.scan.boot()
            self.sample()

    def now(self):
        return self.world.clock.t

    def sample(self):
        self.scan.sample(self.raw)

    def passes(self, ms):
        """Scan passes as main.py runs them (a pass, then 1 ms asleep) for ``ms``."""
        end = self.now() + ms * 1000
        while self.now() < end:
            self.sample()
            self.world.clock.t += 1000

    def until(self, slot, reading, limit_ms=2000):
        """Passes until sensed cell ``slot`` reads ``reading``; the board time taken."""
        start = self.now()
        while self.reading(slot) != reading:
            assert self.now() - start < limit_ms * 1000, (slot, self.reading(slot), reading)
            self.sample()
            self.world.clock.t += 1000
        return self.now() - start

    def reading(self, slot):
        base = slot * SLOT
        return bytes(self.raw[base + 1:base + 1 + self.raw[base]])


def tag(serial, code=None, size=7):
    uid = emu.ntag_uid(serial)
    if size == 4:
        uid = bytes((0x08,)) + uid[1:4]  # a random 4-byte UID (-3 6.5.4: uid0 0x08)
    elif size == 10:
        uid = uid + bytes((0x11, 0x22, 0x33))
    return emu.Ntag213(uid, code)


# ---- CRC_A ---------------------------------------------------------------------

# ISO/IEC 14443-3 annex B: the two CRC_A examples (bytes as sent, CRC low byte
# first), and HLTA as every reader sends it.
CRC_A_VECTORS = [(b"\x00\x00", b"\xa0\x1e"), (b"\x12\x34", b"\x26\xcf"), (b"\x50\x00", b"\x57\xcd")]


def check_crc_a_vectors_of_the_standard():
    for data, crc in CRC_A_VECTORS:
        got = iso.crc_a(data, 0, len(data))
        assert bytes((got & 0xFF, got >> 8)) == crc, data
        assert emu.crc_a(data) == crc[0] | crc[1] << 8, data  # the emulation agrees
        frame = bytearray(4)
        frame[0], frame[1] = data[0], data[1]
        assert iso.append_crc(frame, 2) == 4 and iso.crc_ok(frame, 4) and bytes(frame[2:]) == crc
        frame[3] ^= 1
        assert not iso.crc_ok(frame, 4)


def check_chip_crc_coprocessor_agrees_with_software():
    rig = Rig(definition(["card"]))
    chip = rig.scan.chip(0)
    chip.wake()
    for data, crc in CRC_A_VECTORS:
        assert chip.calc_crc(data, len(data)) == crc[0] | crc[1] << 8, data
    assert rig.scan.faults() == []


# ---- reading tags ----------------------------------------------------------------


def check_version_register_and_no_tag():
    rig = Rig(definition(["identity", "card"]))
    chip = rig.scan.chip(0)
    assert chip.version() == 0x92
    assert rig.reading(0) == b"" and rig.reading(1) == b""
    assert rig.scan.faults() == []


def check_reads_the_piece_code_of_a_7_byte_uid_tag():
    rig = Rig(definition(["identity", "identity"], fields=2))
    rig.world.put(1, tag(5, code=23))
    took = rig.until(1, b"\x17")
    assert took < 60000, took  # polled (no reeds): within a round or two of 2 cells
    assert rig.reading(0) == b""


def check_reads_4_7_and_10_byte_uids_of_cards():
    rig = Rig(definition(["card", "card", "card"], fields=3, columns=2))
    t4, t7, t10 = tag(1, size=4), tag(2), tag(3, size=10)
    rig.world.put(0, t4)
    rig.world.put(1, t7)
    rig.world.put(2, t10)
    rig.until(0, t4.uid)
    rig.until(1, t7.uid)
    rig.until(2, t10.uid)
    assert len(rig.reading(2)) == 10


def check_two_tags_in_one_field_both_codes_ascending():
    rig = Rig(definition(["identity"] * 4, fields=2))
    player, ball = tag(40, code=23), tag(41, code=1)
    rig.world.put(2, player, ball)  # a player standing on the ball
    rig.until(2, b"\x01\x17")
    rig.world.put(2, ball)  # ... steps off
    rig.until(2, b"\x01")
    rig.world.put(2, tag(50, code=3), tag(51, code=2), tag(52, code=9))  # three, for the walk
    rig.until(2, b"\x02\x03\x09")


def check_boot_sweep_reads_what_stands_and_learns_codes():
    defn = definition(["identity"] * 3, reeds=True, fields=2)
    rig = Rig(defn, boot=False)
    ball, player = tag(7, code=1), tag(8, code=20)
    rig.world.put(0, ball)
    rig.world.put(2, player)
    rig.scan.boot()
    rig.sample()
    assert rig.reading(0) == b"\x01" and rig.reading(2) == b"\x14" and rig.reading(1) == b""
    assert rig.scan.cache_n == 2
    # A known tag moved needs no READ: the walk's CL1 is enough.
    reads = rig.tree.reader(1).frames
    rig.world.put(0)
    rig.world.put(1, ball)
    rig.until(1, b"\x01")
    rig.until(0, b"")
    assert rig.tree.reader(1).frames - reads <= 3, rig.tree.reader(1).frames - reads


def check_reed_change_is_read_before_the_round():
    """The hybrid: a reed that closes puts its cell first in line."""
    rig = Rig(definition(["identity"] * 32, reeds=True, fields=2))
    for c in range(0, 32, 2):
        rig.world.put(c, tag(100 + c, code=16 + c // 2))  # 16 pieces: a round of work
    rig.passes(100)
    rounds, start = rig.scan.rounds, rig.now()
    rig.passes(200)
    round_us = (rig.now() - start) // (rig.scan.rounds - rounds)
    assert rig.reading(30) == bytes((16 + 15,))
    rig.world.put(29, tag(999, code=2))
    took = rig.until(29, b"\x02")
    # Seen within a pass, started by the next lane to come free (one job, about
    # 7 ms, or two if the free lane's neighbour rule holds it), read as a new tag
    # (SELECT and READ, 12.7 ms): not a round's wait.
    assert took < 35000 and took < round_us // 2, (took, round_us)


def check_stack_change_is_seen_within_a_round():
    """No reed changes when a player steps onto the ball: the round finds it."""
    rig = Rig(definition(["identity"] * 32, reeds=True, fields=4))
    pieces = [tag(200 + c, code=16 + c) for c in range(15)]
    for c in range(15):
        rig.world.put(2 * c + 2, pieces[c])
    ball = tag(300, code=1)
    rig.world.put(1, ball)
    rig.passes(150)
    rounds = rig.scan.rounds
    rig.world.put(1, ball, pieces[13])  # from cell 28 onto the ball: cell 1's reed stays closed
    rig.world.put(28)
    took = rig.until(1, bytes((1, 29)))
    assert rig.scan.rounds - rounds <= 2, rig.scan.rounds - rounds
    assert took < 60000, took


# ---- faults ----------------------------------------------------------------------


def check_dead_reader_is_named_with_its_cell_and_lines():
    defn = definition(["card"] * 20)
    rig = Rig(defn, boot=False)
    rig.tree.kill(17, 0x00)
    rig.tree.kill(3, 0xFF)
    rig.world.put(4, tag(9))
    rig.scan.boot()  # the board starts all the same
    rig.sample()
    faults = rig.scan.faults()
    assert len(faults) == 2, faults
    assert faults[0].startswith("cell c3 (index 3): reader 3 (bank 0, channel 3: reader_mux 3 "
                                "on GPIO 2,3,4,5,6,7,8,9, reader_cs GPIO 22)"), faults[0]
    assert faults[0].endswith("does not answer: VersionReg 0xff")
    assert "cell c17 (index 17): reader 17 (bank 1, channel 1" in faults[1]
    assert faults[1].endswith("VersionReg 0x00")
    assert rig.reading(4) == tag(9).uid and rig.reading(17) == b""
    version = rig.scan.fault_version
    rig.passes(100)
    assert rig.scan.fault_version == version  # reported once, not per pass


def check_crc_errors_are_retried_then_reported():
    rig = Rig(definition(["identity", "identity"], fields=1))
    flaky = tag(60, code=5)
    flaky.crc_errors = 2  # two bad answers, then good ones: the third try reads it
    rig.world.put(0, flaky)
    rig.until(0, b"\x05")
    assert rig.scan.faults() == []
    bad = tag(61, code=6)
    bad.crc_errors = -1  # never a good answer
    rig.world.put(1, bad)
    rig.passes(300)
    assert rig.reading(1) == b""  # the last good reading stands
    faults = rig.scan.faults()
    assert len(faults) == 1 and faults[0].startswith("cell c1 (index 1)"), faults
    assert faults[0].endswith("a tag answers with CRC errors (3 tries)")
    bad.crc_errors = 0
    rig.until(1, b"\x06")
    assert rig.scan.faults() == []  # it reads again: no longer a fault


def check_reader_that_stops_answering_becomes_a_fault():
    rig = Rig(definition(["card", "card"], fields=1))
    rig.world.put(1, tag(70))
    rig.until(1, tag(70).uid)
    rig.tree.kill(1, 0x00)  # MISO held low: no IRQ bit ever shows
    start = rig.now()
    rig.passes(1000)
    faults = rig.scan.faults()
    assert len(faults) == 1 and faults[0].endswith("stopped answering (3 reads in a row)"), faults
    assert rig.reading(1) == tag(70).uid  # what it last read stands
    assert rig.now() - start < 2000000


def check_poll_loops_end_when_time_stands_still():
    """A blocking exchange is bounded in polls too: a clock that never moves (a
    wrong emulation, a stuck timer) cannot hang the board."""
    world = World()
    tree = ReaderTree(world, definition(["card"]))
    Pin = pin_class(world)
    spi = SPI(world, 1)
    frozen = lambda: 5  # noqa: E731
    chip = mfrc522.MFRC522(spi, readers.ChipSelect(readers.ReaderTree(Pin, PINS), 0), frozen)
    tree.kill(0, 0x00)
    frame = bytearray(1)
    frame[0] = iso.WUPA
    assert chip.transceive(frame, 1, 7, 0, 500, bytearray(64), polls=50) == mfrc522.NO_CHIP


def check_exchange_times_follow_the_standard():
    """WUPA + ATQA on the emulated chip: 94 us out, 91 us delay, 189 us back (-3 6.2)."""
    rig = Rig(definition(["card"]))
    rig.world.put(0, tag(80))
    chip = rig.scan.chip(0)
    chip.wake()
    chip.antenna(True)
    rig.world.clock.t += 5100
    frame = bytearray(1)
    frame[0] = iso.WUPA
    rx = bytearray(64)
    chip.start(frame, 1, 7, 0, 500)
    sent = rig.now()
    early = sent + 94 + 91 + 189 - 10
    while rig.now() < early:  # nothing before its time
        rig.world.clock.t += 20
        assert not rig.tree.reader(0).regs[emu.COM_IRQ] & emu.RX_IRQ
    rig.world.clock.t += 30
    assert chip.poll(rx) == 2 and rx[0] == 0x44 and rx[1] == 0x00  # NTAG's ATQA
    chip.antenna(False)


# ---- no allocation in the scan loop -------------------------------------------------


def check_reader_scan_allocates_nothing():
    rig = Rig(definition(["identity"] * 12 + ["presence"] * 2, reeds=True, fields=4))
    ball, player = tag(90, code=1), tag(91, code=17)
    rig.world.put(3, ball, player)
    rig.world.put(7, tag(92, code=18))
    rig.world.put(12, tag(93, code=19))  # a presence cell: its reed
    rig.passes(200)  # warm up: codes learned, rounds running
    assert rig.reading(3) == b"\x01\x11" and rig.reading(12) == b"\x01"
    _locked[0] = True
    micropython.heap_lock()
    try:
        for _ in range(150):  # rounds of checks, a stack, a reed, empty cells
            rig.scan.sample(rig.raw)
            _hardware_side()
            rig.world.clock.t += 1000
            _firmware_side()
    finally:
        micropython.heap_unlock()
        _locked[0] = False
    assert rig.scan.jobs > 20 and rig.reading(3) == b"\x01\x11"


CHECKS = [name for name in sorted(globals()) if name.startswith("check_")]
_next = [0]


def _step():
    """Run the next check; False when all have run."""
    if _next[0] >= len(CHECKS):
        return False
    name = CHECKS[_next[0]]
    _next[0] += 1
    try:
        globals()[name]()
        print("PASS " + name)
    except Exception as exc:  # report and go on
        print("FAIL " + name + ": " + type(exc).__name__ + " " + str(exc))
    return True


def run_all():
    # The emulated readers allocate; the VM's heap is 1 MB. MicroPython under
    # wasmtime must not collect while a Python frame it keeps on the heap is
    # active (firmware/README.md), so collect here, between checks, in a frame
    # small enough for the C stack, with no check running.
    gc.disable()
    while _step():
        gc.collect()
