"""``masume bench club --emulated --boards N``: the club server under a hall's load.

``masume bench club`` runs the real firmware on one MicroPython VM per board, so
it measures the simulator more than the server (issue 17: at 8 boards the bench
took 84 % of a core, the server 11 %). Here one asyncio process holds every
board at the protocol level: each has its own MQTT connection (the club server's
own lean client, masume.link.mqtt_client, used as the firmware's umqtt is: a last
will, QoS 1, no resends but the journal's), and speaks the board's side of
protocol/SPEC.md with the shared codec: WELCOME to every HELLO then a HEARTBEAT,
events (SQUARE with the board's time, BUTTON) numbered and journalled until
acknowledged, resent after 250 ms without ack progress and then (the oldest alone)
after 500, 1000, 2000 ms while none comes (firmware/link.py), a heartbeat every second, commands
carried out in order and acknowledged (LED_FRAME, LED_SET, SNAPSHOT_REQ). What it
does not emulate is the scan and the debounce: an event leaves when the hand's
movement is over, as the firmware's does once its debounce is.

The hands play the planned games of ``masume bench club`` (plan_games: every
action one the server's tracker reads, confirm presses where the sensors cannot
tell), one movement every ``--pace`` seconds on average per board (between half
and one and a half times it, at random; never closer than the plan allows). A
few full-VM simulated boards (``--canaries``) play beside them, as in the other
bench, so that the emulation is checked against the firmware under the same load.

Per size (1, 10, 100, ... N boards) a fresh Mosquitto on a free loopback port,
a fresh ``masume club serve`` process and a fresh SQLite database:

- event -> LED: from the hand's movement (the board's event) to the board showing the
  picture the server's own code draws for it (:func:`foresee`, before the clock
  starts), or a later movement's (both handled in one turn): a late answer is timed
  from its own movement, in full. A movement whose picture the tracker draws only once
  the board has been still for its settle time is counted apart, the settle time taken
  out (before stop 26 any answer later than the settle time was, which hid a slow
  server's answers there); one after which the picture stays as it was (the ball
  lifted after the player who held it: the lights show already where both may go) has
  no LED answer, and is timed to its ACK instead (handled and committed), apart too.
  "unanswered": movements whose foreseen picture never came, and "pictures not
  foreseen": pictures the server's code does not draw for the plan (both 0, or the
  server is wrong);
- the server's CPU per board while the hands play, and per table while every
  board is connected and nobody plays (idle), with its RSS;
- the bench process's own CPU, and how late its loop ran while the hands played
  (a 50 ms timer's lateness, p99): when either is large, the figures are the bench's;
- "records all exact": every board's record equals the actions its hand made;
- "server loop": the CPU its loop's thread spent per board event while the hands
  played, stage by stage (masume.health.LoopCpu, read from the server by SIGUSR1),
  and what the goal's 250 events a second would take at that cost: a figure that
  holds on a busy machine, where latency does not.

``--servers K`` runs K ``masume club serve --shared`` processes on the one broker
and one database (``--postgres ADMIN_URL``: a fresh PostgreSQL database per size,
dropped after; else one SQLite file), the boards split between them by their
leases; CPU and RSS are the servers' together. ``--kill`` SIGKILLs the first
server halfway through the play: "failover" is the time from the kill to the
last of its boards hearing a HELLO from a server that took it over (at the
board), and the records must still be all exact.
"""

from __future__ import annotations

import asyncio
import gc
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from masume import heap
from masume.link.loop import HOST_HEARTBEAT
from masume.link.mqtt_client import MqttClient
from masume_protocol import codec as c

from .club import (
    GAME,
    P99_LIMIT_MS,
    PLAN_GAP_S,
    SETTLE_MS,
    Hand,
    Planned,
    _cpu_seconds,
    _quantiles,
    _settled,
    board_with_hand,
    plan_games,
    steps_for,
)

RESEND_S = 0.25  # the board resends unacknowledged events after this long without progress
RESEND_MAX_S = 2.0  # ... then after twice as long each time, up to this (firmware/link.py)
RESEND_MAX = 32  # at most this many at a time (firmware/journal.py)
JOURNAL = 256  # the board's ring of unacknowledged events
HOST_SILENT_S = 3.5  # no host heard for this long: the board only journals
PLANS = 32  # distinct planned games; boards beyond share them (each has its own record)
IDLE_S = 5.0  # the idle window: every board connected, nobody playing
KEEPALIVE_S = 30  # each board's keepalive with the broker (a ping every 15 s while quiet)


def _with_children(pid: int) -> list[int]:
    """``pid`` and every process under it (a server's worker processes)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in Path(f"/proc/{p}/task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
        except OSError:
            continue
    return out


class CpuMeter:
    """The CPU seconds spent by some processes and every process under them, as last
    read: a process that ends keeps its last reading instead of taking its seconds
    away. :meth:`last_reading` reads a process tree one last time before it is killed
    (``--kill``); before this, the play's CPU of a run with a kill came out negative.

    >>> import os
    >>> meter = CpuMeter([os.getpid()])
    >>> meter.read() >= 0
    True
    """

    def __init__(self, pids: list[int]) -> None:
        self.pids = pids
        self.seen: dict[int, float] = {}
        self.done: set[int] = set()

    def read(self) -> float:
        for pid in self.pids:
            for p in _with_children(pid):
                if p in self.done:
                    continue
                try:
                    self.seen[p] = _cpu_seconds(p)
                except OSError:  # ended since it was listed: its last reading stands
                    pass
        return sum(self.seen.values())

    def last_reading(self, pid: int) -> None:
        """Reads ``pid``'s tree now, just before it is killed, so that what it spent
        until the kill counts, and never again (not its zombie)."""
        tree = _with_children(pid)
        self.read()
        self.done.update(tree)


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


#: An LED picture as a board shows it: cell index -> (rgb, pattern code), lit cells only.
Picture = frozenset[tuple[int, tuple[tuple[int, int, int], int]]]


@dataclass(frozen=True)
class Foreseen:
    """What the server's table shows after one step of a plan, as its own code draws it
    (:func:`foresee`): the picture once the step is handled, and once the board has been
    still past the settle time."""

    now: Picture
    settled: Picture


def _shown(board: Any, leds: dict[str, Any]) -> Picture:
    return frozenset((board.cell(name).index, (led.rgb, led.pattern_code))
                     for name, led in leds.items()
                     if led.pattern_code != c.OFF and led.rgb != (0, 0, 0))


def foresee(board: Any, layout: dict[str, list[str]], plan: list[Planned]
            ) -> tuple[Picture, list[list[Foreseen]]]:
    """The pictures a table shows while a hand plays ``plan``: the first (before any
    step), then per action, per step, :class:`Foreseen`. The server's own TableCore,
    fed what its link makes of the board's frames, one step at a time with the board
    still past the settle time in between (as the plan and the pace have it)."""
    from masume.games import load_rules
    from masume.link import BoardEvent
    from masume.link.events import decode_reading
    from masume.play.core import TableCore
    from masume.rules import Game

    rules = load_rules(GAME)
    core = TableCore(rules, board, Game(rules.start()), {}, name="foreseen")
    stacks = {cell.name: list(layout.get(cell.name, ())) for cell in board.sensed}

    def reading(name: str) -> Any:
        cell = board.cell(name)
        return decode_reading(board, cell, _raw_reading(board, cell, stacks[name]))

    core.handle(BoardEvent(0, "snapshot", readings={n: reading(n) for n in stacks}, boot=1),
                0.0)
    core.tick(1.0)
    first = _shown(board, core.leds)
    t, seq, out = 2.0, 0, []
    for planned in plan:
        action = []
        for kind, where, what in planned.steps:
            seq += 1
            if kind == "press":
                event = BoardEvent(seq, "button", button=where, boot=1, at=t)
            else:
                if kind == "lift":
                    stacks[where].pop()
                else:
                    stacks[where].append(what)
                event = BoardEvent(seq, "square", square=where, reading=reading(where),
                                   boot=1, at=t)
            core.handle(event, t)
            core.tick(t)
            now = _shown(board, core.leds)
            core.tick(t + SETTLE_MS / 1000 + 0.1)
            action.append(Foreseen(now, _shown(board, core.leds)))
            t += 4.0
        out.append(action)
    return first, out


def foresee_all(plans: list[list[Planned]]) -> list[list[list[Foreseen]]]:
    """:func:`foresee` for every plan, from the game's start."""
    from masume.boards import load_board
    from masume.games import load_rules

    rules = load_rules(GAME)
    board = load_board(rules.board)
    layout = {k: list(v) for k, v in rules.start().layout().items()}
    return [foresee(board, layout, plan)[1] for plan in plans]


def _raw_reading(board: Any, cell: Any, stack: list[str]) -> bytes:
    """What the board's sensor sends for ``stack`` (the firmware's encoding)."""
    if cell.sensor == "presence":
        return b"\x01" if stack else b""
    if cell.sensor == "card":
        return bytes.fromhex(stack[-1][4:]) if stack else b""
    return bytes(board.piece_code(p) for p in stack)


@dataclass
class _Moved:
    at: float  # when the hand moved (the board journals an event it cannot send yet)
    foreseen: Foreseen
    seq: int  # the event's, to time its ACK
    #: Its picture comes at once (else only once the board has been still past the
    #: settle time: the tracker decides then).
    at_once: bool


@dataclass
class Measure:
    """Event -> LED at one board. Each movement's answer is the picture the server's own
    code draws for it (:func:`foresee`): a movement is answered when the board shows
    that picture, or the picture of a later movement (the server handled both in one
    turn), whenever it comes: a late answer is timed from its own movement, in full,
    never taken for the next one's; only a movement whose picture the tracker draws once
    the board has been still (``settled``) has the settle time taken out. A movement
    after which the table's picture stays as it was (the second piece lifted from a
    square, the ball after the player who held it: the lights show already where both
    may go) has no LED answer to wait for: it is timed to its ACK (the server handled it
    and committed it) and counted apart, ``quiet``."""

    measure: bool = False
    latencies: list[float] = field(default_factory=list)
    settled: list[float] = field(default_factory=list)
    quiet: list[float] = field(default_factory=list)  # event -> ACK of those with no new picture
    #: Pictures the plan does not foresee at all (0 unless the server draws wrong).
    unforeseen: int = 0
    _waiting: list[_Moved] = field(default_factory=list)
    _quiet: dict[int, float] = field(default_factory=dict)  # seq -> when moved
    _known: set[Picture] = field(default_factory=set)
    _last: Picture | None = None  # the picture the last movement foresaw, settled

    @property
    def misses(self) -> int:
        """Movements whose picture never came (counted at the end of the run)."""
        return len(self._waiting)

    def moved(self, seq: int, foreseen: Foreseen, at: float, shown: Picture) -> None:
        if not self.measure:
            return
        before = self._last if self._last is not None else shown
        self._last = foreseen.settled
        self._known |= {foreseen.now, foreseen.settled}
        if foreseen.now == before and foreseen.settled == before:
            self._quiet[seq] = at
        else:
            self._waiting.append(_Moved(at, foreseen, seq, foreseen.now != before))

    def acked(self, seq: int, at: float) -> None:
        for done in [s for s in self._quiet if s <= seq]:
            self.quiet.append((at - self._quiet.pop(done)) * 1000)

    def shown(self, picture: Picture, at: float) -> None:
        answered = max((k for k, m in enumerate(self._waiting)
                        if picture in (m.foreseen.now, m.foreseen.settled)), default=None)
        if answered is None:
            if self.measure and picture not in self._known:
                self.unforeseen += 1
            return
        for moved in self._waiting[:answered + 1]:
            ms = (at - moved.at) * 1000
            if moved.at_once:
                self.latencies.append(ms)  # however late: a late answer is not a settle
            else:
                self.settled.append(ms - SETTLE_MS)
        del self._waiting[:answered + 1]


class EmulatedBoard:
    """One board at the protocol level over its own MQTT connection."""

    def __init__(self, unit: str, board: Any, layout: dict[str, list[str]],
                 plan: list[Planned], foreseen: list[list[Foreseen]],
                 rng: random.Random) -> None:
        from masume.link.mqtt import topic

        self.unit = unit
        self.board = board
        self.plan = plan
        self.foreseen = foreseen  # the server's picture after each step (foresee)
        self.stacks = {cell.name: list(layout.get(cell.name, ())) for cell in board.sensed}
        self.boot = rng.getrandbits(32) or 1
        self.born = time.perf_counter()
        self.next_seq = 1
        self.journal: dict[int, bytes] = {}  # seq -> frame, oldest first
        self.first_seq = 1
        self.command_seq = 0  # the last command carried out
        self.host_heard = float("-inf")
        self.progress_at = 0.0  # since when the oldest unacked event waits
        self.resent_at = 0.0
        self.resend_wait = RESEND_S
        self.picture: dict[int, tuple[tuple[int, int, int], int]] = {}
        self.lit = asyncio.Event()
        self.measure = Measure()
        self.hellos: list[float] = []  # when a server shook hands (failover)
        self.action = 0
        self.step_in_action = 0
        self.notations: list[str] = []
        self.bad_frames = 0
        self.resent = 0  # event frames sent again (the journal's resends)
        self.events_topic = topic(unit, "events").encode()
        commands, status = topic(unit, "commands").encode(), topic(unit, "status").encode()

        def connected(code: int) -> None:
            if code == 0:
                self.client.subscribe(commands, 1)
                self.client.publish(status, b"online", qos=1, retain=True)

        # The little of MQTT the firmware's umqtt uses: a last will, QoS 1, no resends
        # of the client's own (the journal resends what is not acked), a ping while quiet.
        self.client = MqttClient(f"board-{unit}", on_message=self._on_message,
                                 on_connect=connected, will=(status, b"offline", 1, True),
                                 keepalive=KEEPALIVE_S)

    async def connect(self, broker_port: int) -> None:
        await self.client.connect("127.0.0.1", broker_port)

    # ---- the board's side of the protocol ---------------------------------------------

    def ms(self) -> int:
        return int((time.perf_counter() - self.born) * 1000) & c.TICKS_MASK

    def _send(self, mtype: int, seq: int, payload: bytes = b"") -> None:
        self.client.publish(self.events_topic, c.encode_frame(mtype, seq, payload)[:-1], qos=1)

    def _host_alive(self, now: float) -> bool:
        return now - self.host_heard < HOST_SILENT_S

    def _event(self, mtype: int, payload: bytes, now: float) -> None:
        seq = self.next_seq
        self.next_seq += 1
        frame = c.encode_frame(mtype, seq, payload)[:-1]
        if not self.journal:
            self._progress(now)  # its resend waits RESEND_S from now
        self.journal[seq] = frame
        if len(self.journal) > JOURNAL:
            del self.journal[next(iter(self.journal))]
            self.first_seq = next(iter(self.journal))
        if self._host_alive(now):
            self.client.publish(self.events_topic, frame, qos=1)

    def _heartbeat(self) -> None:
        first = next(iter(self.journal)) if self.journal else self.next_seq
        self._send(c.HEARTBEAT, 0, c.pack_heartbeat(self.next_seq, first, self.ms(), self.boot))

    def _progress(self, now: float) -> None:
        self.progress_at = now
        self.resend_wait = RESEND_S

    def _resend(self, now: float, burst: int = RESEND_MAX) -> None:
        for frame in list(self.journal.values())[:burst]:
            self.client.publish(self.events_topic, frame, qos=1)
            self.resent += 1
        self.resent_at = now

    def tick(self, now: float, heartbeat: bool) -> None:
        """The board's timers (every 250 ms): resend, heartbeat. As the firmware's
        BoardLink.poll: a resend RESEND_S after the last progress (up to RESEND_MAX
        frames), then the oldest alone, each time twice as long after the one before
        (RESEND_MAX_S at most), until an ack frees the journal."""
        if not self._host_alive(now):
            return
        if (self.journal and now - self.progress_at >= RESEND_S
                and now - self.resent_at >= self.resend_wait):
            self._resend(now, RESEND_MAX if self.resend_wait == RESEND_S else 1)
            self.resend_wait = min(self.resend_wait * 2, RESEND_MAX_S)
        if heartbeat:
            self._heartbeat()

    def _reading(self, name: str) -> bytes:
        return _raw_reading(self.board, self.board.cell(name), self.stacks[name])

    def _on_message(self, _topic: bytes, message: bytes) -> None:
        now = time.perf_counter()
        if message == HOST_HEARTBEAT:  # most of what a board hears: the same frame always
            self.host_heard = now
            return
        try:
            mtype, seq, payload = c.decode_frame(message.rstrip(b"\x00"))
            fields = c.unpack(mtype, payload)
        except (c.FrameError, ValueError):
            self.bad_frames += 1
            return
        self.host_heard = now
        if mtype == c.HELLO:
            self.hellos.append(now)
            _, boot, ack = fields
            self.command_seq = seq
            if boot == self.boot:
                self._acked(ack, now)
            first = next(iter(self.journal)) if self.journal else self.next_seq
            self._send(c.WELCOME, 0, c.pack_welcome(self.boot, self.next_seq, first,
                                                    self.board.hash, "emulated",
                                                    self.board.id))
            self._heartbeat()
            if boot == self.boot and self.journal:
                self._progress(now)
                self._resend(now)
        elif mtype == c.ACK:
            self._acked(seq, now)
        elif mtype in c.COMMANDS:
            if seq == (self.command_seq + 1) & 0xFFFFFFFF:
                self.command_seq = seq
                if mtype == c.SNAPSHOT_REQ:
                    readings = [(cell.index, self._reading(cell.name))
                                for cell in self.board.sensed]
                    self._send(c.SNAPSHOT, self.next_seq - 1, c.pack_snapshot(readings))
                else:
                    self._leds(mtype, fields, now)
            self._send(c.ACK, self.command_seq)

    def _acked(self, seq: int, now: float) -> None:
        progressed = False
        while self.journal and next(iter(self.journal)) <= seq:
            del self.journal[next(iter(self.journal))]
            progressed = True
        if progressed:
            self._progress(now)
            self.measure.acked(seq, now)

    def _leds(self, mtype: int, entries: list[Any], now: float) -> None:
        picture = {} if mtype == c.LED_FRAME else dict(self.picture)
        for cell, rgb, pattern in entries:
            if pattern == c.OFF or rgb == (0, 0, 0):
                picture.pop(cell, None)
            else:
                picture[cell] = (rgb, pattern)
        if picture != self.picture:
            self.picture = picture
            self.measure.shown(frozenset(picture.items()), now)
        if picture:
            self.lit.set()

    # ---- the hand -----------------------------------------------------------------

    @property
    def mid_action(self) -> bool:
        return self.step_in_action > 0

    def step(self) -> None:
        if self.action >= len(self.plan):
            return
        now = time.perf_counter()
        planned = self.plan[self.action]
        kind, where, what = planned.steps[self.step_in_action]
        self.measure.moved(self.next_seq, self.foreseen[self.action][self.step_in_action], now,
                           frozenset(self.picture.items()))
        if kind == "press":
            self._event(c.BUTTON, c.pack_button(self.board.button(where).index, self.ms()),
                        now)
        else:
            if kind == "lift":
                self.stacks[where].pop()
            else:
                self.stacks[where].append(what)
            cell = self.board.cell(where)
            self._event(c.SQUARE, c.pack_square(cell.index, self._reading(where), self.ms()),
                        now)
        self.step_in_action += 1
        if self.step_in_action == len(planned.steps):
            self.notations.append(planned.notation)
            self.action += 1
            self.step_in_action = 0


def records(db: Path | str, units: list[str]) -> dict[str, list[str]]:
    """Every unit's active game in the database, as notations."""
    from masume.club.server import resume_game
    from masume.club.store import ClubStore

    store = ClubStore(db)
    try:
        latest: dict[str, int] = {}
        for g in store.games():
            if g["active"]:
                latest[g["table"]] = max(latest.get(g["table"], 0), g["id"])
        out = {}
        for unit in units:
            text = store.record(latest[unit]) if unit in latest else None
            try:
                out[unit] = resume_game(text, GAME).notations() if text else []
            except Exception:  # noqa: BLE001 (whatever is wrong with it, the bench says so)
                out[unit] = ["<unreadable record>"]
        return out
    finally:
        store.close()


def _pause(pace: float, rng: random.Random) -> float:
    """The time to a hand's next movement: about ``pace``, never less than the plan's gap."""
    return max(PLAN_GAP_S + 0.05, pace * (0.5 + rng.random()))


async def _play(boards: list[EmulatedBoard], canaries: list[Hand], seconds: float,
                pace: float, rng: random.Random,
                halfway: Callable[[], None] | None = None) -> None:
    """Every hand at its own pace for ``seconds``, then each finishes its action;
    ``halfway`` is called (on the loop) halfway through."""
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    if halfway is not None:
        loop.call_later(seconds / 2, halfway)

    async def hand(board: EmulatedBoard) -> None:
        await asyncio.sleep(rng.random() * pace)
        while loop.time() < end or board.mid_action:
            board.step()
            await asyncio.sleep(_pause(pace, rng))

    async def canary(h: Hand) -> None:
        await asyncio.sleep(rng.random() * pace)
        while loop.time() < end or h.mid_action:
            await loop.run_in_executor(None, h.step)
            await asyncio.sleep(_pause(pace, rng))

    await asyncio.gather(*(hand(b) for b in boards), *(canary(h) for h in canaries))


async def _timers(boards: list[EmulatedBoard], stop: asyncio.Event) -> None:
    """The boards' 250 ms timers and heartbeats, one task for all (a board's heartbeat
    falls in its own quarter of the second, so they do not all leave at once)."""
    turn = 0
    while not stop.is_set():
        now = time.perf_counter()
        for i, board in enumerate(boards):
            board.tick(now, heartbeat=i % 4 == turn % 4)
        turn = (turn + 1) % 4
        try:
            await asyncio.wait_for(stop.wait(), RESEND_S)
        except TimeoutError:
            pass


class _Lateness:
    """How late the bench's own loop runs: a timer every 50 ms, its lateness kept."""

    EVERY_S = 0.05

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.late: list[float] = []
        self._handle = loop.call_later(self.EVERY_S, self._rung, loop.time() + self.EVERY_S)

    def _rung(self, planned: float) -> None:
        now = self.loop.time()
        self.late.append((now - planned) * 1000)
        self._handle = self.loop.call_at(now + self.EVERY_S, self._rung, now + self.EVERY_S)

    def stop(self) -> None:
        self._handle.cancel()

    def p99(self) -> float:
        return _quantiles(self.late)[1]


def start_server(work: Path, broker: str, db: str | None = None,
                 server_id: str | None = None, workers: int | None = None
                 ) -> subprocess.Popen[bytes]:
    """``masume club serve`` on the tables of ``work``, its log in ``work``/server.log
    (``work``/SERVER_ID.log for one of several, ``--shared``); ``workers``: its
    ``--workers`` (None: its default, one per core)."""
    shared = ["--server-id", server_id, "--shared"] if server_id else []
    if workers is not None:
        shared += ["--workers", str(workers)]
    from masume.club.server import LOOP_CPU_ENV

    return subprocess.Popen(
        [sys.executable, "-m", "masume.cli", "club", "serve", "--broker", broker,
         "--tables", str(work / "tables.toml"), "--db", db or str(work / "club.db"),
         "--no-web", *shared],
        stdout=subprocess.DEVNULL, env=os.environ | {LOOP_CPU_ENV: "1"},
        stderr=open(work / f"{server_id or 'server'}.log", "w"))


def loop_cpu(proc: subprocess.Popen[bytes], log_path: Path, timeout: float = 30.0
             ) -> dict[str, float] | None:
    """The server's loop CPU so far, stage by stage (masume.health.LoopCpu): SIGUSR1,
    then the line it logs (its main thread's; None if none comes, or it is dead).
    CPU seconds of one thread, counted by the kernel: they hold on a busy machine."""
    import signal

    if proc.poll() is not None:
        return None
    before = log_path.read_text(errors="replace").count("loop cpu: ")
    proc.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = [line for line in log_path.read_text(errors="replace").splitlines()
                 if line.startswith("loop cpu: ")]
        if len(lines) > before:
            out: dict[str, float] = {}
            for part in lines[-1][len("loop cpu: "):].split(", "):
                name, value = part.rsplit(" ", 1)
                out[name] = float(value)
            return out
        time.sleep(0.05)
    return None


def loop_cpu_delta(before: list[dict[str, float] | None], after: list[dict[str, float] | None]
                   ) -> dict[str, float] | None:
    """What the servers' loops spent between two :func:`loop_cpu` readings, summed."""
    if not before or any(b is None for b in before + after):
        return None
    out: dict[str, float] = {}
    for b, a in zip(before, after):
        assert a is not None and b is not None
        for key, value in a.items():
            out[key] = out.get(key, 0.0) + value - b.get(key, 0.0)
    return out


def fresh_postgres(admin_url: str) -> tuple[str, Callable[[], None]]:
    """A new database on the PostgreSQL of ``admin_url``: its URL, and what drops it."""
    import uuid
    from urllib.parse import urlsplit, urlunsplit

    import psycopg

    name = f"masume_bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    parts = urlsplit(admin_url)

    def drop() -> None:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    return urlunsplit(parts._replace(path=f"/{name}")), drop


async def run_size(n: int, canaries: int, seconds: float, pace: float,
                   plans: list[list[Planned]], log: Callable[[str], None] = print,
                   idle: float = IDLE_S, servers: int = 1, postgres: str | None = None,
                   kill: bool = False, workers: int | None = None,
                   foreseen: list[list[list[Foreseen]]] | None = None) -> dict[str, Any]:
    """One size; ``foreseen``: each plan's pictures (:func:`foresee`), made if None."""
    from masume.boards import load_board
    from masume.club.mosquitto import Broker
    from masume.games import load_rules
    rules = load_rules(GAME)
    board = load_board(rules.board)
    layout = {k: list(v) for k, v in rules.start().layout().items()}
    if foreseen is None:
        foreseen = foresee_all(plans)
    work = Path(tempfile.mkdtemp(prefix="masume-bench-emulated-"))
    broker = Broker(work / "broker").start()
    units = [f"hall-{i + 1}" for i in range(n)]
    canary_units = [f"canary-{i + 1}" for i in range(canaries)]
    (work / "tables.toml").write_text("".join(
        f'[tables.{u}]\ngame = "{GAME}"\nplayers = ["A", "B"]\n' for u in units + canary_units))
    loop = asyncio.get_running_loop()
    rng = random.Random(n)
    stop = asyncio.Event()
    procs: list[subprocess.Popen[bytes]] = []
    db: str = str(work / "club.db")
    drop_db: Callable[[], None] | None = None
    sims: list[Any] = []
    hands: list[Hand] = []
    boards: list[EmulatedBoard] = []
    keep = True
    timers = None
    try:
        for i, unit in enumerate(canary_units):
            sim, hand = board_with_hand(broker.url, unit, i, layout, plans[i % len(plans)],
                                        foreseen[i % len(plans)])
            sims.append(sim)
            hands.append(hand)
        for i, unit in enumerate(units):
            boards.append(EmulatedBoard(unit, board, layout, plans[i % len(plans)],
                                        foreseen[i % len(plans)], rng))
            await boards[-1].connect(broker.port)
        timers = asyncio.create_task(_timers(boards, stop))
        # The boards, as the server's tables (masume.heap), out of this process's
        # collector's walks while they play: a full collection of 1,000 boards took
        # 70 ms of CPU, and every board's timing waited for it. Undone after the size.
        heap.settle()
        if postgres:
            db, drop_db = fresh_postgres(postgres)
        if servers == 1:
            procs.append(start_server(work, broker.url, db, workers=workers))
        else:
            from masume.club.store import ClubStore

            ids = [f"club-{i + 1}" for i in range(servers)]
            store = ClubStore(db)
            for server_id in ids:  # all known before the boards are handed out
                store.heartbeat(server_id, 30)
            store.close()
            procs.extend(start_server(work, broker.url, db, server_id, workers)
                         for server_id in ids)
        pids = [p.pid for p in procs]

        meter = CpuMeter(pids)
        cpu = meter.read

        started = time.monotonic()
        try:
            await asyncio.wait_for(asyncio.gather(*(b.lit.wait() for b in boards)),
                                   120 + n * 0.2)
        except TimeoutError:
            dark = sum(1 for b in boards if not b.lit.is_set())
            raise RuntimeError(f"{dark} of {n} boards never lit: the server did not run "
                               f"them all (see {work / 'server.log'})") from None
        lit_by = time.monotonic() + 60
        while not all(s.led_colours for s in sims):
            if time.monotonic() > lit_by:
                dark_units = [u for u, s in zip(canary_units, sims) if not s.led_colours]
                raise RuntimeError(f"canaries {dark_units} never lit (see {work})")
            await asyncio.sleep(0.1)
        startup = time.monotonic() - started
        await asyncio.sleep(1.0)  # the first pictures (snapshot, then the game) are out
        cpu0, t0 = cpu(), time.monotonic()
        await asyncio.sleep(idle)
        idle = (cpu() - cpu0) / (time.monotonic() - t0) / (n + canaries) * 100
        rss = sum(_rss_mb(p) for pid in pids for p in _with_children(pid)
                  if Path(f"/proc/{p}").exists())
        for b in boards:
            b.measure.measure = True
        resent0 = sum(b.resent for b in boards)
        events0 = sum(b.next_seq for b in boards)
        logs = [work / "server.log"] if servers == 1 else [work / f"{i}.log" for i in ids]

        async def loops() -> list[dict[str, float] | None]:
            return await asyncio.gather(*(loop.run_in_executor(None, loop_cpu, p, path)
                                          for p, path in zip(procs, logs)))

        loops0 = await loops()
        own0 = time.process_time()
        cpu0, t0 = cpu(), time.monotonic()
        killed_at: list[float] = []

        def kill_first() -> None:
            meter.last_reading(procs[0].pid)
            killed_at.append(time.perf_counter())
            procs[0].kill()

        lateness = _Lateness(loop)
        await _play(boards, hands, seconds, pace, rng, kill_first if kill else None)
        lateness.stop()
        busy = time.monotonic() - t0
        cpu_used = cpu() - cpu0
        resent = sum(b.resent for b in boards) - resent0
        events = sum(b.next_seq for b in boards) - events0
        loop_used = loop_cpu_delta(loops0, await loops())
        own = (time.process_time() - own0) / busy * 100
        want = {b.unit: b.notations for b in boards} | {
            u: h.notations for u, h in zip(canary_units, hands)}
        deadline = time.monotonic() + 20 + n * 0.05
        while True:
            got = await loop.run_in_executor(None, records, db, list(want))
            differ = sorted(u for u in want if got[u] != want[u])
            if not differ or time.monotonic() > deadline:
                break
            await asyncio.sleep(1.0)
        for unit in differ[:10]:
            have, made = got[unit], want[unit]
            k = next((i for i, (a, b) in enumerate(zip(have, made)) if a != b),
                     min(len(have), len(made)))
            log(f"  {unit}: from action {k + 1} the hand made {made[k:k + 3]}, "
                f"the record holds {have[k:k + 3]}")
        moved = [min(t for t in b.hellos if t > killed_at[0]) - killed_at[0] for b in boards
                 if killed_at and any(t > killed_at[0] for t in b.hellos)]
        if differ:
            log(f"  kept for a look: {work} (the servers' logs)"
                + (f" and the database {db}" if drop_db else " and the database"))
        else:
            keep = False
        p50, p99 = _quantiles([x for b in boards for x in b.measure.latencies])
        s50, s99 = _quantiles([x for b in boards for x in b.measure.settled])
        quiet = [x for b in boards for x in b.measure.quiet]
        q50, q99 = _quantiles(quiet)
        c50, c99 = _quantiles([x for h in hands for x in h.latencies])
        return {"boards": n, "samples": sum(len(b.measure.latencies) for b in boards),
                "p50": p50, "p99": p99,
                "settled": sum(len(b.measure.settled) for b in boards),
                "settled_p50": s50, "settled_p99": s99,
                "misses": sum(b.measure.misses for b in boards),
                "quiet": len(quiet), "quiet_p50": q50, "quiet_p99": q99,
                "unforeseen": sum(b.measure.unforeseen for b in boards),
                "canaries": canaries, "canary_samples": sum(len(h.latencies) for h in hands),
                "canary_p50": c50, "canary_p99": c99,
                "canary_settled": sum(len(h.settled) for h in hands),
                "canary_misses": sum(h.misses for h in hands),
                "canary_unforeseen": sum(h.unforeseen for h in hands),
                "cpu_per_board": cpu_used / busy / (n + canaries) * 100,
                "idle_per_table": idle, "servers": servers,
                "failover": _quantiles(moved) + (max(moved),) if moved else None,
                "moved": len(moved),
                "rss_mb": rss, "bench_cpu": own, "loop": loop_used, "busy_s": busy,
                "bench_late_p99": lateness.p99(),
                "startup_s": startup,
                "actions": sum(len(v) for v in want.values()), "differ": differ,
                "bad_frames": sum(b.bad_frames for b in boards),
                "resent": resent, "events": events, "cpu_s": cpu_used}
    finally:
        gc.unfreeze()
        stop.set()
        if timers is not None:
            await timers
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for b in boards:
            b.client.disconnect()
        if drop_db is not None and not keep:
            drop_db()
        for sim in sims:
            sim.close()
        broker.stop()
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


#: The goal's rate (issue 17): 1,000 boards, a movement (one board event) every 4 s each.
GOAL_EVENTS_PER_S = 250


def loop_line(used: dict[str, float], seconds: float) -> str:
    """What the servers' loops spent per board event, stage by stage, and what the
    goal's 250 events a second would take at that cost.

    >>> loop_line({"cpu_s": 2.0, "events": 1000, "mqtt-read": 1.0, "frames": 0.5},
    ...           20).split("; ")  # doctest: +NORMALIZE_WHITESPACE
    ['server loop: 2.000 ms of CPU per board event (1000 events',
     '2.00 s of its thread in 20.0 s, 10 % of a core): mqtt-read 50 %, frames 25 %, other 25 %',
     'at 250 events a second: 50 % of a core', 'nan us per MQTT message (0 in and out)']
    """
    total, events = used["cpu_s"], int(used["events"])
    messages = int(used.get("messages", 0))
    stages = {k: v for k, v in used.items() if k not in ("cpu_s", "events", "messages")}
    stages["other"] = total - sum(stages.values())
    per = total / events if events else float("nan")
    split = ", ".join(f"{k} {v / total * 100:.0f} %" for k, v in stages.items()) if total else ""
    per_message = total / messages * 1e6 if messages else float("nan")
    return (f"server loop: {per * 1000:.3f} ms of CPU per board event ({events} events; "
            f"{total:.2f} s of its thread in {seconds:.1f} s, {total / seconds * 100:.0f} % of "
            f"a core): {split}; at {GOAL_EVENTS_PER_S} events a second: "
            f"{per * GOAL_EVENTS_PER_S * 100:.0f} % of a core; {per_message:.0f} us per MQTT "
            f"message ({messages} in and out)")


def sizes_up_to(boards: int) -> list[int]:
    """1, 10, 100, ... then ``boards``.

    >>> sizes_up_to(1000), sizes_up_to(250), sizes_up_to(1)
    ([1, 10, 100, 1000], [1, 10, 100, 250], [1])
    """
    out, n = [], 1
    while n < boards:
        out.append(n)
        n *= 10
    return out + [boards]


def run(boards: int, seconds: float, pace: float, canaries: int = 2, servers: int = 1,
        postgres: str | None = None, kill: bool = False, workers: int | None = None) -> int:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4 * boards + 256)), hard))
    # Every hand's game before any simulated board runs (see plan_games).
    plans = plan_games(min(max(boards, canaries), PLANS), steps_for(seconds, pace, 0.0))
    foreseen = foresee_all(plans)
    best, over, ok = 0, False, True
    print(f"{GAME}, one hand movement every {pace:g} s on average per board, {seconds:g} s "
          f"of play per size; {canaries} full-VM canary boards beside the emulated ones",
          flush=True)
    print("the bench process, as the server's (masume.heap): its boards frozen out of the "
          "collector's walks while they play", flush=True)
    print("the server's tracker work: " + (
        "its default worker processes (one per core)" if workers is None else
        f"--workers {workers}" + (" (in its own process)" if workers <= 1 else "")),
          flush=True)
    if servers > 1:
        print(f"{servers} servers sharing the boards (--shared), database "
              f"{'PostgreSQL (a fresh one per size)' if postgres else 'one SQLite file'}"
              f"{'; the first SIGKILLed halfway through the play' if kill else ''}",
              flush=True)
    for n in sizes_up_to(boards):
        r = asyncio.run(run_size(n, canaries, seconds, pace, plans, servers=servers,
                                 postgres=postgres, kill=kill, workers=workers,
                                 foreseen=foreseen))
        print(f"boards {r['boards']:4d}: event -> LED p50 {r['p50']:.1f} ms, "
              f"p99 {r['p99']:.1f} ms (n={r['samples']}; {_settled(r)}; "
              f"{r['misses']} unanswered, {r['unforeseen']} pictures not foreseen; "
              f"{r['quiet']} movements change no LED, their event -> ACK p50 "
              f"{r['quiet_p50']:.1f} ms, p99 {r['quiet_p99']:.1f} ms); server CPU "
              f"{r['cpu_per_board']:.2f} % of a core "
              f"per board playing, {r['idle_per_table']:.3f} % per table idle, RSS "
              f"{r['rss_mb']:.0f} MB; {r['actions']} actions, records "
              f"{'all exact' if not r['differ'] else 'DIFFER: ' + ', '.join(r['differ'][:10])}",
              flush=True)
        print(f"            canaries (full VM): p50 {r['canary_p50']:.1f} ms, p99 "
              f"{r['canary_p99']:.1f} ms (n={r['canary_samples']}; "
              f"{r['canary_settled']} answered after the settle, {r['canary_misses']} "
              f"unanswered, {r['canary_unforeseen']} pictures not foreseen); bench process "
              f"{r['bench_cpu']:.0f} % of a core, its loop late p99 "
              f"{r['bench_late_p99']:.0f} ms; all tables running after "
              f"{r['startup_s']:.1f} s; the boards resent {r['resent']} event frames "
              f"({r['resent'] / max(1, r['events']):.2f} per event made); the server's "
              f"processes (loop and workers) {r['cpu_s'] / max(1, r['events']) * 1000:.2f} "
              f"ms of CPU per event made", flush=True)
        if r["loop"]:
            print("            " + loop_line(r["loop"], r["busy_s"]), flush=True)
        if kill:
            print("            failover: " + (
                f"{r['moved']} boards moved after the SIGKILL: half by {r['failover'][0]:.2f} s, "
                f"the last {r['failover'][2]:.2f} s"
                if r["moved"] else "the killed server ran no board"), flush=True)
        ok &= not r["differ"]
        if r["p99"] < P99_LIMIT_MS and not over:
            best = n
        else:
            over = True
    print(f"largest number of boards with p99 under {P99_LIMIT_MS:.0f} ms: {best}"
          f"{'' if best < boards else ' (the most tried: raise --boards)'}")
    return 0 if ok else 1
