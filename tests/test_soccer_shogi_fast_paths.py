"""The shortcuts of the Soccer Shogi engine's generation give the same positions as
the plain dataclass (docs/benchmarks.md, "the settle search made cheaper")."""

from __future__ import annotations

import dataclasses
import pickle
import random

from masume.rules.soccer_shogi import PIECE_NAMES, PITCH, RULES, SQUARE_NAMES, Position


def _positions(count: int = 300, seed: int = 4) -> list[Position]:
    rng, out = random.Random(seed), []
    position = RULES.start()
    while len(out) < count:
        actions = list(position.legal_actions())
        if not actions or position.outcome() is not None:
            position = RULES.start(first=rng.choice(["blue", "red"]))
            continue
        out.append(position)
        position = position.apply(rng.choice(actions))
    return out


def _plain_layout(position: Position) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for i in PITCH:
        cell = position.cells[i]
        if cell:
            out[SQUARE_NAMES[i]] = ("ball", PIECE_NAMES[cell]) if i == position.ball else (PIECE_NAMES[cell],)
    if not position.cells[position.ball]:
        out[SQUARE_NAMES[position.ball]] = ("ball",)
    return out


def test_generated_positions_equal_and_hash_as_the_dataclass_made_ones() -> None:
    for position in _positions():
        for child in position._children.values():
            plain = dataclasses.replace(child)  # made by the dataclass's __init__
            assert plain == child and hash(plain) == hash(child)
            assert plain.to_text() == child.to_text()
            assert list(child.layout().items()) == list(_plain_layout(child).items())


def test_a_pickled_position_keeps_no_hash() -> None:
    position = _positions(40)[-1]
    hash(position)
    copy = pickle.loads(pickle.dumps(position))
    assert "_hash" not in vars(copy) and copy == position and hash(copy) == hash(position)
