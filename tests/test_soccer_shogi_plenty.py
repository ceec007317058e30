"""The quick test's ``plenty`` (issue 15, stop 29): where three squares or more are the
targets of two players' quiet steps, every use of ``_others`` says legal, so a listing
asks it no more. Listed with ``plenty`` and with it forced off, every position of random
games has the same legal actions in the same order, leading to the same positions."""

from __future__ import annotations

import random

import pytest

from masume.rules.soccer_shogi import RULES
from masume.rules.soccer_shogi import position as engine
from masume.rules.soccer_shogi.geometry import PITCH


def _listing(text: str) -> list[tuple[str, str]]:
    position = RULES.from_text(text)
    return [(repr(action), position.apply(action).to_text())
            for action in position.legal_actions()]


def test_plenty_changes_no_legal_action(monkeypatch: pytest.MonkeyPatch) -> None:
    rng, position = random.Random(29), RULES.start()
    texts, plenty = [], 0
    for _ in range(1200):
        actions = list(position.legal_actions())
        if not actions or position.outcome() is not None:
            position = RULES.start(first=rng.choice(["blue", "red"]),
                                   keepers_cannot_jump=rng.random() < 0.5)
            continue
        if position.phase == "play" and position.done == 0:
            quick = position._quick_test()
            if quick is not None and quick.plenty:
                plenty += 1
                # what plenty stands for: every player's _others holds three squares or more
                assert all(quick._others(square).bit_count() >= 3 for square in PITCH)
            texts.append(position.to_text())
        position = position.apply(rng.choice(actions))
    assert plenty > 300 and len(texts) - plenty > 10, (plenty, len(texts))
    with_plenty = [_listing(text) for text in texts]

    made = engine._QuickTest.__init__

    def without_plenty(quick: engine._QuickTest, position: engine.Position,
                       closers: dict[int, int]) -> None:
        made(quick, position, closers)
        quick.plenty = False

    monkeypatch.setattr(engine._QuickTest, "__init__", without_plenty)
    assert [_listing(text) for text in texts] == with_plenty
