"""The board link end to end: the real firmware on the MicroPython VM, a real
pseudo-terminal, pyserial and the host session, with noise, unplugging and reboots."""

from __future__ import annotations

import random
import time
from collections import Counter
from pathlib import Path

import pytest

from masume.boards import load_board
from masume.link import BoardEvent, BoardMismatch, BoardSession, Led

pytestmark = pytest.mark.slow


def take(session: BoardSession, count: int, timeout: float = 15.0) -> list[BoardEvent]:
    """The next ``count`` square/die/button events (snapshots are kept aside)."""
    got: list[BoardEvent] = []
    deadline = time.monotonic() + timeout
    while len(got) < count:
        left = deadline - time.monotonic()
        assert left > 0, (f"only {len(got)} of {count} events arrived: {got[-3:]}; "
                          f"link {session.state}, {session.stats}")
        for event in session.events(timeout=min(left, 0.5)):
            if event.type != "snapshot":
                got.append(event)
            if len(got) == count:
                break
    return got


def wait_for(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


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
    assert session.wait_connected(10)
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
            time.sleep(0.15)
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
    sim = make_sim()
    session = connect(sim.port)
    assert session.wait_connected(10)
    picture = {"C5": Led((0, 255, 0), "blink"), "A1": Led((255, 0, 0)), "turn-blue-1": Led((0, 0, 255), "pulse")}
    session.set_leds(picture)
    want_colours = {k: v.rgb for k, v in picture.items()}
    want_patterns = {k: v.pattern_code for k, v in picture.items()}
    wait_for(lambda: (sim.led_colours, sim.led_patterns) == (want_colours, want_patterns))
    # A whole frame replaces the picture: cells not in it go dark.
    session.set_leds({"E8": Led((10, 20, 30))})
    wait_for(lambda: sim.led_colours == {"E8": (10, 20, 30)})
    # After a reboot the board is dark; the host restores its picture, also when
    # noise eats the board's announcement (its heartbeat names the new boot).
    for _ in range(3):
        sim.reboot()
        sim.noise(300)
        assert sim.led_colours == {}
        wait_for(lambda: sim.led_colours == {"E8": (10, 20, 30)})
    # Under noise every frame still lands, by resending.
    for k in range(20):
        sim.noise(50)
        session.set_leds({"B2": Led((k, 0, 0))})
    wait_for(lambda: sim.led_colours == {"B2": (19, 0, 0)})


def test_reboot_is_resynchronised_with_a_snapshot(make_sim, connect) -> None:
    sim = make_sim()
    session = connect(sim.port)
    assert session.wait_connected(10)
    sim.place("C5", "ball")
    assert take(session, 1)[0].square == "C5"
    sim.reboot()
    # The reboot lost the board's memory, not the pieces: the snapshot says where
    # they stand, and events go on from there.
    wait_for(lambda: session.stats.snapshots >= 2)
    assert session.readings["C5"] == ("ball",)
    sim.place("A1", "red")
    sim.lift("C5")
    events = take(session, 2)
    assert {(e.square, e.reading) for e in events} == {("A1", ("red",)), ("C5", ())}


def test_journal_overflow_while_unplugged_is_resynchronised(make_sim, connect) -> None:
    sim = make_sim()
    session = connect(sim.port)
    assert session.wait_connected(10)
    sim.unplug()
    squares = [c.name for c in sim.board.sensed]
    rng = random.Random(3)
    for _ in range(8):  # 8 x 46 = 368 events, more than the journal's 256
        for sq in squares:
            toggle(sim, sq, rng)
        time.sleep(0.12)
    snapshots = session.stats.snapshots
    sim.replug()
    taken: list[BoardEvent] = []

    def resynchronised() -> bool:
        # A consumer takes the events, as a game does: the board's journal goes
        # out 32 events a burst as they are acknowledged, then comes the snapshot.
        taken.extend(e for e in session.events(timeout=0) if e.type != "snapshot")
        return session.stats.snapshots > snapshots

    wait_for(resynchronised, timeout=15)
    wait_for(lambda: session.readings == {sq: reading_of(sim, sq) for sq in squares})
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
        session.wait_connected(10)


def test_an_unknown_board_is_refused(make_sim, connect, tmp_path: Path) -> None:
    source = load_board("soccer-shogi").source
    mystery = tmp_path / "mystery.toml"
    mystery.write_text(Path(source).read_text().replace('id = "soccer-shogi"', 'id = "mystery"'))
    sim = make_sim(load_board(mystery))
    session = connect(sim.port)
    with pytest.raises(BoardMismatch, match="mystery"):
        session.wait_connected(10)


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
    assert session.wait_connected(10)
    for act in (lambda: sim.roll(5), lambda: sim.press("confirm"), lambda: sim.roll(2)):
        act()
        time.sleep(0.2)  # presses at the same instant are reported in button order
    events = take(session, 3)
    assert [(e.type, e.value, e.button) for e in events] == [
        ("die", 5, None), ("button", None, "confirm"), ("die", 2, None)]
    assert events[2].roll_id == events[0].roll_id + 1
