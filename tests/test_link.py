"""The board link end to end: the real firmware on the MicroPython VM, a real
pseudo-terminal, pyserial and the host session, with noise, unplugging and reboots."""

from __future__ import annotations

import random
import time
from collections import Counter
from pathlib import Path

import pytest

from masume.boards import load_board
from masume.link import BoardEvent, BoardMismatch, Led
from waiting import connected, take, until

pytestmark = pytest.mark.slow
TICKS = 1 << 30  # the board's ticks_ms wrap


def reading_of(sim, square: str):
    """What the host should read for ``square`` (presence: bool; identity: pieces)."""
    stack = tuple(sim.table.stacks[square])
    return bool(stack) if sim.board.cell(square).sensor == "presence" else stack


def toggle(sim, square: str, rng: random.Random) -> tuple[str, object]:
    """Put a piece on an empty square or lift it off an occupied one."""
    if sim.table.stacks[square]:
        sim.lift(square)
    else:
        sim.place(square, rng.choice(["blue", "red", "ball"]))
    return square, reading_of(sim, square)


@pytest.mark.parametrize("board", ["soccer-shogi", "soccer-shogi-reed"])
def test_thousands_of_changes_arrive_once_in_order_through_noise_and_unplugging(
    make_sim, connect, board: str
) -> None:
    rng = random.Random(7)
    sim = make_sim(board)
    session = connect(sim.port)
    assert connected(session)
    squares = [c.name for c in sim.board.sensed]
    received: list[BoardEvent] = []
    changes = 0
    for round_no in range(90):
        if round_no % 9 == 4:
            sim.unplug()
        # Each square changes at most once a round, so every change holds past
        # the 50 ms debounce and must be reported.
        expected = Counter(toggle(sim, sq, rng) for sq in rng.sample(squares, rng.randint(10, 35)))
        changes += sum(expected.values())
        if round_no % 3 == 0:
            sim.noise(rng.randint(1, 300))
        if round_no % 9 == 4:
            time.sleep(0.15)  # the cable stays out a moment (not a synchronisation)
            sim.replug()
        try:
            events = take(session, sum(expected.values()))
        except AssertionError as exc:
            raise AssertionError(f"round {round_no}: {exc}; board: {sim.polls} passes, "
                                 f"{sim.reboots} reboots, {sim.lost_passes} lost passes") from None
        got = Counter((e.square, e.reading) for e in events)
        assert got == expected, (f"round {round_no}: missing {expected - got}, extra {got - expected}, "
                                 f"seqs {[e.seq for e in events]}; {session.stats}")
        received += events
    assert changes >= 2000
    seqs = [e.seq for e in received]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # each once, in order
    assert session.stats.connects >= 11  # it really reconnected after every unplug
    assert session.stats.bad_frames > 0  # and the noise really hit frames
    assert session.readings == {sq: reading_of(sim, sq) for sq in squares}
    # The VM collected garbage many times, and the firmware never crashed (a
    # crash would be a reboot).
    assert sim.collections >= 5 and sim.reboots == 0


def test_led_frames_round_trip_and_survive_replug(make_sim, connect) -> None:
    shown: list[dict] = []  # every picture the firmware showed, in order
    sim = make_sim(on_leds=lambda colours, patterns: shown.append(colours))
    session = connect(sim.port)
    assert connected(session)
    picture = {"C5": Led((0, 255, 0), "blink"), "A1": Led((255, 0, 0)), "turn-blue-1": Led((0, 0, 255), "pulse")}
    session.set_leds(picture)
    want_colours = {k: v.rgb for k, v in picture.items()}
    want_patterns = {k: v.pattern_code for k, v in picture.items()}
    until(lambda: (sim.led_colours, sim.led_patterns) == (want_colours, want_patterns),
          "the picture")
    # A whole frame replaces the picture: cells not in it go dark.
    session.set_leds({"E8": Led((10, 20, 30))})
    until(lambda: sim.led_colours == {"E8": (10, 20, 30)}, "the new picture")
    # After a reboot the board is dark; the host restores its picture, also when
    # noise eats the board's announcement (its heartbeat names the new boot).
    for _ in range(3):
        before = len(shown)
        sim.reboot()
        sim.noise(300)
        # The new boot shows a dark board, then the picture the host gives it again
        # (awaited as what the firmware showed: the host may restore it at any moment).
        until(lambda: {} in shown[before:] and shown[-1] == {"E8": (10, 20, 30)},
              "the dark board, then the picture, after a reboot")
    # Under noise every frame still lands, by resending.
    for k in range(20):
        sim.noise(50)
        session.set_leds({"B2": Led((k, 0, 0))})
    until(lambda: sim.led_colours == {"B2": (19, 0, 0)}, "the last of 20 pictures")


def test_reboot_is_resynchronised_with_a_snapshot(make_sim, connect) -> None:
    sim = make_sim()
    session = connect(sim.port)
    assert connected(session)
    sim.place("C5", "ball")
    assert take(session, 1)[0].square == "C5"
    sim.reboot()
    # The reboot lost the board's memory, not the pieces: the snapshot says where
    # they stand, and events go on from there.
    until(lambda: session.stats.snapshots >= 2, "the snapshot after the reboot")
    assert session.readings["C5"] == ("ball",)
    sim.place("A1", "red")
    sim.lift("C5")
    events = take(session, 2)
    assert {(e.square, e.reading) for e in events} == {("A1", ("red",)), ("C5", ())}


def test_journal_overflow_while_unplugged_is_resynchronised(make_sim, connect) -> None:
    sim = make_sim()
    session = connect(sim.port)
    assert connected(session)
    sim.unplug()
    squares = [c.name for c in sim.board.sensed]
    rng = random.Random(3)
    with sim.script() as t:
        for k in range(8):  # 8 x 46 = 368 events, more than the journal's 256
            for sq in squares:  # each reading holds 120 ms, past the debounce
                if sim.table.stacks[sq]:
                    sim.lift(sq, at=t + 120 * k)
                else:
                    sim.place(sq, rng.choice(["blue", "red", "ball"]), at=t + 120 * k)
    until(sim.caught_up, "the board's passes over the 368 changes")
    snapshots = session.stats.snapshots
    sim.replug()
    taken: list[BoardEvent] = []

    def resynchronised() -> bool:
        # A consumer takes the events, as a game does: the board's journal goes
        # out 32 events a burst as they are acknowledged, then comes the snapshot.
        taken.extend(e for e in session.events(timeout=0) if e.type != "snapshot")
        return session.stats.snapshots > snapshots

    until(resynchronised, "the snapshot after the journal's events")
    until(lambda: session.readings == {sq: reading_of(sim, sq) for sq in squares},
          "the readings of the table")
    # What the full journal dropped is counted and said; what it held came, in order.
    assert session.stats.events_lost == 8 * 46 - 256
    assert [e.seq for e in taken] == list(range(taken[0].seq, taken[0].seq + 256))


def test_a_board_with_another_map_is_refused(make_sim, connect, tmp_path: Path) -> None:
    source = load_board("soccer-shogi").source
    changed = tmp_path / "soccer-shogi.toml"
    changed.write_text(Path(source).read_text().replace('name = "confirm"', 'name = "ok"'))
    sim = make_sim(load_board(changed))
    session = connect(sim.port)
    with pytest.raises(BoardMismatch, match="hash"):
        connected(session)


def test_an_unknown_board_is_refused(make_sim, connect, tmp_path: Path) -> None:
    source = load_board("soccer-shogi").source
    mystery = tmp_path / "mystery.toml"
    mystery.write_text(Path(source).read_text().replace('id = "soccer-shogi"', 'id = "mystery"'))
    sim = make_sim(load_board(mystery))
    session = connect(sim.port)
    with pytest.raises(BoardMismatch, match="mystery"):
        connected(session)


def test_die_and_buttons(make_sim, connect, tmp_path: Path) -> None:
    source = Path(load_board("soccer-shogi").source).read_text()
    with_die = tmp_path / "die-table.toml"
    with_die.write_text(
        source.replace('id = "soccer-shogi"', 'id = "die-table"\ndie = true')
        + '\n[[button]]\nname = "roll"\n'
    )
    board = load_board(with_die)
    sim = make_sim(board)
    session = connect(sim.port, resolve=lambda board_id: board)
    assert connected(session)
    with sim.script() as t:  # 200 ms apart: presses at one instant come in button order
        sim.roll(5, at=t)
        sim.press("confirm", at=t + 200)
        sim.roll(2, at=t + 400)
    events = take(session, 3)
    assert [(e.type, e.value, e.button) for e in events] == [
        ("die", 5, None), ("button", None, "confirm"), ("die", 2, None)]
    assert events[2].roll_id == events[0].roll_id + 1


def test_changes_are_seen_in_board_time_however_slow_the_host(make_sim, connect,
                                                              monkeypatch) -> None:
    sim = make_sim()
    session = connect(sim.port)
    assert connected(session)
    # A loaded host: every scan pass of the VM takes 250 ms of wall time from here on,
    # more than the changes below last. The board's passes fall behind the clock and
    # replay the table as it was at their board time.
    sample = sim.table.sample

    def slow_sample(at: int, held: int = -1):
        time.sleep(0.25)
        return sample(at, held)

    monkeypatch.setattr(sim.table, "sample", slow_sample)
    with sim.script() as t:
        sim.place("A1", "red", at=t)
        sim.lift("A1", at=t + 120)  # down for 120 ms: reported, as by a real scan
        sim.place("B2", "blue", at=t + 300)
        sim.lift("B2", at=t + 330)  # down for 30 ms, under the 50 ms debounce: not
        sim.place("C3", "ball", at=t + 400)
    events = take(session, 3)
    assert [(e.square, e.reading, e.ms) for e in events] == [
        ("A1", ("red",), (t + 50) % TICKS),  # each when the debounce held, in board time
        ("A1", (), (t + 170) % TICKS),
        ("C3", ("ball",), (t + 450) % TICKS),
    ]
    # The board is behind the clock; once the host keeps up again it catches up.
    monkeypatch.setattr(sim.table, "sample", sample)
    until(lambda: sim.clock.passed >= sim.now_ms() - 200, "the board catching up")


def test_a_change_in_the_past_of_the_board_is_refused(make_sim) -> None:
    from masume.sim.table import TableError

    sim = make_sim()
    until(lambda: sim.clock.passed > 0, "a pass")
    with pytest.raises(TableError, match="has passed"):
        sim.place("A1", "red", at=sim.clock.passed)
    with sim.script() as t:
        sim.place("A1", "red", at=t + 10)
        with pytest.raises(TableError, match="time order"):
            sim.lift("A1", at=t)
    assert sim.table.stacks["A1"] == ["red"]


def test_a_board_at_rest_sleeps_between_its_link_timers(make_sim) -> None:
    from masume.sim.board import IDLE_PASS_MS

    sim = make_sim()
    until(lambda: sim.polls > 0, "a pass")
    polls, start = sim.polls, sim.clock.passed
    until(lambda: sim.clock.passed >= start + 2000, "two seconds of board time")
    # Nobody touches it and no host talks to it: one pass per IDLE_PASS_MS, not one
    # a millisecond (the figures: masume bench sim).
    assert sim.polls - polls <= 2000 // IDLE_PASS_MS + 2


def test_a_consumer_that_holds_nothing_yet_loses_no_later_event(make_sim, connect) -> None:
    """A table that starts on a running link with no saved event rewinds it to boot 0:
    the link goes on with the board it has (no reconnect, which would count as first
    contact and skip what the board made before its welcome), the events queued
    before are replaced by a snapshot, and a press right after is taken."""
    board = load_board("soccer-shogi")
    sim = make_sim(board)
    session = connect(sim.port)
    assert connected(session)
    sim.place("C3", "blue")
    assert [e.square for e in take(session, 1)] == ["C3"]
    sim.place("C4", "red")  # queued, never taken: the rewind drops it
    until(lambda: session.waiting > 0, "the C4 event queued")
    session.rewind(0, 0)
    sim.press("hint")
    got: list = []

    def press_and_snapshot_in() -> bool:
        got.extend(session.events(timeout=0.2))
        return {"button", "snapshot"} <= {e.type for e in got}
    until(press_and_snapshot_in, "the press and a snapshot after the rewind")
    assert [e.button for e in got if e.type != "snapshot"] == ["hint"]
    snapshot = next(e for e in got if e.type == "snapshot")
    assert snapshot.readings["C4"] and snapshot.readings["C3"]
    assert session.connections == 1 and session.stats.events_lost == 0
