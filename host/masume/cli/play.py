"""``masume play GAME``: play on a board, with the web view.

With ``--port`` it drives that board. Without, it looks for a masume board on USB
(a Raspberry Pi Pico or an ESP32-S3) and, when none is attached, starts the
simulated board itself. The web view's links are printed, each with this run's
secret: ``web view: URL`` (the table's page: on the simulated board the players'
hands), ``web view for SIDE: URL`` for each player (their own cards in a card game;
none for the computer's side, whose page would show its hidden hand) and ``web view
for spectators: URL`` (read only). Actions are printed as they are
played, and ``table: ...`` lines say what the table refused and why, and how to
put the board right.

With ``--computer SIDE`` the computer plays that side (``--level``: beginner, casual,
club, strong): on its turn the board lights its action in its colour, the page and
the terminal say it (``table: computer: E6 lob N: from E6 to E7``), and the players carry
it out on the board; a different action is flagged and taken back. The page's hint
button (and the board's ``hint`` button, where it has one) lights the best action for
the side to act. docs/playing.md, "Playing against the computer".

On the simulated board the terminal takes the simulator's commands too (``place
C5 ball``, ``lift A7``, ``press takeback``, ... as in ``masume sim``).
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from masume.cli import described

if TYPE_CHECKING:
    from masume.link import Reading
    from masume.rules import AnyPosition
    from masume.sim.board import SimulatedBoard

#: USB vendor ids of the reference controllers: Raspberry Pi (Pico W), Espressif (ESP32-S3).
BOARD_USB_VENDORS = {0x2E8A: "Raspberry Pi Pico", 0x303A: "ESP32-S3"}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("play", help="play a game on a board (or the simulated board)",
                            description=described(__doc__),
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("game", help="soccer-shogi, shogi-soccer, ...")
    parser.add_argument("--port", help="the board's serial port (default: find one, else simulate)")
    parser.add_argument("--simulate", action="store_true",
                        help="use the simulated board even if one is attached")
    parser.add_argument("--chip", action="store_true",
                        help="with --simulate: the emulated chip (the chip's own firmware) "
                             "as the board")
    parser.add_argument("--board", help="board definition id (default: the game's table)")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a rule option, e.g. goals_to_win=3 (repeatable)")
    parser.add_argument("--resume", metavar="FOLDER|last", help="go on with a saved game")
    parser.add_argument("--clock", type=float, metavar="MINUTES",
                        help="a chess clock: each side has MINUTES for the game, shown on "
                             "the page and the turn lamps; a side out of time loses")
    parser.add_argument("--games-dir", type=Path, help="where games are saved "
                        "(default: ~/.local/share/masume/games)")
    parser.add_argument("--http-host", default="127.0.0.1",
                        help="web view address (0.0.0.0: the whole network)")
    parser.add_argument("--http-port", type=int, default=8021,
                        help="web view port (0: any free one)")
    parser.add_argument("--http-allow-host", action="append", default=[], metavar="NAME",
                        help="another name the web view is reached by (its own names and "
                             "addresses always work; repeatable)")
    parser.add_argument("--no-web", action="store_true", help="no web view")
    parser.add_argument("--computer", metavar="SIDE",
                        help="the computer plays this side (one of the game's sides)")
    parser.add_argument("--level", default="casual",
                        help="the computer's strength: beginner, casual, club or strong "
                             "(default casual)")
    parser.add_argument("--blue", "--first-player", dest="first_player",
                        help="name of the first player")
    parser.add_argument("--red", "--second-player", dest="second_player",
                        help="name of the second player")
    parser.set_defaults(handler=run)


def find_board_port() -> str | None:
    """The first serial port that looks like a masume controller."""
    from serial.tools import list_ports

    for port in list_ports.comports():
        if port.vid in BOARD_USB_VENDORS:
            return port.device
    return None


def run(args: argparse.Namespace) -> int:
    import logging

    from masume.ai import level
    from masume.boards import BoardError, load_board
    from masume.games import load_rules
    from masume.link import BoardSession, SerialTransport
    from masume.play.computer import COMPUTER_HEADER, check_computer, computer_of
    from masume.play.table import TableSession
    from masume.records import RecordError, parse_options
    from masume.storage import GameStore, default_games_dir

    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s", stream=sys.stderr)
    _stop_on_sigterm()
    try:
        rules = load_rules(args.game)
        board = load_board(args.board or rules.board)
        options = parse_options(" ".join(args.option))
        level(args.level)
        if args.computer is not None:
            check_computer(args.computer, args.level, rules.start().sides, args.game,
                           "--computer")
    except (ValueError, BoardError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    # Everything that can refuse to start is tried before the game's folder is made
    # (a folder left empty would be what `--resume last` picks): the web port, the
    # serial port.
    listening = None
    if not args.no_web:
        from masume.web.server import listen

        try:
            listening = listen(args.http_host, args.http_port)
        except OSError as exc:
            print(f"error: {exc} (is another masume play running? choose another "
                  "--http-port, or --no-web)", file=sys.stderr)
            return 2
    if args.port:
        from masume.link import LinkDown

        probe = SerialTransport(args.port)
        try:
            probe.open()
        except LinkDown as exc:
            if listening is not None:
                listening.close()
            print(f"error: {exc} (is the board plugged in, and the port not used by another "
                  "program? leave out --port to find the board, or --simulate)", file=sys.stderr)
            return 2
        finally:
            probe.close()

    games_dir = args.games_dir or default_games_dir()
    try:
        if args.resume:
            folder = (GameStore.latest(games_dir, args.game) if args.resume == "last"
                      else Path(args.resume))
            if folder is None:
                print(f"error: no saved {args.game} game in {games_dir}", file=sys.stderr)
                return 2
            store, game = GameStore.resume(folder)
            print(f"resuming {folder} after {len(game.actions)} actions", flush=True)
        else:
            players = (("Blue", args.first_player), ("Red", args.second_player))
            headers = {k: v for k, v in players if v}
            if options:
                headers["Options"] = " ".join(args.option)
            if args.clock:
                headers["Clock"] = f"per side={args.clock * 60:.1f}"
            if args.computer:
                headers[COMPUTER_HEADER] = f"{args.computer} {args.level}"
            store = GameStore.new(games_dir, args.game, headers)
            from masume.rules import Game

            game = Game(rules.start(**options))
    except (RecordError, OSError, TypeError, ValueError) as exc:
        if listening is not None:
            listening.close()
        print(f"error: {exc}", file=sys.stderr)
        return 2

    port = args.port or (None if args.simulate or args.chip else find_board_port())
    sim = None
    table: TableSession | None = None
    if port is None:
        from masume.sim.board import SimulatedBoard
        from masume.sim.chip.board import ChipBoard

        def leds_changed(*_: object) -> None:
            if table is not None:
                table.sim_changed()

        sim = (ChipBoard if args.chip else SimulatedBoard)(
            board, on_leds=leds_changed,
            on_log=lambda m: print(f"sim: {m}", file=sys.stderr))
        port = sim.port
    link = BoardSession(SerialTransport(port), expect=board.id, resolve=lambda _id: board)

    # The table's thread and this one both print: each line goes out whole, through
    # say() alone once the table runs (print() writes the text and its newline apart:
    # a "table: ..." line once ran into the "web view: URL" line, breaking its URL).
    printing = threading.Lock()

    def say(line: str) -> None:
        with printing:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def report(what: str, side: str, notation: str) -> None:
        say(f"{side}: {notation}" if what == "played" else f"took back {notation}")

    # The table puts the link where the saved game left the board's events (on a
    # resume, the board then sends again what the save does not hold).
    def tell(message: str) -> None:
        say(f"table: {message}")

    # The computer's side: as asked, else as the resumed game's record says.
    computer, level_name = computer_of(store.headers)
    if args.computer:
        computer, level_name = args.computer, args.level
        store.headers[COMPUTER_HEADER] = f"{computer} {level_name}"  # a resume may change it
    table = TableSession(rules, board, link, game=game, store=store, sim=sim, port=port,
                         on_action=report, on_message=tell, computer=computer,
                         level=level_name)
    if sim is not None:
        _set_up(sim, game.position, table.readings)
    link.start()
    table.start()
    say(f"board: {board.id} on {port}{' (simulated)' if sim else ''}")
    say(f"saving to {store.folder}")
    if computer:
        say(f"the computer plays {computer} ({level_name})")
    stop_web = None
    if listening is not None:
        from masume.web.server import serve

        web = serve(table, host=args.http_host, port=args.http_port,
                    allow_hosts=args.http_allow_host, sock=listening)
        stop_web = web.stop
        for printed in web.links:  # "web view: URL", "web view for SIDE: URL", ...
            say(f"{printed.label}: {printed.url}")
    try:
        if sim is not None:
            from masume.cli.sim import execute

            for line in sys.stdin:
                words = line.split()
                if words and words[0] == "quit":
                    break
                if words:
                    say(execute(sim, words))
            else:
                _wait_forever()
        else:
            _wait_forever()
    except KeyboardInterrupt:
        pass
    finally:
        if stop_web:
            stop_web()
        table.close()
        link.close()
        if sim:
            sim.close()
    outcome = table.core.shown_position().outcome()  # a resignation too
    say(f"game over: {outcome}" if outcome else f"game saved in {store.folder}")
    if sim:
        from masume.cli import leave_without_teardown

        # The simulated board's MicroPython VM ran in this process: its runtime's
        # threads can panic in the interpreter's teardown (as `masume sim`'s).
        leave_without_teardown(0)
    return 0


def _set_up(sim: SimulatedBoard, position: AnyPosition,
            readings: Mapping[str, Reading] | None = None) -> None:
    """Stand the simulated board's pieces as the game begins (a person would); a
    pile of cards whose top card is unknown gets a spare card of the set. On a
    resume, where the saved readings name the pieces (identity sensors), they stand
    as the board read them at the last save, as real pieces would have stayed:
    a move the save holds but had not finished reading is read again. Returns once
    the board has read them (SimulatedBoard.stand): the table, connected after, finds
    them standing and asks no one to set them up."""
    from masume.play.cards import set_up

    layout = dict(position.layout())
    for square, reading in (readings or {}).items():
        if sim.board.cell(square).sensor == "identity" and isinstance(reading, tuple):
            layout[square] = reading
    sim.stand(set_up(layout, position))


def _stop_on_sigterm() -> None:
    """SIGTERM ends the game as Ctrl-C does: the web view and the board close cleanly."""
    import signal

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)


def _wait_forever() -> None:
    threading.Event().wait()
