# The emulated chip's `neopixel` module: the buffer the firmware fills (GRB, as
# MicroPython's), sent down the virtual board's WS2812 chain by write().

import world


class NeoPixel:
    ORDER = (1, 0, 2, 3)

    def __init__(self, pin, n, bpp=3, timing=1):
        self.pin = pin
        self.n = n
        self.bpp = bpp
        self.buf = bytearray(n * bpp)

    def __len__(self):
        return self.n

    def __setitem__(self, i, rgb):
        for k in range(self.bpp):
            self.buf[i * self.bpp + self.ORDER[k]] = rgb[k]

    def __getitem__(self, i):
        return tuple(self.buf[i * self.bpp + self.ORDER[k]] for k in range(self.bpp))

    def fill(self, rgb):
        for i in range(self.n):
            self[i] = rgb

    def write(self):
        world.board.leds_written(self.buf)
