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
