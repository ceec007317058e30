"""The board link over MQTT (club mode): the real firmware on the MicroPython VM
talking to a Mosquitto the test starts, the host's BoardSession on an
MqttTransport. Nothing lost, nothing doubled, across broker restarts, Wi-Fi cuts
and reboots; garbage on the broker is ignored."""

from __future__ import annotations

import time

import pytest

from masume.link import BoardSession, Led
from masume.link.mqtt import BrokerUrl, MqttHub, new_client, topic
from waiting import HANG_S, connected, until

pytestmark = pytest.mark.slow


@pytest.fixture
def hub(broker):
    h = MqttHub(broker.url, "club-test").start()
    yield h
    h.close()


def collect(session, want: int) -> list:
    """Square events until ``want`` have come (snapshots skipped); waits on the events
    (waiting.HANG_S guards against a hang)."""
    out = []
    deadline = time.monotonic() + HANG_S
    while len(out) < want:
        assert time.monotonic() < deadline, f"only {len(out)} of {want} events: {out}"
        for event in session.events(timeout=0.2):
            if event.type == "square":
                out.append(event)
            if len(out) >= want:
                break
    return out


def wait_for(predicate, what: str = "the condition") -> bool:
    until(predicate, what)
    return True


def test_broker_url_parsing():
    url = BrokerUrl.parse("mqtts://srv%40club:p%3Ass@broker.example:9999?ca=/etc/ca.pem")
    assert (url.host, url.port, url.username, url.password, url.tls, url.ca) == (
        "broker.example", 9999, "srv@club", "p:ss", True, "/etc/ca.pem")
    assert BrokerUrl.parse("mqtt://localhost").port == 1883
    with pytest.raises(ValueError):
        BrokerUrl.parse("http://localhost")


def test_events_and_leds_over_mqtt_through_a_broker_restart(broker, hub, make_sim):
    sim = make_sim(mqtt=broker.url, unit="table-1")
    session = BoardSession(hub.transport("table-1"), expect="soccer-shogi").start()
    try:
        assert connected(session)
        assert hub.status["table-1"] == "online"
        session.set_leds({"C5": Led((255, 0, 0), "blink")})
        assert wait_for(lambda: sim.led_colours.get("C5") == (255, 0, 0))
        squares = ["A1", "B1", "C1", "D1", "E1", "A2", "B2", "C2"]
        for sq in squares[:3]:
            sim.place(sq, "ball")
            time.sleep(0.1)
        broker.restart(down_for=1.0)  # the broker goes away mid-game
        for sq in squares[3:]:
            sim.place(sq, "ball")  # journalled on the board while nobody listens
            time.sleep(0.1)
        events = collect(session, len(squares))
        assert [e.square for e in events] == squares  # all of them, in order, once
        assert [e.seq for e in events] == list(range(events[0].seq, events[0].seq + len(squares)))
        assert session.stats.connects >= 2
        # After the restart the board shows the host's picture again.
        session.set_leds({"A1": Led((0, 0, 255))})
        assert wait_for(lambda: sim.led_colours == {"A1": (0, 0, 255)})
    finally:
        session.close()


@pytest.mark.parametrize("cut_s", [2.0])
def test_wifi_cut_last_will_and_journal(broker, hub, make_sim, cut_s):
    """The board's link is cut (a minute in `masume bench club --cut 60`; shorter here):
    the broker publishes its last will, the board journals, and after the cut every
    event arrives once and in order."""
    sim = make_sim(mqtt=broker.url, unit="table-2")
    session = BoardSession(hub.transport("table-2")).start()
    try:
        assert connected(session)
        sim.place("A3", "ball")
        assert [e.square for e in collect(session, 1)] == ["A3"]
        sim.unplug()  # Wi-Fi gone
        assert wait_for(lambda: hub.status.get("table-2") == "offline")
        assert wait_for(lambda: not session.connected.is_set())
        for sq in ("B3", "C3", "D3"):
            sim.place(sq, "ball")
            time.sleep(0.1)
        time.sleep(cut_s)
        sim.replug()
        events = collect(session, 3)
        assert [e.square for e in events] == ["B3", "C3", "D3"]
        assert hub.status["table-2"] == "online"
    finally:
        session.close()


def test_reboot_over_mqtt_resynchronises(broker, hub, make_sim):
    sim = make_sim(mqtt=broker.url, unit="table-3")
    session = BoardSession(hub.transport("table-3")).start()
    try:
        assert connected(session)
        sim.place("E5", "ball")
        collect(session, 1)
        sim.reboot()
        sim.place("E6", "ball")  # placed on the fresh boot: a square event or a snapshot
        # E6 may first come from the old boot (its last pass) as a square event; the
        # fresh boot's snapshot follows and must hold it too.
        assert wait_for(lambda: session.stats.snapshots >= 2
                        and session.readings.get("E6") == ("ball",), "the resync after the reboot")
    finally:
        session.close()


def test_garbage_on_the_broker_is_ignored(broker, hub, make_sim):
    sim = make_sim(mqtt=broker.url, unit="table-4")
    session = BoardSession(hub.transport("table-4")).start()
    rogue = new_client("rogue")
    rogue.connect("127.0.0.1", broker.port)
    rogue.loop_start()
    try:
        assert connected(session)
        for t, payload in [
            (topic("table-4", "events"), b"\x00\x00garbage"),
            (topic("table-4", "events"), bytes(range(1, 200))),
            (topic("table-4", "events"), b""),
            (topic("table-4", "status"), "\u00e9t\u00e9".encode() * 100),
            ("masume/table-4/extra/deep", b"x"),
            ("masume/bad id!/status", b"online"),
            ("masume/nobody/events", b"\x01\x02"),
        ]:
            rogue.publish(t, payload, qos=1).wait_for_publish(2)
        sim.place("A4", "ball")
        assert [e.square for e in collect(session, 1)] == ["A4"]
        assert session.stats.bad_frames >= 1
        assert hub.malformed >= 1
        assert "bad id!" not in hub.status and hub.status["table-4"] == "online"
    finally:
        rogue.loop_stop()
        rogue.disconnect()
        session.close()


def test_a_version_1_board_is_still_read(broker, hub):
    """Protocol 2 added the board's time to events; a board still on protocol 1
    (its events without it) is taken, and its events are timed on arrival."""
    import struct

    from masume.boards import load_board
    from masume_protocol import codec as c

    board = load_board("soccer-shogi")
    unit = "old-1"
    frames: list[bytes] = []

    def v1_square(seq: int, square: str, pieces: tuple[str, ...]) -> bytes:
        reading = bytes(board.pieces[p] for p in pieces)
        payload = struct.pack("<HB", board.cell(square).index, len(reading)) + reading
        return c.encode_frame(c.SQUARE, seq, payload)[:-1]

    def v1_welcome() -> bytes:
        def text(s: str) -> bytes:
            return bytes((len(s),)) + s.encode()
        payload = struct.pack("<BIIII", 1, 4242, 1, 1, board.hash) + text("0.0.9") + text(board.id)
        return c.encode_frame(c.WELCOME, 0, payload)[:-1]

    old = new_client("old-board")

    def on_message(client, userdata, message):
        mtype = c.decode_frame(bytes(message.payload))[0]
        frames.append(bytes(message.payload))
        if mtype == c.HELLO:
            client.publish(topic(unit, "events"), v1_welcome(), qos=1)

    old.on_message = on_message
    old.will_set(topic(unit, "status"), b"offline", qos=1, retain=True)
    old.connect("127.0.0.1", broker.port)
    old.loop_start()
    session = None
    try:
        old.subscribe(topic(unit, "commands"), 1)
        old.publish(topic(unit, "status"), b"online", qos=1, retain=True).wait_for_publish(2)
        session = BoardSession(hub.transport(unit), expect="soccer-shogi").start()
        assert connected(session)
        assert session.board_version == 1
        for seq, (square, pieces) in enumerate([("C5", ("ball",)), ("A1", ("blue",))], start=1):
            old.publish(topic(unit, "events"), v1_square(seq, square, pieces), qos=1)
        events = collect(session, 2)
        assert [(e.square, e.reading, e.ms, e.at) for e in events] == [
            ("C5", ("ball",), None, None), ("A1", ("blue",), None, None)]
        assert wait_for(lambda: session.ack == 2)  # acknowledged once taken
    finally:
        if session:
            session.close()
        old.loop_stop()
        old.disconnect()
