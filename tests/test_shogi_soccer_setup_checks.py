"""The set-up checks of shogi-piece soccer read from the board's own passes and rows
(issue 15, sixth round) say what the checks made on the board with the piece set up say.

``_gote_may_set_up`` and ``_kickoff_can_pass`` answer for a piece on a square the
kick-off's passes reach without making that board again; the reference here makes it
(the piece written into the board, its passes and gote's rows found anew) for every
square of every set-up position of random games, not only the squares the listing asks.
"""

from __future__ import annotations

import random

from masume.games import load_rules
from masume.rules.shogi_soccer.geometry import EMPTY, KICKOFF, SIZE, pass_targets
from masume.rules.shogi_soccer.position import _SETUP_SQUARES, _WAY_FROM_KICKOFF, Position

RULES = load_rules("shogi-soccer")


def _setup_positions(games: int) -> list[Position]:
    out: list[Position] = []
    for game in range(games):
        rng = random.Random(f"setup-{game}")
        position = RULES.start()
        while position.stage in ("system", "setup"):
            actions = list(position.legal_actions())
            if position.stage == "setup":
                out.append(RULES.from_text(position.to_text()))
            position = position.apply(rng.choice(actions))
    return out


def _kickoff_can_pass_on_the_board(position: Position, kicker: str, i: int, letter: str,
                                   more: bool) -> bool:
    """``Position._kickoff_can_pass`` as it was: the board made with ``letter`` on ``i``."""
    board, targets = position._kickoff_targets(kicker)
    if i != KICKOFF and i in targets:
        board = board[:i] + letter + board[i + 1:]
        targets = tuple(pass_targets(board, KICKOFF, KICKOFF))
    return position._receivers_possible(board, targets, more)


def test_gote_s_check_is_the_check_on_the_board_with_the_piece() -> None:
    compared, outcomes = 0, set()
    for position in _setup_positions(40):
        if position.turn != 1 or position.system is None:
            continue
        for i in range(SIZE):
            if position.board[i] != EMPTY or not any(i in row for row, _ in
                                                     position._board_gote_rows):
                continue
            fresh = RULES.from_text(position.to_text())
            quick = fresh._gote_may_set_up(i, "p")
            made = position._kickoff_stays_open(position.board[:i] + "p" + position.board[i + 1:])
            assert quick == made, (position.to_text(), i)
            compared += 1
            outcomes.add((quick, i in position._reached_from_kickoff))
    # A blocked kick-off (False, on a reached square) met, and both answers on reached squares.
    assert compared > 2000, compared
    assert {(False, True), (True, True), (True, False)} <= outcomes, outcomes


def test_sente_s_check_is_the_check_on_the_board_with_the_piece() -> None:
    compared, outcomes = 0, set()
    for position in _setup_positions(40):
        if position.turn != 0:
            continue
        kickers = {position.board[KICKOFF]} if position.board[KICKOFF] != EMPTY else set("RBNP")
        for kicker in sorted(kickers):
            for more in (False, True):
                for i in sorted(_SETUP_SQUARES[0] | {KICKOFF}):
                    if position.board[i] != EMPTY:
                        continue
                    fresh = RULES.from_text(position.to_text())
                    quick = fresh._kickoff_can_pass(kicker, i, "P", more)
                    made = _kickoff_can_pass_on_the_board(position, kicker, i, "P", more)
                    assert quick == made, (position.to_text(), kicker, i, more)
                    compared += 1
                    reached = i in position._kickoff_targets(kicker)[1]
                    blocking = reached and any(i in _WAY_FROM_KICKOFF[t] for t in
                                               position._kickoff_targets(kicker)[1] if t < SIZE)
                    outcomes.add((quick, reached, blocking))
    assert compared > 5000, compared
    # Squares the passes reach, in the way of others and not, and squares they miss, both
    # answers for those (a piece on a reached square is a receiver itself: no False met).
    assert {(True, True, True), (True, True, False), (False, False, False),
            (True, False, False)} <= outcomes, outcomes
