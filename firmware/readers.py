# The reader tree: identity and card cells, each with its MFRC522, and the reed
# switches on the sense line, read as hardware/README.md ("Sensing identity and
# cards") designs it:
#
# - every pass, the presence walk over half the reeds: each reed cell's address on
#   the tree, the sense line read (a closed reed pulls it low while its cell is
#   addressed);
# - reader jobs in "lanes", up to [readers] fields of them with their field on at
#   once, never two neighbours: cells whose reed changed first, then the round
#   (every occupied cell, every card zone, and a few other cells in turn); the
#   hands steer it (_hands);
# - a job: wake, field on, 5.1 ms for the tags to power up (ISO/IEC 14443-3
#   5.2.1), WUPA, the anticollision walk at cascade level 1 (which tags are
#   there), then SELECT and READ for a tag not seen before, field off.
#
# "-3 x.y" is a section of ISO/IEC 14443-3:2018, "DS x.y" of the MFRC522 data
# sheet. Nothing in sample() allocates: every buffer is made in __init__.

from array import array

from micropython import const

import iso14443a as iso
import mfrc522
from clock import ticks_add, ticks_diff
from masume_protocol.codec import READING_MAX
from scanner import SLOT

PRESENCE = const(0)
IDENTITY = const(1)
CARD = const(2)
KINDS = {"presence": PRESENCE, "identity": IDENTITY, "card": CARD}

GUARD_US = const(5100)  # -3 5.2.1: a tag accepts a request within 5 ms of the field
WAKE_US = const(40)  # DS 8.6.2: 1024 clocks out of soft power-down
TIMEOUT_US = const(500)  # answers come 91 us after a frame (-3 6.2.1.1); a margin
READ_TIMEOUT_US = const(5000)  # NTAG table 28: READ may take up to 5 ms to answer
HLTA_US = const(1000)  # -3 6.4.3: 1 ms of silence acknowledges HLTA
TRIES = const(3)  # a job that meets a bad frame starts over, this many times in all
MISSES = const(3)  # jobs in a row the chip never finishes: the reader is faulty
AUDIT = const(8)  # cells read each round besides the occupied ones (hardware/README.md)
AIR_US = const(1000000)  # a piece in the air longer than this was put down off the board
PASS_US = const(5000)  # reader work per scan pass, reeds included
WALK_CHUNK = const(24)  # reeds read between two turns of the lanes
PASS_STEPS = const(400)  # ... and at most this many lane turns, should time stand still
BOOT_STEPS = const(200000)
NEAR = const(2)  # half units: fields within one grid unit are never on together
CACHE = const(64)  # tags whose piece code the board remembers

# Faults, as the ERROR text names them.
DEAD = const(1)  # no VersionReg at boot
SILENT = const(2)  # stopped finishing exchanges
BAD_CRC = const(3)  # a tag that answers with CRC errors
CRC_UNIT = const(4)  # the chip's CRC coprocessor disagrees with CRC_A

# Lane states and the exchange in flight.
FREE = const(0)
GUARD = const(1)
WAIT = const(2)
P_WUPA = const(0)
P_WALK = const(1)
P_SELECT = const(2)
P_LEVEL = const(3)  # anticollision at cascade level 2 or 3 of a selected tag
P_READ = const(4)
P_HLTA = const(5)
P_REQA = const(6)

# The outcome of one exchange, for the lane's next step.
GOOD = const(0)
RETRY = const(1)  # a frame failed its CRC or BCC, or the chip flagged an error
GIVE_UP = const(2)  # the chip never answered


class ReaderTree:
    """The chip-select tree of the wiring notes: the address on the reader_mux
    lines (bit 0 on the first), the decoders enabled by reader_cs (active low),
    and the sense line that a closed reed at the addressed cell pulls low."""

    def __init__(self, Pin, pins):
        self.lines = [Pin(p, Pin.OUT, value=0) for p in pins["reader_mux"]]
        self.enable = Pin(pins["reader_cs"], Pin.OUT, value=1)
        sense = pins.get("reader_sense")
        self.sense = None if sense is None else Pin(sense, Pin.IN, Pin.PULL_UP)
        self.address = 0

    def select(self, k):
        diff = k ^ self.address
        if diff:
            for i in range(len(self.lines)):  # only the lines that change
                if diff >> i & 1:
                    self.lines[i].value(k >> i & 1)
            self.address = k

    def reed_closed(self, k):
        sense = self.sense
        if sense is None:  # the loader allows reeds only with a sense line
            return False
        self.select(k)
        self.enable.value(0)
        low = sense.value() == 0
        self.enable.value(1)
        return low


class ChipSelect:
    """A reader's chip select as its MFRC522 driver sees it: a Pin-like value() for
    the reader at address ``k``. A lane points it at the reader of its job."""

    def __init__(self, tree, k=0):
        self.tree = tree
        self.k = k

    def value(self, v):
        if v:
            self.tree.enable.value(1)
        else:
            self.tree.select(self.k)
            self.tree.enable.value(0)


class ReaderScan:
    """Every sensed cell of a board on the reader tree. ``sample(raw)`` has the
    contract of the hardware boundary's: the readings into the scanner's slots."""

    def __init__(self, definition, spi, Pin, ticks_us, sleep_us):
        pins = definition["pins"]
        setup = definition.get("readers", {})
        self.ticks_us = ticks_us
        self.sleep_us = sleep_us
        self.tree = ReaderTree(Pin, pins)
        self.cs_pin = pins["reader_cs"]
        self.mux_pins = pins["reader_mux"]
        reeds = setup.get("reeds", False)
        cells = [(i, c) for i, c in enumerate(definition["cells"]) if c[1] != "none"]
        n = self.count = len(cells)
        self.index = array("H", [i for i, _ in cells])  # protocol address of each slot
        self.names = [c[0] for _, c in cells]
        self.kind = bytearray(KINDS[c[1]] for _, c in cells)
        self.address = array("H", [c[3][0] * 16 + c[3][1] for _, c in cells])
        self.x2 = array("h", [c[3][2] if len(c[3]) > 2 else 0 for _, c in cells])
        self.y2 = array("h", [c[3][3] if len(c[3]) > 2 else 0 for _, c in cells])
        self.reed = bytearray(1 if k == PRESENCE or (reeds and k == IDENTITY) else 0
                              for k in self.kind)
        self.reed_slots = array("H", [s for s in range(n) if self.reed[s]])
        self.polled = not reeds  # without reeds every reader is read every round
        self.closed = bytearray(n)
        self.readers = array("H", [s for s in range(n) if self.kind[s] != PRESENCE])
        # One driver a lane, pointed at the reader of its job, and what each chip
        # holds in TReload: 214 driver objects would cost 45 KB of a Pico W's heap.
        self.spi = spi
        self.reload = array("h", [-1] * n)
        self.readings = bytearray(n * SLOT)
        self.dirty = bytearray(n)
        self.busy = bytearray(n)
        self.fault = bytearray(n)
        self.misses = bytearray(n)
        self.fault_text = {}  # slot -> the ERROR text; made when a fault appears (rare)
        self.fault_version = 0  # bumped when a fault appears
        # The schedule: cells whose reed changed, then the round.
        self.urgent = bytearray(n)
        self.urgent_count = 0
        self.round = array("H", range(n))
        self.taken = bytearray(n)
        self.round_len = 0
        self.round_pos = 0
        self.audit_pos = 0
        self.rounds = 0
        self.booting = False  # the boot sweep: urgent cells only, no rounds
        self.half = 0  # which half of the reeds the next pass reads
        self.in_air = False  # a reed opened and no reed has closed since (_hands)
        self.in_air_since = 0
        self.air_ended = 0  # when the last pause of the audits ended, and its length
        self.air_length = 0
        # Piece codes of the tags seen, by their first cascade level (CL1). Only
        # identity cells use it (hardware/README.md: a known tag needs no READ).
        self.cache_cl1 = bytearray(4 * CACHE)
        self.cache_uid = bytearray(10 * CACHE)
        self.cache_code = bytearray(CACHE)
        self.cache_ambiguous = bytearray(CACHE)  # two tags share this CL1: always read
        self.cache_n = 0
        fields = max(1, min(setup.get("fields", 1), len(self.readers)))
        self.lanes = [Lane(self) for _ in range(fields)]
        self.jobs = 0  # finished, for the figures

    # ---- boot

    def boot(self, limit_us=10000000):
        """Check every reader, then read every cell once (the board's baseline).
        Readers that do not answer are faults, not a reason to stop."""
        crc_vector = b"\x93\x70\x88\x04\x12\x34\xaa"
        chip = self.lanes[0].chip
        for s in self.readers:
            self.point(chip, s)
            version = chip.version()
            if version in mfrc522.NO_ANSWER:
                self._set_fault(s, DEAD, "does not answer: VersionReg 0x%02x" % version)
                continue
            if not chip.init():
                self._set_fault(s, DEAD, "does not come out of its soft reset")
                continue
            got = chip.calc_crc(crc_vector, len(crc_vector))
            want = iso.crc_a(crc_vector, 0, len(crc_vector))
            if got != want:
                self._set_fault(s, CRC_UNIT, "its CRC coprocessor gives 0x%04x, not 0x%04x"
                                % (got & 0xFFFF, want))
            chip.antenna(False)
            chip.power_down()
            self.reload[s] = chip.reload
        self.booting = True  # lanes take urgent cells only: every reader, once
        self._walk_reeds()
        for s in self.readers:
            self._mark_urgent(s)
        start = self.ticks_us()
        for _ in range(BOOT_STEPS):  # bounded twice: in steps, and in board time
            if not (self.urgent_count or self._lanes_busy()):
                break
            if ticks_diff(self.ticks_us(), start) > limit_us:
                break  # the board starts with what it has read
            due = self._service()
            if due > 0:
                self.sleep_us(due)
        self.booting = False
        self.round_len = self.round_pos = 0

    def point(self, chip, s):
        """Point a lane's driver at the reader of slot s."""
        chip.cs.k = self.address[s]
        chip.reload = self.reload[s]

    def chip(self, s):
        """A driver of its own for the reader of slot s (checks, commissioning)."""
        chip = mfrc522.MFRC522(self.spi, ChipSelect(self.tree), self.ticks_us)
        self.point(chip, s)
        return chip

    # ---- the scan pass

    def sample(self, raw):
        # Half the reeds a pass (a reed is read every other pass: 214 take 3 ms),
        # then the lanes, for PASS_US in all: a pass stays short, so that events
        # leave as soon as their debounce ends (hardware/README.md).
        start = self.ticks_us()
        self._walk_reeds(self.half)
        self.half ^= 1
        for _ in range(PASS_STEPS):
            due = self._service()
            left = PASS_US - ticks_diff(self.ticks_us(), start)
            if due == 0 and left > 0:
                continue
            if due < 0 or due >= left:
                break
            self.sleep_us(due)  # a lane is due within the pass: wait for it
        readings = self.readings
        for s in range(self.count):
            if self.dirty[s]:
                self.dirty[s] = 0
                base = s * SLOT
                for k in range(base, base + 1 + readings[base]):
                    raw[k] = readings[k]

    def _service(self):
        """Give every lane its turn. 0: some lane did something (go round again);
        else the microseconds until the first lane is due, or -1 if all are idle."""
        now = self.ticks_us()
        first = -1
        for lane in self.lanes:
            wait = lane.service(now)
            if wait == 0:
                return 0
            if wait > 0 and (first < 0 or wait < first):
                first = wait
        return first

    def _lanes_busy(self):
        for lane in self.lanes:
            if lane.slot >= 0:
                return True
        return False

    def _walk_reeds(self, half=-1):
        """Read the reeds: all of them, or every other one (``half`` 0 or 1). A lane
        whose exchange ends meanwhile is served every WALK_CHUNK reeds."""
        tree = self.tree
        step = 0
        slots = self.reed_slots
        i = max(half, 0)
        stride = 1 if half < 0 else 2  # (range() with a variable step would allocate)
        while i < len(slots):
            s = slots[i]
            i += stride
            closed = 1 if tree.reed_closed(self.address[s]) else 0
            if closed != self.closed[s]:
                self.closed[s] = closed
                if self.kind[s] == PRESENCE:
                    self._set_reading(s, closed)
                else:
                    self._mark_urgent(s)
                    self._hands(closed)
            step += 1
            if step == WALK_CHUNK:
                step = 0
                for _ in range(len(self.lanes)):  # each lane at most once
                    if self._service() != 0:
                        break

    def _hands(self, closed):
        """What a reed says of the hands. One opening: a piece is in the air, and may
        come down on another (a player onto the ball), which no reed sees: until it
        lands, the rounds read occupied cells only. One closing with nothing in the
        air: a piece came off a stack, which no reed saw either: read the stacks now."""
        now = self.ticks_us()
        if not closed:
            # At most AIR_US without audits, and never more than half the time: the
            # audit (every reader by RF, a check on the reeds) goes on in fast play.
            if not self.in_air and ticks_diff(now, self.air_ended) >= self.air_length:
                self.in_air = True
                self.in_air_since = now
        elif self.in_air:
            self._landed()  # where a reed saw it
        else:
            for s in self.readers:
                if self.readings[s * SLOT] >= 2:
                    self._mark_urgent(s)

    def _landed(self):
        self.in_air = False
        self.air_ended = self.ticks_us()
        self.air_length = ticks_diff(self.air_ended, self.in_air_since)

    def _set_reading(self, s, length):
        # A presence cell's reading: 01 when its reed is closed.
        base = s * SLOT
        self.readings[base] = length
        self.readings[base + 1] = 1
        self.dirty[s] = 1

    # ---- the schedule

    def _mark_urgent(self, s):
        if not self.urgent[s] and self.kind[s] != PRESENCE and self.fault[s] != DEAD:
            self.urgent[s] = 1
            self.urgent_count += 1

    def _free(self, s):
        """May a lane start cell s now: not in a lane, and no field on nearby."""
        if self.busy[s]:
            return False
        x, y = self.x2[s], self.y2[s]
        for lane in self.lanes:
            t = lane.slot
            if t >= 0 and -NEAR <= self.x2[t] - x <= NEAR and -NEAR <= self.y2[t] - y <= NEAR:
                return False
        return True

    def pick(self):
        """The next cell for a free lane, or -1."""
        if self.urgent_count:
            for s in self.readers:
                if self.urgent[s] and self._free(s):
                    self.urgent[s] = 0
                    self.urgent_count -= 1
                    return s
        if self.booting:
            return -1
        if self.round_pos >= self.round_len:
            self._new_round()
        for i in range(self.round_pos, self.round_len):
            s = self.round[i]
            if not self.taken[i] and self._free(s):
                self.taken[i] = 1
                while self.round_pos < self.round_len and self.taken[self.round_pos]:
                    self.round_pos += 1
                return s
        return -1

    def _watched(self, s):
        if self.fault[s] == DEAD:
            return False
        if self.polled or self.kind[s] == CARD:
            return True
        return self.closed[s] or self.readings[s * SLOT]

    def _new_round(self):
        n = 0
        for s in self.readers:
            if self._watched(s):
                self.round[n] = s
                n += 1
        if self.in_air and ticks_diff(self.ticks_us(), self.in_air_since) > AIR_US:
            self._landed()  # put down off the board, or missed: audits again
        audits = 0
        readers = len(self.readers)
        for _ in range(readers):
            if self.in_air or audits >= AUDIT or n >= self.count:
                break
            s = self.readers[self.audit_pos]
            self.audit_pos = (self.audit_pos + 1) % readers
            if not self._watched(s) and self.fault[s] != DEAD:
                self.round[n] = s
                n += 1
                audits += 1
        for i in range(n):
            self.taken[i] = 0
        self.round_len = n
        self.round_pos = 0
        self.rounds += 1

    # ---- results and faults

    def finish(self, s, data, n):
        """A job on slot s read data[:n] (codes or a UID)."""
        self.misses[s] = 0
        if self.fault[s] == SILENT or self.fault[s] == BAD_CRC:
            self.fault[s] = 0  # it works again; the host sees readings resume
        base = s * SLOT
        readings = self.readings
        if self.in_air and n > readings[base]:
            self._landed()  # it came down on this cell
        if readings[base] != n or not _equal(readings, base + 1, data, n):
            readings[base] = n
            for i in range(n):
                readings[base + 1 + i] = data[i]
            self.dirty[s] = 1
        self.jobs += 1

    def failed(self, s, outcome):
        """A job on slot s ended without a reading: the last one stands."""
        self.jobs += 1
        if outcome == GIVE_UP:
            self.misses[s] += 1
            if self.misses[s] >= MISSES and not self.fault[s]:
                self._set_fault(s, SILENT, "stopped answering (%d reads in a row)" % MISSES)
        elif not self.fault[s]:
            self._set_fault(s, BAD_CRC, "a tag answers with CRC errors (%d tries)" % TRIES)

    def _set_fault(self, s, kind, what):
        self.fault[s] = kind
        k = self.address[s]
        self.fault_text[s] = (
            "cell %s (index %d): reader %d (bank %d, channel %d: reader_mux %d on GPIO %s, "
            "reader_cs GPIO %s) %s" % (self.names[s], self.index[s], k, k >> 4, k & 15, k,
                                       ",".join(str(p) for p in self.mux_pins), self.cs_pin, what))
        self.fault_version += 1

    def faults(self):
        """The ERROR texts of the faulty cells now (allocates: at a handshake)."""
        return [self.fault_text[s] for s in sorted(self.fault_text) if self.fault[s]]

    def learn(self, cl1, uid, uid_len, code):
        """Remember a tag's code by its CL1; a CL1 shared by two tags is never trusted."""
        for i in range(self.cache_n):
            if _equal(self.cache_cl1, 4 * i, cl1, 4):
                if uid_len != 10 and not _equal(self.cache_uid, 10 * i, uid, uid_len):
                    self.cache_ambiguous[i] = 1
                self.cache_code[i] = code
                return
        if self.cache_n < CACHE:
            i = self.cache_n
            for k in range(4):
                self.cache_cl1[4 * i + k] = cl1[k]
            for k in range(uid_len):
                self.cache_uid[10 * i + k] = uid[k]
            self.cache_code[i] = code
            self.cache_n += 1

    def known_code(self, cl1, offset):
        """The code of the tag whose CL1 is cl1[offset:offset + 4], or -1."""
        for i in range(self.cache_n):
            if not self.cache_ambiguous[i] and _equal(self.cache_cl1, 4 * i, cl1, 4, offset):
                return self.cache_code[i]
        return -1


def _equal(a, a_start, b, n, b_start=0):
    for i in range(n):
        if a[a_start + i] != b[b_start + i]:
            return False
    return True


class Lane:
    """One reader job at a time: a state machine that the scan serves between
    exchanges, so that up to [readers] fields of them run at once."""

    def __init__(self, scan):
        self.scan = scan
        self.slot = -1
        self.started = 0  # ticks_us the job in hand began
        self.chip = mfrc522.MFRC522(scan.spi, ChipSelect(scan.tree), scan.ticks_us)
        self.state = FREE
        self.due = 0
        self.tx = bytearray(12)
        self.rx = bytearray(mfrc522.FIFO_SIZE)
        # The anticollision walk at CL1 (-3 6.5.3.1): the CL being found, its known
        # bits, and the branches still to try (known bits, CL bytes) after a collision.
        self.cl = bytearray(5)
        self.known = 0
        self.branch_bits = bytearray(READING_MAX)
        self.branch_cl = bytearray(4 * READING_MAX)
        self.branches = 0
        self.found = bytearray(4 * READING_MAX)  # the CL1 of each tag in the field
        self.nfound = 0
        # Resolving the found tags: which one, at which level, its UID so far.
        self.target = 0
        self.level = 1
        self.uid = bytearray(10)
        self.uid_len = 0
        self.selected = False  # a tag was selected (the others went IDLE): REQA first
        self.result = bytearray(READING_MAX)  # codes, or a card's UID
        self.nresult = 0
        self.phase = P_WUPA
        self.attempt = 0
        self.bad = GOOD

    # ---- serving

    def service(self, now):
        """0 if it did something, else microseconds until it is due, -1 if idle."""
        if self.state == FREE:
            s = self.scan.pick()
            if s < 0:
                return -1
            self.slot = s
            self.started = now  # for the figures (masume bench readers)
            self.scan.busy[s] = 1
            self.scan.point(self.chip, s)
            self.chip.wake()
            self.chip.antenna(True)
            self.attempt = 0
            self.state = GUARD
            self.due = ticks_add(now, WAKE_US + GUARD_US)
            return 0
        wait = ticks_diff(self.due, now)
        if wait > 0:
            return wait
        if self.state == GUARD:
            self._restart()
            return 0
        result = self.chip.poll(self.rx)
        if result == mfrc522.BUSY:
            self.due = ticks_add(now, 100)
            return 100
        self._answer(result)
        return 0

    def _send(self, n, last_bits, align, timeout_us, expect):
        self.chip.start(self.tx, n, last_bits, align, timeout_us)
        # Not worth polling before the answer can be there (frame times of iso14443a).
        reader_bytes = 0 if n == 1 and last_bits == 7 else n
        self.due = ticks_add(self.scan.ticks_us(), iso.frame_us(reader_bytes, expect))
        self.state = WAIT

    def _done(self, ok):
        chip = self.chip
        chip.antenna(False)
        chip.power_down()
        s = self.slot
        self.scan.reload[s] = chip.reload
        if ok:
            self.scan.finish(s, self.result, self.nresult)
        else:
            self.scan.failed(s, self.bad)
        self.scan.busy[s] = 0
        self.slot = -1
        self.state = FREE

    def _restart(self):
        """WUPA: wakes every tag in the field, HALTed ones too (-3 6.4.1)."""
        self.nfound = 0
        self.branches = 0
        self.nresult = 0
        self.selected = False
        self.tx[0] = iso.WUPA
        self.phase = P_WUPA
        self._send(1, 7, 0, TIMEOUT_US, 2)

    def _retry(self, why):
        """Start the job over after a bad frame: field off and on, so that every
        tag is back in IDLE whatever state the error left it in (-3 6.3)."""
        self.attempt += 1
        self.bad = why
        if self.attempt >= TRIES:
            self._done(False)
            return
        self.chip.antenna(False)
        self.chip.antenna(True)
        self.state = GUARD
        self.due = ticks_add(self.scan.ticks_us(), GUARD_US)

    # ---- the answer to the exchange in flight

    def _answer(self, result):
        if result == mfrc522.NO_CHIP:
            self.bad = GIVE_UP
            self._done(False)
            return
        phase = self.phase
        if phase == P_WUPA:
            if result == mfrc522.TIMEOUT:
                self._finish()  # nobody there (or nothing left after a retry)
            elif result >= 2 or result == mfrc522.COLLISION:
                self.known = 0  # different ATQAs collide; the walk sorts them out
                self.cl[0] = self.cl[1] = self.cl[2] = self.cl[3] = 0
                self._walk()
            else:
                self._retry(RETRY)
        elif phase == P_WALK:
            self._walked(result)
        elif phase == P_SELECT:
            self._selected(result)
        elif phase == P_LEVEL:
            self._levelled(result)
        elif phase == P_READ:
            self._read(result)
        elif phase == P_HLTA:
            self._next_target()  # silence is the acknowledgement (-3 6.4.3)
        elif phase == P_REQA:
            if result >= 2 or result == mfrc522.COLLISION:
                self._select(1)
            else:
                self._retry(RETRY)

    # ---- the walk: which tags are there, by their CL1

    def _walk(self):
        """ANTICOLLISION at CL1 with the known bits of self.cl (-3 6.5.3.1: SEL,
        NVB = the bytes and bits known, then those bits; the tags whose UID starts
        with them answer the rest)."""
        k = self.known
        tx = self.tx
        tx[0] = iso.SEL_CL1
        tx[1] = 0x20 + ((k >> 3) << 4) + (k & 7)
        nbytes = (k + 7) >> 3
        for i in range(nbytes):
            tx[2 + i] = self.cl[i]
        self.phase = P_WALK
        self._send(2 + nbytes, k & 7, k & 7, TIMEOUT_US, 5 - (k >> 3))

    def _merge(self, n):
        # The FIFO's first byte is CL byte known // 8, its low (known % 8) bits
        # ours (DS 9.3.1.14, RxAlign): keep those, take the rest from the answer.
        first = self.known >> 3
        keep = (1 << (self.known & 7)) - 1
        rx = self.rx
        for i in range(n):
            if first + i < 5:
                mine = self.cl[first + i] & keep if i == 0 else 0
                self.cl[first + i] = mine | (rx[i] & ~keep & 0xFF if i == 0 else rx[i])

    def _walked(self, result):
        if result == mfrc522.COLLISION:
            self._merge(min(5 - (self.known >> 3), mfrc522.FIFO_SIZE))
            # DS 9.3.1.15: CollPos counts from bit 1 of the FIFO's first byte.
            at = ((self.known >> 3) << 3) + self.chip.coll_pos - 1
            if at < self.known or at >= 32 or self.branches >= READING_MAX:
                self._retry(RETRY)
                return
            # Try the branch with this bit 1 now and keep the one with 0 for later.
            b = self.branches
            for i in range(4):
                self.branch_cl[4 * b + i] = self.cl[i]
            self.branch_cl[4 * b + (at >> 3)] &= ~(1 << (at & 7)) & 0xFF
            self.branch_bits[b] = at + 1
            self.branches = b + 1
            self.cl[at >> 3] |= 1 << (at & 7)
            self._clear_after(at + 1)
            self.known = at + 1
            self._walk()
            return
        if result < 0 or result < 5 - (self.known >> 3):
            self._retry(RETRY)
            return
        self._merge(result)
        if iso.bcc(self.cl, 0) != self.cl[4]:
            self._retry(RETRY)
            return
        f = self.nfound
        for i in range(4):
            self.found[4 * f + i] = self.cl[i]
        self.nfound = f + 1
        if self.branches and self.nfound < READING_MAX:
            b = self.branches - 1
            self.branches = b
            for i in range(4):
                self.cl[i] = self.branch_cl[4 * b + i]
            self.known = self.branch_bits[b]
            self._clear_after(self.known)
            self._walk()
            return
        self._resolve()

    def _clear_after(self, bits):
        for i in range(4):
            lo = i << 3
            if lo >= bits:
                self.cl[i] = 0
            elif lo + 8 > bits:
                self.cl[i] &= (1 << (bits - lo)) - 1

    # ---- resolving: codes of identity tags, the UID of a card

    def _resolve(self):
        scan = self.scan
        s = self.slot
        if scan.kind[s] == CARD:
            # One card: the lowest CL1 (a pile answers with several; it is "there").
            low = 0
            for f in range(1, self.nfound):
                if _less(self.found, 4 * f, 4 * low):
                    low = f
            self.target = low
            if self.found[4 * low] != iso.CASCADE_TAG:
                for i in range(4):
                    self.result[i] = self.found[4 * low + i]
                self.nresult = 4
                self._finish()
                return
            self._select(1)
            return
        self.target = -1
        self._next_target()

    def _next_target(self):
        """Identity: the next found tag whose code is not known, or the end."""
        scan = self.scan
        if scan.kind[self.slot] == CARD:
            self._finish()
            return
        t = self.target + 1
        while t < self.nfound:
            code = scan.known_code(self.found, 4 * t)
            if code < 0:
                break
            self._add_code(code)
            t += 1
        self.target = t
        if t >= self.nfound:
            self._finish()
        elif self.selected:
            # The last tag selected is HALTed, the others went IDLE at its SELECT
            # (-3 6.3): REQA brings those to READY.
            self.tx[0] = iso.REQA
            self.phase = P_REQA
            self._send(1, 7, 0, TIMEOUT_US, 2)
        else:
            self._select(1)

    def _select(self, level):
        """SELECT of the target at ``level`` (-3 6.5.3): SEL, NVB 0x70, the CL, BCC, CRC_A."""
        self.level = level
        self.selected = True
        tx = self.tx
        tx[0] = iso.SEL_CL1 + 2 * (level - 1)
        tx[1] = iso.NVB_SELECT
        src = self.found if level == 1 else self.cl
        at = 4 * self.target if level == 1 else 0
        for i in range(4):
            tx[2 + i] = src[at + i]
        tx[6] = iso.bcc(tx, 2)
        n = iso.append_crc(tx, 7)
        if level == 1:
            self.uid_len = 0
        self.phase = P_SELECT
        self._send(n, 0, 0, TIMEOUT_US, 3)

    def _selected(self, result):
        if result != 3 or not iso.crc_ok(self.rx, 3):
            self._retry(RETRY)
            return
        sak = self.rx[0]
        cl = self.tx  # the CL just selected is tx[2:6]
        if sak & iso.SAK_CASCADE:
            for i in range(3):  # CT, then three UID bytes
                self.uid[self.uid_len + i] = cl[3 + i]
            self.uid_len += 3
            tx = self.tx
            tx[0] = iso.SEL_CL1 + 2 * self.level
            tx[1] = iso.NVB_ALL
            self.phase = P_LEVEL
            self._send(2, 0, 0, TIMEOUT_US, 5)
            return
        for i in range(4):
            self.uid[self.uid_len + i] = cl[2 + i]
        self.uid_len += 4
        if self.scan.kind[self.slot] == CARD:
            for i in range(self.uid_len):
                self.result[i] = self.uid[i]
            self.nresult = self.uid_len
            self._finish()
            return
        tx = self.tx
        tx[0] = iso.READ
        tx[1] = iso.CODE_PAGE
        n = iso.append_crc(tx, 2)
        self.phase = P_READ
        self._send(n, 0, 0, READ_TIMEOUT_US, 18)

    def _levelled(self, result):
        # Cascade level 2 or 3: only the selected tag is READY there, so no collision.
        if result != 5 or iso.bcc(self.rx, 0) != self.rx[4]:
            self._retry(RETRY)
            return
        for i in range(5):
            self.cl[i] = self.rx[i]
        self._select(self.level + 1)

    def _read(self, result):
        if result != 18 or not iso.crc_ok(self.rx, 18):
            self._retry(RETRY)
            return
        code = self.rx[0]
        self._learn_target(code)
        self._add_code(code)
        tx = self.tx
        tx[0] = iso.HLTA
        tx[1] = 0
        n = iso.append_crc(tx, 2)
        self.phase = P_HLTA
        self._send(n, 0, 0, HLTA_US, 0)

    def _learn_target(self, code):
        # learn() wants the CL1 at offset 0: move the target's to the front of a scratch.
        t = 4 * self.target
        for i in range(4):
            self.cl[i] = self.found[t + i]
        self.scan.learn(self.cl, self.uid, self.uid_len, code)

    def _add_code(self, code):
        # Ascending (hardware/README.md "Identity codes"): insertion into the result.
        n = self.nresult
        if n >= READING_MAX:
            return
        i = n
        while i > 0 and self.result[i - 1] > code:
            self.result[i] = self.result[i - 1]
            i -= 1
        self.result[i] = code
        self.nresult = n + 1

    def _finish(self):
        self._done(True)


def _less(data, a, b):
    for i in range(4):
        if data[a + i] != data[b + i]:
            return data[a + i] < data[b + i]
    return False
