"""The club server on one event loop (issue 17): no thread per table, nothing woken
while nothing happens, saves committed together and acknowledged after."""

from __future__ import annotations

import threading
from pathlib import Path

from test_club import first_action, play, set_up
from waiting import until

from masume.club.server import ClubServer, make_assignment, resume_game
from masume.club.store import ClubStore
from masume.games import load_rules
from masume.link.session import HEARTBEAT_S


def test_tables_run_on_the_loop_and_sleep_while_nothing_happens(broker, make_sim,
                                                                tmp_path: Path):
    units = ["loop-1", "loop-2", "loop-3"]
    sims = {u: make_sim(mqtt=broker.url, unit=u) for u in units}
    for sim in sims.values():
        set_up(sim)
    store = ClubStore(tmp_path / "club.db")
    before = set(threading.enumerate())
    server = ClubServer(broker.url, store,
                        {u: make_assignment(u, {"game": "soccer-shogi"}) for u in units}).start()
    try:
        until(lambda: all(u in server.tables and server.tables[u].link.connected.is_set()
                          and sims[u].led_colours for u in units), "every table lit")
        # The server's own threads, whatever the number of tables: none per table or link.
        # (Threads as objects: a thread of an earlier test of this worker process that
        # bore the same name, or one still ending, is not this server's.)
        # (The simulated boards' own threads, sim-*, are the boards', not the server's:
        # a board's network thread may start after it was made.)
        started = {t.name for t in set(threading.enumerate()) - before
                   if not t.name.startswith("sim-")}
        assert {n for n in started if n.startswith("club-")} == {
            "club-loop", "club-commit", "club-tables", "club-leases"}
        assert not any(u in name for name in started for u in units), started
        # Once the board is read and nothing moves, a table has no timer at all (no
        # tracker decision pending, no clock in this game) and its link only its
        # heartbeat's.
        for unit in units:
            table = server.tables[unit]
            until(lambda t=table: not t.session._alarm.armed, f"{unit}'s table asleep")
            link = table.link
            # Read from this thread while the loop runs: the alarm is re-armed when it
            # fires, so the check is waited for, not taken once at a random instant.
            until(lambda link=link: link._alarm.armed and not link._backoff.armed
                  and link._alarm.when <= link._last_heartbeat + HEARTBEAT_S + 1e-6,
                  f"{unit}'s link waiting only for its heartbeat")
        # A hand moves: woken, read, saved; the board hears its ACK once it is committed.
        position = load_rules("soccer-shogi").start()
        action = first_action(position)
        play(sims["loop-2"], position, action)
        table = server.tables["loop-2"]
        until(lambda: len(table.session.game.actions) == 1, "the action read")
        until(lambda: table.link.ack == table.session.core.handled[1], "the events acknowledged")
        # (The events are committed before their ACK; the action, decided once the board
        # is still, is saved with the table's next commit.)
        until(lambda: resume_game(store.record(table.game_id) or "", "soccer-shogi").notations()
              == [position.notation(action)], "the action saved")
        until(lambda: not table.session._alarm.armed, "the table asleep again")
        assert server.health_report()["server"]["club-loop"]["alive"]
    finally:
        server.close()
        store.close()


def test_saves_handed_over_together_commit_in_one_transaction(tmp_path: Path):
    store = ClubStore(tmp_path / "club.db")
    try:
        games = [store.new_game(f"t-{i}", "soccer-shogi", {}) for i in range(3)]
        saves = [store.game_save(g, f"record {g}", {"Link": f"boot=1 seq={g}"}, None,
                                 [(1.0, "board", {"seq": g})]) for g in games]
        commits = store.group_commits
        assert store.commit_saves(saves) == [None, None, None]
        assert store.group_commits == commits + 1 and store.saves >= 3
        assert [store.record(g) for g in games] == [f"record {g}" for g in games]
        # One save that cannot be made is that save's fault alone: the group is made
        # again one save a transaction, and the others are committed.
        bad = [("INSERT INTO no_such_table VALUES (?)", (1,))]
        errors = store.commit_saves([saves[0], bad, saves[2]])
        assert errors[0] is None and errors[2] is None and errors[1] is not None
        assert [e["seq"] for e in store.log_entries(games[2])] == [games[2], games[2]]
    finally:
        store.close()
