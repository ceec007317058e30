"""The table tells people what to do (issue 16): every refusal and mismatch comes with
a reason and a next step, in the terminal (``Effects.messages``), on the page (the
view model's tracker message) and on the board's LEDs (where to put what back, lit).

First the pure TableCore, fed readings by hand; then the same through the simulated
board (the firmware on the MicroPython VM over a real pty), its LEDs as the firmware
shows them.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from waiting import HANG_S

from masume.boards import load_board
from masume.games import load_rules
from masume.leds import WHITE, WRONG
from masume.link import BoardEvent, BoardSession, Led, NoBoard, SerialTransport
from masume.play.core import Effects, TableCore
from masume.play.table import TableSession
from masume.records import RecordError, check_record, parse_record, write_record
from masume.rules import Game

RULES = load_rules("soccer-shogi")
BOARD = load_board("soccer-shogi")


def core_at_start() -> tuple[TableCore, dict]:
    core = TableCore(RULES, BOARD, Game(RULES.start()))
    readings = core.tracker.expected_readings()
    core.tracker.observe(readings, 0.0)
    core.redraw()
    return core, readings


def settle(core: TableCore, readings: dict, now: float) -> Effects:
    core.tracker.observe(readings, now)
    return core.tick(now + 1.0)


def test_an_illegal_move_says_the_engines_reason_and_how_to_put_it_back() -> None:
    core, readings = core_at_start()
    readings["A7"], readings["A3"] = (), ("blue",)  # four squares: no step goes there
    effects = settle(core, readings, 1.0)
    view = core.tracker.view
    assert core.game.actions == [] and view.state == "mismatch"
    # The engine's own reason (its IllegalAction for A7-A3), then the hand movement.
    reason = RULES.start()
    with pytest.raises(ValueError) as refused:
        reason.parse_action("A7-A3")
    assert str(refused.value).split(": ", 1)[-1] in view.message
    assert view.message.endswith("to put it right: move blue from A3 to A7")
    assert effects.messages == [view.message]  # said once in the terminal
    # The LEDs: the misplaced piece blinks red, its square blinks white.
    assert core.leds["A3"] == Led(WRONG, "blink") and core.leds["A7"] == Led(WHITE, "blink")
    # Nothing more is said while the board stands so.
    assert core.tick(5.0).messages == []


def test_a_takeback_says_the_exact_hand_movements() -> None:
    core, readings = core_at_start()
    readings["A7"], readings["A6"] = (), ("blue",)
    settle(core, readings, 1.0)
    assert core.game.notations() == ["A7-A6"]
    effects = core.button("takeback", 3.0)
    assert [r[0] for r in effects.reports] == ["took back"]
    assert core.tracker.view.message == "take back A7-A6: move blue from A6 to A7"
    assert effects.messages == ["take back A7-A6: move blue from A6 to A7"]
    assert core.leds["A7"] == Led(WHITE, "blink") and core.leds["A6"] == Led(WRONG, "blink")
    readings["A7"], readings["A6"] = ("blue",), ()
    settle(core, readings, 4.0)
    assert core.tracker.view.state == "in-sync" and core.tracker.taken_back is None


def test_a_button_at_the_wrong_moment_says_why_and_what_instead() -> None:
    core, _ = core_at_start()
    effects = core.button("takeback", 1.0)
    assert effects.messages == ["takeback: nothing to take back yet"]
    # Resign asks first: a second press resigns, takeback plays on.
    effects = core.button("resign", 2.0)
    assert core.resigned is None
    asked = "resign for blue? press resign again to resign, takeback to play on"
    assert effects.messages == [asked]
    assert core.button("takeback", 2.5).messages == ["resign cancelled: play on"]
    core.button("resign", 2.6)
    assert core.button("resign", 2.7).messages == ["blue resigns: red wins (resignation)"]
    assert core.resigned == "blue"
    assert str(core.shown_position().outcome()) == "red wins (resignation)"
    effects = core.button("resign", 3.0)
    assert effects.messages and "press takeback to go back" in effects.messages[0]


def test_a_die_rolled_at_the_wrong_moment_says_what_the_game_waits_for() -> None:
    core, readings = core_at_start()
    effects = core.die(4, 1, 1.0)
    assert effects.messages and "not waiting for a roll" in effects.messages[0]
    assert "blue, action 1 of 2" in effects.messages[0]
    # On a board that does not match: the roll is refused with the fix.
    readings["A7"], readings["A3"] = (), ("blue",)
    settle(core, readings, 2.0)
    effects = core.die(4, 2, 5.0)
    assert "move blue from A3 to A7" in effects.messages[0]
    assert "then roll again" in effects.messages[0]


def test_the_page_shows_the_refusal_and_the_fix_together() -> None:
    table = TableSession(RULES, BOARD, NoBoard(), game=Game(RULES.start()))
    readings = table.tracker.expected_readings()
    table.tracker.observe(readings, 0.0)
    readings["A7"], readings["A3"] = (), ("blue",)
    table.tracker.observe(readings, 1.0)
    table.carry_out(table.core.settle(table.tracker.tick(2.0)))
    table.carry_out(table.core.die(2, 1, 3.0))
    message = table.state()["tracker"]["message"]
    assert message.startswith("die roll 2 (roll 1) ignored: ")
    assert "to put it right: move blue from A3 to A7" in message


def card_core(game: str, **options: str) -> tuple[TableCore, dict]:
    rules = load_rules(game)
    core = TableCore(rules, load_board(rules.board), Game(rules.start(**options)))
    readings = dict(core.tracker.expected_readings())
    core.tracker.observe(readings, 0.0)
    core.redraw()
    return core, readings


@pytest.mark.parametrize(("game", "options", "card", "cell", "reason"), [
    ("eyeshield21", {}, "F01.1", "away-character-1",
     "it may go to home-character-1, home-character-2, home-character-3, "
     "home-character-4, home-character-5 now"),
    ("magic-number-eleven", {"home_stars": "ST01/ST04/ST07", "away_stars": "ST02/ST05/ST08",
                             "home_bench": "H08/H09/H10", "away_bench": "A08/A09/A10"},
     "H01", "H4a", "it may go on H2a, H2b, H2c, H2d, H2e"),
])
def test_a_card_laid_where_it_may_not_go_says_the_engines_reason_and_the_fix(
        game: str, options: dict, card: str, cell: str, reason: str) -> None:
    core, readings = card_core(game, **options)
    copy = core.tracker.cards.copy(card)
    readings[cell] = copy.tag
    effects = settle(core, readings, 1.0)
    view = core.tracker.view
    assert view.state == "mismatch" and not core.game.actions
    assert reason in view.message  # the engine's own reason, the card called "it"
    assert view.message.endswith(f"; to put it right: take the card off {cell}")
    # The terminal is shared: the card laid is named to nobody there.
    (said,) = effects.messages
    assert said.startswith(f"a card is on {cell}: the game has no card there (")
    assert copy.card.name not in said and reason in said
    # Lit: the card to take off blinks red.
    assert core.leds[cell] == Led(WRONG, "blink")


def test_eyeshield21s_deal_says_where_the_guts_go_and_lights_it() -> None:
    core, readings = card_core("eyeshield21")
    for k, card in enumerate(("F01.1", "F02.1", "F03.1"), start=1):
        readings[f"home-character-{k}"] = core.tracker.cards.copy(card).tag
        settle(core, readings, float(k * 10))
    assert len(core.game.actions) == 3
    status = core.game.position.status()
    assert status.message.endswith("put 4 guts face down on home-guts (lit)")
    assert status.highlights["place"] == ("home-guts",)
    assert core.leds["home-guts"].rgb != (0, 0, 0)


# ---- through the simulated board ------------------------------------------------


@pytest.fixture
def on_board(make_sim, tmp_path: Path) -> Iterator[tuple[object, TableSession, list[str]]]:
    sim = make_sim("soccer-shogi")
    for square, pieces in RULES.start().layout().items():
        for piece in pieces:
            sim.place(square, piece)
    link = BoardSession(SerialTransport(sim.port), expect=BOARD.id,
                        resolve=lambda _id: BOARD).start()
    said: list[str] = []
    table = TableSession(RULES, BOARD, link, game=Game(RULES.start()), sim=sim,
                         on_message=said.append).start()
    wait(lambda: link.connected.is_set() and table.tracker.view.state == "in-sync",
         "the board to match", table)
    yield sim, table, said
    table.close()
    link.close()


def wait(check: Callable[[], bool], what: str, table: TableSession) -> None:
    deadline = time.monotonic() + HANG_S
    while not check():
        assert time.monotonic() < deadline, f"waited for {what}: {table.state()['tracker']}"
        time.sleep(0.02)


def shown(sim, square: str) -> Led | None:
    from masume_protocol.codec import PATTERNS

    rgb = sim.led_colours.get(square)
    if not rgb or not any(rgb):
        return None
    return Led(rgb, PATTERNS[sim.led_patterns.get(square, 1)])


def test_on_the_board_an_illegal_move_is_refused_with_its_reason_and_lit_fix(on_board) -> None:
    sim, table, said = on_board
    piece = sim.lift("A7")
    sim.place("A3", piece)
    wait(lambda: table.tracker.view.state == "mismatch", "the mismatch", table)
    wait(lambda: any("move blue from A3 to A7" in m for m in said), "the terminal line", table)
    wait(lambda: shown(sim, "A7") == Led(WHITE, "blink")
         and shown(sim, "A3") == Led(WRONG, "blink"), "the lit fix", table)
    assert "is not legal" in table.state()["tracker"]["message"]
    sim.place("A7", sim.lift("A3"))
    wait(lambda: table.tracker.view.state == "in-sync", "the board put right", table)
    assert table.game.actions == []
    # A takeback: played, taken back with the button, the hand movement said.
    sim.place("A6", sim.lift("A7"))
    wait(lambda: table.game.notations() == ["A7-A6"], "A7-A6", table)
    sim.press("takeback")
    wait(lambda: any(m == "take back A7-A6: move blue from A6 to A7" for m in said),
         "the takeback's hand movement", table)
    wait(lambda: shown(sim, "A7") == Led(WHITE, "blink"), "A7 lit", table)
    sim.place("A7", sim.lift("A6"))
    wait(lambda: table.tracker.view.state == "in-sync" and table.game.actions == [],
         "the board put back", table)


# ---- first use ----------------------------------------------------------------------


@pytest.mark.parametrize("game", ["soccer-shogi", "masume-tactics", "shogi-soccer",
                                  "eyeshield21", "magic-number-eleven"])
def test_an_empty_board_is_a_board_to_set_up_with_the_set_up_squares_lit(game: str) -> None:
    rules = load_rules(game)
    core = TableCore(rules, load_board(rules.board), Game(rules.start()))
    core.tracker.observe({}, 0.0)
    effects = core.redraw()
    view = core.tracker.view
    assert view.message.startswith("set up the pieces on the lit squares")
    assert view.put and set(view.put) == set(view.differing)
    assert "tag:" not in view.message  # a pile is "a card", not a tag
    assert effects.messages == [view.message]
    lit = [sq for sq in view.put if core.board.cell(sq).leds]
    assert all(core.leds[sq] == Led(WHITE, "blink") for sq in lit)
    # Said once: a piece put down does not say it again.
    square = view.put[0]
    readings = {square: core.tracker.expected_readings()[square]}
    core.tracker.observe(readings, 1.0)
    assert core.redraw().messages == []


MASUME = [sys.executable, "-m", "masume.cli"]


def play(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    games = str(tmp_path / "games")
    return subprocess.run([*MASUME, "play", "soccer-shogi", "--games-dir", games, *args],
                          capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, check=False)


def refused(result: subprocess.CompletedProcess[str], tmp_path: Path, says: str) -> None:
    assert result.returncode == 2, result
    assert "Traceback" not in result.stderr and says in result.stderr, result.stderr
    assert result.stderr.startswith("error: ")
    games = tmp_path / "games"
    assert not games.exists() or not any(games.rglob("*")), "a game folder was made"


def test_play_refuses_a_missing_serial_port_at_once(tmp_path: Path) -> None:
    result = play(tmp_path, "--port", str(tmp_path / "nonexistent"))
    refused(result, tmp_path, "is not there (unplugged?)")


def test_play_refuses_a_busy_serial_port(make_sim, tmp_path: Path) -> None:
    import serial

    sim = make_sim("soccer-shogi")
    holder = serial.Serial(sim.port, exclusive=True)  # another program has it
    try:
        result = play(tmp_path, "--port", sim.port, "--no-web")
    finally:
        holder.close()
    refused(result, tmp_path, f"cannot open {sim.port}")


def test_play_refuses_a_busy_web_port(tmp_path: Path) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        result = play(tmp_path, "--simulate", "--http-port", str(taken.getsockname()[1]))
    finally:
        taken.close()
    refused(result, tmp_path, "cannot serve the web view on 127.0.0.1:")
    assert "another --http-port" in result.stderr


# ---- ends and faults -----------------------------------------------------------------


def test_a_new_game_starts_afresh_in_a_new_folder(tmp_path: Path) -> None:
    from masume.storage import GameStore

    store = GameStore.new(tmp_path, "soccer-shogi", {"Blue": "Ann"})
    said: list[str] = []
    table = TableSession(RULES, BOARD, NoBoard(), game=Game(RULES.start()), store=store,
                         on_message=said.append)
    readings = table.tracker.expected_readings()
    table.tracker.observe(readings, 0.0)
    readings["A7"], readings["A6"] = (), ("blue",)
    table.tracker.observe(readings, 1.0)
    table.carry_out(table.core.settle(table.tracker.tick(2.0)))
    table.core.readings = readings  # as the board's events would have left them
    table.carry_out(table.core.button("resign", 3.0))
    table.carry_out(table.core.button("resign", 3.1))
    assert table.state()["outcome"] is not None
    table.new_game()
    assert table.game.actions == [] and table.state()["outcome"] is None
    assert table.store is not store and f"new game: saving to {table.store.folder}" in said
    assert table.store.headers.get("Blue") == "Ann" and "Resigned" not in table.store.headers
    assert "A7-A6" in (store.folder / "record.txt").read_text()
    # The board still shows A7-A6: the new game says how to put it back.
    assert table.tracker.view.state == "mismatch"
    assert table.tracker.view.message.endswith("to put it right: move blue from A6 to A7")


def test_a_lost_link_is_said_in_the_terminal(on_board) -> None:
    sim, table, said = on_board
    # Only what is said after the pull counts: on a loaded machine the simulated board
    # can fall silent past the link's timeout while it starts, and come back.
    before = len(said)
    sim.close()  # the cable pulled
    wait(lambda: any(m.startswith("lost the board's link") for m in said[before:]),
         "the lost link", table)
    assert table.state()["link"]["connected"] is False, (said, table.state()["link"])


def test_the_key_and_the_score_are_in_each_games_words() -> None:
    """The page's key names lamps and piles as people do, from the game's legend, and
    labels the score by what it counts (Eyeshield 21's: the cards left in each deck)."""
    def state(game: str) -> dict:
        rules = load_rules(game)
        return dict(TableSession(rules, load_board(rules.board), NoBoard(),
                                 game=Game(rules.start())).state())

    mne = state("magic-number-eleven")
    key = {h["meaning"]: h for h in mne["highlights"]}
    assert key["turn"]["label"] == "whose turn" and key["turn"]["places"] == ["away's lamp"]
    assert key["turn"]["rgb"] == [255, 30, 0]  # away's lamp in away's colour
    assert key["initiative"]["places"] == ["lamp 4 of 7: home normal, away normal"]
    assert mne["score_label"] == "score"
    eyeshield = state("eyeshield21")
    assert eyeshield["score_label"] == "cards left in deck"
    assert eyeshield["status"]["score"] == {"home": 40, "away": 40}
    (place,) = eyeshield["highlights"]
    assert place["label"] == "where the card may go"
    assert place["places"][0] == "home's character 1"


# ---- the clock -------------------------------------------------------------------------


def test_a_chess_clock_counts_the_side_to_move_is_saved_and_restored() -> None:
    core = TableCore(RULES, BOARD, Game(RULES.start()), {"Clock": "per side=60.0"})
    readings = core.tracker.expected_readings()
    core.tracker.observe(readings, 0.0)
    core.count_time(0.0)
    core.count_time(20.0)
    clock = core.clock()
    assert clock["blue clock"] == {"left": 40.0, "total": 60.0, "side": "blue", "running": True}
    assert clock["red clock"]["left"] == 60.0 and not clock["red clock"]["running"]
    headers = core.headers({})
    assert headers["Clock"] == "blue clock=20.0; per side=60.0; red clock=0.0"
    # Resumed: the clock goes on from the save.
    again = TableCore(RULES, BOARD, Game(RULES.start()), headers)
    assert again.side_seconds == 60.0 and again.clock()["blue clock"]["left"] == 40.0
    # No board yet: no time counts until its first snapshot is read.
    again.count_time(50.0)
    again.count_time(90.0)
    assert again.clock()["blue clock"]["left"] == 40.0
    again.handle(BoardEvent(seq=1, type="snapshot", readings=readings), 100.0)
    # The last 10 s: the running side's turn lamp blinks (a board without timer lamps).
    again.count_time(100.0)
    again.count_time(132.0)
    assert again.leds["turn-blue-1"].pattern == "blink"
    # Out of time: that side loses.
    effects = again.count_time(161.0)
    assert again.resigned == "blue"
    assert effects.messages == ["blue's time ran out: red wins (time)"]
    assert str(again.shown_position().outcome()) == "red wins (time)"
    # Recorded as a loss on time, which record check reads back as it.
    headers = again.headers({"Game": "soccer-shogi"})
    assert headers["Timeout"] == "blue" and "Resigned" not in headers
    record = parse_record(write_record(again.game, {**headers, "Result": "red wins (time)"}))
    assert str(check_record(record).outcome()) == "red wins (time)"
    wrong = parse_record(write_record(again.game, {**headers,
                                                   "Result": "red wins (resignation)"}))
    with pytest.raises(RecordError, match=r"the replay ends: red wins \(time\)"):
        check_record(wrong)
    # Resumed, it is still over on time.
    assert str(TableCore(RULES, BOARD, again.game, headers).shown_position().outcome()) == \
        "red wins (time)"


def test_a_resumed_clock_starts_once_the_board_is_read(make_sim, tmp_path: Path) -> None:
    """After a resume (``masume play --resume``) the players' clock stands still until the
    board's first snapshot is read: a board not yet connected costs nobody time."""
    from masume.storage import GameStore

    sim = make_sim("soccer-shogi")
    for square, pieces in RULES.start().layout().items():
        for piece in pieces:
            sim.place(square, piece)

    def session() -> BoardSession:
        return BoardSession(SerialTransport(sim.port), expect=BOARD.id, resolve=lambda _id: BOARD)

    def left(table: TableSession) -> float:
        return float(table.clock()["blue clock"]["left"])

    store = GameStore.new(tmp_path, "soccer-shogi", {"Clock": "per side=600.0"})
    link = session().start()
    table = TableSession(RULES, BOARD, link, game=Game(RULES.start()), store=store,
                         sim=sim).start()
    wait(lambda: table.tracker.view.state == "in-sync" and left(table) < 599.8,
         "blue's clock to run", table)
    table.close()  # saved: the clock and the link's place
    link.close()
    store, game = GameStore.resume(store.folder)
    saved = float(store.headers["Clock"].split("blue clock=")[1].split(";")[0])

    link = session()  # not started: the board is not connected yet
    table = TableSession(RULES, BOARD, link, game=game, store=store, sim=sim)
    ticks: list[float] = []
    tick = table.core.tick
    table.core.tick = lambda now, board_now=None: (ticks.append(now), tick(now, board_now))[1]
    table.start()
    try:
        wait(lambda: len(ticks) >= 20, "twenty ticks of the table without a board", table)
        assert not table.tracker.board_read
        assert left(table) == pytest.approx(600.0 - saved, abs=0.1)  # unchanged
        connecting = time.monotonic()
        link.start()
        wait(lambda: table.tracker.board_read, "the board's first snapshot", table)
        wait(lambda: left(table) < 600.0 - saved - 0.1, "the clock to run again", table)
        # Only the time since the board was connected counts, none of the ticks before.
        counted = 600.0 - left(table) - saved
        assert counted <= time.monotonic() - connecting + 0.1, (counted, ticks[-1] - ticks[0])
    finally:
        table.close()
        link.close()


def test_play_takes_a_clock(tmp_path: Path) -> None:
    from masume.records import read_record

    games = tmp_path / "games"
    proc = subprocess.run([*MASUME, "play", "soccer-shogi", "--simulate", "--no-web",
                           "--clock", "5", "--games-dir", str(games)], input="quit\n",
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    (folder,) = games.iterdir()
    clock = read_record(folder / "record.txt").headers["Clock"]
    assert "per side=300.0" in clock and "blue clock=" in clock


@pytest.mark.parametrize("command", ["play", "sim", "cards", "club", "record", "board", "bench"])
def test_help_is_plain_words(command: str) -> None:
    """``--help`` prints words, not the reStructuredText marks of the docstrings."""
    proc = subprocess.run([*MASUME, command, "--help"], capture_output=True, text=True,
                          timeout=60, check=True)
    assert "`" not in proc.stdout and ":class:" not in proc.stdout, proc.stdout
