# What every cell's LED shows: a colour and a pattern (protocol/SPEC.md), and
# the rendering of that into the WS2812 chain's GRB bytes, animated by time.

OFF = 0
STEADY = 1
BLINK = 2  # 250 ms on, 250 ms off
PULSE = 3  # 1 s breathing


class Leds:
    def __init__(self, cell_leds, led_count, brightness=255):
        # cell_leds: per cell index, a tuple of LED chain positions (may be empty)
        self.cell_leds = cell_leds
        self.cells = len(cell_leds)
        self.colour = bytearray(3 * self.cells)
        self.pattern = bytearray(self.cells)
        self.pixels = bytearray(3 * led_count)  # GRB, as neopixel.NeoPixel.buf
        self.brightness = brightness  # cap from hardware/parts.md's power budget
        self.version = 0  # bumped on every change, so outputs redraw only then

    def apply(self, entries, whole_frame):
        """entries: (cell, (r, g, b), pattern). Returns the cells that do not exist."""
        bad = []
        if whole_frame:
            for i in range(self.cells):
                self.pattern[i] = OFF
        for cell, rgb, pattern in entries:
            if not 0 <= cell < self.cells:
                bad.append(cell)
                continue
            self.colour[3 * cell] = rgb[0]
            self.colour[3 * cell + 1] = rgb[1]
            self.colour[3 * cell + 2] = rgb[2]
            self.pattern[cell] = pattern
        self.version += 1
        return bad

    def animated(self):
        for i in range(self.cells):
            if self.pattern[i] >= BLINK:
                return True
        return False

    def render(self, now):
        """Fill self.pixels for time now (ms). Allocates nothing."""
        px = self.pixels
        cap = self.brightness
        for i in range(self.cells):
            leds = self.cell_leds[i]
            if not leds:
                continue
            p = self.pattern[i]
            if p == OFF:
                level = 0
            elif p == STEADY:
                level = cap
            elif p == BLINK:
                level = cap if (now // 250) % 2 == 0 else 0
            else:
                phase = now % 1000
                level = cap * (phase if phase < 500 else 1000 - phase) // 500
            r = self.colour[3 * i] * level // 255
            g = self.colour[3 * i + 1] * level // 255
            b = self.colour[3 * i + 2] * level // 255
            for k in leds:
                px[3 * k] = g
                px[3 * k + 1] = r
                px[3 * k + 2] = b
