"""``masume bench rules --game G``: how fast a rules engine is, beside python-chess.

Two figures, each measured for ``seconds`` on the engine and on python-chess in the
same run, with the ratio (engine / chess; above 1 means faster). The two are timed in
turns of a tenth of a second, each turn going to the one timed less so far, so both
meet the same stretch of a shared machine's load (timed one after the other, 2 s each,
the ratio moved 0.82-1.47 from run to run on a noisy machine):

- legal-action generation: positions per second for which the full list of
  legal actions is built. The positions are sampled from random playouts and
  rebuilt from their text before timing, so no engine cache helps;
- random playouts: games per second from the start, each action picked
  uniformly among the legal ones (chance outcomes included) until the game has
  an outcome or ``MOVE_CAP`` actions have been played;
- board readings (engine only): how long the tracker takes to read two quick
  actions from the board of the game's table (the sensors show the position two
  actions on; the tracker tries no action, then one, then two), on sampled
  positions rebuilt from their text. This is the tracker's worst common case:
  on card mats several hundred actions may be legal;
- lifted pieces (engine only): how long the tracker's settle decision takes
  when a piece is in the air (one action played, then one cell emptied as a hand
  lifting what stands there): it searches one and two actions and, rightly,
  finds none (in card games a lift can itself be an action: a card taken off
  the mat). In club mode this runs after every lift.

Generic over games: it uses only the Position protocol.
"""

from __future__ import annotations

import platform
import random
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from masume.boards import Board
from masume.games import load_rules
from masume.rules import Position, Rules

#: What the figures are timed with: the wall clock, or (``--cpu``) this process's CPU
#: time, which other work on a shared machine does not stretch.
_clock = time.perf_counter

#: The seed of python-chess's sample positions.
CHESS_SAMPLE_SEED = 20150102

#: Actions (or chess plies) after which a random playout stops without an outcome.
MOVE_CAP = 1000
#: Sampled positions for the generation figure.
SAMPLE_SIZE = 400


def run(game: str, seconds: float, cpu: bool = False) -> int:
    """Print the figures; return the exit status. ``cpu``: time with this process's
    CPU time instead of the wall clock."""
    global _clock
    _clock = time.process_time if cpu else time.perf_counter
    try:
        rules = load_rules(game)
    except ValueError as exc:
        print(f"masume bench rules: {exc}", file=sys.stderr)
        return 2
    if seconds <= 0:
        print("masume bench rules: --seconds must be positive", file=sys.stderr)
        return 2
    rng = random.Random(20150101)
    chess = _import_chess()
    chess_version = f"python-chess {chess.__version__}" if chess else "python-chess not installed"
    print(
        f"masume bench rules --game {game}: {seconds:g} s per measurement; "
        f"{platform.python_implementation()} {platform.python_version()}, {chess_version}"
        + ("; CPU time" if cpu else "")
    )

    samples = _sample_positions(rules, SAMPLE_SIZE, rng)
    chess_listing: Round | None = None
    chess_playout: Round | None = None
    if chess is not None:
        # Their own seeds: the engine's draws stop on the clock, and the anchor's sample
        # must be the same positions in every run (their width varied 20 to 28 moves).
        boards = _sample_boards(chess, SAMPLE_SIZE, random.Random(CHESS_SAMPLE_SEED))
        chess_rng = random.Random(CHESS_SAMPLE_SEED + 1)
        chess_listing = lambda: _chess_generation_round(boards)
        chess_playout = lambda: _timed_playout(lambda: _chess_playout(chess, chess_rng))
    (gen_rate, gen_width), (chess_gen_rate, chess_width) = _rates(
        lambda: _generation_round(rules, samples), chess_listing, seconds)
    (play_rate, play_length), (chess_play_rate, chess_length) = _rates(
        lambda: _timed_playout(lambda: _engine_playout(rules, rng)), chess_playout, seconds)
    reading = _reading_time(rules, samples, rng, seconds)
    print(f"board readings: {game} two quick actions read in {reading['mean_ms']:.1f} ms each "
          f"({reading['width']:.0f} legal actions before them), the slowest in "
          f"{reading['max_ms']:.1f} ms ({reading['max_width']} legal actions); "
          f"{reading['read']} of {reading['cases']} read as the position played")
    lifted = _lift_time(rules, samples, rng, seconds)
    print(f"lifted pieces: {game} a settle with a piece in the air decided in "
          f"{lifted['mean_ms']:.1f} ms each, the slowest in {lifted['max_ms']:.1f} ms; "
          f"{lifted['unread']} of {lifted['cases']} read no action")
    if chess is None:
        print(f"legal actions: {game} {gen_rate:.1f} positions/s ({gen_width:.1f} actions each)")
        print(f"random playouts: {game} {play_rate:.2f} playouts/s "
              f"({play_length:.0f} actions each)")
        return 0

    print(
        f"legal actions: {game} {gen_rate:.1f} positions/s ({gen_width:.1f} actions each); "
        f"python-chess {chess_gen_rate:.1f} positions/s ({chess_width:.1f} moves each); "
        f"ratio {gen_rate / chess_gen_rate:.4f}"
    )
    print(
        f"random playouts: {game} {play_rate:.3f} playouts/s ({play_length:.0f} actions each, "
        f"cap {MOVE_CAP}); python-chess {chess_play_rate:.3f} playouts/s "
        f"({chess_length:.0f} plies each); "
        f"ratio {play_rate / chess_play_rate:.4f}"
    )
    return 0


def _import_chess() -> Any:
    try:
        import chess
    except ImportError:
        return None
    return chess


# ----------------------------------------------------------------- the engine


def _sample_positions(rules: Rules, count: int, rng: random.Random) -> list[str]:
    """Texts of positions met in random playouts (every one has legal actions)."""
    texts: list[str] = []
    while len(texts) < count:
        position = rules.start()
        for _ in range(MOVE_CAP):
            actions = list(position.legal_actions())
            if not actions or position.outcome() is not None:
                break
            texts.append(position.to_text())
            position = position.apply(rng.choice(actions))
            if len(texts) >= count:
                break
    return texts


#: One round of a timed figure: (seconds timed, units done, their size), e.g. (0.01, 400
#: positions listed, 14,320 legal actions in them).
Round = Callable[[], tuple[float, int, int]]

#: The least time of a turn (rounds of one side in a row). Not one round a turn: each
#: side would then start every round in caches the other left (one round a turn made
#: python-chess some 4 % slower against Soccer Shogi than turns of 0.05-0.25 s did:
#: docs/benchmarks.md).
TURN_SECONDS = 0.1


def _rates(ours: Round, theirs: Round | None, seconds: float) -> tuple[
        tuple[float, float], tuple[float, float]]:
    """((units per second, mean size) of ``ours``, the same of ``theirs``), each timed
    for at least ``seconds``, in turns of at least ``TURN_SECONDS``: the next turn goes
    to the one timed less so far (ours on a tie). ``theirs`` None: ours alone, theirs
    (0, 0).

    >>> turns = []
    >>> def side(name, seconds):
    ...     return lambda: (turns.append(name), (seconds, 1, 3))[1]
    >>> _rates(side("ours", 0.04), side("theirs", 0.25), 0.5)
    ((25.0, 3.0), (4.0, 3.0))
    >>> "".join(name[0] for name in turns)  # 3 rounds make a turn of ours, 1 of theirs
    'oootooooootoooooo'
    """
    totals = [[0.0, 0, 0], [0.0, 0, 0]]
    sides = (ours, theirs) if theirs is not None else (ours,)
    while min(total[0] for total in totals[:len(sides)]) < seconds:
        i = 0 if len(sides) == 1 or totals[0][0] <= totals[1][0] else 1
        turn = 0.0
        while turn < TURN_SECONDS:
            timed, units, size = sides[i]()
            turn += timed
            totals[i][1] += units
            totals[i][2] += size
        totals[i][0] += turn
    rates = [(units / timed, size / units) if units else (0.0, 0.0)
             for timed, units, size in totals]
    return rates[0], rates[1]


def _generation_round(rules: Rules, texts: Sequence[str]) -> tuple[float, int, int]:
    """One pass over the sample: (seconds, positions, legal actions)."""
    fresh = [rules.from_text(t) for t in texts]  # untimed: no cached results
    actions = 0
    began = _clock()
    for position in fresh:
        actions += sum(1 for _ in position.legal_actions())
    return _clock() - began, len(fresh), actions


def _engine_playout(rules: Rules, rng: random.Random) -> int:
    position: Position[Any] = rules.start()
    played = 0
    while played < MOVE_CAP and position.outcome() is None:
        actions = list(position.legal_actions())
        if not actions:
            break
        position = position.apply(rng.choice(actions))
        played += 1
    return played


def _reading_time(rules: Rules, texts: Sequence[str], rng: random.Random,
                  seconds: float) -> dict[str, float]:
    """Mean and slowest ms per two-action reading, with the legal actions before
    them; how many readings found the position played (others: an equivalent
    reading). Untimed: choosing the actions and the readings."""
    from masume.boards import load_board
    from masume.play.cards import cards_of
    from masume.rules import Game
    from masume.tracker import Tracker

    board = load_board(rules.board)
    timed, cases, read, width = 0.0, 0, 0, 0
    slowest, slowest_width = 0.0, 0
    for text in texts:
        start = rules.from_text(text)
        position, shown = start, True
        for _ in range(2):
            before = {c: tuple(p) for c, p in position.layout().items() if p}
            moved = [a for a in position.legal_actions()
                     if {c: tuple(p) for c, p in position.apply(a).layout().items() if p} != before]
            if not moved or position.status().awaiting:
                shown = False
                break
            position = position.apply(rng.choice(moved))
        if not shown:
            continue
        readings = Tracker(Game(position), board).expected_readings()
        cards = cards_of(position)
        if cards is not None:  # a pile of unknown top card shows some card of the set
            used = {p for stack in position.layout().values() for p in stack}
            spare = iter([c.tag for c in cards.copies() if c.tag and c.piece not in used])
            readings = {cell: next(spare) if reading == "*" else reading
                        for cell, reading in readings.items()}
        fresh = rules.from_text(text)  # no cached results
        tracker = Tracker(Game(fresh), board, cards=cards_of(fresh))
        wide = sum(1 for _ in fresh.legal_actions())
        width += wide
        began = _clock()
        tracker.observe(readings, 0.0)
        tracker.tick(10.0)
        took = _clock() - began
        timed += took
        if took > slowest:
            slowest, slowest_width = took, wide
        cases += 1
        read += tracker.game.position.layout() == position.layout()
        if timed >= seconds:
            break
    cases = max(cases, 1)
    return {"mean_ms": 1000 * timed / cases, "width": width / cases, "max_ms": 1000 * slowest,
            "max_width": slowest_width, "read": read, "cases": cases}


def lift_sources(position: Any, board: Board) -> list[str]:
    """The sensed cells a piece can be lifted from by some legal action of ``position``
    (the cells whose stack some action makes lower), in order."""
    layout = position.layout()
    return sorted({cell for action in position.legal_actions()
                   for cell, pieces in layout.items()
                   if pieces and board.has_cell(cell)
                   and len(position.apply(action).layout().get(cell, ())) < len(pieces)})


def _lift_time(rules: Rules, texts: Sequence[str], rng: random.Random,
               seconds: float) -> dict[str, float]:
    """Mean and slowest ms of the settle decision (observe, then tick) with a piece
    lifted: from a sampled position one action is played (so the search may also
    amend it), then the cell an action of the next player takes pieces from reads
    empty. Positions are rebuilt from their text, so no engine cache helps."""
    from masume.boards import load_board
    from masume.play.cards import cards_of
    from masume.rules import Game
    from masume.tracker import Tracker

    board = load_board(rules.board)
    timed, cases, unread, slowest = 0.0, 0, 0, 0.0
    empty = {"presence": False, "card": None}
    for text in texts:
        position = rules.from_text(text)
        if position.status().awaiting:
            continue
        first = rng.choice(list(position.legal_actions()))
        after = position.apply(first)
        if after.outcome() is not None or after.status().awaiting:
            continue
        layout = after.layout()
        sources = lift_sources(after, board)
        if not sources:
            continue
        lifted = rng.choice(sources)
        fresh = rules.from_text(text)  # no cached results
        game = Game(fresh)
        game.push(first)
        tracker = Tracker(game, board, cards=cards_of(fresh))
        readings = dict(tracker.expected_readings())
        cards = cards_of(after)
        if cards is not None:  # a pile of unknown top card shows some card of the set
            used = {p for stack in layout.values() for p in stack}
            spare = iter([c.tag for c in cards.copies() if c.tag and c.piece not in used])
            readings = {cell: next(spare) if reading == "*" else reading
                        for cell, reading in readings.items()}
        readings[lifted] = empty.get(board.cell(lifted).sensor, ())
        began = _clock()
        tracker.observe(readings, 0.0)
        change = tracker.tick(10.0)
        took = _clock() - began
        timed += took
        slowest = max(slowest, took)
        cases += 1
        unread += not change
        if timed >= seconds:
            break
    cases = max(cases, 1)
    return {"mean_ms": 1000 * timed / cases, "max_ms": 1000 * slowest, "unread": unread,
            "cases": cases}


def _timed_playout(playout: Callable[[], int]) -> tuple[float, int, int]:
    """(seconds, 1 playout, its length)."""
    began = _clock()
    moves = playout()
    return _clock() - began, 1, moves


# ----------------------------------------------------------------- python-chess


def _sample_boards(chess: Any, count: int, rng: random.Random) -> list[Any]:
    boards: list[Any] = []
    while len(boards) < count:
        board = chess.Board()
        while len(boards) < count and board.outcome() is None and board.ply() < MOVE_CAP:
            boards.append(board.copy(stack=False))
            board.push(rng.choice(list(board.legal_moves)))
    return boards


def _chess_generation_round(boards: Sequence[Any]) -> tuple[float, int, int]:
    """One pass over the sample: (seconds, positions, legal moves)."""
    moves = 0
    began = _clock()
    for board in boards:  # python-chess caches nothing between calls
        moves += sum(1 for _ in board.legal_moves)
    return _clock() - began, len(boards), moves


def _chess_playout(chess: Any, rng: random.Random) -> int:
    board = chess.Board()
    while board.ply() < MOVE_CAP and board.outcome() is None:
        board.push(rng.choice(list(board.legal_moves)))
    plies: int = board.ply()
    return plies
