"""`masume play` through faults, as players meet them: the host killed (SIGKILL)
with moves made meanwhile and resumed with ``--resume last``, the disk full, the
file system read-only, an exception in the table's thread. The board is the real
firmware on the MicroPython VM behind a real pty, and it outlives the host, as a
real board on its USB cable does. Nothing is lost: the board keeps every event
the host has not saved, and the host says what is wrong until it is over."""

from __future__ import annotations

import json
import logging
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from masume.boards import load_board
from masume.games import load_rules
from masume.link import BoardSession, SerialTransport
from masume.play.table import TableSession
from masume.records import read_record, resume
from masume.storage import GameStore
from test_club import Hands, first_action, play, set_up
from test_play import Play, wait_state
from waiting import until

pytestmark = pytest.mark.slow


def start(sim, games: Path, *more: str) -> tuple[Play, str]:
    """`masume play` on the simulated board's port; its page's URL once in sync."""
    host = Play("soccer-shogi", "--port", sim.port, "--games-dir", str(games), "--http-port",
                "0", *more, stdin=subprocess.DEVNULL)
    url = host.until("web view: ").split(": ", 1)[1]
    wait_state(url, lambda s: s["link"]["connected"] and s["tracker"]["state"] == "in-sync")
    return host, url


def actions(state: dict) -> int:
    """How many actions the page lists."""
    return sum(len(t["actions"]) for t in state["moves"])


def recorded(games: Path) -> list[str]:
    folders = [p for p in games.iterdir() if (p / "record.txt").exists()]
    assert len(folders) == 1, folders  # one game, resumed: never a second one
    return resume(read_record(folders[0] / "record.txt")).notations()


def test_killed_again_and_again_with_moves_made_meanwhile_nothing_is_lost(
        make_sim, tmp_path: Path) -> None:
    sim = make_sim()
    set_up(sim)
    games = tmp_path / "games"
    hands = Hands(sim)
    move, made = hands.move, hands.made
    host, url = start(sim, games)
    try:
        # 1: a move the host has read; killed as soon as it says so.
        move()
        assert host.until("blue: ") == f"blue: {made[-1]}"
        host.proc.send_signal(signal.SIGKILL)
        host.proc.wait()
        # 2: three moves made while no host runs (more than one look at the board
        # could tell apart): the board's journal keeps their events, with their times.
        for _ in range(3):
            move()
            time.sleep(1.0)  # the players' pace: the board still between two moves
        host, url = start(sim, games, "--resume", "last")
        wait_state(url, lambda s: actions(s) == 4)
        # 3: killed the moment the piece is put down, before the move can be read.
        move()
        host.proc.send_signal(signal.SIGKILL)
        host.proc.wait()
        host, url = start(sim, games, "--resume", "last")
        wait_state(url, lambda s: actions(s) == 5)
        # 4: and one more with the host running, to see it goes on from there.
        move()
        wait_state(url, lambda s: actions(s) == 6)
    finally:
        host.stop()
    assert recorded(games) == made  # every move, each once


def test_disk_full_then_read_only_pauses_play_and_loses_nothing(make_sim, small_disk) -> None:
    sim = make_sim()
    set_up(sim)
    hands = Hands(sim)
    move, made = hands.move, hands.made
    host, url = start(sim, small_disk.path)
    try:
        move()
        wait_state(url, lambda s: actions(s) == 1)
        for trouble, says in ((small_disk.fill, "cannot save: disk full"),
                              (lambda: small_disk.read_only(True),
                               "cannot save: read-only file system")):
            trouble()
            move()
            # The page and the terminal say it; the move waits on the board.
            state = wait_state(url, lambda s: says in (s["health"]["problem"] or ""))
            assert says in state["tracker"]["message"] and state["link"]["connected"]
            assert state["health"]["table"]["state"] == "paused"
            assert actions(state) == len(made) - 1
            assert recorded(small_disk.path) == made[:-1]
            if trouble == small_disk.fill:
                small_disk.free()
            else:
                small_disk.read_only(False)
            # Room again: the move comes from the board's journal, play goes on.
            wait_state(url, lambda s: actions(s) == len(made) and s["health"]["problem"] is None,
                       30)
            assert recorded(small_disk.path) == made
        move()
        wait_state(url, lambda s: actions(s) == len(made))
    finally:
        host.stop()
    err = host.proc.stderr.read()
    assert "cannot save: disk full; play is paused" in err
    assert "cannot save: read-only file system; play is paused" in err
    assert "saved again; play goes on" in err
    assert recorded(small_disk.path) == made
    # The event log too: every line whole, every board event once.
    folder = next(p for p in small_disk.path.iterdir() if (p / "record.txt").exists())
    log = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]
    board = [(e["type"], e["seq"]) for e in log if e["kind"] == "board"]
    assert len(board) == len(set(board)) and len(board) > 2 * len(made)  # a lift, a place


def test_an_exception_in_the_table_thread_reloads_the_last_save(
        make_sim, connect, tmp_path: Path, caplog) -> None:
    """A fault while the table takes a move in (here: its save raises, once: a bug, not
    a database that cannot save): said with the table's name, the last save reloaded,
    the link rewound, and the board's events read again: the move is recorded once,
    and said once, when it is saved."""
    caplog.set_level(logging.ERROR, logger="masume.play")
    sim = make_sim()
    set_up(sim)
    rules = load_rules("soccer-shogi")
    board = load_board("soccer-shogi")
    link = BoardSession(SerialTransport(sim.port), expect=board.id, name="table-3")
    store = GameStore.new(tmp_path, "soccer-shogi")
    save, failed = store.save, threading.Event()

    def save_failing_once(game, log) -> None:
        if game.actions and not failed.is_set():
            failed.set()
            raise RuntimeError("the save went wrong")
        save(game, log)

    store.save = save_failing_once
    told: list[str] = []
    table = TableSession(rules, board, link, store=store,
                         on_action=lambda what, side, notation: told.append(notation))
    link.start()
    table.start()
    try:
        until(lambda: table.state()["link"]["connected"]
              and table.tracker.view.state == "in-sync", "the table in sync")
        position = rules.start()
        action = first_action(position)
        play(sim, position, action)
        until(lambda: table.game.notations() == [position.notation(action)]
              and table.health.state == "running" and table.health.recoveries == 1
              and told, "the move read again after the fault, and said")
        assert failed.is_set() and told == [position.notation(action)]
        health = table.health_report()
        assert health["table"]["alive"] and health["table"]["faults"] == 1
        assert health["problem"] is None
        assert "table: error (RuntimeError: the save went wrong) from table-3, " \
               "reloading the last save" in caplog.text
    finally:
        table.close()
        link.close()
    assert resume(read_record(store.folder / "record.txt")).notations() == [
        position.notation(action)]


def test_a_picture_drawn_before_the_handshake_still_goes_out(make_sim) -> None:
    """A loaded host's table ticks before its board's handshake is over (the club
    server with 300 boards): the picture it draws then cannot go out yet, and the
    snapshot after the handshake draws the same picture again. It must still reach
    the board (it did not: 53 of 300 emulated boards stayed dark)."""
    from masume.rules import Game

    rules, board = load_rules("soccer-shogi"), load_board("soccer-shogi")
    sim = make_sim("soccer-shogi")
    set_up(sim)

    def table_on(sim) -> tuple[BoardSession, TableSession]:
        link = BoardSession(SerialTransport(sim.port), expect=board.id,
                            resolve=lambda _id: board)
        return link, TableSession(rules, board, link, game=Game(rules.start()))

    # A first host takes the set-up's events and leaves the board dark: the next
    # one finds a board with nothing to send, as a hall's boards are.
    link, table = table_on(sim)
    table.start()
    link.start()
    until(lambda: link.connected.is_set() and table.tracker.view.state == "in-sync"
          and sim.led_colours, "the first host in sync")
    table.close()
    link.set_leds({})
    until(lambda: not sim.led_colours, "the board dark")
    link.close()

    link, table = table_on(sim)
    # As a resumed game stands: the board's readings known from the last save.
    table.tracker.observe(table.tracker.expected_readings(), 0.0)
    table.carry_out(table.core.redraw())  # what a tick does before the handshake
    table.start()
    link.start()
    try:
        until(lambda: link.connected.is_set() and link.stats.snapshots
              and table.tracker.view.state == "in-sync", "the board in sync")
        until(lambda: sim.led_colours, "the board's first LED picture")
    finally:
        table.close()
        link.close()
