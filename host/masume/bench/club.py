"""``masume bench club --boards N``: club mode under load (docs/benchmarks.md).

A Mosquitto of our own on a free loopback port, the club server as its own
process (``masume club serve``, SQLite), and N simulated boards (the real
firmware on the MicroPython VM, in this process) whose hands play random legal
games of Soccer Shogi at a realistic pace: one hand movement (a lift, a place
or a press of ``confirm``) per board every ``--pace`` seconds.

The hands play as a player does who watches the board: every action is one the
server's tracker can read. Before the run each hand's game is planned against a
tracker of its own (the server's code, fed the same readings with the board
still for the settle time after every movement, as the pace gives it): an
action the sensors read as another (a piece stepped twice, which also reads as
one diagonal step) is followed by presses of ``confirm`` until the tracker
holds the right reading, as the violet squares ask a player to; an action no
press makes right is not played. So a record that differs from the hand's game
is the server's mistake (or a reading that depended on time), never the
bench's. Planning runs before the clock starts, in worker processes, so it
takes no CPU from the measured run.

Event-to-LED latency: from the moment the firmware publishes a SQUARE event (the
debounce is over) to the moment it shows a different LED picture. A movement
whose picture does not change is not counted (``misses``). A movement whose
answer waits for the tracker's settle time (the board still for 350 ms, then the
server's next 50 ms tick) is counted apart, with the settle time taken out.
The server's CPU is read from /proc. Runs at 1, 2, 4, ... boards up to N and
reports the largest number that keeps p99 under 50 ms.

``--cut S`` also cuts one board's Wi-Fi for S seconds in the middle of the run
(the broker sends its last will; the board journals while its hand plays on)
and checks afterwards that every table's record holds exactly the actions its
hand made.
"""

from __future__ import annotations

import concurrent.futures
import copy
import multiprocessing
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from masume.tracker import SETTLE_S
from masume_protocol import codec as c

P99_LIMIT_MS = 50.0
SETTLE_MS = SETTLE_S * 1000
GAME = "soccer-shogi"
#: A hand waits at least this long after a movement before the next one when it
#: plans (the real pace is longer): the tracker has settled in between.
PLAN_GAP_S = SETTLE_S + 0.1
MAX_CONFIRMS = 8

#: One hand movement: ("lift", square, ""), ("place", square, piece) or ("press", button, "").
Step = tuple[str, str, str]


@dataclass(frozen=True)
class Planned:
    """One action of a hand's game: the movements that make it, then the presses
    of confirm that make the tracker read it right, and its notation."""

    steps: tuple[Step, ...]
    notation: str


def movements(before_layout: Mapping[str, Sequence[str]],
              after_layout: Mapping[str, Sequence[str]]) -> list[Step]:
    """Lift what leaves each square (top first), then place what arrives."""
    lifts: list[Step] = []
    places: list[Step] = []
    for square in sorted(set(before_layout) | set(after_layout)):
        was, now = list(before_layout.get(square, ())), list(after_layout.get(square, ()))
        keep = 0
        while keep < min(len(was), len(now)) and was[keep] == now[keep]:
            keep += 1
        lifts += [("lift", square, "")] * (len(was) - keep)
        places += [("place", square, p) for p in now[keep:]]
    return lifts + places


def _fork(tracker: Any) -> Any:
    """An independent copy of a tracker, to try a move on: its own game and its own
    containers, sharing only the signature cache (a pure function of the position)."""
    from masume.rules import Game

    twin = copy.copy(tracker)
    twin.game = Game(tracker.game.start)
    twin.game.replay(tracker.game.actions)
    for name, value in vars(tracker).items():
        if isinstance(value, (dict, list)) and name != "_signatures":
            setattr(twin, name, copy.copy(value))
    return twin


def _reading(sensor: str, stack: list[str]) -> Any:
    if sensor == "presence":
        return bool(stack)
    if sensor == "card":
        return stack[-1][4:] if stack else None
    return tuple(stack)


def plan_game(game: str, seed: int, steps_wanted: int) -> list[Planned]:
    """A random game of ``game`` as a hand plays it, until ``steps_wanted`` movements.

    Each candidate action is tried on a copy of a tracker that sees what the
    server's will: a reading after every movement, the board then still past the
    settle time. It is kept if the tracker then holds exactly the game so far
    plus this action, after at most MAX_CONFIRMS presses of confirm.
    """
    from masume.boards import load_board
    from masume.games import load_rules
    from masume.rules import Game
    from masume.tracker import Tracker

    rules = load_rules(game)
    board = load_board(rules.board)
    sensors = {cell.name: cell.sensor for cell in board.sensed}
    rng = random.Random(seed)
    position = rules.start()
    stacks = {name: list(position.layout().get(name, ())) for name in sensors}
    tracker = Tracker(Game(position), board)
    clock = 0.0
    tracker.observe({name: _reading(sensors[name], stacks[name]) for name in sensors}, clock)
    played: list[Any] = []
    out: list[Planned] = []
    total = 0
    while total < steps_wanted and position.outcome() is None:
        candidates = sorted(position.legal_actions(), key=position.notation)
        rng.shuffle(candidates)
        for action in candidates:
            after = position.apply(action)
            moves = movements(position.layout(), after.layout())
            trial = _fork(tracker)
            trial_stacks = {k: list(v) for k, v in stacks.items()}
            t = clock
            for kind, square, piece in moves:
                if kind == "lift":
                    trial_stacks[square].pop()
                else:
                    trial_stacks[square].append(piece)
                t += 0.05  # the firmware's debounce
                trial.observe_square(square, _reading(sensors[square], trial_stacks[square]), t)
                t += PLAN_GAP_S
                trial.tick(t)
            want = played + [action]
            presses = 0
            while list(trial.game.actions) != want and presses < MAX_CONFIRMS:
                trial.confirm()
                presses += 1
            if list(trial.game.actions) != want:
                continue  # the sensors cannot tell this action: a player would not make it
            steps = tuple(moves) + (("press", "confirm", ""),) * presses
            out.append(Planned(steps, position.notation(action)))
            total += len(steps)
            tracker, stacks, clock = trial, trial_stacks, t
            played.append(action)
            position = after
            break
        else:
            break  # nothing left that the board can show: this hand stops
    return out


class Hand:
    """One board's player: its planned game, one movement per step.

    Given ``foreseen`` (``club_emulated.foresee``: the picture the server's own code
    draws after each step), a movement is timed as the emulated boards time theirs
    (``club_emulated.Measure``): from the event the board publishes for it to the
    picture foreseen for it or for a later one, however late, a settle's taken out only
    where the tracker draws it once the board is still; a movement that changes no
    picture is counted apart (no ACK to time here), not as unanswered. Without it, the
    first new picture after the event answers it (the older counting: a movement that
    changes no picture is a miss, a late answer is credited to the next movement)."""

    def __init__(self, sim: Any, plan: list[Planned], foreseen: list[list[Any]] | None = None
                 ) -> None:
        self.sim = sim
        self.plan = plan
        self.foreseen = foreseen
        self.timing: Any = None  # club_emulated.Measure, given foreseen
        self._moved: Any = None  # the step whose event the board has not published yet
        self._moves = 0
        self._last_seq = -1
        self._shown: frozenset[Any] = frozenset()
        self.action = 0  # index of the planned action under way
        self.step_in_action = 0
        self.notations: list[str] = []  # the actions completed
        self.measure = True
        self.event_at: float | None = None
        self.latencies: list[float] = []  # answered at once
        self.settled: list[float] = []  # answered after the settle time (settle taken out)
        self._misses = 0
        self._lock = threading.Lock()
        self._waiting = False
        self._picture: tuple[dict[str, Any], dict[str, Any]] = ({}, {})
        if foreseen is not None:
            from .club_emulated import Measure

            self.timing = Measure()  # measuring from the first movement on (the pictures
            # before it, of the table taken up, are none of the plan's)
            self.latencies, self.settled = self.timing.latencies, self.timing.settled

    @property
    def misses(self) -> int:
        """Movements never answered (with ``foreseen``: whose picture never came)."""
        return self.timing.misses if self.timing is not None else self._misses

    @property
    def quiet(self) -> int:
        """With ``foreseen``: movements that change no picture (none to wait for)."""
        return len(self.timing._quiet) if self.timing is not None else 0

    @property
    def unforeseen(self) -> int:
        return self.timing.unforeseen if self.timing is not None else 0

    @property
    def mid_action(self) -> bool:
        return self.step_in_action > 0

    def on_event(self, seq: int = -1) -> None:
        """The board published an event (``seq``: its number; a resent one is no new)."""
        now = time.perf_counter()
        with self._lock:
            if self.timing is not None:
                if seq > self._last_seq and self._moved is not None:
                    self._moves += 1
                    self.timing.measure = self.measure
                    self.timing.moved(self._moves, self._moved, now, self._shown)
                    self._moved = None
                self._last_seq = max(self._last_seq, seq)
                return
            if self._waiting and self.event_at is None:
                self.event_at = now

    def on_leds(self, colours: dict[str, Any], patterns: dict[str, Any]) -> None:
        # The simulator calls this on every pass while anything blinks or pulses:
        # only a new picture is an answer.
        if colours == self._picture[0] and patterns == self._picture[1]:
            return
        now = time.perf_counter()
        with self._lock:
            self._picture = (colours, patterns)
            if self.timing is not None:
                cell = self.sim.board.cell
                self._shown = frozenset(
                    (cell(name).index, (rgb, patterns[name])) for name, rgb in colours.items()
                    if patterns.get(name) and rgb != (0, 0, 0))
                self.timing.shown(self._shown, now)
                return
            if self._waiting and self.event_at is not None:
                ms = (now - self.event_at) * 1000
                if self.measure:
                    if ms < SETTLE_MS:
                        self.latencies.append(ms)
                    else:
                        self.settled.append(ms - SETTLE_MS)
                self._waiting = False

    def step(self) -> None:
        if self.action >= len(self.plan):
            return
        planned = self.plan[self.action]
        kind, where, what = planned.steps[self.step_in_action]
        with self._lock:
            if self.foreseen is not None:
                self._moved = self.foreseen[self.action][self.step_in_action]
            elif self._waiting and self.measure:
                self._misses += 1  # the last movement changed no LED
            self._waiting = kind != "press"
            self.event_at = None
        if kind == "lift":
            self.sim.lift(where)
        elif kind == "place":
            self.sim.place(where, what)
        else:
            self.sim.press(where)
        self.step_in_action += 1
        if self.step_in_action == len(planned.steps):
            self.notations.append(planned.notation)
            self.action += 1
            self.step_in_action = 0


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _recorded(store: Any, unit: str) -> list[str]:
    from masume.club.server import resume_game

    games = [g for g in store.games() if g["table"] == unit and g["active"]]
    text = store.record(games[-1]["id"]) if games else None
    if not text:
        return []
    try:
        return resume_game(text, GAME).notations()
    except Exception:  # noqa: BLE001 (whatever is wrong with it, the bench says so)
        return ["<unreadable record>"]


def _quantiles(values: list[float]) -> tuple[float, float]:
    if len(values) < 2:
        return (values[0], values[0]) if values else (float("nan"), float("nan"))
    q = statistics.quantiles(sorted(values), n=100, method="inclusive")
    return q[49], q[98]


def steps_for(seconds: float, pace: float, cut: float) -> int:
    """Hand movements a run takes: the measured play, the cut and the time after it."""
    return int((seconds + (cut + 15 if cut else 0)) / pace) + 10


def plan_games(n: int, steps_wanted: int) -> list[list[Planned]]:
    """Every hand's plan, in forked worker processes. Call it before any simulated
    board starts: a child forked from a process that runs the VM runtime's threads
    inherits that runtime half-made and panics as it exits (and spawned workers
    would run ``python -m masume.cli`` again as their main module)."""
    ctx = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(max_workers=os.cpu_count() or 1,
                                                mp_context=ctx) as pool:
        return list(pool.map(plan_game, [GAME] * n, range(n), [steps_wanted] * n))


def board_with_hand(mqtt: str, unit: str, seed: int, layout: Mapping[str, Sequence[str]],
                    plan: list[Planned], foreseen: list[list[Any]] | None = None
                    ) -> tuple[Any, Hand]:
    """A simulated board (the firmware on the MicroPython VM) on the broker ``mqtt`` as
    ``unit``, its pieces set as ``layout``, and the hand that plays ``plan`` on it,
    timing each SQUARE event the board publishes to the LED picture that answers it."""
    from masume.sim.board import SimulatedBoard

    holder: dict[str, Hand] = {}
    sim = SimulatedBoard(GAME, mqtt=mqtt, unit=unit, seed=seed,
                         on_leds=lambda *a: holder["hand"].on_leds(*a) if holder else None)
    for square, pieces in layout.items():
        for piece in pieces:
            sim.place(square, piece)
    hand = holder["hand"] = Hand(sim, plan, foreseen)

    def published(topic: str, data_hex: str) -> None:
        if topic.endswith("/events"):
            try:
                mtype, seq, _ = c.decode_frame(bytes.fromhex(data_hex))
                if mtype == c.SQUARE or (foreseen is not None and mtype == c.BUTTON):
                    hand.on_event(seq)
            except (c.FrameError, ValueError):
                pass

    assert sim.net is not None  # a board on MQTT
    sim.net.on_publish = published
    return sim, hand


def run_once(n: int, seconds: float, pace: float, cut: float = 0.0,
             log: Callable[[str], None] = print,
             plans: list[list[Planned]] | None = None) -> dict[str, Any]:
    """One size. ``plans``: the hands' games (plan_games), planned here if None."""
    from masume.club.mosquitto import Broker
    from masume.club.store import ClubStore
    from masume.games import load_rules

    rules = load_rules(GAME)
    if plans is None:
        plans = plan_games(n, steps_for(seconds, pace, cut))
    from .club_emulated import foresee_all

    foreseen = foresee_all(plans)
    work = Path(tempfile.mkdtemp(prefix="masume-bench-club-"))
    broker = Broker(work / "broker").start()
    units = [f"bench-{i + 1}" for i in range(n)]
    (work / "tables.toml").write_text("".join(
        f'[tables.{u}]\ngame = "{GAME}"\nplayers = ["A", "B"]\n' for u in units))
    server = None
    sims, hands = [], []
    timers: list[threading.Timer] = []
    keep = True  # the folder (database, server log) stays for a look unless all went well
    try:
        layout = rules.start().layout()
        for i, unit in enumerate(units):
            sim, hand = board_with_hand(broker.url, unit, i, layout, plans[i], foreseen[i])
            sims.append(sim)
            hands.append(hand)
        server = subprocess.Popen(
            [sys.executable, "-m", "masume.cli", "club", "serve", "--broker", broker.url,
             "--tables", str(work / "tables.toml"), "--db", str(work / "club.db"), "--no-web"],
            stdout=subprocess.DEVNULL, stderr=open(work / "server.log", "w"))  # noqa: SIM115 (the server's)
        store = ClubStore(work / "club.db")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not all(s.led_colours for s in sims):
            time.sleep(0.1)  # every table lit: the server runs them all
        time.sleep(1.0)  # the first pictures (snapshot, then the game) are out
        cpu0, t0 = _cpu_seconds(server.pid), time.monotonic()
        end = t0 + seconds
        cut_at = t0 + seconds / 3 if cut else None
        while time.monotonic() < end:
            if cut_at is not None and time.monotonic() >= cut_at:
                log(f"cutting {units[0]}'s Wi-Fi for {cut:.0f} s")
                victim = hands[0]
                victim.measure = False  # its journal's burst at the end is no answer to a hand
                sims[0].unplug()
                timers.append(threading.Timer(cut, sims[0].replug))
                timers.append(threading.Timer(cut + 10,
                                              lambda h=victim: setattr(h, "measure", True)))
                for timer in timers:
                    timer.start()
                end = max(end, time.monotonic() + cut + 15)
                cut_at = None
            for hand in hands:
                hand.step()
                time.sleep(pace / len(hands))
        # Finish the half-made actions at the same pace, so that every record can be checked.
        while any(h.mid_action for h in hands):
            for hand in hands:
                if hand.mid_action:
                    hand.step()
                time.sleep(pace / len(hands))
        busy = time.monotonic() - t0
        cpu = _cpu_seconds(server.pid) - cpu0
        deadline = time.monotonic() + 15 + (cut and 30)
        while time.monotonic() < deadline:
            mismatched = [u for u, h in zip(units, hands) if _recorded(store, u) != h.notations]
            if not mismatched:
                break
            time.sleep(0.5)
        for unit in mismatched:
            got, made = _recorded(store, unit), hands[units.index(unit)].notations
            k = next((i for i, (a, b) in enumerate(zip(got, made)) if a != b),
                     min(len(got), len(made)))
            log(f"  {unit}: from action {k + 1} the hand made {made[k:k + 3]}, "
                f"the record holds {got[k:k + 3]}")
        store.close()
        if mismatched:
            log(f"  kept for a look: {work} (club.db, server.log)")
        else:
            keep = False
        direct = [x for h in hands for x in h.latencies]
        settled = [x for h in hands for x in h.settled]
        p50, p99 = _quantiles(direct)
        s50, s99 = _quantiles(settled)
        return {"boards": n, "samples": len(direct), "p50": p50, "p99": p99,
                "settled": len(settled), "settled_p50": s50, "settled_p99": s99,
                "cpu_per_board": cpu / busy / n * 100,
                "actions": sum(len(h.notations) for h in hands),
                "confirms": sum(1 for h in hands for p in h.plan[:len(h.notations)]
                                for s in p.steps if s[0] == "press"),
                "mismatched": mismatched, "misses": sum(h.misses for h in hands),
                "quiet": sum(h.quiet for h in hands),
                "unforeseen": sum(h.unforeseen for h in hands)}
    finally:
        for timer in timers:
            timer.cancel()
        if server is not None:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
        for sim in sims:
            sim.close()
        broker.stop()
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def run(boards: int, seconds: float, pace: float, cut: float = 0.0) -> int:
    sizes = []
    n = 1
    while n < boards:
        sizes.append(n)
        n *= 2
    sizes.append(boards)
    best = 0
    over = False
    ok = True
    # Every size's hands at once, before any board runs (see plan_games).
    plans = plan_games(boards, steps_for(seconds, pace, cut))
    for n in sizes:
        r = run_once(n, seconds, pace, cut if n == sizes[-1] else 0.0, plans=plans[:n])
        print(f"boards {r['boards']:3d}: event -> LED p50 {r['p50']:.1f} ms, p99 {r['p99']:.1f} ms "
              f"(n={r['samples']}; {_settled(r)}; "
              f"{r['misses']} unanswered, {r['unforeseen']} pictures not foreseen; "
              f"{r['quiet']} movements change no LED); "
              f"server CPU {r['cpu_per_board']:.2f} % of a core per board; "
              f"{r['actions']} actions ({r['confirms']} confirm presses), records "
              f"{'all exact' if not r['mismatched'] else 'DIFFER: ' + ', '.join(r['mismatched'])}",
              flush=True)
        ok &= not r["mismatched"]
        if r["p99"] < P99_LIMIT_MS and not over:
            best = n
        else:
            over = True  # the sizes after still run: their figures are worth printing
    print(f"largest number of boards with p99 under {P99_LIMIT_MS:.0f} ms: {best}"
          f"{'' if best < boards else ' (the most tried: raise --boards)'}")
    return 0 if ok else 1


def _settled(r: dict[str, Any]) -> str:
    """The answers that came only after the tracker's settle wait (none, mostly)."""
    if not r["settled"]:
        return "none answered after the settle"
    return (f"{r['settled']} answered after the settle: p50 {r['settled_p50']:.1f} ms, "
            f"p99 {r['settled_p99']:.1f} ms past it")
