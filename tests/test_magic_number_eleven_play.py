"""Magic Number Eleven: random play (hypothesis); the modules' doctests run in test_contract."""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from masume.games import load_rules
from masume.rules import Game
from masume.rules.base import ANY_CARD

RULES = load_rules("magic-number-eleven")
RECORDS = Path(__file__).parent / "records" / "magic-number-eleven" / "seed-judgement.txt"
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
        old, new = position.layout(), after.layout()
        changed = {cell for cell in set(old) | set(new) if old.get(cell) != new.get(cell)}
        if type(action).__name__ == "Place":  # what the reader sees: that card, there
            assert changed == {action.cell}
            assert after.layout()[action.cell] == (after.cards.copy(action.card).piece,)
        if type(action).__name__ == "Synergy":
            cell = f"{position.to_move}-synergy-{action.area}"
            assert changed - {"synergy-deck", "synergy-discard"} == {cell}
            assert after.layout()[cell] == (after.cards.copy(action.card).piece,)
        if type(action).__name__ in ("Press", "Link", "Effect", "Reveal", "Pick", "Ready", "Done"):
            # actions no sensor can see leave the mat as it was (a deck refilled aside)
            before = {k: v for k, v in position.layout().items() if not k.startswith("synergy-")}
            now = {k: v for k, v in after.layout().items() if not k.startswith("synergy-")}
            assert before == now
        assert len(game.actions) < 2000
    outcome = game.position.outcome()
    assert outcome.winner in ("home", "away", None)
    assert not list(game.position.legal_actions())


def test_the_tracker_reads_the_seeds_judgement_from_the_mat() -> None:
    """The engine's layouts are what a card mat reads: cards put on cells are read as
    placements and synergy cards, the cleared cards as ``clear``; the buttons (end,
    effect, shoot) are pushed as the table would."""
    from masume.boards import load_board
    from masume.tracker import Tracker

    position = RULES.start(home_stars="ST01/ST04/ST07", away_stars="ST02/ST05/ST08",
                           home_bench="H08/H09/H10", away_bench="A05/A06/A07")
    game = Game(position)
    cards = position.cards
    tracker = Tracker(game, load_board("magic-number-eleven"), cards=cards)
    readings = tracker.expected_readings()
    readings["synergy-deck"] = cards.copy("SY25").tag  # the deck shows some card's tag
    clock = [0.0]
    tracker.observe(readings, clock[0])
    read: list[str] = []

    def put(cell: str, copy_id: str | None) -> None:
        clock[0] += 0.05
        tracker.observe_square(cell, cards.copy(copy_id).tag if copy_id else None, clock[0])

    def settle() -> None:
        clock[0] += 1.0
        read.extend(str(a) for a in tracker.tick(clock[0]).pushed)
        assert tracker.view.state == "in-sync", tracker.view.message

    def button(text: str) -> None:
        tracker.push(game.position.parse_action(text))
        read.append(text)

    for cell, card, then in [("H2d", "H04", ""), ("A4c", "A10", ""), ("H1c", "H02", "end"),
                             ("A4a", "ST08", ""), ("H1a", "H01", "end"), ("A3a", "A09", ""),
                             ("H1e", "H03", "end"), ("A2c", "A04", ""), ("H3a", "ST04", "effect"),
                             ("A1c", "A01", "end")]:
        put(cell, card)
        settle()
        if then:
            button(then)
    button("shoot H1c at H1c^")
    for cell, card in [("home-synergy-1", "SY24"), ("home-synergy-2", "SY04"),
                       ("away-synergy-1", "SY19"), ("away-synergy-2", "SY05")]:
        put(cell, card)
        settle()
    assert game.position.last == "home attack 10 vs defence 9: goal!"
    for cell in ("home-synergy-1", "home-synergy-2", "away-synergy-1", "away-synergy-2"):
        put(cell, None)
    put("synergy-discard", "SY24")
    settle()
    record = RECORDS.read_text(encoding="utf-8")
    assert ", ".join(read) == ", ".join(line for line in record.splitlines()
                                        if line and not line.startswith(("#", "[")))
    assert game.position.to_move == "away" and game.position.score == (1, 0)
