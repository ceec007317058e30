"""Club mode beyond one host (issue 17): two ``masume club serve`` processes, each
in a network namespace of its own (two hosts; two plain processes where
namespaces cannot be made), share the boards of one Mosquitto and one PostgreSQL
database. One is SIGKILLed mid-game: its tables move to the other, and nothing
the boards played is lost.

Why leases and per-board subscriptions rather than MQTT shared subscriptions
(``$share/group/masume/+/events``): Mosquitto hands each message of a shared
subscription to the next member of the group in turn, whatever its topic, so
one board's events would be split between the servers (the first test shows
it), and a table's tracker needs every event of its board, in order. The
leases give each board one server, which subscribes to that board's events
alone; docs/club.md says more.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from test_club import Hands, set_up
from waiting import until

from masume.club.mosquitto import Broker, free_port
from masume.club.server import LEASE_S, RENEW_S, resume_game
from masume.club.store import ClubStore
from masume.link.mqtt import new_client, topic
from masume_protocol import codec as c

pytestmark = pytest.mark.slow

PG_SOCKET = os.environ.get("MASUME_TEST_PG_SOCKET", "/var/run/postgresql")
FAILOVER_LIMIT_S = 5.0  # issue 17: a killed server's tables run elsewhere within 5 s


def _subscriber(port: int, name: str, subscription: str, got: list[bytes]):
    client = new_client(name)
    subscribed = threading.Event()
    client.on_connect = lambda cl, *_: cl.subscribe(subscription, 1)
    client.on_subscribe = lambda *_: subscribed.set()
    client.on_message = lambda cl, u, m: got.append(bytes(m.payload))
    client.connect("127.0.0.1", port)
    client.loop_start()
    until(subscribed.is_set, f"{name}'s subscription")
    return client


def test_a_shared_subscription_splits_one_boards_events_between_servers(broker):
    """Why the servers do not share the boards through ``$share``: Mosquitto gives
    each message to the next member of the group, so one board's stream reaches
    both servers, each with a part of it, and neither could track the game."""
    got: dict[str, list[bytes]] = {"club-a": [], "club-b": []}
    clients = [_subscriber(broker.port, name, "$share/club/masume/+/events", got[name])
               for name in got]
    board = new_client("board-t-1")
    board.connect("127.0.0.1", broker.port)
    board.loop_start()
    try:
        sent = [f"event {i}".encode() for i in range(20)]
        for payload in sent:
            board.publish(topic("t-1", "events"), payload, qos=1).wait_for_publish(10)
        until(lambda: len(got["club-a"]) + len(got["club-b"]) == len(sent),
              "every event at one server or the other")
        assert got["club-a"] and got["club-b"]  # one board's events, split
        assert sorted(got["club-a"] + got["club-b"]) == sorted(sent)  # each once
    finally:
        for client in [*clients, board]:
            client.loop_stop()
            client.disconnect()


# ---- two hosts --------------------------------------------------------------------


@dataclass
class Host:
    """Where a server runs: a network namespace joined to this one by a veth pair
    (``prefix`` runs a command in it), or this host (no prefix)."""

    name: str
    prefix: list[str]
    broker_address: str  # the broker as this host reaches it
    link: str | None = None  # our end of the veth pair

    @classmethod
    def make(cls, name: str, index: int) -> Host:
        if os.geteuid() != 0 or shutil.which("ip") is None:
            return cls(name, [], "127.0.0.1")
        netns = f"masume-{os.getpid()}-{name}"
        ours, theirs = f"mv{os.getpid() % 100000}{name[-1]}", f"mp{os.getpid() % 100000}{name[-1]}"
        taken = subprocess.run(["ip", "-o", "-4", "addr"], capture_output=True, text=True).stdout
        rng = random.Random(os.getpid() * 10 + index)
        while True:  # a /30 nobody on this machine uses
            base = f"10.{rng.randrange(200, 250)}.{rng.randrange(256)}.{4 * rng.randrange(64)}"
            prefix3, last = base.rsplit(".", 1)
            here, there = f"{prefix3}.{int(last) + 1}", f"{prefix3}.{int(last) + 2}"
            if f" {here}/" not in taken and f" {there}/" not in taken:
                break
        steps = [["ip", "netns", "add", netns],
                 ["ip", "link", "add", ours, "type", "veth", "peer", "name", theirs],
                 ["ip", "link", "set", theirs, "netns", netns],
                 ["ip", "addr", "add", f"{here}/30", "dev", ours],
                 ["ip", "link", "set", ours, "up"],
                 ["ip", "netns", "exec", netns, "ip", "addr", "add", f"{there}/30", "dev", theirs],
                 ["ip", "netns", "exec", netns, "ip", "link", "set", theirs, "up"],
                 ["ip", "netns", "exec", netns, "ip", "link", "set", "lo", "up"]]
        host = cls(name, ["ip", "netns", "exec", netns], here, ours)
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True)
            if done.returncode != 0:
                host.remove()
                print(f"no network namespace ({' '.join(step)}: {done.stderr.strip()}): "
                      f"{name} is a process on this host", file=sys.stderr)
                return cls(name, [], "127.0.0.1")
        return host

    def remove(self) -> None:
        if self.prefix:
            subprocess.run(["ip", "netns", "delete", self.prefix[-1]], capture_output=True)
        if self.link:  # gone with the namespace, unless that was never made
            subprocess.run(["ip", "link", "delete", self.link], capture_output=True)


@pytest.fixture
def hosts() -> Iterator[list[Host]]:
    made = [Host.make(name, i) for i, name in enumerate(("host-a", "host-b"))]
    yield made
    for host in made:
        host.remove()


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh database on the local PostgreSQL (through its socket, which every
    network namespace reaches), dropped at the end."""
    psycopg = pytest.importorskip("psycopg")
    admin_url = f"postgresql://postgres@/postgres?host={PG_SOCKET}"
    name = f"masume_hall_{uuid.uuid4().hex[:12]}"
    try:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")
    except psycopg.OperationalError as exc:
        pytest.skip(f"no PostgreSQL at {PG_SOCKET}: {exc}")
    try:
        yield f"postgresql://postgres@/{name}?host={PG_SOCKET}"
    finally:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


def owner_of(unit: str, servers: list[str]) -> str:
    """The server a board goes to while all of ``servers`` live (ClubServer.preferred)."""
    return max(servers, key=lambda s: hashlib.sha256(f"{s}/{unit}".encode()).digest())


class Welcomes:
    """When each board answered a HELLO (a server shaking hands with it), from the
    board's own publishes."""

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def watch(self, sim, unit: str) -> None:
        def published(topic_: str, data_hex: str) -> None:
            if topic_.endswith("/events"):
                try:
                    welcome = c.decode_frame(bytes.fromhex(data_hex))[0] == c.WELCOME
                except (c.FrameError, ValueError):
                    return
                if welcome:
                    with self._lock:
                        self.times.setdefault(unit, []).append(time.monotonic())

        sim.net.on_publish = published

    def first_after(self, unit: str, moment: float) -> float | None:
        with self._lock:
            return next((t for t in self.times.get(unit, []) if t > moment), None)


def recorded(store: ClubStore, unit: str) -> list[str]:
    games = [g for g in store.games() if g["table"] == unit and g["active"]]
    text = store.record(games[-1]["id"]) if games else None
    return resume_game(text, "soccer-shogi").notations() if text else []


def test_a_killed_server_s_tables_move_to_the_other_within_5_s_and_nothing_is_lost(
        make_sim, hosts, postgres_url, tmp_path: Path):
    servers = ["club-a", "club-b"]
    # Four boards, two for each server while both live.
    candidates = [f"t-{i}" for i in range(1, 40)]
    units = ([u for u in candidates if owner_of(u, servers) == "club-a"][:2]
             + [u for u in candidates if owner_of(u, servers) == "club-b"][:2])
    port = free_port()
    listeners = sorted({"127.0.0.1", *(h.broker_address for h in hosts)})
    broker = Broker(tmp_path / "broker", port=port, config="".join(
        f"listener {port} {address}\n" for address in listeners)
        + "allow_anonymous true\nset_tcp_nodelay true\n").start()
    welcomes = Welcomes()
    sims, hands = {}, {}
    for unit in units:
        sims[unit] = make_sim(mqtt=broker.url, unit=unit)
        set_up(sims[unit])
        hands[unit] = Hands(sims[unit])
        welcomes.watch(sims[unit], unit)
    tables = tmp_path / "tables.toml"
    tables.write_text("".join(f'[tables.{u}]\ngame = "soccer-shogi"\n' for u in units))
    store = ClubStore(postgres_url)
    procs: dict[str, subprocess.Popen[str]] = {}
    logs = {}

    def serve(server: str, host: Host) -> None:
        logs[server] = open(tmp_path / f"{server}.log", "w")  # noqa: SIM115 (closed below)
        procs[server] = subprocess.Popen(
            [*host.prefix, sys.executable, "-m", "masume.cli", "club", "serve",
             "--broker", f"mqtt://{host.broker_address}:{port}", "--tables", str(tables),
             "--db", postgres_url, "--server-id", server, "--shared", "--no-web"],
            env=dict(os.environ, PYTHONUNBUFFERED="1"), stdout=logs[server],
            stderr=subprocess.STDOUT, text=True)

    def server_logs() -> str:
        return "\n".join(f"--- {s}:\n{(tmp_path / f'{s}.log').read_text()[-3000:]}"
                         for s in servers)

    def owners() -> dict[str, str]:
        return {u: s for u, (s, expires) in store.owners().items() if expires > time.time()}

    try:
        # Both known to each other before the boards are handed out, as in a hall
        # whose servers start before the doors open.
        for server in servers:
            store.heartbeat(server, 30)
        for server, host in zip(servers, hosts):
            serve(server, host)
        until(lambda: owners() == {u: owner_of(u, servers) for u in units}
              and all(sims[u].led_colours for u in units),
              "every table running at its server, every board lit")
        # Each board plays a move; each is acknowledged only once it is in the record.
        for unit in units:
            hands[unit].move()
        until(lambda: all(recorded(store, u) == hands[u].made for u in units),
              "the first moves in the record")

        gone = [u for u in units if owner_of(u, servers) == "club-a"]
        killed_at = time.monotonic()
        procs["club-a"].send_signal(signal.SIGKILL)
        procs["club-a"].wait()
        # A move on one of its boards while no server runs it: the board keeps it.
        hands[gone[0]].move()
        until(lambda: all(welcomes.first_after(u, killed_at) for u in gone),
              f"club-b shaking hands with {gone}:\n{server_logs()}")
        moved_in = max(welcomes.first_after(u, killed_at) - killed_at for u in gone)
        print(f"failover: {gone} run by club-b {moved_in:.2f} s after the SIGKILL "
              f"(lease {LEASE_S:g} s, renewed every {RENEW_S:g} s; hosts: "
              f"{'network namespaces' if hosts[0].prefix else 'processes'})")
        assert moved_in < FAILOVER_LIMIT_S, server_logs()
        until(lambda: owners() == dict.fromkeys(units, "club-b"), "club-b owning every board")

        # The games go on, at every table: one more move each.
        until(lambda: all(recorded(store, u) == hands[u].made for u in units),
              f"the move made while no server ran {gone[0]}")
        for unit in units:
            hands[unit].move()
        until(lambda: all(recorded(store, u) == hands[u].made for u in units),
              "every table's moves in the record after the failover")
        for unit in units:  # the same game went on: one per table
            assert len([g for g in store.games() if g["table"] == unit]) == 1
            assert len(hands[unit].made) == 2 + (unit == gone[0])
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        for fh in logs.values():
            fh.close()
        store.close()
        broker.stop()
