"""OpenSpiel's MCTS and ISMCTS on masume's engines, against masume.ai's own search
(issue 18; the figures are in docs/ai.md). Not part of the package: OpenSpiel is
not a dependency. Run it in a venv with ``pip install open-spiel==2.0.2``:

    .venv/bin/python scripts/openspiel_compare.py --game soccer-shogi --games 6

A masume game is wrapped as an OpenSpiel Python game: the state holds the engine's
immutable position; OpenSpiel's integer actions are the engine's actions interned
in order of first sight (one id per action across states, as ISMCTS needs); chance
(``Status.awaiting``) gives each legal outcome alike likely; the information state
of a side is what ``seen_by`` shows it (card games), and ISMCTS draws the hidden
cards with the engine's ``sample_unseen``. Both searches use the same leaf
evaluation, masume.ai's (masume.ai.heuristics: a short random playout, judged by the
score, and the ball, when unfinished), so that the comparison is of the tree search
alone.

Printed: each search's iterations per second from the same positions, then a match
at the same time a move (OpenSpiel's simulations set to what its speed gives in that
time), sides alternating.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

from masume.ai import Level, SearchPlayer, play
from masume.ai.heuristics import by_score, evaluation, playout_depth
from masume.ai.search import acting_side, is_chance
from masume.games import load_rules
from masume.rules.base import HidesInformation, SamplesUnseen

MAX_ACTIONS = 4000


class Interned:
    """Engine actions <-> OpenSpiel's integer ids."""

    def __init__(self) -> None:
        self.ids: dict[Any, int] = {}
        self.actions: list[Any] = []

    def id(self, action: Any) -> int:
        found = self.ids.get(action)
        if found is None:
            found = self.ids[action] = len(self.actions)
            self.actions.append(action)
        return found


def wrap(game: str, options: dict[str, Any]) -> pyspiel.Game:
    rules = load_rules(game)
    start = rules.start(**options)
    hidden = isinstance(start, HidesInformation)
    interned = Interned()
    game_type = pyspiel.GameType(
        short_name=f"python_masume_{game.replace('-', '_')}",
        long_name=f"masume {game}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=(pyspiel.GameType.Information.IMPERFECT_INFORMATION if hidden
                     else pyspiel.GameType.Information.PERFECT_INFORMATION),
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2, min_num_players=2,
        provides_information_state_string=True, provides_information_state_tensor=False,
        provides_observation_string=True, provides_observation_tensor=False)
    game_info = pyspiel.GameInfo(num_distinct_actions=1 << 20, max_chance_outcomes=1 << 20,
                                 num_players=2, min_utility=-1.0, max_utility=1.0,
                                 utility_sum=0.0, max_game_length=MAX_ACTIONS)

    class State(pyspiel.State):  # type: ignore[misc]
        def __init__(self, game_: Any, position: Any = None, length: int = 0) -> None:
            super().__init__(game_)
            self.position = start if position is None else position
            self.length = length

        def __deepcopy__(self, memo: Any) -> State:
            return State(self.get_game(), self.position, self.length)

        def current_player(self) -> int:
            if self.position.outcome() is not None or self.length >= MAX_ACTIONS:
                return pyspiel.PlayerId.TERMINAL
            if is_chance(self.position):
                return pyspiel.PlayerId.CHANCE
            return self.position.sides.index(acting_side(self.position))

        def _legal_actions(self, player: int) -> list[int]:
            return sorted(interned.id(a) for a in self.position.legal_actions())

        def chance_outcomes(self) -> list[tuple[int, float]]:
            outcomes = sorted(interned.id(a) for a in self.position.legal_actions())
            return [(o, 1.0 / len(outcomes)) for o in outcomes]

        def _apply_action(self, action: int) -> None:
            self.position = self.position.apply(interned.actions[action])
            self.length += 1

        def _action_to_string(self, player: int, action: int) -> str:
            return str(interned.actions[action])

        def is_terminal(self) -> bool:
            return self.current_player() == pyspiel.PlayerId.TERMINAL

        def returns(self) -> list[float]:
            if not self.is_terminal():
                return [0.0, 0.0]
            value = by_score(self.position)
            return [2 * value[side] - 1 for side in self.position.sides]

        def information_state_string(self, player: int | None = None) -> str:
            if player is None:
                player = self.current_player()
            if hidden:
                return repr((self.position.seen_by(self.position.sides[player]),
                             self.position.status().to_move, self.length))
            return self.position.to_text()

        def observation_string(self, player: int | None = None) -> str:
            return self.information_state_string(player)

        def resample_from_infostate(self, player: int, sampler: Any) -> State:
            assert isinstance(self.position, SamplesUnseen)
            drawn = self.position.sample_unseen(self.position.sides[player], RNG)
            return State(self.get_game(), drawn, self.length)

        def __str__(self) -> str:
            return self.position.to_text()

    class Game(pyspiel.Game):  # type: ignore[misc]
        def __init__(self, params: Any = None) -> None:
            super().__init__(game_type, game_info, params or {})

        def new_initial_state(self) -> State:
            return State(self)

        def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Any:
            return None

    pyspiel.register_game(game_type, Game)
    return Game()


RNG = random.Random(1)


class PlayoutEvaluator(mcts.Evaluator):  # type: ignore[misc]
    """masume.ai's leaf evaluation: a random playout of at most the game's playout
    depth, then the outcome or masume.ai.heuristics' judgement."""

    def evaluate(self, state: Any) -> np.ndarray:
        position = state.position
        for _ in range(playout_depth(position.game)):
            if position.outcome() is not None:
                break
            position = position.apply(RNG.choice(list(position.legal_actions())))
        value = evaluation(position.game)(position)
        return np.array([2 * value[side] - 1 for side in position.sides])

    def prior(self, state: Any) -> list[tuple[int, float]]:
        if state.is_chance_node():
            return state.chance_outcomes()
        legal = state.legal_actions(state.current_player())
        return [(action, 1.0 / len(legal)) for action in legal]


class OpenSpielPlayer:
    """An OpenSpiel bot behind masume.ai's Player interface."""

    def __init__(self, game: pyspiel.Game, bot: Any) -> None:
        self.game, self.bot = game, bot
        self.failed = 0

    def choose(self, position: Any, side: str, seconds: float) -> Any:
        state = self.game.new_initial_state()
        state.position = position
        if hasattr(self.bot, "reset"):
            self.bot.reset()
        try:
            action = self.bot.step(state)
        except AssertionError:  # ISMCTS: no visited action is legal in this draw
            self.failed += 1
            return RNG.choice(list(position.legal_actions()))
        return _interned_action(state, action)


def _interned_action(state: Any, action: int) -> Any:
    """The engine's action OpenSpiel chose; if a draw of hidden cards offered it and the
    real position does not allow it (a card from the deck lying face down in the other
    side's area), one the real position allows, at random (masume.ai takes the next most
    visited)."""
    legal = list(state.position.legal_actions())
    for candidate in legal:
        if state._action_to_string(0, action) == str(candidate):
            return candidate
    return RNG.choice(legal)


def make_bot(game: pyspiel.Game, hidden: bool, simulations: int) -> Any:
    rs = np.random.RandomState(1)
    if hidden:
        return ismcts.ISMCTSBot(game, PlayoutEvaluator(), 0.7 * 2, simulations, random_state=rs,
                                allow_inconsistent_action_sets=True)
    return mcts.MCTSBot(game, 0.7 * 2, simulations, PlayoutEvaluator(), solve=False,
                        random_state=rs)


def sample_positions(name: str, options: dict[str, Any], count: int) -> list[Any]:
    rng = random.Random(3)
    position = load_rules(name).start(**options)
    out = []
    while len(out) < count:
        if position.outcome() is not None:
            position = load_rules(name).start(**options)
        if not is_chance(position) and rng.random() < 0.1:
            out.append(position)
        position = position.apply(rng.choice(list(position.legal_actions())))
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--game", required=True)
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--move-seconds", type=float, default=0.2)
    parser.add_argument("--probe-simulations", type=int, default=60)
    args = parser.parse_args()
    options: dict[str, Any] = {"goals_to_win": 1} if args.game == "masume-tactics" else {}
    game = wrap(args.game, options)
    hidden = isinstance(load_rules(args.game).start(**options), HidesInformation)
    positions = sample_positions(args.game, options, 5)
    # Speed: OpenSpiel at a fixed number of simulations, ours at the same number.
    began = time.perf_counter()
    for position in positions:
        OpenSpielPlayer(game, make_bot(game, hidden, args.probe_simulations)).choose(
            position, acting_side(position), 0)
    theirs = len(positions) * args.probe_simulations / (time.perf_counter() - began)
    began = time.perf_counter()
    for position in positions:
        SearchPlayer(Level("probe", 600.0, args.probe_simulations), random.Random(1)).choose(
            position, acting_side(position), 600.0)
    ours = len(positions) * args.probe_simulations / (time.perf_counter() - began)
    print(f"{args.game}: iterations per second: masume.ai {ours:.0f}, OpenSpiel "
          f"{'ISMCTS' if hidden else 'MCTS'} {theirs:.0f}")
    simulations = max(1, int(theirs * args.move_seconds))
    bot = OpenSpielPlayer(game, make_bot(game, hidden, simulations))
    computer = SearchPlayer(Level("timed", args.move_seconds), random.Random(2))
    won = drawn = lost = 0
    table = random.Random(5)
    for number in range(args.games):
        start = load_rules(args.game).start(**options)
        ours_side, theirs_side = start.sides if number % 2 == 0 else start.sides[::-1]
        end = play(start, {ours_side: computer, theirs_side: bot},
                   {ours_side: args.move_seconds, theirs_side: args.move_seconds}, table, 2000)
        value = by_score(end)[ours_side]
        won += value > 0.5
        lost += value < 0.5
        drawn += value == 0.5
        print(f"  game {number + 1}: {end.outcome() or 'unfinished, by the score'} "
              f"(masume.ai {ours_side})", flush=True)
    print(f"masume.ai vs OpenSpiel ({simulations} simulations a move, about "
          f"{args.move_seconds:g} s): {won} won, {drawn} drawn, {lost} lost "
          f"(OpenSpiel's search failed {bot.failed} times: a random action instead)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
