"""``masume bench fuzz --payloads N``: the codec's contract under a coverage-guided fuzzer.

The contract (protocol/SPEC.md): every malformed payload raises ``FrameError``, and
so does every frame that names what the board does not have. A payload is fed to
what the host does with a frame from a board: ``codec.unpack`` for its message
type, then ``check_frame`` against a board definition, then the look-ups the link
session makes with what passed (cells, readings, buttons). The fuzzer is atheris
(libFuzzer for Python): it watches which branches of the codec and of the checks a
payload reaches and breeds the payloads that reach new ones, starting from a valid
payload of every message type for every board. The frame layer is fuzzed too:
each input is also decoded as a raw frame, and fed as a byte stream to a Deframer.

Prints the payloads tried, how many raised an exception other than FrameError (the
goal: 0; each kind is named with a payload that raised it) and the time taken.

atheris comes with the ``fuzz`` extra: ``pip install -e '.[fuzz]'``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from masume.boards import Board

#: Input layout: byte 0 picks the message type, byte 1 the board, the rest is the payload.
UNKNOWN_TYPE = 0x7F
MAX_LEN = 512


def _types() -> list[int]:
    from masume_protocol import codec as c

    return sorted(c.NAMES) + [UNKNOWN_TYPE]


def _boards() -> list[Board]:
    from importlib import resources

    from masume.boards import load_board

    folder = Path(str(resources.files("masume_hardware") / "boards"))
    return [load_board(path.stem) for path in sorted(folder.glob("*.toml"))]


def seeds(types: list[int], boards: list[Board]) -> list[bytes]:
    """A valid payload of every message type for every board: where the fuzzer starts."""
    from masume_protocol import codec as c

    out = []
    for b, board in enumerate(boards):
        sensed = [cell for cell in board.sensed]
        first = sensed[0]
        reading = bytes([next(iter(board.pieces.values()))]) if board.pieces else b"\x01"
        payloads = {
            c.HELLO: c.pack_hello(0x12345678, 41),
            c.WELCOME: c.pack_welcome(7, 42, 1, board.hash, "0.3.0", board.id),
            c.SQUARE: c.pack_square(first.index, reading if first.sensor == "identity"
                                    else b"\x01", 123456),
            c.DIE: c.pack_die(3, 4, 99),
            c.BUTTON: c.pack_button(board.buttons[0].index if board.buttons else 0, 77),
            c.SNAPSHOT: c.pack_snapshot([(cell.index, b"") for cell in sensed[:8]]),
            c.LED_FRAME: c.pack_leds([(0, (255, 0, 0), 1), (1, (0, 0, 255), 2)]),
            c.LED_SET: c.pack_leds([(2, (0, 255, 0), 3)]),
            c.HEARTBEAT: c.pack_heartbeat(42, 40, 123456, 7),
            c.ERROR: c.pack_error(c.E_PAYLOAD, "no cell 999 on this board"),
        }
        for t, mtype in enumerate(types):
            out.append(bytes([t, b]) + payloads.get(mtype, b""))
    return out


class Target:
    """One fuzz input through the host's frame handling; counts what it raised."""

    def __init__(self, types: list[int], boards: list[Board]) -> None:
        from masume.link.events import check_frame, decode_reading
        from masume_protocol import codec as c

        self.c = c
        self.check_frame = check_frame
        self.decode_reading = decode_reading
        self.types = types
        self.boards = boards
        self.payloads = 0
        self.accepted = 0
        self.frame_errors = 0
        self.other: dict[str, tuple[int, str]] = {}  # kind -> (count, first payload in hex)

    def __call__(self, data: bytes) -> None:
        self.payloads += 1
        try:
            self._payload(data)
            self.accepted += 1
        except self.c.FrameError:
            self.frame_errors += 1
        except Exception as exc:  # noqa: BLE001 (the contract broken: count it, keep fuzzing)
            kind = f"{type(exc).__name__} ({exc})"[:120]
            count, example = self.other.get(kind, (0, data.hex()))
            self.other[kind] = (count + 1, example)
        # The frame layer: any bytes, as one frame and as a stream.
        try:
            self.c.decode_frame(data)
        except self.c.FrameError:
            pass
        except Exception as exc:  # noqa: BLE001 (counted, as above)
            kind = f"decode_frame: {type(exc).__name__} ({exc})"[:120]
            count, example = self.other.get(kind, (0, data.hex()))
            self.other[kind] = (count + 1, example)
        self.c.Deframer(limit=64).feed(data)

    def _payload(self, data: bytes) -> None:
        c = self.c
        if len(data) < 2:
            raise c.FrameError("no type")
        mtype = self.types[data[0] % len(self.types)]
        board = self.boards[data[1] % len(self.boards)]
        fields = c.unpack(mtype, bytes(data[2:]))
        self.check_frame(board, mtype, fields)
        # What the link session does next with a frame that passed (link/session.py).
        if mtype == c.SQUARE:
            cell = board.cell(fields[0])
            self.decode_reading(board, cell, fields[1])
        elif mtype == c.SNAPSHOT:
            for index, raw in fields:
                self.decode_reading(board, board.cell(index), raw)
        elif mtype == c.BUTTON:
            board.button(fields[0])

    def failures(self) -> int:
        return sum(n for n, _ in self.other.values())


def run(payloads: int, seed: int = 1) -> int:
    try:
        import atheris
    except ImportError:
        print("error: atheris is not installed: pip install -e '.[fuzz]' (or pip install atheris)",
              file=sys.stderr)
        return 2
    from masume.link import events
    from masume_protocol import codec

    # Coverage of the code under test only: every function of the codec and of the
    # host's checks, instrumented in place (whatever imported them first).
    for module in (codec, events):
        for value in list(vars(module).values()):
            if getattr(value, "__module__", None) != module.__name__:
                continue
            if callable(value) and hasattr(value, "__code__"):
                atheris.instrument_func(value)
            elif isinstance(value, type):
                for member in vars(value).values():
                    if hasattr(member, "__code__"):
                        atheris.instrument_func(member)
    types, boards = _types(), _boards()
    target = Target(types, boards)
    corpus = Path(tempfile.mkdtemp(prefix="masume-fuzz-"))
    for k, data in enumerate(seeds(types, boards)):
        (corpus / f"seed-{k:03d}").write_bytes(data)
    started = time.monotonic()
    print(f"fuzzing {payloads} payloads: codec.unpack + check_frame for {len(types) - 1} "
          f"message types (and an unknown one) on {len(boards)} boards, "
          f"from {len(list(corpus.iterdir()))} valid seeds", flush=True)

    def one(data: bytes) -> None:
        target(data)
        if target.payloads >= payloads:
            _report(target, time.monotonic() - started)
            sys.stdout.flush()
            sys.stderr.flush()
            # libFuzzer never returns to the caller: leave from here, figures printed.
            os._exit(1 if target.failures() else 0)

    atheris.Setup([sys.argv[0], f"-seed={seed}", f"-max_len={MAX_LEN}", "-print_final_stats=0",
                   str(corpus)], one)
    atheris.Fuzz()
    return 0  # not reached


def _report(target: Target, seconds: float) -> None:
    rate = target.payloads / seconds if seconds else 0.0
    print(f"fuzz: {target.payloads} payloads, {target.failures()} non-FrameError exceptions "
          f"({target.frame_errors} FrameError, {target.accepted} accepted), {seconds:.1f} s "
          f"({rate:.0f} payloads/s)")
    for kind, (count, example) in sorted(target.other.items()):
        print(f"  {count} x {kind}: payload {example[:200]}")
