# The hardware boundary on the real chip (Raspberry Pi Pico W or ESP32-S3):
# the reed-switch matrix or the reader tree (readers.py: MFRC522 readers and
# reeds on the sense line), the WS2812 chain, the buttons, the die's random
# source, USB CDC serial and the watchdog. Pins come from the board definition
# (hardware/controllers/*.toml, copied into board.json by `masume board deploy`).
# Same methods as hw_sim.Hardware. Nothing here allocates in sample() or show().

import os
import select
import sys
import time

import machine
import micropython
import neopixel

from scanner import SLOT

WATCHDOG_MS = 8000
READER_SPI_HZ = 4000000  # hardware/README.md: 4 MHz suits 16 readers a bank on a buffered bus


class UsbCdc:
    """The host link: USB CDC serial, which MicroPython gives as stdin and stdout."""

    def __init__(self):
        micropython.kbd_intr(-1)  # binary frames on USB CDC: 0x03 is data, not Ctrl-C
        self.stdin = sys.stdin.buffer
        self.stdout = sys.stdout.buffer
        self.poller = select.poll()
        self.poller.register(sys.stdin, select.POLLIN)


class Hardware:
    def __init__(self, definition, usb=None):
        # usb: the host link, UsbCdc() on the chip (the emulated board gives its own)
        pins = definition["pins"]
        kinds = [cell[1] for cell in definition["cells"] if cell[1] != "none"]
        Pin = machine.Pin
        self.readers = None
        if any(kind != "presence" for kind in kinds):
            # Identity and card cells: every sensed cell is on the reader tree.
            from readers import ReaderScan

            bus = pins["reader_spi"]
            spi = machine.SPI(bus["id"], baudrate=READER_SPI_HZ, polarity=0, phase=0,
                              sck=Pin(bus["sck"]), mosi=Pin(bus["mosi"]), miso=Pin(bus["miso"]))
            self.readers = ReaderScan(definition, spi, Pin, time.ticks_us, time.sleep_us)
            self.readers.boot()  # a reader that does not answer is a fault, not a stop
        else:
            self.rows = [Pin(p, Pin.OPEN_DRAIN, value=1) for p in pins["matrix_rows"]]
            self.cols = [Pin(p, Pin.IN, Pin.PULL_UP) for p in pins["matrix_cols"]]
        self.count = len(kinds)
        self.button_pins = [Pin(pin, Pin.IN, Pin.PULL_UP) for _, pin in definition["buttons"]]
        self.np = neopixel.NeoPixel(Pin(pins["led_data"]), max(1, definition["led_count"]))
        usb = usb or UsbCdc()
        self.stdin = usb.stdin
        self.stdout = usb.stdout
        self.poller = usb.poller
        self.one = bytearray(1)
        self.wdt = machine.WDT(timeout=WATCHDOG_MS)

    def ticks_ms(self):
        return time.ticks_ms()

    def random_u32(self):
        return int.from_bytes(os.urandom(4), "little")

    def sample(self, raw):
        if self.readers is not None:
            self.readers.sample(raw)
            return
        # Sensed cell i sits at row i // columns, column i % columns (masume.boards).
        ncols = len(self.cols)
        for r, row in enumerate(self.rows):
            row.value(0)
            time.sleep_us(10)  # let the column lines settle through the diodes
            for k, col in enumerate(self.cols):
                i = r * ncols + k
                if i < self.count:
                    base = i * SLOT
                    occupied = col.value() == 0
                    raw[base] = 1 if occupied else 0
                    raw[base + 1] = 1
            row.value(1)

    @property
    def fault_version(self):
        """Bumped whenever a sensor becomes faulty (the app then sends faults())."""
        return 0 if self.readers is None else self.readers.fault_version

    def faults(self):
        """ERROR texts of the faulty sensors (protocol/SPEC.md, code 4)."""
        return [] if self.readers is None else self.readers.faults()

    def buttons(self):
        bits = 0
        for i, pin in enumerate(self.button_pins):
            if pin.value() == 0:
                bits |= 1 << i
        return bits

    def die_value(self):
        while True:  # rejection sampling: each face exactly 1 in 6
            b = os.urandom(1)[0]
            if b < 252:
                return b % 6 + 1

    def serial_read(self, buf):
        n = 0
        while n < len(buf) and self.poller.poll(0):
            self.stdin.readinto(self.one)
            buf[n] = self.one[0]
            n += 1
        return n

    def serial_write(self, data):
        self.stdout.write(data)

    def serial_flush(self):
        pass  # USB CDC sends as it is written

    def show(self, leds, now):
        leds.render(now)
        self.np.buf[:] = leds.pixels
        self.np.write()

    def feed_watchdog(self):
        self.wdt.feed()
