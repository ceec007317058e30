"""A finished game read again by the computer: its biggest mistakes (issue 18).

For every action a side chose (not chance's), the search is run from the position
before it for that side; the action's loss is the search's value of its own best
action less the value of the action played (both the mean result of the searches
through them, 0 lost to 1 won). An action played that the search tried too seldom to
judge is judged by the position after it (:func:`masume.ai.standing`), as the search
judges where it stops. The actions that lost most are the comments.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from masume.rules.base import AnyPosition

from . import Level, standing
from .search import acting_side, is_chance, search

#: Fewer visits than this and the search's value of an action is not trusted.
JUDGED_VISITS = 3


@dataclass(frozen=True)
class Mistake:
    """Action ``index`` (from 0) of the game, by ``side``: ``played`` where the search
    prefers ``better``; ``loss`` its value less the played action's."""

    index: int
    side: str
    played: Hashable
    better: Hashable
    loss: float


def mistakes(start: AnyPosition, actions: Sequence[Hashable], level: Level,
             rng: random.Random, *, most: int = 3, least_loss: float = 0.05,
             progress: Callable[[int, int], None] | None = None) -> list[Mistake]:
    """The ``most`` actions of the game that lost most (at least ``least_loss`` each),
    the greatest first, each position searched at ``level``. ``progress(done, total)``
    is called after each action read (a page's progress bar; what it raises stops the
    review)."""
    found: list[Mistake] = []
    position = start
    for index, played in enumerate(actions):
        if position.outcome() is None and not is_chance(position):
            side = acting_side(position)
            result = search(position, side, level.seconds, rng=rng, iterations=level.iterations)
            best_visits, best_value = result.stats.get(result.action, (0, 0.5))
            visits, value = result.stats.get(played, (0, 0.0))
            if visits < JUDGED_VISITS:
                value = standing(position.apply(played))[side]
            loss = best_value - value
            if result.action != played and best_visits >= JUDGED_VISITS and loss >= least_loss:
                found.append(Mistake(index, side, played, result.action, loss))
        position = position.apply(played)
        if progress is not None:
            progress(index + 1, len(actions))
    found.sort(key=lambda m: m.loss, reverse=True)
    return found[:most]


__all__ = ["Mistake", "mistakes"]
