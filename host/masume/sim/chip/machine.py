# The emulated chip's `machine` module, as far as the firmware uses it (Pin,
# SPI, WDT), over the virtual board (world.py). Every call costs board time.

import world

_PIN_US = world.PIN_US
_SPI_CALL_US = world.SPI_CALL_US
_SPI_BYTE_US = world.SPI_BYTE_US


class Pin:
    IN = 0
    OUT = 1
    OPEN_DRAIN = 2
    PULL_UP = 1
    PULL_DOWN = 2

    # drive (strength) and alt (function) are taken as the real Pin takes them, and
    # change nothing on the virtual board.
    def __init__(self, id, mode=-1, pull=-1, value=None, *, drive=None, alt=None):
        self.id = id
        self.mode = mode
        if value is not None:
            self.value(value)

    def value(self, v=None):
        board = world.board
        board.clock.t += _PIN_US  # the watchdog is checked where time passes in bulk
        if v is None:
            return board.level(self.id)
        if self.mode == Pin.OPEN_DRAIN:
            board.set_level(self.id, None if v else 0)  # released: the pull-up wins
        elif self.mode == Pin.OUT:
            board.set_level(self.id, 1 if v else 0)
        return None

    __call__ = value

    def on(self):
        self.value(1)

    def off(self):
        self.value(0)


class SPI:
    def __init__(self, id, baudrate=1000000, polarity=0, phase=0, bits=8, firstbit=0,
                 sck=None, mosi=None, miso=None):
        self.bus = world.board.spi_bus(id)
        self.scratch = bytearray(80)

    def write(self, buf):
        n = len(buf)
        scratch = self.scratch if n <= len(self.scratch) else bytearray(n)
        self._transfer(buf, scratch, n)

    def write_readinto(self, out, into):
        self._transfer(out, into, len(out))

    def readinto(self, into, write=0):
        n = len(into)
        for i in range(n):
            into[i] = write
        self._transfer(into, into, n)

    def _transfer(self, out, into, n):
        world.board.clock.advance(_SPI_CALL_US + _SPI_BYTE_US * n)
        self.bus.transfer(out, into, n)


class WDT:
    """The watchdog: once started it cannot stop; a feed later than ``timeout``
    ms resets the chip (world.WatchdogReset)."""

    def __init__(self, id=0, timeout=5000):
        clock = world.board.clock
        clock.watchdog_us = timeout * 1000
        clock.fed = clock.t

    def feed(self):
        clock = world.board.clock
        clock.fed = clock.t
