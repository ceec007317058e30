"""The computer player (masume.ai, issue 18): legal and within its time, chance drawn
and never chosen, no peeking at the other side's cards, and stronger than chance."""

from __future__ import annotations

import itertools
import re
import random
from collections import Counter

import pytest
from masume.ai import LEVELS, Level, RandomPlayer, SearchPlayer, level, play
from masume.ai.heuristics import playable
from masume.ai.search import Node, Search, is_chance, search
from masume.games import GAMES, load_rules
from masume.rules import Roll
from masume.rules.shogi_soccer.actions import Foul


def midgame(game: str, seed: int, actions: int = 30):
    """The last position, a player to act, within some random actions of a game."""
    rng = random.Random(seed)
    position = load_rules(game).start()
    last = position
    for _ in range(actions):
        if position.outcome() is not None:
            break
        if not is_chance(position):
            last = position
        position = position.apply(rng.choice(list(position.legal_actions())))
    return last


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_search_chooses_a_legal_action_in_every_game(game: str) -> None:
    for seed in (1, 2):
        position = midgame(game, seed)
        side = position.status().deciding or position.status().to_move
        result = search(position, side, 60.0, rng=random.Random(seed), iterations=12,
                        playout_depth=4)
        assert position.is_legal(result.action)
        assert result.iterations == 12
        assert sum(visits for visits, _ in result.stats.values()) == 12


def test_the_search_keeps_to_its_time() -> None:
    """On a clock that moves a millisecond each time it is read, no iteration starts
    that its longest predecessor says would end after the deadline."""
    ticks = itertools.count()
    readings: list[float] = []

    def clock() -> float:
        readings.append(next(ticks) / 1000)
        return readings[-1]

    position = load_rules("soccer-shogi").start()
    result = Search(position, "blue", random.Random(1), clock=clock).run(0.5)
    assert result.iterations > 5
    assert readings[-1] - readings[0] <= 0.5


def test_chance_is_drawn_never_chosen() -> None:
    """Masume Soccer Tactics: a kick is followed by the die. The die's nodes are no
    side's (no player's value is kept for them) and each face is drawn."""
    position = load_rules("masume-tactics").start()
    found = Search(position, "home", random.Random(4))
    found.run(600.0, iterations=400)
    rolls: Counter[int] = Counter()
    chance_nodes = 0
    stack: list[Node] = [found.root]
    while stack:
        node = stack.pop()
        stack.extend(node.children.values())
        if node.position is not None and is_chance(node.position):
            chance_nodes += 1
            for outcome, child in node.children.items():
                assert isinstance(outcome, Roll)
                assert child.actor is None and child.total == 0.0
                rolls[outcome.die] += child.visits
    assert chance_nodes > 0
    assert set(rolls) == {1, 2, 3, 4, 5, 6}
    assert min(rolls.values()) > sum(rolls.values()) / 20  # each face drawn, none favoured


@pytest.mark.parametrize("game", ["eyeshield21", "magic-number-eleven"])
def test_the_choice_does_not_depend_on_the_other_sides_hidden_cards(game: str) -> None:
    """Two positions that differ only in cards the side cannot see (the other side's
    face-down cards, drawn again) give the same search, visit for visit, and the same
    choice as a spectator reads it."""
    compared = 0
    for seed in range(40):
        position = midgame(game, seed, actions=40 + seed)
        side = position.status().deciding or position.status().to_move
        other = position.sample_unseen(side, random.Random(seed))  # type: ignore[attr-defined]
        if other == position:
            continue  # nothing hidden from the side here
        assert other.seen_by(side) == position.seen_by(side)
        ours = search(position, side, 600.0, rng=random.Random(1), iterations=25,
                      playout_depth=8)
        theirs = search(other, side, 600.0, rng=random.Random(1), iterations=25,
                        playout_depth=8)
        assert ours.stats == theirs.stats  # the search saw the same, visit for visit
        # A card "from the deck" the draws offered may lie in the real position's hidden
        # area: the choice is then another such card, the same to the eye.
        assert position.is_legal(ours.action) and other.is_legal(theirs.action)
        assert (position.notation_for(ours.action, None)  # type: ignore[attr-defined]
                == other.notation_for(theirs.action, None))  # type: ignore[attr-defined]
        compared += 1
        if compared == 3:
            break
    assert compared == 3


def test_the_computer_beats_a_random_player() -> None:
    """Soccer Shogi, first goal wins, four games, sides alternating, a seeded generator and
    a fixed number of iterations a move (not a clock): the computer wins every one."""
    rules = load_rules("soccer-shogi")
    rng = random.Random(11)
    computer = SearchPlayer(Level("test", seconds=600.0, iterations=15), rng)
    chance = RandomPlayer(rng)
    for number in range(4):
        start = rules.start(goals_to_win=1)
        ours, theirs = start.sides if number % 2 == 0 else start.sides[::-1]
        end = play(start, {ours: computer, theirs: chance}, {ours: 600.0, theirs: 0.0}, rng)
        outcome = end.outcome()
        assert outcome is not None and outcome.winner == ours, (number, outcome)


def test_players_never_declare() -> None:
    """Shogi-piece soccer's foul is declared by the players and ends the game: neither the
    computer nor the random player ever declares one (a search that could would declare
    the other side's and win at once)."""
    position = load_rules("shogi-soccer").start()
    rng = random.Random(2)
    chance = RandomPlayer(rng)
    while not any(isinstance(a, Foul) for a in position.legal_actions()):  # to open play
        position = position.apply(chance.choose(position, position.status().to_move, 0.0))
    for _ in range(3):
        side = position.status().to_move
        assert any(isinstance(a, Foul) for a in position.legal_actions())
        assert not any(isinstance(a, Foul) for a in playable(position))
        action = search(position, side, 600.0, rng=rng, iterations=60, playout_depth=1).action
        assert not isinstance(action, Foul)
        assert not isinstance(chance.choose(position, side, 0.0), Foul)
        position = position.apply(action)
        if position.outcome() is not None:
            break


def test_levels_and_bad_input() -> None:
    assert list(LEVELS) == ["beginner", "casual", "club", "strong"]
    assert level("beginner").blunders > 0 and level("beginner").iterations is not None
    with pytest.raises(ValueError, match="unknown level 'hard'; levels: beginner"):
        level("hard")
    with pytest.raises(ValueError, match="seconds must be more than 0"):
        Level("x", seconds=0)
    with pytest.raises(ValueError, match="blunders must be between 0 and 1"):
        Level("x", seconds=1, blunders=2)
    position = load_rules("soccer-shogi").start()
    player = SearchPlayer(level("beginner"), random.Random(1))
    with pytest.raises(ValueError, match="red does not act now: blue does"):
        player.choose(position, "red", 0.1)
    with pytest.raises(ValueError, match="side must be blue or red, not 'green'"):
        player.choose(position, "green", 0.1)
    die = load_rules("masume-tactics").start()
    die = die.apply(next(a for a in die.legal_actions() if is_chance(die.apply(a))))
    with pytest.raises(ValueError, match="waits for die, not a player"):
        player.choose(die, die.status().to_move, 0.1)


def test_bench_ai_prints_its_lines(capsys: pytest.CaptureFixture[str]) -> None:
    from masume.bench.ai import run

    assert run("shogi-soccer", games=2, move_seconds=0.05, seed=3) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ("shogi-soccer: 2 games a match, 0.05 s a move, seed 3, "
                        "at most 2000 actions a game")
    assert re.fullmatch(r"computer vs random: \d won, \d drawn, \d lost "
                        r"\(\d unfinished, judged by the score\)", lines[1])
    assert re.fullmatch(r"computer at 0\.05 s vs computer at 0\.005 s: \d won, \d drawn, "
                        r"\d lost \(\d unfinished, judged by the score\)", lines[2])
    assert re.fullmatch(r"moves at 0\.05 s: \d+ of \d+ took longer, the slowest "
                        r"[\d.]+ s \(wall clock\)", lines[3])
    assert run("chess", games=1, move_seconds=0.1) == 2
    assert "unknown game 'chess'" in capsys.readouterr().out
    assert run("shogi-soccer", games=0, move_seconds=0.1) == 2
    assert "--games must be at least 1" in capsys.readouterr().out
