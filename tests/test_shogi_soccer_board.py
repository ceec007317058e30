"""Shogi-piece soccer on its table: the guided set-up, passes in a second colour,
ejections taken off the board, checkmate shown, and choices the board cannot see.

The table senses identities (a tag in every piece and in the ball), so the tracker
follows each piece from the set-up on. These tests move pieces by hand on readings
(as test_tracker.py does) and drive a TableSession over a fake link.
"""

from __future__ import annotations

import pytest
from masume.boards import load_board
from masume.games import load_rules
from masume.leds import AMBER, GREEN, RED, WHITE, WRONG, highlight_led, picture
from masume.link import Led, NoBoard
from masume.play.table import TableSession
from masume.rules import Game, Position
from masume.rules.shogi_soccer import Declare, Move, Pass, Place
from masume.tracker import Tracker
from test_tracker import Hands

RULES = load_rules("shogi-soccer")
HIGHLIGHTS = {meaning: highlight_led(meaning, RULES.start().legend)
              for meaning in RULES.start().legend.highlights}
BOARD = load_board("shogi-soccer")
SYSTEM = "システム 3-4-3 飛歩歩-角歩歩歩-桂桂歩"
#: The set-up of the engine's own example (host/masume/rules/shogi_soccer/__init__.py).
SENTE_SETUP = ("5-K王打", "5-F角打", "3-H歩打", "7-H歩打", "5-H歩打", "4-K飛打",
               "2-K歩打", "7-K歩打", "2-C桂打", "6-C桂打", "4-C歩打")
GOTE_SETUP = ("5-AGK打", "6-ARO打", "3-APA打", "7-APA打", "4-DBI打", "2-DPA打",
              "6-DPA打", "8-DPA打", "2-INI打", "8-INI打", "4-IPA打")


def piece_of(action: Place) -> str:
    return f"{action.side}-{action.kind}"


def tracked(position: Position) -> tuple[Game, Tracker, Hands]:
    game = Game(position)
    tracker = Tracker(game, BOARD)
    return game, tracker, Hands(tracker)


def after(*texts: str) -> Position:
    game = Game(RULES.start())
    for text in texts:
        game.push_notation(text)
    return game.position


def leds(game: Game, tracker: Tracker) -> dict[str, Led]:
    return picture(BOARD, game.position, tracker.view)


# ---- the guided set-up ------------------------------------------------------------


def test_every_placement_is_read_one_piece_at_a_time() -> None:
    game, tracker, hands = tracked(after(SYSTEM))
    for k, text in enumerate(SENTE_SETUP + GOTE_SETUP):
        position = game.position
        action = position.parse_action(text)
        assert isinstance(action, Place)
        # The squares where the side may place now are lit, this one among them.
        shown = leds(game, tracker)
        assert shown[action.square] == HIGHLIGHTS["setup"]
        assert set(position.status().highlights["setup"]) == {
            sq for sq, led in shown.items() if led == HIGHLIGHTS["setup"]}
        hands.place(action.square, piece_of(action))
        change = hands.settle()
        assert change.pushed == (action,), f"placement {k + 1}: {text}"
        assert tracker.view.state == "in-sync"
    assert game.position.status().message == "sente: kick-off pass from 5-F to a team-mate"
    # The kick-off piece stands on the ball on 5-F; both are read there.
    assert tracker.expected_readings()["5-F"] == ("ball", "sente-bishop")


def test_a_piece_placed_outside_the_lit_squares_is_flagged_not_recorded() -> None:
    game, tracker, hands = tracked(after(SYSTEM))
    hands.place("5-E", "sente-pawn")  # midfield row E: not one of sente's set-up rows
    assert hands.settle().pushed == ()
    assert tracker.view.state == "mismatch" and tracker.view.placed == ("5-E",)
    assert leds(game, tracker)["5-E"] == Led(WRONG, "blink")
    hands.lift("5-E")
    hands.settle()
    assert tracker.view.state == "in-sync" and game.actions == []


# ---- lifting: moves green, passes in the second colour --------------------------


def test_lifting_the_kick_off_piece_lights_its_passes_in_the_second_colour() -> None:
    game, tracker, hands = tracked(after(SYSTEM, *SENTE_SETUP, *GOTE_SETUP))
    hands.lift("5-F")  # the bishop; the ball stays under it on the square
    view = tracker.view
    assert view.state == "lifted"
    # The kick-off is a pass to a team-mate: only the ball may go, so every
    # destination is a pass, lit in the second colour.
    assert set(view.destinations["5-F"]) == {"2-C", "3-H", "7-H"}
    assert set(view.sent["5-F"]) == {"2-C", "3-H", "7-H"}
    shown = leds(game, tracker)
    assert shown["5-F"] == Led(WHITE, "pulse")
    assert shown["3-H"] == Led(AMBER)
    # Pass: bishop back, the ball to the pawn on 3-H.
    hands.lift("5-F", "ball")
    hands.place("5-F", "sente-bishop")
    hands.place("3-H", "ball")
    change = hands.settle()
    assert [str(a) for a in change.pushed] == ["3-Hパス(5-F)"]
    assert tracker.view.state == "in-sync"


def test_a_ball_holder_shows_its_moves_green_and_its_passes_in_the_second_colour() -> None:
    # Sente's rook holds the ball on 5-H; a pawn of sente on 3-H takes passes.
    game, tracker, hands = tracked(RULES.from_text("4k4/9/9/9/9/9/9/2P1R4/9/9/4K4 sente play 5-H - -"))
    position = game.position
    moves = {a.target for a in position.legal_actions() if isinstance(a, Move) and a.origin == "5-H"}
    passes = {a.target for a in position.legal_actions() if isinstance(a, Pass) and a.origin == "5-H"}
    assert moves and passes
    hands.lift("5-H")  # the rook; the ball stays on the square
    view = tracker.view
    assert set(view.destinations["5-H"]) == moves | passes
    assert set(view.sent["5-H"]) == passes - moves
    shown = leds(game, tracker)
    for square in moves:
        assert shown[square] == Led(GREEN), square
    for square in passes - moves:
        assert shown[square] == Led(AMBER), square


def test_a_knight_jumps_and_is_read_as_one_move() -> None:
    game, tracker, hands = tracked(after(SYSTEM, *SENTE_SETUP, *GOTE_SETUP, "3-Hパス"))
    position = game.position
    knight = next(a for a in position.legal_actions()
                  if isinstance(a, Move) and a.kind == "knight")
    hands.lift(knight.origin)
    assert knight.target in tracker.view.destinations[knight.origin]
    hands.place(knight.target, f"{knight.side}-knight")
    assert hands.settle().pushed == (knight,)
    assert "桂" in position.notation(knight)


# ---- ejection -----------------------------------------------------------------------


def ejection_position() -> tuple[Position, Move]:
    """Sente's rook with the ball on 5-H, a gote pawn in its way on 5-E."""
    position = RULES.from_text("4k4/9/9/9/4p4/9/9/4R4/9/9/4K4 sente play 5-H - -")
    action = next(a for a in position.legal_actions()
                  if isinstance(a, Move) and a.target == "5-E")
    return position, action


def test_an_ejection_is_read_with_the_ejected_piece_still_there_then_asked_off() -> None:
    position, ejection = ejection_position()
    game, tracker, hands = tracked(position)
    hands.lift("5-H")
    assert "5-E" in tracker.view.destinations["5-H"]
    hands.lift("5-H", "ball")
    # The rook and the ball go onto the pawn's square, the pawn still under them.
    hands.place("5-E", "ball")
    hands.place("5-E", "sente-rook")
    change = hands.settle()
    assert change.pushed == (ejection,)
    assert tracker.view.state == "remove" and tracker.view.differing == ("5-E",)
    assert "5-E" in tracker.view.message
    assert game.position.status().highlights["eject"] == ("5-E",)
    assert leds(game, tracker)["5-E"] == Led(RED, "pulse")
    # Waiting for the pawn to go is no new action.
    assert hands.settle().pushed == ()
    hands.lift("5-E", "gote-pawn")
    assert hands.settle() .pushed == ()
    assert tracker.view.state == "in-sync"
    assert "gote-pawn" not in game.position.layout().get("5-E", ())


def test_an_ejected_piece_taken_off_first_is_the_same_ejection() -> None:
    position, ejection = ejection_position()
    game, tracker, hands = tracked(position)
    hands.lift("5-E")  # the pawn off first
    hands.lift("5-H")
    hands.lift("5-H", "ball")
    hands.place("5-E", "ball")
    hands.place("5-E", "sente-rook")
    assert hands.settle().pushed == (ejection,)
    assert tracker.view.state == "in-sync"


def test_a_piece_left_behind_that_the_action_did_not_remove_is_a_mismatch() -> None:
    position, _ = ejection_position()
    game, tracker, hands = tracked(position)
    # The rook moves one square with the ball, and a stray gote pawn is put by it.
    step = next(a for a in position.legal_actions() if isinstance(a, Move) and a.target == "5-G")
    hands.lift("5-H")
    hands.lift("5-H", "ball")
    hands.place("5-G", "ball")
    hands.place("5-G", "sente-rook")
    hands.place("5-G", "gote-pawn")
    assert hands.settle().pushed == ()
    assert tracker.view.state == "mismatch"
    hands.lift("5-G", "gote-pawn")
    assert hands.settle().pushed == (step,)


# ---- checkmate and goal ------------------------------------------------------------


def test_checkmate_is_shown_on_the_checkmated_keeper_and_the_winners_turn_light() -> None:
    # Figure 6 of the seed: the pass to 5-B mates.
    game, tracker, hands = tracked(RULES.from_text("4k4/4P4/6N2/2B6/9/9/9/9/9/9/4K4 sente play 3-D - -"))
    hands.lift("3-D")
    assert "5-B" in tracker.view.sent["3-D"]
    hands.lift("3-D", "ball")
    hands.place("3-D", "sente-bishop")
    hands.place("5-B", "ball")
    assert [str(a) for a in hands.settle().pushed] == ["5-Bパス(3-D)"]
    assert str(game.position.outcome()) == "sente wins (checkmate)"
    shown = leds(game, tracker)
    assert shown["5-A"] == HIGHLIGHTS["checkmate"]
    assert shown["turn-sente"].pattern == "blink" and "turn-gote" not in shown
    assert "checkmated" in game.position.status().message


def test_a_goal_lights_the_goal_mouth() -> None:
    # The rook on 5-G has a clear line to goal-A (the keeper stands aside on 4-A).
    position = RULES.from_text("3k5/9/9/9/9/9/4R4/9/9/9/4K4 sente play 5-G - -")
    game, tracker, hands = tracked(position)
    hands.lift("5-G")
    assert "goal-A" in tracker.view.sent["5-G"]
    hands.lift("5-G", "ball")
    hands.place("5-G", "sente-rook")
    hands.place("goal-A", "ball")
    assert [str(a) for a in hands.settle().pushed] == ["シュート(5-G)"]
    assert game.position.outcome().reason == "goal"
    assert leds(game, tracker)["goal-A"] == HIGHLIGHTS["goal"]


# ---- choices: what the board cannot see -------------------------------------------




def table_at(position: Position) -> tuple[TableSession, list[tuple[str, str, str]]]:
    reported: list[tuple[str, str, str]] = []
    table = TableSession(RULES, BOARD, NoBoard(), game=Game(position),
                         on_action=lambda *a: reported.append(a))
    table.tracker.observe(table.tracker.expected_readings(), 0.0)
    return table, reported


def test_declaring_a_system_is_a_choice_and_is_recorded_like_any_action() -> None:
    table, reported = table_at(RULES.start())
    choices = table.choices()
    assert len(choices) == 1501 and all(isinstance(c, Declare) for c in choices)
    listed = table.state()["choices"]
    assert len(listed) == 1501 and {"text": SYSTEM} in listed
    action = table.act(SYSTEM)
    assert str(action) == SYSTEM
    assert table.game.actions == [action]
    assert reported == [("played", "gote", SYSTEM)]
    # Now the set-up: placements are made with the pieces, so no choices.
    assert table.choices() == [] and table.state()["choices"] == []
    assert table.state()["moves"][0]["actions"] == [SYSTEM]
    assert table.state()["leds"]  # the set-up squares are lit


@pytest.mark.parametrize("text, why", [
    ("システム 9-9-9 飛", "システム"),
    ("nonsense", "nonsense"),
])
def test_act_refuses_what_is_not_an_action(text: str, why: str) -> None:
    table, _ = table_at(RULES.start())
    with pytest.raises(ValueError, match=why):
        table.act(text)
    assert table.game.actions == []


def test_act_refuses_an_action_made_with_the_pieces() -> None:
    table, _ = table_at(after(SYSTEM))
    with pytest.raises(ValueError, match="moving the pieces"):
        table.act("5-K王打")
    assert table.game.actions == []


def test_no_choices_while_the_board_does_not_match() -> None:
    table, _ = table_at(RULES.start())
    readings = table.tracker.expected_readings()
    readings["5-E"] = ("sente-pawn",)
    table.tracker.observe(readings, 1.0)
    table.tracker.tick(5.0)
    assert table.tracker.view.state == "mismatch"
    assert table.state()["choices"] == []
    with pytest.raises(ValueError, match="does not match"):
        table.act(SYSTEM)


def test_takeback_undoes_a_declared_choice() -> None:
    table, _ = table_at(RULES.start())
    table.act(SYSTEM)
    change = table.tracker.takeback()
    assert [str(a) for a in change.popped] == [SYSTEM]
    assert len(table.choices()) == 1501


# ---- `masume play shogi-soccer` in Chromium --------------------------------------


#: A square lit red (any brightness), pulsing: an ejection to take off, or just done.
RED_PULSE = """(square) => {
    const cell = document.querySelector(`[data-cell="${square}"]`);
    return cell.dataset.pattern === "pulse" && /^#[0-9a-f]{2}0000$/.test(cell.dataset.led || "");
}"""


@pytest.mark.slow
@pytest.mark.browser
def test_set_up_and_an_ejection_played_by_clicking(tmp_path, chromium) -> None:
    """The system declared on the choices panel, both sides set up by clicking the
    lit squares, the kick-off pass (its squares in the second colour) and a
    knight's ejection, the ejected pawn asked off the board and taken off."""
    import subprocess

    from browser import open_page
    from test_play import Page, Play, wait_state

    play = Play("shogi-soccer", "--simulate", "--http-port", "0", "--games-dir", str(tmp_path),
                stdin=subprocess.DEVNULL)
    try:
        url = play.until("web view: ").split(": ", 1)[1]
        wait_state(url, lambda s: s["link"]["connected"] and s["tracker"]["state"] == "in-sync")
        with open_page(chromium, url, width=1300, height=1000) as (page, errors):
            hands = Page(page, url)
            page.wait_for_selector('[data-cell="5-F"] .piece')
            done = 0

            def recorded() -> None:
                nonlocal done
                done += 1
                page.wait_for_function(
                    f"document.querySelectorAll('#moves .action').length === {done}")

            # The system: 1,503 choices, narrowed by typing, chosen with Enter.
            page.wait_for_selector("#choice-form:not([hidden])")
            assert "1489 more of 1501" in page.inner_text("#choices-more")
            page.fill("#choice-text", "3-4-3 飛歩歩-角歩歩歩-桂桂歩")
            page.wait_for_function("document.querySelectorAll('#choices [data-choice]').length === 1")
            page.press("#choice-text", "Enter")
            recorded()
            page.wait_for_selector("#choices-card[hidden]", state="attached")

            # The set-up: each piece from the box onto a lit square.
            position = after(SYSTEM)
            for text in SENTE_SETUP + GOTE_SETUP:
                action = position.parse_action(text)
                # Lit before it is placed (the LEDs follow the moves list closely).
                page.wait_for_selector(f'[data-cell="{action.square}"][data-led]')
                hands.place(action.square, piece_of(action))
                recorded()
                position = position.apply(action)
            assert page.get_attribute('[data-cell="5-F"]', "data-pieces") == "ball sente-bishop"

            # Lifting the kick-off bishop: its passes in the second colour.
            hands.lift("5-F")
            page.wait_for_function(
                "document.querySelector('[data-cell=\"2-C\"]').dataset.led !== undefined")
            pass_colour = hands.led("2-C")
            assert pass_colour == hands.led("3-H") == hands.led("7-H")
            assert pass_colour[1] == "steady"
            hands.place("5-F", "sente-bishop")
            page.wait_for_function(
                "!document.querySelector('[data-cell=\"2-C\"]').dataset.led")
            kick_off = position.parse_action("2-Cパス")
            hands.play(position, kick_off)
            recorded()
            position = position.apply(kick_off)

            # The knight jumps onto the pawn on 3-A with the ball: read at once,
            # the pawn asked off the board.
            hands.lift("2-C")
            page.wait_for_function(
                "document.querySelector('[data-cell=\"3-A\"]').dataset.led !== undefined")
            hands.lift("2-C")
            hands.place("3-A", "ball")
            hands.place("3-A", "sente-knight")
            recorded()
            page.wait_for_function("document.querySelector('#tracker').textContent.includes('take off')")
            page.wait_for_function(RED_PULSE, arg="3-A")
            assert "3-A" in page.inner_text("#tracker")
            # Taken off (the page's hand lifts top pieces: knight, ball, pawn).
            for _ in range(3):
                hands.lift("3-A")
            hands.place("3-A", "ball")
            hands.place("3-A", "sente-knight")
            current = wait_state(url, lambda s: s["tracker"]["state"] == "in-sync")
            assert current["pieces"]["3-A"] == ["ball", "sente-knight"]
            # The ejection stays shown (red, pulsing) until gote moves.
            page.wait_for_function(RED_PULSE, arg="3-A")
            actions = [e.inner_text() for e in page.locator("#moves .action").all()]
            assert actions[0] == SYSTEM and len(actions) == 25
            assert actions[-2:] == ["2-Cパス", "3-A桂"]
            page.screenshot(path=str(tmp_path / "ejection.png"))
            assert errors == []
        record = next(tmp_path.glob("*/record.txt")).read_text()
        assert SYSTEM in record and "3-A桂" in record
    finally:
        play.stop()
    # The actions as the terminal printed them, in order (the table's notices, such as a
    # mismatch read while the hands were between two pieces on a loaded machine, may
    # fall between them).
    printed = [line for line in play.printed().splitlines()
               if line.startswith(("sente: ", "gote: "))]
    assert printed[-2:] == ["sente: 2-Cパス", "sente: 3-A桂"], printed
