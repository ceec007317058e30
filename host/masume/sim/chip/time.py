# The emulated chip's `time` module: board time (world.Clock), which moves only
# as the firmware works or sleeps. sleep_ms is the scan loop's pause, where the
# host's hand moves (world.World.pause) and garbage is collected (boot.py).

import gc

import world

_TICKS_MAX = 0x3FFFFFFF


def ticks_us():
    return world.board.clock.t & _TICKS_MAX


def ticks_ms():
    return (world.board.clock.t // 1000) & _TICKS_MAX


def ticks_diff(a, b):
    return ((a - b + 0x20000000) & _TICKS_MAX) - 0x20000000


def ticks_add(a, delta):
    return (a + delta) & _TICKS_MAX


def sleep_us(us):
    if us > 0:
        world.board.clock.advance(us)


def sleep_ms(ms):
    if ms > 0:
        world.board.clock.advance(ms * 1000)
    if world.board.pause():
        _collect()


def _collect():
    gc.collect()
    world.board.collections += 1


def sleep(s):
    sleep_ms(int(s * 1000))


def time():
    return world.board.clock.t // 1000000
