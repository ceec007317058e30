"""The event's broker is safe by default (`masume club broker-config`), tried on a
real Mosquitto started with the generated configuration on free loopback ports:
a board's credentials cannot take another board's client id, an oversize
publish cuts its sender off and leaves the club server's memory alone, TLS only
means no plain port, the broker's secrets are 0600 and read by it as its own
user, and no password is ever on a command line (`ps`, /proc/PID/cmdline).
The ACLs themselves: tests/test_club.py."""

from __future__ import annotations

import logging
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import tomllib
from pathlib import Path

import pytest
from mqtt_broker import ME, event_broker, free_port
from test_club import first_action, play, wait_for
from waiting import HANG_S

from masume.club.broker import MAX_PACKET, write_broker_config
from masume.club.store import ClubStore
from masume.link.mqtt import (MAX_MESSAGE, PASSWORD_ENV, BrokerUrl, MqttHub, new_client,
                              read_password, topic)
from masume.games import load_rules

pytestmark = pytest.mark.slow

FLOOD = 50 * 1024 * 1024  # one hostile publish: 50 MB
#: What the hub is sent past a frame's size on a broker without limits: its check is on
#: the length before any copy, so a few MB tell what 50 do (the RSS test above keeps 50
#: MB, where the size is what it measures); 50 MB took 15 s of paho reading here.
HUB_FLOOD = 5 * 1024 * 1024


class Client:
    """A paho client of the test's own (TLS when the URL says so), its connection's
    fate and everything it receives."""

    def __init__(self, url: str, client_id: str, subscribe: str | None = None) -> None:
        self.received: list[tuple[str, bytes]] = []
        self.connected = threading.Event()
        self.subscribed = threading.Event()  # the broker's SUBACK came: its messages follow
        self.disconnected = threading.Event()
        self.reason = None
        self.client = new_client(client_id)
        self.client.reconnect_delay_set(60, 60)  # cut off means gone: no second try here
        parsed = BrokerUrl.parse(url)
        parsed.configure(self.client)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = lambda *_: self.disconnected.set()
        self.client.on_subscribe = lambda *_: self.subscribed.set()
        self.client.on_message = lambda c, u, m: self.received.append((m.topic, bytes(m.payload)))
        self._subscribe = subscribe
        self.client.connect(parsed.host, parsed.port, keepalive=30)
        self.client.loop_start()
        assert self.connected.wait(10), f"no CONNACK for {client_id}"

    def _on_connect(self, client, userdata, flags, reason, properties=None) -> None:
        self.reason = reason
        if not reason.is_failure and self._subscribe:
            client.subscribe(self._subscribe, 1)
        self.connected.set()

    def publish(self, topic_: str, payload: bytes) -> None:
        self.client.publish(topic_, payload, qos=1)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def rss(pid: int) -> int:
    """Resident memory of a process, bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for {pid}")


def mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_the_generated_configuration(tmp_path: Path):
    """Each listener forces the client id to the user name; packets are bounded by
    the protocol's largest frame; TLS asked for means TLS only; every secret is 0600
    and a run over an older folder (its key left readable by all) closes it."""
    event = tmp_path / "event"
    conf = write_broker_config(event, ["table-1", "table-2"], ["club"], port=1884,
                               tls_port=8884, user=ME)
    text = conf.conf.read_text()
    listeners = [line for line in text.splitlines() if line.startswith("listener ")]
    assert listeners == ["listener 8884 0.0.0.0"] and conf.port is None
    assert text.count("use_username_as_clientid true") == 1
    # Before the first listener only global options: one of a listener's would open 1883.
    assert text.index("use_username_as_clientid") > text.index("listener ")
    assert f"max_packet_size {MAX_PACKET}" in text
    assert MAX_MESSAGE + 100 < MAX_PACKET < 3 * MAX_MESSAGE
    for option in ("allow_anonymous false", "max_qos 1", "max_connections ",
                   "max_queued_messages ", "persistent_client_expiration ", "tls_version tlsv1.2"):
        assert option in text
    assert conf.url("table-1").startswith("mqtts://table-1:")  # no plain listener to name
    for private in ("passwords", "acl", "credentials.toml", "tls/server.key", "tls/ca.key"):
        assert mode(event / private) == 0o600, private
    assert mode(event / "data") == 0o700
    assert not (event / "tls" / "server.csr").exists()

    (event / "tls" / "server.key").chmod(0o644)
    again = write_broker_config(event, ["table-1", "table-2"], ["club"], port=1884,
                                tls_port=8884, also_plain=True, user=ME)
    assert mode(event / "tls" / "server.key") == 0o600
    assert again.boards == conf.boards  # the passwords issued are kept
    text = again.conf.read_text()
    listeners = [line for line in text.splitlines() if line.startswith("listener ")]
    assert listeners == ["listener 1884 0.0.0.0", "listener 8884 0.0.0.0"]
    assert text.count("use_username_as_clientid true") == 2
    assert again.url("table-1").startswith("mqtt://table-1:")


def test_broker_config_command_line(tmp_path: Path, capsys):
    from masume.cli import main

    base = ["club", "broker-config", "--boards", "table-1", "--out", str(tmp_path / "event"),
            "--user", ME]
    assert main([*base, "--tls-port", "8883", "--port", "1883"]) == 2
    assert "--also-plain" in capsys.readouterr().err
    assert main([*base, "--tls-port", "8883"]) == 0
    assert "TLS on 8883)" in capsys.readouterr().out
    assert main([*base, "--tls-port", "8883", "--port", "1884", "--also-plain"]) == 0
    assert "plain on 1884, TLS on 8883)" in capsys.readouterr().out
    assert main([*base]) == 0
    out = capsys.readouterr().out
    assert "plain on 1883)" in out and "no TLS" in out
    assert main([*base, "--user", "no-such-user-here"]) == 2
    assert "no user 'no-such-user-here'" in capsys.readouterr().err
    if os.geteuid() == 0:  # as root the broker is `mosquitto`, and pytest's folders are root's
        assert main(base[:-2]) == 0
        assert "warning: Mosquitto, as mosquitto, cannot enter" in capsys.readouterr().out


def test_tls_only_broker_reads_its_own_secrets_and_keeps_packets_to_a_frame():
    """As root the generated broker becomes `mosquitto` before it reads its
    password, ACL and key files, so they are that user's, 0600 (as anyone else,
    the files and the broker are theirs). Nothing listens in plain; the largest
    frame on the longest topic passes; one byte more than the packet limit cuts
    its sender off."""
    long_unit = "t" * 64
    # pytest's own folders are root's alone: this one lets the broker's user in.
    folder = Path(tempfile.mkdtemp(prefix="masume-broker-"))
    folder.chmod(0o755)
    clients: list[Client] = []
    try:
        plain = free_port()
        conf, broker = event_broker(folder, ["table-1", long_unit], ["club"], port=plain, user=None)
        try:
            owner = pwd.getpwnam(conf.user).pw_uid
            for private in ("passwords", "acl", "tls/server.key"):
                path = conf.folder / private
                assert (mode(path), path.stat().st_uid) == (0o600, owner), private
            assert conf.user == ("mosquitto" if os.geteuid() == 0 else ME)
            assert conf.port is None
            with pytest.raises(OSError):  # nothing listens in plain
                socket.create_connection(("127.0.0.1", plain), timeout=2)
            listeners = [line for line in conf.conf.read_text().splitlines()
                         if line.startswith("listener ")]
            assert listeners == [f"listener {conf.tls_port} 127.0.0.1"]

            server = Client(conf.url("club"), "watch", subscribe="masume/#")
            board = Client(conf.url(long_unit), "board")
            clients += [server, board]
            assert not server.reason.is_failure and not board.reason.is_failure
            assert server.subscribed.wait(HANG_S), "no SUBACK for the server's subscription"
            largest = bytes([1]) * MAX_MESSAGE
            board.publish(topic(long_unit, "events"), largest)
            assert wait_for(lambda: (topic(long_unit, "events"), largest) in server.received)
            board.publish(topic(long_unit, "events"), b"x" * MAX_PACKET)
            assert board.disconnected.wait(10)
            assert broker.proc.poll() is None
        finally:
            broker.stop()
        # No error of the broker's (could not save to data/, say). The readiness probe of
        # Broker.start connects and closes before a TLS handshake: where Mosquitto had
        # begun to read it, it logs "unexpected eof": that client's, not an error.
        errors = [line for line in broker.log.read_text().splitlines()
                  if "Error" in line and "unexpected eof while reading" not in line]
        assert errors == []
    finally:
        for c in clients:
            c.close()
        shutil.rmtree(folder, ignore_errors=True)


def test_broker_passwords_come_from_a_file_or_the_environment(tmp_path: Path, caplog):
    url = "mqtts://club@broker.lan:8883?ca=/event/tls/ca.crt"
    creds = tmp_path / "credentials.toml"
    creds.write_text('[boards]\n"table-1" = "b-secret"\n\n[servers]\n"club" = "s-secret"\n')
    creds.chmod(0o600)
    assert BrokerUrl.from_command_line(url, creds, {}).password == "s-secret"
    assert BrokerUrl.from_command_line(url, None, {PASSWORD_ENV: "e-secret"}).password == "e-secret"
    alone = tmp_path / "club.pw"
    alone.write_text("f-secret\n")
    alone.chmod(0o644)
    with caplog.at_level(logging.WARNING, "masume.link.mqtt"):
        assert read_password(alone, "club") == "f-secret"
    assert "can be read by other users" in caplog.text
    assert "s-secret" not in repr(BrokerUrl.from_command_line(url, creds, {}))
    assert BrokerUrl.from_command_line("mqtt://127.0.0.1:1883", None, {}).username is None
    for bad_url, password_file, environ, says in (
            ("mqtt://club:s3cret@broker.lan:1883", None, {}, "--password-file FILE"),
            (url, None, {}, "no password for broker user club"),
            ("mqtt://broker.lan", creds, {}, "names no user"),
            ("mqtt://stranger@broker.lan", creds, {}, "no password for stranger"),
            (url, tmp_path / "missing", {}, "password file")):
        with pytest.raises(ValueError, match=says) as refused:
            BrokerUrl.from_command_line(bad_url, password_file, environ)
        assert "s3cret" not in str(refused.value)


@pytest.mark.parametrize("command", [
    ["club", "serve", "--tables", "tables.toml", "--no-web", "--broker"],
    ["sim", "--board", "soccer-shogi", "--id", "table-1", "--mqtt"],
])
def test_a_password_on_the_command_line_is_refused(command, tmp_path: Path):
    done = subprocess.run([sys.executable, "-m", "masume.cli", *command,
                           "mqtt://club:s3cret@127.0.0.1:1"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "--password-file" in done.stderr and PASSWORD_ENV in done.stderr
    assert "s3cret" not in done.stderr + done.stdout


class SimProcess:
    """`masume sim --mqtt` as a user runs it: commands on its stdin, the hands of
    test_club.play."""

    def __init__(self, args: list[str], env: dict, log: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "masume.cli", "sim", *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=open(log, "w"), text=True, env=env)
        self.port = self.proc.stdout.readline()

    def command(self, line: str) -> str:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        assert answer.startswith("ok"), answer
        return answer

    def lift(self, square: str) -> None:
        self.command(f"lift {square}")

    def place(self, square: str, piece: str) -> None:
        self.command(f"place {square} {piece}")

    def close(self) -> None:
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
            self.proc.wait(20)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


def test_a_hostile_board_neither_takes_another_ones_place_nor_floods_the_server(tmp_path: Path):
    """An event as its organiser runs it: the generated TLS-only broker, `masume
    club serve` with its password from credentials.toml, two `masume sim --mqtt`
    boards with theirs from the environment and from a file: no password in any
    command line. Then table-2's credentials are stolen: with table-1's client id
    they push nobody off (table-1 plays on, its status never goes offline), and
    three 50 MB publishes cut the thief off without growing the server."""
    conf, broker = event_broker(tmp_path, ["table-1", "table-2"], ["club", "watch"])
    tables = tmp_path / "tables.toml"
    tables.write_text("".join(f'[tables.{u}]\ngame = "soccer-shogi"\nplayers = ["A", "B"]\n'
                              for u in ("table-1", "table-2")))
    creds = conf.folder / "credentials.toml"
    secrets = tomllib.loads(creds.read_text())
    passwords = [*secrets["boards"].values(), *secrets["servers"].values()]
    table_2_pw = tmp_path / "table-2.pw"
    table_2_pw.write_text(secrets["boards"]["table-2"] + "\n")
    table_2_pw.chmod(0o600)

    def url(user: str) -> str:
        return f"mqtts://{user}@127.0.0.1:{conf.tls_port}?ca={conf.ca}"

    env = {k: v for k, v in os.environ.items() if k != PASSWORD_ENV}
    env["PYTHONUNBUFFERED"] = "1"
    db = tmp_path / "club.db"
    server = subprocess.Popen(
        [sys.executable, "-m", "masume.cli", "club", "serve", "--broker", url("club"),
         "--password-file", str(creds), "--tables", str(tables), "--db", str(db), "--no-web"],
        env=env, stdout=subprocess.PIPE, stderr=open(tmp_path / "server.log", "w"), text=True)
    sims: dict[str, SimProcess] = {}
    watch = thief = None
    store = ClubStore(db)
    try:
        assert server.stdout.readline().startswith("club server club: 2 tables")
        sims["table-1"] = SimProcess(
            ["--board", "soccer-shogi", "--mqtt", url("table-1"), "--id", "table-1",
             "--setup", "soccer-shogi"], {**env, PASSWORD_ENV: secrets["boards"]["table-1"]},
            tmp_path / "sim-1.log")
        sims["table-2"] = SimProcess(
            ["--board", "soccer-shogi", "--mqtt", url("table-2"), "--id", "table-2",
             "--password-file", str(table_2_pw), "--setup", "soccer-shogi"], env,
            tmp_path / "sim-2.log")
        assert all(s.port.startswith("port: mqtt://") for s in sims.values())
        watch = Client(conf.url("watch"), "watch", subscribe="masume/#")

        # Nobody's password is on a command line: /proc/PID/cmdline, and ps as anyone sees it.
        pids = [server.pid] + [s.proc.pid for s in sims.values()]
        shown = subprocess.run(["ps", "-ww", "-o", "args=", "-p", ",".join(map(str, pids))],
                               capture_output=True, text=True, check=True).stdout
        assert shown.count("masume.cli") == 3
        for pid in pids:
            shown += Path(f"/proc/{pid}/cmdline").read_bytes().decode()
        assert not [p for p in passwords if p in shown]

        def moves(unit: str) -> str:
            games = [g for g in store.games() if g["table"] == unit and g["active"]]
            return (store.record(games[0]["id"]) or "") if games else ""

        assert wait_for(lambda: ("masume/table-1/status", b"online") in watch.received)
        rules = load_rules("soccer-shogi")
        position = rules.start()
        action = first_action(position)
        play(sims["table-1"], position, action)
        assert wait_for(lambda: position.notation(action) in moves("table-1"))
        server_before, broker_before = rss(server.pid), rss(broker.proc.pid)
        seen = len(watch.received)  # from here on table-1 is online throughout

        def table_1_went_offline() -> bool:
            return ("masume/table-1/status", b"offline") in watch.received[seen:]

        # table-2's credentials under table-1's client ids: the broker makes the id
        # "table-2", so table-1 stays on (its last will would say "offline").
        for client_id in ("masume-board-table-1", "table-1"):
            thief = Client(conf.url("table-2"), client_id)
            assert not thief.reason.is_failure
            thief.publish(topic("table-1", "events"), b"not mine")  # the ACL drops it
            thief.publish(topic("table-2", "events"), client_id.encode())
            assert wait_for(lambda: ("masume/table-2/events", client_id.encode()) in watch.received)
            thief.close()
        assert not table_1_went_offline()
        assert ("masume/table-1/events", b"not mine") not in watch.received

        # Three 50 MB publishes (events and status): each cuts the thief off.
        flood = bytes(FLOOD)
        for kind in ("events", "events", "status"):
            thief = Client(conf.url("table-2"), "flood")
            thief.publish(topic("table-2", kind), flood)
            assert thief.disconnected.wait(30)
            thief.close()
        del flood

        position = position.apply(action)
        action = first_action(position)
        play(sims["table-1"], position, action)  # and table-1 plays on
        assert wait_for(lambda: position.notation(action) in moves("table-1"))
        assert not table_1_went_offline()
        server_growth = rss(server.pid) - server_before
        broker_growth = rss(broker.proc.pid) - broker_before
        print(f"RSS growth over 3 x 50 MB: server {server_growth / 1e6:.1f} MB, "
              f"broker {broker_growth / 1e6:.1f} MB")
        assert server_growth < 20e6 and broker_growth < 20e6
        assert server.poll() is None
    finally:
        for c in (watch, thief):
            if c is not None:
                c.close()
        for s in sims.values():
            s.close()
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        store.close()
        broker.stop()


def test_the_hub_drops_what_no_frame_can_be(broker, make_sim, caplog, monkeypatch):
    """Even on a broker without limits (the tests' anonymous one), the club server's
    hub drops a message longer than a frame, a status other than online/offline, and
    the status of a board beyond the number it keeps, before it copies, queues or
    decodes them; it counts and logs each kind."""
    from masume.link import BoardSession, mqtt

    hub = MqttHub(broker.url, "club-test").start()
    sim = make_sim(mqtt=broker.url, unit="table-1")
    transport = hub.transport("table-1")
    session = BoardSession(transport).start()
    rogue = Client(broker.url, "rogue")
    try:
        assert session.wait_connected(15)
        assert hub.malformed == 0
        with caplog.at_level(logging.WARNING, "masume.link.mqtt"):
            rogue.publish(topic("table-1", "events"), bytes(MAX_MESSAGE + 1))
            rogue.publish(topic("table-1", "events"), bytes(HUB_FLOOD))
            rogue.publish(topic("table-1", "status"), b"x" * HUB_FLOOD)
            assert wait_for(lambda: hub.dropped == 2 and hub.malformed == 1)
        # The first of each kind is logged (then the 10th, the 100th, ...).
        assert f"dropping a {MAX_MESSAGE + 1}-byte message from table-1" in caplog.text
        assert "ignoring status 'xxxx" in caplog.text
        assert hub.status["table-1"] == "online"
        monkeypatch.setattr(mqtt, "UNIT_LIMIT", len(hub.status))
        rogue.publish(topic("made-up-1", "status"), b"online")
        assert wait_for(lambda: hub.dropped == 3)
        assert "made-up-1" not in hub.status
        sim.place("C5", "ball")  # the board plays on
        assert wait_for(lambda: session.readings.get("C5") == ("ball",))
    finally:
        rogue.close()
        session.close()
        hub.close()
