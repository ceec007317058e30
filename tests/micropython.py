"""CPython's stand-in for MicroPython's built-in ``micropython`` module, so that the
firmware modules (``from micropython import const``, as micropython-lib writes
them) and the checks run unchanged in the CPython half of the tests. The heap
lock does nothing here: the allocation checks mean something on the real VM."""


def const(value):
    return value


def heap_lock():
    return 0


def heap_unlock():
    return 0
