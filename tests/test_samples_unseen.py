"""The card games' SamplesUnseen (the computer's determinization, issue 18): a draw of
what a side cannot see leaves what it sees alone, stays a position the rules play on,
and depends only on what the side sees."""

from __future__ import annotations

import random

import pytest
from masume.games import load_rules
from masume.rules.base import SamplesUnseen

CARD_GAMES = ("eyeshield21", "magic-number-eleven")


def positions(game: str, seed: int, actions: int = 400):
    """The positions of a seeded random game, every one."""
    rng = random.Random(seed)
    position = load_rules(game).start()
    for _ in range(actions):
        yield position
        if position.outcome() is not None:
            return
        position = position.apply(rng.choice(list(position.legal_actions())))


@pytest.mark.parametrize("game", CARD_GAMES)
def test_a_draw_keeps_what_the_side_sees_and_the_rules_play_on(game: str) -> None:
    rng = random.Random(7)
    hidden_seen = 0
    for position in positions(game, seed=3):
        assert isinstance(position, SamplesUnseen)
        for viewer in position.sides:
            drawn = position.sample_unseen(viewer, rng)
            assert drawn.seen_by(viewer) == position.seen_by(viewer)
            hidden_seen += drawn != position
            if drawn.outcome() is not None:
                continue
            actions = list(drawn.legal_actions())
            assert actions, f"a draw left no legal action: {drawn.to_text()}"
            drawn.apply(rng.choice(actions))  # raises if the draw broke the rules' state
    assert hidden_seen > 10  # the games did hide cards, and the draws changed them


@pytest.mark.parametrize("game", CARD_GAMES)
def test_a_draw_depends_only_on_what_the_side_sees(game: str) -> None:
    """Two positions the side cannot tell apart (one is a draw of the other) give the
    same draw from the same generator: the hidden cards themselves are never read."""
    differed = 0
    for number, position in enumerate(positions(game, seed=5)):
        for viewer in position.sides:
            other = position.sample_unseen(viewer, random.Random(number))
            differed += other != position
            assert (position.sample_unseen(viewer, random.Random(99))
                    == other.sample_unseen(viewer, random.Random(99)))
    assert differed > 10
