# A reader rig: the firmware's reader scan (firmware/readers.py) over emulated
# MFRC522s (mfrc522.py, readers.py beside this file) on the smallest board that
# gives the wiring the world of CONTRACT.md: a clock, pin levels with pull-ups,
# SPI buses with chip selects, tags on cells. Time is board time: it moves only
# when the firmware works (every SPI call and pin call costs what
# hardware/README.md budgets) or sleeps, never by itself. The reader checks
# (tests/reader_checks.py) and `masume bench readers` run on it; h-chip's
# world.py is the full board (matrix, LEDs, buttons, USB, the host's hands).
#
# Runs on CPython and in the MicroPython VM, as a package beside the emulation;
# the firmware modules must be importable (flat, as on the chip).

import micropython

import readers
from scanner import SLOT

from .mfrc522 import Ntag213, ntag_uid
from .readers import ReaderTree
from .world import PIN_US, SPI_BYTE_US, SPI_CALL_US  # the firmware's work in board time

try:  # for the type checker: MicroPython has no typing module (annotations are not run there)
    from collections.abc import Callable
    from typing import Any
except ImportError:
    pass

LOCKED = [False]  # a check locked the heap: unlock it around the emulated hardware


def hardware_side() -> None:
    if LOCKED[0]:
        micropython.heap_unlock()


def firmware_side() -> None:
    if LOCKED[0]:
        micropython.heap_lock()


class Clock:
    def __init__(self) -> None:
        self.t = 1000

    def now_us(self) -> int:
        return self.t

    def advance_us(self, us: int) -> None:
        self.t += us

    def ticks_us(self) -> int:
        return self.t & 0x3FFFFFFF


class Bus:
    def __init__(self) -> None:
        self.devices: list[list[Any]] = []  # [device, selected(), selected now]

    def attach(self, device: Any, selected: Callable[[], bool]) -> None:
        self.devices.append([device, selected, False])

    def pins_changed(self, gpio: int, level: int) -> None:
        for d in self.devices:
            now = d[1]()
            if now != d[2]:
                d[2] = now
                if now:
                    d[0].begin()
                else:
                    d[0].end()

    def transfer(self, out: bytes, into: bytearray, n: int) -> None:
        for d in self.devices:
            if d[2]:
                d[0].exchange(out, into, n)
                return
        for i in range(n):
            into[i] = 0xFF


class World:
    """What the reader wiring needs from a world (CONTRACT.md), and no more."""

    def __init__(self) -> None:
        self.clock = Clock()
        self.levels: dict[int, int] = {}
        self.drives: dict[int, Callable[[], int | None]] = {}
        self.callbacks: list[Callable[[int, int], None]] = []
        self.buses: dict[int, Bus] = {}
        self.tags: dict[int, list[Ntag213]] = {}

    def level(self, gpio: int) -> int:
        drive = self.drives.get(gpio)
        if drive is not None:
            v = drive()
            if v is not None:
                return v
        return self.levels.get(gpio, 1)  # pull-ups everywhere

    def set_level(self, gpio: int, level: int) -> None:
        self.levels[gpio] = level
        for cb in self.callbacks:
            cb(gpio, level)

    def on_pin_change(self, callback: Callable[[int, int], None]) -> None:
        self.callbacks.append(callback)

    def drive(self, gpio: int, level_fn: Callable[[], int | None]) -> None:
        self.drives[gpio] = level_fn

    def watch(self, gpio: int, fn: Callable[[], None]) -> None:
        """fn() after every level the firmware sets on gpio."""
        self.on_pin_change(lambda changed, level: fn() if changed == gpio else None)

    def spi_bus(self, spi_id: int) -> Bus:
        if spi_id not in self.buses:
            bus = self.buses[spi_id] = Bus()
            self.on_pin_change(bus.pins_changed)
        return self.buses[spi_id]

    def tags_at(self, cell: int) -> list[Ntag213]:
        return self.tags.get(cell, [])

    def occupied(self, cell: int) -> bool:
        return bool(self.tags.get(cell))

    def put(self, cell: int, *tags: Ntag213) -> None:
        self.tags[cell] = list(tags)


def pin_class(world: World) -> type:
    class Pin:
        IN, OUT, OPEN_DRAIN, PULL_UP = 0, 1, 2, 1

        def __init__(self, gpio: int, mode: int = 0, pull: int | None = None,
                     value: int | None = None) -> None:
            self.gpio = gpio
            if value is not None:
                self.value(value)

        def value(self, v: int | None = None) -> int | None:
            world.clock.t += PIN_US
            hardware_side()
            if v is None:
                out = world.level(self.gpio)
            else:
                out = None
                world.set_level(self.gpio, 1 if v else 0)
            firmware_side()
            return out

    return Pin


class SPI:
    def __init__(self, world: World, spi_id: int) -> None:
        self.world = world
        self.bus = world.spi_bus(spi_id)
        self.scratch = bytearray(80)

    def write(self, buf: bytes) -> None:
        self._transfer(buf, self.scratch, len(buf))

    def write_readinto(self, out: bytes, into: bytearray) -> None:
        self._transfer(out, into, len(out))

    def _transfer(self, out: bytes, into: bytearray, n: int) -> None:
        self.world.clock.t += SPI_CALL_US + SPI_BYTE_US * n
        hardware_side()
        self.bus.transfer(out, into, n)
        firmware_side()


# ---- boards ------------------------------------------------------------------

PINS = {"reader_spi": {"id": 1, "sck": 26, "mosi": 27, "miso": 28}, "reader_cs": 22,
        "reader_mux": [2, 3, 4, 5, 6, 7, 8, 9], "reader_sense": 10}


def definition(kinds: list[str], reeds: bool = False, fields: int = 1,
               columns: int = 8) -> dict[str, Any]:
    """A board.json of ``kinds`` (one per cell) on the reader tree, in a grid
    ``columns`` wide, as masume.boards lays one out."""
    cells: list[list[Any]] = []
    k = 0
    for i, kind in enumerate(kinds):
        address: list[int] = []
        if kind != "none":
            address = [k // 16, k % 16]
            if kind != "presence":
                address += [2 * (i % columns), 2 * (i // columns)]
            k += 1
        cells.append([f"c{i}", kind, [i], address])
    return {"pins": PINS, "cells": cells, "readers": {"fields": fields, "reeds": reeds},
            "led_count": len(kinds), "buttons": [], "id": "t"}


class Rig:
    """The driver's scan over the emulated readers of a board definition."""

    def __init__(self, defn: dict[str, Any], boot: bool = True) -> None:
        self.world = World()
        self.defn = defn
        self.tree = ReaderTree(self.world, defn)
        Pin = pin_class(self.world)
        self.spi = SPI(self.world, 1)
        clock = self.world.clock
        self.scan = readers.ReaderScan(defn, self.spi, Pin, clock.ticks_us, clock.advance_us)
        self.raw = bytearray(self.scan.count * SLOT)
        if boot:
            self.scan.boot()
            self.sample()

    def now(self) -> int:
        return self.world.clock.t

    def sample(self) -> None:
        self.scan.sample(self.raw)

    def passes(self, ms: int) -> None:
        """Scan passes as main.py runs them (a pass, then 1 ms asleep) for ``ms``."""
        end = self.now() + ms * 1000
        while self.now() < end:
            self.sample()
            self.world.clock.t += 1000

    def until(self, slot: int, reading: bytes, limit_ms: int = 2000) -> int:
        """Passes until sensed cell ``slot`` reads ``reading``; the board time taken."""
        start = self.now()
        while self.reading(slot) != reading:
            assert self.now() - start < limit_ms * 1000, (slot, self.reading(slot), reading)
            self.sample()
            self.world.clock.t += 1000
        return self.now() - start

    def reading(self, slot: int) -> bytes:
        base = slot * SLOT
        return bytes(self.raw[base + 1:base + 1 + self.raw[base]])


def tag(serial: int, code: int | None = None, size: int = 7) -> Ntag213:
    """An NTAG213 with a UID made from ``serial`` (4, 7 or 10 bytes) holding ``code``."""
    uid = ntag_uid(serial)
    if size == 4:
        uid = bytes((0x08,)) + uid[1:4]  # a random 4-byte UID (-3 6.5.4: uid0 0x08)
    elif size == 10:
        uid = uid + bytes((0x11, 0x22, 0x33))
    return Ntag213(uid, code)
