# The reader driver (firmware/mfrc522.py, iso14443a.py, readers.py) against the
# register-level MFRC522 emulation (host/masume/sim/chip/mfrc522.py, readers.py),
# on the reader rig (host/masume/sim/chip/rig.py): a minimal board with a clock,
# pin levels and an SPI bus, the interface h-chip's emulated machine module gives
# the wiring (host/masume/sim/chip/CONTRACT.md), small enough to read.
#
# Plain functions with plain asserts, as in firmware_checks.py: tests/test_readers.py
# runs each on CPython and all of them on the real MicroPython VM. Time is board
# time: the clock moves only when the firmware works (every SPI call and pin
# write costs what hardware/README.md budgets) or sleeps, never by itself.

try:
    from masume.sim.chip import mfrc522 as emu  # CPython: the host package
    from masume.sim.chip.readers import ReaderTree
    from masume.sim.chip.rig import (LOCKED, PINS, SPI, Rig, World, definition, firmware_side,
                                     hardware_side, pin_class, tag)
except ImportError:
    from chipsim import mfrc522 as emu  # the MicroPython VM: staged as a package
    from chipsim.readers import ReaderTree
    from chipsim.rig import (LOCKED, PINS, SPI, Rig, World, definition, firmware_side,
                             hardware_side, pin_class, tag)

import gc

import micropython

import iso14443a as iso
import mfrc522
import readers

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


def check_the_hands_steer_the_rounds():
    """A reed that closes with nothing in the air: a piece came off a stack, so the
    stacks are read first. A reed that opens: a piece is in the air, so the rounds
    read occupied cells only until it lands."""
    rig = Rig(definition(["identity"] * 32, reeds=True, fields=2))
    for c in range(2, 32, 2):
        rig.world.put(c, tag(400 + c, code=16 + c // 2))
    ball, player = tag(499, code=1), tag(498, code=50)
    rig.world.put(1, ball, player)
    rig.passes(200)
    rounds, start = rig.scan.rounds, rig.now()
    rig.passes(300)
    round_us = (rig.now() - start) // (rig.scan.rounds - rounds)
    rig.world.put(1, ball)
    rig.world.put(29, player)  # stepped off the ball: only cell 29's reed saw it
    took = rig.until(1, b"\x01")
    assert took < round_us // 2, (took, round_us)
    rig.world.put(29)  # lifted: in the air
    rig.passes(100)  # rounds made meanwhile hold the occupied cells only
    watched = sum(1 for s in range(32) if rig.scan._watched(s))
    assert rig.scan.in_air and rig.scan.round_len == watched == 16, rig.scan.round_len
    rig.world.put(1, ball, player)  # onto the ball: found by a round without audits
    rig.until(1, b"\x01\x32")
    assert not rig.scan.in_air  # it landed there


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
    # The hands, between passes: a piece lifted (a reed opens: in the air), put on
    # the stack (no reed), the player stepping off onto a free cell (a reed closes
    # with nothing in the air: the stacks are read first).
    moves = {40: (7,), 80: (3, ball, player, tag(92, code=18)), 120: (3, ball), 121: (9, player)}
    LOCKED[0] = True
    micropython.heap_lock()
    try:
        for k in range(200):
            rig.scan.sample(rig.raw)
            hardware_side()
            rig.world.clock.t += 1000
            if k in moves:
                rig.world.put(*moves[k])
            firmware_side()
    finally:
        micropython.heap_unlock()
        LOCKED[0] = False
    assert rig.scan.jobs > 20
    assert rig.reading(3) == b"\x01" and rig.reading(9) == b"\x11" and rig.reading(7) == b""


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
