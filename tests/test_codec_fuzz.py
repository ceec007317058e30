"""The decoder never crashes on any input and never yields a frame that was not sent;
every malformed payload of every message type raises FrameError, and so does every
frame that names what the board does not have (the fast part of the codec's
contract: `masume bench fuzz` runs the coverage-guided fuzzer over it)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from masume.boards import load_board
from masume.link.events import check_frame, decode_reading
from masume_protocol import codec as c

message = st.tuples(
    st.sampled_from([c.SQUARE, c.DIE, c.BUTTON, c.LED_FRAME, c.ACK, c.HEARTBEAT]),
    st.integers(0, 2**32 - 1),
    st.binary(max_size=40),
)


def decode_stream(data: bytes, chunk: int = 7) -> list[tuple[int, int, bytes]]:
    deframer = c.Deframer()
    out = []
    for k in range(0, len(data), chunk):
        for raw in deframer.feed(data[k : k + chunk]):
            try:
                out.append(c.decode_frame(raw))
            except c.FrameError:
                pass
    return out


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=4096))
def test_random_bytes_never_decode(noise: bytes) -> None:
    assert decode_stream(noise) == []


@settings(max_examples=300, deadline=None)
@given(st.lists(message, min_size=1, max_size=12), st.data())
def test_mutated_streams_yield_only_sent_frames(sent, data) -> None:
    stream = bytearray(b"".join(c.encode_frame(t, s, p) for t, s, p in sent))
    for _ in range(data.draw(st.integers(0, 6), label="mutations")):
        kind = data.draw(st.sampled_from(["flip", "delete", "insert", "zero"]))
        if not stream:
            break
        at = data.draw(st.integers(0, len(stream) - 1))
        if kind == "flip":
            stream[at] ^= 1 << data.draw(st.integers(0, 7))
        elif kind == "delete":
            del stream[at]
        elif kind == "insert":
            stream[at:at] = data.draw(st.binary(min_size=1, max_size=20))
        else:
            stream[at] = 0
    originals = {(t, s, bytes(p)) for t, s, p in sent}
    for frame in decode_stream(bytes(stream), chunk=data.draw(st.integers(1, 64))):
        assert frame in originals


@settings(max_examples=200, deadline=None)
@given(st.lists(message, max_size=20))
def test_clean_streams_decode_exactly(sent) -> None:
    stream = b"".join(c.encode_frame(t, s, p) for t, s, p in sent)
    assert decode_stream(stream) == [(t, s, bytes(p)) for t, s, p in sent]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(c.NAMES)), st.binary(max_size=300))
def test_payload_decoders_only_raise_frame_errors(mtype: int, payload: bytes) -> None:
    try:
        c.unpack(mtype, payload)
    except c.FrameError:
        pass


# ---- every message type: valid payloads, then damaged ones --------------------------

text = st.text(max_size=40)
u32 = st.integers(0, 2**32 - 1)
reading = st.binary(max_size=c.READING_MAX)
led = st.tuples(st.integers(0, 0xFFFF), st.tuples(*[st.integers(0, 255)] * 3),
                st.integers(0, len(c.PATTERNS) - 1))

#: Per message type, its fields as pack_* takes them, and how to pack them.
PAYLOADS = {
    c.HELLO: st.tuples(u32, u32).map(lambda f: c.pack_hello(*f)),
    c.WELCOME: st.tuples(u32, u32, u32, u32, text, text).map(lambda f: c.pack_welcome(*f)),
    c.SQUARE: st.tuples(st.integers(0, 0xFFFF), reading, u32).map(lambda f: c.pack_square(*f)),
    c.DIE: st.tuples(u32, st.integers(0, 255), u32).map(lambda f: c.pack_die(*f)),
    c.BUTTON: st.tuples(st.integers(0, 255), u32).map(lambda f: c.pack_button(*f)),
    c.SNAPSHOT: st.lists(st.tuples(st.integers(0, 0xFFFF), reading), max_size=20).map(
        c.pack_snapshot),
    c.LED_FRAME: st.lists(led, max_size=20).map(c.pack_leds),
    c.LED_SET: st.lists(led, max_size=20).map(c.pack_leds),
    c.HEARTBEAT: st.tuples(u32, u32, u32, u32).map(lambda f: c.pack_heartbeat(*f)),
    c.ERROR: st.tuples(st.integers(0, 255), text).map(lambda f: c.pack_error(*f)),
    c.SNAPSHOT_REQ: st.just(b""),
    c.ACK: st.just(b""),
}


def test_every_message_type_is_covered() -> None:
    assert set(PAYLOADS) == set(c.NAMES)


@st.composite
def damaged(draw, mtype: int) -> bytes:
    """A valid payload of ``mtype``, then cut, lengthened, bit-flipped or overwritten."""
    payload = bytearray(draw(PAYLOADS[mtype]))
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["cut", "extend", "flip", "set"]))
        if kind == "cut":
            del payload[draw(st.integers(0, len(payload))):]
        elif kind == "extend":
            payload += draw(st.binary(min_size=1, max_size=8))
        elif payload:
            at = draw(st.integers(0, len(payload) - 1))
            payload[at] = (payload[at] ^ (1 << draw(st.integers(0, 7))) if kind == "flip"
                           else draw(st.integers(0, 255)))
    return bytes(payload)


@pytest.mark.parametrize("mtype", sorted(PAYLOADS), ids=lambda t: c.NAMES[t])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_each_message_type_round_trips_and_damage_raises_only_frame_error(mtype: int,
                                                                          data) -> None:
    payload = data.draw(PAYLOADS[mtype], label="valid")
    c.unpack(mtype, payload)  # a valid payload decodes
    try:
        c.unpack(mtype, data.draw(damaged(mtype), label="damaged"))
    except c.FrameError:
        pass


# ---- what the host checks against the board -----------------------------------------


BOARDS = [load_board(name) for name in ("soccer-shogi", "soccer-shogi-reed", "masume-tactics")]


@pytest.mark.parametrize("board", BOARDS, ids=lambda b: b.id)
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_frames_naming_what_the_board_lacks_raise_frame_error(board, data) -> None:
    """check_frame passes what the board has and refuses the rest with FrameError;
    what passes, the session's look-ups take without an exception."""
    index = data.draw(st.integers(0, len(board.cells) + 3), label="cell")
    raw = data.draw(st.binary(max_size=4), label="reading")
    button = data.draw(st.integers(0, 255), label="button")
    face = data.draw(st.integers(0, 255), label="face")
    for mtype, fields in ((c.SQUARE, (index, raw, 0)), (c.SNAPSHOT, [(index, raw)]),
                          (c.BUTTON, (button, 0)), (c.DIE, (1, face, 0))):
        try:
            check_frame(board, mtype, fields)
        except c.FrameError:
            continue
        if mtype in (c.SQUARE, c.SNAPSHOT):
            cell = board.cell(index)
            assert cell.sensor != "none"
            decode_reading(board, cell, raw)
            if cell.sensor == "identity":
                assert all(code in board.pieces.values() for code in raw)
        elif mtype == c.BUTTON:
            board.button(button)
        else:
            assert board.die and 1 <= face <= 6


def test_named_refusals() -> None:
    board = load_board("soccer-shogi")
    for mtype, fields, says in (
        (c.SQUARE, (999, b"", 0), "cell 999"),
        (c.SNAPSHOT, [(0, b""), (5000, b"\x01")], "cell 5000"),
        (c.SQUARE, (board.cell("C5").index, b"\x63", 0), "piece code 99"),
        (c.BUTTON, (77, 0), "button 77"),
        (c.DIE, (1, 4, 0), "no die"),
    ):
        with pytest.raises(c.FrameError, match=says):
            check_frame(board, mtype, fields)


def test_the_fuzz_bench_finds_nothing() -> None:
    """`masume bench fuzz` (atheris, coverage-guided), briefly: its line, and 0."""
    import re
    import subprocess
    import sys

    pytest.importorskip("atheris", reason="the fuzz extra is missing: pip install -e '.[fuzz]'")
    run = subprocess.run([sys.executable, "-m", "masume.cli", "bench", "fuzz",
                          "--payloads", "5000"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr[-2000:]
    assert re.search(r"^fuzz: 5000 payloads, 0 non-FrameError exceptions \(\d+ FrameError, "
                     r"\d+ accepted\), [\d.]+ s", run.stdout, re.M), run.stdout
