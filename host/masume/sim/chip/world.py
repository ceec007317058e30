# The virtual board under the emulated chip: what machine.py, neopixel.py,
# time.py and os.py beside this file act on, inside the MicroPython VM. The
# firmware (main.py, app.py, hw_chip.py, readers.py, mfrc522.py) runs on it
# unchanged.
#
# - Board time: a clock in microseconds that moves only when the firmware works
#   (every pin call, SPI transfer and LED frame costs what hardware/README.md
#   budgets) or sleeps. So what the firmware sees does not depend on how fast
#   the host is.
# - The presence matrix electrically: a row driven low pulls a column low
#   through a closed switch and its diode; the other columns stay at their
#   pull-ups.
# - The reader tree (readers.py, mfrc522.py): MFRC522s at register level on
#   the SPI bus, holding the tags of what lies on their cells.
# - The buttons (to ground, pull-ups), the WS2812 chain (the bytes the
#   neopixel buffer sends), the die (os.urandom from the host), USB CDC, and
#   the watchdog: a pass that misses it resets the board, as on the chip.
#
# The host (masume.sim.chip.board.ChipBoard) holds the pieces and the port; it
# is asked once a pass, when the firmware pauses (time.sleep_ms), for the
# changes due by then in board time. The contract the reader emulation relies
# on (clock, level, watch, spi_bus, drive, tags_at, occupied): CONTRACT.md.

from binascii import hexlify, unhexlify

# Board-time costs of the firmware's own work (hardware/README.md: a register
# access is 25 us: the call, two chip-select writes, two bytes at 4 MHz).
PIN_US = 3
SPI_CALL_US = 15
SPI_BYTE_US = 2
LED_US = 30  # WS2812: 24 bits at 800 kbit/s a LED
LED_RESET_US = 50  # the latch pause after a frame
BUTTON_HOLD_US = 120000  # a press by the host's hand holds the button this long
# Garbage a pause lets pile up before it collects (the VM's collector runs only
# there: see masume.sim.chip.board and firmware/hw_sim.serve for why).
GARBAGE = 512 * 1024
CHECK_EVERY = 16  # pauses between two looks at the heap (gc.mem_free walks all of it)

#: The running world, set by start() at power-up (machine, time, os and neopixel find it
#: here). Declared, not set to None: nothing reads it before start().
board: "World"


class WatchdogReset(BaseException):
    """The watchdog's timeout passed without a feed: the chip resets."""


class PowerOff(BaseException):
    """The host cut the board's power (or stops the simulation)."""


class Clock:
    def __init__(self):
        self.t = 0  # board time, us since power-up
        self.watchdog_us = 0  # 0: no watchdog running
        self.fed = 0

    def now_us(self):
        return self.t

    def advance(self, us):
        self.t += us
        if self.watchdog_us and self.t - self.fed > self.watchdog_us:
            raise WatchdogReset()


class SpiBus:
    """One SPI bus: the device whose chip select is low gets the transfer;
    MISO floats high with none. Nothing here allocates per transfer."""

    def __init__(self):
        self.devices = []  # (device, selected)
        self.active = None

    def attach(self, device, selected):
        self.devices.append((device, selected))

    def pins_changed(self):
        active = None
        for device, selected in self.devices:
            if selected():
                active = device
                break
        if active is not self.active:
            if self.active is not None:
                self.active.end()
            self.active = active
            if active is not None:
                active.begin()

    def transfer(self, out, into, n):
        if self.active is None:
            for i in range(n):
                into[i] = 0xFF
        else:
            self.active.exchange(out, into, n)


class Usb:
    """USB CDC as hw_chip.Hardware uses it (stdin.readinto, stdout.write,
    poller.poll): bytes to and from the host's pseudo-terminal."""

    def __init__(self, read, write):
        self.stdin = self.stdout = self.poller = self
        self._read = read  # (limit) -> hex of the bytes waiting, or ""
        self._write = write  # (hex) -> None
        self.rx = b""
        self.at = 0
        self.out = []

    def poll(self, timeout=-1):
        if self.at >= len(self.rx):
            data = self._read(256)
            if not data:
                return ()
            self.rx = unhexlify(data)
            self.at = 0
        return (self,)

    def readinto(self, buf):
        buf[0] = self.rx[self.at]
        self.at += 1
        return 1

    def write(self, data):
        self.out.append(hexlify(data))
        return len(data)

    def flush(self):
        if self.out:
            self._write(b"".join(self.out).decode())
            self.out = []


class World:
    def __init__(self, definition, faults, host):
        # host (masume.sim.chip.board.ChipBoard's functions, by name):
        #   tick(board_us, collections, chain hex) -> False (power off), None, or the
        #       hand's moves due: [[button, ...], [[cell, count, [[uid hex, code], ...]], ...]]
        #   state() -> the whole table, as tick's moves; read(limit) -> hex;
        #   write(hex); urandom(n) -> hex; memory(what, free); reset(why)
        self.clock = Clock()
        self.host = host
        self.usb = Usb(host["read"], host["write"])
        self.levels = {}  # gpio -> level the chip drives (an open drain released: absent)
        self.drives = {}  # gpio -> level_fn of the board's wiring (CONTRACT.md)
        self.watchers = {}  # gpio -> [fn, ...] called after the chip sets its level
        self.buses = {}
        pins = definition["pins"]
        cells = definition["cells"]
        self.count = [0] * len(cells)  # pieces on each cell (presence: anything there)
        self.tags = {}  # cell index -> [Ntag213] on it
        self.swap = {}  # cell -> cell whose things it senses (a wiring fault)
        for a, b in faults.get("swapped_cells", ()):
            self.swap[a], self.swap[b] = b, a
        self.crc_cells = set(faults.get("crc_errors", ()))
        # The presence matrix: sensed cell k at row k // columns, column k % columns.
        sensed = [i for i, cell in enumerate(cells) if cell[1] != "none"]
        self.readers = any(cells[i][1] != "presence" for i in sensed)
        self.rows = []
        self.col_of = {}
        self.switch = {}
        if not self.readers:
            self.rows = list(pins["matrix_rows"])
            cols = list(pins["matrix_cols"])
            wire = list(range(len(cols)))  # the column line each input pin is soldered to
            for a, b in faults.get("swapped_columns", ()):
                wire[a], wire[b] = wire[b], wire[a]
            self.col_of = {gpio: wire[c] for c, gpio in enumerate(cols)}
            for k, i in enumerate(sensed):
                self.switch[(k // len(cols), k % len(cols))] = i
        self.button_of = {gpio: b for b, (_, gpio) in enumerate(definition["buttons"])}
        # Pins something on the board drives besides the chip (read through level()),
        # and pins whose change may select another SPI device.
        self.wired = set(self.col_of) | set(self.button_of)
        self.selects = set()
        if "reader_cs" in pins:
            self.selects.add(pins["reader_cs"])  # the tree's devices hang on its enable
        self.released = [0] * len(definition["buttons"])  # board time each press lets go
        self.chain = None  # the last frame sent down the WS2812 chain
        self.chain_sent = True
        self.collections = 0
        self.pauses = 0
        self.collect_below = -1  # set at the first pause, from the heap left after boot
        self.tree = None
        if self.readers:
            from chip.mfrc522 import Ntag213
            from chip.readers import ReaderTree

            self.Ntag213 = Ntag213
            self.tree = ReaderTree(self, definition)
            for cell in faults.get("dead_readers", ()):
                self.tree.kill(cell)
        self._apply(host["state"]())

    # ---- the contract of the reader wiring ----------------------------------

    def level(self, gpio):
        if gpio not in self.wired:
            return self.levels.get(gpio, 1)  # only the chip drives it, or the pull-up
        drive = self.drives.get(gpio)
        if drive is not None:
            v = drive()
            if v is not None:
                return v
        col = self.col_of.get(gpio)
        if col is not None:
            for r in range(len(self.rows)):
                if self.levels.get(self.rows[r]) == 0:
                    cell = self.switch.get((r, col))
                    if cell is not None and self.occupied(cell):
                        return 0  # through the closed switch and its diode
            return 1
        button = self.button_of.get(gpio)
        if button is not None:
            return 0 if self.clock.t < self.released[button] else 1
        return self.levels.get(gpio, 1)  # pull-ups everywhere

    def set_level(self, gpio, level):
        if level is None:
            self.levels.pop(gpio, None)
        else:
            self.levels[gpio] = level
        if gpio in self.selects:
            for bus in self.buses.values():
                bus.pins_changed()
        watchers = self.watchers.get(gpio)
        if watchers is not None:
            for fn in watchers:
                fn()

    def watch(self, gpio, fn):
        self.watchers.setdefault(gpio, []).append(fn)

    def drive(self, gpio, level_fn):
        self.drives[gpio] = level_fn
        self.wired.add(gpio)

    def spi_bus(self, spi_id):
        bus = self.buses.get(spi_id)
        if bus is None:
            bus = self.buses[spi_id] = SpiBus()
        return bus

    def tags_at(self, cell):
        return self.tags.get(self.swap.get(cell, cell), ())

    def occupied(self, cell):
        return self.count[self.swap.get(cell, cell)] > 0

    # ---- the rest of the board --------------------------------------------

    def leds_written(self, buf):
        self.clock.advance(LED_US * (len(buf) // 3) + LED_RESET_US)
        if self.chain != buf:
            self.chain = bytes(buf)
            self.chain_sent = False

    def urandom(self, n):
        return unhexlify(self.host["urandom"](n))

    def pause(self):
        """The firmware sleeps between passes: the host's hand moves and the USB
        output goes out. True when garbage is due to be collected (time.sleep_ms
        collects, in a frame small enough for the collector to see: boot.py)."""
        self.usb.flush()
        chain = ""
        if not self.chain_sent and self.chain is not None:
            chain = hexlify(self.chain).decode()
            self.chain_sent = True
        news = self.host["tick"](self.clock.t, self.collections, chain)
        if news is False:
            raise PowerOff()
        if news:
            self._apply(news)
        self.pauses += 1
        if self.pauses % CHECK_EVERY:
            return False
        import gc

        if self.collect_below < 0:
            self.collect_below = gc.mem_free() - GARBAGE
        return gc.mem_free() < self.collect_below

    def _apply(self, news):
        presses, changes = news
        for b in presses:
            self.released[b] = self.clock.t + BUTTON_HOLD_US
        for cell, count, tags in changes:
            self.count[cell] = count
            if self.tree is None:
                continue
            made = []
            for uid, code in tags:
                tag = self.Ntag213(unhexlify(uid), None if code < 0 else code)
                if cell in self.crc_cells:
                    tag.crc_errors = -1
                made.append(tag)
            self.tags[cell] = made


def start(definition, faults, host):
    global board
    board = World(definition, faults, host)
    return board
