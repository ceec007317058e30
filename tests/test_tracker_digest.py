"""The tracker's readings as one number per game: making it (or an engine) faster must
leave them alone.

Positions of random games of each of the five games (fixed seeds), and on each the
board readings ``masume bench rules`` times, each given to a fresh tracker that then
settles: the board showing one action played, two quick actions played, and a piece
lifted after one action (the cell a next action takes pieces from reads empty). For
each: what the tick pushed and popped, the game's position after it, the view (state,
message, differing squares, destinations and sends, the choice) and the other readings
offered. All of it hashed; dicts and sets sorted, so that the string hash seed does
not matter.

The expected digests were computed on the tracker and engines before issue 15's
speed work. A digest that changes says a reading changed somewhere: find where with
``python tests/test_tracker_digest.py GAME`` on both versions and compare.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from digests import digest_of
from masume.bench.rules import lift_sources
from masume.boards import load_board
from masume.games import load_rules
from masume.play.cards import cards_of
from masume.rules import Game
from masume.tracker import Change, Tracker

#: game -> positions sampled (each read three ways)
PLAN: dict[str, int] = {
    "soccer-shogi": 14,
    "shogi-soccer": 10,
    "masume-tactics": 10,
    "magic-number-eleven": 14,
    "eyeshield21": 14,
}

EXPECTED = {
    # issue 16: a card laid where the game has another says the engine's reason and the
    # fix (two mismatch messages; the readings unchanged)
    "eyeshield21": "f797d0dd071e9dddde26a398eb136926",
    # issue 14: substitutions any time in one's own turn (more legal actions)
    "magic-number-eleven": "242e5672b7727d1f623292701b7c677b",
    "masume-tactics": "5cd22b6dcee15c1b5016c1f345029b7e",
    "shogi-soccer": "222a04ed7a8d267a5f82bc4f0e3ac411",
    "soccer-shogi": "71c90bd8c9eaa53f9476e2114219f27a",
}


def _samples(rules: Any, count: int, rng: random.Random) -> list[str]:
    """Texts of positions of random games, every tenth or so, each with legal actions."""
    texts: list[str] = []
    while len(texts) < count:
        position = rules.start()
        for _ in range(200):
            actions = list(position.legal_actions())
            if not actions or position.outcome() is not None:
                break
            if rng.random() < 0.12:
                texts.append(position.to_text())
                if len(texts) >= count:
                    break
            position = position.apply(rng.choice(actions))
    return texts


def _stacks(position: Any) -> dict[str, tuple[str, ...]]:
    return {c: tuple(p) for c, p in position.layout().items() if p}


def _readings(tracker: Tracker, shown: Any) -> dict[str, Any]:
    """What the board reads when it shows ``shown`` (a pile of unknown top card
    shows a spare card of the set, as in the bench)."""
    readings = dict(Tracker(Game(shown), tracker.board).expected_readings())
    cards = cards_of(shown)
    if cards is not None:
        used = {p for stack in shown.layout().values() for p in stack}
        spare = iter([c.tag for c in cards.copies() if c.tag and c.piece not in used])
        readings = {cell: next(spare) if reading == "*" else reading
                    for cell, reading in readings.items()}
    return readings


def _described(tracker: Tracker, change: Any) -> str:
    view = tracker.view
    others = [(r.pops, [str(a) for a in r.pushes]) for r in tracker._choices]
    return (f"popped={[str(a) for a in change.popped]} pushed={[str(a) for a in change.pushed]} "
            f"now={tracker.game.position.to_text()} view={view.state} {view.message!r} "
            f"differing={sorted(view.differing)} placed={sorted(view.placed)} "
            f"destinations={sorted(view.destinations.items())} sent={sorted(view.sent.items())} "
            f"choice={sorted(view.choice)} readings={others}")


def _moving(position: Any) -> list[Any]:
    """The legal actions that change what stands on the board."""
    before = _stacks(position)
    return [a for a in position.legal_actions() if _stacks(position.apply(a)) != before]


def lines(game: str) -> Iterator[str]:
    """What goes into the game's digest, line by line."""
    rules = load_rules(game)
    board = load_board(rules.board)
    rng = random.Random(f"{game}-tracker")
    for text in _samples(rules, PLAN[game], rng):
        yield f"position {text}"
        start = rules.from_text(text)
        if start.status().awaiting:
            continue
        # One action, then two quick actions, shown at once.
        shown = start
        for played in (1, 2):
            moving = _moving(shown) if not shown.status().awaiting else []
            if not moving or shown.outcome() is not None:
                break
            action = rng.choice(moving)
            shown = shown.apply(action)
            fresh = rules.from_text(text)
            tracker = Tracker(Game(fresh), board, cards=cards_of(fresh))
            readings = _readings(tracker, shown)
            tracker.observe(readings, 0.0)
            change = tracker.tick(10.0)
            yield f"  {played} played, last {action}: {_described(tracker, change)}"
        # A piece lifted after one action.
        first = rng.choice(list(start.legal_actions()))
        after = start.apply(first)
        if after.outcome() is not None or after.status().awaiting:
            continue
        sources = lift_sources(after, board)
        if not sources:
            continue
        lifted = rng.choice(sources)
        fresh = rules.from_text(text)
        game_ = Game(fresh)
        game_.push(first)
        tracker = Tracker(game_, board, cards=cards_of(fresh))
        readings = _readings(tracker, after)
        readings[lifted] = {"presence": False, "card": None}.get(board.cell(lifted).sensor, ())
        tracker.observe(readings, 0.0)
        yield f"  lifted {lifted} after {first}, moving: {_described(tracker, Change())}"
        change = tracker.tick(10.0)
        yield f"  lifted {lifted} after {first}, settled: {_described(tracker, change)}"


def digest(game: str) -> str:
    return digest_of(lines(game))


@pytest.mark.parametrize("game", sorted(PLAN))
def test_tracker_readings_unchanged(game: str) -> None:
    assert digest(game) == EXPECTED[game]


if __name__ == "__main__":  # python tests/test_tracker_digest.py [GAME | --digests]
    if sys.argv[1:] == ["--digests"]:
        for name in sorted(PLAN):
            print(f'    "{name}": "{digest(name)}",')
    else:
        for text in lines(sys.argv[1]):
            print(text)
