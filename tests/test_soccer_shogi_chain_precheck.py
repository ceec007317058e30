"""The chain search's precheck (issue 15, stop 27): a listing calls the search only for a
player with a first hop (``_ALL_HOPS``: a piece next to it, the square behind empty), and
such a search always finds a chain; without one it would find none."""

from __future__ import annotations

import random

from masume.rules.soccer_shogi import RULES
from masume.rules.soccer_shogi.position import _ALL_HOPS, _search_chains


def test_the_first_hop_precheck_says_what_the_search_finds() -> None:
    counts = {True: 0, False: 0}
    for seed, keepers_cannot_jump in ((15, False), (16, True)):
        rng = random.Random(seed)
        position = RULES.start(keepers_cannot_jump=keepers_cannot_jump)
        for _ in range(1500):
            actions = list(position.legal_actions())
            if not actions or position.outcome() is not None:
                position = RULES.start(first=rng.choice(["blue", "red"]),
                                       keepers_cannot_jump=keepers_cannot_jump)
                continue
            if position.phase == "play":
                setting = position._chain_setting()
                board = setting[0]
                for square in position._active_squares:  # every player, keepers too
                    first_hop = any(board[mid] and not board[land]
                                    for mid, land in _ALL_HOPS[square])
                    chains = _search_chains(square, position.ball, setting)
                    assert bool(chains) == first_hop, (position, square)
                    assert position._chains(square, setting) == chains
                    counts[first_hop] += 1
            position = position.apply(rng.choice(actions))
    assert counts[True] > 1000 and counts[False] > 1000, counts
