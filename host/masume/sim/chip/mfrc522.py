# One NXP MFRC522 at its SPI interface, register by register, and the ISO/IEC
# 14443 A tags (NTAG21x) in its field: what the firmware's driver talks to on
# the emulated chip. Runs in the MicroPython VM (with h-chip's machine module)
# and on CPython.
#
# Emulated: the SPI framing (DS 8.1.2), the register map with reset values
# (DS 9), the 64-byte FIFO and FIFOLevel, the commands Idle, Mem, CalcCRC,
# Transmit, Receive, Transceive and SoftReset (DS 10.3; MFAuthent is not),
# ComIrq and DivIrq bits, ErrorReg (CollErr, CRCErr, BufferOvfl, ProtocolErr),
# CollReg with the collision position, BitFramingReg (TxLastBits, RxAlign,
# StartSend), the timer (TAuto), TxControlReg's antenna drivers, soft
# power-down and VersionReg. Every command takes its time on the board clock:
# frames at 106 kbit/s (ISO/IEC 14443-3 6.1, 6.2), the tags' frame delay
# (6.2.1.1), the 1024 clocks out of power-down (DS 8.6.2); the IRQ bits show a
# result only once its time has come. Tags follow the ISO/IEC 14443-3 6.3
# states (IDLE, READY per cascade level, ACTIVE, HALT), answer REQA, WUPA,
# ANTICOLLISION bit by bit (two tags that differ collide at the first differing
# bit), SELECT, HLTA and the NTAG READ (16 bytes and CRC_A), and power up within
# the 5 ms ISO/IEC 14443-3 5.2.1 allows.
#
# "DS x.y" is a section of the MFRC522 data sheet rev. 3.9; "-3 x.y" of
# ISO/IEC 14443-3:2018. Written independently of firmware/mfrc522.py, which is
# tested against it.

try:  # for the type checker: MicroPython has no typing module (annotations are not run there)
    from typing import Any
except ImportError:
    pass

FIFO_SIZE = 64
FC_KHZ = 13560  # the carrier, 13.56 MHz
POWER_UP_US = 5000  # -3 5.2.1: a tag may take this long to accept a request
WAKE_US = 38  # DS 8.6.2: 1024 clocks out of soft power-down
CRC_BYTE_NS = 600  # the coprocessor: 8 clocks a byte at 13.56 MHz
FDT_US = 91  # -3 6.2.1.1: frame delay, tag after reader, n = 9 (last bit 1)
ETU_NS = 9440  # -3 6.1: 128 / fc

# Registers (DS 9.2).
COMMAND, COM_IEN, DIV_IEN, COM_IRQ, DIV_IRQ, ERROR = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06
STATUS1, STATUS2, FIFO_DATA, FIFO_LEVEL, WATER_LEVEL = 0x07, 0x08, 0x09, 0x0A, 0x0B
CONTROL, BIT_FRAMING, COLL = 0x0C, 0x0D, 0x0E
MODE, TX_MODE, RX_MODE, TX_CONTROL = 0x11, 0x12, 0x13, 0x14
CRC_RESULT_H, CRC_RESULT_L = 0x21, 0x22
T_MODE, T_PRESCALER, T_RELOAD_H, T_RELOAD_L, T_COUNTER_H, T_COUNTER_L = (
    0x2A, 0x2B, 0x2C, 0x2D, 0x2E, 0x2F)
VERSION = 0x37
# Plain names in a tuple are built anew at each use on MicroPython: sets made once.
READ_ONLY = frozenset((VERSION, ERROR, STATUS1, STATUS2, CRC_RESULT_H, CRC_RESULT_L))

# Reset values (DS 9.2, table 20 and the register descriptions).
RESET = {COMMAND: 0x20, COM_IEN: 0x80, COM_IRQ: 0x14, STATUS1: 0x21, WATER_LEVEL: 0x08,
         CONTROL: 0x10, COLL: 0xA0, MODE: 0x3F, TX_CONTROL: 0x80, 0x16: 0x10, 0x17: 0x84,
         0x18: 0x84, 0x19: 0x4D, 0x1F: 0xEB, 0x24: 0x26, 0x26: 0x48, 0x27: 0x88, 0x28: 0x20,
         0x29: 0x20}

# Commands (DS 10.3).
IDLE, MEM, CALC_CRC, TRANSMIT, RECEIVE, TRANSCEIVE, MF_AUTHENT, SOFT_RESET = (
    0x0, 0x1, 0x3, 0x4, 0x8, 0xC, 0xE, 0xF)
POWER_DOWN = 0x10

# IRQ and error bits (DS 9.3.1.5-9.3.1.7).
TX_IRQ, RX_IRQ, IDLE_IRQ, ERR_IRQ, TIMER_IRQ = 0x40, 0x20, 0x10, 0x02, 0x01
CRC_IRQ = 0x04
BUFFER_OVFL, COLL_ERR, CRC_ERR, PROTOCOL_ERR = 0x10, 0x08, 0x04, 0x01

# Tag states (-3 6.3) and commands.
IDLE_STATE, READY, ACTIVE, HALT = 0, 1, 2, 3
REQA, WUPA, HLTA, READ = 0x26, 0x52, 0x50, 0x30
SEL = (0x93, 0x95, 0x97)
CASCADE_TAG = 0x88


def crc_a(data: bytes | bytearray, preset: int = 0x6363) -> int:
    """-3 6.2.4, annex B: CRC-16 (x^16 + x^12 + x^5 + 1) reflected, no final XOR."""
    crc = preset
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x8408 if crc & 1 else crc >> 1
    return crc


def with_crc(data: bytes | bytearray) -> bytes:
    crc = crc_a(data)
    return bytes(data) + bytes((crc & 0xFF, crc >> 8))


def ntag_uid(serial: int) -> bytes:
    """A 7-byte NXP-style UID (manufacturer 0x04, six serial bytes) for a number."""
    out = bytearray(7)
    out[0] = 0x04
    x = (serial * 2654435761 + 0x5EED) & 0xFFFFFFFFFFFF
    for i in range(6):
        out[1 + i] = (x >> (8 * i)) & 0xFF
    return bytes(out)


class Ntag213:
    """An NTAG213 (45 pages of 4 bytes; NTAG data sheet 8.5): the UID and its check
    bytes in pages 0-2, the NFC capability container in page 3, user memory from
    page 4, whose byte 0 holds a piece's code. Also stands for 4- and 10-byte UID
    type 2 tags (the same memory, pages 0-2 holding what fits)."""

    PAGES = 45

    def __init__(self, uid: bytes, code: int | None = None, sak: int = 0x00) -> None:
        if len(uid) not in (4, 7, 10):
            raise ValueError("a UID has 4, 7 or 10 bytes")
        self.uid = bytes(uid)
        self.sak = sak
        self.crc_errors = 0  # the next n answers with a CRC_A carry a wrong one (-1: all)
        memory = bytearray(4 * self.PAGES)
        if len(uid) == 7:
            memory[0:3] = uid[0:3]
            memory[3] = CASCADE_TAG ^ uid[0] ^ uid[1] ^ uid[2]
            memory[4:8] = uid[3:7]
            memory[8] = uid[3] ^ uid[4] ^ uid[5] ^ uid[6]
        else:
            memory[0:min(8, len(uid))] = uid[:8]
        memory[12:16] = b"\xe1\x10\x12\x00"  # CC: NDEF, 144 bytes, read/write
        if code is not None:
            memory[16] = code
        self.memory = memory

    def __repr__(self) -> str:
        return "Ntag213({})".format(":".join(f"{b:02x}" for b in self.uid))


def _levels(uid: bytes) -> list[bytes]:
    """The tag's cascade levels (-3 6.5.4): 5 bytes each, four UID bytes (or CT and
    three) and their BCC."""
    if len(uid) == 4:
        parts = [uid]
    elif len(uid) == 7:
        parts = [bytes((CASCADE_TAG,)) + uid[0:3], uid[3:7]]
    else:
        parts = [bytes((CASCADE_TAG,)) + uid[0:3], bytes((CASCADE_TAG,)) + uid[3:6], uid[6:10]]
    return [p + bytes((p[0] ^ p[1] ^ p[2] ^ p[3],)) for p in parts]


def _bits(data: bytes | bytearray, nbits: int) -> bytearray:
    """data as bits, one a byte, least significant first (-3 6.2.3)."""
    out = bytearray(nbits)
    for i in range(nbits):
        out[i] = (data[i >> 3] >> (i & 7)) & 1
    return out


class _Fifo:
    """The 64-byte FIFO (DS 8.3.1), in a buffer made once."""

    def __init__(self) -> None:
        self.buf = bytearray(FIFO_SIZE)
        self.start = 0
        self.level = 0

    def clear(self) -> None:
        self.start = self.level = 0

    def push(self, value: int) -> bool:
        if self.level >= FIFO_SIZE:
            return False
        self.buf[(self.start + self.level) % FIFO_SIZE] = value
        self.level += 1
        return True

    def pop(self) -> int:
        if not self.level:
            return 0
        value = self.buf[self.start]
        self.start = (self.start + 1) % FIFO_SIZE
        self.level -= 1
        return value

    def take(self, n: int = FIFO_SIZE) -> bytearray:
        out = bytearray(min(n, self.level))
        for i in range(len(out)):
            out[i] = self.pop()
        return out


# What the chip is waiting for, by kind; each at most once at a time.
EV_TX, EV_RX, EV_TIMER, EV_CRC = 0, 1, 2, 3


class _TagState:
    def __init__(self, tag: Ntag213) -> None:
        self.tag = tag
        self.epoch = -1  # the field that powers it
        self.levels = _levels(tag.uid)
        self.level_bits = [_bits(cl, 40) for cl in self.levels]
        # -3 6.5.2.1: ATQA bits 7-8 give the UID size; bit 1 says bit-frame anticollision.
        size = 0x00 if len(tag.uid) == 4 else 0x40 if len(tag.uid) == 7 else 0x80
        self.atqa_bits = _bits(bytes((size | 0x04, 0x00)), 16)
        self.state = IDLE_STATE
        self.level = 0  # cascade level being resolved in READY (0-based)
        self.powered_at = 0  # it ignores everything before
        self.from_halt = False  # reached READY by WUPA from HALT: errors send it back

    def power_up(self, epoch: int, since: int) -> None:
        self.epoch = epoch
        self.state = IDLE_STATE
        self.level = 0
        self.from_halt = False
        self.powered_at = since + POWER_UP_US


class Mfrc522:
    """An MFRC522: an SPI device (begin, exchange, end) whose antenna reaches the
    tags that ``world.tags_at(cell)`` returns, on the board clock ``world.clock``
    (CONTRACT.md). 214 of them live in a 1 MB VM heap: few attributes, nothing
    made per access."""

    def __init__(self, world: "Any", cell: int, version: int = 0x92) -> None:
        self.world = world
        self.cell = cell
        self.version = version
        self.dead: int | None = None  # a value every register reads as: a dead reader
        self.regs = bytearray(64)
        self.fifo = _Fifo()
        self.mem: bytearray | None = None  # the Mem command's 25 bytes, made at its first use
        self.field_since = None  # board time the field came on, None when off
        self.field_queried = False  # the tags were asked for since the field came on
        self.field_epoch = 0  # fields switched on so far: a tag state of an older one is void
        self.states: dict[Ntag213, _TagState] = {}  # tag -> _TagState, for the tags on the cell
        self._reset_registers()
        self.asleep_until = 0  # PowerDown reads 1 until then (waking, or in reset)
        self.powered_down = False
        self.due = [-1, -1, -1, -1]  # board time of each EV_ kind under way, -1: none
        self.due_arg = [None, None, None, None]
        self.crc_result = 0xFFFF
        self.frames = 0  # exchanges with tags, for the tests
        self._addr: int | None = None
        self._write = False

    def _reset_registers(self) -> None:
        regs = self.regs
        for i in range(64):
            regs[i] = RESET.get(i, 0)
        regs[VERSION] = self.version
        self.fifo.clear()

    # ---- SPI (DS 8.1.2): an address byte (bit 7: read), then data or addresses

    def begin(self) -> None:
        self._addr = None

    def end(self) -> None:
        self._addr = None

    def exchange(self, out: bytes, into: bytearray, n: int) -> None:
        for i in range(n):
            into[i] = self._byte(out[i])

    def _byte(self, mosi: int) -> int:
        if self.dead is not None:
            return self.dead
        if self._addr is None:  # the address byte; MISO undefined (reads 0)
            self._addr = (mosi >> 1) & 0x3F
            self._write = not mosi & 0x80
            return 0
        if self._write:  # every data byte goes to the same register (DS 8.1.2.2)
            self._store(self._addr, mosi)
            return 0
        value = self._load(self._addr)  # the register named in the previous byte
        self._addr = (mosi >> 1) & 0x3F  # a read may name a new register each byte
        return value

    # ---- registers

    def _load(self, reg: int) -> int:
        self._advance()
        regs = self.regs
        if reg == FIFO_DATA:
            return self.fifo.pop()
        if reg == FIFO_LEVEL:
            return self.fifo.level
        if reg == COMMAND:
            asleep = self.powered_down or _before(self.world.clock.now_us(), self.asleep_until)
            return (regs[COMMAND] & 0x2F) | (POWER_DOWN if asleep else 0)
        if reg == COM_IRQ:
            return regs[COM_IRQ] & 0x7F
        if reg == STATUS1:
            return self._status1()
        if reg == CRC_RESULT_H:
            return self.crc_result >> 8
        if reg == CRC_RESULT_L:
            return self.crc_result & 0xFF
        return regs[reg]

    def _status1(self) -> int:
        level = self.fifo.level
        water = self.regs[WATER_LEVEL] & 0x3F
        value = 0
        if level <= water:
            value |= 0x01  # LoAlert
        if FIFO_SIZE - level <= water:
            value |= 0x02  # HiAlert
        if self.due[EV_TIMER] >= 0:
            value |= 0x08  # TRunning
        if self.due[EV_CRC] < 0:
            value |= 0x20  # CRCReady
        return value

    def _error_bits(self, bits: int) -> None:
        self.regs[ERROR] |= bits
        self.regs[COM_IRQ] |= ERR_IRQ

    def _store(self, reg: int, value: int) -> None:
        self._advance()
        regs = self.regs
        if reg == FIFO_DATA:
            if not self.fifo.push(value):
                self._error_bits(BUFFER_OVFL)
            return
        if reg == FIFO_LEVEL:
            if value & 0x80:  # FlushBuffer
                self.fifo.clear()
                regs[ERROR] &= ~BUFFER_OVFL & 0xFF
            return
        if reg == COM_IRQ or reg == DIV_IRQ:  # bit 7 (Set1/Set2): set or clear the marked bits
            if value & 0x80:
                regs[reg] |= value & 0x7F
            else:
                regs[reg] &= ~value & 0x7F
            return
        if reg == COMMAND:
            self._command(value)
            return
        if reg == BIT_FRAMING:
            regs[reg] = value & 0x7F
            if value & 0x80 and regs[COMMAND] & 0x0F == TRANSCEIVE:
                self._transmit(receive=True)
            return
        if reg == TX_CONTROL:
            regs[reg] = value
            self._field(bool(value & 0x03))
            return
        if reg in READ_ONLY:
            return  # read-only
        if reg == COLL:
            regs[reg] = (regs[reg] & 0x7F) | (value & 0x80)  # only ValuesAfterColl
            return
        regs[reg] = value

    # ---- time

    def _advance(self) -> None:
        """Let whatever was due by now happen."""
        now = self.world.clock.now_us()
        due = self.due
        while True:
            first = -1
            for kind in range(4):
                if due[kind] >= 0 and not _before(now, due[kind]) and (
                        first < 0 or due[kind] < due[first]):
                    first = kind
            if first < 0:
                return
            at, arg = due[first], self.due_arg[first]
            due[first] = -1
            self.due_arg[first] = None
            self._happen(at, first, arg)

    def _schedule(self, at: int, kind: int, arg: Any = None) -> None:
        self.due[kind] = at
        self.due_arg[kind] = arg

    def _cancel(self) -> None:
        for kind in range(4):
            self.due[kind] = -1
            self.due_arg[kind] = None

    def _happen(self, at: int, what: int, arg: Any) -> None:
        regs = self.regs
        if what == EV_TX:  # the frame is out; the tags answer, or the timer runs
            regs[COM_IRQ] |= TX_IRQ
            if arg is None:  # Transmit: done
                regs[COM_IRQ] |= IDLE_IRQ
                regs[COMMAND] = (regs[COMMAND] & 0xF0) | IDLE
                return
            answer = self._tags_answer(arg)
            if answer is None:
                if regs[T_MODE] & 0x80:  # TAuto: the timer starts as the frame ends
                    self._schedule(at + self._timer_us(), EV_TIMER)
                return
            nbits = answer[1]
            self._schedule(at + FDT_US + ((nbits + nbits // 8 + 2) * ETU_NS) // 1000, EV_RX, answer)
        elif what == EV_RX:
            self._receive(arg)
        elif what == EV_TIMER:
            regs[COM_IRQ] |= TIMER_IRQ
        elif what == EV_CRC:
            self.crc_result = crc_a(arg, self._crc_preset())
            regs[DIV_IRQ] |= CRC_IRQ

    def _timer_us(self) -> int:
        regs = self.regs
        prescaler = ((regs[T_MODE] & 0x0F) << 8) | regs[T_PRESCALER]
        reload = (regs[T_RELOAD_H] << 8) | regs[T_RELOAD_L]
        return (reload + 1) * (2 * prescaler + 1) * 1000 // FC_KHZ

    def _crc_preset(self) -> int:
        return (0x0000, 0x6363, 0xA671, 0xFFFF)[self.regs[MODE] & 0x03]

    # ---- commands (DS 10.3)

    def _command(self, value: int) -> None:
        regs = self.regs
        now = self.world.clock.now_us()
        was_down = self.powered_down
        if value & POWER_DOWN:
            self._cancel()
            self.powered_down = True
            self._field(False)  # the oscillator stops; so does the carrier
            regs[COMMAND] = (regs[COMMAND] & 0xF0) | IDLE
            return
        if was_down:
            self.powered_down = False
            self.asleep_until = now + WAKE_US
            self._field(bool(regs[TX_CONTROL] & 0x03))
        command = value & 0x0F
        regs[COMMAND] = (value & 0x20) | command
        self._cancel()
        if command == IDLE:
            return
        regs[ERROR] &= BUFFER_OVFL  # a new command clears the other errors
        if command == SOFT_RESET:
            self._field(False)
            self._reset_registers()
            self.crc_result = 0xFFFF
            self.asleep_until = now + WAKE_US
            return
        if command == CALC_CRC:
            data = self.fifo.take()
            self._schedule(now + max(1, len(data) * CRC_BYTE_NS // 1000), EV_CRC, data)
            return
        if command == MEM:
            if self.mem is None:
                self.mem = bytearray(25)
            if self.fifo.level >= 25:
                self.mem[:] = self.fifo.take(25)
            else:
                for byte in self.mem:
                    self.fifo.push(byte)
            regs[COM_IRQ] |= IDLE_IRQ
            regs[COMMAND] = (regs[COMMAND] & 0xF0) | IDLE
            return
        if command == TRANSMIT:
            self._transmit(receive=False)
            return
        if command == RECEIVE:
            if regs[T_MODE] & 0x80:
                self._schedule(now + self._timer_us(), EV_TIMER)
            return
        if command == MF_AUTHENT:  # not emulated: the chip says so
            self._error_bits(PROTOCOL_ERR)
            regs[COMMAND] = (regs[COMMAND] & 0xF0) | IDLE
            return
        # TRANSCEIVE: waits for StartSend (DS 10.3.1.8)

    def _transmit(self, receive: bool) -> None:
        regs = self.regs
        data: bytes | bytearray = self.fifo.take()
        last = regs[BIT_FRAMING] & 0x07
        regs[ERROR] &= BUFFER_OVFL
        if regs[TX_MODE] & 0x80 and data:  # TxCRCEn: the chip appends CRC_A
            data = with_crc(data)
        nbits = 8 * len(data) - (8 - last if last else 0)
        # -3 6.2.3: a start bit, the bits with a parity bit after each whole byte,
        # the end of communication (2 etu).
        air = ((1 + nbits + (nbits // 8) + 2) * ETU_NS) // 1000
        frame = (data, nbits) if receive else None
        self.frames += 1
        self._schedule(self.world.clock.now_us() + air, EV_TX, frame)

    # ---- the RF field and the tags

    def _field(self, on: bool) -> None:
        now = self.world.clock.now_us()
        on = on and not self.powered_down
        if on and self.field_since is None:
            self.field_since = now
            self.field_queried = False
            self.field_epoch += 1
        elif not on and self.field_since is not None:
            self.field_since = None  # every tag back to POWER-OFF (the epoch moves on)

    def _tags_answer(self, frame: tuple[bytes | bytearray, int]
                     ) -> tuple[bytearray, int, int] | None:
        """Each powered tag's answer to the frame (-3 6.3, 6.4, 6.5; NTAG 10.2),
        superposed bit by bit; None if none answers, else (bits, their number,
        the first collision's position from 1, or 0)."""
        if self.field_since is None:
            return None
        data, nbits = frame
        now = self.world.clock.now_us()
        tags = self.world.tags_at(self.cell)
        states = self.states
        for tag in states:
            if tag not in tags:  # lifted off: its state is gone (rare: copy, then drop)
                for gone in [t for t in states if t not in tags]:
                    del states[gone]
                break
        first = None
        more = None
        for tag in tags:
            st = states.get(tag)
            if st is None:
                st = states[tag] = _TagState(tag)
            if st.epoch != self.field_epoch:
                # Powered up by this field: on the cell as it came on, from then; set
                # down under a live field, from now.
                st.power_up(self.field_epoch, now if self.field_queried else self.field_since)
            if _before(now, st.powered_at):
                continue
            bits = self._tag_command(st, data, nbits)
            if bits is None:
                continue
            if first is None:
                first = bits
            elif more is None:
                more = [first, bits]
            else:
                more.append(bits)
        self.field_queried = True
        if more is None:
            return None if first is None else (first, len(first), 0)
        length = 0
        for a in more:
            length = max(length, len(a))
        out = bytearray(length)
        collision = 0
        for i in range(length):
            ones = zeros = 0
            for a in more:
                if i < len(a):
                    if a[i]:
                        ones += 1
                    else:
                        zeros += 1
            if ones and zeros and not collision:
                collision = i + 1
            out[i] = 1 if ones else 0
        return out, length, collision

    def _tag_command(self, st: _TagState, data: bytes | bytearray, nbits: int) -> bytearray | None:
        """One tag's answer, as bits, or None."""
        tag = st.tag
        if nbits == 7:  # REQA, WUPA (-3 6.4.1)
            cmd = data[0] & 0x7F
            if cmd == WUPA and (st.state == IDLE_STATE or st.state == HALT) or (
                    cmd == REQA and st.state == IDLE_STATE):
                st.from_halt = st.state == HALT
                st.state = READY
                st.level = 0
                return st.atqa_bits
            if st.state == READY or st.state == ACTIVE:
                st.state = HALT if st.from_halt else IDLE_STATE
            return None
        if nbits < 16:
            return self._error(st)
        cmd = data[0]
        if st.state == READY and cmd in SEL:
            return self._select(st, data, nbits)
        if st.state == ACTIVE:
            if nbits == 32 and cmd == HLTA and data[1] == 0 and _crc_ok(data):
                st.state = HALT
                return None
            if nbits == 32 and cmd == READ and _crc_ok(data):
                page = data[1]
                pages = len(tag.memory) // 4
                if page >= pages:
                    return self._nak(st, 0x0)
                block = bytearray(16)
                for i in range(16):  # rolls over past the last page (NTAG 10.2)
                    block[i] = tag.memory[(4 * page + i) % len(tag.memory)]
                return _bits(self._answer_crc(tag, block), 18 * 8)
            if nbits == 32 and not _crc_ok(data):
                return self._nak(st, 0x1)
        return self._error(st)

    def _select(self, st: _TagState, data: bytes | bytearray, nbits: int) -> bytearray | None:
        """ANTICOLLISION or SELECT at the tag's cascade level (-3 6.5.3)."""
        level = SEL.index(data[0])
        if level != st.level:
            return self._error(st)
        nvb = data[1]
        known = (nvb >> 4) * 8 + (nvb & 0x07) - 16
        if known < 0 or known > 40 or nbits < 16 + known:
            return self._error(st)
        cl = st.levels[level]
        cl_bits = st.level_bits[level]
        if nvb == 0x70:  # SELECT: all 40 bits, then CRC_A
            if nbits != 72 or not _crc_ok(data[:9]):
                return self._error(st)
            if data[2:7] != cl:
                return self._error(st)  # not this one: back to IDLE (-3 6.3.3)
            if level + 1 < len(st.levels):
                st.level = level + 1
                sak = 0x04  # cascade bit: the UID goes on (-3 6.5.3.4)
            else:
                st.state = ACTIVE
                sak = st.tag.sak & ~0x04 & 0xFF
            return _bits(self._answer_crc(st.tag, bytes((sak,))), 24)
        if nbits != 16 + known:
            return self._error(st)
        for i in range(known):
            if (data[2 + (i >> 3)] >> (i & 7)) & 1 != cl_bits[i]:
                return None  # another tag's branch: silent, still READY
        return cl_bits[known:]

    def _answer_crc(self, tag: Ntag213, body: bytes | bytearray) -> bytearray:
        out = bytearray(with_crc(body))
        errors = tag.crc_errors
        if errors:
            out[-1] ^= 0x5A  # a corrupted answer
            if errors > 0:
                tag.crc_errors = errors - 1
        return out

    def _nak(self, st: _TagState, code: int) -> bytearray:
        st.state = HALT if st.from_halt else IDLE_STATE
        return _bits(bytes((code,)), 4)

    def _error(self, st: _TagState) -> bytearray | None:
        # -3 6.3: an unexpected frame sends READY and ACTIVE tags back to where
        # they came from, without an answer.
        if st.state == READY or st.state == ACTIVE:
            st.state = HALT if st.from_halt else IDLE_STATE
        return None

    def _receive(self, answer: tuple[bytearray, int, int]) -> None:
        """The answer arrives in the FIFO, from bit RxAlign of its first byte (DS 9.3.1.14)."""
        bits, nbits, collision = answer
        regs = self.regs
        align = (regs[BIT_FRAMING] >> 4) & 0x07
        after_coll_cleared = not regs[COLL] & 0x80
        total = align + nbits
        data = bytearray((total + 7) // 8)
        for i in range(nbits):
            if collision and i >= collision - 1 and after_coll_cleared:
                break
            if bits[i]:
                pos = align + i
                data[pos >> 3] |= 1 << (pos & 7)
        if regs[RX_MODE] & 0x80 and not collision:  # RxCRCEn: check and strip CRC_A
            if len(data) < 3 or not _crc_ok(data):
                self._error_bits(CRC_ERR)
            data = data[:-2] if len(data) >= 2 else data
        for value in data:
            if not self.fifo.push(value):
                self._error_bits(BUFFER_OVFL)
                break
        regs[CONTROL] = (regs[CONTROL] & 0xF8) | (total & 0x07)
        if collision:
            pos = align + collision
            self._error_bits(COLL_ERR)
            if pos <= 32:
                regs[COLL] = (regs[COLL] & 0x80) | (pos & 0x1F)
            else:
                regs[COLL] = (regs[COLL] & 0x80) | 0x20  # CollPosNotValid
        else:
            regs[COLL] = (regs[COLL] & 0x80) | 0x20
        regs[COM_IRQ] |= RX_IRQ


def _crc_ok(data: bytes | bytearray) -> bool:
    if len(data) < 3:
        return False
    crc = crc_a(data[:-2])
    return data[-2] == crc & 0xFF and data[-1] == crc >> 8


def _before(now: int, at: int) -> bool:
    return now < at
