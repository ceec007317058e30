"""Every engine's behaviour as one number: a refactor of the engines must leave it alone.

Random games of each of the five games (fixed seeds), and at every position the
position's text, status, layout, outcome, what each side sees (games that hide
cards), and for every legal action, in the engine's order: its ``str``, its
notation, what each side may read of it, that the notation reads back to it, and
the text of the position it leads to. All of it hashed.

The expected digests were computed on the code before the engine contract of
issue 13 (typed capabilities, card sets given to the engines, the two single-module
engines split into packages): a change that moves code must leave them as they are.
One change of meaning is in them on purpose: Magic Number Eleven's turn lamps are
``turn-home``/``turn-away`` (they were ``home-turn``/``away-turn``), the name every
board file gives them; its digest was computed on the old code with only that name
changed.

Eyeshield 21's digest since issue 16: its "shuffle, then deal" step names the deck and
the guts pile, and lights the guts pile (status message and highlights only).

A digest that changes says the engine now behaves differently somewhere: find where
with ``python tests/test_engine_digest.py GAME`` on both versions and compare (it
prints every line that goes into the hash).
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from digests import digest_of

from masume.games import load_rules
from masume.rules import HidesInformation

#: game -> (random games, actions a game at most)
PLAN: dict[str, tuple[int, int]] = {
    "soccer-shogi": (6, 50),
    "soccer-shogi+options": (6, 50),
    "shogi-soccer": (2, 45),
    "masume-tactics": (4, 45),
    "magic-number-eleven": (4, 50),
    "eyeshield21": (4, 60),
}

EXPECTED = {
    "eyeshield21": "a3c87b47bba5964f37e51ed053d87f79",
    "magic-number-eleven": "7597d4462920691c339f6995b0c0b2f9",
    "masume-tactics": "7746b100c9e08c574254f4d3c33bdce1",
    "shogi-soccer": "cefa545f937b0492c885c1e7a2796e9e",
    "soccer-shogi": "fee8e6172f9b8a51b9be878d3388a028",
    "soccer-shogi+options": "ed33408a9697aaebb162b4d6edcb957a",
}

#: digest name -> (game, rule options of its starting position). Soccer Shogi's options
#: digest was computed after issue 14 made `keeper_first_action_no_pass` what rule 1-4 says.
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "soccer-shogi+options": ("soccer-shogi", {
        "keepers_cannot_jump": True, "keeper_first_action_no_pass": True, "goals_to_win": 3}),
}


def _status_line(position: Any) -> str:
    s = position.status()
    timers = sorted((name, t.seconds, str(t.action), t.per_turn) for name, t in s.timers.items())
    return (f"status {s.to_move} {s.action_number}/{s.actions_per_turn} {sorted(s.score.items())} "
            f"awaiting={s.awaiting} deciding={s.deciding} turn={s.turn} {s.message!r} "
            f"highlights={list(s.highlights.items())} timers={timers}")


def _views(position: Any) -> Iterator[str]:
    if not isinstance(position, HidesInformation):
        return
    for viewer in (*position.sides, None):
        view = position.seen_by(viewer)
        yield (f"view {viewer} {sorted(view.cells.items())} {view.hand} {view.panel}")


def lines(game: str) -> Iterator[str]:
    """What goes into the game's digest, line by line."""
    name, options = VARIANTS.get(game, (game, {}))
    rules = load_rules(name)
    count, length = PLAN[game]
    for seed in range(count):
        rng = random.Random(f"{game}-{seed}")
        position = rules.start(**options)
        yield f"game {seed} {position.to_text()}"
        for _ in range(length):
            yield position.to_text()
            yield _status_line(position)
            yield f"layout {sorted(position.layout().items())}"
            outcome = position.outcome()
            yield f"outcome {outcome} {outcome and sorted(outcome.score.items())}"
            yield from _views(position)
            if outcome is not None:
                break
            actions = list(position.legal_actions())
            hides = isinstance(position, HidesInformation)
            for action in actions:
                written = position.notation(action)
                after = position.apply(action)
                back = position.parse_action(written)
                line = f"  {action} | {written} | {back == action} | {after.to_text()}"
                if hides:
                    line += " | " + " | ".join(position.notation_for(action, v)
                                               for v in (*position.sides, None))
                yield line
            if not actions:
                break
            position = position.apply(rng.choice(actions))
        yield f"end {position.to_text()}"


def digest(game: str) -> str:
    return digest_of(lines(game))


@pytest.mark.parametrize("game", sorted(PLAN))
def test_engine_behaviour_unchanged(game: str) -> None:
    assert digest(game) == EXPECTED[game]


if __name__ == "__main__":  # python tests/test_engine_digest.py [GAME | --digests]
    if sys.argv[1:] == ["--digests"]:
        for name in sorted(PLAN):
            print(f'    "{name}": "{digest(name)}",')
    else:
        for text in lines(sys.argv[1]):
            print(text)
