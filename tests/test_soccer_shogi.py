"""Soccer Shogi rules engine: one group of tests per section of the seed text
(seed 001, docs/rules/soccer-shogi.md), the worked examples of its game records,
and property tests of random legal play."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from masume.games import load_rules
from masume.records import read_record, replay
from masume.rules import Game, IllegalAction, NotationError
from masume.rules.soccer_shogi import (
    RULES,
    Jump,
    Kick,
    Pass,
    Position,
    Restart,
    Step,
    Take,
    impossible,
    parse_notation,
)

RECORDS = Path(__file__).parent / "records" / "soccer-shogi"


def setup(
    blue: str,
    red: str,
    ball: str,
    side: str = "blue",
    done: int = 0,
    keepers: str = "",
    resting: str = "",
    extra: str = "",
    score: str = "0-0",
) -> Position:
    """A position from square lists: setup("A7 B7 ...", "A2 ...", ball="C5").

    Six squares a side; ``keepers`` defaults to each side's first square;
    ``resting`` lists squares whose players are turned over.
    """
    blues, reds, rests = blue.split(), red.split(), set(resting.split())
    assert len(blues) == 6 and len(reds) == 6
    rows = []
    for rank in range(8, 0, -1):
        row = ""
        for file in "ABCDE":
            square = f"{file}{rank}"
            char = "."
            if square in blues:
                char = "B"
            elif square in reds:
                char = "R"
            row += char.lower() if square in rests else char
        rows.append(row)
    board = "/".join(_compress(row) for row in rows)
    keeper_squares = keepers or f"{blues[0]},{reds[0]}"
    text = f"{board} {side} {done} ball={ball} keepers={keeper_squares} score={score} {extra}"
    return RULES.from_text(text.strip())


def _compress(row: str) -> str:
    out, gap = "", 0
    for char in row:
        if char == ".":
            gap += 1
            continue
        out += (str(gap) if gap else "") + char
        gap = 0
    return out + (str(gap) if gap else "")


def play(position: Position, *notations: str) -> Position:
    for text in notations:
        position = position.apply(position.parse_action(text))
    return position


def record_game(name: str) -> Game:
    return replay(read_record(RECORDS / name), RULES)


def record_position(name: str, turn_lines: int) -> Position:
    """The position after the first ``turn_lines`` lines of a seed record file."""
    record = read_record(RECORDS / name)
    game = Game(RULES.from_text(record.headers["Position"]) if "Position" in record.headers else RULES.start())
    for turn in record.turns[:turn_lines]:
        for text in turn.actions:
            game.push_notation(text)
    return game.position


def actions_from(position: Position, square: str) -> set[str]:
    return {str(a) for a in position.legal_actions() if getattr(a, "frm", None) == square}


# ---------------------------------------------------------------- 【準備】 set-up


def test_start_position_blue_first_matches_the_records() -> None:
    layout = RULES.start().layout()
    blue = sorted(sq for sq, pieces in layout.items() if "blue" in pieces)
    red = sorted(sq for sq, pieces in layout.items() if "red" in pieces)
    assert blue == ["A7", "B7", "C5", "C8", "D7", "E7"]
    assert red == ["A2", "B2", "C1", "C2", "D2", "E2"]
    assert layout["C5"] == ("ball", "blue")  # "C5の選手がボールを持っています"
    assert RULES.start().keeper("blue") == "C8" and RULES.start().keeper("red") == "C1"


def test_start_position_red_first_is_the_mirror() -> None:
    blue_first, red_first = RULES.start().layout(), RULES.start(first="red").layout()
    mirrored = {f"{sq[0]}{9 - int(sq[1])}": pieces for sq, pieces in blue_first.items()}
    swap = {"blue": "red", "red": "blue", "ball": "ball"}
    assert red_first == {sq: tuple(swap[p] for p in pieces) for sq, pieces in mirrored.items()}
    assert RULES.start(first="red").status().to_move == "red"


# ---------------------------------------------------------------- 【ゲームの進め方】 two actions a turn


def test_a_turn_is_two_actions_then_the_other_side() -> None:
    position = RULES.start()
    assert (position.status().to_move, position.status().action_number) == ("blue", 1)
    position = play(position, "A7-A6")
    assert (position.status().to_move, position.status().action_number) == ("blue", 2)
    position = play(position, "A6-A5")
    assert (position.status().to_move, position.status().action_number) == ("red", 1)
    assert position.status().actions_per_turn == 2


def test_a_chain_with_a_steal_is_one_action() -> None:
    # Record 1, turn 1 note: after C2-C3 red can steal with one chain of jumps.
    position = play(record_position("example-1.txt", 1), "C2-C3")
    after = play(position, "A2・C2・C4・C6!・C4・C2・A2")
    assert after.status().to_move == "blue"  # C2-C3 and the chain: two actions
    assert after.layout()["A2"] == ("ball", "red")


def test_pieces_are_never_captured() -> None:
    game = record_game("example-1.txt")
    for position in game.positions():
        assert len(position.players("blue")) == 6 and len(position.players("red")) == 6


# ---------------------------------------------------------------- 1-1 steps


def test_steps_go_to_the_eight_neighbouring_empty_squares() -> None:
    position = setup("C4 A8 B8 E8 A7 E7", "C1 A1 B2 D2 E1 A3", ball="A8", keepers="B8,C1")
    assert actions_from(position, "C4") == {
        f"C4-{sq}" for sq in ("B3", "C3", "D3", "B4", "D4", "B5", "C5", "D5")
    }


def test_a_step_cannot_go_onto_a_piece_off_the_board_or_into_a_goal() -> None:
    position = RULES.start()
    with pytest.raises(IllegalAction, match="B7 is taken"):
        position.apply(Step("A7", "B7"))
    with pytest.raises(IllegalAction, match="8 neighbouring"):
        position.apply(Step("A7", "A5"))
    with pytest.raises(NotationError, match="not a square"):
        position.parse_action("A7-F7")
    corner = setup("A1 A8 B8 E8 A7 E7", "C1 B2 D2 E2 A3 C3", ball="A7", keepers="B8,C1")
    with pytest.raises(IllegalAction, match="no player may enter a goal"):
        corner.apply(Step("A1", "B0"))


def test_a_step_onto_the_free_ball_takes_it() -> None:
    # Record 1, turn 4: E6-E5 picks up the ball kicked free to E5.
    position = record_position("example-1.txt", 6)
    assert position.layout()["E5"] == ("ball",)
    assert play(position, "E6-E5").layout()["E5"] == ("ball", "blue")


def test_a_step_of_the_ball_holder_is_a_dribble() -> None:
    position = play(RULES.start(), "C5-C4")
    assert position.layout()["C4"] == ("ball", "blue") and "C5" not in position.layout()


# ---------------------------------------------------------------- 1-2 jumps


def test_a_jump_goes_over_one_piece_of_either_side() -> None:
    # Record 1, turn 2: C5・C3 over red's C4; turn 6 jumps over red and blue alike.
    position = play(record_position("example-1.txt", 2), "b(C5-A5)")
    assert position.is_legal(Jump(("C5", "C3")))
    over_own = setup("C4 C5 A8 B8 E8 A7", "C1 A1 E1 A3 E3 D2", ball="A8", keepers="B8,C1", extra="")
    assert over_own.is_legal(Jump(("C4", "C6")))  # over blue's own C5


def test_a_jump_needs_a_player_to_jump_over_and_an_empty_landing() -> None:
    position = RULES.start()
    with pytest.raises(IllegalAction, match="no player on C6"):
        position.apply(Jump(("C5", "C7")))
    red_to_move = play(position, "A7-A6", "A6-A5")
    with pytest.raises(IllegalAction, match="B2 is taken"):
        red_to_move.apply(Jump(("D2", "B2")))  # over C2, but B2 is not empty
    with pytest.raises(IllegalAction, match="over one piece"):
        position.apply(Jump(("C5", "C2")))


def test_a_jump_cannot_hop_over_the_free_ball_alone() -> None:
    position = setup("C3 A8 B8 E8 A7 E7", "C1 A1 E1 A3 E3 D2", ball="C4", keepers="B8,C1")
    with pytest.raises(IllegalAction, match="no player on C4"):
        position.apply(Jump(("C3", "C5")))


def test_a_jump_may_land_on_the_free_ball_and_take_it() -> None:
    position = setup("C3 C4 A8 B8 E8 A7", "C1 A1 E1 A3 E3 D2", ball="C5", keepers="B8,C1")
    after = position.apply(Jump(("C3", "C5")))
    assert after.layout()["C5"] == ("ball", "blue")


def test_no_jump_into_a_goal_not_even_with_the_ball_over_the_keeper() -> None:
    # 1-5: "キーパーをジャンプしてボールごとゴールに飛び込むことはできません"
    position = setup("C2 A8 B8 E8 A7 E7", "C1 A1 B3 D3 E2 A3", ball="C2", keepers="B8,C1")
    with pytest.raises(IllegalAction, match="no player may enter a goal"):
        position.apply(Jump(("C2", "C0")))
    assert not any(str(a).endswith("C0") for a in position.legal_actions() if isinstance(a, Jump))


# ---------------------------------------------------------------- 1-3 chains


def test_a_chain_that_starts_orthogonal_stays_orthogonal() -> None:
    # Record 1, turn 5 note: A5・C3・A1 is diagonal all through; a turn is refused.
    position = play(record_position("example-1.txt", 13), "A2-A3", "A3-A2")
    assert position.is_legal(Jump(("A5", "C3", "A1")))
    with pytest.raises(IllegalAction, match="starts diagonal stays diagonal"):
        position.apply(Jump(("A5", "C3", "C1")))


def test_a_chain_may_stop_at_any_landing() -> None:
    position = play(record_position("example-1.txt", 8), "C8-D8", "D8-C8")
    for end in range(2, 5):
        assert position.is_legal(Jump(("E2", "C2", "C4", "A4")[:end]))


def test_a_chain_may_come_back_over_the_same_pieces() -> None:
    # The seed writes A2・C2・C4・C6!・C4C2A2: back over the flipped C5, C3 and B2.
    position = play(record_position("example-1.txt", 1), "C2-C3")
    chain = position.parse_action("A2・C2・C4・C6!・C4C2A2")
    assert chain == Jump(("A2", "C2", "C4", "C6", "C4", "C2", "A2"), steal=3)
    after = position.apply(chain)
    assert after.layout()["C5"] == ("blue-rest",) and after.layout()["A2"] == ("ball", "red")


def test_legal_actions_list_one_chain_per_result() -> None:
    position = play(record_position("example-1.txt", 1), "C2-C3")
    jumps = [a for a in position.legal_actions() if isinstance(a, Jump)]
    results = [position.apply(a) for a in jumps]
    assert len(set(results)) == len(results)
    # ... and the wandering chain of the seed leads to one of them
    assert position.apply(position.parse_action("A2・C2・C4・C6!・C4・C2・A2")) in results


def test_a_chain_back_to_its_start_without_the_ball_is_no_action() -> None:
    position = play(record_position("example-1.txt", 1), "C2-C3")
    with pytest.raises(IllegalAction, match="ends where it started"):
        position.apply(Jump(("A2", "C2", "A2")))


# ---------------------------------------------------------------- 1-4 keeper area


def test_the_keeper_may_leave_the_area_and_the_area_may_be_empty() -> None:
    position = play(RULES.start(), "C8-C7", "C7-C6")
    assert position.keeper("blue") == "C6"
    assert not any(sq in position.layout() for sq in ("B8", "C8", "D8"))


def test_the_keeper_may_be_swapped() -> None:
    # "キーパー選手ゴマは入れ替わっても構いません": the keeper steps out, another player
    # steps in with the second action and is the keeper from then on.
    position = play(RULES.start(), "C8-C7", "B7-B8")
    assert position.keeper("blue") == "B8"
    later = play(position, "A2-A3", "A3-A2", "C7-C8")  # the old keeper comes back on action 1
    assert all(a.frm == "C8" for a in later.legal_actions())
    with pytest.raises(IllegalAction, match="must leave it with the second"):
        later.apply(Step("B8", "A8"))  # C8 entered as a non-keeper: it, not B8, must leave


def test_a_non_keeper_entering_on_the_first_action_must_leave_with_the_second() -> None:
    position = play(RULES.start(), "B7-B8")
    second = {str(a) for a in position.legal_actions()}
    assert second and all(a.startswith("B8") for a in second)
    assert all(not a.endswith(("B8", "C8", "D8")) for a in second)


def test_a_non_keeper_entering_an_empty_area_on_the_first_action_must_still_leave() -> None:
    position = play(RULES.start(), "C8-C7", "C7-C6", "A2-A3", "A3-A2", "B7-B8")
    assert all(str(a).startswith("B8") for a in position.legal_actions())


def test_a_player_entering_the_empty_area_on_the_second_action_stays_as_keeper() -> None:
    position = play(RULES.start(), "C8-C7", "B7-B8")
    assert position.status().to_move == "red" and position.layout()["B8"] == ("blue",)


def test_at_most_one_player_in_the_keeper_area_when_a_turn_ends() -> None:
    position = play(RULES.start(), "A7-A6")
    with pytest.raises(IllegalAction, match="only one player may stay in the keeper area"):
        position.apply(Step("B7", "B8"))


def test_the_keeper_may_take_the_ball_on_the_first_action_but_must_get_it_out() -> None:
    pass_back = setup("C8 A5 B5 D5 E5 C4", "C1 A1 E1 A2 E2 D4", ball="C4", keepers="C8,C1")
    in_area = play(pass_back, "b(C4-C8)")  # the keeper receives on the first action
    assert in_area.status().action_number == 2
    second = {str(a) for a in in_area.legal_actions()}
    assert second, "the keeper must have a way out"
    for text in second:  # "ボールを持ったまま...出るか、ボールを蹴って...出さなければなりません"
        after = in_area.apply(in_area.parse_action(text))
        assert after.ball_square not in ("B8", "C8", "D8")
    with pytest.raises(IllegalAction, match="must take the ball out of it"):
        in_area.apply(in_area.parse_action("b(C8-B8)f"))
    with pytest.raises(IllegalAction, match="holding the ball in its own keeper area"):
        in_area.apply(Step("A5", "A6"))
    with pytest.raises(IllegalAction, match="holding the ball in its own keeper area"):
        in_area.apply(Step("C8", "D8"))  # dribbling along inside the area is not out


def test_taking_the_ball_in_the_keeper_area_on_the_second_action_is_illegal() -> None:
    position = play(setup("C8 A5 B5 D5 E5 C4", "C1 A1 E1 A2 E2 D4", ball="C4", keepers="C8,C1"), "A5-A6")
    with pytest.raises(IllegalAction, match="holding the ball in its own keeper area"):
        position.apply(position.parse_action("b(C4-C8)"))


def test_a_first_action_that_leaves_no_legal_second_is_illegal() -> None:
    # The keeper could step onto the free ball on C8 but then not get it out:
    # red stands on B7, C7 and D7, the jumps over them land on taken squares,
    # and the kicks along rank 8 stay in the area or meet red on A8 and E8.
    position = setup(
        "B8 A6 C6 E6 A1 E1", "B7 C7 D7 A8 E8 C1", ball="C8", keepers="B8,C1", side="blue"
    )
    with pytest.raises(IllegalAction, match="could not get the ball out of its keeper area"):
        position.apply(Step("B8", "C8"))
    assert Step("B8", "C8") not in set(position.legal_actions())


def test_an_attacker_entering_on_the_first_action_must_leave_on_the_second() -> None:
    position = setup("C2 A8 B8 E8 A7 E7", "B1 A1 B3 D3 E2 A3", ball="A7", keepers="B8,B1")
    entered = play(position, "C2-D1")
    assert all(str(a).startswith("D1") for a in entered.legal_actions())
    with pytest.raises(IllegalAction, match="may not end the turn in red's keeper area"):
        entered.apply(Step("A7", "A6"))


def test_an_attacker_with_the_ball_may_enter_on_the_first_action_and_shoot() -> None:
    position = setup("C2 A8 B8 E8 A7 E7", "B1 A1 B3 D3 E2 A3", ball="C2", keepers="B8,B1")
    entered = play(position, "C2-D1")
    shot = entered.apply(entered.parse_action("b(D1-D0)goal"))
    assert shot.status().highlights["goal"] == ("D0",)
    with pytest.raises(IllegalAction, match="may not end the turn in red's keeper area"):
        entered.apply(entered.parse_action("b(D1-E1)f"))  # a kick that is not a shot


def test_an_attacker_may_not_enter_with_the_ball_on_the_second_action() -> None:
    position = play(setup("C2 A8 B8 E8 A7 E7", "B1 A1 B3 D3 E2 A3", ball="C2", keepers="B8,B1"), "A7-A6")
    with pytest.raises(IllegalAction, match="may not end the turn in red's keeper area"):
        position.apply(Step("C2", "D1"))


def test_an_attacker_may_not_end_its_turn_in_the_area_without_the_ball_either() -> None:
    # Our reading (docs): the area holds only its defenders when a turn ends.
    position = play(setup("C2 A8 B8 E8 A7 E7", "B1 A1 B3 D3 E2 A3", ball="A7", keepers="B8,B1"), "A7-A6")
    with pytest.raises(IllegalAction, match="may not end the turn in red's keeper area"):
        position.apply(Step("C2", "D1"))


# ---------------------------------------------------------------- 1-5 goals


def test_no_player_enters_a_goal() -> None:
    for position in record_game("example-1.txt").positions():
        assert not any(sq[1] in "09" for sq, pieces in position.layout().items() if pieces != ("ball",))


# ---------------------------------------------------------------- 2-1 kicks


def test_kicks_go_straight_any_distance_in_eight_directions() -> None:
    position = setup("C4 B8 A8 E8 A7 E7", "C1 A1 E1 A3 E3 D6", ball="C4", keepers="B8,C1")
    kicks = {a.to for a in position.legal_actions() if isinstance(a, Kick)}
    assert kicks == {
        "C5", "C6", "C7", "C8",  # up to blue's own goal, which is not a target
        "C3", "C2",  # down to red's keeper on C1, who stops the ball
        "B4", "A4", "D4", "E4",
        "B5", "A6", "D5", "E6", "B3", "A2", "D3", "E2",
    }


def test_a_kick_never_passes_a_piece() -> None:
    position = RULES.start()
    with pytest.raises(IllegalAction, match="cannot pass C2"):
        position.apply(position.parse_action("b(C5-C0)goal"))


def test_a_kick_may_go_to_a_team_mate_but_not_to_an_opponent() -> None:
    # Record 1, turn 2: b(C5-A5) is a pass to A5.
    position = record_position("example-1.txt", 2)
    assert position.parse_action("b(C5-A5)") == Kick("C5", "A5")
    with pytest.raises(IllegalAction, match="not be kicked to an opponent"):
        position.apply(Kick("C5", "C4"))


def test_a_kick_to_an_empty_square_leaves_the_ball_free() -> None:
    # Record 1, turn 3: b(A5-E5)f.
    position = record_position("example-1.txt", 4)
    kick = position.parse_action("b(A5-E5)")
    assert kick == Kick("A5", "E5", free=True) and str(kick) == "b(A5-E5)f"
    assert position.apply(kick).layout()["E5"] == ("ball",)


def test_a_shot_into_the_opponents_goal_scores() -> None:
    # Record 2, the text's alternative: A2-B2 and b(B2-D0)goal.
    position = record_position("example-2.txt", 2)
    after = play(position, "A2-B2", "b(B2-D0)goal")
    assert after.score == (1, 1) and after.layout()["D0"] == ("ball",)


def test_no_kick_into_ones_own_goal() -> None:
    position = setup("C8 A5 B5 D5 E5 C4", "C1 A1 E1 A2 E2 D4", ball="C8", keepers="C8,C1", done=1)
    with pytest.raises(IllegalAction, match="its own goal"):
        position.apply(Kick("C8", "C9"))


def test_a_resting_team_mate_cannot_receive_a_pass() -> None:
    position = setup(
        "C4 A4 B8 E8 A7 E7", "C1 A1 E1 A3 E3 D2", ball="C4", keepers="B8,C1", resting="A4"
    )
    with pytest.raises(IllegalAction, match="resting"):
        position.apply(Kick("C4", "A4"))


# ---------------------------------------------------------------- 2-2 the corner exception


@pytest.mark.parametrize(
    "corner, goal, guard, side",
    [("A1", "B0", "B1", "blue"), ("E1", "D0", "D1", "blue"), ("A8", "B9", "B8", "red"), ("E8", "D9", "D8", "red")],
)
def test_a_corner_may_shoot_into_the_goal_beside_it_unless_an_opponent_guards(
    corner: str, goal: str, guard: str, side: str
) -> None:
    if side == "blue":
        free = setup(f"{corner} A5 B8 C8 E5 B6", "C1 A3 B3 D3 E3 C3", ball=corner, keepers="C8,C1")
        guarded = setup(f"{corner} A5 B8 C8 E5 B6", f"{guard} A3 B3 D3 E3 C3", ball=corner, keepers="C8," + guard)
        own_guard = setup(f"{corner} {guard} A5 C8 E5 B6", "C1 A3 B3 D3 E3 C3", ball=corner, keepers="C8,C1")
    else:
        free = setup("C8 A6 B6 D6 E6 C6", f"{corner} A4 B1 C1 E4 B3", ball=corner, side="red", keepers="C8,C1")
        guarded = setup(f"{guard} A6 B6 D6 E6 C6", f"{corner} A4 B1 C1 E4 B3", ball=corner, side="red", keepers=guard + ",C1")
        own_guard = setup("C8 A6 B6 D6 E6 C6", f"{corner} {guard} A4 C1 E4 B3", ball=corner, side="red", keepers="C8,C1")
    shot = Kick(corner, goal)
    assert free.is_legal(shot)
    assert own_guard.is_legal(shot)  # only an opponent on the guard square blocks
    with pytest.raises(IllegalAction, match=f"player on {guard} blocks the shot from the corner"):
        guarded.apply(shot)


# ---------------------------------------------------------------- 3-1 free ball / 3-2 jump steal


def test_jumping_the_opponent_who_holds_the_ball_steals_it() -> None:
    # Record 1, turn 7: B4-A4, A4・A6!
    position = play(record_position("example-1.txt", 13), "B4-A4")
    steal = position.parse_action("A4・A6")
    assert steal == Jump(("A4", "A6"), steal=1) and str(steal) == "A4・A6!"
    after = position.apply(steal)
    assert after.layout()["A6"] == ("ball", "red") and after.layout()["A5"] == ("blue-rest",)
    assert after.status().highlights == {"flip": ("A5",)}


def test_a_steal_mark_must_sit_where_the_ball_is_taken() -> None:
    position = play(record_position("example-1.txt", 8), "C8-D8", "D8-C8")
    with pytest.raises(IllegalAction, match="the ball is taken on A6"):
        position.parse_action("E2・C2・C4!・A4・A6")
    with pytest.raises(IllegalAction, match="no ball is taken on C2"):
        position.parse_action("E2・C2!")
    with pytest.raises(IllegalAction, match="mark that square with !"):
        position.apply(Jump(("E2", "C2", "C4", "A4", "A6")))
    assert str(position.parse_action("E2*C2*C4*A4*A6")) == "E2・C2・C4・A4・A6!"


def test_a_chain_may_go_on_after_the_steal() -> None:
    # Record 3, turn 3: C6・E4!・C6 takes the ball on E4 and jumps back.
    position = record_position("example-3.txt", 4)
    after = play(position, "C6・E4!・C6")
    assert after.layout()["C6"] == ("ball", "red") and after.layout()["D5"] == ("blue-rest",)


def test_a_chain_may_pick_up_the_free_ball_on_the_way() -> None:
    # Record 2, turn 6: the A6 player picks the ball up on C4 and jumps on to A2;
    # the text: passing b(E6-A6) first and jumping the same comes to the same.
    start = record_position("example-2.txt", 0)
    via_free_ball = play(start, "b(E6-C4)f", "A6・C4・A2")
    via_pass = play(start, "b(E6-A6)", "A6・C4・A2")
    assert via_free_ball == via_pass and via_pass.layout()["A2"] == ("ball", "blue")


# ---------------------------------------------------------------- rest (1回休み)


def test_a_flipped_player_sits_out_its_sides_next_turn_and_then_turns_back() -> None:
    # Record 1, turn 7: A5 loses the ball during red's turn ...
    position = record_position("example-1.txt", 14)
    assert position.layout()["A5"] == ("blue-rest",) and position.status().to_move == "blue"
    # ... cannot act in blue's turn 8 ...
    assert not actions_from(position, "A5")
    with pytest.raises(IllegalAction, match="rests"):
        position.apply(Step("A5", "A4"))
    # ... and is face up again when that turn ends (the start of red's next turn).
    after_turn = play(position, "C8-B8", "D7-C7")
    assert after_turn.layout()["A5"] == ("blue",)


def test_a_player_flipped_at_the_end_of_its_own_turn_rests_through_its_next_turn() -> None:
    position = _walk_into_sandwich_position()
    stolen = play(position, "C5-C4", "A7-A6")  # C4 between red's B4 and D4 at the end
    taken = play(stolen, "b(C4-B4)!")
    assert taken.layout()["C4"] == ("blue-rest",)
    red_done = play(taken, "A1-A2", "A2-A1")
    assert red_done.layout()["C4"] == ("blue-rest",) and not actions_from(red_done, "C4")
    blue_done = play(red_done, "A6-A7", "A7-A6")
    assert blue_done.layout()["C4"] == ("blue",)


def test_resting_players_can_be_jumped_over_and_block_kicks() -> None:
    position = setup(
        "C3 C4 A8 B8 E8 A7", "C1 A1 E1 A3 E3 D2", ball="C3", keepers="B8,C1", resting="C4"
    )
    assert position.is_legal(Jump(("C3", "C5")))
    with pytest.raises(IllegalAction, match="cannot pass C4"):
        position.apply(Kick("C3", "C6"))


# ---------------------------------------------------------------- 3-3 / 3-4 sandwiches


def _sandwich_position() -> Position:
    """Red to move; blue holds the ball on C5 with red on B5; red D4 can close the file."""
    return setup("C5 A8 B8 E8 A7 E7", "B5 D4 C1 A1 E1 A3", ball="C5", side="red", keepers="B8,C1")


def test_sandwiching_the_holder_orthogonally_steals_and_the_thief_chooses() -> None:
    position = play(_sandwich_position(), "D4-D5")
    status = position.status()
    assert status.to_move == "red" and status.highlights["take"] == ("B5", "D5")
    takes = list(position.legal_actions())
    assert set(takes) == {Take("C5", "B5"), Take("C5", "D5")}
    layouts = [position.apply(t).layout() for t in takes]
    assert layouts[0] != layouts[1]  # the placement of the ball tells the choice
    after = position.apply(Take("C5", "D5"))
    assert after.layout()["D5"] == ("ball", "red") and after.layout()["C5"] == ("blue-rest",)
    assert after.status().highlights == {"flip": ("C5",)}
    assert after.status().action_number == 2  # the take is not one of the two actions


def test_a_take_is_written_as_a_ball_move_with_a_steal_mark() -> None:
    position = play(_sandwich_position(), "D4-D5")
    assert position.parse_action("b(C5-B5)!") == Take("C5", "B5")
    assert position.parse_action("b(C5-B5)") == Take("C5", "B5")
    with pytest.raises(IllegalAction, match="one of the sandwiching pieces"):
        position.apply(Take("C5", "C6"))
    with pytest.raises(IllegalAction, match="first takes the ball"):
        position.apply(Step("A1", "A2"))


def test_a_diagonal_sandwich_is_no_sandwich() -> None:
    position = setup("C5 A8 B8 E8 A7 E7", "B4 D5 C1 A1 E1 A3", ball="C5", side="red", keepers="B8,C1")
    after = play(position, "D5-D6")  # B4 and D6 hold C5 diagonally
    assert after.phase == "play" and after.layout()["C5"] == ("ball", "blue")


def test_resting_players_do_not_sandwich() -> None:
    position = setup(
        "C5 A8 B8 E8 A7 E7", "B5 D4 C1 A1 E1 A3", ball="C5", side="red", keepers="B8,C1", resting="B5"
    )
    assert play(position, "D4-D5").phase == "play"


def test_at_a_corner_the_end_line_and_one_piece_sandwich() -> None:
    position = setup("A1 A8 B8 E8 A7 E7", "A3 C1 B3 D3 E3 C3", ball="A1", side="red", keepers="B8,C1")
    after = play(position, "A3-A2")
    assert set(after.legal_actions()) == {Take("A1", "A2")}


def test_the_touchline_does_not_sandwich() -> None:
    position = setup("A4 A8 B8 E8 A7 E7", "C4 C1 B2 D2 E2 C2", ball="A4", side="red", keepers="B8,C1")
    assert play(position, "C4-B4").phase == "play"


def test_the_end_line_sandwiches_only_at_the_corners() -> None:
    position = setup("B1 A8 B8 E8 A7 E7", "B3 C2 A2 D2 E2 C3", ball="B1", side="red", keepers="B8,C2")
    assert play(position, "B3-B2").phase == "play"  # B0 is a goal square, not the end line


def test_every_sandwiched_player_in_the_line_is_flipped() -> None:
    # 3-4: blue's holder C5 and blue's D5 lined up between red B5 and E5.
    position = setup("C5 D5 B8 E8 A7 E7", "B5 E4 C1 A1 E1 A3", ball="C5", side="red", keepers="B8,C1")
    after = play(position, "E4-E5")
    assert after.status().highlights["take"] == ("B5", "E5")
    taken = play(after, "b(C5-E5)!")
    assert taken.layout()["C5"] == ("blue-rest",) and taken.layout()["D5"] == ("blue-rest",)
    assert taken.status().highlights["flip"] == ("C5", "D5")


def test_a_line_into_the_corner_is_sandwiched_by_the_end_line() -> None:
    position = setup("A1 A2 B8 E8 A7 E7", "A4 C1 B3 D3 E3 C3", ball="A1", side="red", keepers="B8,C1")
    taken = play(position, "A4-A3", "b(A1-A3)!")
    assert taken.layout()["A1"] == ("blue-rest",) and taken.layout()["A2"] == ("blue-rest",)


# ---------------------------------------------------------------- 3-5 walking into a sandwich


def _walk_into_sandwich_position() -> Position:
    """Blue to move, holder C5; red B4 and D4 wait on rank 4."""
    return setup("C5 A7 B8 E8 C7 E7", "B4 D4 C1 A1 E1 A3", ball="C5", keepers="B8,C1")


def test_walking_into_a_sandwich_on_the_first_action_is_safe() -> None:
    position = play(_walk_into_sandwich_position(), "C5-C4")
    assert position.phase == "play" and position.layout()["C4"] == ("ball", "blue")
    out_again = play(position, "C4-C5")
    assert out_again.phase == "play" and out_again.layout()["C5"] == ("ball", "blue")


def test_ending_the_turn_sandwiched_loses_the_ball_and_the_thief_chooses() -> None:
    position = play(_walk_into_sandwich_position(), "C5-C4", "A7-A6")
    status = position.status()
    assert (status.to_move, status.action_number) == ("red", 1)
    assert set(position.legal_actions()) == {Take("C4", "B4"), Take("C4", "D4")}
    taken = play(position, "b(C4-D4)!")
    assert taken.status().to_move == "red" and taken.status().action_number == 1


def test_a_chain_through_a_sandwich_keeps_the_ball() -> None:
    # Blue's holder lands on C4, between red's B4 and D4, in the middle of a chain.
    for done in (0, 1):
        position = setup("C6 C5 C3 B8 E8 A7", "B4 D4 C1 A1 E1 A3", ball="C6", keepers="B8,C1", done=done)
        through = position.apply(Jump(("C6", "C4", "C2")))
        assert through.phase == "play" and through.layout()["C2"] == ("ball", "blue")
    stopping = position.apply(Jump(("C6", "C4")))  # ending the turn there loses the ball
    assert stopping.phase == "take" and stopping.status().to_move == "red"


def test_a_take_that_would_leave_the_ball_in_the_own_keeper_area_is_refused_at_turn_end() -> None:
    # Red closes C2 between its keeper C1 and C3 with its second action: the
    # keeper may not end red's turn with the ball in the area, so C3 takes it.
    position = setup("C2 A8 B8 E8 A7 E7", "C1 C4 A1 E1 A3 E3", ball="C2", side="red", done=1, keepers="B8,C1")
    after = play(position, "C4-C3")
    assert set(after.legal_actions()) == {Take("C2", "C3")}
    first_action = setup("C2 A8 B8 E8 A7 E7", "C1 C4 A1 E1 A3 E3", ball="C2", side="red", keepers="B8,C1")
    assert set(play(first_action, "C4-C3").legal_actions()) == {Take("C2", "C1"), Take("C2", "C3")}


# ---------------------------------------------------------------- the notes of the game records


def test_record_1_turn_3_the_threat_b4_a4_then_a4_a6() -> None:
    # "このままだとB4-A4、A4・A6! とボールを奪われてしまいそうです": had blue not moved the ball.
    position = play(record_position("example-1.txt", 4), "D7-D6", "D6-D7")
    after = play(position, "B4-A4", "A4・A6!")
    assert after.layout()["A6"] == ("ball", "red") and after.layout()["A5"] == ("blue-rest",)
    # ... which b(A5-E5)f avoids: the ball is no longer on A5.
    moved = play(record_position("example-1.txt", 4), "b(A5-E5)f", "E7-E6", "B4-A4")
    with pytest.raises(IllegalAction):
        moved.apply(Jump(("A4", "A6"), steal=1))


def test_record_1_turn_3_one_jump_would_have_done_red_s_two_steps() -> None:
    # "B2・D2とジャンプすれば、1手でこの盤面の状況にすることができます" — read B4・D4.
    position = record_position("example-1.txt", 5)
    two_steps = play(position, "C4-D4", "B4-C4")
    one_jump = play(position, "B4・D4")
    assert one_jump.layout() == two_steps.layout()
    assert one_jump.status().action_number == 2  # one action saved ("1手損しています")
    with pytest.raises(IllegalAction, match="no player on B2"):
        position.parse_action("B2・D2")


def test_record_1_turn_4_the_chain_steals_with_the_first_action() -> None:
    # "E2・C2・C4・A4・A6! というジャンプ攻撃で1手目でボールを奪って"
    position = play(record_position("example-1.txt", 8), "C8-D8", "D8-C8")
    after = play(position, "E2・C2・C4・A4・A6!")
    assert after.status().to_move == "red" and after.status().action_number == 2
    assert after.layout()["A6"] == ("ball", "red")


@pytest.mark.parametrize("lines, corners", [(9, ("A1", "E1")), (13, ("A1",))])
def test_record_1_the_plan_a5_c3_a1_or_e1_then_a_corner_shot(lines: int, corners: tuple[str, ...]) -> None:
    # Turns 5 and 7: "次の1手目でA5C3A1またはE1とコーナーに飛び込んで、そこから2手目のシュート".
    # By turn 7 red's keeper stands on D1, which blocks the shot from E1 (rule 2-2).
    # Red's turn here is a neutral one instead of the record's (which, at turn 5, fills C3).
    position = play(record_position("example-1.txt", lines), "A2-A3", "A3-A2")
    goals = {"A1": "B0", "E1": "D0"}
    for corner in ("A1", "E1"):
        jumped = play(position, f"A5C3{corner}")
        shot = Kick(corner, goals[corner])
        if corner in corners:
            assert jumped.apply(shot).score[0] == 1
        else:
            with pytest.raises(IllegalAction, match="blocks the shot from the corner"):
                jumped.apply(shot)


@pytest.mark.slow
def test_record_3_turn_5_is_game_set() -> None:
    # "キーパーエリアに2選手を入れられればすべて防げるのですが…「ゲームセット」です。"
    # After red's turn 5 every legal turn of blue leaves red a goal.
    position = record_position("example-3.txt", 9)
    assert position.status().to_move == "blue"

    def turns(p: Position) -> Iterator[Position]:  # the position after every whole turn from p
        for first in p.legal_actions():
            q = p.apply(first)
            if q.status().to_move != p.status().to_move or q.outcome() or q.phase != "play":
                yield q
                continue
            for second in q.legal_actions():
                yield q.apply(second)

    blue_turns = list(turns(position))
    assert len(blue_turns) > 100
    for after_blue in blue_turns:
        red = after_blue
        if red.phase == "take":  # cannot happen here, but a take would come first
            red = red.apply(next(iter(red.legal_actions())))
        assert any(r.outcome() is not None for r in turns(red)), after_blue.to_text()


# ---------------------------------------------------------------- goals, restart, match


def test_after_a_goal_the_ball_is_in_the_goal_and_only_restart_is_legal() -> None:
    game = record_game("example-1.txt")
    position = game.position
    assert position.layout()["D9"] == ("ball",)
    status = position.status()
    assert status.to_move == "blue" and status.score == {"blue": 0, "red": 1}
    assert status.highlights["goal"] == ("D9",)
    start_squares = set(RULES.start().layout())
    assert set(status.highlights["setup"]) == start_squares
    assert list(position.legal_actions()) == [Restart()]
    with pytest.raises(IllegalAction, match="restart"):
        position.apply(Step("C7", "C6"))
    restarted = play(position, "restart")
    assert restarted.layout() == RULES.start().layout() and restarted.score == (0, 1)


def test_the_conceding_side_kicks_off_from_the_mirrored_start() -> None:
    position = play(record_position("example-2.txt", 3), "restart")
    assert position == RULES.from_text(read_record(RECORDS / "example-3.txt").headers["Position"])
    assert position.status().to_move == "red" and position.layout()["C4"] == ("ball", "red")


def test_two_goals_win_the_match() -> None:
    position = record_game("example-3.txt").position
    outcome = position.outcome()
    assert outcome is not None and outcome.winner == "red" and outcome.reason == "goals"
    assert outcome.score == {"blue": 1, "red": 2}
    assert list(position.legal_actions()) == []


def test_goals_to_win_is_an_option() -> None:
    position = record_game("example-3.txt").position
    three = RULES.from_text(position.to_text(), goals_to_win=3)
    assert three.options.goals_to_win == 3
    start = RULES.from_text(record_position("example-3.txt", 10).to_text(), goals_to_win=3)
    after = play(start, "E6-D7", "b(D7-B9)goal")
    assert after.outcome() is None and list(after.legal_actions()) == [Restart()]


def test_resignation_ends_the_game() -> None:
    position = RULES.resign(RULES.start(), "blue")
    assert position.outcome().winner == "red" and position.outcome().reason == "resignation"
    assert list(position.legal_actions()) == []
    with pytest.raises(IllegalAction, match="already over"):
        RULES.resign(position, "red")
    assert RULES.from_text(position.to_text()) == position


# ---------------------------------------------------------------- rule options


def test_option_keepers_cannot_jump() -> None:
    position = setup("C8 C7 A5 B5 D5 E5", "C1 A1 E1 A2 E2 D4", ball="A5", keepers="C8,C1")
    assert position.is_legal(Jump(("C8", "C6")))
    strict = RULES.from_text(position.to_text(), keepers_cannot_jump=True)
    with pytest.raises(IllegalAction, match="keeper may not jump"):
        strict.apply(Jump(("C8", "C6")))
    assert "keepers-cannot-jump" in strict.to_text()


def test_option_keeper_first_action_no_pass_is_rule_1_4() -> None:
    """The published clarification, "a keeper who takes the ball on the first move must
    pass or leave the keeper area on the second", is what 1-4 says:
    「キーパーは、キーパーエリア内で1手目でボールを持つことはできますが、2手目にキーパーエリア内で
    ボールを持ったまま手番を終了してはいけません。ボールを持ったままキーパーエリアから出るか、
    ボールを蹴ってキーパーエリアからボールを出さなければなりません。」 With the option on, as
    without it, the keeper may pass the ball out or carry it out, and nothing else."""
    position = setup("C8 A6 B5 D5 E5 C4", "C1 A1 E1 A2 E2 D4", ball="C4", keepers="C8,C1")
    strict = RULES.from_text(position.to_text(), keeper_first_action_no_pass=True)
    assert "keeper-first-action-no-pass" in strict.to_text()
    plain_turn = play(position, "b(C4-C8)")  # 1手目でボールを持つことはできます
    strict_turn = play(strict, "b(C4-C8)")
    assert list(map(str, strict_turn.legal_actions())) == list(
        map(str, plain_turn.legal_actions()))
    for in_area in (plain_turn, strict_turn):
        # ボールを蹴ってキーパーエリアからボールを出す: a pass or a free ball out of the area
        assert in_area.is_legal(Kick("C8", "A6"))
        assert in_area.is_legal(Kick("C8", "C6", free=True))
        # ボールを持ったままキーパーエリアから出る
        assert in_area.is_legal(Step("C8", "C7"))
        # 2手目にキーパーエリア内でボールを持ったまま手番を終了してはいけません
        with pytest.raises(IllegalAction, match="holding the ball in its own keeper area"):
            in_area.apply(Step("C8", "B8"))
        with pytest.raises(IllegalAction, match="must take the ball out of it"):
            in_area.apply(Kick("C8", "B8", free=True))


def test_unknown_options_are_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match="known: goals_to_win"):
        RULES.start(offside=True)
    with pytest.raises(ValueError, match="at least 1"):
        RULES.start(goals_to_win=0)


# ---------------------------------------------------------------- notation


@pytest.mark.parametrize(
    "text, expected",
    [
        ("A7-A6", Step("A7", "A6")),
        ("a7 - a6", Step("A7", "A6")),
        ("Ａ７－Ａ６", Step("A7", "A6")),
        ("A7→A6", Step("A7", "A6")),
        ("C5・C3", Jump(("C5", "C3"))),
        ("C5*C3", Jump(("C5", "C3"))),
        ("C5･C3", Jump(("C5", "C3"))),
        ("E2・C2・C4・A4・A6!", Jump(("E2", "C2", "C4", "A4", "A6"), 4)),
        ("A5C3A1", Jump(("A5", "C3", "A1"))),
        ("b(C5-A5)", Kick("C5", "A5")),
        ("b(A5-E5)f", Kick("A5", "E5", True)),
        ("b(B2-D0)goal", Kick("B2", "D0")),
        ("b(C4-D4)!", Take("C4", "D4")),
        ("restart", Restart()),
        ("pass", Pass()),
    ],
)
def test_parse_notation(text: str, expected: object) -> None:
    assert parse_notation(text) == expected


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty"),
        ("hello", "not soccer-shogi notation"),
        ("A7-A6-A5", "two steps"),
        ("F1-F2", "not a square"),
        ("A0-A1", "not a square"),
        ("b(C5-A5)goal", "'goal' follows only a kick into a goal"),
        ("b(B2-D0)f", "written 'goal'"),
        ("A4!・A6", "! goes after the square"),
        ("A4・A6!・A4!", "only once"),
        ("b(C5-A5", "not soccer-shogi notation"),
    ],
)
def test_malformed_notation_raises_notation_error(text: str, message: str) -> None:
    with pytest.raises(NotationError, match=message):
        parse_notation(text)
    with pytest.raises(NotationError):
        RULES.start().parse_action(text)


def test_parse_action_raises_illegal_action_for_well_formed_illegal_text() -> None:
    with pytest.raises(IllegalAction, match="no player on A6"):
        RULES.start().parse_action("A6-A5")
    with pytest.raises(IllegalAction, match="not empty, so the ball would not be free"):
        play(RULES.start(), "A7-A6", "A6-A5", "C2-C3", "C3-C4").parse_action("b(C5-A5)f")


def test_notation_round_trips_for_every_legal_action_in_the_records() -> None:
    for name in ("example-1.txt", "example-2.txt", "example-3.txt"):
        for position in record_game(name).positions():
            for action in position.legal_actions():
                text = position.notation(action)
                assert position.parse_action(text) == action
                if isinstance(action, Jump):
                    assert position.parse_action(action.ascii()) == action


# ---------------------------------------------------------------- text, layout, status


def test_position_text_round_trips_through_the_records() -> None:
    for name in ("example-1.txt", "example-2.txt", "example-3.txt"):
        for position in record_game(name).positions():
            assert RULES.from_text(position.to_text()) == position


@pytest.mark.parametrize(
    "text, message",
    [
        ("nonsense", "expected the board"),
        ("2B2/BB1BB/5/2B2/5/5/RRRRR blue 0 ball=C5 keepers=C8,C1 score=0-0", "8 ranks"),
        ("2B2/BB1BB/5/2B2/5/5/RRRRR/2R2 green 0 ball=C5 keepers=C8,C1 score=0-0", "blue or red"),
        ("2B2/BB1BB/5/2B2/5/5/RRRRR/2R1 blue 0 ball=C5 keepers=C8,C1 score=0-0", "5 squares"),
        ("2B2/BB1BB/5/2B2/5/5/RRRRR/2X2 blue 0 ball=C5 keepers=C8,C1 score=0-0", "unknown piece"),
        ("2B2/BB1BB/5/2B2/5/5/RRRRR/5 blue 0 ball=C5 keepers=C8,C1 score=0-0", "red has 5 players"),
        ("2B2/BB1BB/5/2B2/5/5/RRRRR/2R2 blue 0 ball=Z5 keepers=C8,C1 score=0-0", "not a square"),
        ("2B2/BB1BB/5/2B2/5/5/RRRRR/2R2 blue 0 ball=C5 keepers=C8,C1 score=x", "score="),
        ("2B2/BB1BB/5/2B2/5/5/RRRRR/2R2 blue 0 ball=C5 keepers=C7,C1 score=0-0", "keeper square"),
        ("2B2/BB1BB/5/2B2/5/5/RRRRR/2R2 blue 0 ball=C5 keepers=C8,C1 score=0-0 colour=x", "unknown field"),
    ],
)
def test_malformed_position_text_raises_notation_error(text: str, message: str) -> None:
    with pytest.raises(NotationError, match=message):
        RULES.from_text(text)


def test_layout_names_the_board_definition_pieces() -> None:
    from masume.boards import load_board

    board = load_board("soccer-shogi")
    for position in record_game("example-1.txt").positions():
        for square, pieces in position.layout().items():
            assert board.has_cell(square)
            assert all(piece in board.pieces for piece in pieces)


def test_status_fields() -> None:
    status = play(RULES.start(), "A7-A6").status()
    assert status.to_move == "blue" and status.action_number == 2 and status.actions_per_turn == 2
    assert status.score == {"blue": 0, "red": 0}
    assert status.message == "blue, action 2 of 2" and status.highlights == {}


def test_positions_are_immutable_and_hashable() -> None:
    start = RULES.start()
    after = start.apply(Step("A7", "A6"))
    assert start == RULES.start() and after != start
    assert len({start, RULES.start(), after}) == 2
    with pytest.raises(AttributeError):
        start.side = 1  # type: ignore[misc]


def test_load_rules_finds_the_engine() -> None:
    rules = load_rules("soccer-shogi")
    assert rules is RULES and rules.board == "soccer-shogi" and rules.name == "soccer-shogi"


def test_pass_only_when_nothing_else_is_legal() -> None:
    with pytest.raises(IllegalAction, match="only when no action is possible"):
        RULES.start().apply(Pass())
    # Every blue player resting: blue can do nothing but pass its turn.
    stuck = setup(
        "A5 B5 C5 D5 E5 C8", "C1 A1 E1 A3 E3 C6", ball="C6", keepers="C8,C1", resting="A5 B5 C5 D5 E5 C8"
    )
    assert list(stuck.legal_actions()) == [Pass()]
    after = stuck.apply(Pass())
    assert after.status().to_move == "red" and after.layout()["A5"] == ("blue",)


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(
    st.text(max_size=30),
    st.text(alphabet="ABCDEFabcde0123456789-・*!()bfgoal, ", max_size=30),
))
def test_no_text_crashes_the_parser(text: str) -> None:
    position = play(RULES.start(), "A7-A6", "A6-A5", "C2-C3")
    try:
        action = position.parse_action(text)
    except (NotationError, IllegalAction) as exc:
        assert str(exc)
    else:
        assert position.is_legal(action)
    try:
        RULES.from_text(text)
    except NotationError as exc:
        assert "not a soccer-shogi position" in str(exc)


@pytest.mark.parametrize(
    "action",
    [Step("A7", "Z9"), Step(None, 3), Jump(("A7",)), Jump(("C5", "C3"), steal=7), Jump("C5C3"),
     Jump((1, 2)), Kick("C5", "C0", free=True), Take("C5", "C4"), "A7-A6", ["A7", "A6"], None],
    ids=repr,
)
def test_no_odd_action_crashes_apply(action: object) -> None:
    position = RULES.start()
    assert not position.is_legal(action)
    with pytest.raises(IllegalAction):
        position.apply(action)  # type: ignore[arg-type]


# ---------------------------------------------------------------- random legal play


def _turn_end_invariants(position: Position, side_that_moved: str) -> None:
    layout = position.layout()
    assert not impossible(position)
    assert sum(1 for pieces in layout.values() if "ball" in pieces) == 1
    for side in ("blue", "red"):
        assert len(position.players(side)) == 6
    own_area = {"blue": ("B8", "C8", "D8"), "red": ("B1", "C1", "D1")}
    mine = {side_that_moved, f"{side_that_moved}-rest"}
    other = "red" if side_that_moved == "blue" else "blue"
    in_own = [sq for sq in own_area[side_that_moved] if set(layout.get(sq, ())) & mine]
    assert len(in_own) <= 1, position.to_text()
    assert not any(set(layout.get(sq, ())) & mine for sq in own_area[other]), position.to_text()
    for square in own_area[side_that_moved]:
        assert layout.get(square) != ("ball", side_that_moved), position.to_text()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(choices=st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=160))
def test_random_legal_play_never_reaches_an_impossible_position(choices: list[int]) -> None:
    position = RULES.start()
    for choice in choices:
        actions = list(position.legal_actions())
        if not actions:
            assert position.outcome() is not None
            break
        action = actions[choice % len(actions)]
        mover = position.status().to_move
        after = position.apply(action)
        assert RULES.from_text(after.to_text()) == after
        assert position.parse_action(position.notation(action)) == action
        ended = after.status().to_move != mover and after.phase in ("play", "take")
        if ended and not isinstance(action, (Pass, Restart)):
            _turn_end_invariants(after, mover)
        assert not impossible(after)
        position = after


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    choices=st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=80),
    first=st.sampled_from(["blue", "red"]),
    keepers_cannot_jump=st.booleans(),
    keeper_first_action_no_pass=st.booleans(),
)
def test_random_play_with_options_keeps_the_rules(
    choices: list[int], first: str, keepers_cannot_jump: bool, keeper_first_action_no_pass: bool
) -> None:
    position = RULES.start(
        first=first,
        keepers_cannot_jump=keepers_cannot_jump,
        keeper_first_action_no_pass=keeper_first_action_no_pass,
    )
    for choice in choices:
        actions = list(position.legal_actions())
        if not actions:
            break
        action = actions[choice % len(actions)]
        if keepers_cannot_jump and isinstance(action, Jump):
            assert action.frm != position.keeper(position.to_move)
        mover = position.status().to_move
        position = position.apply(action)
        if position.status().to_move != mover and position.phase in ("play", "take"):
            if not isinstance(action, (Pass, Restart)):
                _turn_end_invariants(position, mover)


def test_a_games_positions_do_not_keep_every_position_made_from_them() -> None:
    """A position keeps only the children its legality test had to make: a game's
    history held every position a search or the tracker had applied from it (a million
    objects after 30 moves against the computer)."""
    import gc
    import random
    import weakref

    from masume.games import load_rules
    from masume.rules import Game

    rules, rng = load_rules("soccer-shogi"), random.Random(5)
    game, made = Game(rules.start()), []
    for _ in range(20):
        position = game.position
        actions = list(position.legal_actions())
        if not actions or position.outcome() is not None:
            break
        made += [weakref.ref(position.apply(action)) for action in actions]
        game.push(rng.choice(actions))
    gc.collect()
    kept = [ref for ref in made if ref() is not None]
    assert len(made) > 500 and len(kept) < len(made) // 10, (len(kept), len(made))
