# The board: one poll() is one pass of the scan loop. main.py runs it forever
# on the chip; the simulator calls it from the host, on the MicroPython VM.
#
# Every event carries the pass's ticks_ms (protocol 2): a host that gets a
# journal's worth of events at once, after a cut, still knows how they were
# spaced in time.
#
# A pass with nothing happening allocates nothing (tests/test_firmware.py runs
# it under micropython.heap_lock()): sensors are sampled into a buffer made at
# start, buttons are a bit mask, and frames are only built when there is news.

import json

from clock import ticks_diff
from journal import Journal
from leds import Leds
from link import BoardLink
from masume_protocol import codec as c
from masume_protocol.codec import Deframer
from scanner import Scanner

FIRMWARE_VERSION = "0.1.0"
BUTTON_HOLD_MS = 30  # a press must hold this long (contact bounce)


def load_definition(path="board.json"):
    """The board definition the deploy step wrote (masume.boards.Board.firmware_json)."""
    with open(path, "rb") as f:
        raw = f.read()
    from binascii import crc32

    return json.loads(raw), crc32(raw) & 0xFFFFFFFF


class Board:
    def __init__(self, hw, definition, board_hash, net=None):
        # net: None for the USB serial link, or a link_mqtt.MqttLink (club mode)
        self.hw = hw
        self.net = net
        self.now = 0
        cells = definition["cells"]
        # Protocol address (cell index) of every sensed cell, in sensor order.
        self.sensed = [i for i, cell in enumerate(cells) if cell[1] != "none"]
        self.kinds = [cells[i][1] for i in self.sensed]
        self.scanner = Scanner(len(self.sensed))
        hw.sample(self.scanner.raw)
        self.scanner.baseline()
        self.leds = Leds([tuple(cell[2]) for cell in cells], definition["led_count"],
                         definition.get("brightness", 255))
        self.journal = Journal()
        self.deframer = Deframer()
        self.rx = bytearray(256)
        self.rx_view = memoryview(self.rx)
        self.buttons = definition["buttons"]
        self.roll_button = -1
        if definition.get("die"):
            for i, b in enumerate(self.buttons):
                if b[0] == "roll":
                    self.roll_button = i
        self.button_raw = 0
        self.button_stable = 0
        self.button_since = 0
        self.roll_id = 0
        self.led_version = -1
        self.fault_version = hw.fault_version  # faults known at boot go out at the handshake
        self.link = BoardLink(net.send if net else hw.serial_write, self.journal,
                              hw.random_u32() or 1, FIRMWARE_VERSION, definition["id"],
                              board_hash, self)
        self.link.welcome()

    # The link's device interface.
    def on_leds(self, entries, whole_frame):
        return self.leds.apply(entries, whole_frame)

    def readings(self):
        return [(self.sensed[i], self.scanner.reading(i)) for i in range(len(self.sensed))]

    def faults(self):
        return self.hw.faults()

    def poll(self):
        hw = self.hw
        now = hw.ticks_ms()
        scanner = self.scanner
        hw.sample(scanner.raw)
        if scanner.update(now):
            for i in range(scanner.count):
                if scanner.changed[i]:
                    self.link.event(
                        c.SQUARE, c.pack_square(self.sensed[i], scanner.reading(i), now), now)
        self._buttons(hw.buttons(), now)
        if hw.fault_version != self.fault_version:  # a sensor failed: tell the host now
            self.fault_version = hw.fault_version
            if self.link.host_alive(now):
                self.link.faults()
        if self.net is not None:
            self.now = now
            self.net.poll(self._net_frame, now)
        else:
            n = hw.serial_read(self.rx)
            while n:
                for frame in self.deframer.feed(self.rx_view[:n]):
                    self.link.receive(frame, now)
                n = hw.serial_read(self.rx)
        self.link.poll(now)
        hw.serial_flush()
        if self.leds.version != self.led_version or self.leds.animated():
            self.led_version = self.leds.version
            hw.show(self.leds, now)
        hw.feed_watchdog()

    def _net_frame(self, frame):
        self.link.receive(frame, self.now)

    def _buttons(self, bits, now):
        if bits != self.button_raw:
            self.button_raw = bits
            self.button_since = now
            return
        pressed = bits & ~self.button_stable
        if bits == self.button_stable or ticks_diff(now, self.button_since) < BUTTON_HOLD_MS:
            return
        self.button_stable = bits
        for i in range(len(self.buttons)):
            if pressed & (1 << i):
                if i == self.roll_button:
                    self.roll_id += 1
                    self.link.event(c.DIE, c.pack_die(self.roll_id, self.hw.die_value(), now), now)
                else:
                    self.link.event(c.BUTTON, c.pack_button(i, now), now)
