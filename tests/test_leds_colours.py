"""The put-wrong light is no side's colour: every game's sides are measured against it.

A side's colour blinks where the computer's action (or a hint) puts a piece, and the
put-wrong light blinks too, so the two must differ by hue: at least
``WRONG_HUE_GAP`` degrees (60: a sixth of the wheel, red to yellow) between the
put-wrong light's hue and every side's.
"""

from __future__ import annotations

import colorsys

import pytest

from masume.games import GAMES, load_rules
from masume.leds import RED, WRONG, WRONG_HUE_GAP


def hue(rgb: tuple[int, int, int]) -> float:
    return 360 * colorsys.rgb_to_hsv(*(v / 255 for v in rgb))[0]


def hue_gap(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    gap = abs(hue(a) - hue(b)) % 360
    return min(gap, 360 - gap)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_put_wrong_is_no_sides_colour(game: str) -> None:
    legend = load_rules(game).start().legend
    for side, colour in legend.sides.items():
        assert hue_gap(WRONG, colour) >= WRONG_HUE_GAP, (game, side, colour)


def test_red_was_too_near_a_side() -> None:
    """Why: the old put-wrong red is 7 degrees from soccer-shogi's red side."""
    assert hue_gap(RED, (255, 30, 0)) < WRONG_HUE_GAP
