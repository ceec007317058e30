"""The computer player (masume.ai, issue 18): legal and within its time, chance drawn
and never chosen, no peeking at the other side's cards, and stronger than chance."""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter

import pytest

from masume.ai import LEVELS, Level, RandomPlayer, SearchPlayer, acting_side, level, play
from masume.ai.heuristics import (
    evaluation,
    playable,
    tactics_evaluation,
    tactics_keeping,
    tactics_play,
    tactics_shot,
)
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


def test_the_collector_leaves_what_was_there_before_the_search() -> None:
    """The objects that existed when the search began are out of the cyclic garbage
    collector's reach while it runs (a full collection inside a search took 1.2 s in
    Soccer Shogi), and back in it after."""
    import gc

    frozen: list[int] = []

    def clock() -> float:
        frozen.append(gc.get_freeze_count())
        return len(frozen) / 1000

    position = load_rules("soccer-shogi").start()
    before = gc.get_freeze_count()
    Search(position, "blue", random.Random(1), clock=clock).run(0.05)
    assert frozen and min(frozen) > before
    assert gc.get_freeze_count() == before


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
            drawn = [child.visits for child in node.children.values()]
            if node.visits >= 7:  # faces drawn in turn: each as often as the others, or one more
                assert len(drawn) == 6 and max(drawn) - min(drawn) <= 1, drawn
    assert chance_nodes > 0
    assert set(rolls) == {1, 2, 3, 4, 5, 6}
    assert min(rolls.values()) > sum(rolls.values()) / 20  # each face drawn, none favoured


def test_a_leaf_waiting_for_the_die_is_judged_by_its_faces() -> None:
    """Masume Soccer Tactics (leaves judged at once): a kick called, the die to come, is
    judged by the mean of the six positions after each face, not by where the ball stands
    before the roll; a charge by its two dice."""
    position = load_rules("masume-tactics").start(goals_to_win=1)
    found = Search(position, "home", random.Random(1))
    called = position.apply(position.parse_action("G8 ground N"))
    assert is_chance(called)
    faces = [tactics_evaluation(called.apply(Roll(die)))["home"] for die in range(1, 7)]
    judged = found._playout(called, deadline=float("inf"))["home"]
    assert judged == pytest.approx(sum(faces) / 6)
    assert judged != tactics_evaluation(called)["home"]


TACTICS_FORMATION = ("G2,C4,E3,I3,K4,G5,C7,E6,G8,I6,K7/"
                     "G16,C13,E14,I14,K13,G12,C10,E11,G11,I11,K10")


def tactics(ball: str, players: str = TACTICS_FORMATION, to_move: str = "home"):
    """Home's centre forward (home-9, on G8 in the formation) keeping the ball on ``ball``."""
    players = players.replace("G8", ball)
    return load_rules("masume-tactics").from_text(f"{players} {ball} {to_move} 1 home 0-0",
                                                  goals_to_win=1)


def test_the_lean_sees_a_shot() -> None:
    """Masume Soccer Tactics: the chance of a goal with one kick from where the ball is.
    On G13 (four squares out, away's goalkeeper on G16 in the way of a ground kick) a lob
    of length 4 scores: faces 2 and 4. On G15 an inside kick scores for sure; on G8, out of
    reach, nothing. With the first goal winning, a shot of chance p is worth p of a win."""
    far, lob, sure = tactics("G8"), tactics("G13"), tactics("G15", TACTICS_FORMATION.replace(
        "G16", "F16"))
    assert tactics_shot(far) == 0.0
    assert tactics_shot(lob) == pytest.approx(2 / 6)
    assert tactics_shot(sure) == 1.0
    assert tactics_evaluation(sure)["home"] == 1.0
    assert tactics_evaluation(far)["home"] < tactics_evaluation(lob)["home"]
    # The goalkeeper out of the way: a ground kick of 4 or more from G13 scores too.
    open_goal = tactics("G13", TACTICS_FORMATION.replace("G16", "C16"))
    assert tactics_shot(open_goal) == pytest.approx(3 / 6)
    # From H13 to the north-west: G14, F15, E16, and the post (a diagonal into the goal
    # from outside it): nothing that way; north (H14 to H16, H17 is the goal's) it goes.
    assert tactics_shot(tactics("H13", TACTICS_FORMATION.replace("G16", "C16"))) == pytest.approx(
        3 / 6)


def test_a_keeper_next_to_a_defender_may_lose_the_ball() -> None:
    """Masume Soccer Tactics: when the defence acts, an opponent next to the keeper (in
    front or beside) wins the ball by a charge with 21 chances in 36; one behind him would
    commit a foul, and nobody charges while the keeper's side acts."""
    formation = TACTICS_FORMATION.replace("C10", "G9")  # away-7 in front of home-9 on G8
    assert tactics_keeping(tactics("G8", formation, to_move="home")) == 1.0
    assert tactics_keeping(tactics("G8", formation, to_move="away")) == pytest.approx(15 / 36)
    behind = TACTICS_FORMATION.replace("C10", "G7")
    assert tactics_keeping(tactics("G8", behind, to_move="away")) == 1.0
    assert tactics_play(tactics("G8", formation, to_move="away")) < tactics_play(
        tactics("G8", behind, to_move="away"))


def test_a_win_in_one_is_seen_at_the_leaf() -> None:
    """Shogi-piece soccer: a leaf where the side to move can shoot into an open goal (or
    eject the goalkeeper) is judged won for it, whatever the ball's place and the pieces."""
    judge = evaluation("shogi-soccer")
    rules = load_rules("shogi-soccer")
    open_shot = rules.from_text("3k5/9/4R4/9/9/9/9/9/9/9/4K4 sente play 5-C - -")
    assert judge(open_shot) == {"sente": 1.0, "gote": 0.0}
    # Gote to move, its pawn on 6-C next to the rook: in check, but it may take the ball,
    # so not lost yet, and judged by the lean.
    parried = rules.from_text("3k5/9/3pR4/9/9/9/9/9/9/9/4K4 gote play 5-C - -")
    assert parried.outcome() is None and parried.is_check() and not parried.wins_now()
    assert 0.5 < judge(parried)["sente"] < 1.0


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


def test_a_loose_ball_leans_to_the_side_standing_nearer() -> None:
    """Masume Soccer Tactics: a loose ball one step from home's nearest player and two from
    away's leans to home; the other way round, to away (the ball a rank further from home's
    goal would lean home's way on its own)."""
    rules = load_rules("masume-tactics")
    formation = ("G2,C4,E3,I3,K4,G5,C7,E6,G8,I6,K7/"
                 "G15,C13,E14,I14,K13,G12,C10,E11,G11,I11,K10")
    nearer_home = rules.from_text(f"{formation} G9 home 1 home 0-0")
    nearer_away = rules.from_text(f"{formation} G10 home 1 home 0-0")
    assert nearer_home.keeper == nearer_away.keeper == -1
    assert tactics_play(nearer_home) > 0 > tactics_play(nearer_away)
    kept = rules.start()  # home-9 keeps the ball on the centre mark
    assert tactics_play(kept) > tactics_play(nearer_home)


def test_a_winning_shot_is_tried_first() -> None:
    """Shogi-piece soccer: among 37 actions, the rook's open shot (a goal) is tried before
    the others (shots and ejections first), so three iterations find and choose it."""
    position = load_rules("shogi-soccer").from_text(
        "3k5/9/4R4/9/9/9/9/9/9/9/4K4 sente play 5-C - -")
    assert len(list(position.legal_actions())) == 37
    result = search(position, "sente", 600.0, rng=random.Random(5), iterations=3)
    outcome = position.apply(result.action).outcome()
    assert outcome is not None and outcome.winner == "sente"


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
    assert run("shogi-soccer", games=2, move_seconds=0.02, seed=3, max_actions=300,
               levels="beginner,club") == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert re.fullmatch(r"beginner vs club: \d won, \d drawn, \d lost "
                        r"\(\d unfinished, judged by the score\)", lines[1])
    assert run("shogi-soccer", games=1, move_seconds=0.02, seed=3, max_actions=100,
               levels="beginner,random") == 0
    assert "beginner vs random: " in capsys.readouterr().out
    assert run("shogi-soccer", games=1, move_seconds=0.1, levels="beginner") == 2
    assert "--levels names two levels" in capsys.readouterr().out
    assert run("shogi-soccer", games=1, move_seconds=0.1, levels="beginner,hard") == 2
    assert "unknown level 'hard'" in capsys.readouterr().out
    assert run("chess", games=1, move_seconds=0.1) == 2
    assert "unknown game 'chess'" in capsys.readouterr().out
    assert run("shogi-soccer", games=0, move_seconds=0.1) == 2
    assert "--games must be at least 1" in capsys.readouterr().out


def test_the_search_proves_wins_and_losses() -> None:
    """Shogi-piece soccer, an MCTS solver: an open shot wins at once, so the root is proven
    won in one iteration and the search stops; with gote in check and one parry among nine
    actions (the pawn takes the ball from the rook), each other action is proven lost (sente
    wins in one after it) once tried, and the parry is chosen in ten iterations."""
    rules = load_rules("shogi-soccer")
    shot = rules.from_text("3k5/9/4R4/9/9/9/9/9/9/9/4K4 sente play 5-C - -")
    found = search(shot, "sente", 600.0, rng=random.Random(1), iterations=200)
    assert found.iterations == 1 and shot.apply(found.action).outcome().winner == "sente"
    checked = rules.from_text("3k5/9/3pR4/9/9/9/9/9/9/9/4K4 gote play 5-C - -")
    actions = playable(checked)
    parries = [a for a in actions if not checked.apply(a).wins_now()]
    assert len(actions) == 9 and len(parries) == 1
    for seed in range(3):
        assert search(checked, "gote", 600.0, rng=random.Random(seed),
                      iterations=10).action == parries[0]


def test_minimax_backups_keep_the_best_line() -> None:
    """Masume Soccer Tactics (implicit minimax backups): after a search every node holds,
    beside its mean, the value of the best line below it for the searching side: a leaf
    its evaluation (a kick waiting for the die: the mean over its faces), a node the best
    child of the side choosing there (the other side's: its lowest for us), chance the
    mean over its faces once each was drawn. Games without a weight keep none."""
    position = load_rules("masume-tactics").start()  # the kick-off: kicks, dice below
    side = acting_side(position)
    found = Search(position, side, random.Random(2))
    found.run(600.0, iterations=600)
    kinds: Counter[str] = Counter()
    stack: list[Node] = [found.root]
    while stack:
        node = stack.pop()
        stack.extend(node.children.values())
        values = [child.minimax for child in node.children.values()]
        assert node.minimax is not None and None not in values
        if not node.children:
            assert node.position is not None
            kinds["leaf"] += 1
            assert node.minimax == pytest.approx(found._expected(node.position, 2)[side])
        elif node.chooser is None:
            kinds["chance"] += 1
            if len(values) == node.outcomes:
                assert node.minimax == pytest.approx(sum(values) / len(values))
        else:
            kinds["choice"] += 1
            assert node.minimax == (max if node.chooser == side else min)(values)
    assert kinds["leaf"] > 100 and kinds["chance"] > 5 and kinds["choice"] > 5
    assert found.root.chooser == side
    elsewhere = midgame("shogi-soccer", 3)
    other = Search(elsewhere, acting_side(elsewhere), random.Random(2))
    other.run(600.0, iterations=50)
    assert all(child.minimax is None for child in other.root.children.values())
