# The reader wiring of hardware/wiring/pico-w.md on the emulated board: the
# chip-select tree (the address on the reader_mux lines, decoders enabled by
# reader_cs), an MFRC522 behind every identity and card cell, and the reed
# switches that pull the sense line low while their cell is addressed. One SPI
# device on h-chip's bus stands for the whole tree: while reader_cs is low it
# passes the transfer to the reader the address lines select. The contract
# with h-chip's world: CONTRACT.md beside this file.

from .mfrc522 import Mfrc522

try:  # for the type checker: MicroPython has no typing module (annotations are not run there)
    from typing import Any
except ImportError:
    pass

READERS = ("identity", "card")


class ReaderTree:
    def __init__(self, world: "Any", definition: "dict[str, Any]") -> None:
        self.world = world
        pins = definition["pins"]
        self.mux = list(pins["reader_mux"])
        self.cs = pins["reader_cs"]
        self.sense = pins.get("reader_sense")
        reeds = definition.get("readers", {}).get("reeds", False)
        self.chips: dict[int, Mfrc522] = {}  # tree address -> Mfrc522
        self.cells: dict[int, int] = {}  # tree address -> cell index
        self.reeds: dict[int, int] = {}  # tree address -> cell index, for cells with a reed switch
        self.by_cell: dict[int | str, int] = {}  # cell index and name -> tree address
        for index, cell in enumerate(definition["cells"]):
            name, kind, address = cell[0], cell[1], cell[3]
            if kind == "none":
                continue
            k = address[0] * 16 + address[1]
            self.cells[k] = index
            self.by_cell[index] = self.by_cell[name] = k
            if kind in READERS:
                self.chips[k] = Mfrc522(world, index)
            if kind == "presence" or (kind == "identity" and reeds):
                self.reeds[k] = index
        self.current: Mfrc522 | None = None  # the reader selected by the transfer under way
        # The address the mux lines carry, kept as the chip sets each line (the world's
        # watch): a reed's sense read and a chip select look it up instead of reading
        # every line again (the emulation's busiest path on the VM).
        for i, line in enumerate(self.mux):
            world.watch(line, self._line_watch(line, 1 << i))
        self.k = self.address()
        world.spi_bus(pins["reader_spi"]["id"]).attach(self, self._selected)
        if self.sense is not None:
            world.drive(self.sense, self._sense_level)

    def address(self) -> int:
        """The address the mux lines carry now, bit 0 on the first line."""
        k = 0
        level = self.world.level
        bit = 1
        for line in self.mux:
            if level(line):
                k |= bit
            bit <<= 1
        return k

    def _line_watch(self, line: int, bit: int) -> "Any":
        level = self.world.level

        def changed() -> None:
            if level(line):
                self.k |= bit
            else:
                self.k &= ~bit

        return changed

    def _selected(self) -> bool:
        return bool(self.world.level(self.cs) == 0)

    # ---- the SPI device: the selected reader, or a MISO nobody drives

    def begin(self) -> None:
        self.current = self.chips.get(self.k)
        if self.current is not None:
            self.current.begin()

    def exchange(self, out: bytes, into: bytearray, n: int) -> None:
        if self.current is None:
            for i in range(n):
                into[i] = 0xFF  # no reader at this address: MISO floats high
            return
        self.current.exchange(out, into, n)

    def end(self) -> None:
        if self.current is not None:
            self.current.end()
        self.current = None

    # ---- the sense line

    def _sense_level(self) -> int | None:
        if self.world.level(self.cs):
            return None  # decoders off: every chip-select line high, no reed conducts
        index = self.reeds.get(self.k)
        if index is not None and self.world.occupied(index):
            return 0  # a magnet on the cell: the reed is closed
        return None

    # ---- faults and inspection

    def reader(self, cell: int | str) -> Mfrc522:
        """The emulated MFRC522 of a cell (index or name)."""
        return self.chips[self.by_cell[cell]]

    def kill(self, cell: int | str, version: int = 0x00) -> None:
        """A dead reader: every register reads ``version`` (0x00: MISO held low, 0xFF:
        floating high); it hears nothing."""
        self.reader(cell).dead = version
