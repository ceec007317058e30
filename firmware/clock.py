# Tick arithmetic: time.ticks_diff on the chip; the same 30-bit wrap elsewhere,
# so the firmware modules run unchanged under CPython in the tests.
try:
    from time import ticks_add, ticks_diff
except ImportError:  # CPython
    def ticks_diff(a, b):  # type: ignore[no-redef, misc]
        return ((a - b + 0x20000000) & 0x3FFFFFFF) - 0x20000000

    def ticks_add(a, delta):  # type: ignore[no-redef, misc]
        return (a + delta) & 0x3FFFFFFF
