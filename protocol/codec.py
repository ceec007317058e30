# The masume wire codec: framing, integrity and messages (protocol/SPEC.md).
#
# One source for both ends: the host imports it as masume_protocol.codec and the
# firmware gets this file copied to /lib/masume_protocol/ at deploy time. So it
# uses only what MicroPython has: struct, binascii.crc32, no dataclasses; its type
# annotations name builtins only (MicroPython parses them and ignores them).

import struct
from binascii import crc32 as _crc32

try:  # for the type checker: MicroPython has no typing module (annotations are not run there)
    from typing import Any
except ImportError:
    pass

PROTOCOL_VERSION = 2
# The oldest version a host still takes a board of: version 1 events carry no
# board time (the payloads below tell the two apart by their length).
OLDEST_VERSION = 1
MAX_FRAME = 2048  # largest decoded frame (type + seq + payload + crc), bytes

# Message types. Board -> host events carry the board's event sequence number;
# host -> board commands carry the host's command sequence number.
HELLO = 0x01  # host -> board: start or resume a session
WELCOME = 0x02  # board -> host: who I am, where my journal stands
SQUARE = 0x10  # event: a cell's debounced reading changed
DIE = 0x11  # event: the die was rolled
BUTTON = 0x12  # event: a button was pressed
SNAPSHOT_REQ = 0x20  # host -> board: send every reading
SNAPSHOT = 0x21  # board -> host: every reading, as of event seq N
LED_FRAME = 0x30  # host -> board: the whole LED picture (cells not listed: off)
LED_SET = 0x31  # host -> board: change only the cells listed
HEARTBEAT = 0x40  # both ways, every second
ACK = 0x41  # cumulative: every seq up to and including N is done with (host: saved)
ERROR = 0x42  # board -> host: a command was refused, with a reason

EVENTS = (SQUARE, DIE, BUTTON)
COMMANDS = (SNAPSHOT_REQ, LED_FRAME, LED_SET)
NAMES = {
    HELLO: "hello", WELCOME: "welcome", SQUARE: "square", DIE: "die", BUTTON: "button",
    SNAPSHOT_REQ: "snapshot_req", SNAPSHOT: "snapshot", LED_FRAME: "led_frame",
    LED_SET: "led_set", HEARTBEAT: "heartbeat", ACK: "ack", ERROR: "error",
}

# LED patterns
OFF = 0
STEADY = 1
BLINK = 2  # 2 Hz on/off
PULSE = 3  # 1 Hz breathing
PATTERNS = ("off", "steady", "blink", "pulse")

# ERROR codes
E_VERSION = 1  # protocol version not supported
E_UNKNOWN = 2  # unknown message type
E_PAYLOAD = 3  # payload malformed or out of range (e.g. no such cell)
E_SENSOR = 4  # a sensor is faulty; the text names the cell (sent after every WELCOME)

READING_MAX = 10  # longest reading: a 10-byte NFC UID
TICKS_MASK = 0x3FFFFFFF  # board times are ticks_ms, which wraps at 2**30 on MicroPython


class FrameError(ValueError):
    pass


def crc32(data: bytes) -> int:
    return _crc32(data) & 0xFFFFFFFF


# COBS (Consistent Overhead Byte Stuffing): the encoded frame has no zero byte,
# so a zero ends every frame and a receiver resynchronises at the next zero.


def cobs_encode(data: bytes) -> bytes:
    n = len(data)
    out = bytearray(n + 1 + n // 254)  # the most COBS can add: a code byte per 254
    code_at = 0
    k = 1
    code = 1
    for i in range(n):
        b = data[i]
        if b == 0:
            out[code_at] = code
            code_at = k
            k += 1
            code = 1
        else:
            out[k] = b
            k += 1
            code += 1
            # A full block of 254 data bytes ends here; open the next one only
            # if more data follows (the reference encoding has no empty tail block).
            if code == 0xFF and i != n - 1:
                out[code_at] = code
                code_at = k
                k += 1
                code = 1
    out[code_at] = code
    return bytes(out[:k])


def cobs_decode(data: bytes) -> bytes:
    if 0 in data:
        raise FrameError("zero byte inside a COBS frame")
    out = bytearray()
    i = 0
    n = len(data)
    while i < n:
        code = data[i]
        end = i + code
        if end > n:
            raise FrameError("COBS block runs past the end")
        out.extend(data[i + 1:end])
        i = end
        if code < 0xFF and i < n:
            out.append(0)
    return bytes(out)


def encode_frame(mtype: int, seq: int, payload: bytes = b"") -> bytes:
    """The bytes to send: COBS(type, seq, payload, crc32) followed by a zero."""
    body = struct.pack("<BI", mtype, seq) + payload
    body += struct.pack("<I", crc32(body))
    if len(body) > MAX_FRAME:
        raise FrameError("frame too long")
    return cobs_encode(body) + b"\x00"


def peek_frame(raw: bytes) -> "tuple[int, int] | None":
    """(type, seq) of a frame without its zero, from its first bytes alone: not
    checked (no CRC), nothing past them decoded; None when they are not there.
    For a receiver to drop what it has already (a resent event: an old seq) before
    it decodes the whole frame; anything it keeps goes through decode_frame."""
    head = bytearray()
    i = 0
    n = len(raw)
    while len(head) < 5:
        if i >= n:
            return None
        code = raw[i]
        end = i + code
        if code == 0 or end > n:
            return None
        head.extend(raw[i + 1:min(end, i + 6)])
        i = end
        if code < 0xFF and i < n:
            head.append(0)
    return head[0], int.from_bytes(bytes(head[1:5]), "little")


def decode_frame(raw: bytes) -> tuple[int, int, bytes]:
    """(type, seq, payload) from one frame without its zero; FrameError if damaged."""
    body = cobs_decode(raw)
    if len(body) < 9:
        raise FrameError("frame too short")
    if len(body) > MAX_FRAME:
        raise FrameError("frame too long")
    (check,) = struct.unpack("<I", body[-4:])
    if crc32(body[:-4]) != check:
        raise FrameError("CRC mismatch")
    mtype, seq = struct.unpack("<BI", body[:5])
    return mtype, seq, body[5:-4]


class Deframer:
    """Splits a byte stream into frames at zero bytes, whatever noise comes between.

    feed() returns the complete raw frames (zeros stripped). Anything longer than a
    frame can be is dropped up to the next zero, so noise never grows memory.
    """

    def __init__(self, limit: int = 2 * MAX_FRAME) -> None:
        self.buf = bytearray(limit)
        self.n = 0
        self.limit = limit
        self.overflow = False
        self.dropped = 0  # frames dropped as too long

    def feed(self, data: bytes | bytearray | memoryview) -> list[bytes]:
        frames = []
        buf = self.buf
        for b in data:
            if b == 0:
                if self.overflow:
                    self.dropped += 1
                elif self.n:
                    frames.append(bytes(buf[:self.n]))
                self.n = 0
                self.overflow = False
            elif self.n < self.limit:
                buf[self.n] = b
                self.n += 1
            else:
                self.overflow = True
        return frames


# Payloads. Strings are a length byte then UTF-8; readings a length byte then bytes.


def _pack_str(s: str) -> bytes:
    b = s.encode()[:255]
    return bytes((len(b),)) + b


def _unpack_str(p: bytes, i: int) -> tuple[str, int]:
    if i >= len(p):
        raise FrameError("string missing")
    n = p[i]
    if i + 1 + n > len(p):
        raise FrameError("string runs past the payload")
    try:
        return bytes(p[i + 1:i + 1 + n]).decode(), i + 1 + n
    except UnicodeError:
        raise FrameError("string is not UTF-8")


def pack_hello(boot: int, ack: int) -> bytes:
    """boot: the board boot id the host last saw (0: none); ack: last event seq it has."""
    return struct.pack("<BII", PROTOCOL_VERSION, boot, ack)


def unpack_hello(p: bytes) -> tuple[int, int, int]:
    if len(p) != 9:
        raise FrameError("hello: bad length")
    return struct.unpack("<BII", p)  # version, boot, ack


def pack_welcome(boot: int, next_seq: int, first_seq: int, board_hash: int, firmware: str,
                 board_id: str) -> bytes:
    return (struct.pack("<BIIII", PROTOCOL_VERSION, boot, next_seq, first_seq, board_hash)
            + _pack_str(firmware) + _pack_str(board_id))


def unpack_welcome(p: bytes) -> tuple[int, int, int, int, int, str, str]:
    if len(p) < 19:
        raise FrameError("welcome: too short")
    version, boot, next_seq, first_seq, board_hash = struct.unpack("<BIIII", p[:17])
    firmware, i = _unpack_str(p, 17)
    board_id, i = _unpack_str(p, i)
    return version, boot, next_seq, first_seq, board_hash, firmware, board_id


def pack_square(cell: int, reading: bytes, ms: int) -> bytes:
    """ms: the board's time of the event (ticks_ms; kept modulo 2**30)."""
    if len(reading) > READING_MAX:
        raise FrameError("reading too long")
    return (struct.pack("<HB", cell, len(reading)) + bytes(reading)
            + struct.pack("<I", ms & TICKS_MASK))


def _reading_only(cell: int, reading: bytes) -> bytes:
    # A snapshot's entries: a cell and its reading, no time (the snapshot's own
    # moment is its answer to the request).
    if len(reading) > READING_MAX:
        raise FrameError("reading too long")
    return struct.pack("<HB", cell, len(reading)) + bytes(reading)


def _ms(p: bytes, at: int) -> int | None:
    # Version 2 events end with the board's time; version 1 events stop before it.
    if len(p) == at:
        return None
    if len(p) != at + 4:
        raise FrameError("event: bad length")
    ms: int = struct.unpack("<I", p[at:at + 4])[0]
    return ms & TICKS_MASK


def unpack_square(p: bytes) -> tuple[int, bytes, int | None]:
    """(cell, reading, ms); ms is None for a version 1 board."""
    if len(p) < 3:
        raise FrameError("square: bad length")
    end = 3 + p[2]
    if p[2] > READING_MAX or len(p) not in (end, end + 4):
        raise FrameError("square: bad length")
    (cell,) = struct.unpack("<H", p[:2])
    return cell, bytes(p[3:end]), _ms(p, end)


def pack_die(roll_id: int, value: int, ms: int) -> bytes:
    return struct.pack("<IBI", roll_id, value, ms & TICKS_MASK)


def unpack_die(p: bytes) -> tuple[int, int, int | None]:
    """(roll_id, value, ms); ms is None for a version 1 board."""
    if len(p) not in (5, 9):
        raise FrameError("die: bad length")
    roll_id, value = struct.unpack("<IB", p[:5])
    return roll_id, value, _ms(p, 5)


def pack_button(button: int, ms: int) -> bytes:
    return struct.pack("<BI", button, ms & TICKS_MASK)


def unpack_button(p: bytes) -> tuple[int, int | None]:
    """(button, ms); ms is None for a version 1 board."""
    if len(p) not in (1, 5):
        raise FrameError("button: bad length")
    return p[0], _ms(p, 1)


def pack_snapshot(readings: list[tuple[int, bytes]]) -> bytes:
    """readings: list of (cell, reading bytes)."""
    parts = [struct.pack("<H", len(readings))]
    for cell, reading in readings:
        parts.append(_reading_only(cell, reading))
    return b"".join(parts)


def unpack_snapshot(p: bytes) -> list[tuple[int, bytes]]:
    if len(p) < 2:
        raise FrameError("snapshot: too short")
    (count,) = struct.unpack("<H", p[:2])
    out = []
    i = 2
    for _ in range(count):
        if i + 3 > len(p):
            raise FrameError("snapshot: truncated")
        (cell,) = struct.unpack("<H", p[i:i + 2])
        n = p[i + 2]
        if n > READING_MAX:
            raise FrameError("snapshot: reading too long")
        if i + 3 + n > len(p):
            raise FrameError("snapshot: truncated")
        out.append((cell, bytes(p[i + 3:i + 3 + n])))
        i += 3 + n
    if i != len(p):
        raise FrameError("snapshot: trailing bytes")
    return out


def pack_leds(entries: list[tuple[int, tuple[int, int, int], int]]) -> bytes:
    """entries: list of (cell, (r, g, b), pattern) for LED_FRAME and LED_SET."""
    parts = [struct.pack("<H", len(entries))]
    for cell, rgb, pattern in entries:
        parts.append(struct.pack("<HBBBB", cell, rgb[0], rgb[1], rgb[2], pattern))
    return b"".join(parts)


def unpack_leds(p: bytes) -> list[tuple[int, tuple[int, int, int], int]]:
    if len(p) < 2:
        raise FrameError("leds: too short")
    (count,) = struct.unpack("<H", p[:2])
    if len(p) != 2 + 6 * count:
        raise FrameError("leds: bad length")
    out = []
    for k in range(count):
        cell, r, g, b, pattern = struct.unpack("<HBBBB", p[2 + 6 * k:8 + 6 * k])
        if pattern >= len(PATTERNS):
            raise FrameError("leds: unknown pattern %d" % pattern)
        out.append((cell, (r, g, b), pattern))
    return out


def pack_heartbeat(next_seq: int, first_seq: int, uptime_ms: int, boot: int) -> bytes:
    return struct.pack("<IIII", next_seq, first_seq, uptime_ms & 0xFFFFFFFF, boot)


def unpack_heartbeat(p: bytes) -> tuple[int, int, int, int]:
    if len(p) != 16:
        raise FrameError("heartbeat: bad length")
    return struct.unpack("<IIII", p)  # next_seq, first_seq, uptime_ms, boot


def pack_error(code: int, text: str) -> bytes:
    return bytes((code,)) + _pack_str(text)


def unpack_error(p: bytes) -> tuple[int, str]:
    if len(p) < 2:
        raise FrameError("error: too short")
    text, _ = _unpack_str(p, 1)
    return p[0], text


UNPACK = {
    HELLO: unpack_hello, WELCOME: unpack_welcome, SQUARE: unpack_square, DIE: unpack_die,
    BUTTON: unpack_button, SNAPSHOT: unpack_snapshot, LED_FRAME: unpack_leds,
    LED_SET: unpack_leds, HEARTBEAT: unpack_heartbeat, ERROR: unpack_error,
}


def unpack(mtype: int, payload: bytes) -> Any:
    """The payload's fields (a tuple or value per type); FrameError if malformed."""
    f = UNPACK.get(mtype)
    if f is None:
        if payload:
            raise FrameError("%s: expected no payload" % NAMES.get(mtype, mtype))
        return None
    return f(payload)
