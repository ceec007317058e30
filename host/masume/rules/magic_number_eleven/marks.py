"""Where the half symbols printed on the field's cards lie, for a page to draw them.

A player card lies over two side-by-side cells (``geometry.covered``): its front
(top) and back (bottom) edges give each cell a half symbol, its left edge the cell
under its left half, its right edge the other. The mat lays home's field below
away's (hardware/boards/magic-number-eleven.toml: home's front row at y = 3, away's
at y = 4), each team's front toward the halfway line, so a card's edges point to
the compass of the board: home's front is north (+y) and its left west (-x); away's
front is south and its left east.

>>> from masume.games import load_rules
>>> position = load_rules("magic-number-eleven").start(
...     home_stars="ST01/ST04/ST07", away_stars="ST02/ST05/ST08",
...     home_bench="H08/H09/H10", away_bench="A08/A09/A10")
>>> marks = edge_marks(position.apply(position.parse_action("H01 H2b")))
>>> marks["H2b"], marks["H2c"]
({'n': 'shot', 's': 'shot', 'w': 'crack'}, {'n': 'shot', 's': 'link', 'e': 'shot'})
"""

from __future__ import annotations

from typing import Any

from .geometry import covered, parse_cell

#: A team's edges of a card (top, bottom, left, right) as compass points of the mat.
COMPASS = {"home": ("n", "s", "w", "e"), "away": ("s", "n", "e", "w")}


def edge_marks(position: Any) -> dict[str, dict[str, str]]:
    """Cell -> compass point (``n``, ``s``, ``e``, ``w``) -> the half symbol printed at
    that edge of the card lying there (``c``: the symbols printed complete, joined by
    spaces), for every player card on the field."""
    out: dict[str, dict[str, str]] = {}
    for cell, copy_id in position.field:
        where = parse_cell(cell)
        if where is None:
            continue
        top, bottom, left, right = COMPASS[where[0]]
        symbols = position.player_card(copy_id).symbols
        first, second = covered(cell)
        halves = {first: {top: symbols.top[0], bottom: symbols.bottom[0], left: symbols.left},
                  second: {top: symbols.top[1], bottom: symbols.bottom[1], right: symbols.right}}
        if symbols.full:
            halves[first]["c"] = " ".join(symbols.full)
        for name, edges in halves.items():
            out[name] = {edge: kind for edge, kind in edges.items() if kind}
    return out
