# NXP MFRC522, the ISO/IEC 14443 A reader IC, over SPI: registers, FIFO, the
# timer, antenna and soft power-down, the CRC coprocessor, and one exchange with
# the tags in its field (Transceive) started and finished without blocking, so
# that several readers on one bus talk to their tags at the same time
# (firmware/readers.py). Section numbers "DS x.y" are the MFRC522 data sheet,
# rev. 3.9. Written here rather than taken from a library: the MicroPython
# MFRC522 drivers in circulation block in every exchange, allocate per call and
# have no timeouts in board time.
#
# Nothing here allocates after __init__: every transfer goes through buffers
# and memoryviews made once, shared by all chips on the bus (one transfer at a
# time).

from micropython import const

from clock import ticks_add, ticks_diff

# Registers (DS 9.2, table 20).
COMMAND = const(0x01)
COM_IRQ = const(0x04)
DIV_IRQ = const(0x05)
ERROR = const(0x06)
FIFO_DATA = const(0x09)
FIFO_LEVEL = const(0x0A)
CONTROL = const(0x0C)
BIT_FRAMING = const(0x0D)
COLL = const(0x0E)
MODE = const(0x11)
TX_MODE = const(0x12)
RX_MODE = const(0x13)
TX_CONTROL = const(0x14)
TX_ASK = const(0x15)
CRC_RESULT_H = const(0x21)
CRC_RESULT_L = const(0x22)
T_MODE = const(0x2A)
T_PRESCALER = const(0x2B)
T_RELOAD_H = const(0x2C)
T_RELOAD_L = const(0x2D)
VERSION = const(0x37)

# Commands (DS 10.3, table 149) and CommandReg's PowerDown bit (DS 9.3.1.2).
IDLE = const(0x00)
CALC_CRC = const(0x03)
TRANSCEIVE = const(0x0C)
SOFT_RESET = const(0x0F)
POWER_DOWN = const(0x10)

# ComIrqReg (DS 9.3.1.5), DivIrqReg (9.3.1.6), ErrorReg (9.3.1.7) bits.
IRQ_RX = const(0x20)
IRQ_IDLE = const(0x10)
IRQ_ERR = const(0x02)
IRQ_TIMER = const(0x01)
IRQ_CRC = const(0x04)
ERR_BUFFER_OVFL = const(0x10)
ERR_COLL = const(0x08)
ERR_PARITY = const(0x02)
ERR_PROTOCOL = const(0x01)
COLL_POS_NOT_VALID = const(0x20)

# The timer ticks at 13.56 MHz / (2 * 67 + 1) = 100.4 kHz, about 10 us (DS 8.5).
PRESCALER = const(67)
TICK_NS = const(9956)

# Version register values (DS 9.3.4.8): 0x91 version 1.0, 0x92 version 2.0;
# the pin-compatible FM17522 answers 0x88. A chip that is not there, not powered
# or not selected leaves MISO low (0x00) or floating high (0xFF).
NO_ANSWER = (0x00, 0xFF)

# What poll() returns besides a byte count (>= 0).
BUSY = const(-1)  # the exchange is still under way
TIMEOUT = const(-2)  # no tag answered before the chip's timer ran out
COLLISION = const(-3)  # tags answered at once: coll_pos says where (bit-oriented frames)
FAILED = const(-4)  # parity, protocol or FIFO overflow error
NO_CHIP = const(-5)  # the chip finished nothing by the deadline: not there, or hung

FIFO_SIZE = const(64)

_tx = bytearray(FIFO_SIZE + 2)
_rx = bytearray(FIFO_SIZE + 2)
_txv = [memoryview(_tx)[:n] for n in range(FIFO_SIZE + 3)]
_rxv = [memoryview(_rx)[:n] for n in range(FIFO_SIZE + 3)]
# One read of the five registers an exchange ends with (DS 8.1.2.1: a read may
# name a different register in every byte; the answer to each comes one byte later).
_STATUS = bytes((0x80 | COM_IRQ << 1, 0x80 | ERROR << 1, 0x80 | FIFO_LEVEL << 1,
                 0x80 | CONTROL << 1, 0x80 | COLL << 1, 0))


class MFRC522:
    """One MFRC522 on an SPI bus. ``cs`` is anything with ``value(v)`` that selects
    the chip at 0 (a Pin, or a reader's line of the chip-select tree); ``ticks_us``
    is the board's clock (time.ticks_us on the chip)."""

    def __init__(self, spi, cs, ticks_us):
        self.spi = spi
        self.cs = cs
        self.ticks_us = ticks_us
        self.reload = -1  # the chip's TReload, -1 if unknown (a driver shared by
        # several chips is told each chip's when it switches: readers.ReaderScan.point)
        self.deadline = 0  # ticks_us by which the running exchange must end
        self.rx_bits = 0  # valid bits in the last byte received (0: all 8)
        self.coll_pos = 0  # first collision, in bits from the start of the FIFO's first byte

    # ---- registers (DS 8.1.2: address byte (bit 7 read, bits 6-1 address), data)

    def read(self, reg):
        _tx[0] = 0x80 | reg << 1
        _tx[1] = 0
        self.cs.value(0)
        self.spi.write_readinto(_txv[2], _rxv[2])
        self.cs.value(1)
        return _rx[1]

    def write(self, reg, value):
        _tx[0] = reg << 1
        _tx[1] = value
        self.cs.value(0)
        self.spi.write(_txv[2])
        self.cs.value(1)

    def fifo_write(self, data, n):
        # DS 8.1.2.2: every byte after the address goes to the same register.
        _tx[0] = FIFO_DATA << 1
        for i in range(n):
            _tx[1 + i] = data[i]
        self.cs.value(0)
        self.spi.write(_txv[n + 1])
        self.cs.value(1)

    def fifo_read(self, into, n):
        for i in range(n):
            _tx[i] = 0x80 | FIFO_DATA << 1
        _tx[n] = 0
        self.cs.value(0)
        self.spi.write_readinto(_txv[n + 1], _rxv[n + 1])
        self.cs.value(1)
        for i in range(n):
            into[i] = _rx[i + 1]

    def _status(self):
        # ComIrq, Error, FIFOLevel, Control, Coll in _rx[1..5].
        for i in range(6):
            _tx[i] = _STATUS[i]
        self.cs.value(0)
        self.spi.write_readinto(_txv[6], _rxv[6])
        self.cs.value(1)

    # ---- set-up, power, antenna

    def version(self):
        return self.read(VERSION)

    def init(self, retries=200):
        """Soft reset, then the settings every exchange relies on. False if the chip
        did not come out of reset within ``retries`` reads (DS 10.3.1.10)."""
        self.write(COMMAND, SOFT_RESET)
        ready = False
        for _ in range(retries):  # bounded: a hung chip never keeps the board waiting
            if not self.read(COMMAND) & POWER_DOWN:
                ready = True
                break
        self.write(T_MODE, 0x80 | PRESCALER >> 8)  # TAuto: the timer starts as a frame ends
        self.write(T_PRESCALER, PRESCALER & 0xFF)
        self.write(TX_ASK, 0x40)  # Force100ASK: ISO 14443-2 type A modulation
        self.write(MODE, 0x3D)  # CRC preset 0x6363 (CRC_A), for the coprocessor
        self.write(TX_MODE, 0x00)  # 106 kBd, no CRC appended: the driver adds CRC_A itself
        self.write(RX_MODE, 0x00)  # ... and checks it on every answer
        self.write(COLL, 0x00)  # ValuesAfterColl 0: bits after a collision read as 0
        self.reload = -1
        return ready

    def antenna(self, on):
        # TxControlReg (DS 9.3.2.5): Tx1RFEn and Tx2RFEn drive the antenna; 0x80 is
        # the reset value's InvTx2RFOn.
        self.write(TX_CONTROL, 0x83 if on else 0x80)

    def power_down(self):
        # Soft power-down (DS 8.6.2): 10 uA, registers and FIFO kept.
        self.write(COMMAND, POWER_DOWN | IDLE)

    def wake(self):
        # Out of soft power-down after 1024 clocks, 38 us (DS 8.6.2); the field the
        # caller switches on next starts once the oscillator runs.
        self.write(COMMAND, IDLE)

    def awake(self):
        return not self.read(COMMAND) & POWER_DOWN

    # ---- the CRC coprocessor (DS 10.3.1.4), checked against software at boot

    def calc_crc(self, data, n, retries=100):
        """CRC_A of data[:n] by the chip, as an int (low byte sent first), or -1."""
        self.write(COMMAND, IDLE)
        self.write(DIV_IRQ, IRQ_CRC)  # Set2 = 0: clears CRCIRq
        self.write(FIFO_LEVEL, 0x80)  # FlushBuffer
        self.fifo_write(data, n)
        self.write(COMMAND, CALC_CRC)
        result = -1
        for _ in range(retries):
            if self.read(DIV_IRQ) & IRQ_CRC:
                result = self.read(CRC_RESULT_L) | self.read(CRC_RESULT_H) << 8
                break
        self.write(COMMAND, IDLE)
        return result

    # ---- one exchange with the tags in the field (Transceive, DS 10.3.1.8)

    def start(self, frame, n, last_bits, align, timeout_us):
        """Send frame[:n] (its last byte ``last_bits`` long, 0 for all 8), receive
        into the FIFO with the first bit at position ``align`` (bit-oriented
        anticollision, DS 9.3.1.14). The chip's timer gives up ``timeout_us`` after
        the frame if no tag has started to answer (DS 8.5, TAuto)."""
        reload = timeout_us * 1000 // TICK_NS
        self.write(COMMAND, IDLE)  # stops whatever ran
        self.write(COM_IRQ, 0x7F)  # Set1 = 0: clears every IRQ bit
        self.write(FIFO_LEVEL, 0x80)
        self.fifo_write(frame, n)
        if reload != self.reload:
            self.write(T_RELOAD_H, reload >> 8)
            self.write(T_RELOAD_L, reload & 0xFF)
            self.reload = reload
        self.write(COMMAND, TRANSCEIVE)
        self.write(BIT_FRAMING, 0x80 | align << 4 | last_bits)  # StartSend
        # Ours to wait for: the frame out (at most 64 bytes at 106 kbit/s = 6 ms),
        # the timer, an answer of up to 64 bytes, and a margin.
        self.deadline = ticks_add(self.ticks_us(), 2 * 6200 + timeout_us + 1000)

    def poll(self, into):
        """The result of the running exchange: BUSY, TIMEOUT, COLLISION, FAILED,
        NO_CHIP, or the number of bytes received into ``into``."""
        self._status()
        irq = _rx[1]
        if not irq & (IRQ_RX | IRQ_ERR | IRQ_TIMER):
            if ticks_diff(self.ticks_us(), self.deadline) > 0:
                self.write(COMMAND, IDLE)
                return NO_CHIP
            return BUSY
        error = _rx[2]
        level = _rx[3] & 0x7F
        control = _rx[4]
        coll = _rx[5]
        if irq & IRQ_TIMER and not irq & IRQ_RX:
            return TIMEOUT
        if error & ERR_COLL:
            self.coll_pos = 32 if coll & 0x1F == 0 else coll & 0x1F  # DS 9.3.1.15
            if coll & COLL_POS_NOT_VALID:
                return FAILED
            n = min(level, FIFO_SIZE)
            self.fifo_read(into, n)
            self.rx_bits = control & 0x07
            return COLLISION
        if error & (ERR_BUFFER_OVFL | ERR_PARITY | ERR_PROTOCOL) or not irq & IRQ_RX:
            return FAILED
        self.fifo_read(into, level)
        self.rx_bits = control & 0x07
        return level

    def transceive(self, frame, n, last_bits, align, timeout_us, into, polls=400):
        """start() and poll() until done: for the boot self-test and checks, not the
        scan loop. Bounded twice: by the board-time deadline and by ``polls``."""
        self.start(frame, n, last_bits, align, timeout_us)
        for _ in range(polls):
            result = self.poll(into)
            if result != BUSY:
                return result
        self.write(COMMAND, IDLE)
        return NO_CHIP
