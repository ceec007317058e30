"""The club server through faults, with a real Mosquitto started by the test, the
real firmware on the MicroPython VM as each board, and a real `masume club serve`
killed with SIGKILL: no move is lost, a full disk pauses a table (and says so)
until there is room, and frames a board publishes that pass their CRC but name
what it does not have are counted and said while its game goes on."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from masume.club.server import ClubServer, make_assignment, resume_game
from masume.club.store import ClubStore
from masume.link.mqtt import new_client, topic
from masume_protocol import codec as c
from test_club import Hands, set_up, wait_for

pytestmark = pytest.mark.slow

#: The players' pace: the board still this long between two moves (a move and its
#: undo, made at once, read as no move at all on any board): longer than the
#: tracker's settle (masume.tracker.SETTLE_S, 0.35 s), as test_club.py's hands. The
#: changes are stamped in board time as they are made, so a loaded host only makes
#: the stillness longer.
PACE_S = 0.5


def recorded(store: ClubStore, unit: str) -> list[str]:
    games = [g for g in store.games() if g["table"] == unit]
    assert len(games) == 1, games  # the same game goes on: never a second one
    text = store.record(games[0]["id"])
    return resume_game(text, "soccer-shogi").notations() if text else []


def test_club_server_killed_again_and_again_loses_no_move(broker, make_sim, tmp_path: Path):
    sim = make_sim(mqtt=broker.url, unit="table-1")
    set_up(sim)
    hands = Hands(sim)
    tables = tmp_path / "tables.toml"
    tables.write_text('[tables.table-1]\ngame = "soccer-shogi"\n')
    db = tmp_path / "club.db"
    cmd = [sys.executable, "-m", "masume.cli", "club", "serve", "--broker", broker.url,
           "--tables", str(tables), "--db", str(db), "--no-web"]
    log = open(tmp_path / "server.log", "a")

    def serve() -> subprocess.Popen:
        return subprocess.Popen(cmd, env=dict(os.environ, PYTHONUNBUFFERED="1"), stdout=log,
                                stderr=subprocess.STDOUT)

    def kill(server: subprocess.Popen) -> None:
        server.send_signal(signal.SIGKILL)
        server.wait(10)

    def running() -> bool:
        return "table-1: soccer-shogi, game" in (tmp_path / "server.log").read_text()

    store = ClubStore(db)
    server = serve()
    try:
        assert wait_for(running)
        assert wait_for(lambda: sim.led_colours)  # the server lights the board: in sync
        # Killed five times (the "five times 15 s apart, 5 of 5 moves lost"),
        # each kill waiting for an event, not the clock: once a move is recorded, or
        # the moment its piece is put down, before it can be read; one more move each
        # time while no server runs (the board's journal keeps its events).
        for kill_number in range(5):
            hands.move()
            if kill_number % 2 == 0:
                assert wait_for(lambda: recorded(store, "table-1") == hands.made)
            kill(server)
            time.sleep(PACE_S)
            hands.move()
            time.sleep(PACE_S)
            server = serve()
            assert wait_for(lambda: recorded(store, "table-1") == hands.made), (
                kill_number, recorded(store, "table-1"), hands.made)
        # And it goes on.
        hands.move()
        assert wait_for(lambda: recorded(store, "table-1") == hands.made)
        assert running()
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            kill(server)
        store.close()
    assert len(hands.made) == 11


def test_a_full_disk_pauses_a_club_table_until_there_is_room(broker, make_sim, small_disk,
                                                              caplog):
    caplog.set_level(logging.ERROR, logger="masume.play")
    sim = make_sim(mqtt=broker.url, unit="table-2")
    set_up(sim)
    hands = Hands(sim)
    store = ClubStore(small_disk.path / "club.db")
    server = ClubServer(broker.url, store,
                        {"table-2": make_assignment("table-2", {"game": "soccer-shogi"})}).start()
    try:
        assert wait_for(lambda: "table-2" in server.tables
                        and server.tables["table-2"].link.connected.is_set(), 30)
        hands.move()
        assert wait_for(lambda: recorded(store, "table-2") == hands.made)
        small_disk.fill()
        hands.move()
        assert wait_for(lambda: "cannot save: disk full" in (
            server.table_state("table-2")["health"]["problem"] or ""), 20)
        state = server.table_state("table-2")
        assert "cannot save: disk full" in state["tracker"]["message"]
        assert state["health"]["table"]["state"] == "paused"
        assert recorded(store, "table-2") == hands.made[:-1]
        small_disk.free()
        assert wait_for(lambda: recorded(store, "table-2") == hands.made)
        assert wait_for(lambda: server.table_state("table-2")["health"]["problem"] is None)
        hands.move()
        assert wait_for(lambda: recorded(store, "table-2") == hands.made)
    finally:
        server.close()
        store.close()
    assert "table table-2: cannot save: disk full; play is paused" in caplog.text


def test_malformed_frames_on_the_broker_are_said_and_the_game_goes_on(broker, make_sim, caplog):
    """A board's credentials let it publish anything on its own events topic: frames
    that pass their CRC but name a cell it does not have, a WELCOME cut short, a
    piece code it has no piece for. Each is a bad frame, counted and said with the
    table's name; the link, the table, paho's thread and the server's threads all
    live on (a page whose callback raises, every time, changes nothing either)."""
    caplog.set_level(logging.WARNING)
    sim = make_sim(mqtt=broker.url, unit="table-3")
    set_up(sim)
    hands = Hands(sim)
    store = ClubStore(":memory:")

    def broken_page(unit: str) -> None:
        raise RuntimeError("a live page that fails")

    server = ClubServer(broker.url, store,
                        {"table-3": make_assignment("table-3", {"game": "soccer-shogi"})},
                        on_change=broken_page).start()
    hostile = new_client("hostile-table-3")
    try:
        assert wait_for(lambda: "table-3" in server.tables
                        and server.tables["table-3"].link.connected.is_set(), 30)
        link = server.tables["table-3"].link
        assert wait_for(lambda: link.stats.snapshots >= 1)
        board = sim.board
        # Events numbered ahead of the board's own: never taken for a resend (one the
        # link has had is dropped unread), however far the board's resync moves it.
        at = link.ack + 100
        bad = [c.encode_frame(c.SNAPSHOT, link.ack, c.pack_snapshot([(5000, b"\x01")])),
               c.encode_frame(c.WELCOME, 0, c.pack_welcome(1, 2, 1, board.hash, "", "x")[:19]),
               c.encode_frame(c.SQUARE, at, c.pack_square(board.cell("C5").index, b"\x63", 1)),
               c.encode_frame(c.BUTTON, at + 1, c.pack_button(200, 1))]
        hostile.connect("127.0.0.1", broker.port)
        hostile.loop_start()
        for frame in bad:
            hostile.publish(topic("table-3", "events"), frame[:-1], qos=1).wait_for_publish(5)
        assert wait_for(lambda: link.stats.bad_frames >= len(bad))
        hands.move()
        assert wait_for(lambda: recorded(store, "table-3") == hands.made)
        # The snapshot and the WELCOME that could not be read were answered by a
        # resync: shown as the table's problem until a good snapshot came.
        assert wait_for(lambda: server.health_report()["tables"]["table-3"]["problem"] is None)
        report = server.health_report()
        assert report["tables"]["table-3"]["link"]["recoveries"] >= 1
        assert all(s["alive"] for s in report["server"].values())
        assert report["hub"]["alive"] and report["hub"]["faults"] == 0
        table = report["tables"]["table-3"]
        assert table["table"]["alive"] and table["link"]["alive"] and table["problem"] is None
        assert table["link"]["faults"] == len(bad)
    finally:
        hostile.loop_stop()
        hostile.disconnect()
        server.close()
        store.close()
    said = caplog.text
    assert "board link: bad frame (snapshot" in said and "from table-3, dropped" in said
    assert "cannot start table" not in said


def test_a_resent_event_the_server_has_is_dropped_by_its_seq_alone(broker, make_sim):
    """A board resends its journal while its ACK is late: an event whose seq the
    link has had already is dropped by its seq alone, neither decoded nor checked
    (a resent frame whose CRC is damaged is no bad frame), counted as a duplicate and
    answered by an ACK of where the server stands; the game goes on."""
    sim = make_sim(mqtt=broker.url, unit="table-4")
    set_up(sim)
    hands = Hands(sim)
    store = ClubStore(":memory:")
    server = ClubServer(broker.url, store,
                        {"table-4": make_assignment("table-4", {"game": "soccer-shogi"})}).start()
    watcher = new_client("watch-table-4")
    acks: list[int] = []

    def heard(client: object, userdata: object, message: object) -> None:
        mtype, seq, _ = c.decode_frame(message.payload)  # type: ignore[attr-defined]
        if mtype == c.ACK:
            acks.append(seq)

    watcher.on_message = heard
    try:
        assert wait_for(lambda: "table-4" in server.tables
                        and server.tables["table-4"].link.connected.is_set(), 30)
        hands.move()
        assert wait_for(lambda: recorded(store, "table-4") == hands.made)
        link = server.tables["table-4"].link
        assert wait_for(lambda: link.ack >= 2)  # the move's lift and place
        old = bytearray(c.encode_frame(
            c.SQUARE, 1, c.pack_square(sim.board.cell("C5").index, b"\x63", 1))[:-1])
        old[-1] = old[-1] ^ 0x55 or 1  # the CRC damaged (never into a zero byte)
        with pytest.raises(c.FrameError):
            c.decode_frame(bytes(old))
        duplicates, bad = link.stats.duplicates, link.stats.bad_frames
        watcher.connect("127.0.0.1", broker.port)
        watcher.loop_start()
        watcher.subscribe(topic("table-4", "commands"), qos=1)
        assert wait_for(lambda: watcher.is_connected())
        for _ in range(3):
            watcher.publish(topic("table-4", "events"), bytes(old), qos=1).wait_for_publish(5)
        assert wait_for(lambda: link.stats.duplicates >= duplicates + 3)
        assert link.stats.bad_frames == bad
        assert wait_for(lambda: link.ack in acks)
        hands.move()
        assert wait_for(lambda: recorded(store, "table-4") == hands.made)
    finally:
        watcher.loop_stop()
        watcher.disconnect()
        server.close()
        store.close()
