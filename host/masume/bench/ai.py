"""``masume bench ai --game G --games N --move-seconds S``: the computer's strength.

Two matches of N games each, the sides alternating (the computer plays the first
side in the even games): the computer at S seconds a move against a player choosing
uniformly among the legal actions, then the computer at S against itself at S/10.
Chance (a die, a card turned up) is drawn by the table, each outcome alike likely.

A game not over after ``max_actions`` actions is judged by its score (a draw when
level); the line says how many were. The last line counts the computer's moves at S
that took longer than S by the wall clock, and the slowest (a move within the time
asked; a loaded machine can stop the process for longer than S).

With ``levels`` (``--levels beginner,club``), one match instead: the first level against
the second (``random``: the random player), each at its own iteration cap and share of
random moves, its time the smaller of the level's and S (a level's own time, 2 s a move
and more, makes a match of hours).

Generic over games: it uses only the Position protocol and :mod:`masume.ai`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Hashable, Mapping
from typing import Any

from masume.ai import Player, RandomPlayer, SearchPlayer, level, play, searching
from masume.games import load_rules
from masume.rules import AnyPosition

#: Options for the benchmark's matches where a game's defaults never end it: Masume
#: Soccer Tactics plays on without a clock by default (``goals_to_win`` 0, ``halves`` 0).
BENCH_OPTIONS: Mapping[str, Mapping[str, Any]] = {"masume-tactics": {"goals_to_win": 1}}


class Timed:
    """A player whose moves are timed: how many, how many took longer than asked, the
    longest."""

    def __init__(self, player: Player) -> None:
        self.player = player
        self.moves = self.late = 0
        self.slowest = 0.0

    def choose(self, position: AnyPosition, side: str, seconds: float) -> Hashable:
        began = time.perf_counter()
        action = self.player.choose(position, side, seconds)
        took = time.perf_counter() - began
        self.moves += 1
        self.late += took > seconds
        self.slowest = max(self.slowest, took)
        return action


def judged(position: AnyPosition) -> str | None:
    """The winner of a game, or None for a draw: by the outcome, else by the score."""
    outcome = position.outcome()
    if outcome is not None:
        return outcome.winner
    score = position.status().score
    if not score or len(set(score.values())) < len(score):
        return None
    return max(score, key=lambda side: score[side])


def match(game: str, first: Timed, second: Player, games: int, seconds: tuple[float, float],
          rng: random.Random, max_actions: int) -> tuple[int, int, int, int]:
    """``first`` against ``second``, the sides alternating: (won, drawn, lost, unfinished)."""
    rules = load_rules(game)
    won = drawn = lost = unfinished = 0
    for number in range(games):
        start = rules.start(**BENCH_OPTIONS.get(game, {}))
        ours, theirs = start.sides if number % 2 == 0 else start.sides[::-1]
        end = play(start, {ours: first, theirs: second},
                   {ours: seconds[0], theirs: seconds[1]}, rng, max_actions)
        unfinished += end.outcome() is None
        winner = judged(end)
        won += winner == ours
        lost += winner == theirs
        drawn += winner is None
    return won, drawn, lost, unfinished


def run(game: str, games: int, move_seconds: float, seed: int = 1,
        max_actions: int = 2000, levels: str | None = None) -> int:
    if games < 1 or not move_seconds > 0:
        print("masume bench ai: --games must be at least 1 and --move-seconds more than 0")
        return 2
    try:
        load_rules(game)
        names = None if levels is None else levels.split(",")
        for name in names or ():
            if name != "random":
                level(name)
    except ValueError as error:
        print(f"masume bench ai: {error}")
        return 2
    if names is not None and len(names) != 2:
        print(f"masume bench ai: --levels names two levels (beginner,club), not {levels!r}")
        return 2
    rng = random.Random(seed)
    print(f"{game}: {games} games a match, {move_seconds:g} s a move, seed {seed}, "
          f"at most {max_actions} actions a game")
    if names is not None:
        first, second = (RandomPlayer(rng) if name == "random" else SearchPlayer(level(name), rng)
                         for name in names)
        won, drawn, lost, unfinished = match(game, Timed(first), second, games,
                                             (move_seconds, move_seconds), rng, max_actions)
        print(f"{names[0]} vs {names[1]}: {won} won, {drawn} drawn, {lost} lost"
              f" ({unfinished} unfinished, judged by the score)")
        return 0
    computer = Timed(searching(move_seconds, rng))
    won, drawn, lost, unfinished = match(game, computer, RandomPlayer(rng), games,
                                         (move_seconds, 0.0), rng, max_actions)
    print(f"computer vs random: {won} won, {drawn} drawn, {lost} lost"
          f" ({unfinished} unfinished, judged by the score)")
    short = move_seconds / 10
    longer = Timed(searching(move_seconds, rng))
    won, drawn, lost, unfinished = match(game, longer, searching(short, rng), games,
                                         (move_seconds, short), rng, max_actions)
    print(f"computer at {move_seconds:g} s vs computer at {short:g} s: "
          f"{won} won, {drawn} drawn, {lost} lost ({unfinished} unfinished, judged by the score)")
    moves, late = computer.moves + longer.moves, computer.late + longer.late
    print(f"moves at {move_seconds:g} s: {late} of {moves} took longer, the slowest "
          f"{max(computer.slowest, longer.slowest):.3f} s (wall clock)")
    return 0
