"""The board link under faults, with the real firmware on the MicroPython VM, a real
pseudo-terminal and a real Mosquitto: frames that pass their CRC but name what the
board does not have, an exception inside the link's thread, a consumer that stops
reading. The link's thread never dies, every fault is counted and said, and no
event the board made is lost."""

from __future__ import annotations

import logging
import time

import pytest

from masume.link import BoardEvent, BoardSession
from masume.link import session as session_module
from masume.link.mqtt import MqttHub, new_client, topic
from masume_protocol import codec as c
from waiting import HANG_S, take, until

pytestmark = pytest.mark.slow


def connected(session: BoardSession) -> int:
    """Wait for the link and its first snapshot; the seq the stream stands at."""
    assert session.wait_connected(HANG_S)
    for event in session.events(timeout=HANG_S):
        if event.type == "snapshot":
            return event.seq
    raise AssertionError("no snapshot after connecting")


def test_frames_naming_what_the_board_lacks_are_bad_frames_and_the_stream_goes_on(
        make_sim, connect, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="masume.link")
    sim = make_sim()
    session = connect(sim.port, name="table-3")
    seq = connected(session)
    board = sim.board
    c5 = board.cell("C5").index

    def frame(mtype: int, at: int, payload: bytes) -> bytes:
        return b"\x00" + c.encode_frame(mtype, at, payload)  # intact: the CRC is right

    bad = [
        frame(c.SQUARE, seq + 1, c.pack_square(999, b"\x01", 5)),  # no cell 999
        frame(c.SQUARE, seq + 1, c.pack_square(c5, b"\x63", 5)),  # no piece code 99
        frame(c.BUTTON, seq + 2, c.pack_button(77, 5)),  # no button 77
        frame(c.DIE, seq + 3, c.pack_die(1, 4, 5)),  # this board has no die
        frame(c.SNAPSHOT, seq, c.pack_snapshot([(c5, b""), (5000, b"\x01")])),  # no cell 5000
        # The WELCOME of 19 bytes: the board id's length byte is missing.
        frame(c.WELCOME, 0, c.pack_welcome(1, 2, 1, board.hash, "", "x")[:19]),
        frame(c.HEARTBEAT, 0, b"\x01\x02\x03"),
    ]
    for raw in bad:
        sim.inject(raw)
    until(lambda: session.stats.bad_frames >= len(bad))
    # The real next event has the seq the forged ones claimed: it is taken, once.
    sim.place("C5", "ball")
    events = take(session, 1)
    sim.place("A1", "red")
    events += take(session, 1)
    assert [(e.seq, e.square, e.reading) for e in events] == [
        (seq + 1, "C5", ("ball",)), (seq + 2, "A1", ("red",))]
    assert session.stats.bad_frames == len(bad) and session.stats.skipped == 0
    # A snapshot or WELCOME that cannot be read is answered by a resync: a new
    # snapshot asked for (the page says "resynchronising" until it is in).
    until(lambda: session.health.state == "running" and session.stats.snapshots >= 2)
    assert session.alive and session.connected.is_set() and session.stats.connects == 1
    health = session.health.to_dict()
    assert health["faults"] == len(bad) and health["problem"] is None
    assert health["recoveries"] == 1 and health["recovery_s"] is not None
    said = caplog.text
    assert "board link: bad frame (square" in said and "from table-3, dropped" in said
    assert "no such sensed cell" in said  # a line a second at most: the first is there


def test_a_snapshot_naming_an_unknown_cell_is_answered_by_a_resync(make_sim, connect,
                                                                    caplog) -> None:
    """A SNAPSHOT naming a cell the board lacks, then a WELCOME cut short: each is said,
    shown as the link's problem ("resynchronising with a snapshot") until a good
    snapshot is in, and the stream goes on."""
    caplog.set_level(logging.WARNING, logger="masume.link")
    sim = make_sim()
    session = connect(sim.port, name="table-3")
    seq = connected(session)
    board = sim.board
    shown = []
    real_fault = session.health.fault

    def fault(problem, then, **kwargs):
        message = real_fault(problem, then, **kwargs)
        shown.append(session.health.to_dict()["problem"])  # what the page shows now
        return message

    session.health.fault = fault
    sim.inject(b"\x00" + c.encode_frame(c.SNAPSHOT, seq, c.pack_snapshot([(5000, b"\x01")])))
    until(lambda: session.stats.bad_frames >= 1)
    until(lambda: session.health.state == "running" and session.stats.snapshots >= 2)
    sim.inject(b"\x00" + c.encode_frame(
        c.WELCOME, 0, c.pack_welcome(1, 2, 1, board.hash, "", "x")[:19]))
    until(lambda: session.stats.bad_frames >= 2)
    until(lambda: session.health.state == "running" and session.stats.snapshots >= 3)
    assert [p and p.split(":")[0] for p in shown] == ["board link"] * 2
    assert all("from table-3, dropped; resynchronising with a snapshot" in p for p in shown)
    assert "bad frame (snapshot" in shown[0] and "bad frame (welcome" in shown[1]
    health = session.health.to_dict()
    assert health["recoveries"] == 2 and health["problem"] is None
    sim.place("C5", "ball")
    assert [(e.square, e.reading) for e in take(session, 1)] == [("C5", ("ball",))]
    assert session.stats.connects == 1 and session.alive
    assert "bad frame (snapshot" in caplog.text  # (the next within a second: counted, not said)


def test_an_exception_in_the_link_thread_is_survived_by_a_rebirth(
        make_sim, connect, caplog, monkeypatch) -> None:
    """A frame the link fails to handle (here a reading whose decoding raises, as a
    check that missed something would): logged with the table's name, counted, and
    the link reconnects and resynchronises; the event is not lost (not acknowledged,
    so the board sends it again)."""
    caplog.set_level(logging.WARNING, logger="masume.link")
    sim = make_sim()
    session = connect(sim.port, name="table-3")
    connected(session)
    real = session_module.decode_reading
    raised = []

    def flaky(board, cell, raw):
        if not raised:
            raised.append(cell.name)
            raise KeyError(f"{cell.name}: a check that missed something")
        return real(board, cell, raw)

    monkeypatch.setattr(session_module, "decode_reading", flaky)
    sim.place("C5", "ball")
    events = take(session, 1)
    assert raised == ["C5"]
    assert [(e.square, e.reading) for e in events] == [("C5", ("ball",))]
    until(lambda: session.health.state == "running" and session.stats.snapshots >= 2)
    health = session.health.to_dict(alive=session.alive)
    assert health["faults"] == 1 and health["recoveries"] == 1 and health["alive"]
    assert health["recovery_s"] is not None and health["problem"] is None
    assert session.stats.connects == 2
    assert "board link: bad frame from table-3, resynchronising" in caplog.text
    assert "KeyError" in caplog.text


def test_a_consumer_that_stops_reading_holds_the_board_back(make_sim, connect, caplog) -> None:
    """The queue between the link and its consumer is bounded: past it the link takes
    nothing more (and acknowledges nothing), the board keeps the events in its journal,
    and when the consumer reads again every event comes, in order, none lost."""
    caplog.set_level(logging.WARNING, logger="masume.link")
    sim = make_sim()
    session = connect(sim.port, name="table-3", queue_limit=20)
    start = connected(session)
    squares = [cell.name for cell in sim.board.sensed][:30]
    for square in squares:
        sim.place(square, "red")
    # The link counts what it holds back, then says so (the count comes first).
    until(lambda: "wait to be taken; the board keeps the rest" in caplog.text, "the warning")
    assert session.stats.held_back > 0
    assert session.waiting == 20 and session.ack == start  # nothing acknowledged
    for square in squares:
        sim.lift(square)
    events = take(session, 2 * len(squares))
    assert [e.seq for e in events] == list(range(start + 1, start + 1 + 2 * len(squares)))
    assert [(e.square, e.reading) for e in events] == (
        [(sq, ("red",)) for sq in squares] + [(sq, ()) for sq in squares])
    until(lambda: session.ack == start + 2 * len(squares))
    assert session.stats.events_lost == 0


def test_an_event_the_board_keeps_sending_bad_is_skipped(broker) -> None:
    """A board (here a test client playing one on the broker) whose journal holds an
    event naming a cell it does not have resends it; after a few times the host skips
    it, says so, and takes what follows: the stream does not stall behind it."""
    from masume.boards import load_board

    board = load_board("soccer-shogi")
    unit = "bad-1"
    fake = new_client("bad-board")
    events = topic(unit, "events")

    def send(mtype: int, seq: int, payload: bytes) -> None:
        fake.publish(events, c.encode_frame(mtype, seq, payload)[:-1], qos=1)

    def on_message(client, userdata, message) -> None:
        if c.decode_frame(bytes(message.payload))[0] == c.HELLO:
            send(c.WELCOME, 0, c.pack_welcome(99, 1, 1, board.hash, "t", board.id))

    fake.on_message = on_message
    fake.connect("127.0.0.1", broker.port)
    fake.loop_start()
    hub = MqttHub(broker.url, "club-test").start()
    session = None
    try:
        fake.subscribe(topic(unit, "commands"), 1)
        fake.publish(topic(unit, "status"), b"online", qos=1, retain=True).wait_for_publish(2)
        session = BoardSession(hub.transport(unit), name=unit).start()
        assert session.wait_connected(HANG_S)
        for _ in range(session_module.BAD_EVENT_RETRIES):  # the board's resends
            send(c.SQUARE, 1, c.pack_square(999, b"\x01", 10))
        send(c.SQUARE, 2, c.pack_square(board.cell("C5").index, b"\x03", 20))
        got: list[BoardEvent] = []
        deadline = time.monotonic() + HANG_S
        while not got and time.monotonic() < deadline:
            got += [e for e in session.events(timeout=0.2) if e.type == "square"]
        assert [(e.seq, e.square) for e in got] == [(2, "C5")]
        until(lambda: session.ack == 2)  # the skipped event is acknowledged with it
        assert session.stats.skipped == 1
        assert "skipped (sent 3 times)" in session.health.last_fault
    finally:
        if session:
            session.close()
        hub.close()
        fake.loop_stop()
        fake.disconnect()
