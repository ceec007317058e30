"""Shogi-piece soccer (seed 002, サッカーのルール): one test (or more) per rule.

Section names in the test classes are the seed's 【...】 headings; the rules and
the readings behind these tests are in docs/rules/shogi-soccer.md.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter, deque
from pathlib import Path
from typing import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from masume.games import load_rules
from masume.rules import Game, IllegalAction, NotationError
from masume.rules.shogi_soccer import (
    GOAL_CELLS,
    PIECE_NAMES,
    RULES,
    Declare,
    EndTurn,
    Foul,
    Move,
    Pass,
    Place,
    Position,
    Shot,
    all_systems,
)
from masume.rules.shogi_soccer.geometry import INDEX, NAMES, PENALTY_AREA, SIZE

SIDES = ("sente", "gote")
SYSTEM_343 = "システム 3-4-3 飛歩歩-角歩歩歩-桂桂歩"
# Figure 1 (図1), sente's and gote's set-up, in the order a player might place them.
FIG1_SENTE = ("5-K王打", "5-F角打", "3-H歩打", "7-H歩打", "5-H歩打", "4-K飛打",
              "2-K歩打", "7-K歩打", "2-C桂打", "6-C桂打", "4-C歩打")  # fmt: skip
FIG1_GOTE = ("5-AGK打", "6-ARO打", "3-APA打", "7-APA打", "4-DBI打", "2-DPA打",
             "6-DPA打", "8-DPA打", "2-INI打", "8-INI打", "4-IPA打")  # fmt: skip
# Figure 5 (図5) and figure 6 (図6) as far as the seed shows them (ranks A-D); sente's
# goalkeeper, off the drawn part of the board, is put on its home square 5-K.
FIG5 = {"5-A": "k", "6-A": "p", "5-C": "R", "7-C": "p"}
FIG6 = {"5-A": "k", "5-B": "P", "7-C": "N", "3-D": "B"}

RECORDS = Path(__file__).parent / "records" / "shogi-soccer"


# ---------------------------------------------------------------------- helpers


def pos(
    pieces: dict[str, str],
    ball: str,
    turn: str = "sente",
    *,
    kings: bool = True,
    play_out: bool = False,
) -> Position:
    """A position in play: ``pieces`` maps squares to letters (KRBNP sente, krbnp gote).

    Goalkeepers stand on 5-K and 5-A unless ``pieces`` puts them elsewhere.
    """
    cells = ["."] * SIZE
    letters = "".join(pieces.values())
    if kings and "K" not in letters:
        cells[INDEX["5-K"]] = "K"
    if kings and "k" not in letters:
        cells[INDEX["5-A"]] = "k"
    for square, letter in pieces.items():
        cells[INDEX[square]] = letter
    p = Position(
        board="".join(cells), ball=INDEX[ball], turn=SIDES.index(turn), stage="play",
        play_out=play_out,
    )  # fmt: skip
    assert RULES.from_text(p.to_text(), play_out=play_out) == p
    return p


def moves(p: Position, origin: str) -> set[str]:
    return {a.target for a in p.legal_actions() if isinstance(a, Move) and a.origin == origin}


def passes(p: Position) -> set[str]:
    return {a.target for a in p.legal_actions() if isinstance(a, Pass)}


def shots(p: Position) -> list[Shot]:
    return [a for a in p.legal_actions() if isinstance(a, Shot)]


def play(p: Position, *texts: str) -> Position:
    for text in texts:
        p = p.apply(p.parse_action(text))
    return p


def mirror(square: str) -> str:
    """The square seen from the other side (the board turned round, as in shogi)."""
    f, r = square.split("-")
    return f"{10 - int(f)}-{'ABCDEFGHIJK'[10 - 'ABCDEFGHIJK'.index(r)]}"


def squares(text: str) -> set[str]:
    return set(text.split())


def fig1_kickoff() -> Position:
    return play(RULES.start(), SYSTEM_343, *FIG1_SENTE, *FIG1_GOTE)


def immediate_wins(p: Position) -> list[object]:
    """The actions that score or eject the opponent's goalkeeper at once."""
    side = p.side_to_move
    out = []
    for a in p.legal_actions():
        o = p.apply(a).outcome()
        if o is not None and o.winner == side and o.reason in ("goal", "keeper-ejected"):
            out.append(a)
    return out


# ---------------------------------------------------------------------- 【手駒】 【盤面】


class TestPiecesAndBoard:
    def test_each_side_has_eleven_pieces(self) -> None:
        counts = Counter(name for stack in fig1_kickoff().layout().values() for name in stack)
        for side in SIDES:
            assert counts[f"{side}-king"] == 1
            assert counts[f"{side}-rook"] == 1
            assert counts[f"{side}-bishop"] == 1
            assert counts[f"{side}-knight"] == 2
            assert counts[f"{side}-pawn"] == 6
        assert counts["ball"] == 1
        assert set(counts) <= set(PIECE_NAMES)

    def test_101_cells_9_by_11_and_two_goal_mouths(self) -> None:
        assert len(NAMES) == 101
        assert NAMES[0] == "1-A" and NAMES[98] == "9-K"
        assert GOAL_CELLS == ("goal-A", "goal-K")

    def test_no_piece_enters_a_goal_mouth(self) -> None:
        p = pos({"5-A": "P", "4-B": "k"}, ball="5-K")
        assert moves(p, "5-A") == {"4-A", "6-A", "5-B"}
        with pytest.raises(IllegalAction, match="goal mouth"):
            p.apply(Move("sente", "pawn", "5-A", "goal-A"))

    def test_penalty_areas_are_the_six_squares_around_each_goal(self) -> None:
        assert {NAMES[i] for i in PENALTY_AREA[0]} == squares("4-J 5-J 6-J 4-K 5-K 6-K")
        assert {NAMES[i] for i in PENALTY_AREA[1]} == squares("4-A 5-A 6-A 4-B 5-B 6-B")

    def test_areas_bound_the_long_pieces(self) -> None:
        # A-C, D-H, I-K: a rook in the midfield slides up to the midfield's edges.
        p = pos({"1-F": "R"}, ball="5-K")
        assert moves(p, "1-F") == squares("1-D 1-E 1-G 1-H 2-F 3-F 4-F 5-F 6-F 7-F 8-F 9-F")


class TestGoalkeeper:
    """【盤面】 a goalkeeper that left its penalty area moves like a pawn until it is back."""

    def test_king_moves_inside_its_penalty_area(self) -> None:
        p = pos({}, ball="5-A")
        assert moves(p, "5-K") == squares("4-K 6-K 4-J 5-J 6-J")

    def test_pawn_moves_outside_then_king_moves_again_after_returning(self) -> None:
        p = pos({"6-J": "K"}, ball="5-A")
        assert moves(p, "6-J") == squares("5-J 7-J 6-I 6-K 5-I 7-I 5-K 7-K")
        p = play(p, "7-I王")  # leaves diagonally: a king move, made from inside
        p = play(p, "4-BGK")
        assert moves(p, "7-I") == squares("7-H 6-I 8-I 7-J")  # like a pawn now
        with pytest.raises(IllegalAction, match="outside its penalty area"):
            p.apply(p.parse_action("6-J王"))
        p = play(p, "7-J王", "5-BGK", "6-J王", "4-BGK")  # back in by a pawn's step
        assert moves(p, "6-J") == squares("5-J 7-J 6-I 6-K 5-I 7-I 5-K 7-K")

    def test_passes_two_squares_in_eight_directions_inside_like_a_pawn_outside(self) -> None:
        inside = pos({"5-J": "K"}, ball="5-J")
        assert passes(inside) == squares(
            "3-J 4-J 6-J 7-J 5-I 5-H 5-K 4-I 3-H 6-I 7-H 4-K 6-K"
        )
        outside = pos({"5-H": "K"}, ball="5-H")
        assert passes(outside) == squares("5-G 5-F 5-I 5-J 4-H 3-H 6-H 7-H")


# ---------------------------------------------------------------------- 【配置】


class TestSetUp:
    def test_start_is_an_empty_table_with_the_ball_on_the_centre(self) -> None:
        p = RULES.start()
        assert p.layout() == {"5-F": ("ball",)}
        s = p.status()
        assert (s.to_move, s.action_number, s.actions_per_turn) == ("gote", 1, 1)
        actions = list(p.legal_actions())
        assert all(isinstance(a, Declare) for a in actions)
        assert len(actions) == len(set(actions)) == len(list(all_systems()))
        assert Declare(("RPP", "BPPP", "NNP")) in actions

    def test_every_split_of_the_ten_pieces_is_a_system(self) -> None:
        # brute force: every piece to one of the three areas, at most 8 in the own area
        # (beside the goalkeeper) and 9 in each other (a row holds 9: 「盤は9×11マス」)
        pieces = "RBNNPPPPPP"
        splits = set()
        for code in range(3**10):
            groups = ["", "", ""]
            for piece in pieces:
                code, area = divmod(code, 3)
                groups[area] += piece
            if len(groups[0]) <= 8 and len(groups[1]) <= 9 and len(groups[2]) <= 9:
                splits.add(tuple(groups))
        assert set(all_systems()) == splits

    def test_gote_declares_a_system_first_without_touching_the_board(self) -> None:
        p = RULES.start()
        a = p.parse_action(SYSTEM_343)
        assert a == Declare(("RPP", "BPPP", "NNP"))
        after = p.apply(a)
        assert after.layout() == p.layout()
        assert after.system == ("RPP", "BPPP", "NNP")
        assert (after.status().to_move, after.status().actions_per_turn) == ("sente", 11)

    @pytest.mark.parametrize(
        "text, reason",
        [
            ("システム 3-4-3 飛飛歩-角歩歩歩-桂桂歩", "1 rook"),
            ("システム 9-0-1 飛角桂桂歩歩歩歩歩-なし-歩", "at most 8"),
            ("システム 4-3-3 王飛歩歩-角歩歩-桂桂歩", "goalkeeper is not part"),
        ],
    )
    def test_impossible_systems_are_refused(self, text: str, reason: str) -> None:
        with pytest.raises(IllegalAction, match=reason):
            RULES.start().parse_action(text)

    def test_system_counts_must_match_its_pieces(self) -> None:
        with pytest.raises(NotationError, match="says 3-4-4"):
            RULES.start().parse_action("システム 3-4-4 飛歩歩-角歩歩歩-桂桂歩")

    def test_sente_sets_up_on_the_rows_nearest_its_end_and_the_king_on_5K(self) -> None:
        p = play(RULES.start(), SYSTEM_343)
        places = [a for a in p.legal_actions() if isinstance(a, Place)]
        king = {a.square for a in places if a.kind == "king"}
        rook = {a.square for a in places if a.kind == "rook"}
        assert king == {"5-K"}
        rows = {f"{f}-{r}" for r in "KHC" for f in range(1, 10)} - {"5-K"}
        assert rook == rows | {"5-F"}
        with pytest.raises(IllegalAction, match="rows K, H, C"):
            p.apply(p.parse_action("5-G歩打"))
        with pytest.raises(IllegalAction, match="on 5-K"):
            p.apply(p.parse_action("4-K王打"))
        with pytest.raises(IllegalAction, match="goalkeeper's square"):
            p.apply(p.parse_action("5-K飛打"))
        assert set(p.status().highlights["setup"]) == rows | {"5-K", "5-F"}

    def test_the_kick_off_piece_on_5F_holds_the_ball(self) -> None:
        p = play(RULES.start(), SYSTEM_343, "5-F角打")
        assert p.layout()["5-F"] == ("ball", "sente-bishop")
        assert p.status().action_number == 2

    def _sente_all_but_one(self, system: str) -> Position:
        # bishop kick-off; nobody yet where it could pass to
        return play(
            RULES.start(), system, "5-K王打", "5-F角打", "1-K飛打", "2-K歩打", "3-K歩打",
            "4-K歩打", "6-K歩打", "7-K歩打", "9-H桂打",
        )  # fmt: skip

    def test_sente_must_leave_the_kick_off_piece_a_receiver(self) -> None:
        """【配置】「その駒がパス可能な地点に最低一つ、パスを受ける駒を配置しなければならない」:
        reading R6 counts a receiver whose pass gote's declared system can leave clear (3-4-3
        puts 4 pieces on row D's 9 squares: 3-D and 7-D can stay free), and holds gote's
        set-up to leaving it clear."""
        p = self._sente_all_but_one(SYSTEM_343)
        p = play(p, "8-K桂打")
        assert {a.square for a in p.legal_actions() if isinstance(a, Place)} == {
            "3-H", "7-H", "2-C", "8-C"}
        with pytest.raises(IllegalAction, match="team-mate it can pass to"):
            p.apply(p.parse_action("1-C歩打"))
        p = play(p, "2-C歩打")  # the only receiver: the bishop's pass over 4-E and 3-D
        assert p.status().to_move == "gote"
        assert "3-D" not in {a.square for a in p.legal_actions() if isinstance(a, Place)}
        with pytest.raises(IllegalAction, match="no team-mate to pass to"):
            p.apply(p.parse_action("3-DPA打"))
        p = play(p, "5-AGK打", "6-ARO打", "3-APA打", "7-APA打", "4-DBI打", "2-DPA打",
                 "6-DPA打", "8-DPA打", "2-INI打", "8-INI打", "4-IPA打")  # fmt: skip
        assert p.stage == "kickoff" and passes(p) == {"2-C"}

    def test_no_system_fills_more_than_a_row(self) -> None:
        """【盤面】「盤は9×11マス」: a set-up row holds 9 pieces, so 0-10-0 and 0-0-10 are
        not systems (they were offered, and gote's set-up then hung)."""
        for text in ("システム 0-10-0 なし-飛角桂桂歩歩歩歩歩歩-なし",
                     "システム 0-0-10 なし-なし-飛角桂桂歩歩歩歩歩歩"):
            with pytest.raises(IllegalAction, match="at most 9 pieces fit"):
                RULES.start().parse_action(text)
        assert all(max(map(len, system)) <= 9 for system in all_systems())
        assert RULES.start().is_legal(Declare(("", "RBNNPPPPP", "P")))

    def test_a_receiver_beyond_an_empty_gote_row_counts(self) -> None:
        # gote puts nobody in the midfield, so 3-D and 7-D stay free: 2-C and 8-C count
        p = self._sente_all_but_one("システム 8-0-2 飛角歩歩歩歩歩歩-なし-桂桂")
        p = play(p, "8-K桂打")
        assert {a.square for a in p.legal_actions()} == {"3-H", "7-H", "2-C", "8-C"}

    def test_gote_sets_up_as_declared(self) -> None:
        p = play(RULES.start(), SYSTEM_343, *FIG1_SENTE)
        assert (p.status().to_move, p.status().action_number) == ("gote", 1)
        places = [a for a in p.legal_actions() if isinstance(a, Place)]
        assert {a.square for a in places if a.kind == "king"} == {"5-A"}
        rook = {a.square for a in places if a.kind == "rook"}
        assert rook == {f"{f}-A" for f in range(1, 10)} - {"5-A"}  # the rook is in its own area
        knight = {a.square for a in places if a.kind == "knight"}
        assert knight == {f"{f}-I" for f in range(1, 10)}  # both knights attack
        p = play(p, "6-ARO打", "3-APA打", "7-APA打")
        with pytest.raises(IllegalAction, match="no more pawns for the own area"):
            p.apply(p.parse_action("2-APA打"))

    def test_figure_1_set_up_leads_to_the_kick_off(self) -> None:
        p = fig1_kickoff()
        assert p.stage == "kickoff"
        layout = p.layout()
        assert layout["5-F"] == ("ball", "sente-bishop")
        assert layout["6-A"] == ("gote-rook",) and layout["2-I"] == ("gote-knight",)
        assert len(layout) == 22


# ---------------------------------------------------------------------- 【進行】 【指し手】


class TestTurns:
    def test_kick_off_pass_to_a_team_mate_then_one_more_action(self) -> None:
        p = fig1_kickoff()
        s = p.status()
        assert (s.to_move, s.action_number, s.actions_per_turn) == ("sente", 1, 2)
        assert all(isinstance(a, (Pass, Foul)) for a in p.legal_actions())
        assert passes(p) == {"2-C", "3-H", "7-H"}
        with pytest.raises(IllegalAction, match="must go to a team-mate"):
            p.apply(p.parse_action("4-Gパス"))
        with pytest.raises(IllegalAction, match="kick-off"):
            p.apply(p.parse_action("5-E角"))
        p = play(p, "3-Hパス")
        s = p.status()
        assert (s.to_move, s.action_number, s.actions_per_turn) == ("sente", 2, 2)
        p = play(p, "3-G歩")
        assert (p.status().to_move, p.status().action_number) == ("gote", 1)
        p = play(p, "3-EBI")
        assert (p.status().to_move, p.status().actions_per_turn) == ("sente", 1)

    def test_dribble_takes_the_ball_along(self) -> None:
        p = play(pos({"5-F": "P"}, ball="5-F"), "5-E歩")
        assert p.layout()["5-E"] == ("ball", "sente-pawn") and "5-F" not in p.layout()

    def test_off_the_ball_movement_leaves_the_ball(self) -> None:
        p = play(pos({"5-F": "P", "3-F": "P"}, ball="5-F"), "3-E歩")
        assert p.ball_holder() == "5-F" and p.layout()["3-E"] == ("sente-pawn",)

    def test_pass_to_a_team_mate(self) -> None:
        p = play(pos({"5-F": "P", "5-H": "N"}, ball="5-F"), "5-Hパス")
        assert p.layout()["5-H"] == ("ball", "sente-knight")

    def test_pass_to_an_opponent_gives_him_the_ball(self) -> None:
        p = play(pos({"5-F": "P", "5-D": "p"}, ball="5-F"), "5-Dパス")
        assert p.layout()["5-D"] == ("ball", "gote-pawn")
        assert passes(p)  # gote, to move, has the ball now

    def test_pass_to_an_empty_square_leaves_a_free_ball(self) -> None:
        p = play(pos({"5-F": "P"}, ball="5-F"), "5-Dパス")
        assert p.layout()["5-D"] == ("ball",) and p.ball_holder() is None
        assert not passes(p) and not shots(p)

    def test_moving_onto_a_free_ball_picks_it_up(self) -> None:
        p = play(pos({"5-F": "P", "4-H": "p"}, ball="4-G", turn="gote"), "4-GPA")
        assert p.layout()["4-G"] == ("ball", "gote-pawn")


# ---------------------------------------------------------------------- 【駒の動き】 図2


class TestFigure2:
    def test_pawn_moves_one_square_orthogonally(self) -> None:
        assert moves(pos({"5-F": "P"}, ball="5-K"), "5-F") == squares("5-E 5-G 4-F 6-F")

    def test_pawn_passes_up_to_two_squares_orthogonally(self) -> None:
        p = pos({"5-F": "P"}, ball="5-F")
        assert passes(p) == squares("5-E 5-D 5-G 5-H 4-F 3-F 6-F 7-F")

    def test_knight_moves_and_passes_to_the_eight_knight_squares_over_pieces(self) -> None:
        ring = dict(zip(squares("4-E 5-E 6-E 4-F 6-F 4-G 5-G 6-G"), "PpPpPpPp"))
        eight = squares("4-D 6-D 3-E 7-E 3-G 7-G 4-H 6-H")
        p = pos({**ring, "5-F": "N"}, ball="5-F")
        assert moves(p, "5-F") == eight
        assert passes(p) == eight  # over the ring, which is not played to

    def test_bishop_moves_diagonally_within_its_area(self) -> None:
        p = pos({"3-E": "B"}, ball="5-K")
        assert moves(p, "3-E") == squares("2-D 4-D 2-F 1-G 4-F 5-G 6-H")

    def test_rook_moves_orthogonally_within_its_area(self) -> None:
        p = pos({"3-B": "R", "6-B": "p"}, ball="5-K")
        assert moves(p, "3-B") == squares("3-A 3-C 1-B 2-B 4-B 5-B")

    def test_no_piece_moves_through_or_onto_another(self) -> None:
        p = pos({"5-F": "R", "5-E": "P", "3-F": "p"}, ball="5-K")
        assert moves(p, "5-F") == squares("4-F 6-F 7-F 8-F 9-F 5-G 5-H")
        with pytest.raises(IllegalAction, match="blocked on 5-E"):
            p.apply(Move("sente", "rook", "5-F", "5-D"))
        with pytest.raises(IllegalAction, match="team-mate"):
            p.apply(Move("sente", "rook", "5-F", "5-E"))

    def test_passes_stop_at_the_first_piece(self) -> None:
        p = pos({"5-F": "P", "5-E": "p", "6-F": "P"}, ball="5-F")
        assert passes(p) == squares("5-E 6-F 5-G 5-H 4-F 3-F")
        with pytest.raises(IllegalAction, match="blocked on 5-E"):
            p.apply(p.parse_action("5-Dパス"))


# ---------------------------------------------------------------------- 【退場】


class TestEjection:
    def test_the_ball_holder_ejects_an_opponent_by_moving_onto_it(self) -> None:
        p = pos({"5-E": "P", "5-D": "p", "9-D": "p"}, ball="5-E")
        assert "5-D" in moves(p, "5-E")
        after = play(p, "5-D歩")
        assert after.layout()["5-D"] == ("ball", "sente-pawn")
        assert after.status().highlights["eject"] == ("5-D",)
        assert after.ejected("gote") == {"pawn": 5, "rook": 1, "bishop": 1, "knight": 2}
        assert Counter(n for s in after.layout().values() for n in s)["gote-pawn"] == 1

    def test_a_piece_takes_the_ball_by_moving_onto_the_opponent_holding_it(self) -> None:
        p = pos({"5-D": "p", "4-F": "N"}, ball="5-D")
        after = play(p, "5-D桂")
        assert after.layout()["5-D"] == ("ball", "sente-knight")
        assert after.piece_at("5-D") == ("sente", "knight")
        assert after.status().highlights["eject"] == ("5-D",)

    def test_team_mates_of_the_holder_do_not_eject(self) -> None:
        p = pos({"1-H": "P", "5-E": "P", "5-D": "p"}, ball="1-H")
        assert "5-D" not in moves(p, "5-E")
        with pytest.raises(IllegalAction, match="only the ball holder"):
            p.apply(p.parse_action("5-D歩"))

    def test_nobody_ejects_an_opponent_without_the_ball(self) -> None:
        p = pos({"1-H": "p", "5-E": "P", "5-D": "p"}, ball="1-H")
        assert "5-D" not in moves(p, "5-E")

    def test_nobody_ejects_while_the_ball_is_free(self) -> None:
        p = pos({"5-E": "P", "5-D": "p"}, ball="1-H")
        assert "5-D" not in moves(p, "5-E")

    def test_ejected_pieces_never_return(self) -> None:
        p = play(pos({"5-E": "P", "5-D": "p"}, ball="5-E"), "5-D歩")
        with pytest.raises(IllegalAction, match="never put back"):
            p.apply(Place("gote", "pawn", "5-C"))
        assert not any(isinstance(a, Place) for a in p.legal_actions())


# ---------------------------------------------------------------------- 【トラップ】


class TestTrap:
    def test_bishop_picks_up_a_free_ball_on_its_way(self) -> None:
        p = pos({"1-G": "B"}, ball="3-E")
        assert {"3-E", "4-D"} <= moves(p, "1-G")
        after = play(p, "4-D角")
        assert after.layout()["4-D"] == ("ball", "sente-bishop")

    def test_rook_picks_up_a_free_ball_on_its_way(self) -> None:
        after = play(pos({"1-F": "R"}, ball="3-F"), "6-F飛")
        assert after.ball_holder() == "6-F"

    def test_a_trap_does_not_eject(self) -> None:
        p = pos({"1-G": "B", "4-D": "p"}, ball="3-E")
        assert "4-D" not in moves(p, "1-G")
        with pytest.raises(IllegalAction, match="traps the ball"):
            p.apply(p.parse_action("4-D角"))

    def test_a_knight_jumping_past_a_free_ball_leaves_it(self) -> None:
        after = play(pos({"4-H": "N"}, ball="4-G"), "5-F桂")
        assert after.layout()["4-G"] == ("ball",)


# ---------------------------------------------------------------------- 【大駒のパス】 図3


FIG3_REACH = squares("1-C 5-C 2-D 4-D 2-F 4-F 1-G 5-G 6-H 7-I 8-J 9-K")


class TestLongPasses:
    def test_figure_3_bishop_on_3E(self) -> None:
        p = pos({"3-E": "B"}, ball="3-E")
        assert passes(p) == FIG3_REACH
        with pytest.raises(IllegalAction, match="only as far as rank C"):
            p.apply(p.parse_action("6-Bパス"))  # the XX of figure 3

    def test_figure_3_seen_from_gote(self) -> None:
        p = pos({mirror("3-E"): "b"}, ball=mirror("3-E"), turn="gote")
        assert passes(p) == {mirror(s) for s in FIG3_REACH}

    @pytest.mark.parametrize(
        "origin, reach",
        [
            ("5-K", "5-J 5-I 5-H"),  # own area: up to the midfield's nearest row
            ("5-J", "5-I 5-H"),
            ("5-I", "5-H 5-G 5-F 5-E 5-D 5-C"),  # own area's front row: up to C
            ("5-E", "5-D 5-C"),  # midfield: up to C
            ("5-D", "5-C 5-B 5-A"),  # midfield's front row: to the far end
            ("5-C", "5-B 5-A"),
        ],
    )
    def test_rook_forward_reach(self, origin: str, reach: str) -> None:
        pieces = {origin: "R", "4-B": "k"}
        if origin == "5-K":
            pieces["4-K"] = "K"
        p = pos(pieces, ball=origin)
        forward = {a for a in passes(p) if a[0] == "5" and a[2] < origin[2]}
        assert forward == squares(reach)

    def test_back_passes_are_not_limited(self) -> None:
        p = pos({"5-C": "R", "4-B": "k"}, ball="5-C")
        assert squares("5-D 5-E 5-F 5-G 5-H 5-I 5-J 5-K") <= passes(p)


# ---------------------------------------------------------------------- 【大駒の移動】 図4


def fewest_moves(piece: str, start: str) -> dict[str, int]:
    """Breadth-first: how many of its own actions a lone piece needs to reach each square."""
    seen = {start: 0}
    queue = deque([start])
    while queue:
        here = queue.popleft()
        p = pos({here: piece}, ball="5-K")
        for target in moves(p, here):
            if target not in seen:
                seen[target] = seen[here] + 1
                queue.append(target)
    return seen


class TestLongMoves:
    def test_figure_4_bishop_from_4K(self) -> None:
        steps = fewest_moves("B", "4-K")
        assert [steps[s] for s in ("6-I", "5-H", "1-D", "2-C", "4-A")] == [1, 2, 3, 4, 5]
        assert min(n for s, n in steps.items() if s.endswith("-A")) == 5

    def test_figure_4_rook_from_9K(self) -> None:
        steps = fewest_moves("R", "9-K")
        assert [steps[s] for s in ("9-I", "9-H", "9-D", "9-C", "9-A")] == [1, 2, 3, 4, 5]
        assert min(n for s, n in steps.items() if s.endswith("-A")) == 5

    def test_stop_before_the_line_then_cross_one_row(self) -> None:
        p = pos({"4-K": "B"}, ball="1-F")
        assert "6-I" in moves(p, "4-K") and "7-H" not in moves(p, "4-K")
        with pytest.raises(IllegalAction, match="stop on the row before"):
            p.apply(Move("sente", "bishop", "4-K", "7-H"))
        p = pos({"6-I": "B"}, ball="1-F")
        assert moves(p, "6-I") & squares("5-H 7-H 4-G 8-G") == squares("5-H 7-H")

    def test_the_limit_holds_going_back_too(self) -> None:
        p = pos({"5-H": "B"}, ball="1-F")
        assert moves(p, "5-H") & squares("4-I 6-I 3-J 7-J") == squares("4-I 6-I")
        p = pos({"9-D": "R"}, ball="1-F")
        assert moves(p, "9-D") & squares("9-C 9-B 9-E") == squares("9-C 9-E")


# ---------------------------------------------------------------------- 【大駒のシュート】 and shots


class TestShots:
    def test_a_rook_shoots_from_anywhere_along_a_clear_file(self) -> None:
        p = pos({"5-E": "R", "4-B": "k"}, ball="5-E")
        assert "5-B" not in passes(p)  # a pass from 5-E reaches only rank C
        assert [a.goal for a in shots(p)] == ["goal-A"]

    def test_a_bishop_shoots_along_the_diagonal_to_the_mouth(self) -> None:
        p = pos({"1-D": "B", "6-B": "k"}, ball="1-D")
        assert len(shots(p)) == 1

    def test_pawn_and_knight_shots_follow_their_passes(self) -> None:
        assert shots(pos({"5-B": "P", "6-B": "k"}, ball="5-B"))
        assert not shots(pos({"5-C": "P", "6-B": "k"}, ball="5-C"))
        for square in ("4-B", "6-B", "3-A", "7-A"):
            assert shots(pos({square: "N", "5-B": "k"}, ball=square))

    def test_a_goalkeeper_on_the_square_before_its_goal_stops_every_shot(self) -> None:
        for square, letter in (("4-B", "N"), ("1-D", "B"), ("3-A", "N")):
            p = pos({square: letter}, ball=square)  # gote's goalkeeper on 5-A
            assert not shots(p)
            with pytest.raises(IllegalAction, match="stops every shot"):
                p.apply(p.parse_action("シュート"))

    def test_pieces_on_the_way_stop_a_shot(self) -> None:
        p = pos({"1-D": "B", "6-B": "k", "3-B": "p"}, ball="1-D")
        with pytest.raises(IllegalAction, match="blocked"):
            p.apply(p.parse_action("シュート"))

    def test_a_goal_wins(self) -> None:
        p = play(pos({"5-E": "R", "4-B": "k"}, ball="5-E"), "シュート")
        outcome = p.outcome()
        assert outcome is not None and (outcome.winner, outcome.reason) == ("sente", "goal")
        assert dict(outcome.score) == {"sente": 1, "gote": 0}
        assert p.layout()["goal-A"] == ("ball",)
        assert p.status().highlights["goal"] == ("goal-A",)
        assert list(p.legal_actions()) == []
        with pytest.raises(IllegalAction, match="game is over"):
            p.apply(Move("gote", "king", "4-B", "4-C"))

    def test_gote_shoots_at_goal_K(self) -> None:
        p = pos({"5-J": "p", "4-K": "K"}, ball="5-J", turn="gote")
        assert [a.goal for a in shots(p)] == ["goal-K"]

    def test_no_own_goal(self) -> None:
        p = pos({"5-J": "R", "4-K": "K"}, ball="5-J")
        assert "goal-K" not in passes(p)
        with pytest.raises(IllegalAction, match="own goal"):
            p.apply(Pass("sente", "rook", "5-J", "goal-K"))


# ---------------------------------------------------------------------- 【勝敗】 図5 図6


class TestResults:
    def test_ejecting_the_goalkeeper_wins(self) -> None:
        p = play(pos({"5-B": "P"}, ball="5-B"), "5-A歩")
        outcome = p.outcome()
        assert outcome is not None and (outcome.winner, outcome.reason) == ("sente", "keeper-ejected")
        assert p.status().highlights["eject"] == ("5-A",)

    def test_resignation_and_foul(self) -> None:
        p = pos({"5-F": "P"}, ball="5-F")
        resigned = RULES.resign(p, "gote")
        assert (resigned.outcome().winner, resigned.outcome().reason) == ("sente", "resignation")
        assert list(resigned.legal_actions()) == []
        fouled = RULES.foul(p, "sente")
        assert (fouled.outcome().winner, fouled.outcome().reason) == ("gote", "foul")
        assert RULES.from_text(fouled.to_text()) == fouled

    def test_figure_5_is_checkmate(self) -> None:
        p = pos(FIG5, ball="5-C", turn="gote")
        assert p.is_check() and p.is_checkmate()
        outcome = p.outcome()
        assert outcome is not None and (outcome.winner, outcome.reason) == ("sente", "checkmate")
        assert "checkmated" in p.status().message
        # every gote action lets sente score or eject the goalkeeper at once
        open_game = pos(FIG5, ball="5-C", turn="gote", play_out=True)
        replies = [a for a in open_game.legal_actions() if not isinstance(a, Foul)]  # a foul loses
        assert replies
        for reply in replies:
            assert immediate_wins(open_game.apply(reply))

    def test_figure_5_keeper_stepping_aside_concedes_a_goal(self) -> None:
        p = play(pos(FIG5, ball="5-C", turn="gote", play_out=True), "4-AGK", "シュート")
        assert (p.outcome().winner, p.outcome().reason) == ("sente", "goal")

    def test_a_block_is_a_defence(self) -> None:
        p = pos({**FIG5, "4-B": "p"}, ball="5-C", turn="gote")  # 4-B can step to 5-B
        assert p.is_check() and not p.is_checkmate() and p.outcome() is None
        assert p.status().highlights["check"] == ("5-A",)

    def test_figure_6_sente_wins_in_three(self) -> None:
        p = pos(FIG6, ball="3-D")
        assert not immediate_wins(p)  # no win in one
        mating = [a for a in p.legal_actions() if p.apply(a).is_checkmate()]
        assert [p.notation(a) for a in mating] == ["5-Bパス"]
        after = p.apply(mating[0])
        assert (after.outcome().winner, after.outcome().reason) == ("sente", "checkmate")

    def test_figure_6_the_seeds_line(self) -> None:
        p = pos(FIG6, ball="3-D", play_out=True)
        end = play(p, "5−Bパス", "同GK", "同桂")
        assert (end.outcome().winner, end.outcome().reason) == ("sente", "keeper-ejected")
        end = play(p, "5−Bパス", "4−AGK", "シュート")
        assert (end.outcome().winner, end.outcome().reason) == ("sente", "goal")
        after_pass = play(p, "5−Bパス")
        assert after_pass.is_checkmate() and after_pass.outcome() is None  # played out
        for reply in after_pass.legal_actions():
            if not isinstance(reply, Foul):  # a declared foul is no reply: it loses
                assert immediate_wins(after_pass.apply(reply))

    def test_a_side_without_any_action_is_checkmated(self) -> None:
        box = {s: "P" for s in squares("4-A 6-A 4-B 5-B 6-B")}
        p = pos({**box, "1-H": "P"}, ball="1-H", turn="gote")
        assert list(p._actions()) == []
        assert p.is_checkmate() and p.outcome().reason == "checkmate"

    def test_random_playouts_end_or_go_on_legally(self) -> None:
        rng = random.Random(7)
        endings = Counter()
        for _ in range(6):
            p = RULES.start()
            for _ in range(300):
                actions = list(p.legal_actions())
                if not actions:
                    break
                p = p.apply(rng.choice(actions))
            endings[p.outcome().reason if p.outcome() else None] += 1
        assert sum(endings.values()) == 6


# ---------------------------------------------------------------------- notation


def sample_positions() -> Iterable[Position]:
    rng = random.Random(3)
    yield RULES.start()
    yield play(RULES.start(), SYSTEM_343)
    yield fig1_kickoff()
    yield pos(FIG6, ball="3-D")
    p = fig1_kickoff()
    for _ in range(120):
        actions = list(p.legal_actions())
        if not actions:
            break
        p = p.apply(rng.choice(actions))
        yield p


class TestNotation:
    def test_every_action_round_trips(self) -> None:
        for p in sample_positions():
            for a in p.legal_actions():
                assert p.parse_action(p.notation(a)) == a
                assert p.parse_action(str(a)) == a

    def test_the_seeds_forms(self) -> None:
        p = pos(FIG6, ball="3-D", play_out=True)
        a = p.parse_action("先手5−Bパス")
        assert a == Pass("sente", "bishop", "3-D", "5-B")
        p = p.apply(a)
        assert p.parse_action("同GK") == Move("gote", "king", "5-A", "5-B")
        assert p.parse_action("４－ＡＧＫ") == Move("gote", "king", "5-A", "4-A")
        assert p.parse_action("4-A玉") == Move("gote", "king", "5-A", "4-A")
        p = p.apply(p.parse_action("同GK"))
        assert p.parse_action("同桂まで") == Move("sente", "knight", "7-C", "5-B")

    def test_ascii_aliases(self) -> None:
        p = pos({"5-F": "P", "3-D": "N"}, ball="5-F")
        assert p.parse_action("5EP") == p.parse_action("5-E歩") == p.parse_action("5-E pawn")
        assert p.parse_action("5-D pass") == Pass("sente", "pawn", "5-F", "5-D")
        assert p.parse_action("4-B knight") == Move("sente", "knight", "3-D", "4-B")
        q = play(RULES.start(), SYSTEM_343)
        assert q.parse_action("5-F B*") == Place("sente", "bishop", "5-F")
        assert RULES.start().parse_action("system RPP-BPPP-NNP") == Declare(("RPP", "BPPP", "NNP"))
        assert RULES.start().parse_action("システム RO PA PA/BI PA PA PA/NI NI PA") == Declare(
            ("RPP", "BPPP", "NNP")
        )

    def test_two_pieces_for_one_square_need_the_origin(self) -> None:
        p = pos({"4-E": "P", "6-E": "P"}, ball="4-E")
        with pytest.raises(NotationError, match=r"5-E歩\(4-E\) or 5-E歩\(6-E\)"):
            p.parse_action("5-E歩")
        a = p.parse_action("5-E歩(6-E)")
        assert a == Move("sente", "pawn", "6-E", "5-E")
        assert p.notation(a) == "5-E歩(6-E)"
        assert p.notation(Move("sente", "pawn", "4-E", "4-D")) == "4-D歩"

    def test_side_marks_are_checked(self) -> None:
        p = pos({"5-F": "P"}, ball="5-F")
        assert p.parse_action("▲5-E歩") == Move("sente", "pawn", "5-F", "5-E")
        with pytest.raises(IllegalAction, match="sente's turn"):
            p.parse_action("△5-E歩")
        with pytest.raises(IllegalAction, match="sente's turn"):
            p.parse_action("後手5-E歩")

    @pytest.mark.parametrize(
        "text",
        ["", "   ", "hello", "5-Z歩", "0-A歩", "5-B竜", "5-B歩(5-Z", "システム", "システム 3-4-3",
         "システム 飛歩歩-角歩歩歩", "システム 飛歩歩-角歩歩歩-桂桂竜", "同歩", "5-F角打(5-E)", "5--F歩"],
    )  # fmt: skip
    def test_malformed_text_is_a_notation_error(self, text: str) -> None:
        with pytest.raises(NotationError):
            pos({"5-F": "P"}, ball="5-F").parse_action(text)

    @pytest.mark.parametrize(
        "text, reason",
        [
            ("5-D歩", "a pawn moves one square"),
            ("5-Cパス", "a pawn passes up to two squares"),
            ("シュート", "a shot follows the paths of a pass"),
            ("5-E飛", "sente has no rook"),
            ("5-F角打", "set-up is over"),
        ],
    )
    def test_illegal_actions_say_why(self, text: str, reason: str) -> None:
        with pytest.raises(IllegalAction, match=reason):
            pos({"5-F": "P", "9-H": "B"}, ball="5-F").parse_action(text)

    def test_nobody_has_the_ball(self) -> None:
        with pytest.raises(IllegalAction, match="nobody has the ball"):
            pos({"5-F": "P"}, ball="5-D").parse_action("5-Eパス")
        with pytest.raises(IllegalAction, match="gote has the ball"):
            pos({"5-F": "P", "5-D": "p"}, ball="5-D").parse_action("シュート")

    @settings(max_examples=300, deadline=None)
    @given(st.text(max_size=30))
    def test_any_text_is_an_action_or_a_clear_error(self, text: str) -> None:
        for p in (RULES.start(), pos(FIG6, ball="3-D")):
            try:
                action = p.parse_action(text)
            except (NotationError, IllegalAction) as error:
                assert str(error)
            else:
                assert p.is_legal(action)

    @settings(max_examples=200, deadline=None)
    @given(
        st.one_of(
            st.text(max_size=60),
            st.text(alphabet="KRBNPkrbnp0123456789/ -ABCEFGHIJKaegiloprsty:²４", max_size=80),
        )
    )
    def test_any_position_text_reads_or_fails_clearly(self, text: str) -> None:
        try:
            p = RULES.from_text(text)
        except NotationError as error:
            assert str(error)
        else:
            assert RULES.from_text(p.to_text()) == p


# ---------------------------------------------------------------------- positions


class TestPositionText:
    def test_start(self) -> None:
        assert RULES.start().to_text() == "9/9/9/9/9/9/9/9/9/9/9 gote system 5-F - -"

    def test_round_trips(self) -> None:
        for p in sample_positions():
            assert RULES.from_text(p.to_text()) == p
            assert RULES.from_text(p.to_text()).to_text() == p.to_text()

    @pytest.mark.parametrize(
        "text, reason",
        [
            ("9/9/9 gote system 5-F - -", "11 ranks"),
            ("4k4/9/9/9/9/9/9/9/9/9/4K3 sente play 5-A - -", "8 squares"),
            ("4k4/9/9/9/9/9/9/9/9/9/4Q4 sente play 5-A - -", "'Q' is not a piece"),
            ("4k4/9/9/9/9/9/9/9/9/9/4K4 black play 5-A - -", "sente or gote"),
            ("4k4/9/9/9/9/9/9/9/9/9/4K4 sente playing 5-A - -", "stage"),
            ("4k4/9/9/9/9/9/9/9/9/9/4K4 sente play 5-Z - -", "ball"),
            ("4k4/9/9/9/9/9/9/9/9/9/4K4 sente play goal-A - -", "sente:goal"),
            ("9/9/9/9/9/9/9/9/9/9/4K4 sente play 5-K - -", "gote has no goalkeeper"),
            ("4k4/RR7/9/9/9/9/9/9/9/9/4K4 sente play 5-K - -", "2 rooks"),
            ("9/9/9/9/9/9/9/9/9/9/9 gote setup 5-F - -", "give the system"),
            ("9/9/9/9/9/9/9/9/9/9/9 gote setup 5-F RPP-BPPP-NNX -", "system"),
            ("4k4/9/9/9/9/9/9/9/9/9/4K4 sente play 5-A - winner", "result"),
            ("4k4/9/9/9/9/9/9/9/9/9/4K4 sente play", "5 or 6 fields"),
        ],
    )
    def test_malformed(self, text: str, reason: str) -> None:
        with pytest.raises(NotationError, match=reason):
            RULES.from_text(text)

    def test_diagram_draws_the_seeds_figure(self) -> None:
        drawing = pos(FIG5, ball="5-C", turn="gote").diagram()
        assert "A|  |  |  ┃  |GK|PA┃  |  |  |" in drawing
        assert "C|  |  |  |  |飛球|  |PA|  |  |" in drawing
        free = pos({"5-F": "P"}, ball="5-D").diagram()
        assert "D|  |  |  |  |空球|" in free


# ---------------------------------------------------------------------- the protocol


class TestProtocol:
    def test_registered(self) -> None:
        rules = load_rules("shogi-soccer")
        assert rules is RULES and rules.board == "shogi-soccer" and rules.name == "shogi-soccer"
        assert Position.sides == ("sente", "gote") and Position.game == "shogi-soccer"

    def test_positions_are_immutable_and_hashable(self) -> None:
        p = pos({"5-F": "P"}, ball="5-F")
        with pytest.raises(dataclasses.FrozenInstanceError):
            p.ball = 3  # type: ignore[misc]
        after = play(p, "5-E歩")
        assert p.ball_holder() == "5-F" and after.ball_holder() == "5-E"
        again = play(pos({"5-F": "P"}, ball="5-F"), "5-E歩")
        assert after == again and hash(after) == hash(again)
        assert len({p, after, again}) == 2

    def test_is_legal_agrees_with_legal_actions(self) -> None:
        for p in list(sample_positions())[:40]:
            legal = set(p.legal_actions())
            assert all(p.is_legal(a) for a in legal)
            for a in list(legal)[:5]:
                if isinstance(a, Move):
                    wrong = dataclasses.replace(a, target="5-F" if a.target != "5-F" else "5-E")
                    assert p.is_legal(wrong) == (wrong in legal)
            assert not p.is_legal("5-E歩")  # text is not an action

    def test_game_push_and_pop(self) -> None:
        game = Game(RULES.start())
        game.push_notation(SYSTEM_343)
        game.push_notation("5-K王打")
        assert game.notations() == [SYSTEM_343, "5-K王打"]
        assert game.pop() == Place("sente", "king", "5-K")
        assert game.position.layout() == {"5-F": ("ball",)}

    def test_options(self) -> None:
        assert RULES.start(play_out=True).play_out
        with pytest.raises(ValueError, match="unknown shogi-soccer option"):
            RULES.start(overtime=True)
        with pytest.raises(ValueError, match="True or False"):
            RULES.start(play_out="yes")

    def test_the_board_definition_has_every_square_and_piece(self) -> None:
        from masume.boards import load_board

        board = load_board(RULES.board)
        assert all(board.has_cell(name) for name in NAMES)
        assert set(PIECE_NAMES) <= set(board.pieces)

    def test_status_during_set_up_lights_the_squares(self) -> None:
        p = play(RULES.start(), SYSTEM_343, *FIG1_SENTE)
        s = p.status()
        assert s.to_move == "gote" and s.actions_per_turn == 11
        assert set(s.highlights["setup"]) == {a.square for a in p.legal_actions()}


# ---------------------------------------------------------------------- records


def _record_files() -> list[Path]:
    return sorted(RECORDS.glob("*.txt"))


@pytest.mark.parametrize("path", _record_files(), ids=lambda p: p.name)
def test_record_files_replay(path: Path) -> None:
    from masume.records import final_position, read_record

    record = read_record(path)
    assert record.game == "shogi-soccer"
    position = final_position(record, load_rules("shogi-soccer"))
    outcome = position.outcome()
    assert outcome is not None
    assert f"{outcome.winner}:{outcome.reason}" == record.headers["Result"]


def test_a_record_written_reads_back() -> None:
    from masume.records import parse_record, replay, write_record

    game = Game(RULES.start())
    for text in (SYSTEM_343, *FIG1_SENTE, *FIG1_GOTE, "2-Cパス", "3-A桂", "4-AGK", "シュート"):
        game.push_notation(text)
    text = write_record(game, {"Event": "test"})
    assert text.splitlines()[2] == SYSTEM_343
    again = replay(parse_record(text))
    assert again.position == game.position and again.actions == game.actions


def test_record_check_names_the_bad_action(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from masume.cli import main

    bad = tmp_path / "bad.txt"
    bad.write_text(
        '[Game "shogi-soccer"]\n'
        "# figure 3: the bishop on 3-E cannot reach 6-B\n"
        '[Position "4k4/9/9/9/2B6/9/9/9/9/9/4K4 sente play 3-E - -"]\n'
        "6-Bパス\n",
        encoding="utf-8",
    )
    assert main(["record", "check", "--game", "shogi-soccer", str(bad)]) == 1
    err = capsys.readouterr().err
    # N counts the turn lines (headers and comments are not turns): this is the first.
    assert "line 1: 6-Bパス: from rank E a bishop's pass reaches forward only as far as rank C" in err


def test_bench_rules_runs_on_this_engine(capsys: pytest.CaptureFixture[str]) -> None:
    import re

    from masume.cli import main

    assert main(["bench", "rules", "--game", "shogi-soccer", "--seconds", "0.1"]) == 0
    out = capsys.readouterr().out
    for label, unit in (("legal actions:", "positions/s"), ("random playouts:", "playouts/s")):
        line = next(line for line in out.splitlines() if line.startswith(label))
        ours = float(re.search(r"shogi-soccer ([0-9.]+) " + unit, line).group(1))
        assert ours > 0


# ---------------------------------------------------------------------- issue 14: the seed's "may"s and fouls


class TestSeedWords:
    def test_the_kick_off_second_action_may_be_left_out(self) -> None:
        """【進行】「先手はキックオフのパスを行った後、さらに1手指すことが出来る」: a "may"."""
        p = play(fig1_kickoff(), "3-Hパス")
        assert EndTurn("sente") in set(p.legal_actions())
        assert p.notation(EndTurn("sente")) == "手番終了"
        ended = play(p, "手番終了")
        assert (ended.status().to_move, ended.stage) == ("gote", "play")
        assert ended.layout() == p.layout()
        assert not ended.is_legal(EndTurn("gote"))  # afterwards a turn is one action
        with pytest.raises(IllegalAction, match="only sente's second action"):
            fig1_kickoff().apply(EndTurn("sente"))
        assert play(p, "3-G歩").status().to_move == "gote"  # the second action, as before

    def test_running_past_a_free_ball_may_leave_it(self) -> None:
        """【トラップ】「大駒は、持ち主のいないボール(空球)の地点を通過するとき、ボールを拾いながら
        ボールの地点を越えて移動することが出来る」: a "may"; the piece may also leave the ball."""
        p = pos({"5-H": "R", "1-H": "P"}, ball="5-F")
        trap = Move("sente", "rook", "5-H", "5-E")
        leave = Move("sente", "rook", "5-H", "5-E", False)
        assert {trap, leave} <= set(p.legal_actions())
        assert p.apply(trap).layout()["5-E"] == ("ball", "sente-rook")
        left = p.apply(leave)
        assert left.layout()["5-E"] == ("sente-rook",) and left.layout()["5-F"] == ("ball",)
        assert p.notation(leave) == "5-E飛スルー" and p.parse_action("5-E飛スルー") == leave
        assert p.parse_action("5-E飛") == trap  # a record written before reads the same
        not_past = Move("sente", "rook", "5-H", "5-G", False)  # the ball is not on the way
        with pytest.raises(IllegalAction, match="running past a free ball"):
            p.apply(not_past)

    def test_a_foul_is_declared_and_recorded(self) -> None:
        """【勝敗】「勝敗は、投了時、...および反則が行われた場合に決定する」: either side's foul is
        offered in play (a choice on the table: no piece moves), decides the game, and a
        record keeps it."""
        from masume.records import parse_record, replay, write_record

        p = fig1_kickoff()
        assert {Foul("sente"), Foul("gote")} <= set(p.legal_actions())
        assert Foul("sente") not in set(RULES.start().legal_actions())  # not before the kick-off
        fouled = play(p, "後手反則")
        assert (fouled.outcome().winner, fouled.outcome().reason) == ("sente", "foul")
        assert play(p, "反則").outcome().winner == "gote"  # no side named: the side to move's
        game = Game(RULES.start())
        for text in (SYSTEM_343, *FIG1_SENTE, *FIG1_GOTE, "2-Cパス", "手番終了", "先手反則"):
            game.push_notation(text)
        text = write_record(game, {"Result": "gote:foul"})
        assert "2-Cパス, 手番終了" in text and "先手反則" in text
        again = replay(parse_record(text))
        assert again.position == game.position and again.position.outcome().reason == "foul"

    def test_set_ups_never_hang(self) -> None:
        """Whatever gote declares and both sides set up, the set-up ends in a kick-off with a
        team-mate to pass to (0-10-0 and 0-0-10 hung; reading R6 guards gote's set-up)."""
        rng = random.Random(14)
        systems = list(all_systems())
        for _ in range(25):
            p = RULES.start().apply(Declare(rng.choice(systems)))
            while p.stage == "setup":
                actions = list(p.legal_actions())
                assert actions, p.to_text()
                p = p.apply(rng.choice(actions))
            assert p.stage == "kickoff" and passes(p)
