"""The club server: several simulated boards on a Mosquitto the test starts, one
game per table, every game saved before its events are acknowledged; unregistered and
malformed traffic ignored; the broker's ACLs keep each board to its own topics."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import re
import time
from pathlib import Path

import pytest
from masume.club.server import ClubServer, load_assignments, make_assignment
from masume.club.store import ClubStore
from waiting import HANG_S
from masume.games import load_rules
from masume.link.mqtt import new_client, topic

pytestmark = pytest.mark.slow


def wait_for(predicate, timeout: float = HANG_S) -> bool:
    """Whether ``predicate()`` came true; waits as long as it takes (HANG_S: only the
    guard against a hang, tests/waiting.py)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return bool(predicate())


def set_up(sim, game: str = "soccer-shogi") -> None:
    for square, pieces in load_rules(game).start().layout().items():
        for piece in pieces:
            sim.place(square, piece)


def play(sim, position, action) -> None:
    """A hand makes ``action`` on the simulated board."""
    before, after = position.layout(), position.apply(action).layout()
    for square in sorted(set(before) | set(after)):
        was, now = list(before.get(square, ())), list(after.get(square, ()))
        keep = 0
        while keep < min(len(was), len(now)) and was[keep] == now[keep]:
            keep += 1
        for _ in range(len(was) - keep):
            sim.lift(square)
            time.sleep(0.08)
    for square in sorted(set(before) | set(after)):
        was, now = list(before.get(square, ())), list(after.get(square, ()))
        keep = 0
        while keep < min(len(was), len(now)) and was[keep] == now[keep]:
            keep += 1
        for piece in now[keep:]:
            sim.place(square, piece)
            time.sleep(0.08)


def first_action(position):
    return sorted(position.legal_actions(), key=position.notation)[0]


class Hands:
    """A player's hands on one simulated board: each move the first legal action,
    and the moves made, in order."""

    def __init__(self, sim, game: str = "soccer-shogi") -> None:
        self.sim = sim
        self.position = load_rules(game).start()
        self.made: list[str] = []

    def move(self) -> None:
        action = first_action(self.position)
        play(self.sim, self.position, action)
        self.made.append(self.position.notation(action))
        self.position = self.position.apply(action)


def test_tables_file(tmp_path: Path):
    path = tmp_path / "tables.toml"
    path.write_text('[tables.table-1]\ngame = "soccer-shogi"\nplayers = ["Aiko", "Ben"]\n')
    tables = load_assignments(path)
    assert tables["table-1"].players == ("Aiko", "Ben")
    for bad in ('[tables."a/b"]\ngame = "soccer-shogi"\n', '[tables.t]\ngame = "chess"\n',
                '[tables.t]\nplayers = 3\n', "not toml [", '[tables.t]\ngame = "soccer-shogi"\nplayers = 4\n'):
        path.write_text(bad)
        with pytest.raises(ValueError):
            load_assignments(path)
    # A misspelt key is refused, where it is, with the key meant: it would otherwise
    # leave every table out, or the computer's level unasked for, in silence.
    for bad, said in [
            ('[[table]]\nid = "table-1"\ngame = "soccer-shogi"\n',
             "the top level: unknown key 'table' (did you mean 'tables'?)"),
            ('[tables.t]\ngame = "soccer-shogi"\ncomputer = "red"\nlevle = "club"\n',
             "line 4: table 't': unknown key 'levle' (did you mean 'level'?)")]:
        path.write_text(bad)
        with pytest.raises(ValueError, match=re.escape(f"{path}: {said}")):
            load_assignments(path)
    with pytest.raises(ValueError, match="table 't': unknown key 'player'"):
        make_assignment("t", {"game": "soccer-shogi", "player": ["Ann", "Bob"]})


def test_club_server_runs_every_table_and_survives_a_sigkill(broker, make_sim, tmp_path: Path):
    units = ["table-1", "table-2"]
    sims = {}
    for u in units:
        sims[u] = make_sim(mqtt=broker.url, unit=u)
        set_up(sims[u])
    intruder = make_sim(mqtt=broker.url, unit="stranger")  # not registered for the event
    tables = tmp_path / "tables.toml"
    tables.write_text("".join(f'[tables.{u}]\ngame = "soccer-shogi"\nplayers = ["A{i}", "B{i}"]\n'
                              for i, u in enumerate(units)))
    db = tmp_path / "club.db"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    cmd = [sys.executable, "-m", "masume.cli", "club", "serve", "--broker", broker.url,
           "--tables", str(tables), "--db", str(db), "--no-web"]
    server = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    store = ClubStore(db)
    rules = load_rules("soccer-shogi")
    try:
        def actions(unit):
            games = [g for g in store.games() if g["table"] == unit and g["active"]]
            record = store.record(games[0]["id"]) if games else None
            return record

        assert wait_for(lambda: len([g for g in store.games() if g["active"]]) == 2)
        # Each table plays its first move; the server records it and lights the board.
        position = rules.start()
        for u in units:
            action = first_action(position)
            play(sims[u], position, action)
        notation = position.notation(first_action(position))
        assert wait_for(lambda: all(notation in (actions(u) or "") for u in units))
        assert wait_for(lambda: all(sims[u].led_colours for u in units))
        # SIGKILL the server mid-game, make a move while it is away, start it again.
        server.send_signal(signal.SIGKILL)
        server.wait(10)
        position2 = position.apply(first_action(position))
        action2 = first_action(position2)
        play(sims["table-1"], position2, action2)
        server = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True)
        notation2 = position2.notation(action2)
        assert wait_for(lambda: notation2 in (actions("table-1") or ""))
        record = actions("table-1")
        assert record.count(notation) == 1 and record.count(notation2) == 1  # none lost, none doubled
        assert notation2 not in (actions("table-2") or "")
        assert len([g for g in store.games() if g["active"]]) == 2  # the same games went on
        assert not any(g["table"] == "stranger" for g in store.games())
        assert intruder.net.online
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            out, _ = server.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            out, _ = server.communicate()
        store.close()
    assert "stranger" in out and "not registered" in out


def _client(url_user: str, password: str | None, port: int, received: list | None = None):
    """A paho client; returns (client, connect reason or None on failure)."""
    import threading

    client = new_client(f"test-{url_user}-{time.monotonic_ns()}")
    if password is not None:
        client.username_pw_set(url_user, password)
    result: dict = {}
    done = threading.Event()

    def on_connect(c, userdata, flags, reason, properties=None):
        result["reason"] = reason
        done.set()

    client.on_connect = on_connect
    if received is not None:
        client.on_message = lambda c, u, m: received.append((m.topic, bytes(m.payload)))
    client.connect("127.0.0.1", port)
    client.loop_start()
    done.wait(5)
    return client, result.get("reason")


def test_broker_config_keeps_each_board_to_its_own_topics(tmp_path: Path):
    from masume.cli import main
    from mqtt_broker import ME, Broker, free_port

    port = free_port()
    out = tmp_path / "event"
    assert main(["club", "broker-config", "--boards", "table-1,table-2", "--servers", "club",
                 "--out", str(out), "--port", str(port), "--bind", "127.0.0.1", "--user", ME]) == 0
    import tomllib

    creds = tomllib.loads((out / "credentials.toml").read_text())
    conf = (out / "mosquitto.conf").read_text()
    assert "allow_anonymous false" in conf
    broker = Broker(tmp_path / "b", config=conf, port=port).start()
    clients = []
    try:
        seen: list = []
        server, reason = _client("club", creds["servers"]["club"], port, seen)
        clients.append(server)
        assert reason is not None and not reason.is_failure
        server.subscribe("masume/#", 1)
        b1_got: list = []
        b1, reason = _client("table-1", creds["boards"]["table-1"], port, b1_got)
        clients.append(b1)
        assert not reason.is_failure
        b1.subscribe([(topic("table-1", "commands"), 1), (topic("table-2", "commands"), 1),
                      (topic("table-2", "events"), 1)])
        time.sleep(0.3)
        # table-1 writes its own topics, and tries table-2's.
        for t in (topic("table-1", "events"), topic("table-1", "status"),
                  topic("table-2", "events"), topic("table-2", "status"), topic("table-1", "commands")):
            b1.publish(t, b"from-table-1", qos=1).wait_for_publish(2)
        server.publish(topic("table-1", "commands"), b"for-table-1", qos=1).wait_for_publish(2)
        server.publish(topic("table-2", "commands"), b"for-table-2", qos=1).wait_for_publish(2)
        server.publish(topic("table-2", "events"), b"table-2-event", qos=1).wait_for_publish(2)
        assert wait_for(lambda: (topic("table-1", "commands"), b"for-table-1") in b1_got)
        assert wait_for(lambda: (topic("table-1", "status"), b"from-table-1") in seen)
        time.sleep(0.5)
        from_b1 = {t for t, p in seen if p == b"from-table-1"}
        assert from_b1 == {topic("table-1", "events"), topic("table-1", "status")}
        assert {t for t, _ in b1_got} == {topic("table-1", "commands")}  # nothing of table-2's
        # Unknown clients and wrong passwords are refused.
        for user, password in (("stranger", "x"), ("table-2", creds["boards"]["table-1"]),
                               ("anon", None)):
            c, reason = _client(user, password, port)
            clients.append(c)
            assert reason is None or reason.is_failure
    finally:
        for c in clients:
            c.loop_stop()
            try:
                c.disconnect()
            except Exception:
                pass
        broker.stop()


def test_two_servers_split_the_boards_and_take_over(broker, make_sim, tmp_path: Path):
    units = ["t-1", "t-2", "t-3", "t-4"]
    sims = {}
    for u in units:
        sims[u] = make_sim(mqtt=broker.url, unit=u)
        set_up(sims[u])
    assignments = {u: make_assignment(u, {"game": "soccer-shogi"}) for u in units}
    db = tmp_path / "shared.db"
    stores = [ClubStore(db), ClubStore(db)]
    servers = [ClubServer(broker.url, stores[i], assignments, server_id=f"club-{i + 1}", shared=True)
               for i in range(2)]
    for s in servers:
        s.store.heartbeat(s.server_id, 30)  # both known before the boards are handed out
    for s in servers:
        s.start()
    try:
        expected = {u: next(s.server_id for s in servers if s.preferred(u)) for u in units}
        assert len(set(expected.values())) == 2  # these ids split these boards
        assert wait_for(lambda: {u: s.server_id for s in servers for u in s.tables} == expected)
        assert wait_for(lambda: all(s.tables[u].link.connected.is_set()
                                    for s in servers for u in s.tables), 20)
        # Each server asked the broker for its own boards' events only (and every
        # status), and got nothing else: every board sends a heartbeat a second.
        for s in servers:
            mine = {topic(u, "events") for u in units if expected[u] == s.server_id}
            assert s.hub.subscriptions == mine | {topic("+", "status")}
        time.sleep(2.5)
        assert [s.hub.stray for s in servers] == [0, 0]
        # club-1 stops: club-2 takes its boards (and their events), and their games go on.
        gone = [u for u in units if expected[u] == "club-1"]
        servers[0].close()
        assert wait_for(lambda: set(servers[1].tables) == set(units))
        assert servers[1].hub.subscriptions == ({topic(u, "events") for u in units}
                                               | {topic("+", "status")})
        unit = gone[0]
        position = load_rules("soccer-shogi").start()
        action = first_action(position)
        play(sims[unit], position, action)
        game_id = servers[1].tables[unit].game_id
        assert wait_for(lambda: position.notation(action) in (stores[1].record(game_id) or ""))
        assert len([g for g in stores[1].games() if g["table"] == unit]) == 1  # the same game
    finally:
        for s in servers:
            s.close()
        for st in stores:
            st.close()


def test_broker_config_with_tls(tmp_path: Path, make_sim):
    """--tls-port: a CA and a broker certificate; a board and the server connect
    over TLS with the CA, and the board's link works through it."""
    from masume.link import BoardSession
    from masume.link.mqtt import MqttHub
    from mqtt_broker import event_broker

    conf, broker = event_broker(tmp_path, ["table-1"], ["club"])
    assert (tmp_path / "event" / "tls" / "ca.crt").exists()
    hub = None
    session = None
    try:
        hub = MqttHub(conf.url("club", tls=True), "club-tls").start()
        assert hub.connected.is_set()
        sim = make_sim(mqtt=conf.url("table-1", tls=True), unit="table-1")
        session = BoardSession(hub.transport("table-1")).start()
        assert session.wait_connected(15)
        sim.place("C5", "ball")
        assert wait_for(lambda: session.readings.get("C5") == ("ball",))
    finally:
        if session:
            session.close()
        if hub:
            hub.close()
        broker.stop()


def test_sim_cli_on_mqtt_and_results_export(broker, tmp_path: Path, capsys):
    """`masume sim --mqtt URL --id ID` is a board the club server finds and runs;
    `masume club results` and `masume club export` read the event's database."""
    from masume.cli import main

    sim = subprocess.Popen([sys.executable, "-m", "masume.cli", "sim", "--board", "soccer-shogi",
                            "--mqtt", broker.url, "--id", "table-7", "--setup", "soccer-shogi"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True)
    db = tmp_path / "club.db"
    store = ClubStore(db)
    server = ClubServer(broker.url, store, {"table-7": make_assignment(
        "table-7", {"game": "soccer-shogi", "players": ["Ann", "Bob"]})}).start()
    try:
        assert sim.stdout.readline().startswith("port: mqtt://")
        assert wait_for(lambda: "table-7" in server.tables
                        and server.tables["table-7"].link.connected.is_set(), 30)
        sim.stdin.write("leds\n")
        sim.stdin.flush()
        assert wait_for(lambda: server.tables["table-7"].session.leds != {})
    finally:
        server.close()
        store.close()
        sim.stdin.write("quit\n")
        sim.stdin.flush()
        sim.wait(20)
    capsys.readouterr()
    assert main(["club", "results", "--db", str(db)]) == 0
    results = capsys.readouterr().out
    assert "table-7" in results and "Ann - Bob " in results  # the players, nothing else
    assert main(["club", "export", "--db", str(db), "--out", str(tmp_path / "records")]) == 0
    records = list((tmp_path / "records").glob("*.txt"))
    assert len(records) == 1 and "Ann" in records[0].read_text()


def _recorded(store: ClubStore, game_id: int) -> list[str]:
    from masume.club.server import resume_game

    text = store.record(game_id)
    return resume_game(text, "soccer-shogi").notations() if text else []


def test_actions_played_while_the_link_is_cut_are_recorded_exactly(broker, make_sim, tmp_path: Path):
    """A board's Wi-Fi is cut and the players go on: four actions (one of them
    read right only after a press of confirm) are made while the server hears
    nothing. When the link is back the board's journal delivers them in one
    burst; the events carry the board's time (protocol 2), so the server settles
    the board as it stood between them, and the record holds exactly those actions."""
    from masume.bench.club import plan_game

    plan = plan_game("soccer-shogi", 7, 16)[:5]
    assert any(step[0] == "press" for p in plan[1:] for step in p.steps)  # a confirm in the cut
    sim = make_sim(mqtt=broker.url, unit="cut-1")
    set_up(sim)
    store = ClubStore(tmp_path / "club.db")
    server = ClubServer(broker.url, store, {"cut-1": make_assignment("cut-1", {"game": "soccer-shogi"})})
    server.start()

    def do(planned) -> None:
        for kind, where, what in planned.steps:
            if kind == "lift":
                sim.lift(where)
            elif kind == "place":
                sim.place(where, what)
            else:
                sim.press(where)
            time.sleep(0.5)  # still for longer than the tracker's settle (0.35 s)

    try:
        assert wait_for(lambda: "cut-1" in server.tables
                        and server.tables["cut-1"].link.connected.is_set(), 30)
        table = server.tables["cut-1"]
        time.sleep(1.0)  # the snapshot is in
        do(plan[0])
        assert wait_for(lambda: _recorded(store, table.game_id) == [plan[0].notation])
        sim.unplug()  # the Wi-Fi is gone: the broker publishes the board's last will
        for planned in plan[1:]:
            do(planned)
        assert wait_for(lambda: not table.link.connected.is_set())
        assert _recorded(store, table.game_id) == [plan[0].notation]  # nothing came through
        sim.replug()
        want = [p.notation for p in plan]
        assert wait_for(lambda: _recorded(store, table.game_id) == want), (
            _recorded(store, table.game_id), want)
        time.sleep(1.0)
        assert _recorded(store, table.game_id) == want  # and nothing more
        assert table.session.tracker.view.state == "in-sync"
    finally:
        server.close()
        store.close()


def test_two_quick_actions_resent_to_the_next_server_are_recorded_as_played(
        broker, make_sim, tmp_path: Path):
    """The club bench's failover on one host: the server that ran a table is gone,
    the players make their turn's two actions within one settle (the kick, then the
    step: the rules list the step first), the next server takes the table up from
    the store, and the board resends its journal in one burst, then a snapshot.
    Both orders end in the same position; the record holds the order played.

    The first server stops only once it has read the board and committed where the
    board's stream stood (the ``Link`` header): a server stopped before its first
    snapshot leaves no such header, and the next one then meets the board as for the
    first time, takes its word for where it stands (the journal is not resent) and
    reads the two actions from one snapshot, in the rules' order. The tracker's view
    says "in-sync" before anything is read, so it alone did not tell (the test failed
    3 of 4 runs beside busy-machine so)."""
    sim = make_sim(mqtt=broker.url, unit="quick-1")
    set_up(sim)
    store = ClubStore(tmp_path / "club.db")
    assignments = {"quick-1": make_assignment("quick-1", {"game": "soccer-shogi"})}

    def running(server: ClubServer) -> bool:
        table = server.tables.get("quick-1")
        return (table is not None and table.link.connected.is_set()
                and table.session.tracker.view.state == "in-sync")

    def board_read_and_saved() -> bool:
        active = store.active_game("quick-1")
        return active is not None and "Link" in active[2]

    first = ClubServer(broker.url, store, assignments)
    first.start()
    try:
        assert wait_for(lambda: running(first) and board_read_and_saved(), 30)
        game_id = first.tables["quick-1"].game_id
    finally:
        first.close()
    position = load_rules("soccer-shogi").start()
    played = ["b(C5-E3)f", "D7-D6"]
    for text in played:  # nobody runs the table: the board keeps the events
        action = position.parse_action(text)
        play(sim, position, action)
        position = position.apply(action)
    second = ClubServer(broker.url, store, assignments)
    second.start()
    try:
        assert wait_for(lambda: _recorded(store, game_id) == played, 30), _recorded(store, game_id)
        assert wait_for(lambda: running(second), 10)
        assert second.tables["quick-1"].game_id == game_id  # the same game, taken up
        assert _recorded(store, game_id) == played  # and nothing more
    finally:
        second.close()
        store.close()


def test_a_second_server_on_the_same_database_is_refused(broker, tmp_path: Path):
    """`masume club serve` started twice on one database (a second window, a service
    started again by hand): the second would run the same tables into the same games
    and push the first off the broker (the same client id). It is refused, saying why,
    and the first plays on; once the first stops another starts; after one is killed,
    another starts once the dead one's heartbeat has run out."""
    from masume.club.server import LEASE_S, ServerRunning

    tables = tmp_path / "tables.toml"
    tables.write_text('[tables.table-1]\ngame = "soccer-shogi"\nplayers = ["A", "B"]\n')
    db = tmp_path / "club.db"
    command = [sys.executable, "-m", "masume.cli", "club", "serve", "--broker", broker.url,
               "--tables", str(tables), "--db", str(db), "--no-web", "--workers", "0"]
    first = subprocess.Popen(command, stdout=subprocess.PIPE,
                             stderr=open(tmp_path / "first.log", "w"), text=True)
    try:
        assert first.stdout.readline().startswith("club server club: 1 tables")
        second = subprocess.run(command, capture_output=True, text=True, timeout=HANG_S)
        assert second.returncode == 2, second.stderr
        assert ("error: another club server (club) is running on this database: stop it "
                "first, or run every server with --shared, each with its own --server-id"
                in second.stderr)
        assert first.poll() is None  # the first plays on
        assert ClubStore(db).live_servers() == ["club"]
    finally:
        first.terminate()
        first.wait(HANG_S)
    assert ClubStore(db).live_servers() == []  # it left: the next starts at once
    store = ClubStore(db)
    assignments = {"table-1": make_assignment("table-1", {"game": "soccer-shogi"})}
    server = ClubServer(broker.url, store, assignments).start()
    server.close()
    # A server killed: its last heartbeat stands for LEASE_S, then another may start.
    store.heartbeat("club", LEASE_S)
    server = ClubServer(broker.url, store, assignments).start()
    try:
        assert store.live_servers() == ["club"]
        with pytest.raises(ServerRunning, match=r"another club server \(club\)"):
            ClubServer(broker.url, ClubStore(db), assignments).start()
    finally:
        server.close()


def test_shared_and_unshared_servers_do_not_mix(broker, tmp_path: Path):
    """An unshared server runs every table it is given; beside shared servers (which
    share the tables out by leases it does not take) both would run the same tables.
    Each is refused beside the other, whatever their names."""
    from masume.club.server import ServerRunning

    db = tmp_path / "club.db"
    assignments = {"table-1": make_assignment("table-1", {"game": "soccer-shogi"})}
    shared = ClubServer(broker.url, ClubStore(db), assignments, server_id="club-1",
                        shared=True).start()
    try:
        with pytest.raises(ServerRunning, match=r"another club server \(club-1\)"):
            ClubServer(broker.url, ClubStore(db), assignments).start()
    finally:
        shared.close()
    unshared = ClubServer(broker.url, ClubStore(db), assignments).start()
    try:
        assert ClubStore(db).live_servers(shared=False) == ["club"]
        with pytest.raises(ServerRunning, match=r"another club server \(club\)"):
            ClubServer(broker.url, ClubStore(db), assignments, server_id="club-2",
                       shared=True).start()
    finally:
        unshared.close()
