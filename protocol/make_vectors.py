"""Regenerate the message part of protocol/vectors.json from the field lists below.

    python protocol/make_vectors.py

The COBS and CRC-32 vectors in the file are published reference values (the
COBS examples of Cheshire and Baker's paper as listed on Wikipedia, and the
CRC-32 check value of "123456789") and are kept as they are. Run this only when
the protocol changes on purpose, and bump PROTOCOL_VERSION with it.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import codec as c

# name, type, seq, fields as the codec's unpack() returns them (JSON-friendly)
MESSAGES = [
    ("hello from a fresh host", c.HELLO, 1, [c.PROTOCOL_VERSION, 0, 0]),
    ("hello resuming after event 41", c.HELLO, 7, [c.PROTOCOL_VERSION, 0x5EED1234, 41]),
    ("welcome", c.WELCOME, 0,
     [c.PROTOCOL_VERSION, 0x5EED1234, 42, 10, 0x935414F6, "0.1.0", "soccer-shogi"]),
    ("square occupied (presence)", c.SQUARE, 42, [17, "01", 61250]),
    ("square emptied", c.SQUARE, 43, [17, "", 61930]),
    ("square identity stack ball+blue", c.SQUARE, 44, [22, "0301", 62815]),
    ("card zone tag", c.SQUARE, 45, [3, "04a1b2c3d4e5f6", 0x3FFFFFFF]),
    ("die roll", c.DIE, 46, [9, 6, 64002]),
    ("button", c.BUTTON, 47, [2, 65110]),
    # Version 1 boards' events, without the board's time: still read by a host.
    ("version 1 square", c.SQUARE, 42, [17, "01", None]),
    ("version 1 die roll", c.DIE, 46, [9, 6, None]),
    ("version 1 button", c.BUTTON, 47, [2, None]),
    ("snapshot", c.SNAPSHOT, 47, [[0, ""], [1, "01"], [22, "0301"]]),
    ("snapshot request", c.SNAPSHOT_REQ, 3, None),
    ("led frame", c.LED_FRAME, 4, [[12, [0, 255, 0], c.STEADY], [13, [255, 0, 0], c.BLINK]]),
    ("led set, pulse", c.LED_SET, 5, [[40, [0, 0, 255], c.PULSE]]),
    ("empty led frame (all off)", c.LED_FRAME, 6, []),
    ("heartbeat", c.HEARTBEAT, 0, [48, 10, 123456, 0x5EED1234]),
    ("ack", c.ACK, 47, None),
    ("error", c.ERROR, 0, [c.E_PAYLOAD, "no cell 999"]),
]


def pack(mtype, f):
    if mtype == c.HELLO:
        return c.pack_hello(f[1], f[2])
    if mtype == c.WELCOME:
        return c.pack_welcome(*f[1:])
    if mtype in c.EVENTS:
        ms = f[-1] if f[-1] is not None else 0
        if mtype == c.SQUARE:
            payload = c.pack_square(f[0], bytes.fromhex(f[1]), ms)
        elif mtype == c.DIE:
            payload = c.pack_die(f[0], f[1], ms)
        else:
            payload = c.pack_button(f[0], ms)
        # Version 1: the same payload without the board's time at its end.
        return payload if f[-1] is not None else payload[:-4]
    if mtype == c.SNAPSHOT:
        return c.pack_snapshot([(cell, bytes.fromhex(r)) for cell, r in f])
    if mtype in (c.LED_FRAME, c.LED_SET):
        return c.pack_leds([(cell, tuple(rgb), pat) for cell, rgb, pat in f])
    if mtype == c.HEARTBEAT:
        return c.pack_heartbeat(*f)
    if mtype == c.ERROR:
        return c.pack_error(*f)
    return b""


def main():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vectors.json")
    with open(path) as fh:
        data = json.load(fh)
    data["messages"] = [
        {"name": name, "type": mtype, "seq": seq, "fields": fields,
         "frame": c.encode_frame(mtype, seq, pack(mtype, fields)).hex()}
        for name, mtype, seq, fields in MESSAGES
    ]
    # Damaged copies of a real frame: each must be rejected, none may decode.
    good = c.cobs_decode(bytes.fromhex(data["messages"][3]["frame"])[:-1])
    flipped = bytearray(good)
    flipped[6] ^= 0x01
    data["bad_frames"] = [
        ["payload bit flipped", c.cobs_encode(bytes(flipped)).hex()],
        ["crc bit flipped", c.cobs_encode(good[:-1] + bytes((good[-1] ^ 0x80,))).hex()],
        ["last byte lost", c.cobs_encode(good[:-1]).hex()],
        ["two frames run together", c.cobs_encode(good + good).hex()],
        ["zero byte inside", "0200ff"],
        ["block past the end", "05112233"],
        ["shorter than a header", "0511223344"],
    ]
    # Intact frames whose payload is malformed: each must raise FrameError, on
    # every end (the codec's contract: nothing else may come out of unpack).
    welcome = pack(c.WELCOME, MESSAGES[2][3])
    firmware_end = 17 + 1 + len("0.1.0")  # where the board id's length byte stands
    data["bad_payloads"] = [
        ["hello too short", c.HELLO, c.pack_hello(1, 2)[:-1].hex()],
        ["welcome: board id length byte missing", c.WELCOME, welcome[:firmware_end].hex()],
        ["welcome: board id runs past the end", c.WELCOME, welcome[:-2].hex()],
        ["welcome: firmware not UTF-8", c.WELCOME,
         (welcome[:17] + bytes((2, 0xC3, 0x28, 1)) + b"x").hex()],
        ["square: reading runs past the end", c.SQUARE, "110005010203"],
        ["square: reading too long", c.SQUARE, "11000b" + "01" * 11],
        ["square: time cut short", c.SQUARE, "110001010203"],
        ["die: bad length", c.DIE, "0900000006ff"],
        ["button: bad length", c.BUTTON, "0201"],
        ["snapshot: fewer entries than counted", c.SNAPSHOT, "03000000001100"],
        ["snapshot: reading too long", c.SNAPSHOT, "010011000b" + "01" * 11],
        ["snapshot: trailing bytes", c.SNAPSHOT, "0000ff"],
        ["led frame: bad length", c.LED_FRAME, "02000c0000ff0001"],
        ["led frame: unknown pattern", c.LED_FRAME, "01000c0000ff0009"],
        ["heartbeat: bad length", c.HEARTBEAT, "30000000"],
        ["error: too short", c.ERROR, "03"],
        ["error: text runs past the end", c.ERROR, "0305616263"],
        ["ack with a payload", c.ACK, "00"],
    ]
    with open(path, "w") as fh:
        json.dump(data, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
