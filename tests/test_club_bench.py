"""`masume bench club`'s hands: every planned action is one the tracker reads
exactly, with the confirm presses a player would make where it reads another."""

from __future__ import annotations

from masume.bench.club import PLAN_GAP_S, plan_game
from masume.boards import load_board
from masume.games import load_rules
from masume.rules import Game
from masume.tracker import Tracker


def test_planned_hands_are_read_exactly_by_a_fresh_tracker():
    rules = load_rules("soccer-shogi")
    board = load_board(rules.board)
    confirms = 0
    for seed in (0, 7):
        plan = plan_game("soccer-shogi", seed, 30)
        assert len(plan) >= 8
        # A tracker of its own (not the planner's), fed the plan's movements with
        # the board still past the settle time after each, as the server's is.
        tracker = Tracker(Game(rules.start()), board)
        stacks = {name: list(pieces) for name, pieces in rules.start().layout().items()}
        t = 0.0
        tracker.observe({name: tuple(stack) for name, stack in stacks.items()}, t)
        for planned in plan:
            for kind, where, what in planned.steps:
                if kind == "press":
                    assert where == "confirm"
                    tracker.confirm()
                    confirms += 1
                    continue
                stack = stacks.setdefault(where, [])
                stack.pop() if kind == "lift" else stack.append(what)
                t += 0.05
                tracker.observe_square(where, tuple(stack), t)
                t += PLAN_GAP_S
                tracker.tick(t)
        assert tracker.game.notations() == [p.notation for p in plan]
    # These seeds' games hold actions the tracker first reads as others (a piece
    # stepped twice, also one diagonal step): the hand presses confirm for its own.
    assert confirms >= 2


def test_emulated_boards_play_their_games_into_exact_records():
    """`masume bench club --emulated` at its smallest: protocol-level boards and one
    full-VM canary against the real server, broker and database; every record
    holds exactly what its hand played, and every board saw its LEDs answer."""
    import asyncio

    from masume.bench.club import plan_games
    from masume.bench.club_emulated import run_size

    plans = plan_games(3, 8)
    result = asyncio.run(run_size(3, 1, seconds=6.0, pace=1.0, plans=plans, idle=0.5))
    assert result["differ"] == []
    assert result["actions"] >= 4
    assert result["samples"] > 0 and result["canary_samples"] > 0
    assert result["bad_frames"] == 0
    # Every picture the boards were shown is one the server's code draws for the plan,
    # and every movement it draws a new one for got it.
    assert result["misses"] == 0 and result["unforeseen"] == 0
    # The full-VM canary is timed the same way (its pictures foreseen too).
    assert result["canary_misses"] == 0 and result["canary_unforeseen"] == 0


def test_a_second_piece_lifted_from_a_square_changes_no_picture():
    """The bench's foresight (the server's TableCore, fed the plan): lifting the ball
    after the player who held it leaves the lights as they were (both pieces' squares
    are lit already), so that movement has no LED answer to time; every other movement
    of the plan has a new picture."""
    from masume.bench.club import plan_game
    from masume.bench.club_emulated import foresee

    rules = load_rules("soccer-shogi")
    board = load_board(rules.board)
    layout = {k: list(v) for k, v in rules.start().layout().items()}
    plan = plan_game("soccer-shogi", 2, 12)
    first, foreseen = foresee(board, layout, plan)
    before, quiet = first, []
    for planned, pictures in zip(plan, foreseen):
        for k, (step, seen) in enumerate(zip(planned.steps, pictures)):
            if seen.now == before == seen.settled:
                quiet.append((step, planned.steps[k - 1] if k else None))
            before = seen.settled
    assert quiet, "this seed's plan lifts a player holding the ball"
    for (kind, square, _), previous in quiet:
        assert kind == "lift" and previous == ("lift", square, ""), (quiet, plan)


def test_emulated_boards_resend_when_the_firmware_does():
    """An emulated board's journal goes again when and as much as the firmware's
    (firmware/link.py's BoardLink, the same script of events, host heartbeats and
    acks): all of it 250 ms after its event, then the oldest alone 500, 1000, 2000 ms
    apart while the host's acks are late, and all again 250 ms after an ack that
    frees some of it."""
    import random
    import sys

    from micropython_vm import ROOT

    sys.path.insert(0, str(ROOT / "firmware"))  # the firmware's flat module layout
    import firmware_checks

    from masume.bench.club_emulated import EmulatedBoard
    from masume_protocol import codec as c

    rules = load_rules("soccer-shogi")
    board = load_board(rules.board)
    emulated = EmulatedBoard("t-1", board, {}, [], [], random.Random(1))
    firmware, sent = firmware_checks._link()
    beat = c.encode_frame(c.HEARTBEAT, 0, c.pack_heartbeat(0, 0, 0, 0))[:-1]
    square = c.pack_square(3, b"\x01", 0)
    events = {3000: 1, 3100: 2, 3200: 3}  # ms -> the event's seq
    acks = {4100: 1, 12100: 3}  # ms -> the host's ack (1: frees one of three)
    times: dict[str, list[tuple[int, int]]] = {"firmware": [], "emulated": []}
    for ms in range(1000, 15000, 10):
        s = ms / 1000
        if ms % 1000 == 0:  # the host's heartbeat: it is there, however late its acks
            firmware.receive(beat, ms)
            emulated.host_heard = s
        if ms in events:
            firmware.event(c.SQUARE, square, ms)
            emulated._event(c.SQUARE, square, s)
        if ms in acks:
            firmware.receive(c.encode_frame(c.ACK, acks[ms])[:-1], ms)
            emulated._acked(acks[ms], s)
        del sent[:]
        resent = emulated.resent
        firmware.poll(ms)
        emulated.tick(s, heartbeat=False)
        again = sum(c.decode_frame(bytes(f)[:-1])[0] in c.EVENTS for f in sent)
        if again:
            times["firmware"].append((ms, again))
        if emulated.resent > resent:
            times["emulated"].append((ms, emulated.resent - resent))
    assert times["firmware"] == [(3250, 3), (3750, 1), (4350, 2), (4850, 1), (5850, 1),
                                 (7850, 1), (9850, 1), (11850, 1)], times
    assert times["emulated"] == times["firmware"]


def test_a_board_short_of_a_piece_is_not_searched_and_reads_the_same(monkeypatch):
    """The tracker searches no reading for a Soccer Shogi board that shows fewer pieces
    than the position has (a piece in the hand: KeepsPieces); every picture the
    server's own table draws for planned games is the same as with the search."""
    from masume.bench.club import plan_games
    from masume.bench.club_emulated import foresee_all
    from masume.tracker import Tracker

    plans = plan_games(6, 30)
    short = Tracker._short_of_pieces
    skipped = []

    def counted(self):
        found = short(self)
        skipped.append(found)
        return found

    monkeypatch.setattr(Tracker, "_short_of_pieces", counted)
    with_shortcut = foresee_all(plans)
    monkeypatch.setattr(Tracker, "_short_of_pieces", lambda self: False)
    searched = foresee_all(plans)
    assert with_shortcut == searched
    assert sum(skipped) > 50  # the lifts of the plans, not searched


def test_a_process_killed_keeps_the_cpu_it_spent_in_the_meter():
    """`--kill`'s CPU figure: a real process tree (a parent and a child burning CPU)
    read, read once more just before its SIGKILL, then read after it: the total
    never goes down (it did, and the play's CPU per board came out negative)."""
    import subprocess
    import sys
    import time

    from masume.bench.club_emulated import CpuMeter

    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"
    parent = subprocess.Popen(
        [sys.executable, "-c", "import subprocess, sys\n" + burn
         + f"subprocess.Popen([sys.executable, '-c', {burn!r} + 'import sys; sys.stdin.read()'],"
           " stdin=subprocess.PIPE)\nsys.stdin.read()\n"],
        stdin=subprocess.PIPE)
    try:
        meter = CpuMeter([parent.pid])
        # Wait until the parent has burnt its share and the child is listed under it.
        while meter.read() < 0.3 or len(meter.seen) < 2:
            assert parent.poll() is None
            time.sleep(0.01)
        before = meter.read()
        meter.last_reading(parent.pid)
        at_kill = meter.read()
        parent.kill()
        parent.wait()
        assert at_kill >= before >= 0.3
        assert meter.read() == at_kill
    finally:
        parent.kill()
