"""``masume bench faults``: club mode played through every fault of issue 11.

An event as an organiser runs it, in a folder of its own: a Mosquitto started
with `masume club broker-config`'s configuration (TLS only, a password per board
and server, ``use_username_as_clientid``, a packet size limit) on free loopback
ports; ``masume club serve`` as its own process, its broker password from the
credentials file, its database on a small tmpfs of its own (16 MiB: small enough
to fill, with room for SQLite's write-ahead log, checkpointed only past 4 MiB;
mounting it needs root, and without root the disk-full fault is left out and
said); and simulated boards in this process (the real firmware on the
MicroPython VM): ``--tables`` Soccer Shogi tables whose hands play planned random
games (masume.bench.club: every action one the sensors can tell), and one
Eyeshield 21 mat with a character card put down face down.

The hands play on through each fault, and afterwards every record must hold
exactly the actions its hand made:

- the club server killed with SIGKILL (``--kills`` times, moves made while it is
  down and restarted in the middle of the hands' play);
- the broker stopped and started again on its port;
- the disk full under the database (the live page must say "cannot save: disk
  full"), then room given back;
- noise: random bytes and frames with a flipped bit published on a board's events
  topic by the board's own connection;
- a board's Wi-Fi cut (the broker publishes its last will), then back;
- malformed frames from a board, each CRC-valid: a WELCOME cut short, a SNAPSHOT
  naming a cell the board does not have, a SQUARE with a piece code it has no
  piece for;
- a client-id takeover: a spare board's stolen credentials under a playing
  board's client ids (the broker must keep the playing board connected).

Time to recover: from the end of a fault (the server started again, the broker
back, the room given back, the frames sent) until every table's record holds
every action its hand made, the hands waiting meanwhile. Then: every worker's
health (``/api/health`` of the live page: the server's threads, each table's and
link's, the broker connection's), every spectator payload of the live page read
for the face-down card, and the codec fuzzer (``masume bench fuzz``, in its own
process: atheris ends the process it runs in).
"""

from __future__ import annotations

import os
import pwd
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from masume.bench.club import GAME, Hand, Planned, _recorded, plan_games
from masume_protocol import codec as c

#: Goals (issue 11).
RECOVERY_GOAL_S = 10.0
#: The card table's face-down card: Eyeshield 21's first action, a character put down.
CARD_GAME = "eyeshield21"
SECRET = "F01.1"
SECRET_CELL = "home-character-1"
#: Hand movements each hand makes during one fault.
MOVEMENTS_PER_FAULT = 6
CATCH_UP_S = 60.0  # the longest a recovery is waited for before it counts as failed


class Disk:
    """A small tmpfs of the bench's own, to fill and free (as tests/conftest.py's
    ``small_disk``); ``None`` from :meth:`mount` where it cannot be mounted."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.filler = path / "filler"

    @classmethod
    def mount(cls, path: Path, size: str = "16m") -> Disk | None:
        path.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                              capture_output=True, text=True, check=False)
        return cls(path) if done.returncode == 0 else None

    def fill(self) -> None:
        fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            for size in (1 << 16, 4096, 1):  # to the last byte
                while True:
                    try:
                        os.write(fd, bytes(size))
                    except OSError:
                        break
        finally:
            os.close(fd)

    def free(self) -> None:
        self.filler.unlink(missing_ok=True)

    def read_only(self, on: bool) -> None:
        """Remount it read-only (or writable again)."""
        # A file open for writing makes the remount busy for a moment: try again.
        for _ in range(200):
            done = subprocess.run(["mount", "-o", f"remount,{'ro' if on else 'rw'}",
                                   str(self.path)], capture_output=True, text=True, check=False)
            if done.returncode == 0:
                return
            time.sleep(0.05)
        raise OSError(f"cannot remount {self.path}: {done.stderr.strip()}")

    def unmount(self) -> None:
        subprocess.run(["mount", "-o", "remount,rw", str(self.path)], capture_output=True,
                       check=False)
        if subprocess.run(["umount", str(self.path)], capture_output=True,
                          check=False).returncode != 0:
            subprocess.run(["umount", "-l", str(self.path)], capture_output=True, check=False)


class Event:
    """The event under test: broker, server process, boards, hands, live page."""

    def __init__(self, work: Path, tables: int, pace: float, log: Callable[[str], None]) -> None:
        self.work = work
        self.pace = pace
        self.log = log
        self.units = [f"table-{i + 1}" for i in range(tables)]
        self.card_unit = "cards-1"
        self.spare = "spare-1"  # a board with credentials and no table: the thief's
        self.server: subprocess.Popen[bytes] | None = None
        self.broker: Any = None
        self.conf: Any = None
        self.sims: list[Any] = []
        self.card_sim: Any = None
        self.hands: list[Hand] = []
        self.disk: Disk | None = None
        self.store: Any = None
        self.http_port = 0
        self.started = 0.0

    # ---- setting up -------------------------------------------------------

    def start(self, plans: list[list[Planned]]) -> None:
        from masume.club.broker import write_broker_config
        from masume.club.mosquitto import Broker, free_port
        from masume.club.store import ClubStore

        me = pwd.getpwuid(os.geteuid()).pw_name
        self.conf = write_broker_config(
            self.work / "event", self.units + [self.card_unit, self.spare], ["club"],
            port=free_port(), bind="127.0.0.1", tls_port=free_port(), user=me)
        self.broker = Broker(self.work / "broker", config=self.conf.conf.read_text(),
                             port=self.conf.tls_port).start()
        self.disk = Disk.mount(self.work / "disk")
        db_folder = self.disk.path if self.disk else self.work
        self.db = db_folder / "club.db"
        (self.work / "tables.toml").write_text(
            "".join(f'[tables.{u}]\ngame = "{GAME}"\nplayers = ["A", "B"]\n' for u in self.units)
            + f'[tables.{self.card_unit}]\ngame = "{CARD_GAME}"\nplayers = ["Ann", "Bob"]\n')
        arbiter = self.work / "arbiter.pw"
        arbiter.write_text("an arbiter's password for the bench\n")
        arbiter.chmod(0o600)
        self.http_port = free_port()
        self.command = [
            sys.executable, "-m", "masume.cli", "club", "serve",
            "--broker", f"mqtts://club@127.0.0.1:{self.conf.tls_port}?ca={self.conf.ca}",
            "--password-file", str(self.conf.folder / "credentials.toml"),
            "--tables", str(self.work / "tables.toml"), "--db", str(self.db),
            "--http-port", str(self.http_port), "--arbiter-password-file", str(arbiter)]
        self.start_server()
        self.store = ClubStore(self.db)
        self._start_boards(plans)

    def _start_boards(self, plans: list[list[Planned]]) -> None:
        from masume.games import load_rules
        from masume.play.cards import cards_of, set_up
        from masume.sim.board import SimulatedBoard

        start = load_rules(GAME).start()
        for i, unit in enumerate(self.units):
            sim = SimulatedBoard(GAME, mqtt=self.conf.url(unit), unit=unit, seed=i)
            for square, pieces in start.layout().items():
                for piece in pieces:
                    sim.place(square, piece)
            self.sims.append(sim)
            self.hands.append(Hand(sim, plans[i]))
        position = load_rules(CARD_GAME).start()
        self.card_sim = SimulatedBoard(CARD_GAME, mqtt=self.conf.url(self.card_unit),
                                       unit=self.card_unit, seed=len(self.units))
        for cell, piece in set_up(position.layout(), position):
            self.card_sim.place(cell, piece)
        card_set = cards_of(position)
        assert card_set is not None  # CARD_GAME is played on a mat
        self.card_piece = card_set.copy(SECRET).piece
        self.secrets = self._secrets(position)

    @staticmethod
    def _secrets(position: Any) -> tuple[str, ...]:
        from masume.play.cards import cards_of

        card_set = cards_of(position)
        assert card_set is not None  # CARD_GAME is played on a mat
        copy = card_set.copy(SECRET)
        return tuple(s for s in (copy.tag, copy.id, copy.card.name) if s)

    def start_server(self) -> None:
        env = {k: v for k, v in os.environ.items() if k != "MASUME_MQTT_PASSWORD"}
        env["PYTHONUNBUFFERED"] = "1"
        with open(self.work / "server.log", "ab") as log:
            self.server = subprocess.Popen(self.command, env=env, stdout=log,
                                           stderr=subprocess.STDOUT)
        self.started = time.monotonic()

    def kill_server(self) -> None:
        assert self.server is not None
        self.server.send_signal(signal.SIGKILL)
        self.server.wait(10)

    # ---- reading the server -------------------------------------------------

    def get(self, path: str, timeout: float = 5.0) -> Any:
        import httpx

        return httpx.get(f"http://127.0.0.1:{self.http_port}{path}", timeout=timeout)

    def api(self, path: str) -> Any:
        try:
            answer = self.get(path)
        except Exception:  # noqa: BLE001 - whatever fails, the server is (re)starting
            return None
        return answer.json() if answer.status_code == 200 else None

    def lost(self) -> dict[str, tuple[int, int]]:
        """Tables whose record does not hold exactly what the hand made: unit ->
        (made, recorded)."""
        out = {}
        for unit, hand in zip(self.units, self.hands):
            got = _recorded(self.store, unit)
            if got != hand.notations:
                out[unit] = (len(hand.notations), len(got))
        return out

    def card_recorded(self) -> bool:
        games = [g for g in self.store.games() if g["table"] == self.card_unit and g["active"]]
        text = self.store.record(games[-1]["id"]) if games else None
        return f"{SECRET}@{SECRET_CELL}" in (text or "")

    def wait(self, done: Callable[[], bool], timeout: float = CATCH_UP_S) -> float | None:
        """Seconds until ``done()``; None if it was not within ``timeout``."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            try:
                if done():
                    return time.monotonic() - t0
            except Exception:  # noqa: BLE001, S110 - a database being written, a server starting: ask again
                pass
            time.sleep(0.2)
        return None

    # ---- the hands ----------------------------------------------------------

    def play(self, movements: int = MOVEMENTS_PER_FAULT,
             midway: Callable[[], None] | None = None) -> None:
        """Each hand makes ``movements`` movements at the pace (``midway`` is called
        after half of them), then finishes the action under way."""
        for i in range(movements):
            if midway is not None and i == movements // 2:
                midway()
            for hand in self.hands:
                hand.step()
                time.sleep(self.pace / len(self.hands))
        while any(h.mid_action for h in self.hands):
            for hand in self.hands:
                if hand.mid_action:
                    hand.step()
                time.sleep(self.pace / len(self.hands))

    # ---- what a board or a thief publishes ----------------------------------

    def publish_as_board(self, index: int, frames: list[bytes]) -> None:
        """``frames`` published on a board's events topic by the board's own
        connection (its own credentials: what a faulty or hostile board can do)."""
        from masume.link.mqtt import topic

        net = self.sims[index].net
        for frame in frames:
            net.publish(topic(self.units[index], "events"), frame.hex(), False, 1)

    def takeover(self) -> bool:
        """The spare board's stolen credentials under table-1's client ids; True if
        table-1's board kept its connection throughout."""
        import threading

        from masume.link.mqtt import BrokerUrl, new_client, topic

        victim = self.sims[0].net
        before = victim.connects
        for client_id in (victim.client_id, self.units[0]):
            thief = new_client(client_id)
            url = BrokerUrl.parse(self.conf.url(self.spare))
            url.configure(thief)
            thief.reconnect_delay_set(60, 60)
            connected = threading.Event()
            thief.on_connect = lambda *_, done=connected: done.set()
            thief.connect(url.host, url.port, keepalive=30)
            thief.loop_start()
            try:
                if connected.wait(10):
                    thief.publish(topic(self.units[0], "events"), b"not mine", qos=1)
                    thief.publish(topic(self.spare, "status"), b"online", qos=1).wait_for_publish(5)
            finally:
                thief.disconnect()
                thief.loop_stop()
        self.play(2)  # and table-1 plays on
        return bool(victim.connects == before and victim.online)

    # ---- closing ------------------------------------------------------------

    def close(self) -> None:
        if self.server is not None and self.server.poll() is None:
            self.server.terminate()
            try:
                self.server.wait(15)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()
        for sim in self.sims + ([self.card_sim] if self.card_sim else []):
            try:
                sim.close()
            except Exception as exc:  # noqa: BLE001 - closing the rest matters more
                self.log(f"closing a simulated board: {type(exc).__name__}: {exc}")
        if self.store is not None:
            self.store.close()
        if self.broker is not None:
            self.broker.stop()
        if self.disk is not None:
            self.disk.free()
            self.disk.unmount()


def noise(rng: random.Random, count: int) -> list[bytes]:
    """Random bytes, and real-looking frames with one bit flipped."""
    out = [bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 64)))
           for _ in range(count // 2)]
    for _ in range(count - len(out)):
        frame = bytearray(c.encode_frame(c.HEARTBEAT, 0, c.pack_heartbeat(0, 0, 0, 0))[:-1])
        frame[rng.randrange(len(frame))] ^= 1 << rng.randrange(8)
        out.append(bytes(frame))
    return out


def malformed(board: Any, ack: int) -> list[bytes]:
    """CRC-valid frames a board cannot mean (without the COBS delimiter, as a board
    publishes them): a WELCOME cut short (the board id's length byte missing), a
    SNAPSHOT naming a cell the board does not have, a SQUARE with a piece code it has
    no piece for."""
    cell = board.sensed[0].index
    return [c.encode_frame(c.WELCOME, 0, c.pack_welcome(1, 2, 1, board.hash, "", "x")[:19])[:-1],
            c.encode_frame(c.SNAPSHOT, ack, c.pack_snapshot([(5000, b"\x01")]))[:-1],
            c.encode_frame(c.SQUARE, ack + 1, c.pack_square(cell, b"\x63", 1))[:-1]]


def spectator_leaks(event: Event) -> tuple[int, int]:
    """(secrets of the face-down card found, payloads read) over everything the live
    page gives a spectator: the overview, each table with its replay, the results,
    and the first push of the stream."""
    import httpx

    base = f"http://127.0.0.1:{event.http_port}"
    texts = [event.get("/api/tables").text, event.get("/api/results").text]
    texts += [event.get(f"/api/tables/{u}").text for u in event.units + [event.card_unit]]
    with httpx.stream("GET", base + "/api/stream", timeout=10) as stream:
        texts.append(next(line for line in stream.iter_lines() if line.startswith("data:")))
    found = {s for s in event.secrets for t in texts if s in t}
    return len(found), len(texts)


def dead_workers(health: dict[str, Any] | None) -> tuple[int, int, list[str]]:
    """(alive, dead, who is dead) from the server's /api/health."""
    if health is None:
        return 0, 1, ["the club server (no answer)"]
    workers: list[tuple[str, bool]] = [(f"server {n}", bool(h.get("alive")))
                                       for n, h in health["server"].items()]
    for unit, report in health["tables"].items():
        workers.append((f"{unit} table", bool(report["table"].get("alive"))))
        if report.get("link") is not None:
            workers.append((f"{unit} link", bool(report["link"].get("alive"))))
    if health.get("hub") is not None:
        workers.append(("broker connection", bool(health["hub"].get("alive"))))
    dead = [name for name, alive in workers if not alive]
    return len(workers) - len(dead), len(dead), dead


def fuzz(payloads: int) -> tuple[str, bool]:
    """``masume bench fuzz`` in its own process (libFuzzer never returns): its line."""
    done = subprocess.run([sys.executable, "-m", "masume.cli", "bench", "fuzz",
                           "--payloads", str(payloads)], capture_output=True, text=True,
                          check=False)
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("fuzz:")),
                (done.stdout + done.stderr).strip()[-300:] or f"exit {done.returncode}")
    return line, done.returncode == 0 and " 0 non-FrameError" in line


def run(tables: int = 3, kills: int = 3, pace: float = 0.7, payloads: int = 1_000_000,
        seed: int = 1, log: Callable[[str], None] = print) -> int:
    phases = kills + 8
    plans = plan_games(tables, (phases + 2) * (MOVEMENTS_PER_FAULT + 6))  # before any board runs
    work = Path(tempfile.mkdtemp(prefix="masume-bench-faults-"))
    event = Event(work, tables, pace, log)
    rng = random.Random(seed)
    recoveries: list[tuple[str, float | None]] = []
    notes: list[str] = []
    keep = True
    try:
        event.start(plans)
        assert event.server is not None  # start() started it
        log(f"faults: {tables} {GAME} tables and one {CARD_GAME} mat on simulated boards; "
            f"`masume club serve` pid {event.server.pid}; Mosquitto (TLS only) on "
            f"127.0.0.1:{event.conf.tls_port}; database on "
            f"{'a 16 MiB tmpfs' if event.disk else 'the work folder (no tmpfs: not root)'}")
        if event.wait(lambda: all(s.led_colours for s in event.sims) and event.card_sim.led_colours,
                      90) is None:
            log("error: the server did not light every board within 90 s "
                f"(see {work / 'server.log'})")
            return 1
        event.card_sim.place(SECRET_CELL, event.card_piece)  # the face-down character

        def phase(name: str, heal: Callable[[], None] | None = None) -> None:
            if heal is not None:
                heal()
            took = event.wait(lambda: not event.lost())
            recoveries.append((name, took))
            if took is not None:
                log(f"  {name}: every record exact {took:.1f} s after")
                return
            health = event.api("/api/health") or {}
            problems = {u: r["problem"] for u, r in health.get("tables", {}).items()
                        if r["problem"]}
            log(f"  {name}: records still differ after {CATCH_UP_S:.0f} s: (made, recorded) "
                f"{event.lost()}; problems: {problems or 'none said'}")

        event.play()
        phase("warm-up")
        for k in range(kills):
            event.play(midway=event.kill_server)  # killed while the hands play on
            phase(f"server SIGKILL {k + 1} of {kills}", event.start_server)
        event.broker.stop()
        event.play()
        phase("broker restart", event.broker.start)
        if event.disk is not None:
            event.disk.fill()
            event.play()

            def said() -> bool:
                states = event.api("/api/tables") or []
                return any("cannot save: disk full" in str((s.get("health") or {}).get("problem"))
                           for s in states)

            shown = event.wait(said, 30) is not None
            notes.append("disk full: " + ("shown on the live page" if shown
                                          else "NOT SHOWN on the live page"))
            phase("disk full", event.disk.free)
        else:
            notes.append("disk full: not tried (mounting a tmpfs needs root)")
        event.play(midway=lambda: event.publish_as_board(1 % tables, noise(rng, 40)))
        phase("noise (40 junk publishes)")
        event.sims[0].unplug()
        event.play()
        phase("Wi-Fi cut", event.sims[0].replug)
        frames = malformed(event.sims[-1].board, 0)
        event.play(midway=lambda: event.publish_as_board(len(event.sims) - 1, frames))
        phase(f"malformed frames ({len(frames)})")
        kept = event.takeover()
        notes.append("client-id takeover: " + ("refused, table-1 stayed connected" if kept
                                               else "TABLE-1 WAS PUSHED OFF"))
        phase("client-id takeover")

        # The figures.
        made = sum(len(h.notations) for h in event.hands)
        recorded = sum(_kept(_recorded(event.store, u), h.notations)
                       for u, h in zip(event.units, event.hands))
        card_saved = event.wait(event.card_recorded, 30) is not None
        health = event.api("/api/health")
        alive, dead, who = dead_workers(health)
        faults = sum(r["link"]["faults"] for r in (health or {}).get("tables", {}).values()
                     if r.get("link"))
        leaks, payload_count = spectator_leaks(event)
        if not card_saved:
            notes.append("the face-down card was NOT RECORDED")
        times = [t for _, t in recoveries if t is not None]
        failed = [n for n, t in recoveries if t is None]
        slowest = max(recoveries, key=lambda r: r[1] if r[1] is not None else float("inf"))
        log(f"actions played {made}, recorded {recorded}: {made - recorded} lost")
        log(f"workers: {alive} alive, {dead} dead{': ' + ', '.join(who) if who else ''}; "
            f"{faults} link faults counted and said")
        log(f"time to recover: max {max(times) if times else float('nan'):.1f} s ({slowest[0]}), "
            f"mean {sum(times) / len(times) if times else float('nan'):.1f} s "
            f"over {len(times)} faults"
            + (f"; NOT RECOVERED: {', '.join(failed)}" if failed else ""))
        log(f"hidden cards visible to a spectator: {leaks} "
            f"(1 face-down card, {payload_count} spectator payloads read)")
        for note in notes:
            log(note)
        fuzz_line, fuzz_ok = fuzz(payloads) if payloads else ("fuzz: not run (--payloads 0)", True)
        log(fuzz_line)
        ok = (made == recorded and dead == 0 and not failed and max(times) < RECOVERY_GOAL_S
              and leaks == 0 and card_saved and kept and fuzz_ok
              and all("NOT" not in n for n in notes))
        log("goals (0 lost, 0 dead, recovery under 10 s, 0 visible, 0 non-FrameError): "
            + ("all met" if ok else "NOT ALL MET"))
        keep = not ok
        return 0 if ok else 1
    finally:
        event.close()
        if keep:
            log(f"kept for a look: {work} (server.log, club.db if not on the tmpfs)")
        else:
            shutil.rmtree(work, ignore_errors=True)


def _kept(record: list[str], made: list[str]) -> int:
    """How many of the actions made the record holds: their common beginning."""
    n = 0
    while n < min(len(record), len(made)) and record[n] == made[n]:
        n += 1
    return n
