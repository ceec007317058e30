"""Masume Soccer Tactics rules engine: one group of tests per section of the seed text
(seed 000, docs/rules/masume-tactics.md), its worked examples (the kick diagrams, inside
versus ground, the lob and header, the post), and property tests of random play with
random rolls."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from masume.games import load_rules
from masume.records import read_record, replay
from masume.rules import Game, IllegalAction, NotationError
from masume.rules.masume_tactics import (
    PITCH,
    SQUARE_INDEX,
    TOUCH,
    Charge,
    Kick,
    Move,
    Position,
    Restart,
    Roll,
    Timeout,
    Whistle,
    impossible,
    parse_notation,
)
from test_records import expected_failure

RULES = load_rules("masume-tactics")
RECORDS = Path(__file__).parent / "records" / "masume-tactics"

#: Default spare squares: players not named in a test stand here, out of the way.
HOME_SPARE = ["B2", "C2", "D2", "B3", "C3", "B4", "C4", "B5", "C5", "B6", "C6", "D5", "D4", "K2", "L2", "K3"]
AWAY_SPARE = ["L15", "K15", "J16", "L14", "K14", "L13", "K13", "L12", "K12", "L11", "K11", "J12", "J11", "B15",
              "C15", "B14"]


def setup(home: dict[int, str], away: dict[int, str], ball: str, *, offence: str = "home",
          move: str | None = None, action: int = 1, extra: str = "", options: str = "",
          away_spare: list[str] | None = None) -> Position:
    """A position: ``home``/``away`` map shirt numbers to squares; the others stand aside."""
    squares = {"home": [], "away": []}
    for side, named, spare in (("home", home, HOME_SPARE), ("away", away, away_spare or AWAY_SPARE)):
        taken = set(named.values()) | set(home.values()) | set(away.values())
        free = [s for s in spare if s not in taken]
        for shirt in range(1, 12):
            squares[side].append(named[shirt] if shirt in named else free.pop(0))
    text = (f"home={','.join(squares['home'])} away={','.join(squares['away'])} ball={ball} "
            f"offence={offence} move={move or offence} action={action} {extra}")
    if options:
        text += f" options={options}"
    return RULES.from_text(text)


def play(position: Position, *texts: str) -> Position:
    for text in texts:
        position = position.apply(position.parse_action(text))
    return position


def where(position: Position, square: str) -> tuple[str, ...]:
    return position.layout().get(square, ())


# --------------------------------------------------------------------------- registry, board


def test_load_rules_finds_the_engine() -> None:
    rules = load_rules("masume-tactics")
    assert rules is RULES and rules.board == "masume-tactics"
    assert rules.start().game == "masume-tactics"


def test_piece_and_square_names_match_the_board() -> None:
    from masume.boards import load_board
    from masume.rules.masume_tactics import PIECE_NAMES, SQUARE_NAMES

    board = load_board("masume-tactics")
    assert set(PIECE_NAMES) | {"ball"} == set(board.pieces)
    sensed = {c.name for c in board.cells if c.sensor != "none"}
    assert set(SQUARE_NAMES.values()) == sensed  # pitch, touch files A and M, both goals
    layout = RULES.start().layout()
    assert {p for stack in layout.values() for p in stack} == set(board.pieces)


# --------------------------------------------------------------------------- kick-off


def test_kick_off_formation() -> None:
    start = RULES.start()
    layout = start.layout()
    assert layout["G8"] == ("ball", "home-9")
    home = [SQUARE_INDEX[s] for s, p in layout.items() if p[-1].startswith("home")]
    away = [SQUARE_INDEX[s] for s, p in layout.items() if p[-1].startswith("away")]
    assert len(home) == len(away) == 11
    assert all(s // 13 <= 8 for s in home) and all(s // 13 >= 9 for s in away)
    circle = {SQUARE_INDEX[s] for s in ("F9", "G9", "H9", "F10", "G10", "H10")}
    assert not circle & set(away)
    assert start.status().actions_per_turn == 2
    assert RULES.start(first="away").layout()["G9"] == ("ball", "away-9")


def test_kick_off_starts_with_the_pass_and_the_kicker_waits() -> None:
    start = RULES.start()
    assert {type(a) for a in start.legal_actions()} == {Kick}
    with pytest.raises(IllegalAction, match="must take the kick"):
        play(start, "E6-E7")
    after = play(start, "G8 inside SW2", "touch N")  # home-8 lets it run to E7
    assert where(after, "E7") == ("ball",)
    assert after.status().action_number == 2
    # The kick-off taker may not touch the ball before another player has: not the case here
    # (home-8 touched it), so G8 may go on; a fresh kick-off into space bans him.
    alone = play(start, "G8 inside N1")
    assert where(alone, "G9") == ("ball",)
    assert not alone.is_legal(Move("G8", "G9"))
    assert alone.is_legal(Move("G8", "F9"))


def test_free_lineup_option() -> None:
    start = RULES.start(lineup=True)
    assert start.status().message == "home: set up your formation (own half), then ready"
    with pytest.raises(IllegalAction, match="own half"):
        play(start, "C4>C9")
    with pytest.raises(IllegalAction, match="centre mark"):
        play(start, "G8>G7")
    home = play(start, "C4>F7", "ready")  # the kicking side may use the centre circle
    assert home.status().to_move == "away"
    with pytest.raises(IllegalAction, match="centre circle"):
        play(home, "C13>G10")
    ready = play(home, "C13>C9", "ready")
    assert ready.status().message == "home, offence, action 1 of 2: kick-off by home-9 on G8"
    assert where(ready, "F7") == ("home-2",) and where(ready, "C9") == ("away-2",)
    scored = play(setup({9: "G11"}, {}, "G11", options="lineup=true"), "G11 ground N", "die 6", "restart")
    assert scored.pending[:3] == ("lineup", 1, "k")


def test_goal_and_restart_by_the_side_that_conceded() -> None:
    position = setup({9: "G11"}, {}, "G11")
    scored = play(position, "G11 ground N", "die 6")
    assert scored.score == (1, 0)
    assert scored.status().highlights["goal"] == ("G17",)
    assert list(scored.legal_actions()) == [Restart()]
    restarted = scored.apply(Restart())
    assert restarted.layout()["G9"] == ("ball", "away-9")
    assert restarted.status().to_move == "away" and restarted.score == (1, 0)


def test_first_goal_wins_option() -> None:
    position = setup({9: "G11"}, {}, "G11", options="goals_to_win=1")
    over = play(position, "G11 ground N", "die 6")
    assert over.outcome().winner == "home" and over.outcome().reason == "goals"
    assert list(over.legal_actions()) == []


def test_halves_and_the_whistle() -> None:
    start = RULES.start(halves=20)
    assert start.is_legal(Whistle())
    half = start.apply(Whistle())
    assert half.status().to_move == "away"
    second = half.apply(Restart())
    assert second.layout()["G9"] == ("ball", "away-9")
    no_shootout = RULES.from_text(second.to_text(), shootout=False)
    full = no_shootout.apply(Whistle())
    assert full.outcome().winner is None and full.outcome().reason == "full time"
    assert RULES.from_text(full.to_text()) == full
    assert not RULES.start().is_legal(Whistle())


def test_penalty_shoot_out_after_a_draw() -> None:
    position = RULES.start(halves=45).apply(Whistle()).apply(Restart()).apply(Whistle())
    assert position.outcome() is None
    status = position.status()
    assert status.to_move == "away" and "keeper chooses" in status.message  # away's keeper, home kicks first
    # home scores (away's keeper covers 1-2 on H17), away misses (home's keeper on G1 covers 3-4) ...
    for _ in range(3):
        position = play(position, "guard H16", "die 6", "guard G1", "die 3")
    assert position.outcome() is not None  # 3-0 with two kicks each left: decided
    assert position.outcome().winner == "home" and position.outcome().reason == "penalty shoot-out 3-0"
    assert RULES.from_text(position.to_text()) == position


def test_penalty_shoot_out_sudden_death() -> None:
    position = RULES.start(halves=45).apply(Whistle()).apply(Restart()).apply(Whistle())
    for _ in range(5):
        position = play(position, "guard H16", "die 6", "guard G1", "die 6")
    assert position.outcome() is None and "5-5" in position.status().message
    position = play(position, "guard H16", "die 1", "guard G1", "die 6")
    assert position.outcome().winner == "away"


# --------------------------------------------------------------------------- turns and roles


def test_offence_two_actions_no_player_moves_twice_but_may_move_and_kick() -> None:
    position = setup({7: "F6", 8: "H6"}, {}, "F6")
    after = play(position, "F6-F7")  # a dribble
    assert where(after, "F7") == ("ball", "home-7")
    assert not after.is_legal(Move("F7", "F8"))
    with pytest.raises(IllegalAction, match="already moved"):
        play(after, "F7-F8")
    assert after.is_legal(Kick("F7", "inside", "E", 2))
    done = play(after, "H6-H7")
    assert done.status().to_move == "away" and done.status().actions_per_turn == 3


def test_leaving_the_ball() -> None:
    position = setup({7: "F6"}, {}, "F6")
    after = play(position, "F6-F7 leave")
    assert where(after, "F6") == ("ball",) and where(after, "F7") == ("home-7",)
    with pytest.raises(IllegalAction):
        play(setup({7: "F6", 8: "H6"}, {}, "F6"), "H6-H7 leave")


def test_defence_three_actions_one_per_player() -> None:
    position = setup({7: "F6"}, {4: "J10", 5: "I10"}, "F6", move="away")
    assert position.status().message == "away, defence, action 1 of 3"
    after = play(position, "J10-J9", "I10-I9")
    assert not after.is_legal(Move("J9", "J8"))
    assert play(after, "K15-K16").status().to_move == "home"


def test_loose_ball_changes_nothing_until_a_defender_keeps_it() -> None:
    position = setup({7: "F6"}, {4: "F9"}, "F8", move="away")
    assert position.status().to_move == "away"
    after = play(position, "F9-F8")  # the defence picks the loose ball up
    status = after.status()
    assert status.to_move == "away" and status.message == "away, offence, action 1 of 2"


def test_steal_on_the_second_defence_action_starts_a_fresh_offence_turn() -> None:
    position = setup({7: "F6"}, {4: "J10", 5: "F9"}, "F8", move="away")
    after = play(position, "J10-J9", "F9-F8")
    assert after.offence == 1 and after.status().action_number == 1
    # The seed's example: ① moved on the defence's first action and may play again at once,
    # to reach ②'s pass.
    assert after.is_legal(Move("J9", "J8"))
    passed = play(after, "J9-J8", "F8 inside E2")  # two actions: away's turn is over
    assert passed.status().to_move == "home" and passed.status().actions_per_turn == 3


# --------------------------------------------------------------------------- ground kicks


@pytest.mark.parametrize("die, square, result", [
    (1, "G7", ("ball",)), (2, "G8", ("ball",)),  # short: loose before him
    (3, "G9", ("ball", "home-8")),  # exact: the pass
    (4, "G9", ("ball", "home-8")),  # +1: trapped
])
def test_ground_kick_to_a_player_three_squares_away(die: int, square: str, result: tuple) -> None:
    position = setup({7: "G6", 8: "G9"}, {}, "G6")
    after = play(position, "G6 ground N", f"die {die}")
    assert where(after, square) == result
    if len(result) == 2:
        assert after.status().highlights["target"] == ("G9",)
        assert list(map(str, after.legal_actions()))[0] == "keep"


@pytest.mark.parametrize("die, bounce", [(5, 2), (6, 3)])
def test_ground_kick_too_strong_bounces_on_by_the_excess(die: int, bounce: int) -> None:
    position = setup({7: "G6", 8: "G9"}, {}, "G6")
    after = play(position, "G6 ground N", f"die {die}")
    assert after.pending[0] == "bounce" and after.pending[2] == bounce
    assert "home chooses" in after.status().message  # the player the ball hit chooses
    on = play(after, "bounce E")
    assert where(on, ["", "", "I9", "J9"][bounce]) == ("ball",)


def test_ground_pass_to_an_opponent_is_a_steal() -> None:
    position = setup({7: "G6"}, {4: "G9"}, "G6")
    after = play(position, "G6 ground N", "die 3", "keep")
    assert after.offence == 1 and after.status().to_move == "away"
    assert after.status().message == "away, offence, action 1 of 2"


def test_bounce_off_an_opponent_is_chosen_by_the_opponent() -> None:
    position = setup({7: "G6"}, {4: "G9"}, "G6")
    after = play(position, "G6 ground N", "die 5")
    assert "away chooses" in after.status().message


@pytest.mark.parametrize("die, kept", [(1, True), (2, True), (3, True), (4, True), (5, False), (6, False)])
def test_player_next_to_the_kicker(die: int, kept: bool) -> None:
    position = setup({7: "G6"}, {4: "G7"}, "G6")
    after = play(position, "G6 ground N", f"die {die}")
    if kept:
        assert after.pending[0] == "receive"
        assert play(after, "keep").offence == 1
    else:
        assert after.pending[:4] == ("bounce", SQUARE_INDEX["G7"], die - 4, 0)  # the kicker chooses
        assert "home chooses" in after.status().message


def test_seed_deflection_off_an_opponent_to_a_throw_in() -> None:
    # "サイコロの目□□なら…" : bounce the ball off an adjacent opponent out of play.
    position = setup({7: "C6"}, {4: "B6"}, "C6")
    after = play(position, "C6 ground W", "die 6", "bounce W")
    assert after.pending[:2] == ("place", "throw")
    assert after.status().to_move == "home"  # away touched it last


def test_one_touch_and_volley_chain_within_one_action() -> None:
    position = setup({7: "G6", 8: "G9"}, {}, "G6")
    after = play(position, "G6 ground N", "die 3", "touch N")
    assert where(after, "G10") == ("ball",)
    assert after.status().action_number == 2
    # A bounce returned to the kicker is a one-touch pass back.
    back = play(position, "G6 ground N", "die 6", "bounce S")
    # home-7 has touched the ball in this action already: he keeps it (no second one-touch).
    assert back.pending == () and where(back, "G6") == ("ball", "home-7")
    assert back.status().action_number == 2


def test_seed_example_ground_shot_needs_six() -> None:
    # "①ガ前方に「グラウンダーキック」の場合、サイコロの目が6以上ならゴール"
    position = setup({9: "G11"}, {}, "G11")
    assert play(position, "G11 ground N", "die 6").score == (1, 0)
    short = play(position, "G11 ground N", "die 3")
    assert where(short, "G14") == ("ball",) and short.score == (0, 0)


def test_inside_versus_ground() -> None:
    # "どっちが便利?": a team-mate two squares away (④) and the target (①) two beyond him.
    position = setup({7: "G6", 8: "G8", 9: "G10"}, {}, "G6")
    inside = play(position, "G6 inside N2", "keep")
    assert where(inside, "G8") == ("ball", "home-8") and inside.status().action_number == 2
    exact = play(position, "G6 ground N", "die 2", "keep")
    assert where(exact, "G8") == ("ball", "home-8")
    through = play(position, "G6 ground N", "die 4", "bounce N")  # +2: bounced on 2 squares
    assert through.pending[0] == "receive" and where(through, "G10") == ("ball", "home-9")


# --------------------------------------------------------------------------- inside kicks


def test_inside_kick_no_roll_and_not_past_an_opponent() -> None:
    position = setup({7: "G6"}, {4: "I8"}, "G6")
    assert where(play(position, "G6 inside N2"), "G8") == ("ball",)
    assert not position.is_legal(Kick("G6", "inside", "NE", 1))  # opponent on I8, 2 squares away
    with pytest.raises(IllegalAction, match="opponent within 2"):
        play(position, "G6 inside NE2")
    with pytest.raises(IllegalAction, match="1 or 2 squares"):
        play(position, "G6 inside N3")


# --------------------------------------------------------------------------- lob kicks


@pytest.mark.parametrize("die, distance", [(1, 3), (2, 4), (3, 5), (4, 4), (5, 5), (6, 6)])
def test_lob_advantage(die: int, distance: int) -> None:
    position = setup({7: "G4"}, {4: "G5", 5: "G6"}, "G4")
    after = play(position, "G4 lob N", f"die {die}")
    assert where(after, f"G{4 + distance}") == ("ball",)  # flies over G5 and G6


def test_lob_and_header_over_players() -> None:
    position = setup({7: "G4", 9: "G9"}, {4: "G6", 5: "G10"}, "G4")
    landed = play(position, "G4 lob N", "die 3")
    assert landed.pending[0] == "header"
    headed = play(landed, "head N2")  # over G10 to G11, within home-7's action
    assert where(headed, "G11") == ("ball",) and headed.status().action_number == 2
    kept = play(landed, "keep")
    assert where(kept, "G9") == ("ball", "home-9")


def test_lob_into_the_goal_and_over_the_bar() -> None:
    position = setup({9: "G12"}, {}, "G12")
    assert play(position, "G12 lob N", "die 5").score == (1, 0)
    over = play(position, "G12 lob N", "die 6")
    assert over.score == (0, 0) and over.pending[:2] == ("place", "goal-kick-1") or over.pending[1] == "goal-kick-1"
    assert over.status().to_move == "away"


def test_goal_kick_advantage() -> None:
    keeper = setup({1: "G2"}, {}, "G2")
    assert where(play(keeper, "G2 ground N", "die 3"), "G7") == ("ball",)  # 3 + 2
    assert where(play(keeper, "G2 inside N2"), "G4") == ("ball",)  # not for an inside kick
    outside = setup({1: "G5"}, {}, "G5")
    assert where(play(outside, "G5 ground N", "die 3"), "G8") == ("ball",)


# --------------------------------------------------------------------------- the post


def test_post_from_outside_in_rebounds() -> None:
    position = setup({9: "C14"}, {}, "C14")
    after = play(position, "C14 ground NE", "die 3")  # D15, E16, post, F15
    assert where(after, "F15") == ("ball",) and after.score == (0, 0)
    assert after.status().highlights["path"] == ("D15", "E16", "F15")


def test_post_from_centre_out_is_a_goal_kick() -> None:
    position = setup({9: "G15"}, {}, "G15")
    after = play(position, "G15 ground NW", "die 3")  # F16, then past the post
    assert after.score == (0, 0) and "goal-kick-1" in after.pending
    straight = setup({9: "H15"}, {}, "H15")
    assert play(straight, "H15 ground NW", "die 2").score == (1, 0)  # G16 then F17: inside the posts


# --------------------------------------------------------------------------- charges


def test_charge_from_the_front_both_roll_tie_to_the_defender() -> None:
    position = setup({7: "G6"}, {4: "G7"}, "G6", move="away")
    charged = play(position, "G7 charge G6")
    assert charged.status().awaiting == "die" and "charging defender" in charged.status().message
    rolled = play(charged, "die 3")
    assert rolled.status().awaiting == "die"
    won = play(rolled, "die 3")
    assert where(won, "G6") == ("ball", "away-4") and where(won, "G7") == ("home-7",)
    assert won.offence == 1 and won.status().action_number == 1
    lost = play(rolled, "die 4")
    assert where(lost, "G6") == ("ball", "home-7") and lost.status().action_number == 2


def test_charge_from_behind_is_a_foul() -> None:
    position = setup({7: "G6"}, {4: "G5"}, "G6", move="away")
    after = play(position, "G5 charge G6")
    assert after.pending[:2] == ("place", "free-kick") and after.status().to_move == "home"


def test_charge_bonus_in_own_penalty_area_and_keeper() -> None:
    position = setup({9: "G14"}, {4: "G15"}, "G14", move="away")
    after = play(position, "G15 charge G14", "die 4", "die 5")  # 4 + 1 = 5 ties
    assert where(after, "G14") == ("ball", "away-4")
    keeper = setup({9: "G14"}, {1: "G15"}, "G14", move="away")
    won = play(keeper, "G15 charge G14", "die 3", "die 5")  # 3 + 2 = 5; then goal kick 2
    assert won.pending[1] == "goal-kick-2"


def test_keeper_in_his_area_cannot_be_charged() -> None:
    position = setup({1: "G2"}, {9: "G3"}, "G2", move="away")
    with pytest.raises(IllegalAction, match="cannot be charged"):
        play(position, "G3 charge G2")


# --------------------------------------------------------------------------- out of play and set pieces


def test_throw_in_procedure() -> None:
    position = setup({7: "C8"}, {4: "K8"}, "C8")
    out = play(position, "C8 ground W", "die 3")
    assert out.pending[:2] == ("place", "throw") and out.status().to_move == "away"
    assert where(out, "A8") == ("ball",)
    placed = play(out, "kicker K8")
    assert where(placed, "A8") == ("ball", "away-4")
    assert placed.pending[0] == "replace"


def test_throw_in_step_in_and_no_goal_straight_from_a_throw() -> None:
    position = setup({7: "C8"}, {4: "K8"}, "C8")
    out = play(position, "C8 ground W", "die 3", "kicker K8", "ready")
    assert out.status().to_move == "away" and out.must_kick >= 0
    spot = [s for s, p in out.layout().items() if p == ("ball", "away-4")][0]
    assert SQUARE_INDEX[spot] in TOUCH
    assert not out.is_legal(Kick(spot, "ground", "W"))
    # An inside throw may not go along a line with an opponent within 2 squares (home-7 on C8).
    assert not out.is_legal(Kick(spot, "inside", "E", 1))
    thrown = play(out, f"{spot} inside NE1")
    assert thrown.pending[0] == "stepin" and where(thrown, "B9") == ("ball",)
    assert {str(a) for a in thrown.legal_actions()} == {"in B7", "in B8"}  # B9 holds the ball
    stepped = play(thrown, "in B8")
    assert stepped.status().action_number == 2 and stepped.must_kick < 0
    # A throw from M16 along the touchline (S) or into the field (W) is legal.
    corner = setup({9: "G12"}, {4: "M16"}, "M16", offence="away", extra="kicker=14 restart=throw")
    assert corner.is_legal(Kick("M16", "ground", "W"))
    assert corner.is_legal(Kick("M16", "ground", "SW"))


def test_a_throw_straight_into_a_goal_does_not_count() -> None:
    # On this grid no throw reaches a goal directly (the three throw directions and the
    # post forbid it), so the rule is checked on the engine's out-of-play decision itself.
    thrown = setup({9: "G12"}, {4: "B8"}, "B8", offence="away", extra="last=14 restart=throw")
    into_home = thrown._out(6, 0)  # into the goal away attacks: goal kick for home
    assert into_home.score == (0, 0) and "goal-kick-1" in into_home.pending
    into_away = thrown._out(6, 17)  # into their own goal: corner for home
    assert into_away.score == (0, 0) and into_away.pending[:2] == ("place", "corner")
    normal = setup({9: "G12"}, {4: "B8"}, "B8", offence="away", extra="last=14")
    assert normal._out(6, 0).score == (0, 1)


def test_corner_and_goal_kick() -> None:
    corner = play(setup({9: "D12"}, {4: "D14"}, "D12"), "D12 ground N", "die 6")  # bounce off away-4
    out = play(corner, "bounce N")  # away-4 chose badly: over their own line
    assert out.pending[:2] == ("place", "corner") and out.status().to_move == "home"
    assert where(out, "B16") == ("ball",)
    wide = play(setup({9: "E12"}, {}, "E12"), "E12 ground N", "die 6")
    assert "goal-kick-1" in wide.pending and wide.status().to_move == "away"
    assert wide.pending[0] == "replace"  # the keeper is placed already
    assert where(wide, "E16") == ("ball", "away-1")


def test_set_piece_re_placement_counts() -> None:
    wide = play(setup({9: "E12"}, {}, "E12"), "E12 ground N", "die 6")
    moved = play(wide, "K15>K10", "ready")
    assert moved.status().to_move == "home"
    once = play(moved, "B2>B9")
    assert [str(a) for a in once.legal_actions()] == ["ready"]
    go = play(once, "ready")
    assert go.status().to_move == "away" and go.status().message.endswith("must kick by action 2")


def test_goal_kick_2_keeper_may_move_first() -> None:
    position = setup({9: "G9"}, {1: "G14"}, "G9")
    caught = play(position, "G9 ground N", "die 6", "keep")
    assert caught.pending[1] == "goal-kick-2"
    go = play(caught, "ready")
    assert go.status().to_move == "away"
    assert go.is_legal(Move("G14", "G13"))


def test_offside_and_its_exceptions() -> None:
    low = ["B10", "C10", "D10", "E10", "I10", "J10", "K10", "L10", "B11", "C11", "D11"]
    position = setup({7: "G6", 9: "G12"}, {1: "G16"}, "G6", away_spare=low)
    foul = play(position, "G6 ground N", "die 6")  # G12 beyond the last outfield defender (rank 11)
    assert foul.pending[:2] == ("place", "free-kick") and foul.status().to_move == "away"
    onside = setup({7: "G6", 9: "G11"}, {1: "G16"}, "G6", away_spare=low)
    assert play(onside, "G6 ground N", "die 5").pending[0] == "receive"
    # Not offside from a throw-in: the exception.
    throw = setup({7: "A12", 9: "C14"}, {1: "G16"}, "A12", away_spare=low,
                  extra="kicker=6 restart=throw")
    assert play(throw, "A12 ground NE", "die 2").pending[0] == "receive"


def test_penalty_kick() -> None:
    position = setup({9: "G14"}, {4: "G13"}, "G14", move="away")
    foul = play(position, "G13 charge G14")
    assert foul.pending[:2] == ("place", "penalty")
    placed = play(foul, "kicker G14")
    assert placed.status().to_move == "away"
    guard = play(placed, "guard G16")
    assert guard.status().awaiting == "die"
    assert play(guard, "die 1").score == (1, 0)
    saved = play(guard, "die 3")
    assert saved.score == (0, 0) and saved.pending[1] == "goal-kick-2"


# --------------------------------------------------------------------------- beginner rules


def test_beginner_rules() -> None:
    start = RULES.start(rules="beginner")
    assert start.status().actions_per_turn == 1
    assert {a.kind for a in start.legal_actions()} == {"ground"}
    after = play(start, "G8 ground SW", "die 2")
    assert where(after, "E6") == ("ball", "home-8")  # no one-touch choice
    assert after.status().to_move == "away"


# --------------------------------------------------------------------------- specialist cards


def test_cards_are_chosen_before_kick_off_and_checked() -> None:
    assert RULES.start(home_cards="striker/playmaker/winger", away_cards="stopper").options.home_cards
    with pytest.raises(ValueError, match="at most 3"):
        RULES.start(home_cards="striker/playmaker/winger/anchor")
    with pytest.raises(ValueError, match="unknown specialist card"):
        RULES.start(home_cards="wizard")
    with pytest.raises(ValueError, match="chosen twice"):
        RULES.start(home_cards="striker", away_cards="striker")


def test_card_kick_bonus_only_for_its_shirt_and_zone() -> None:
    plain = setup({9: "G10"}, {}, "G10")
    card = setup({9: "G10"}, {}, "G10", options="home_cards=striker")
    assert where(play(plain, "G10 ground N", "die 3"), "G13") == ("ball",)
    assert where(play(card, "G10 ground N", "die 3"), "G14") == ("ball",)  # +1 in the opponent's half
    own_half = setup({9: "G6"}, {}, "G6", options="home_cards=striker")
    assert where(play(own_half, "G6 ground N", "die 3"), "G9") == ("ball",)
    other = setup({8: "G10"}, {}, "G10", options="home_cards=striker")
    assert where(play(other, "G10 ground N", "die 3"), "G13") == ("ball",)


def test_card_inside_range_and_charge_and_hold() -> None:
    maker = setup({10: "G6"}, {}, "G6", options="home_cards=playmaker")
    assert where(play(maker, "G6 inside N3"), "G9") == ("ball",)
    stopper = setup({7: "G6"}, {4: "G7"}, "G6", move="away", options="away_cards=stopper")
    assert where(play(stopper, "G7 charge G6", "die 3", "die 4"), "G6") == ("ball", "away-4")
    anchor = setup({6: "G6"}, {4: "G7"}, "G6", move="away", options="home_cards=anchor")
    assert where(play(anchor, "G7 charge G6", "die 3", "die 3"), "G6") == ("ball", "home-6")  # 3 + 1 beats 3


def test_card_set_from_a_file(tmp_path: Path) -> None:
    from masume.cards import load_card_set
    from masume.rules.masume_tactics import check_cards

    path = tmp_path / "cards.toml"
    path.write_text('id = "mine"\ngame = "masume-tactics"\n\n[[card]]\nid = "cannon"\n'
                    'name = "Cannon"\nkind = "specialist"\nshirt = 8\n'
                    'abilities = [{ kind = "lob", value = 2 }]\n')
    position = setup({8: "G4"}, {}, "G4", options=f"card_set={path},home_cards=cannon")
    assert where(play(position, "G4 lob N", "die 4"), "G10") == ("ball",)
    bad = tmp_path / "bad.toml"
    bad.write_text(path.read_text().replace('"lob"', '"fly"').replace("shirt = 8", "shirt = 12"))
    assert check_cards(load_card_set(bad)) == [
        "card cannon: shirt must be a number from 1 to 11, not 12",
        "card cannon: unknown ability kind 'fly' (one of ground, lob, charge, hold, inside-range)"]
    with pytest.raises(ValueError, match="unknown ability kind 'fly'"):
        RULES.start(card_set=str(bad), home_cards="cannon")
    with pytest.raises(ValueError, match="no card set 'nonesuch'"):
        RULES.start(card_set="nonesuch")


# --------------------------------------------------------------------------- what the table shows
# The engine stays pure, but its layout() is what the board must show, and its status
# says what the table lights, announces and times (docs/playing.md, Masume Soccer Tactics).


def test_a_called_kick_is_shown_by_the_ball_one_square_along_the_line() -> None:
    position = setup({8: "E6"}, {}, "E6")
    called = play(position, "E6 ground N")
    assert where(called, "E6") == ("home-8",) and where(called, "E7") == ("ball",)
    assert called.ball == SQUARE_INDEX["E6"]  # the rules still have it at his feet
    # The same board is a lob called that way, and an inside kick of one square: the
    # table tells them apart by the kick buttons.
    assert play(position, "E6 lob N").layout() == called.layout()
    assert play(position, "E6 inside N1").layout() == called.layout()
    # The die takes the ball on from the kicker's square, as before.
    assert where(play(called, "die 3"), "E9") == ("ball",)


def test_a_kick_called_off_the_board_keeps_the_ball_at_the_kickers_feet() -> None:
    position = setup({8: "E1"}, {}, "E1")
    called = play(position, "E1 ground SE")  # F0 is a goal square: on the board
    assert where(called, "F0") == ("ball",)
    called = play(position, "E1 ground S")  # E0 is not on the board
    assert called.layout() == position.layout()


def test_a_charging_defender_stands_on_the_ball_keepers_square_until_the_rolls() -> None:
    position = setup({7: "G6"}, {4: "G7"}, "G6", move="away")
    charged = play(position, "G7 charge G6")
    assert where(charged, "G6") == ("ball", "home-7", "away-4") and not where(charged, "G7")
    assert set(charged.status().highlights["charge"]) == {"G6", "G7"}
    second = play(charged, "die 2")
    assert second.layout() == charged.layout() and "rolled 2" in second.status().message
    assert where(play(second, "die 5"), "G7") == ("away-4",)  # the keeper won: back he goes


def test_offside_foul_and_out_of_play_are_announced_with_their_squares() -> None:
    low = ["B10", "C10", "D10", "E10", "I10", "J10", "K10", "L10", "B11", "C11", "D11"]
    offside = play(setup({7: "G6", 9: "G12"}, {1: "G16"}, "G6", away_spare=low),
                   "G6 ground N", "die 6").status()
    assert offside.message.startswith("offside: home-9! away: free kick on G12")
    assert offside.highlights["offside"] == ("G12",) and offside.highlights["target"] == ("G12",)
    foul = play(setup({7: "G6"}, {4: "G5"}, "G6", move="away"), "G5 charge G6").status()
    assert foul.message.startswith("foul: away-4 charged home-7 from behind!")
    assert foul.highlights["foul"] == ("G6", "G5")
    out = play(setup({8: "E9"}, {}, "E9"), "E9 ground W", "die 5")
    assert out.status().message.startswith("out of play! away: throw-in on A9")
    assert out.status().highlights["out"] == ("A9",)
    # The announcement is of the action that made it: the next one clears it.
    taken = play(out, "kicker L11")
    assert "out" not in taken.status().highlights and taken.status().highlights["target"] == ("A9",)
    over = play(setup({8: "G10"}, {}, "G10"), "G10 lob N", "die 6")  # 6 squares from G10: G16
    assert "over" not in over.status().message
    bar = play(setup({8: "G12"}, {}, "G12"), "G12 lob N", "die 6")
    assert bar.status().message.startswith("over the bar!") and bar.pending[1] == "goal-kick-1"


def test_choices_light_where_they_would_put_the_ball() -> None:
    position = setup({7: "G6", 9: "G8"}, {}, "G6")
    bounce = play(position, "G6 ground N", "die 5")  # 3 past G8: he bounces it on
    assert bounce.pending[0] == "bounce"
    options = bounce.status().highlights["options"]
    assert "G11" in options and "J8" in options and "D11" in options
    received = play(setup({7: "G6", 9: "G8"}, {}, "G6"), "G6 ground N", "die 2")
    assert set(received.status().highlights["options"]) == {
        "F7", "G7", "H7", "F8", "H8", "F9", "G9", "H9"}


def test_the_clocks_are_the_tables_the_rules_say_what_they_are() -> None:
    plain = RULES.start()
    assert plain.status().timers == {} and not plain.is_legal(Timeout())
    timed = RULES.start(turn_seconds=20, halves=40)
    timers = timed.status().timers
    assert timers["half 1"].seconds == 2400 and timers["half 1"].action == Whistle()
    assert timers["turn"].seconds == 20 and timers["turn"].per_turn
    assert timers["turn"].action == Timeout()
    # The kick-off taker must kick first: no timeout yet.
    assert not timed.is_legal(Timeout())
    passed = play(timed, "G8 inside SW2", "keep")
    assert passed.is_legal(Timeout())
    lost = passed.apply(Timeout())
    assert lost.status().to_move == "away" and lost.status().action_number == 1
    assert "turn" in play(passed, "E6 ground N").status().timers  # a kick in the air: still timed
    assert not play(passed, "E6 ground N").is_legal(Timeout())  # ... but it finishes first
    second = play(timed, "whistle")
    assert "half 1" not in second.status().timers and "half 2" not in second.status().timers
    assert "half 2" in play(second, "restart").status().timers
    assert parse_notation("time") == Timeout()

# --------------------------------------------------------------------------- notation and text


def test_notation_round_trip_and_errors() -> None:
    for text in ["G8-G9", "G8-G9 leave", "G8 ground N", "G8 lob NE", "G8 inside W2", "G10 charge G9",
                 "die 4", "keep", "touch E", "head N2", "bounce SW", "kicker C5", "C5>D9", "ready",
                 "guard F1", "in B5", "restart", "whistle", "pass"]:
        assert str(parse_notation(text)) == text
    for bad in ["G8-Z9", "die 7", "G8 kick N", "", "G8 ground N2"]:
        with pytest.raises(NotationError):
            parse_notation(bad)


def test_illegal_actions_say_why() -> None:
    start = RULES.start()
    with pytest.raises(IllegalAction, match="no home player on B9"):
        start.parse_action("B9-B10")
    with pytest.raises(IllegalAction, match="nothing waits for the die"):
        start.apply(Roll(3))


def test_from_text_rejects_impossible_positions() -> None:
    text = RULES.start().to_text().replace("G2,", "C4,", 1)
    with pytest.raises(NotationError, match="two players"):
        RULES.from_text(text)
    with pytest.raises(NotationError):
        RULES.from_text("nonsense")


def test_resign() -> None:
    assert RULES.resign(RULES.start(), "home").outcome().winner == "away"


# --------------------------------------------------------------------------- records


def test_record_files() -> None:
    files = sorted(RECORDS.glob("*.txt"))
    assert files
    for path in files:
        expected = expected_failure(path)
        if expected is not None:
            from masume.records import RecordError
            with pytest.raises(RecordError) as info:
                replay(read_record(path))
            assert str(info.value) == expected
        else:
            replay(read_record(path))


def test_record_check_cli() -> None:
    path = RECORDS / "kick-off-and-goal.txt"
    result = subprocess.run([sys.executable, "-m", "masume.cli", "record", "check", "--game", "masume-tactics",
                             str(path)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


# --------------------------------------------------------------------------- properties


def _check(position: Position) -> None:
    assert not impossible(position)
    assert len(set(position.players)) == 22
    assert all(s in PITCH or s in TOUCH for s in position.players)
    pieces = [p for stack in position.layout().values() for p in stack]
    assert len(pieces) == 23 and pieces.count("ball") == 1
    assert RULES.from_text(position.to_text()) == position


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(choices=st.lists(st.integers(min_value=0, max_value=100_000), min_size=1, max_size=250),
       beginner=st.booleans(), halves=st.sampled_from([0, 45]), cards=st.booleans(),
       turn_seconds=st.sampled_from([0, 20]))
def test_random_play_with_random_rolls_never_reaches_an_impossible_position(
        choices: list[int], beginner: bool, halves: int, cards: bool, turn_seconds: int) -> None:
    options = {"home_cards": "striker/playmaker/winger", "away_cards": "stopper/anchor/libero",
               "lineup": True} if cards else {}
    game = Game(RULES.start(rules="beginner" if beginner else "standard", goals_to_win=3,
                            halves=halves, turn_seconds=turn_seconds, **options))
    for choice in choices:
        position = game.position
        if position.outcome() is not None:
            break
        actions = list(position.legal_actions())
        assert actions, position.to_text()
        assert len(set(actions)) == len(actions)
        if position.status().awaiting == "die":
            assert sorted(a.die for a in actions) == [1, 2, 3, 4, 5, 6]
        action = actions[choice % len(actions)]
        assert position.parse_action(position.notation(action)) == action
        after = game.push(action)
        _check(after)
        status = after.status()
        assert 1 <= status.action_number <= status.actions_per_turn


def test_bench_rules_runs() -> None:
    result = subprocess.run([sys.executable, "-m", "masume.cli", "bench", "rules", "--game", "masume-tactics",
                             "--seconds", "0.2"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr


# --------------------------------------------------------------------------- issue 14: the seed's own words


def test_corner_kick_goes_only_into_the_field() -> None:
    """コーナーキック: 「コーナーキックは、セットプレーの手順通り進め、フィールド内の3方向いずれかへ
    向けてプレーします。」"""
    corner = play(setup({9: "D12"}, {4: "D14"}, "D12"), "D12 ground N", "die 6", "bounce N")
    assert corner.pending[:2] == ("place", "corner") and where(corner, "B16") == ("ball",)
    taken = play(corner, "kicker D12", "ready")
    assert where(taken, "B16") == ("ball", "home-9") and taken.status().to_move == "home"
    kicks = {a.direction for a in taken.legal_actions() if isinstance(a, Kick) and a.kind == "ground"}
    assert kicks == {"E", "S", "SE"}  # the three directions into the field from B16
    with pytest.raises(IllegalAction, match="into the field, in one of its 3 directions"):
        play(taken, "B16 ground N")
    assert not taken.is_legal(Kick("B16", "lob", "W"))


def test_beginner_rules_one_play_a_turn_even_after_a_charge() -> None:
    """ビギナールール: 「1ターンにつき、これら3つの中から1つをえらびプレーします」: winning the ball
    by a charge is the charger's one play; the turn passes."""
    position = setup({7: "G6"}, {4: "G7"}, "G6", move="away", options="rules=beginner")
    won = play(position, "G7 charge G6", "die 5", "die 3")
    assert where(won, "G6") == ("ball", "away-4")
    status = won.status()
    assert status.to_move == "home" and status.actions_per_turn == 1
    assert won.offence == 1  # away keeps the ball: the roles swap, the turn does not repeat


def test_a_throw_in_from_the_last_touch_square_goes_only_into_the_field() -> None:
    """スローイン: 「スローインは、セットプレーの手順通り進め、フィールド内の3方向いずれかへ
    向けてプレーします」: from M16 (or A1, A16, M1) the diagonal over the end line is not into
    the field."""
    throw = setup({9: "G12"}, {4: "M16"}, "M16", offence="away", extra="kicker=14 restart=throw")
    kicks = {a.direction for a in throw.legal_actions()
             if isinstance(a, Kick) and a.kind == "ground"}
    assert kicks == {"W", "SW"}  # NW would cross the end line at L17
    with pytest.raises(IllegalAction, match="throw-in goes into the field"):
        play(throw, "M16 lob NW")
    low = setup({9: "G12"}, {4: "A1"}, "A1", offence="away", extra="kicker=14 restart=throw")
    assert {a.direction for a in low.legal_actions()
            if isinstance(a, Kick) and a.kind == "ground"} == {"E", "NE"}


def test_inside_kick_closed_only_by_an_opponent() -> None:
    """インサイドキック: 「コース途中(2マス以内)に相手チームの選手(=相手選手)がいる場合、その方向へは
    キックできません」: a team-mate on the way does not close it."""
    position = setup({9: "G6", 8: "G7"}, {}, "G6")
    assert position.is_legal(Kick("G6", "inside", "N", 2))
    assert where(play(position, "G6 inside N2"), "G8") == ("ball",)
    assert where(play(position, "G6 inside N1", "keep"), "G7") == ("ball", "home-8")
    closed = setup({9: "G6"}, {4: "G7"}, "G6")
    assert not closed.is_legal(Kick("G6", "inside", "N", 2))


def test_the_goalkeeper_cannot_be_charged_anywhere() -> None:
    """ビギナールール チャージ: 「また、ゴールキーパーにはチャージできません。」 (no condition)."""
    position = setup({1: "G8"}, {9: "G9"}, "G8", move="away")
    assert not any(str(a).startswith("G9 charge") for a in position.legal_actions())
    with pytest.raises(IllegalAction, match="cannot be charged"):
        play(position, "G9 charge G8")


# --------------------------------------------------------------------------- the position header


OLD_HEADER = ("home=G2,C4,E3,I3,K4,G5,C7,E6,G8,I6,K7 away=G15,C13,E14,I14,K13,G12,C10,E11,G11,I11,K10 "
              "ball=G8 score=0-0 offence=home move=home action=1 used=0 last=-1 banned=-1 kicker=8 "
              "restart=kickoff half=1 kickoff=home pending=-")


def test_the_position_header_is_written_and_read() -> None:
    start = RULES.start()
    text = start.to_text()
    assert text == ("G2,C4,E3,I3,K4,G5,C7,E6,G8,I6,K7/G15,C13,E14,I14,K13,G12,C10,E11,G11,I11,K10 "
                    "G8 home 1 home 0-0 kicker=8 restart=kickoff")
    assert RULES.from_text(text) == start


def test_the_older_header_still_reads_and_means_the_same() -> None:
    assert RULES.from_text(OLD_HEADER) == RULES.start()
    for path in sorted(RECORDS.glob("*.txt")):  # records keep their older headers
        header = read_record(path).headers.get("Position")
        if header:
            assert RULES.from_text(RULES.from_text(header).to_text()) == RULES.from_text(header)


def test_a_hand_written_header() -> None:
    """Players by shirt, the ball, whose turn and which action, the offence, the score; the
    fields left out take their open-play values."""
    players = "G2,C4,E3,I3,K4,G5,C7,E6,G10,I6,K7/G16,C14,E15,I15,K14,G13,C11,E12,G12,I12,K11"
    position = RULES.from_text(f"{players} G10 home 2 home 1-0")
    assert where(position, "G10") == ("ball", "home-9") and position.score == (1, 0)
    status = position.status()
    assert (status.to_move, status.action_number, status.actions_per_turn) == ("home", 2, 2)
    loose = RULES.from_text(f"{players} F9 away")
    assert where(loose, "F9") == ("ball",) and loose.status().message.startswith("away, offence")
    beginner = RULES.from_text(f"{players} G10 home 1 home 0-0 options=rules=beginner")
    assert beginner.beginner and RULES.from_text(beginner.to_text()) == beginner
    with pytest.raises(NotationError, match="'/', then away's"):
        RULES.from_text(players.replace("/", ",") + " G10")
    with pytest.raises(NotationError, match="ball's square follows"):
        RULES.from_text(players)
    with pytest.raises(NotationError, match="11 players a side"):
        RULES.from_text(players.replace("G2,", "", 1) + " G10")


# --------------------------------------------------------------------------- second reading (issue 14)


def test_players_play_on_the_pitch_the_thrower_alone_stands_off_it() -> None:
    """「スローインをした選手は、スローインと共にサイド(タッチ)ラインを挟んで隣接する3マス…の
    どれかに移動し、すぐプレーに参加できます」: play is on the pitch; only a thrower stands on
    the touch file, and a player never enters a goal."""
    position = setup({7: "B8", 9: "G12"}, {}, "G12")
    with pytest.raises(IllegalAction, match="A8 is off the pitch"):
        play(position, "B8-A8")
    near_goal = setup({7: "G16", 9: "G12"}, {}, "G12")
    assert not near_goal.is_legal(Move("G16", "G17"))


def test_goal_kick_2_keeper_may_kick_first_or_dribble_first_but_must_kick() -> None:
    """ゴールキック2: 「1手目にゴールキーパー自身が“移動(ドリブル)”し、2手目に“キック…”することも
    できます」 and セットプレー ④ 「キープ選手は、そのターン1手目または2手目で“キック”をします」:
    both orders are offered; a step that leaves the ball would make the kick impossible."""
    caught = play(setup({9: "G9"}, {1: "G14"}, "G9"), "G9 ground N", "die 6", "keep", "ready")
    assert caught.is_legal(Kick("G14", "ground", "S")) and caught.is_legal(Move("G14", "G13"))
    assert not caught.is_legal(Move("G14", "G13", leave=True))
    dribbled = play(caught, "G14-G13")
    assert {type(a) for a in dribbled.legal_actions()} <= {Kick}  # action 2: the kick


def test_a_headed_ball_that_lands_on_a_player_is_his() -> None:
    """★ヘディング 「ヘディングはロブキックをした選手のプレー(1手)の範囲と見なされます」 and the
    worked example 「ヘディングした場合、1手目と…一気にバスが届いた…ので、…2手目をプレー」: the
    headed pass reaches its man and the action ends there (reading 4: he keeps it; the
    seed's record `seed-lob-header-shot.txt` plays on from him without a choice)."""
    position = setup({7: "G4", 9: "G9", 10: "G10"}, {4: "G6"}, "G4")
    headed = play(position, "G4 lob N", "die 3", "head N1")
    assert where(headed, "G10") == ("ball", "home-10")
    assert headed.pending == () and headed.status().action_number == 2


def test_only_the_offences_ball_keeper_kicks() -> None:
    """キック ①: 「キープ選手は、前後左右斜めの8方向どの方向にもボールを蹴る(=キック)ことができ」:
    the player keeping the ball kicks, nobody else (the defence never keeps it: the moment
    it does, it is the offence)."""
    position = setup({7: "G6", 8: "F6"}, {4: "H7"}, "G6")
    kickers = {a.frm for a in position.legal_actions() if isinstance(a, Kick)}
    assert kickers == {"G6"}
    with pytest.raises(IllegalAction, match="does not keep the ball"):
        play(position, "F6 ground N")
    defence = setup({7: "G6"}, {4: "H7"}, "G6", move="away")
    assert not any(isinstance(a, Kick) for a in defence.legal_actions())


def test_set_piece_taker_kicks_by_action_2_and_then_waits() -> None:
    """セットプレー ④: 「キープ選手は、そのターン1手目または2手目で“キック…”をします…キック後は、
    他の選手が1度ボールに触れるまで、ボールに触れる事はできません」."""
    corner = play(setup({9: "D12"}, {4: "D14"}, "D12"), "D12 ground N", "die 6", "bounce N",
                  "kicker D12", "ready")
    first = play(corner, "C2-C1")  # another player may play action 1
    assert {a.frm for a in first.legal_actions()} == {"B16"}  # action 2: the taker's kick
    assert all(isinstance(a, Kick) for a in first.legal_actions())
    kicked = play(corner, "B16 inside E1")  # action 1: the kick, the ball loose on C16
    assert where(kicked, "C16") == ("ball",) and kicked.status().action_number == 2
    with pytest.raises(IllegalAction, match="may not touch the ball again"):
        play(kicked, "B16-C16")
    assert kicked.is_legal(Move("B16", "C15"))  # he may move, not onto the ball


def test_a_called_kick_waits_for_the_die_and_nothing_else() -> None:
    """キック ③: 「※サイコロを振った後に、キックの種類や方向、キック以外のプレーへの変更は
    できません」: once called, the kick waits for the die; the call cannot change."""
    called = play(setup({7: "G6", 8: "G9"}, {}, "G6"), "G6 ground N")
    assert set(called.legal_actions()) == {Roll(n) for n in range(1, 7)}
    assert not called.is_legal(Kick("G6", "lob", "N"))
    assert not called.is_legal(Move("G9", "G10"))


def test_beginner_charge_only_from_the_five_squares_in_front_and_beside() -> None:
    """ビギナールール チャージ: 「ボールをキープしているせん手の、前・ななめ前・となりの5マスに
    まもりがわのチームのせん手がいるとき、チャージ…をすることができます」: not from behind (the
    standard rules make that a foul: バックチャージ)."""
    behind = setup({7: "G6"}, {4: "G5", 5: "F6"}, "G6", move="away", options="rules=beginner")
    charges = {a.frm for a in behind.legal_actions() if isinstance(a, Charge)}
    assert charges == {"F6"}  # beside; G5 is behind home-7 (home attacks north)
