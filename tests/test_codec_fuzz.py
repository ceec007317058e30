"""The decoder never crashes on any input and never yields a frame that was not sent."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

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
