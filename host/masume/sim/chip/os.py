# The emulated chip's `os` module, as far as the firmware uses it: urandom, the
# chip's random source (the die, the boot id), served by the host's seeded
# generator so that a test can force a face.

import world


def urandom(n):
    return world.board.urandom(n)
