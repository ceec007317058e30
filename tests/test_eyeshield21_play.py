"""Eyeshield 21 TCG over whole games: the record files (also through
``masume record check``) and a property test of random
play (every legal action applies, notation and position text round-trip, the
hidden cards stay hidden, the cards add up, and games end by deck-out)."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from masume.games import load_rules
from masume.records import RecordError, parse_record, read_record, replay, write_record
from masume.rules import Game
from masume.rules.base import ANY_CARD
from masume.rules.eyeshield21 import Call, Place, Use
from masume.rules.eyeshield21.geometry import owner_of
from masume.rules.eyeshield21.notation import impossible
from masume.rules.eyeshield21.position import Position

RULES = load_rules("eyeshield21")
from test_records import expected_failure

RECORDS = Path(__file__).parent / "records" / "eyeshield21"


# --------------------------------------------------------------------------- records


def test_record_files() -> None:
    files = sorted(RECORDS.glob("*.txt"))
    assert len(files) >= 3
    for path in files:
        expected = expected_failure(path)
        if expected is not None:
            with pytest.raises(RecordError) as info:
                replay(read_record(path))
            assert str(info.value) == expected
        else:
            game = replay(read_record(path))
            rewritten = parse_record(write_record(game, read_record(path).headers))
            assert [t.actions for t in rewritten.turns] == [t.actions for t in read_record(path).turns]


def test_the_full_game_ends_by_deck_out() -> None:
    game = replay(read_record(RECORDS / "full-game.txt"))
    outcome = game.position.outcome()
    assert outcome is not None and outcome.reason == "deck-out"
    assert min(outcome.score.values()) == 0


def test_the_worked_attack_in_the_record() -> None:
    """The record of docs/rules/eyeshield21.md: Falcon Bomb 11 + Play Action 2 - Sack 3 = 10 v 5."""
    record = read_record(RECORDS / "first-turns.txt")
    game = Game(RULES.start())
    for turn in record.turns[:8]:
        for text in turn.actions:
            game.push_notation(text)
        if turn.number == 7:
            p = game.position
            assert (p.power("home"), p.power("away")) == (13, 5)
    p = game.position
    # 5 damage; Sack is spent but still on the mat until away tidies up
    assert (p.power("home"), p.power("away"), p.piles[1].discard) == (10, 5, 5)
    assert p.card_at("away-pass-2") == "S31.1"


def masume(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "masume.cli", *args], capture_output=True, text=True,
                          timeout=120)


def test_record_check_cli() -> None:
    result = masume("record", "check", "--game", "eyeshield21", str(RECORDS / "first-turns.txt"))
    assert result.returncode == 0, result.stderr
    assert "ok, 79 actions on 15 turn lines" in result.stdout
    illegal = RECORDS / "first-turns-illegal-refill.txt"
    result = masume("record", "check", "--game", "eyeshield21", str(illegal))
    assert result.returncode == 1
    assert result.stderr.strip().startswith("line 6: refill 3: refill 0 to 2")


# --------------------------------------------------------------------------- properties


def _check(position: Position) -> None:
    assert not impossible(position)
    assert RULES.from_text(position.to_text()) == position
    layout = position.layout()
    on_cells = [piece for stack in layout.values() for piece in stack if piece != ANY_CARD]
    assert len(on_cells) == len(set(on_cells)) == len(position.cells)
    for viewer in ("home", "away", None):
        view = position.seen_by(viewer)
        for cell, copy, up in position.cells:
            hidden = view.cells[cell] == ("face down",)
            assert hidden == (not up and viewer != owner_of(cell))
            if hidden:
                assert copy not in str(view.cells[cell])
    for s in (0, 1):
        piles = position.piles[s]
        assert min(piles) >= 0
        assert len(position._pools[s]) == piles.deck + piles.hand + piles.guts + piles.discard - len(position.gone[s])


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32), first=st.sampled_from(["home", "away"]),
       swap=st.booleans(), draw_cost=st.sampled_from([1, 2]))
def test_random_play(seed: int, first: str, swap: bool, draw_cost: int) -> None:
    decks = {"deck_home": "sharks", "deck_away": "falcons"} if swap else {}
    rng = random.Random(seed)
    position = RULES.start(first=first, draw_cost=draw_cost, **decks)
    for count in range(3000):
        if position.outcome() is not None:
            break
        actions = list(position.legal_actions())
        assert 0 < len(actions) < 400, position.to_text()
        action = rng.choice(actions)
        text = position.notation(action)
        assert position.parse_action(text) == action
        for viewer in ("home", "away", None):
            shown = position.notation_for(action, viewer)
            if viewer != position.to_move and isinstance(action, Place) and shown.startswith("?"):
                assert action.copy not in shown
        after = position.apply(action)
        if isinstance(action, (Call, Use)) and not getattr(action, "bench", ""):
            # what no sensor sees leaves every card where it lies; only a pile may come or go
            before, now = position.layout(), after.layout()
            changed = {c for c in set(before) | set(now) if before.get(c) != now.get(c)}
            assert all(c.endswith(("-deck", "-guts", "-discard")) for c in changed), (action, changed)
        if count % 7 == 0 or after.outcome() is not None:
            _check(after)
            assert after.status().message
        position = after
    outcome = position.outcome()
    assert outcome is not None and outcome.reason == "deck-out"
