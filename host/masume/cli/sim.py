"""``masume sim --board BOARD``: a simulated board on a real serial device.

With ``--mqtt URL --id ID`` the board talks MQTT to that broker instead (club
mode, docs/club.md): ``port:`` then shows the broker and the unit id, and
``unplug``/``replug`` drop and restore its Wi-Fi; its broker password comes from
``--password-file`` or $MASUME_MQTT_PASSWORD, never the URL. ``--setup GAME``
stands that game's starting pieces on the board first (``port:`` is printed once the
board has read them).

With ``--chip`` the board is the emulated chip instead (masume.sim.chip): the
firmware's own main.py, hw_chip.py and reader driver on emulated peripherals
(MFRC522s at register level, the presence matrix electrically, the WS2812
chain, the watchdog), in board time; ``leds`` then says what the chain shows
(after the board's brightness cap). A built board's faults can be injected
there (``--fault`` again for each):

    dead-reader:CELL       the cell's reader never answers
    swapped-columns:A,B    presence matrix: column wires A and B swapped (0-based)
    swapped-cells:X,Y      the sensors of cells X and Y wired to each other's place
    missing-led:N          chain position N bridged over (the LEDs after it offset)
    crc-errors:CELL        what is put on the cell carries a faulty tag (wrong CRC_A)

Prints ``port: PATH`` first, then reads commands from stdin, one per line, and
answers each with ``ok ...`` or ``error: ...``:

    place SQ PIECE   put PIECE (a piece name of the board, or tag:UID on a card zone) on SQ
    lift SQ          take the top piece off SQ
    roll [N]         roll the die (N forces the face, for tests)
    press NAME       press a button
    noise N          put N random bytes on the line
    unplug / replug  pull and reconnect the USB cable (PATH stays the same)
    leds             print what the LEDs show: CELL=RRGGBB/pattern ...
    help             list these commands
    quit             stop (so does the end of stdin)
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import TYPE_CHECKING

from masume.cli import add_password_file, described

if TYPE_CHECKING:
    from masume.sim.board import SimulatedBoard


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("sim", help="run a simulated board on a pseudo-terminal",
                            description=described(__doc__),
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--board", required=True, help="board definition id (masume board list)")
    parser.add_argument("--link", help="path of the port symlink (default: a fresh one in /tmp)")
    parser.add_argument("--seed", type=int, help="seed for the die and noise")
    parser.add_argument("--mqtt", metavar="URL", help="talk MQTT to this broker instead of serial "
                        "(club mode): mqtt://USER@HOST:PORT or mqtts://USER@HOST:PORT?ca=CA.crt, "
                        "no password in it")
    add_password_file(parser)
    parser.add_argument("--id", dest="unit",
                        help="the board's unit id on MQTT (default: the board id)")
    parser.add_argument("--setup", help="stand this game's starting pieces on the board first")
    parser.add_argument("--chip", action="store_true",
                        help="run the chip's own firmware on emulated peripherals")
    parser.add_argument("--fault", action="append", default=[], metavar="KIND:WHERE",
                        help="with --chip: a wiring fault of the board (see above)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from masume.boards import BoardError
    from masume.link.mqtt import BrokerUrl
    from masume.sim.board import SimulatedBoard

    try:
        if args.password_file and not args.mqtt:
            raise ValueError("--password-file is the broker's: it goes with --mqtt")
        mqtt = BrokerUrl.from_command_line(args.mqtt, args.password_file) if args.mqtt else None
        log = lambda m: print(f"sim: {m}", file=sys.stderr, flush=True)
        if args.fault and not args.chip:
            raise ValueError("--fault needs --chip (the emulated chip's board has the wires)")
        if args.chip:
            if mqtt:
                raise ValueError("--chip runs the USB link; club mode (--mqtt) is the simulator's")
            from masume.sim.chip.board import ChipBoard

            sim: SimulatedBoard = ChipBoard(args.board, link=args.link, seed=args.seed,
                                            faults=args.fault, on_log=log)
        else:
            sim = SimulatedBoard(args.board, link=args.link, seed=args.seed, mqtt=mqtt,
                                 unit=args.unit, on_log=log)
        if args.setup:
            from masume.games import load_rules
            from masume.play.cards import set_up

            start = load_rules(args.setup).start()
            sim.stand(set_up(start.layout(), start))  # piles get a spare card
    except (BoardError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with sim:
        print(f"port: {sim.port}", flush=True)
        for line in sys.stdin:
            words = line.split()
            if not words:
                continue
            if words[0] == "quit":
                break
            print(execute(sim, words), flush=True)
    from masume.cli import leave_without_teardown

    leave_without_teardown(0)  # the board is closed: nothing is left to tear down


def commands() -> str:
    """The commands stdin takes, as the docstring lists them: ``place SQ PIECE | ...``."""
    table = (__doc__ or "").split("answers each with", 1)[-1]
    usages = re.findall(r"^    (\S.*?)\s{2,}", table, re.MULTILINE)
    return " | ".join(u.replace(" / ", " | ") for u in usages)


def execute(sim: SimulatedBoard, words: list[str]) -> str:
    """Carry out one command; the answer line."""
    from masume.sim.table import TableError
    from masume_protocol.codec import PATTERNS

    cmd, rest = words[0], words[1:]
    try:
        if cmd == "place" and len(rest) == 2:
            sim.place(rest[0], rest[1])
        elif cmd == "lift" and len(rest) == 1:
            return f"ok lift {rest[0]} {sim.lift(rest[0])}"
        elif cmd == "roll" and len(rest) <= 1:
            sim.roll(int(rest[0]) if rest else None)
        elif cmd == "press" and len(rest) == 1:
            sim.press(rest[0])
        elif cmd == "noise" and len(rest) == 1:
            sim.noise(int(rest[0]))
        elif cmd == "unplug" and not rest:
            sim.unplug()
        elif cmd == "replug" and not rest:
            sim.replug()
        elif cmd == "help":
            return f"ok help: {commands()}"
        elif cmd == "leds" and not rest:
            shown = " ".join(
                f"{cell}={r:02x}{g:02x}{b:02x}/{PATTERNS[sim.led_patterns[cell]]}"
                for cell, (r, g, b) in sorted(sim.led_colours.items())
            )
            return f"ok leds {shown}".rstrip()
        else:
            return f"error: unknown command {' '.join(words)!r}; the commands: {commands()}"
    except (TableError, KeyError, ValueError) as exc:
        return f"error: {exc.args[0] if exc.args else exc}"
    return "ok " + " ".join(words)
