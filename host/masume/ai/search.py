"""Monte Carlo tree search (UCT) on the engines' API, for every game.

One search serves the three kinds of game (docs/ai.md):

- perfect information: each node holds its position and its legal actions, listed
  once (listing is the dearest call of some engines);
- chance (``Status.awaiting``: a die's :class:`~masume.rules.base.Roll`, a card turned
  up from a shuffled pile): the search never chooses the outcome; it draws one,
  each legal outcome alike likely (a die's faces; a pile's unseen copies);
- hidden information (:class:`~masume.rules.base.HidesInformation`): single-observer
  information-set MCTS. Each iteration starts from a position drawn by
  :class:`~masume.rules.base.SamplesUnseen` (what the searching side cannot see, drawn
  afresh), so the search only ever reads what its side may see; a node is then a
  sequence of actions, and selection chooses among the children legal in this
  iteration's draw (each child counts how often it was available).

Values are from the point of view of the side that acted into a node, in [0, 1]:
a win 1, a draw 0.5, a loss 0. A playout stops at the game's end, after
``playout_depth`` actions or at the deadline; an unfinished one is judged by
:mod:`masume.ai.heuristics` (the score; in the soccer games the ball's row too).
"""

from __future__ import annotations

import gc
import math
import random
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field

from masume.rules.base import AnyPosition, HidesInformation, HoldsHands, SamplesUnseen

from . import heuristics

#: The share of a move's time (at most 20 ms) kept for what follows the last iteration:
#: the result, and freeing a tree of some thousand positions (2 ms at the median in
#: Masume Soccer Tactics). Without it half the moves there ended a few ms late.
FINISHING = 0.05


#: Where leaves are judged at once (no playout), a leaf that waits for chance is judged by
#: the mean over its outcomes, to so many draws deep: a kick's die, a charge's two dice.
CHANCE_DRAWS = 2


def acting_side(position: AnyPosition) -> str:
    """The side whose player chooses now (``Status.deciding``, else ``to_move``)."""
    status = position.status()
    return status.deciding or status.to_move


def is_chance(position: AnyPosition) -> bool:
    """Does the position wait for chance (a die, a card turned up), not for a player?"""
    return position.status().awaiting is not None


def check_turn(position: AnyPosition, side: str) -> None:
    """ValueError unless ``side`` is to choose an action in ``position``."""
    if position.outcome() is not None:
        raise ValueError(f"the game is over ({position.outcome()}): nothing to choose")
    if is_chance(position):
        raise ValueError(f"the game waits for {position.status().awaiting}, not a player")
    if side not in position.sides:
        raise ValueError(f"side must be {' or '.join(position.sides)}, not {side!r}")
    if acting_side(position) != side:
        raise ValueError(f"{side} does not act now: {acting_side(position)} does")


def within_hand(position: AnyPosition, side: str, actions: list[Hashable], cap: int,
                over: dict[Hashable, bool] | None = None) -> list[Hashable]:
    """The ``actions`` after which ``side``'s hand holds no more than ``cap`` cards (or than
    it holds now, if more): all of them if none does, or if the game knows no hands.
    ``over``: what is known already, action -> over (an action's hand after it is a count
    that the hidden cards do not change), kept up to date.

    >>> from masume.games import load_rules
    >>> start = load_rules("soccer-shogi").start()
    >>> within_hand(start, "blue", ["any"], 0)
    ['any']
    """
    if not isinstance(position, HoldsHands):
        return actions
    most = max(cap, position.hand_size(side))
    known = {} if over is None else over
    for action in actions:
        if action not in known:
            after = position.apply(action)
            known[action] = isinstance(after, HoldsHands) and after.hand_size(side) > most
    kept = [action for action in actions if not known[action]]
    return kept or actions


@dataclass(eq=False)
class Node:
    """A node of the tree: the side that acted into it, its statistics, its children."""

    actor: str | None  # the side whose action led here (None: chance, or the root)
    visits: int = 0
    total: float = 0.0  # sum of the actor's values
    available: int = 0  # iterations in which this node's action was legal (hidden info)
    children: dict[Hashable, Node] = field(default_factory=dict)
    #: Perfect information only: the position and its untried actions, listed once.
    position: AnyPosition | None = None
    untried: list[Hashable] | None = None
    #: Perfect information only: the side that wins from here whatever the other does
    #: (the game over, a win in one the game tells, or proven from the children), or None.
    proven: str | None = None
    #: Implicit minimax backups (perfect information, where a game sets a weight): the
    #: value for the searching side of the best line the tree holds below this node (its
    #: leaf's evaluation until it has children; the chooser's best child, the mean over
    #: chance's outcomes once each was drawn), and who chooses here (None: chance).
    minimax: float | None = None
    chooser: str | None = None
    outcomes: int = 0


@dataclass
class SearchResult:
    """What one search found: the action chosen and the root's statistics."""

    action: Hashable
    iterations: int
    #: action -> (visits, mean value for the searching side).
    stats: dict[Hashable, tuple[int, float]]


class Search:
    """One move's search from ``position`` for ``side`` (the side to act there)."""

    def __init__(self, position: AnyPosition, side: str, rng: random.Random,
                 playout_depth: int | None = None,
                 clock: Callable[[], float] = time.perf_counter,
                 hand_cap: int | None = None) -> None:
        check_turn(position, side)
        self.side = side
        #: The most cards the side's hand may hold by its own choice (a table's hand
        #: slots: docs/ai.md, "A hand larger than its slots"): an action of the root that
        #: would take the hand past it (and past what it holds now) is not chosen, unless
        #: every action would. None: no cap. (action -> over the cap, at the root.)
        self.hand_cap = hand_cap if isinstance(position, HoldsHands) else None
        self._over: dict[Hashable, bool] = {}
        self.rng = rng
        self.playout_depth = (heuristics.playout_depth(position.game) if playout_depth is None
                              else playout_depth)
        self.evaluate = heuristics.evaluation(position.game)
        self.eager = heuristics.eager(position.game)
        self.exploration = heuristics.exploration(position.game)
        #: How much a child's minimax value counts beside its mean in selection (0: plain
        #: UCT). Perfect information only.
        self.minimax_weight = heuristics.minimax_weight(position.game)
        self.clock = clock
        self.hidden = isinstance(position, HidesInformation)
        if self.hidden and not isinstance(position, SamplesUnseen):
            raise TypeError(f"{position.game} hides cards but cannot draw what a side does "
                            "not see (masume.rules.base.SamplesUnseen): the search would peek")
        if self.hidden:
            self.minimax_weight = 0.0
        self.start = position
        self.root = Node(None)
        if not self.hidden:
            self.root.position = position
            self.root.untried = self._capped(position, self._shuffled(position))

    def _capped(self, position: AnyPosition, actions: list[Hashable]) -> list[Hashable]:
        """The root's ``actions`` that keep the side's hand within :attr:`hand_cap`."""
        if self.hand_cap is None:
            return actions
        return within_hand(position, self.side, actions, self.hand_cap, self._over)

    def _shuffled(self, position: AnyPosition) -> list[Hashable]:
        """The legal actions in the order to try them (from the end): the game's eager
        actions (:data:`masume.ai.heuristics.EAGER`) first, each kind shuffled."""
        actions = heuristics.playable(position)
        self.rng.shuffle(actions)
        first = self.eager
        if first is not None:
            actions.sort(key=lambda action: first(position, action))
        return actions

    def _pick(self, position: AnyPosition, actions: list[Hashable]) -> Hashable:
        """A playout's action: an eager one every other time there is one, else any."""
        if self.eager and self.rng.random() < 0.5:
            eager = [a for a in actions if self.eager(position, a)]
            if eager:
                return self.rng.choice(eager)
        return self.rng.choice(actions)

    def run(self, seconds: float, iterations: int | None = None) -> SearchResult:
        """Search until ``seconds`` have passed (from now) or ``iterations`` are done.

        The objects that exist when the search starts are frozen out of the cyclic garbage
        collector's reach until it is over (``gc.freeze``): a full collection walks every
        object it tracks, and where a game's history holds many (Soccer Shogi's positions
        kept their successors then: some two million objects after a few dozen moves)
        one took 1.2 s, six times a move's time, in the middle of a search. The search's
        own objects are collected as usual (holding the collector off altogether left it
        a whole tree to walk when the move was made)."""
        gc.freeze()
        try:
            return self._run(seconds, iterations)
        finally:
            gc.unfreeze()

    def _run(self, seconds: float, iterations: int | None) -> SearchResult:
        now = self.clock()
        deadline = now + seconds
        done = 0
        longest = 0.0  # no iteration starts that could end after the deadline
        while ((iterations is None or done < iterations) and now + longest < deadline
               and self.root.proven is None):
            self._iterate(deadline)
            done += 1
            began, now = now, self.clock()
            longest = max(longest, now - began)
        return self._result(done)

    def _result(self, done: int) -> SearchResult:
        children = self.root.children
        stats = {action: (child.visits, child.total / child.visits)
                 for action, child in children.items() if child.visits}

        def rank(action: Hashable) -> tuple[bool, bool, tuple[int, float]]:
            proven = children[action].proven
            return proven == self.side, proven in (None, self.side), stats[action]

        # An action proven to win, else one not proven to lose, the most visited first;
        # among them the most visited that the rules allow here. With hidden cards a draw may
        # offer what the real position does not (a card "from the deck" that lies face
        # down in the other side's area): the table would refuse it. Only such a choice,
        # among cards that come as chance gives them, reads the real position.
        for action in sorted(stats, key=rank, reverse=True):
            if not self.hidden or self.start.is_legal(action):
                return SearchResult(action, done, stats)
        listed = self.root.untried if not self.hidden and not stats else None
        actions = listed or self._capped(self.start, heuristics.playable(self.start))
        return SearchResult(self.rng.choice(actions), done, stats)

    def _determinized(self) -> AnyPosition:
        assert isinstance(self.start, SamplesUnseen)
        drawn: AnyPosition = self.start.sample_unseen(self.side, self.rng)
        return drawn

    # ------------------------------------------------------------- one iteration

    def _iterate(self, deadline: float) -> None:
        position = self._determinized() if self.hidden else self.start
        node = self.root
        path = [node]
        # Selection and expansion.
        while position.outcome() is None and node.proven is None:
            status = position.status()  # one call a step: some engines build it dearly
            if status.awaiting is not None:
                node.chooser = None
                outcome = self._draw(node, position)
                child = node.children.get(outcome)
                if child is None:
                    child = node.children[outcome] = Node(None)
                position = self._step(child, position, outcome)
                node = child
                path.append(node)
                continue
            actor = status.deciding or status.to_move
            node.chooser = actor
            action, expanded = self._select(node, position, actor)
            child = node.children.get(action)
            if child is None:
                child = node.children[action] = Node(actor)
            position = self._step(child, position, action)
            node = child
            path.append(node)
            if expanded:
                break
        if self.hidden:
            result = self._playout(position, deadline)
        else:
            if node.proven is None:
                node.proven = heuristics.decided(position)
            if node.proven is None:
                result = self._playout(position, deadline)
            else:
                result = {side: float(side == node.proven) for side in position.sides}
                self._prove(path)
        for visited in path:
            visited.visits += 1
            if visited.actor is not None:
                visited.total += result[visited.actor]
        if self.minimax_weight:
            self._back_up_minimax(path, result[self.side])

    def _back_up_minimax(self, path: list[Node], leaf: float) -> None:
        """Implicit minimax backups (Lanctot, Winands, Pepels, Sturtevant 2014): beside
        the mean of the values that passed through it, each node keeps the value of the
        best line below it, the leaves judged by the evaluation: the chooser's best child
        (its side's highest, the other side's lowest), chance's mean over its outcomes
        once every one was drawn (before that, the leaf's exact mean over its faces)."""
        end = path[-1]
        if not end.children:
            end.minimax = leaf
        for node in reversed(path[:-1]):
            children = [child.minimax for child in node.children.values()
                        if child.minimax is not None]
            if not children:
                continue
            if node.chooser is None:
                if node.minimax is None or len(children) >= node.outcomes:
                    node.minimax = sum(children) / len(children)
            elif node.chooser == self.side:
                node.minimax = max(children)
            else:
                node.minimax = min(children)

    @staticmethod
    def _prove(path: list[Node]) -> None:
        """Carry a proof up the path (an MCTS solver): a node is won for the side that
        chooses there if one child is won for it, and won for the other side once every
        action there is tried and each is won for that side. Chance nodes stop it."""
        for at in range(len(path) - 1, 0, -1):
            child, parent = path[at], path[at - 1]
            if child.proven is None or child.actor is None or parent.proven is not None:
                return
            if child.proven == child.actor:
                parent.proven = child.actor
            elif parent.untried == [] and all(other.proven == child.proven
                                              for other in parent.children.values()):
                parent.proven = child.proven
            else:
                return

    def _draw(self, node: Node, position: AnyPosition) -> Hashable:
        """Chance's outcome at ``node``: each legal outcome alike likely, drawn in turn
        (the one drawn least often here, ties at random), so that the few visits a chance
        node has see every face of the die as often, not a few of them by luck."""
        children = node.children
        best: Hashable = None
        fewest = -1.0
        outcomes = list(position.legal_actions())
        node.outcomes = len(outcomes)
        for outcome in outcomes:
            child = children.get(outcome)
            drawn = (child.visits if child is not None else 0) + self.rng.random()
            if fewest < 0 or drawn < fewest:
                best, fewest = outcome, drawn
        return best

    def _step(self, child: Node, position: AnyPosition, action: Hashable) -> AnyPosition:
        if self.hidden:
            return position.apply(action)
        if child.position is None:
            child.position = position.apply(action)
        return child.position

    def _select(self, node: Node, position: AnyPosition, actor: str) -> tuple[Hashable, bool]:
        """The action to follow from ``node`` and whether it is a new child."""
        if not self.hidden:
            if node.untried is None:
                node.untried = self._shuffled(position)
            if node.untried:
                return node.untried.pop(), True
            # Not into a child proven lost for the actor (one proven won makes the node so).
            return self._ucb_open(node), False
        legal = heuristics.playable(position)
        if node is self.root:
            legal = self._capped(position, legal)
        new = [a for a in legal if a not in node.children]
        for action in legal:
            if action in node.children:
                node.children[action].available += 1
        if new:
            eager = [a for a in new if self.eager(position, a)] if self.eager else []
            return self.rng.choice(eager or new), True
        return self._ucb(node, {a: node.children[a] for a in legal}), False

    def _ucb_open(self, node: Node) -> Hashable:
        """Perfect information: UCB1 over the children not proven (all of them if every
        one is), the parent's visits alike for each. The dearest step of an iteration
        where a node has a hundred children: the log is taken once, and no mapping is
        built (the same arithmetic as :meth:`_ucb`: the same choice, tie for tie)."""
        log_visits = math.log(max(node.visits, 1))
        exploration, sqrt = self.exploration, math.sqrt
        best: Hashable = None
        best_score = -1.0
        weight = self.minimax_weight
        if weight:
            side = self.side
            for action, child in node.children.items():
                if child.proven is None:
                    visits = child.visits
                    minimax = child.minimax
                    mean = child.total / visits
                    if minimax is not None:
                        mean += weight * ((minimax if child.actor == side else 1 - minimax)
                                          - mean)
                    score = mean + exploration * sqrt(log_visits / visits)
                    if score > best_score:
                        best, best_score = action, score
            return self._ucb(node, node.children) if best is None else best
        for action, child in node.children.items():
            if child.proven is None:
                visits = child.visits
                score = child.total / visits + exploration * sqrt(log_visits / visits)
                if score > best_score:
                    best, best_score = action, score
        return self._ucb(node, node.children) if best is None else best

    def _ucb(self, node: Node, children: Mapping[Hashable, Node]) -> Hashable:
        best: Hashable = None
        best_score = -1.0
        for action, child in children.items():
            parent = child.available if self.hidden else node.visits
            score = (child.total / child.visits
                     + self.exploration * math.sqrt(math.log(max(parent, 1)) / child.visits))
            if score > best_score:
                best, best_score = action, score
        return best

    def _expected(self, position: AnyPosition, draws: int) -> Mapping[str, float]:
        """A leaf that waits for chance, judged at once: the mean of the evaluations after
        each outcome (each alike likely), to ``draws`` draws deep (a charge's two dice)."""
        if draws == 0 or not is_chance(position):
            return self.evaluate(position)
        outcomes = list(position.legal_actions())
        total = dict.fromkeys(position.sides, 0.0)
        for outcome in outcomes:
            for side, value in self._expected(position.apply(outcome), draws - 1).items():
                total[side] += value
        return {side: value / len(outcomes) for side, value in total.items()}

    def _playout(self, position: AnyPosition, deadline: float) -> Mapping[str, float]:
        if self.playout_depth == 0:
            return self._expected(position, CHANCE_DRAWS)
        step = 0.0  # the longest step yet: none starts that could end after the deadline
        for _ in range(self.playout_depth):
            began = self.clock()
            if position.outcome() is not None or began + step >= deadline:
                break
            position = position.apply(self._pick(position, heuristics.playable(position)))
            step = max(step, self.clock() - began)
        return self.evaluate(position)


def search(position: AnyPosition, side: str, seconds: float, *, rng: random.Random,
           iterations: int | None = None, playout_depth: int | None = None,
           hand_cap: int | None = None) -> SearchResult:
    """Search ``position`` for ``side`` for at most ``seconds`` (and ``iterations``),
    counted from the call: listing the first actions is part of the time, and so is
    freeing the tree (:data:`FINISHING`). ``hand_cap``: see :class:`Search`."""
    began = time.perf_counter()
    found = Search(position, side, rng, playout_depth, hand_cap=hand_cap)
    finishing = min(FINISHING * seconds, 0.02)
    return found.run(seconds - finishing - (time.perf_counter() - began), iterations)


__all__ = ["Node", "Search", "SearchResult", "acting_side", "check_turn", "is_chance", "search",
           "within_hand"]
