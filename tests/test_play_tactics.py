"""Masume Soccer Tactics played on its table: the real TableSession, the simulated board
(the firmware on the MicroPython VM, a real pty read with pyserial) and its die.

The gestures are those of docs/playing.md ("Masume Soccer Tactics"): a kick is called
with a kick button and the ball put down one square the way it goes, the die is the
board's, the pieces then follow what the lights show; a charge is the defender put on
the ball keeper's square, then two rolls; confirm makes the one choice left (keep the
ball, a set piece's ready). The LEDs are checked as the firmware shows them.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest
from masume.boards import load_board
from masume.games import load_rules
from masume.leds import RED, WHITE, WRONG, highlight_led
from masume.link import BoardSession, Led, NoBoard, SerialTransport
from masume.play.table import TableSession
from masume.records import read_record
from masume.rules import Game
from masume.rules.masume_tactics import Timeout, Whistle
from masume.storage import GameStore
from waiting import HANG_S

RULES = load_rules("masume-tactics")
HIGHLIGHTS = {meaning: highlight_led(meaning, RULES.start().legend)
              for meaning in RULES.start().legend.highlights}
BOARD = load_board("masume-tactics")

#: home-8 keeps the ball on E6 (home's offence, action 1), home-10 waits on E11 and
#: home-7 on C8; away's outfield players stand high (no offside), away-4 on E12 in
#: front of E11, away's keeper in his goal.
START = ("home=G2,C4,E3,I3,K4,G5,C8,E6,G6,E11,K7 "
         "away=G16,C14,E14,E12,K14,G13,C13,E13,G14,I13,K13 ball=E6 offence=home move=home")


class Table:
    """A TableSession on the simulated board, and the hands at it."""

    def __init__(self, sim, game: Game, store: GameStore | None = None) -> None:
        self.sim = sim
        self.link = BoardSession(SerialTransport(sim.port), expect=BOARD.id,
                                 resolve=lambda _id: BOARD).start()
        self.played: list[tuple[str, str, str]] = []
        self._pressed = 0.0
        self.session = TableSession(RULES, BOARD, self.link, game=game, store=store, sim=sim,
                                    on_action=lambda *a: self.played.append(a)).start()
        self.wait(lambda: self.session.link.connected.is_set()
                  and self.session.tracker.view.state == "in-sync", "the board to match")

    def close(self) -> None:
        self.session.close()
        self.link.close()

    @property
    def game(self) -> Game:
        return self.session.game

    def wait(self, check: Callable[[], bool], what: str, timeout: float = HANG_S) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            assert time.monotonic() < deadline, (
                f"waited for {what}: {self.session.state()['tracker']}, "
                f"{self.game.position.status().message}, {self.notations()}")
            time.sleep(0.02)

    def press(self, button: str) -> None:
        """A hand presses a button, firmly (held PRESS_S: a loaded machine's firmware
        loop still sees it), and not again before the firmware saw it released."""
        time.sleep(max(0.0, self._pressed + PRESS_S + 0.25 - time.monotonic()))
        self.sim.press(button)
        self._pressed = time.monotonic()

    def roll(self, value: int) -> None:
        """The die's roll button, the face forced (the simulated die)."""
        time.sleep(max(0.0, self._pressed + PRESS_S + 0.25 - time.monotonic()))
        self.sim.roll(value)
        self._pressed = time.monotonic()

    def notations(self) -> list[str]:
        return self.game.notations()

    def move(self, frm: str, to: str, *pieces: str) -> None:
        """Lift ``pieces`` (top first) off ``frm`` and put them on ``to`` (bottom first);
        with no pieces named, the top one."""
        lifted = [self.sim.lift(frm) for _ in (pieces or ("top",))]
        for piece in reversed(lifted):
            self.sim.place(to, piece)

    def nudge(self, kicker: str, to: str) -> None:
        """Put the ball from under the kicker down on ``to``, the kicker back on his square."""
        player = self.sim.lift(kicker)
        ball = self.sim.lift(kicker)
        assert ball == "ball"
        self.sim.place(kicker, player)
        under = [self.sim.lift(to) for _ in range(len(self.sim.table.stacks[to]))]
        self.sim.place(to, ball)
        for piece in reversed(under):
            self.sim.place(to, piece)

    def played_after(self, count: int) -> list[str]:
        self.wait(lambda: len(self.game.actions) >= count, f"{count} actions")
        time.sleep(0.1)  # nothing more comes
        return self.notations()

    def shown(self, square: str) -> Led | None:
        """What the board's firmware shows on ``square`` (as the LEDs are lit)."""
        from masume_protocol.codec import PATTERNS

        rgb = self.sim.led_colours.get(square)
        if not rgb or not any(rgb):
            return None
        return Led(rgb, PATTERNS[self.sim.led_patterns.get(square, 1)])

    def lights(self, expected: dict[str, Led | None], what: str) -> None:
        """Wait until the board shows ``expected`` (the host's picture went over the wire)."""
        self.wait(lambda: all(self.shown(sq) == led for sq, led in expected.items()),
                  f"{what}: {expected} (shown: {[self.shown(sq) for sq in expected]})")


#: How long the tests' hand holds a button down.
PRESS_S = 0.3


@pytest.fixture
def table(make_sim, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Table]:
    import masume.sim.table

    monkeypatch.setattr(masume.sim.table, "BUTTON_PRESS_S", PRESS_S)
    sim = make_sim("masume-tactics")
    game = Game(RULES.from_text(START))
    for square, pieces in game.position.layout().items():
        for piece in pieces:
            sim.place(square, piece)
    store = GameStore.new(tmp_path, "masume-tactics", {})
    t = Table(sim, game, store)
    yield t
    t.close()


def test_a_move_a_called_ground_kick_a_charge_and_a_throw_in_on_the_board(table: Table) -> None:
    session = table.session
    # A move: home-8 dribbles on, read from the board.
    table.move("E6", "E7", "home-8", "ball")
    assert table.played_after(1) == ["E6-E7"]

    # The die before anything waits for it: a clear message, no action, the roll logged.
    table.roll(4)
    table.wait(lambda: "ignored" in session.state()["tracker"]["message"], "the refusal")
    assert "not waiting for a roll" in session.state()["tracker"]["message"]
    assert len(table.game.actions) == 1

    # The kick is called: ground pressed, the squares where the ball may be put down lit.
    table.press("ground")
    table.wait(lambda: session.calling is not None, "the call's squares")
    assert set(session.calling[1]) == {"D6", "D7", "D8", "E6", "E8", "F6", "F7", "F8"}
    table.lights({"E8": Led((255, 150, 0), "blink")}, "the call's squares lit")
    # ... and made by putting the ball down one square north: read as the ground kick
    # (a lob, or an inside kick of one square, would leave the same board).
    table.nudge("E7", "E8")
    assert table.played_after(2) == ["E6-E7", "E7 ground N"]
    assert session.tracker.view.state == "in-sync"
    table.lights({"E9": HIGHLIGHTS["line"], "E14": HIGHLIGHTS["line"]}, "the called line")

    # The roll: 4 squares, exactly to home-10 on E11. The board shows the path, the
    # square the ball must go to and where it is taken from, and the die's face.
    table.roll(4)
    assert table.played_after(3)[-1] == "die 4"
    assert session.tracker.view.state == "follow"
    assert session.tracker.view.message == "move as the lights show: ball E8\u2192E11"
    table.lights({"E8": Led(WHITE, "pulse"), "E9": HIGHLIGHTS["path"], "E11": Led(WHITE, "blink"),
                  "die-tl": Led(WHITE), "die-tr": Led(WHITE), "die-bl": Led(WHITE),
                  "die-br": Led(WHITE), "die-c": None}, "the kick's path and target")
    assert [h["meaning"] for h in session.state()["highlights"]] == ["path", "target", "options"]
    # The ball put on a wrong square first: flagged, nothing recorded, then put right.
    table.move("E8", "F12")
    table.lights({"F12": Led(WRONG, "blink"), "E11": Led(WHITE, "blink")}, "the wrong square")
    assert len(table.game.actions) == 3
    table.move("F12", "E11")  # (the sensors read who stands there, not in which order)
    table.wait(lambda: session.tracker.view.state == "in-sync", "the board to follow")
    assert "keeps the ball or lets it run" in table.game.position.status().message
    # Where he could let it run (a one-touch) is lit; confirm makes the one choice left:
    # home-10 keeps it.
    table.lights({"E10": HIGHLIGHTS["options"], "E11": HIGHLIGHTS["target"]}, "the receiver")
    table.press("confirm")
    assert table.played_after(4)[-1] == "keep"
    assert table.game.position.status().to_move == "away"

    # A charge: away-4 is put on the ball keeper's square; both players lit; two rolls.
    table.move("E12", "E11", "away-4")
    assert table.played_after(5)[-1] == "E12 charge E11"
    table.lights({"E11": HIGHLIGHTS["charge"], "E12": HIGHLIGHTS["charge"]}, "the charge")
    assert "charging defender rolls" in table.game.position.status().message
    table.roll(5)
    assert table.played_after(6)[-1] == "die 5"
    assert "the defender rolled 5" in table.game.position.status().message
    table.roll(2)
    assert table.played_after(7)[-1] == "die 2"
    # The defender won: he keeps the ball on E11, home-10 goes to E12.
    assert session.tracker.view.message == "move as the lights show: home-10 E11\u2192E12"
    stack = [table.sim.lift("E11") for _ in range(3)]
    assert sorted(stack) == ["away-4", "ball", "home-10"]
    table.sim.place("E12", "home-10")
    table.sim.place("E11", "ball")
    table.sim.place("E11", "away-4")
    table.wait(lambda: session.tracker.view.state == "in-sync", "the charge to be shown")
    status = table.game.position.status()
    assert status.to_move == "away" and status.message.startswith("away, offence, action 1")

    # Out of play: away-4 kicks west, 4 squares, over the touchline: a throw-in.
    table.press("ground")
    table.nudge("E11", "D11")
    assert table.played_after(8)[-1] == "E11 ground W"
    table.roll(4)
    assert table.played_after(9)[-1] == "die 4"
    table.move("D11", "A11")
    table.wait(lambda: session.tracker.view.state == "in-sync", "the ball on A11")
    status = table.game.position.status()
    assert status.message == "out of play! home: throw-in on A11, choose the taker"
    table.lights({"A11": HIGHLIGHTS["out"], "C11": HIGHLIGHTS["path"]}, "out of play")
    assert "out of play!" in session.state()["status"]["message"]
    # The taker: home-7 steps onto the ball; the throw-in spot stays lit; ready.
    table.move("C8", "A11", "home-7")
    assert table.played_after(10)[-1] == "kicker C8"
    table.lights({"A11": HIGHLIGHTS["target"]}, "the set-piece spot")
    table.press("confirm")
    assert table.played_after(11)[-1] == "ready"
    assert table.game.position.status().message.startswith("home, offence, action 1 of 2")

    # What the session told, what it saved: every die action with its roll id.
    assert [p[2] for p in table.played][-3:] == ["die 4", "kicker C8", "ready"]
    record = read_record(session.store.folder / "record.txt")
    _, resumed = GameStore.resume(session.store.folder)  # the last turn is not over yet
    assert resumed.notations() == table.notations()
    rolls = dict(item.split("=") for item in record.headers["Rolls"].split())
    assert sorted(rolls) == ["3", "6", "7", "9"]  # the actions that are die rolls
    log = [json.loads(line) for line in (session.store.folder / "events.jsonl").open()]
    rolled = [e for e in log if e["kind"] == "roll"]
    assert [e["value"] for e in rolled] == [4, 4, 5, 2, 4]
    assert rolled[0]["refused"] and rolled[0]["action"] is None
    assert [str(e["roll_id"]) for e in rolled[1:]] == [rolls[k] for k in ("3", "6", "7", "9")]
    board_rolls = [e["roll_id"] for e in log if e["kind"] == "board" and e.get("type") == "die"]
    assert board_rolls == [e["roll_id"] for e in rolled]


def test_a_lob_button_after_the_ball_is_down_makes_it_a_lob(table: Table) -> None:
    table.nudge("E6", "E7")
    assert table.played_after(1) == ["E6 ground N"]  # no button yet: the first reading
    table.press("lob")
    table.wait(lambda: table.notations() == ["E6 lob N"], "the lob")
    assert table.session.tracker.view.state == "in-sync"
    table.roll(1)  # 1 + the lob advantage: 3 squares, over everyone, onto E9
    table.wait(lambda: table.notations()[-1:] == ["die 1"], "the roll")
    assert table.session.tracker.view.put == ("E9",)


# ---- on a table without a board behind it: readings by hand, the clock by hand --------------




def clocked(**options) -> TableSession:
    game = Game(RULES.start(**options))
    game.push_notation("G8 inside SW2")
    game.push_notation("keep")
    table = TableSession(RULES, BOARD, NoBoard(), game=game)
    table.tracker.observe(table.tracker.expected_readings(), 0.0)
    return table


def test_a_bounce_and_a_step_in_are_chosen_by_putting_the_piece_on_a_lit_square() -> None:
    game = Game(RULES.from_text("home=G2,C4,E3,I3,K4,G5,G6,E6,G8,I6,K7 "
                                "away=G16,C14,E14,I14,K14,G13,C13,E13,G14,I13,K13 ball=G6"))
    game.push_notation("G6 ground N")
    game.push_notation("die 5")  # two past home-9 on G8: he bounces it on, 3 squares
    table = TableSession(RULES, BOARD, NoBoard(), game=game)
    readings = table.tracker.expected_readings()
    table.tracker.observe(readings, 0.0)
    table.carry_out(table.core.redraw())
    assert table.game.position.status().highlights["options"][:3] == ("G11", "J11", "J8")
    assert table.leds["J8"] == HIGHLIGHTS["options"]
    readings["G8"], readings["J8"] = ("home-9",), ("ball",)
    table.tracker.observe(readings, 1.0)
    table.carry_out(table.core.settle(table.tracker.tick(2.0)))
    assert table.game.notations()[-1] == "bounce E"
    # A throw-in's thrower steps back in: the three squares across the line are lit.
    game = Game(RULES.from_text(
        "home=G2,C4,E3,I3,K4,G5,A9,E6,G8,I6,K7 away=G16,C14,E14,I14,K14,G13,C13,E13,G14,I13,K13 "
        "ball=A9 kicker=6 restart=throw"))
    game.push_notation("A9 inside NE1")
    table = TableSession(RULES, BOARD, NoBoard(), game=game)
    readings = table.tracker.expected_readings()
    table.tracker.observe(readings, 0.0)
    assert set(table.game.position.status().highlights["options"]) == {"B8", "B9"}
    readings["A9"], readings["B9"] = (), ("home-7",)
    table.tracker.observe(readings, 1.0)
    table.carry_out(table.core.settle(table.tracker.tick(2.0)))
    assert table.game.notations()[-1] == "in B9"


def test_the_turn_clock_counts_down_on_the_timer_lamps_and_times_out() -> None:
    table = clocked(turn_seconds=20)
    table.carry_out(table.core.count_time(100.0))
    assert table.clock()["turn"] == {"left": 20.0, "total": 20, "side": "home"}
    assert all(table.leds[f"timer-home-{k}"].pattern == "steady" for k in range(1, 6))
    table.carry_out(table.core.count_time(109.0))  # 11 s left: 3 of 5 lamps
    assert [f"timer-home-{k}" in table.leds for k in range(1, 6)] == [True] * 3 + [False] * 2
    table.carry_out(table.core.count_time(117.0))  # 3 s left: the last lamp, blinking red
    assert table.leds["timer-home-1"] == Led(RED, "blink") and "timer-home-2" not in table.leds
    table.carry_out(table.core.count_time(120.5))
    assert table.game.actions[-1] == Timeout()
    assert table.game.position.status().to_move == "away"
    table.carry_out(table.core.count_time(121.0))  # away's turn: its own 20 s
    assert table.clock()["turn"]["side"] == "away" and table.clock()["turn"]["left"] > 19
    assert "time" not in [c.__str__() for c in table.choices()]  # the clock's, not a choice


def test_the_turn_clock_waits_while_the_pieces_follow_a_roll() -> None:
    table = clocked(turn_seconds=20)
    table.carry_out(table.core.count_time(0.0))
    readings = table.tracker.expected_readings()
    readings["E6"], readings["E7"] = ("home-8",), ("ball",)
    table.tracker.observe(readings, 1.0)
    table.carry_out(table.core.settle(table.tracker.tick(2.0)))
    assert table.game.notations()[-1] == "E6 ground N"
    table.carry_out(table.core.die(3, 1, 3.0))
    assert table.tracker.view.state == "follow"
    table.carry_out(table.core.count_time(50.0))  # the pieces still follow: no time counted, nothing played
    assert table.clock()["turn"]["left"] == 20.0 and table.game.notations()[-1] == "die 3"


def test_a_charge_won_by_the_defence_starts_its_turn_afresh() -> None:
    game = Game(RULES.from_text(START + " options=turn_seconds=20"))
    for text in ("E6 ground N", "die 5", "keep", "G6-G7", "E12 charge E11", "die 5"):
        game.push_notation(text)
    table = TableSession(RULES, BOARD, NoBoard(), game=game)
    table.tracker.observe(table.tracker.expected_readings(), 0.0)
    table.carry_out(table.core.count_time(0.0))
    table.carry_out(table.core.count_time(12.0))
    assert table.clock()["turn"] == {"left": 8.0, "total": 20, "side": "away"}
    table.carry_out(table.core.die(2, 7, 12.5))  # the keeper's roll: the defender wins and is the offence now
    table.tracker.observe(table.tracker.expected_readings(), 13.0)  # the pieces followed
    table.carry_out(table.core.settle(table.tracker.tick(14.0)))
    table.carry_out(table.core.count_time(14.0))
    assert table.game.position.status().message.startswith("away, offence, action 1 of 2")
    assert table.clock()["turn"]["left"] == 20.0


def test_taking_back_an_action_of_the_turn_gives_no_time_back() -> None:
    table = clocked(turn_seconds=20)
    table.carry_out(table.core.count_time(0.0))
    table.carry_out(table.core.count_time(5.0))
    table.carry_out(table.core.button("takeback", 5.0))  # "keep" taken back: home-8 keeps the ball or lets it run again
    assert table.game.notations() == ["G8 inside SW2"] and table.tracker.view.state == "in-sync"
    table.carry_out(table.core.count_time(6.0))  # the same turn of the rules: its clock goes on
    assert table.clock()["turn"] == {"left": 14.0, "total": 20, "side": "home"}


def test_a_steal_under_the_beginner_rules_passes_the_turn() -> None:
    # One action a turn (「1ターンにつき、これら3つの中から1つ」): away-4 charges (away's turn)
    # and wins; that was away's play, so home moves next, now the defence, on a new turn clock.
    game = Game(RULES.from_text(
        "home=G2,C4,E3,I3,K4,G5,C8,E6,G6,E11,K7 away=G16,C14,E14,E7,K14,G13,C13,E13,G14,I13,K13 "
        "ball=E6 offence=home move=away options=rules=beginner,turn_seconds=20"))
    for text in ("E7 charge E6", "die 1"):
        game.push_notation(text)
    table = TableSession(RULES, BOARD, NoBoard(), game=game)
    table.tracker.observe(table.tracker.expected_readings(), 0.0)
    table.carry_out(table.core.count_time(0.0))
    table.carry_out(table.core.count_time(12.0))
    assert table.clock()["turn"] == {"left": 8.0, "total": 20, "side": "away"}
    turn = table.game.position.status().turn
    table.carry_out(table.core.die(1, 7, 12.5))  # the keeper's roll: a tie, the defender wins the ball
    table.tracker.observe(table.tracker.expected_readings(), 13.0)  # the pieces followed
    table.carry_out(table.core.settle(table.tracker.tick(14.0)))
    table.carry_out(table.core.count_time(14.0))
    status = table.game.position.status()
    assert status.message == "home, defence, action 1 of 1" and status.turn == turn + 1
    assert table.clock()["turn"] == {"left": 20.0, "total": 20, "side": "home"}


def test_the_page_says_who_decides_when_the_other_side_receives_a_kick() -> None:
    game = Game(RULES.from_text(START.replace("E12", "E9")))
    game.push_notation("E6 ground N")
    game.push_notation("die 3")  # stopped by away-4 on E9: he keeps it or lets it run
    table = TableSession(RULES, BOARD, NoBoard(), game=game)
    status = table.state()["status"]
    assert status["to_move"] == "home" and status["deciding"] == "away"
    assert status["message"].endswith("away-4 keeps the ball or lets it run (touch)")
    table.game.push_notation("keep")
    assert table.state()["status"]["deciding"] is None


def test_the_match_clock_goes_on_after_a_resume_and_the_turn_clock_starts_afresh(
        tmp_path: Path) -> None:
    game = Game(RULES.start(halves=1, turn_seconds=30))
    game.push_notation("G8 inside SW2")
    game.push_notation("keep")
    store = GameStore.new(tmp_path, "masume-tactics", {"Options": "halves=1 turn_seconds=30"})
    table = TableSession(RULES, BOARD, NoBoard(), game=game, store=store)
    table.tracker.observe(table.tracker.expected_readings(), 0.0)
    table.carry_out(table.core.count_time(0.0))
    table.carry_out(table.core.count_time(25.0))  # saved with the record every 10 s: a power cut now keeps 25 s
    table._checkpoint()  # (the table's thread saves after every tick)
    assert read_record(store.folder / "record.txt").headers["Clock"] == "half 1=25.0"
    table.carry_out(table.core.count_time(27.5))
    table.close()  # closing saves the clock as it stands
    assert read_record(store.folder / "record.txt").headers["Clock"] == "half 1=27.5"

    store, game = GameStore.resume(store.folder)
    table = TableSession(RULES, BOARD, NoBoard(), game=game, store=store)
    table.tracker.observe(table.tracker.expected_readings(), 0.0)
    table.carry_out(table.core.count_time(1000.0))  # the time the table was off does not count
    assert table.clock() == {"half 1": {"left": 32.5, "total": 60},
                             "turn": {"left": 30.0, "total": 30, "side": "home"}}
    table.carry_out(table.core.count_time(1010.0))
    assert table.clock()["half 1"]["left"] == 22.5
    table.close()


def test_the_match_clock_whistles_half_time_when_play_allows() -> None:
    table = clocked(halves=1)
    table.carry_out(table.core.count_time(0.0))
    table.carry_out(table.core.count_time(30.0))
    assert table.clock()["half 1"]["left"] == 30.0
    table.carry_out(table.core.count_time(61.0))
    assert table.game.actions[-1] == Whistle()
    assert table.game.position.status().message == "half time: away to kick off"
    assert table.clock() == {}  # no clock between the halves


def test_confirm_with_several_choices_says_to_use_the_web_view() -> None:
    table = clocked()
    before = list(table.game.actions)
    table.carry_out(table.core.button("confirm", 1.0))  # open play: nothing to confirm
    assert table.game.actions == before and table.notice == "nothing to confirm"
    table.carry_out(table.core.button("inside", 1.0))
    assert table.calling and "E8" in table.calling[1] and "E7" in table.calling[1]
    table.carry_out(table.core.button("lob", 1.0))
    assert table.calling[0] == "lob" and "E7" in table.calling[1]
    table.carry_out(table.core.button("ground", 1.0))
    table.carry_out(table.core.button("nonsense", 1.0))  # a word no action says: a message, the game goes on
    assert table.notice.startswith("nonsense: not now") and table.calling is None


# ---- `masume play masume-tactics` ------------------------------------------------------------


@pytest.mark.slow
def test_play_takes_the_options_saves_the_rolls_and_resumes(tmp_path: Path) -> None:
    from test_play import Play

    # The turn clock is the wall clock's: long enough that no turn of this test runs out
    # on a loaded machine (what is tested here is that the options are kept).
    play = Play("masume-tactics", "--simulate", "--no-web", "--games-dir", str(tmp_path),
                "--option", "turn_seconds=900", "--option", "goals_to_win=1")
    try:
        play.until("saving to ")
        for line in ("lift G8", "lift G8", "place G8 home-9", "lift E6", "place E6 ball",
                     "place E6 home-8"):
            play.command(line, 0.05)
        assert play.until("home: ") == "home: G8 inside SW2"
        play.command("press confirm")
        assert play.until("home: ") == "home: keep"
        play.command("press ground", 0.2)
        for line in ("lift E6", "lift E6", "place E6 home-8", "place E7 ball"):
            play.command(line, 0.05)
        assert play.until("home: ") == "home: E6 ground N"
        play.command("roll 2")
        assert play.until("home: ") == "home: die 2"
    finally:
        play.proc.kill()  # a power cut
        play.proc.wait()
    folder = next(tmp_path.iterdir())
    record = (folder / "record.txt").read_text()
    assert '[Options "turn_seconds=900 goals_to_win=1"]' in record
    assert '[Rolls "4=1"]' in record
    assert record.splitlines()[-1] == "G8 inside SW2, keep, E6 ground N, die 2"

    again = Play("masume-tactics", "--simulate", "--no-web", "--games-dir", str(tmp_path),
                 "--resume", "last")
    try:
        assert again.until("resuming ") == f"resuming {folder} after 4 actions"
        again.until("saving to ")
        # The pieces stand as the last save read them, as real ones would have stayed:
        # the ball still where the kick was called. It follows the roll (the lights
        # say where), then away moves on.
        from masume.records import read_record, resume

        layout = resume(read_record(folder / "record.txt")).position.layout()
        target = next(square for square, pieces in layout.items() if "ball" in pieces)
        again.command("lift E7", 0.05)
        again.command(f"place {target} ball")
        again.command("lift E11", 0.05)
        again.command("place E10 away-8")
        assert again.until("away: ") == "away: E11-E10"
    finally:
        again.stop()
    record = (folder / "record.txt").read_text()
    assert '[Rolls "4=1"]' in record and record.splitlines()[-1] == "E11-E10"


@pytest.mark.slow
@pytest.mark.browser
def test_a_kick_played_through_the_page(tmp_path: Path, chromium) -> None:
    """`masume play masume-tactics` in Chromium: the kick-off pass and keep, then a ground
    kick called with the page's button and the ball put down, the page's die, the path
    and the target lit, the ball put there, the record."""
    from browser import open_page
    from test_play import Page, Play, wait_state

    play = Play("masume-tactics", "--simulate", "--http-port", "0", "--games-dir", str(tmp_path),
                stdin=subprocess.DEVNULL)
    try:
        url = play.until("web view: ").split(": ", 1)[1]
        wait_state(url, lambda s: s["link"]["connected"] and s["tracker"]["state"] == "in-sync")
        with open_page(chromium, url, width=1300, height=1000) as (page, errors):
            hands = Page(page, url)
            page.wait_for_selector('[data-cell="G8"] .piece')

            def recorded(count: int) -> None:
                page.wait_for_function(
                    f"document.querySelectorAll('#moves .action').length === {count}")

            position = RULES.start()
            kick_off = position.parse_action("G8 inside SW2")
            hands.play(position, kick_off)
            position = position.apply(kick_off)
            recorded(1)
            page.click('[data-button="confirm"]')  # home-8 keeps it
            recorded(2)
            position = position.apply(position.parse_action("keep"))

            # The call: the ground button, then the ball put down one square north.
            page.click('[data-button="ground"]')
            page.wait_for_function(
                "document.querySelector('[data-cell=\"E7\"]').dataset.pattern === 'blink'")
            kick = position.parse_action("E6 ground N")
            hands.play(position, kick)
            recorded(3)
            page.wait_for_function("document.querySelector('#key').textContent.includes('line')")
            # The page's die: a 3.
            page.select_option("#roll-value", "3")
            page.click("#roll")
            recorded(4)
            page.wait_for_function(
                "document.querySelector('[data-cell=\"E9\"]').dataset.pattern === 'blink'")
            assert hands.led("E9") == ("#ffffff", "blink")  # where the ball must go
            assert hands.led("E7") == ("#ffffff", "pulse")  # where it is taken from
            assert hands.led("E8") == ("#6e4600", "steady")  # the path
            assert "ball's path: E7 E8 E9" in page.inner_text("#key")
            assert "ball E7\u2192E9" in page.inner_text("#tracker")
            page.screenshot(path=str(tmp_path / "kick.png"))
            hands.lift("E7")
            hands.place("E9", "ball")
            wait_state(url, lambda s: s["tracker"]["state"] == "in-sync")
            page.wait_for_function("!document.querySelector('#tracker').textContent")
            actions = [e.inner_text() for e in page.locator("#moves .action").all()]
            assert actions == ["G8 inside SW2", "keep", "E6 ground N", "die 3"]
            assert "away, defence, action 1 of 3" in page.inner_text("#message")
            assert errors == []
        record = next(tmp_path.glob("*/record.txt")).read_text()
        assert "G8 inside SW2, keep, E6 ground N, die 3" in record and '[Rolls "4=1"]' in record
    finally:
        play.stop()
