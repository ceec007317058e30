"""The ``masume`` command. Each subcommand lives in its own module here and
registers itself through ``register(subparsers)``; heavy imports stay inside the
handlers so that ``masume --help`` is instant.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from pathlib import Path
from typing import NoReturn

#: Subcommand modules, in the order ``masume --help`` lists them.
COMMANDS = ("play", "sim", "board", "record", "cards", "bench", "club", "schema")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="masume", description="A smart table for board games: play, simulate, record."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        module = importlib.import_module(f"masume.cli.{name}")
        module.register(sub)
    return parser


def described(doc: str | None) -> str:
    """A module docstring as a command's ``--help`` text: plain words, without the
    reStructuredText marks of the docs (````masume play````, ``:func:`x``` -> x)."""
    text = re.sub(r":[a-z]+:`([^`]*)`", r"\1", doc or "")
    return text.replace("``", "")


def add_password_file(parser: argparse.ArgumentParser) -> None:
    """--password-file, for every command that takes a broker URL (BrokerUrl.from_command_line)."""
    parser.add_argument("--password-file", type=Path, metavar="FILE",
                        help="the broker password: a file holding it, or the credentials.toml "
                        "of broker-config (default: $MASUME_MQTT_PASSWORD)")


def leave_without_teardown(code: int) -> NoReturn:
    """Exit once everything is closed and printed, skipping the interpreter's teardown:
    the MicroPython VM runtime's (wasmtime's) worker threads can panic while it tears
    down (a Rust "panic in a function that cannot unwind" printed after the output)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
