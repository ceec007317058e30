"""The club server's tracker work in worker processes (issue 17): each table's core
in one worker, the loop keeping the links, the saves and the ACKs; a worker killed
is named, and its tables go on from their last save in a new worker."""

from __future__ import annotations

import logging
import os
import signal
from pathlib import Path

from test_club import Hands, set_up
from waiting import until

from masume.club.pool import WorkerPool, default_workers
from masume.club.server import ClubServer, make_assignment, resume_game
from masume.club.store import ClubStore


def _record(store: ClubStore, game_id: int) -> list[str]:
    return resume_game(store.record(game_id) or "", "soccer-shogi").notations()


def test_tables_run_in_workers_and_a_killed_worker_loses_nothing(broker, make_sim,
                                                                 tmp_path: Path, caplog):
    caplog.set_level(logging.ERROR, logger="masume.club")
    units = ["pool-1", "pool-2", "pool-3"]
    sims = {u: make_sim(mqtt=broker.url, unit=u) for u in units}
    for sim in sims.values():
        set_up(sim)
    hands = {u: Hands(sims[u]) for u in units}
    store = ClubStore(tmp_path / "club.db")
    server = ClubServer(broker.url, store,
                        {u: make_assignment(u, {"game": "soccer-shogi"}) for u in units},
                        workers=2).start()
    try:
        assert server.pool is not None and server.pool.size == 2
        until(lambda: all(u in server.tables and server.tables[u].link.connected.is_set()
                          and sims[u].led_colours for u in units), "every table lit")
        until(lambda: all(server.pool.pids), "every worker started")  # type: ignore[union-attr]
        pids = list(server.pool.pids)
        assert os.getpid() not in pids and len(set(pids)) == 2
        # A hand moves at each table: read in the worker, committed, acknowledged.
        for unit in units:
            hands[unit].move()
        for unit in units:
            table = server.tables[unit]
            until(lambda t=table, u=unit: _record(store, t.game_id) == hands[u].made,
                  f"{unit}'s first action saved")
            until(lambda t=table: t.link.ack == t.session.handled[1], f"{unit} acknowledged")
        state = server.table_state(units[0]) or {}
        assert state["running"] and state["status"]["action_number"] >= 1
        # The live page's replay: the positions, from the worker.
        assert len(server.tables[units[0]].session.positions()) == 2
        # The worker of pool-1 is killed: said in the log and the health report, a new
        # worker takes its place, and its tables go on from their last save.
        slot = server.pool.slot_of("pool-1")
        victim = server.pool.pids[slot]
        assert victim is not None
        os.kill(victim, signal.SIGKILL)
        until(lambda: server.pool.generation[slot] == 1, "the dead worker replaced")  # type: ignore[union-attr]
        said = f"worker process {victim} died (killed by signal 9)"
        until(lambda: any(said in r.getMessage() for r in caplog.records), "the death said")
        report = server.health_report()["workers"][slot]
        assert said in report["last_fault"] and report["restarts"] == 1
        until(lambda: server.pool.pids[slot] not in (None, victim), "a new worker")  # type: ignore[union-attr]
        for unit in units:
            hands[unit].move()
        for unit in units:
            table = server.tables[unit]
            until(lambda t=table, u=unit: _record(store, t.game_id) == hands[u].made,
                  f"{unit}'s second action saved after the kill")
            until(lambda t=table: t.link.ack == t.session.handled[1], f"{unit} acknowledged")
        assert server.health_report()["workers"][slot]["alive"]
    finally:
        server.close()
        store.close()
    # Stopped, every table's record is its hands' moves, in order: none lost or doubled.
    again = ClubStore(tmp_path / "club.db")
    try:
        for unit in units:
            active = again.active_game(unit)
            assert active is not None and _record(again, active[0]) == hands[unit].made
    finally:
        again.close()


def test_workers_default_to_the_cores_and_tables_spread_over_them():
    assert default_workers() >= 1
    pool = WorkerPool.__new__(WorkerPool)
    pool.size = 3
    slots = {pool.slot_of(f"table-{i}") for i in range(60)}
    assert slots == {0, 1, 2}
    assert pool.slot_of("table-7") == pool.slot_of("table-7")


def _children(pid: int) -> set[int]:
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out |= {int(c) for c in (task / "children").read_text().split()}
        except OSError:
            continue
    return out


def test_a_killed_server_takes_its_workers_with_it(broker, tmp_path: Path):
    """`masume club serve --workers 2`: two worker processes; the server SIGKILLed,
    they end too (none left behind waiting for a server that is gone)."""
    import subprocess
    import sys

    tables = tmp_path / "tables.toml"
    tables.write_text('[tables.w-1]\ngame = "soccer-shogi"\n')
    with open(tmp_path / "server.log", "w") as server_log:
        server = subprocess.Popen(
            [sys.executable, "-m", "masume.cli", "club", "serve", "--broker", broker.url,
             "--tables", str(tables), "--db", str(tmp_path / "club.db"), "--no-web",
             "--workers", "2"],
            stdout=subprocess.PIPE, stderr=server_log, text=True)
    try:
        assert server.stdout is not None
        assert server.stdout.readline().startswith("club server club: 1 tables")
        assert server.stdout.readline() == "tracker work in 2 worker processes\n"
        until(lambda: len(_children(server.pid)) >= 2, "two workers")
        workers = _children(server.pid)
        server.kill()
        server.wait()
        until(lambda: not any(Path(f"/proc/{p}").exists() for p in workers),
              "the workers ended with the server")
    finally:
        server.kill()
        server.wait()
        server.stdout.close()  # type: ignore[union-attr]
