"""The computer opponent (issue 18): one interface, :class:`Player`, for every game.

A player is given a position, the side it plays and a time budget, and chooses one
of the legal actions, within the time asked. It works only through the engines'
API (:mod:`masume.rules.base`): the search is :mod:`masume.ai.search` (UCT with
chance nodes; information-set search over draws of what its side cannot see for
the card games). Levels (:data:`LEVELS`) set the time per move and a strength a
beginner can beat (fewer playouts, and now and then a random action).

>>> import random
>>> from masume.games import load_rules
>>> position = load_rules("soccer-shogi").start()
>>> player = SearchPlayer(level("beginner"), random.Random(1))
>>> position.is_legal(player.choose(position, "blue", 0.05))
True
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Protocol

from masume.rules.base import AnyPosition, HoldsHands

from .heuristics import evaluation, playable
from .search import acting_side, check_turn, is_chance, search, within_hand


class Player(Protocol):
    """Chooses an action for ``side`` (the side to act) within ``seconds``."""

    def choose(self, position: AnyPosition, side: str, seconds: float) -> Hashable: ...


@dataclass(frozen=True)
class Level:
    """A computer player's strength.

    ``seconds``: its time per move; ``iterations``: at most so many search
    iterations a move (None: as many as the time allows); ``blunders``: the share
    of moves it plays at random, so that a beginner can win.
    """

    name: str
    seconds: float
    iterations: int | None = None
    blunders: float = 0.0

    def __post_init__(self) -> None:
        if not self.seconds > 0:
            raise ValueError(f"a level's seconds must be more than 0, not {self.seconds!r}")
        if self.iterations is not None and self.iterations < 1:
            raise ValueError(f"a level's iterations must be at least 1, not {self.iterations!r}")
        if not 0.0 <= self.blunders <= 1.0:
            raise ValueError(f"a level's blunders must be between 0 and 1, not {self.blunders!r}")


#: The levels by name, weakest first.
LEVELS: dict[str, Level] = {level.name: level for level in (
    Level("beginner", seconds=0.5, iterations=30, blunders=0.3),
    Level("casual", seconds=1.0, iterations=200, blunders=0.1),
    Level("club", seconds=2.0),
    Level("strong", seconds=10.0),
)}


def level(name: str) -> Level:
    """The level called ``name``; ValueError names the levels.

    >>> level("club").seconds
    2.0
    >>> level("grandmaster")
    Traceback (most recent call last):
    ...
    ValueError: unknown level 'grandmaster'; levels: beginner, casual, club, strong
    """
    try:
        return LEVELS[name]
    except KeyError:
        raise ValueError(f"unknown level {name!r}; levels: {', '.join(LEVELS)}") from None


class RandomPlayer:
    """Any legal action but a declaration (:data:`masume.ai.heuristics.DECLARATIONS`),
    all alike likely (the benchmark's opponent)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(self, position: AnyPosition, side: str, seconds: float) -> Hashable:
        check_turn(position, side)
        actions: list[Hashable] = playable(position)
        return self.rng.choice(actions)


class SearchPlayer:
    """The computer: Monte Carlo tree search at ``level`` (its time per move is the
    smaller of the level's and the ``seconds`` a call gives)."""

    def __init__(self, level: Level, rng: random.Random) -> None:
        self.level = level
        self.rng = rng

    def choose(self, position: AnyPosition, side: str, seconds: float) -> Hashable:
        check_turn(position, side)
        if self.level.blunders and self.rng.random() < self.level.blunders:
            actions: list[Hashable] = playable(position)
            return self.rng.choice(actions)
        return search(position, side, min(seconds, self.level.seconds), rng=self.rng,
                      iterations=self.level.iterations).action


def play(start: AnyPosition, players: Mapping[str, Player], seconds: Mapping[str, float],
         rng: random.Random, max_actions: int = 3000) -> AnyPosition:
    """Play a game from ``start``: each side's player chooses its actions in its
    ``seconds``; chance (a die, a card turned up) is drawn with ``rng``, each legal
    outcome alike likely. Stops at the game's end or after ``max_actions``."""
    position = start
    for _ in range(max_actions):
        if position.outcome() is not None:
            break
        if is_chance(position):
            action = rng.choice(list(position.legal_actions()))
        else:
            side = acting_side(position)
            action = players[side].choose(position, side, seconds[side])
        position = dealt(position.apply(action), rng)
    return position


def dealt(position: AnyPosition, rng: random.Random) -> AnyPosition:
    """``position`` with every card of every hand known (:class:`HoldsHands`): the cards
    a hand drew and nobody has read yet are drawn from those they may be. The table
    that plays a game alone (:func:`play`) deals so, as the hand slots read the
    computer's cards at a real table; each player's search sees only its own hand."""
    if not isinstance(position, HoldsHands):
        return position
    for side in position.sides:
        held = position.hand_of(side)
        missing = position.hand_size(side) - len(held)
        if missing > 0:
            drawn = rng.sample(sorted(position.drawable(side)), missing)
            position = position.holding(side, held + tuple(drawn))
    return position


@dataclass(frozen=True)
class Advice:
    """The best action the search found for ``side`` and how it judges it: ``value``, the
    mean result of the searches through it for ``side`` (0 lost, 0.5 level, 1 won)."""

    side: str
    action: Hashable
    value: float


def advise(position: AnyPosition, side: str, level: Level, rng: random.Random,
           hand_cap: int | None = None) -> Advice:
    """The action ``level`` chooses for ``side`` (the side to act) and its value: the
    computer's move, or a hint. A level's random moves are made here too (its value then
    is the search's, if the search tried it, else 0.5: not judged). ``hand_cap``: the
    most cards its hand holds by its own choice (its hand slots: :class:`Search`)."""
    check_turn(position, side)
    if level.blunders and rng.random() < level.blunders:
        actions: list[Hashable] = playable(position)
        if hand_cap is not None:
            actions = within_hand(position, side, actions, hand_cap)
        return Advice(side, rng.choice(actions), 0.5)
    found = search(position, side, level.seconds, rng=rng, iterations=level.iterations,
                   hand_cap=hand_cap)
    _visits, value = found.stats.get(found.action, (0, 0.5))
    return Advice(side, found.action, value)


def standing(position: AnyPosition) -> dict[str, float]:
    """Who stands better, at a glance (an evaluation bar): each side's value from 0
    (lost) to 1 (won), as the search judges a position it stops in (the score, and the
    game's lean: :mod:`masume.ai.heuristics`). It reads only what the status says to
    everyone and the pieces on the table, never a hidden card, and takes no search."""
    return dict(evaluation(position.game)(position))


def searching(seconds: float, rng: random.Random) -> SearchPlayer:
    """A full-strength player thinking ``seconds`` a move (the benchmark's computer)."""
    return SearchPlayer(Level("timed", seconds), rng)


__all__ = ["LEVELS", "Advice", "Level", "Player", "RandomPlayer", "SearchPlayer", "acting_side",
           "advise", "dealt", "is_chance", "level", "play", "searching", "standing"]
