"""``masume board list|monitor|deploy|test``: the boards, their events, their firmware,
and the commissioning walk of a freshly built board (docs/commissioning.md)."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from masume.link import BoardEvent


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("board", help="list boards, watch a board's events, deploy firmware")
    what = parser.add_subparsers(dest="board_command", metavar="WHAT", required=True)

    listing = what.add_parser("list", help="the board definitions in hardware/boards/")
    listing.set_defaults(handler=_list)

    monitor = what.add_parser("monitor", help="print a board's events as they happen")
    monitor.add_argument("--port", required=True, help="serial port (or a masume sim port)")
    monitor.add_argument("--board", help="refuse any board but this definition id")
    monitor.add_argument("--json", action="store_true", help="one JSON object per event")
    monitor.add_argument("--count", type=int, help="exit after this many events")
    monitor.set_defaults(handler=_monitor)

    deploy = what.add_parser("deploy", help="copy the firmware and a board definition to a chip")
    deploy.add_argument("--board", required=True)
    deploy.add_argument("--port", help="the chip's serial port (mpremote's 'auto' if omitted)")
    deploy.add_argument("--dry-run", action="store_true",
                        help="write the files to a folder and print the plan, touch no chip")
    deploy.add_argument("--no-mpy", action="store_true",
                        help="copy the modules as source (a chip older than MicroPython 1.23)")
    deploy.add_argument("--no-deps", action="store_true",
                        help="skip 'mip install' of umqtt (it needs the internet; only club mode "
                        "uses it)")
    deploy.set_defaults(handler=_deploy)

    test = what.add_parser(
        "test", help="commission a freshly built board: every LED, every cell, a wiring report",
        description="Lights every cell's LED in turn and asks which one lit; asks for a piece "
        "(or a card) on every sensed cell and checks that the right cell reads it; then prints "
        "a wiring report: dead readers, tags with CRC errors, crossed rows, columns or reader "
        "lines, the LED chain's offset. Exit status 0 when no fault was found, 1 otherwise. "
        "See docs/commissioning.md.")
    test.add_argument("--port", required=True, help="serial port (or a masume sim port)")
    test.add_argument("--board", help="refuse any board but this definition id")
    test.add_argument("--piece", help="the piece to ask for (default: the board's first)")
    test.add_argument("--no-leds", action="store_true", help="skip the LED walk")
    test.add_argument("--cells", help="walk only these cells (comma-separated names)")
    test.add_argument("--wait", type=float, default=30.0, metavar="S",
                      help="seconds a cell may take to read a piece before it counts as dead")
    test.set_defaults(handler=_test)


def _list(args: argparse.Namespace) -> int:
    from masume.boards import board_ids, load_board

    for board_id in board_ids():
        b = load_board(board_id)
        kinds = sorted({c.sensor for c in b.sensed})
        print(f"{b.id:22} {len(b.sensed):4} sensed cells ({', '.join(kinds)}), "
              f"{b.led_count} LEDs, {len(b.buttons)} buttons{', die' if b.die else ''}  {b.title}")
    return 0


def _monitor(args: argparse.Namespace) -> int:
    import logging

    from masume.link import BoardMismatch, BoardSession, SerialTransport

    logging.basicConfig(level=logging.WARNING, format="monitor: %(message)s", stream=sys.stderr)
    count = 0
    with BoardSession(SerialTransport(args.port), expect=args.board) as session:
        try:
            session.wait_connected()
            board = session.board
            assert board is not None  # connected: the board said who it is
            print(f"monitor: connected to {board.id} (firmware {session.firmware}, "
                  f"definition {board.hash:08x}) on {args.port}", file=sys.stderr, flush=True)
            for event in session.events():
                if event.type == "snapshot":
                    continue
                if args.json:
                    print(event.to_json(), flush=True)
                else:
                    print(_describe(event), flush=True)
                count += 1
                if args.count is not None and count >= args.count:
                    break
        except BoardMismatch as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    return 0


def _describe(event: BoardEvent) -> str:
    if event.type == "square":
        return f"#{event.seq} {event.square}: {event.reading}"
    if event.type == "die":
        return f"#{event.seq} die roll {event.roll_id}: {event.value}"
    return f"#{event.seq} button {event.button}"


class _Terminal:
    """The person at the board, asked on the terminal (one line a request)."""

    def see_led(self, cell: str) -> str | None:
        print(f"led {cell}: is its LED lit? [Enter: yes; or the name of the cell that is lit; "
              f"or none]", flush=True)
        answer = sys.stdin.readline().strip()
        if answer == "none":
            return None
        return answer or cell

    def put(self, cell: str, thing: str) -> None:
        print(f"put {thing} on {cell}", flush=True)

    def take(self, cell: str) -> None:
        print(f"take it off {cell}", flush=True)


def _test(args: argparse.Namespace) -> int:
    import logging

    from masume.link import BoardMismatch, BoardSession, SerialTransport
    from masume.link.commission import commission

    logging.basicConfig(level=logging.ERROR, format="board test: %(message)s", stream=sys.stderr)
    with BoardSession(SerialTransport(args.port), expect=args.board) as session:
        try:
            if not session.wait_connected(60):
                print(f"error: no board answers on {args.port}", file=sys.stderr)
                return 2
        except BoardMismatch as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        board = session.board
        assert board is not None  # connected: the handshake named it
        cells = args.cells.split(",") if args.cells else None
        try:
            if args.piece:
                board.piece_code(args.piece)
            for name in cells or ():
                board.cell(name)
        except (KeyError, ValueError) as exc:
            print(f"error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
            return 2
        print(f"board test: {board.id} on {args.port}", flush=True)
        report = commission(session, board, _Terminal(), thing=args.piece, wait_s=args.wait,
                            leds=not args.no_leds, cells=cells)
    for line in report.lines():
        print(line, flush=True)
    return 0 if report.ok else 1


def _deploy(args: argparse.Namespace) -> int:
    from masume.boards import BoardError, load_board
    from masume.deploy import MPY_VERSION, DeployError, commands, stage

    try:
        board = load_board(args.board)
        staging = Path(tempfile.mkdtemp(prefix=f"masume-deploy-{board.id}-"))
        plan = stage(board, staging, mpy=not args.no_mpy)
    except (BoardError, DeployError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    form = "source" if args.no_mpy else f".mpy {MPY_VERSION}, MicroPython 1.23 or later"
    print(f"board {board.id}: definition hash {board.hash:08x}, {len(plan.files)} files from "
          f"{staging} ({form}: {plan.staged_bytes // 1024} KB; "
          f"source {plan.source_bytes // 1024} KB)")
    for cmd, may_fail in commands(plan, args.port, deps=not args.no_deps):
        print("mpremote " + " ".join(cmd))
        if args.dry_run:
            continue
        result = subprocess.run([sys.executable, "-m", "mpremote", *cmd], capture_output=True,
                                text=True, check=False)
        if result.returncode != 0 and not may_fail:  # mkdir of a folder there, rm of none
            print(f"error: mpremote {' '.join(cmd)}: {result.stderr.strip()}", file=sys.stderr)
            return 1
    return 0
