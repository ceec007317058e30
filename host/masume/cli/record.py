"""``masume record check|show|review``: replay a game record file (format:
masume/records.py); ``review``: the computer's comments on the biggest mistakes
(masume.ai.review)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from masume.records import Record
    from masume.rules import Position


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("record", help="check or show a game record file")
    kinds = parser.add_subparsers(dest="record", metavar="WHAT", required=True)

    check = kinds.add_parser(
        "check",
        help="replay a record; exit 0 if every action is legal, "
             "else print 'line N: ACTION: reason'",
    )
    check.add_argument("--game", default=None, help='game rules (default: the [Game "..."] header)')
    check.add_argument("file", metavar="FILE")
    check.set_defaults(handler=_check)

    show = kinds.add_parser("show", help="print the final position of a record as a diagram")
    show.add_argument("--game", default=None, help='game rules (default: the [Game "..."] header)')
    show.add_argument("--text", action="store_true", help="also print the position text")
    show.add_argument("file", metavar="FILE")
    show.set_defaults(handler=_show)

    review = kinds.add_parser("review", help="the computer's comments on a game's biggest "
                                             "mistakes (the actions its search judges worst)")
    review.add_argument("--game", default=None,
                        help='game rules (default: the [Game "..."] header)')
    review.add_argument("--seconds", type=float, default=1.0,
                        help="the search's time for each position (default 1)")
    review.add_argument("--iterations", type=int, default=None,
                        help="at most so many search iterations a position (default: as "
                             "the time allows; the page's review: 100 in at most 1 s)")
    review.add_argument("--most", type=int, default=3, help="how many mistakes (default 3)")
    review.add_argument("--seed", type=int, default=None, help="the search's random seed")
    review.add_argument("file", metavar="FILE")
    review.set_defaults(handler=_review)


def _final(args: argparse.Namespace) -> tuple[Record, Position[Any]] | int:
    """The record and its final position, or the exit code after printing why not."""
    from masume.records import RecordError, check_record, rules_for

    try:
        record = _read(args.file)
        if isinstance(record, int):
            return record
        rules = rules_for(record, args.game)
        return record, check_record(record, rules)
    except RecordError as exc:
        print(str(exc) if exc.line else f"{args.file}: {exc}", file=sys.stderr)
        return 1


def _check(args: argparse.Namespace) -> int:
    from masume.records import state_of

    result = _final(args)
    if isinstance(result, int):
        return result
    record, position = result
    actions = sum(len(turn.actions) for turn in record.turns)
    state = state_of(position)
    message = position.status().message
    if position.outcome() is None and message:  # a game may leave it empty: no "()"
        state += f" ({message})"
    print(f"{args.file}: ok, {actions} actions on {len(record.turns)} turn lines; {state}")
    return 0


def _show(args: argparse.Namespace) -> int:
    result = _final(args)
    if isinstance(result, int):
        return result
    _, position = result
    from masume.records import state_of

    print(position.diagram())
    print(state_of(position))
    if args.text:
        print(position.to_text())
    return 0


def _review(args: argparse.Namespace) -> int:
    import random

    from masume.ai import Level
    from masume.ai.review import mistakes
    from masume.records import RecordError, replay, rules_for
    from masume.rules.base import HidesInformation

    try:
        record = _read(args.file)
        if isinstance(record, int):
            return record
        game = replay(record, rules_for(record, args.game))
        level = Level("review", args.seconds, args.iterations)
    except RecordError as exc:
        print(str(exc) if exc.line else f"{args.file}: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    positions = game.positions()
    found = mistakes(game.start, game.actions, level, random.Random(args.seed), most=args.most)

    def said(index: int, action: object) -> str:
        position = positions[index]  # as everyone at the table read it: no hidden card named
        if isinstance(position, HidesInformation):
            return position.notation_for(action, None)
        return position.notation(action)

    print(f"{args.file}: {len(game.actions)} actions, {args.seconds:g} s of search a position")
    if not found:
        print("no mistakes the computer is sure of")
    for m in found:
        print(f"action {m.index + 1} ({m.side}): {said(m.index, m.played)}; the computer "
              f"prefers {said(m.index, m.better)} (it loses {m.loss:.2f} of a game)")
    return 0


def _read(file: str) -> Record | int:
    from masume.records import read_record

    try:
        return read_record(file)
    except OSError as exc:
        print(f"{file}: cannot read: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except UnicodeDecodeError:
        print(f"{file}: not a UTF-8 text file", file=sys.stderr)
        return 2
