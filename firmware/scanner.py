# Debounced sensor readings. A reading that holds for hold_ms is reported once.
#
# The scan loop calls update() every pass with the raw readings the hardware
# wrote into self.raw. It allocates nothing: all state lives in buffers made
# here, and time is passed in (ticks_ms on the chip, anything in the tests).
#
# Each sensed cell owns one slot of SLOT bytes in every buffer: a length byte,
# then the reading (presence: 01 or nothing; identity: piece codes bottom to
# top; card: the tag's UID).

from clock import ticks_diff
from masume_protocol.codec import READING_MAX

SLOT = 1 + READING_MAX  # a length byte, then the reading


class Scanner:
    def __init__(self, count, hold_ms=50):
        self.count = count
        self.hold_ms = hold_ms
        self.raw = bytearray(count * SLOT)  # the hardware writes here
        self.candidate = bytearray(count * SLOT)  # last raw value seen, not yet held long enough
        self.stable = bytearray(count * SLOT)  # what was last reported
        self.since = [0] * count  # when the candidate appeared
        self.pending = bytearray(count)  # 1 while a candidate differs from stable
        self.changed = bytearray(count)  # 1 for cells that became stable this pass

    def baseline(self):
        """Take the raw readings as known, without reporting them (at power-up:
        the host asks for a snapshot, so the pieces already there are no news)."""
        self.candidate[:] = self.raw
        self.stable[:] = self.raw

    def update(self, now):
        """Compare raw with what is known; returns how many cells changed this pass."""
        raw = self.raw
        cand = self.candidate
        stable = self.stable
        changed = self.changed
        hold = self.hold_ms
        n = 0
        for i in range(self.count):
            changed[i] = 0
            base = i * SLOT
            if not _same(raw, cand, base):
                _copy(raw, cand, base)
                self.since[i] = now
                self.pending[i] = 0 if _same(cand, stable, base) else 1
            elif self.pending[i] and ticks_diff(now, self.since[i]) >= hold:
                _copy(cand, stable, base)
                self.pending[i] = 0
                changed[i] = 1
                n += 1
        return n

    def reading(self, i):
        """The stable reading of sensed cell i, as bytes (allocates: not for the scan loop)."""
        base = i * SLOT
        return bytes(self.stable[base + 1:base + 1 + self.stable[base]])


def _same(a, b, base):
    n = a[base]
    if n != b[base]:
        return False
    for k in range(base + 1, base + 1 + n):
        if a[k] != b[k]:
            return False
    return True


def _copy(src, dst, base):
    for k in range(base, base + 1 + src[base]):
        dst[k] = src[k]

