"""Commissioning a freshly built board (``masume board test``, docs/commissioning.md).

The walk, over the board's own link: every cell's LED lit in turn (a person says
which one lit), every sensed cell asks for a piece or a card (and checks that the
right cell reads it, and that it reads empty again once taken off), then a wiring
report: dead readers and tags that read with CRC errors (the board names them in
its ERROR messages), crossed sensor wires (rows, columns or reader lines: a piece
on one cell read on another), and the LED chain's offset (a missing or bridged
LED: from there on each cell lights the next one).

The person is an interface (:class:`Person`): the command line asks a human; the
tests give a hand that acts on the emulated chip (masume.sim.chip).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol

from masume.boards import Board, Cell

from .events import Led
from .session import BoardSession

WAIT_S = 30.0  # a cell that reads nothing this long after the person acted is dead
WHITE = Led((255, 255, 255))


class Person(Protocol):
    """Who stands at the board."""

    def see_led(self, cell: str) -> str | None:
        """Cell ``cell``'s LED was just lit: the name of the cell whose LED is lit,
        or None when none is."""

    def put(self, cell: str, thing: str) -> None:
        """Put ``thing`` (a piece name, or a card ``tag:...``) on ``cell``."""

    def take(self, cell: str) -> None:
        """Take what was put on ``cell`` off again."""


@dataclass
class Report:
    board: str
    faulty: dict[str, str] = field(default_factory=dict)  # cell -> the board's ERROR text
    silent: list[str] = field(default_factory=list)  # cells that never read the piece
    crossed: list[tuple[str, str]] = field(default_factory=list)  # (asked, read on)
    leds: list[tuple[str, str | None]] = field(default_factory=list)  # (asked, lit instead)
    led_positions: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not (self.faulty or self.silent or self.crossed or self.leds)

    def lines(self) -> list[str]:
        out = [f"wiring report for {self.board}:"]
        for cell, text in sorted(self.faulty.items()):
            kind = "faulty sensor"
            if "does not answer" in text or "soft reset" in text or "stopped answering" in text:
                kind = "dead reader"
            elif "tag answers with CRC errors" in text:
                kind = "tag reads with CRC errors"
            out.append(f"  {kind}: {cell}: {text}")
        for cell in self.silent:
            out.append(f"  {cell}: read nothing (a broken reed, switch, diode or reader line)")
        for asked, read in self.crossed:
            out.append(f"  crossed wires: a piece on {asked} is read on {read}")
        if self.leds:
            first, lit = self.leds[0]
            where = self.led_positions.get(first, -1)
            if lit is not None and lit in self.led_positions:
                offset = self.led_positions[lit] - where
                why = "a LED missing or bridged" if offset > 0 else "an extra LED"
                out.append(f"  LED chain offset {offset:+d} from position {where} (cell {first}) "
                           f"on: each cell lights the LED {abs(offset)} further ({why} there)")
            else:
                out.append(f"  LED chain: position {where} (cell {first}) lights nothing")
            for asked, lit in self.leds[1:]:
                out.append(f"    {asked} (position {self.led_positions.get(asked, -1)}) lit "
                           f"{lit if lit is not None else 'nothing'}")
        if self.ok:
            out.append("  no fault found")
        return out


def commission(session: BoardSession, board: Board, person: Person, *, thing: str | None = None,
               wait_s: float = WAIT_S, leds: bool = True, cells: list[str] | None = None) -> Report:
    """Walk ``board`` (connected on ``session``) with ``person``; the report.

    ``thing``: what to put on identity and presence cells (default: the board's first
    piece); card zones take a card (``tag:...``)."""
    report = Report(board.id)
    report.led_positions = {c.name: c.leds[0] for c in board.cells if c.leds}
    _faults(session, board, report)
    if leds:
        for cell in sorted((c for c in board.cells if c.leds), key=lambda c: c.leds[0]):
            session.set_leds({cell.name: WHITE})
            lit = person.see_led(cell.name)
            if lit != cell.name:
                report.leds.append((cell.name, lit))
        session.set_leds({})
    piece = thing or next(iter(board.pieces), "piece")
    walk = [board.cell(name) for name in cells] if cells else list(board.sensed)
    for cell in walk:
        _faults(session, board, report)
        if cell.name in report.faulty:
            continue  # the board said why already
        card = f"tag:04{cell.index:012x}" if cell.sensor == "card" else piece
        _drain(session)
        person.put(cell.name, card)
        read = _first_change(session, board, report, cell, wait_s, empty=False)
        person.take(cell.name)
        if read is None:
            if cell.name not in report.faulty:
                report.silent.append(cell.name)
            continue
        if read != cell.name:
            report.crossed.append((cell.name, read))
        _first_change(session, board, report, board.cell(read), wait_s, empty=True)
    _faults(session, board, report)
    return report


def _faults(session: BoardSession, board: Board, report: Report) -> None:
    for text in list(session.stats.board_errors):
        for cell in board.sensed:
            if f"cell {cell.name} " in text:
                report.faulty.setdefault(cell.name, text)


def _drain(session: BoardSession) -> None:
    session.take(timeout=0)


def _first_change(session: BoardSession, board: Board, report: Report, cell: Cell, wait_s: float,
                  empty: bool) -> str | None:
    """The cell whose reading first turns non-empty (or, with ``empty``, empty again),
    or None if the board names ``cell`` faulty or nothing comes within ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        for event in session.events(timeout=0.2):
            if (event.type == "square" and event.square and bool(event.reading) != empty
                    and (not empty or event.square == cell.name)):
                return event.square
        _faults(session, board, report)
        if cell.name in report.faulty:
            return None
    return None
