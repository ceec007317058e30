"""``masume bench link|rules|ai|club|fuzz|readers|faults|sim|chip``: print the project's
figures (docs/benchmarks.md)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("bench", help="measure speed (see docs/benchmarks.md)")
    kinds = parser.add_subparsers(dest="bench", metavar="WHAT", required=True)

    link = kinds.add_parser("link", help="board link: latency, throughput, firmware scan time")
    link.add_argument("--board", default=None, help="board for latency (default: the largest)")
    link.add_argument("--events", type=int, default=2000, help="events for the throughput run")
    link.add_argument("--unread", type=int, metavar="N",
                      help="instead: the host's memory while nobody reads N events")
    link.add_argument("--chip", action="store_true",
                      help="on the emulated chip (the chip's own firmware) instead of the "
                           "simulator")
    link.set_defaults(handler=_link)

    rules = kinds.add_parser("rules", help="rules engine: legal actions and playouts per second")
    rules.add_argument("--game", required=True)
    rules.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    rules.add_argument("--cpu", action="store_true",
                       help="time with the process's CPU time, not the wall clock "
                            "(a shared machine)")
    rules.set_defaults(handler=_rules)

    ai = kinds.add_parser("ai", help="the computer player: against a random player, and "
                          "against itself at a tenth of the time")
    ai.add_argument("--game", required=True)
    ai.add_argument("--games", type=int, default=10, help="games in each match")
    ai.add_argument("--move-seconds", type=float, default=0.2, help="the computer's time a move")
    ai.add_argument("--seed", type=int, default=1, help="the random generator's seed")
    ai.add_argument("--max-actions", type=int, default=2000,
                    help="a game still on after so many actions is judged by its score")
    ai.add_argument("--levels", metavar="A,B", default=None,
                    help="instead: level A against level B (masume.ai.LEVELS, or random), each "
                         "at most --move-seconds a move")
    ai.set_defaults(handler=_ai)

    readers = kinds.add_parser("readers", help="reader scan in board time: jobs, rounds, latency")
    readers.add_argument("--board", default=None,
                         help="a board with readers (default: masume-tactics)")
    readers.add_argument("--seconds", type=float, default=3.0, help="board time of steady scanning")
    readers.add_argument("--trials", type=int, default=40, help="hand movements per latency figure")
    readers.set_defaults(handler=_readers)

    chip = kinds.add_parser("chip", help="the firmware on the emulated chip, in board time: "
                            "boot, scan pass, settle-to-event latency, identity sweep, RAM left")
    chip.add_argument("--board", default=None, help="one board (default: every board)")
    chip.add_argument("--trials", type=int, default=40, help="piece movements per latency figure")
    chip.set_defaults(handler=_chip)

    club = kinds.add_parser("club",
                            help="club mode: event-to-LED latency and server CPU for N boards")
    club.add_argument("--boards", type=int, default=8,
                      help="the most boards to try (1, 2, 4, ... N; with --emulated 1, 10, 100, "
                      "... N)")
    club.add_argument("--seconds", type=float, default=30.0, help="measured play per size")
    club.add_argument("--pace", type=float, default=None,
                      help="seconds between two hand movements on a board (default 0.7; "
                      "with --emulated 4, on average)")
    club.add_argument("--cut", type=float, default=0.0, metavar="S",
                      help="cut one board's Wi-Fi for S seconds in the largest run (e.g. 60)")
    club.add_argument("--emulated", action="store_true",
                      help="boards emulated at the protocol level, thousands in one process "
                      "(the server's load, not the simulator's)")
    club.add_argument("--canaries", type=int, default=2,
                      help="with --emulated: full-VM simulated boards playing beside them")
    club.add_argument("--servers", type=int, default=1,
                      help="with --emulated: club servers sharing the boards (--shared)")
    club.add_argument("--postgres", metavar="ADMIN_URL",
                      help="with --emulated: a fresh PostgreSQL database per size, made and "
                      "dropped through ADMIN_URL (e.g. postgresql://postgres@/postgres"
                      "?host=/var/run/postgresql); else SQLite")
    club.add_argument("--kill", action="store_true",
                      help="with --emulated --servers 2+: SIGKILL the first server halfway "
                      "through the play (failover time)")
    club.add_argument("--workers", type=int, default=None, metavar="N",
                      help="with --emulated: the servers' --workers (default: theirs, one "
                      "per core; 0: tracker work in the server's own process)")
    club.set_defaults(handler=_club)

    sim = kinds.add_parser("sim", help="a simulated board at rest: its CPU and memory")
    sim.add_argument("--board", action="append", dest="boards", metavar="BOARD",
                     help="a board to measure (repeatable; default: soccer-shogi, "
                     "shogi-soccer, masume-tactics)")
    sim.add_argument("--seconds", type=float, default=10.0, help="the measured window per board")
    sim.set_defaults(handler=_sim)

    fuzz = kinds.add_parser("fuzz", help="the codec under a coverage-guided fuzzer (atheris): "
                            "every malformed payload must raise FrameError")
    fuzz.add_argument("--payloads", type=int, default=1_000_000, help="payloads to try")
    fuzz.add_argument("--seed", type=int, default=1, help="the fuzzer's random seed")
    fuzz.set_defaults(handler=_fuzz)

    faults = kinds.add_parser("faults", help="club mode through server SIGKILLs, broker restarts, "
                              "disk full, noise, unplugging, malformed frames, a client-id "
                              "takeover: actions lost, dead workers, time to recover")
    faults.add_argument("--tables", type=int, default=3,
                        help="Soccer Shogi tables (and one card mat)")
    faults.add_argument("--kills", type=int, default=3, help="times the club server is SIGKILLed")
    faults.add_argument("--pace", type=float, default=0.7,
                        help="seconds between two hand movements on a board")
    faults.add_argument("--payloads", type=int, default=1_000_000,
                        help="payloads for the codec fuzzer at the end (0: none)")
    faults.add_argument("--seed", type=int, default=1, help="the noise's random seed")
    faults.set_defaults(handler=_faults)


def _link(args: argparse.Namespace) -> int:
    from masume.bench.link import largest_board, run, unread
    from masume.boards import load_board

    if args.unread:
        return unread(load_board(args.board) if args.board else largest_board(), args.unread)
    return run(board=args.board, events=args.events, chip=args.chip)


def _readers(args: argparse.Namespace) -> int:
    from masume.bench.readers import run

    return run(board=args.board, seconds=args.seconds, trials=args.trials)


def _chip(args: argparse.Namespace) -> int:
    import sys

    from masume.bench.chip import run
    from masume.boards import BoardError

    try:
        return run(board=args.board, trials=args.trials)
    except BoardError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _club(args: argparse.Namespace) -> int:
    from masume.cli import leave_without_teardown

    if args.emulated:
        from masume.bench.club_emulated import run as run_emulated

        code = run_emulated(boards=args.boards, seconds=args.seconds,
                            pace=4.0 if args.pace is None else args.pace, canaries=args.canaries,
                            servers=args.servers, postgres=args.postgres, kill=args.kill,
                            workers=args.workers)
    else:
        from masume.bench.club import run

        code = run(boards=args.boards, seconds=args.seconds,
                   pace=0.7 if args.pace is None else args.pace, cut=args.cut)
    leave_without_teardown(code)


def _faults(args: argparse.Namespace) -> int:
    from masume.bench.faults import run
    from masume.cli import leave_without_teardown

    code = run(tables=args.tables, kills=args.kills, pace=args.pace, payloads=args.payloads,
               seed=args.seed)
    leave_without_teardown(code)


def _sim(args: argparse.Namespace) -> int:
    from masume.bench.sim import run

    return run(boards=args.boards, seconds=args.seconds)


def _fuzz(args: argparse.Namespace) -> int:
    from masume.bench.fuzz import run

    return run(payloads=args.payloads, seed=args.seed)


def _ai(args: argparse.Namespace) -> int:
    from masume.bench.ai import run

    return run(game=args.game, games=args.games, move_seconds=args.move_seconds, seed=args.seed,
               max_actions=args.max_actions, levels=args.levels)


def _rules(args: argparse.Namespace) -> int:
    from masume.bench.rules import run

    return run(game=args.game, seconds=args.seconds, cpu=args.cpu)
