"""``masume record check|show``: replay a game record file (format: masume/records.py)."""

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


def _final(args: argparse.Namespace) -> tuple[Record, Position[Any]] | int:
    """The record and its final position, or the exit code after printing why not."""
    from masume.records import RecordError, check_record, read_record, rules_for

    try:
        record = read_record(args.file)
        rules = rules_for(record, args.game)
        return record, check_record(record, rules)
    except OSError as exc:
        print(f"{args.file}: cannot read: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except UnicodeDecodeError:
        print(f"{args.file}: not a UTF-8 text file", file=sys.stderr)
        return 2
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
