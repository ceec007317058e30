# Checks of the codec and the firmware modules that do not touch hardware.
#
# Plain functions with plain asserts, so that the same file runs under CPython
# (tests/test_firmware.py calls each check) and under the real MicroPython VM
# (the same test module runs them all there). Nothing here may use what
# MicroPython lacks: no pytest, no typing, no dataclasses, no f-string "=".

import json

from masume_protocol import codec as c

VECTORS = "vectors.json"  # set by the runner to the file's path


def _vectors():
    with open(VECTORS) as f:
        return json.load(f)


def _unhex(s):
    return bytes(int(s[i:i + 2], 16) for i in range(0, len(s), 2))


def _listify(value):
    if isinstance(value, (tuple, list)):
        return [_listify(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return "".join("%02x" % b for b in value)
    return value


# ---- codec ------------------------------------------------------------------


def check_cobs_vectors():
    for decoded, encoded in _vectors()["cobs"]:
        assert c.cobs_encode(_unhex(decoded)) == _unhex(encoded), decoded[:16]
        assert c.cobs_decode(_unhex(encoded)) == _unhex(decoded), encoded[:16]


def check_crc32_vectors():
    for text, value in _vectors()["crc32"]:
        assert c.crc32(text.encode()) == value, text


def check_message_vectors():
    for m in _vectors()["messages"]:
        frame = _unhex(m["frame"])
        assert frame[-1] == 0 and 0 not in frame[:-1], m["name"]
        mtype, seq, payload = c.decode_frame(frame[:-1])
        assert (mtype, seq) == (m["type"], m["seq"]), m["name"]
        assert _listify(c.unpack(mtype, payload)) == m["fields"], m["name"]


def check_peek_frame_reads_type_and_seq_alone():
    # The header of every message vector, from its first bytes; a frame cut short
    # anywhere in them is None, and past them (or with its CRC damaged) still read.
    for m in _vectors()["messages"]:
        frame = _unhex(m["frame"])[:-1]
        assert c.peek_frame(frame) == (m["type"], m["seq"]), m["name"]
        damaged = bytearray(frame)
        damaged[-1] = damaged[-1] ^ 0x55 or 1
        assert c.peek_frame(bytes(damaged)) == (m["type"], m["seq"]), m["name"]
    for seq in (0, 1, 255, 256, 65536, 0x01000000, 0xFFFFFFFF, 0x00FF00FF):
        frame = c.encode_frame(c.SQUARE, seq, c.pack_square(3, b"", 9))[:-1]
        assert c.peek_frame(frame) == (c.SQUARE, seq), seq
        for cut in range(len(frame)):
            head = c.peek_frame(frame[:cut])
            assert head is None or head == (c.SQUARE, seq), (seq, cut)
    assert c.peek_frame(b"") is None and c.peek_frame(b"\x09\x01") is None


def check_bad_frames_rejected():
    for name, hexed in _vectors()["bad_frames"]:
        try:
            c.decode_frame(_unhex(hexed))
        except c.FrameError:
            continue
        raise AssertionError("accepted a damaged frame: " + name)


def check_bad_payloads_raise_frame_error():
    # The codec's contract: a malformed payload raises FrameError, nothing else.
    for name, mtype, hexed in _vectors()["bad_payloads"]:
        try:
            c.unpack(mtype, _unhex(hexed))
        except c.FrameError:
            continue
        raise AssertionError("accepted a malformed payload: " + name)


def check_deframer_resynchronises_after_noise():
    frames = [c.encode_frame(c.SQUARE, n, c.pack_square(n, b"\x01", n)) for n in range(1, 4)]
    noise = bytes([0x55, 0x13, 0xFF, 0x02])  # no zero: it glues onto the next frame
    stream = noise + frames[0] + noise + frames[1] + b"\x00\x00" + frames[2]
    d = c.Deframer()
    got = []
    for k in range(0, len(stream), 5):  # arrives in pieces
        for raw in d.feed(stream[k:k + 5]):
            try:
                got.append(c.decode_frame(raw)[1])
            except c.FrameError:
                pass
    assert got == [3], got  # 1 and 2 were glued to noise, so rejected; 3 arrived whole
    d = c.Deframer(limit=24)  # longer junk is dropped whole, and memory stays bounded
    assert d.feed(bytes(range(1, 40)) + b"\x00" + frames[0]) == [frames[0][:-1]]
    assert d.dropped == 1


def check_payloads_reject_garbage():
    for mtype in (c.HELLO, c.WELCOME, c.SQUARE, c.DIE, c.BUTTON, c.SNAPSHOT, c.LED_FRAME,
                  c.HEARTBEAT, c.ERROR):
        for payload in (b"", b"\x01", b"\xff" * 7, b"\x05\x00\x09"):
            try:
                c.unpack(mtype, payload)
            except c.FrameError:
                pass


# ---- scanner ----------------------------------------------------------------


def _set(scanner, i, reading):
    from scanner import SLOT

    base = i * SLOT
    scanner.raw[base] = len(reading)
    for k in range(len(reading)):
        scanner.raw[base + 1 + k] = reading[k]


def check_scanner_reports_a_change_once_after_50ms():
    from scanner import Scanner

    s = Scanner(3)
    assert s.update(0) == 0
    _set(s, 1, b"\x01")
    assert s.update(10) == 0
    assert s.update(59) == 0
    assert s.update(60) == 1 and s.changed[1] == 1 and s.reading(1) == b"\x01"
    assert s.update(200) == 0  # reported once


def check_scanner_baseline_is_not_reported():
    from scanner import Scanner

    s = Scanner(2)
    _set(s, 1, b"\x01")
    s.baseline()  # power-up: the pieces already standing are no news
    assert s.update(0) == 0 and s.update(100) == 0 and s.reading(1) == b"\x01"


def check_scanner_ignores_bounces_shorter_than_the_hold():
    from scanner import Scanner

    s = Scanner(2)
    _set(s, 0, b"\x01")
    s.update(0)
    _set(s, 0, b"")
    s.update(20)  # bounced back before 50 ms: nothing to report
    assert s.update(500) == 0
    _set(s, 0, b"\x03\x01")  # identity: ball under a blue player
    s.update(600)
    _set(s, 0, b"\x03")  # the player lifts off at 630: the 50 ms start again
    s.update(630)
    assert s.update(670) == 0
    assert s.update(680) == 1 and s.reading(0) == b"\x03"


# ---- journal ----------------------------------------------------------------


def check_journal_ring_acks_and_overflow():
    from journal import Journal

    j = Journal(capacity=4, frame_max=16)
    for n in range(1, 4):
        assert j.append(bytes([n]) * n) == n
    assert len(j) == 3 and bytes(j.frame(2)) == b"\x02\x02"
    j.ack(1)
    assert j.first == 2 and len(j) == 2
    for n in range(4, 8):
        j.append(bytes([n]))
    assert j.first == 4 and j.dropped == 2 and bytes(j.frame(7)) == b"\x07"
    j.ack(100)  # an ack past the end frees what exists, no more
    assert len(j) == 0 and j.next == 8


# ---- LEDs -------------------------------------------------------------------


def check_leds_frames_patterns_and_brightness():
    from leds import BLINK, PULSE, STEADY, Leds

    leds = Leds([(0,), (2, 1), ()], 3, brightness=128)
    assert leds.apply([(0, (255, 0, 0), STEADY), (1, (0, 255, 0), BLINK)], True) == []
    leds.render(0)
    assert bytes(leds.pixels) == bytes([0, 128, 0, 128, 0, 0, 128, 0, 0])  # GRB, capped
    leds.render(250)  # blink off phase
    assert bytes(leds.pixels[3:6]) == b"\x00\x00\x00"
    assert leds.apply([(9, (1, 1, 1), STEADY)], False) == [9]
    leds.apply([(1, (0, 0, 200), PULSE)], True)  # a whole frame turns cell 0 off
    leds.render(0)
    assert leds.pixels[1] == 0 and leds.animated()
    leds.render(500)
    assert leds.pixels[5] == 200 * 128 // 255


# ---- link -------------------------------------------------------------------


class _Device:
    def __init__(self):
        self.leds = []
        self.broken = []

    def on_leds(self, entries, whole):
        self.leds.append((whole, entries))
        return [e[0] for e in entries if e[0] > 50]

    def readings(self):
        return [(0, b""), (1, b"\x01")]

    def faults(self):
        return self.broken


def _link():
    from journal import Journal
    from link import BoardLink

    sent = []
    link = BoardLink(sent.append, Journal(capacity=8), 77, "t", "test-board", 0xABCD, _Device())
    return link, sent


def _decoded(sent):
    out = []
    for frame in sent:
        out.append(c.decode_frame(bytes(frame)[:-1]))
    del sent[:]
    return out


def _names(decoded):
    return [c.NAMES[m[0]] for m in decoded]


def check_link_handshake_events_acks_and_resend():
    link, sent = _link()
    link.event(c.SQUARE, c.pack_square(3, b"\x01", 0), 0)  # no host yet: journaled only
    assert sent == [] and len(link.journal) == 1
    link.receive(c.encode_frame(c.HELLO, 10, c.pack_hello(0, 0))[:-1], 5)
    got = _decoded(sent)
    assert _names(got) == ["welcome", "heartbeat"]  # another boot's host gets no replay
    fields = c.unpack_welcome(got[0][2])
    assert fields[1:5] == (77, 2, 1, 0xABCD) and fields[6] == "test-board"
    link.receive(c.encode_frame(c.HELLO, 10, c.pack_hello(77, 0))[:-1], 6)
    # Same boot: resend what it lacks, after the board's clock (a heartbeat).
    assert _names(_decoded(sent)) == ["welcome", "heartbeat", "square"]
    link.event(c.DIE, c.pack_die(1, 6, 10), 10)
    assert [m[1] for m in _decoded(sent)] == [2]
    link.poll(200)  # neither resend nor heartbeat is due yet
    assert _decoded(sent) == []
    link.poll(300)
    assert [m[1] for m in _decoded(sent)] == [1, 2]  # no ack for 250 ms: go back
    link.receive(c.encode_frame(c.ACK, 2)[:-1], 310)
    assert len(link.journal) == 0
    link.poll(900)
    assert _decoded(sent) == []
    link.poll(1006)  # a second after the last HELLO's heartbeat
    assert _names(_decoded(sent)) == ["heartbeat"]


def _resent(sent):
    """The seqs of the events among the frames sent (the heartbeats left out)."""
    return [m[1] for m in _decoded(sent) if m[0] in c.EVENTS]


def check_link_resend_backs_off_while_acks_are_late():
    # A host that is alive (its heartbeats come) but slow to ack: the board resends
    # after 250 ms, then 500, 1000, 2000, 2000 ms while no ack frees its journal
    # (the first pass all it holds, the next ones the oldest alone).
    link, sent = _link()
    beat = c.encode_frame(c.HEARTBEAT, 0, c.pack_heartbeat(0, 0, 0, 0))[:-1]
    link.receive(c.encode_frame(c.HELLO, 10, c.pack_hello(77, 0))[:-1], 0)
    _decoded(sent)
    link.poll(5000)  # an idle second or five: a heartbeat, nothing to resend
    link.receive(beat, 5000)
    _decoded(sent)
    link.event(c.SQUARE, c.pack_square(3, b"\x01", 5000), 5000)
    assert [m[1] for m in _decoded(sent)] == [1]
    resent_at = []
    for now in range(5010, 11000, 10):
        if now % 1000 == 0:
            link.receive(beat, now)  # the host is there, its acks are late
        link.poll(now)
        if _resent(sent):
            resent_at.append(now)
    # The first resend waits 250 ms from the event itself, not from an ack long gone.
    assert resent_at == [5250, 5750, 6750, 8750, 10750], resent_at
    link.event(c.BUTTON, c.pack_button(0, 11000), 11000)
    _decoded(sent)
    link.receive(c.encode_frame(c.ACK, 1)[:-1], 11005)  # progress: back to 250 ms
    link.poll(11254)
    assert _resent(sent) == []
    link.poll(11255)
    assert _resent(sent) == [2]
    link.receive(c.encode_frame(c.ACK, 1)[:-1], 11300)  # an ack of nothing new: no reset
    link.poll(11754)
    assert _resent(sent) == []
    link.poll(11755)
    assert _resent(sent) == [2]
    # A new session (HELLO of the same boot) resends at once, and 250 ms after it.
    link.receive(c.encode_frame(c.HELLO, 20, c.pack_hello(77, 1))[:-1], 11800)
    assert _resent(sent) == [2]
    link.poll(12049)
    assert _resent(sent) == []
    link.poll(12050)
    assert _resent(sent) == [2]
    # After the first pass, only the oldest goes again; after progress, all of them.
    link.event(c.BUTTON, c.pack_button(0, 12100), 12100)
    link.event(c.BUTTON, c.pack_button(0, 12200), 12200)
    assert _resent(sent) == [3, 4]
    link.poll(12549)
    assert _resent(sent) == []
    link.poll(12550)
    assert _resent(sent) == [2]  # the oldest alone, while the acks are late
    link.receive(c.encode_frame(c.ACK, 2)[:-1], 12600)
    link.poll(12850)
    assert _resent(sent) == [3, 4]
    link.poll(13350)
    assert _resent(sent) == [3]


def check_link_commands_in_order_once():
    link, sent = _link()
    link.receive(c.encode_frame(c.HELLO, 100, c.pack_hello(0, 0))[:-1], 0)
    _decoded(sent)
    led = c.pack_leds([(4, (1, 2, 3), 1)])
    link.receive(c.encode_frame(c.LED_FRAME, 102, led)[:-1], 1)  # 101 was lost: ignore 102
    assert link.device.leds == [] and [m[1] for m in _decoded(sent)] == [100]
    link.receive(c.encode_frame(c.LED_SET, 101, led)[:-1], 2)
    link.receive(c.encode_frame(c.LED_FRAME, 102, led)[:-1], 3)
    link.receive(c.encode_frame(c.LED_FRAME, 102, led)[:-1], 4)  # a resend: ack, don't redo
    assert [w for w, _ in link.device.leds] == [False, True]
    assert [m[1] for m in _decoded(sent)] == [101, 102, 102]
    link.receive(c.encode_frame(c.SNAPSHOT_REQ, 103)[:-1], 5)
    got = _decoded(sent)
    assert _names(got) == ["snapshot", "ack"]
    assert c.unpack_snapshot(got[0][2]) == [(0, b""), (1, b"\x01")]
    link.receive(c.encode_frame(c.LED_SET, 104, c.pack_leds([(99, (1, 1, 1), 1)]))[:-1], 6)
    got = _decoded(sent)
    assert _names(got) == ["error", "ack"] and c.unpack_error(got[0][2])[0] == c.E_PAYLOAD


def check_link_survives_garbage_and_unknown_messages():
    link, sent = _link()
    link.receive(b"\x05\x01\x02", 0)
    link.receive(b"\xff" * 40, 0)
    assert link.bad_frames == 2 and sent == []
    link.receive(c.encode_frame(0x7E, 1, b"?")[:-1], 1)
    got = _decoded(sent)
    assert _names(got) == ["error"] and c.unpack_error(got[0][2])[0] == c.E_UNKNOWN
    link.receive(c.encode_frame(c.HELLO, 1, b"\x09" * 9)[:-1], 2)  # a future protocol
    assert _names(_decoded(sent)) == ["error", "welcome", "heartbeat"]


def check_link_reports_faulty_sensors_after_every_welcome():
    link, sent = _link()
    text = "cell c3 (index 3): reader 3 (bank 0, channel 3) does not answer: VersionReg 0x00"
    link.device.broken = [text]
    for boot in (0, 77):  # a new host, then the same one again
        link.receive(c.encode_frame(c.HELLO, 10, c.pack_hello(boot, 0))[:-1], 5)
        got = _decoded(sent)
        assert _names(got) == ["welcome", "heartbeat", "error"], _names(got)
        assert c.unpack_error(got[2][2]) == (c.E_SENSOR, text)


# ---- the board (app.Board) with hardware faked in memory ---------------------

DEFINITION = {
    "format": 1, "id": "check", "controller": "none", "pins": {}, "die": True, "led_count": 4,
    "matrix": [1, 4],
    "cells": [["A1", "presence", [0], [0, 0]], ["A2", "presence", [1], [0, 1]],
              ["B1", "identity", [2], [0, 2]], ["turn", "none", [3], []]],
    "buttons": [["roll", 1], ["takeback", 2]],
}


class FakeHardware:
    """Pins and strip in memory; preallocated, so polling it allocates nothing."""

    def __init__(self, slots):
        self.now = 0
        self.fault_version = 0
        self.fault_texts = []
        self.state = bytearray(slots)
        self.bits = 0
        self.out = []
        self.shown = 0

    def ticks_ms(self):
        return self.now

    def random_u32(self):
        return 1234

    def sample(self, raw):
        state = self.state
        for k in range(len(state)):
            raw[k] = state[k]

    def buttons(self):
        return self.bits

    def die_value(self):
        return 4

    def serial_read(self, buf):
        return 0

    def serial_write(self, data):
        self.out.append(bytes(data))

    def serial_flush(self):
        pass

    def show(self, leds, now):
        leds.render(now)
        self.shown += 1

    def feed_watchdog(self):
        pass

    def faults(self):
        return self.fault_texts


def _board():
    import app
    from scanner import SLOT

    hw = FakeHardware(3 * SLOT)
    board = app.Board(hw, DEFINITION, 0x1234)
    return board, hw


def _events(hw):
    """Events sent, each once: nothing acks here, so the board also resends them."""
    out = []
    for frame in hw.out:
        mtype, seq, payload = c.decode_frame(frame[:-1])
        if mtype in c.EVENTS and seq > len(out):
            out.append((c.NAMES[mtype], seq, _listify(c.unpack(mtype, payload))))
    del hw.out[:]
    return out


def check_board_reports_squares_buttons_and_die():
    from scanner import SLOT

    board, hw = _board()
    board.link.receive(c.encode_frame(c.HELLO, 0, c.pack_hello(0, 0))[:-1], 0)
    hw.state[2 * SLOT] = 2
    hw.state[2 * SLOT + 1] = 3
    hw.state[2 * SLOT + 2] = 1
    for t in range(0, 100, 10):
        hw.now = t
        board.poll()
    hw.bits = 0b01  # the roll button
    for t in range(100, 200, 10):
        hw.now = t
        board.poll()
    hw.bits = 0
    for t in range(200, 300, 10):
        hw.now = t
        board.poll()
    hw.bits = 0b10
    for t in range(300, 400, 10):
        hw.now = t
        board.poll()
    # Each event carries the board's time: when the debounce (50 ms) or the
    # button's hold (30 ms) ended.
    assert _events(hw) == [("square", 1, [2, "0301", 50]), ("die", 2, [1, 4, 130]),
                           ("button", 3, [1, 330])]


def check_board_reports_a_sensor_that_fails_while_it_runs():
    board, hw = _board()
    board.link.receive(c.encode_frame(c.HELLO, 0, c.pack_hello(0, 0))[:-1], 0)
    del hw.out[:]
    hw.now = 10
    board.poll()
    hw.fault_texts = ["cell B1 (index 2): a tag answers with CRC errors (3 tries)"]
    hw.fault_version += 1
    hw.now = 20
    board.poll()
    errors = [c.unpack_error(c.decode_frame(f[:-1])[2]) for f in hw.out
              if c.decode_frame(f[:-1])[0] == c.ERROR]
    assert errors == [(c.E_SENSOR, hw.fault_texts[0])], errors
    hw.now = 30
    board.poll()  # said once
    assert len([f for f in hw.out if c.decode_frame(f[:-1])[0] == c.ERROR]) == 1


def check_scan_loop_allocates_nothing():
    from leds import BLINK

    board, hw = _board()
    board.leds.apply([(0, (9, 9, 9), BLINK)], True)
    hw.now = 5
    for _ in range(3):
        board.poll()  # warm up: first heartbeat and first render are done
    shown = hw.shown
    import micropython  # on CPython, tests/micropython.py: the same passes, no heap check

    micropython.heap_lock()
    try:
        for k in range(200):
            hw.now = 10 + k % 100  # time moves, LEDs animate, no timer falls due
            board.poll()
    finally:
        micropython.heap_unlock()
    assert hw.shown == shown + 200  # the blinking LED was rendered on every pass


CHECKS = [name for name in sorted(globals()) if name.startswith("check_")]


def run_all():
    """Run every check; print PASS/FAIL lines (the MicroPython side of the tests)."""
    for name in CHECKS:
        try:
            globals()[name]()
            print("PASS " + name)
        except Exception as exc:  # report and go on to the next check
            print("FAIL " + name + ": " + type(exc).__name__ + " " + str(exc))
