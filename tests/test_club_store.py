"""The club's storage on SQLite and on PostgreSQL (the local server, database
``test``, each run in a schema of its own): the same behaviour on both."""

from __future__ import annotations

import os
import socket
import time
import uuid

import pytest
from masume.club.store import ClubStore
from masume.link import BoardEvent

PG = os.environ.get("MASUME_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def _pg_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 5432), timeout=1):
            return True
    except OSError:
        return False


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request, tmp_path):
    if request.param == "sqlite":
        yield str(tmp_path / "club.db")
        return
    if not _pg_up():
        pytest.skip("no PostgreSQL on 127.0.0.1:5432")
    psycopg = pytest.importorskip("psycopg")
    schema = f"masume_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{PG}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(PG, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")


def test_store_round_trip(store_url):
    store = ClubStore(store_url)
    try:
        gid = store.new_game("table-1", "soccer-shogi", {"Blue": "Ann"})
        assert store.active_game("table-1") == (gid, "soccer-shogi", {"Blue": "Ann"}, None)
        # A save: the log lines of the events taken and the record, in one transaction.
        events = [BoardEvent(seq=1, type="square", square="C5", reading=("ball",), ms=61250),
                  BoardEvent(seq=2, type="snapshot", readings={"C5": ("ball",), "A1": ()})]
        log = [(1.5, "board", e.to_dict()) for e in events]
        log.append((2.0, "tracker", {"pushed": ["C5-D5"]}))
        record = '[Game "soccer-shogi"]\n[Link "boot=77 seq=2"]\nC5-D5\n'
        store.save_game(gid, record, {"Blue": "Ann", "Link": "boot=77 seq=2"}, None, log)
        assert store.record(gid) == record
        assert store.active_game("table-1")[2]["Link"] == "boot=77 seq=2"
        entries = store.log_entries(gid)
        assert [e["kind"] for e in entries] == ["board", "board", "tracker"]
        assert entries[0]["square"] == "C5" and entries[2]["pushed"] == ["C5-D5"]
        # A new game for the table ends the old one.
        gid2 = store.new_game("table-1", "shogi-soccer", {})
        assert [g["active"] for g in store.games()] == [False, True]
        assert store.active_game("table-1")[0] == gid2
        # Leases: one owner at a time; a lapsed lease can be taken.
        assert store.claim("table-1", "club-1", 30)
        assert not store.claim("table-1", "club-2", 30)
        assert store.claim("table-1", "club-1", -1)  # renewed, already lapsed
        assert store.claim("table-1", "club-2", 30)
        store.heartbeat("club-2", 30)
        assert store.live_servers() == ["club-2"]
        store.leave("club-2")
        assert store.live_servers() == [] and store.owners() == {}
    finally:
        store.close()


@pytest.mark.slow
def test_club_server_on_each_database(store_url, broker, make_sim):
    from masume.club.server import ClubServer, make_assignment
    from masume.games import load_rules
    from test_club import first_action, play, set_up, wait_for

    sim = make_sim(mqtt=broker.url, unit="table-9")
    set_up(sim)
    store = ClubStore(store_url)
    server = ClubServer(broker.url, store, {"table-9": make_assignment("table-9", {"game": "soccer-shogi"})})
    server.start()
    try:
        assert wait_for(lambda: "table-9" in server.tables
                        and server.tables["table-9"].link.connected.is_set(), 30)
        position = load_rules("soccer-shogi").start()
        action = first_action(position)
        play(sim, position, action)
        gid = server.tables["table-9"].game_id
        assert wait_for(lambda: position.notation(action) in (store.record(gid) or ""))
        assert any(e["kind"] == "board" for e in store.log_entries(gid))
    finally:
        server.close()
        store.close()


#: The first layout, as databases made before the layout had versions hold it.
FIRST_LAYOUT = """
CREATE TABLE games (
    id INTEGER PRIMARY KEY AUTOINCREMENT, table_id TEXT NOT NULL, game TEXT NOT NULL,
    headers TEXT NOT NULL, record TEXT, started REAL NOT NULL, updated REAL NOT NULL,
    result TEXT, active INTEGER NOT NULL DEFAULT 1);
CREATE TABLE log (
    id INTEGER PRIMARY KEY AUTOINCREMENT, game_id INTEGER NOT NULL, t REAL NOT NULL,
    kind TEXT NOT NULL, data TEXT NOT NULL);
CREATE TABLE owners (unit TEXT PRIMARY KEY, server TEXT NOT NULL, expires REAL NOT NULL);
CREATE TABLE servers (server TEXT PRIMARY KEY, expires REAL NOT NULL);
INSERT INTO games (table_id, game, headers, record, started, updated)
    VALUES ('table-1', 'soccer-shogi', '{"Blue": "Ann"}', NULL, 1.0, 1.0);
"""


def _run_sql(url: str, sql: str) -> None:
    from masume.club.store import _postgres

    if url.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(url, autocommit=True) as db:
            for statement in filter(str.strip, _postgres(sql).split(";")):
                db.execute(statement)
    else:
        import sqlite3

        db = sqlite3.connect(url)
        db.executescript(sql)
        db.commit()
        db.close()


def test_an_old_database_is_upgraded_on_open(store_url):
    """A database of the first layout, from before the versions: opened, it gets the
    versions and the later migrations, and keeps its games."""
    from masume.club.store import SCHEMA_VERSION

    _run_sql(store_url, FIRST_LAYOUT)
    store = ClubStore(store_url)
    try:
        assert store.schema_version() == SCHEMA_VERSION >= 2
        assert store.active_game("table-1") == (1, "soccer-shogi", {"Blue": "Ann"}, None)
        gid = store.new_game("table-2", "soccer-shogi", {})
        assert store.active_game("table-2")[0] == gid
    finally:
        store.close()
    again = ClubStore(store_url)  # opened again: nothing to do, nothing lost
    try:
        assert again.schema_version() == SCHEMA_VERSION
        assert again.active_game("table-1")[1] == "soccer-shogi"
    finally:
        again.close()


def test_a_database_newer_than_the_code_is_refused(store_url):
    from masume.club.store import SCHEMA_VERSION, NewerDatabase

    ClubStore(store_url).close()
    _run_sql(store_url, f"UPDATE schema_version SET version = {SCHEMA_VERSION + 1}")
    with pytest.raises(NewerDatabase, match=f"version {SCHEMA_VERSION + 1}, newer than"):
        ClubStore(store_url)


def test_saves_that_come_during_a_commit_are_committed_together(store_url):
    """Group commit: saves that arrive while a commit is under way wait for it and
    then go in one transaction; each save_game returns only once its save is
    committed, and a save that fails for a reason of its own fails alone."""
    import threading
    import time

    store = ClubStore(store_url)
    games = [store.new_game(f"t{i}", "soccer-shogi", {"Table": f"t{i}"}) for i in range(4)]
    errors: dict[int, Exception] = {}

    def save(k: int) -> None:
        try:
            if k == 3:  # a save whose own statement is wrong
                store._write_grouped([("UPDATE no_such_table SET x = 1", ())])
            else:
                store.save_game(games[k], f"record {k}", {"Table": f"t{k}"}, None,
                                [(0.0, "event", {"k": k})])
        except Exception as exc:  # noqa: BLE001 (looked at below)
            errors[k] = exc

    before = store.group_commits
    with store._lock:  # a commit under way: the first save's waits for the lock
        first = threading.Thread(target=save, args=(0,))
        first.start()
        while not store._committing:
            time.sleep(0.01)
        others = [threading.Thread(target=save, args=(k,)) for k in (1, 2, 3)]
        for t in others:
            t.start()
        while len(store._waiting) < 3:
            time.sleep(0.01)
    for t in [first, *others]:
        t.join(30)
    assert store.group_commits - before == 2  # the first alone, then the three together
    assert set(errors) == {3}
    for k in range(3):
        assert store.record(games[k]) == f"record {k}"
        assert [e["k"] for e in store.log_entries(games[k])] == [k]
    store.close()


def test_renew_extends_every_lease_a_server_holds_and_says_which(store_url):
    """One statement renews a server's leases (ClubServer's leases thread, every
    second); a unit another server took once the lease ran out is not among them."""
    a, b = ClubStore(store_url), ClubStore(store_url)
    try:
        assert a.claim("t-1", "club-a", 30) and a.claim("t-2", "club-a", 30)
        assert not b.claim("t-1", "club-b", 30)  # a live lease is kept
        assert a.renew("club-a", 30) == {"t-1", "t-2"}
        server, expires = a.owner("t-1")
        assert server == "club-a" and expires > time.time() + 20
        assert a.owner("t-9") is None
        a.renew("club-a", -1)  # as if club-a had stopped renewing: both run out
        assert b.claim("t-1", "club-b", 30)  # taken over
        assert a.renew("club-a", 30) == {"t-2"}  # t-1 is gone: club-a stops its table
        assert b.renew("club-b", 30) == {"t-1"}
        assert b.owner("t-1")[0] == "club-b"
        # A server taking over claims many in one transaction: those with a live lease
        # elsewhere stay there.
        assert b.claim_all(["t-1", "t-2", "t-3"], "club-b", 30) == {"t-1", "t-3"}
        assert a.renew("club-a", 30) == {"t-2"} and b.claim_all([], "club-b", 30) == set()
    finally:
        a.close()
        b.close()
