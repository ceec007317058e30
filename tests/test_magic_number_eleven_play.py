"""Magic Number Eleven: random play (hypothesis) and the doctests of the engine's modules."""

from __future__ import annotations

import doctest
import importlib
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from masume.rules import Game, load_rules
from masume.rules.base import ANY_CARD

RULES = load_rules("magic-number-eleven")
MODULES = ["masume.rules.magic_number_eleven", "masume.rules.magic_number_eleven.cards",
           "masume.rules.magic_number_eleven.field", "masume.rules.magic_number_eleven.actions",
           "masume.rules.magic_number_eleven.position", "masume.rules.magic_number_eleven.text",
           "masume.cards"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def assert_hidden(position) -> None:
    """A face-down synergy card is named to its owner only; a hand is never named."""
    for side, other in (("home", "away"), ("away", "home")):
        k = 0 if side == "home" else 1
        for area, card, _ in position.areas[k]:
            cell = f"{side}-synergy-{area}"
            assert card in position.seen_by(side).cells[cell][0]
            if not position.shown[k]:
                assert position.seen_by(other).cells[cell] == ("face down",)
                assert position.seen_by(None).cells[cell] == ("face down",)
    assert not any("SY" in line for view in ("home", "away", None)
                   for line in position.seen_by(view).hand)


@settings(max_examples=10, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32), st.booleans(), st.sampled_from(["home", "away"]))
def test_random_play_is_legal_round_trips_and_ends(seed: int, shootout: bool, first: str) -> None:
    """Whatever is chosen, a legal action applies, its notation reads back, the
    position's text reads back, the mat shows only the set's cards, and the match ends."""
    rng = random.Random(seed)  # one seed, not a drawn stream: shrinking stays quick
    game = Game(RULES.start(shootout=shootout, first=first))
    tags = {c.piece for c in game.position.cards.copies()} | {ANY_CARD}
    while game.position.outcome() is None:
        position = game.position
        actions = list(position.legal_actions())
        assert actions, position.status().message
        action = rng.choice(actions)
        text = position.notation(action)
        assert position.parse_action(text) == action
        for viewer in ("home", "away", None):
            position.notation_for(action, viewer)
        if hasattr(action, "card") and action.__class__.__name__ == "Synergy":
            other = "away" if position.to_move == "home" else "home"
            assert action.card not in position.notation_for(action, other)
            assert action.card not in position.notation_for(action, None)
        after = game.push(action)
        assert_hidden(after)
        assert RULES.from_text(after.to_text()) == after
        assert all(set(pieces) <= tags for pieces in after.layout().values())
        if action.__class__.__name__ in ("Press", "Link", "Effect", "Reveal", "Pick", "Ready", "Done"):
            # actions no sensor can see leave the mat as it was (a deck refilled aside)
            before = {k: v for k, v in position.layout().items() if not k.startswith("synergy-")}
            assert before == {k: v for k, v in after.layout().items() if not k.startswith("synergy-")}
        assert len(game.actions) < 2000
    outcome = game.position.outcome()
    assert outcome.winner in ("home", "away", None)
    assert not list(game.position.legal_actions())
