"""A club table with a computer side (issue 18): the real club server (a process of
its own, or in this one), a Mosquitto the test starts, simulated boards (the firmware
on the MicroPython VM) on MQTT. The computer's action is searched off the loop (in
the table's worker process, or on the server's search thread), lit on the board in
the computer's colour, said on the table's page in words, carried out by the test's
hands and recorded; the record says ``Computer: SIDE LEVEL``. A search that raises,
and a worker killed while it searches, leave the table playable, and say so."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

import pytest
from test_club import play, set_up
from waiting import HANG_S, until

from masume.ai import acting_side
from masume.club.server import ClubServer, load_assignments, make_assignment, resume_game
from masume.club.store import ClubStore
from masume.games import load_rules
from masume.records import parse_record

pytestmark = pytest.mark.slow

GAME = "soccer-shogi"
RULES = load_rules(GAME)


def replayed(state: dict[str, Any]) -> Any:
    """The position after the moves a table's state lists."""
    position = RULES.start()
    for turn in state.get("moves", []):
        for text in turn["actions"]:
            position = position.apply(position.parse_action(text))
    return position


def done(state: dict[str, Any]) -> int:
    return sum(len(turn["actions"]) for turn in state.get("moves", []))


def said(position: Any, text: str) -> Hashable:
    """The legal action the page's words name (``E7 ground N: from E7 to E8``)."""
    (action,) = [a for a in position.legal_actions()
                 if text == position.notation(a) or text.startswith(position.notation(a) + ": ")]
    return action


class Table:
    """The players at a club table against the computer: the other side's hands move
    a piece (an action that moves one), and carry out what the board lights for the
    computer's side. ``read``: the table's state as the page reads it."""

    def __init__(self, sim: Any, read: Callable[[], dict[str, Any] | None],
                 computer: str) -> None:
        self.sim = sim
        self.read = read
        self.computer = computer
        self.lit: list[dict[str, Any]] = []  # what the computer lit, as the page said it

    def state(self, check: Callable[[dict[str, Any]], object], what: str) -> dict[str, Any]:
        found: dict[str, Any] = {}

        def ready() -> bool:
            state = self.read() or {}
            if state.get("running") and check(state):
                found.update(state)
                return True
            return False
        until(ready, f"{what} ({(self.read() or {}).get('tracker')}, "
                     f"{(self.read() or {}).get('advice')}, {(self.read() or {}).get('moves')})",
              limit=float(os.environ.get("HANDS_S", HANG_S)))
        return found

    def people(self) -> None:
        """The people's actions, until the computer's side acts."""
        while acting_side(replayed(self.state(lambda s: s["tracker"]["state"] == "in-sync",
                                              "the board in sync"))) != self.computer:
            self.step()

    def step(self) -> str:
        """One action, as the players make it; who made it."""
        state = self.state(lambda s: s["tracker"]["state"] == "in-sync"
                           and s["advice"] is not None, "the board in sync")
        position, count = replayed(state), done(state)
        assert not position.status().awaiting and position.outcome() is None
        side = acting_side(position)
        if side != self.computer:
            action = next(a for a in sorted(position.legal_actions(), key=position.notation)
                          if position.apply(a).layout() != position.layout())
            play(self.sim, position, action)
            self.state(lambda s: done(s) > count, f"{position.notation(action)} recorded")
            return side
        state = self.state(lambda s: done(s) > count or (
            s["advice"]["shown"] or {}).get("kind") == "computer", "the computer's action lit")
        if done(state) > count:  # a choice that moves nothing: made at once
            return side
        shown = state["advice"]["shown"]
        self.lit.append(shown)
        assert shown["side"] == self.computer and shown["put"]
        assert state["advice"]["computer"] == self.computer
        action = said(position, shown["text"])
        colour = tuple(position.legend.sides[self.computer])
        until(lambda: all(self.sim.led_colours.get(sq) == colour for sq in shown["put"]),
              f"{shown['text']} lit in {self.computer}'s colour on the board")
        play(self.sim, position, action)
        after = self.state(lambda s: done(s) > count, f"{shown['text']} carried out")
        assert replayed(after).layout() == position.apply(action).layout()
        return side


def computers(table: Table) -> int:
    return len(table.lit)


def test_a_club_table_plays_the_computer_in_a_real_server(broker, make_sim,
                                                          tmp_path: Path) -> None:
    """`masume club serve --workers 2` with a tables file giving a table a computer
    side: its actions lit on the board in red, said on the table's page, carried out
    by the hands, recorded under a `Computer: red beginner` header; the other table,
    people only, plays on beside it."""
    tables = tmp_path / "tables.toml"
    tables.write_text('[tables.cpu-1]\ngame = "soccer-shogi"\nplayers = ["Aiko", "masume"]\n'
                      'computer = "red"\nlevel = "beginner"\n'
                      '[tables.people-1]\ngame = "soccer-shogi"\n')
    assert load_assignments(tables)["cpu-1"].computer == "red"
    sims = {unit: make_sim(mqtt=broker.url, unit=unit) for unit in ("cpu-1", "people-1")}
    for sim in sims.values():
        set_up(sim)
    db = tmp_path / "club.db"
    server = subprocess.Popen(
        [sys.executable, "-m", "masume.cli", "club", "serve", "--broker", broker.url,
         "--tables", str(tables), "--db", str(db), "--workers", "2", "--http-port", "0"],
        env=dict(os.environ, PYTHONUNBUFFERED="1"), stdout=subprocess.PIPE,
        stderr=open(tmp_path / "server.log", "w"), text=True)
    try:
        assert server.stdout is not None
        url = ""
        while not url:
            line = server.stdout.readline()
            assert line, (tmp_path / "server.log").read_text()
            if line.startswith("live page: "):
                url = line.split(": ", 1)[1].strip()

        def read(unit: str) -> dict[str, Any]:
            with urllib.request.urlopen(f"{url}api/tables/{unit}") as answer:
                state: dict[str, Any] = json.load(answer)
                return state

        table = Table(sims["cpu-1"], lambda: read("cpu-1"), "red")
        while computers(table) < 3:
            table.step()
            assert done(read("cpu-1")) < 40
        people = read("people-1")
        assert people["advice"]["computer"] is None and people["running"]
        # The table's card on the live page, and the overview, say it in words.
        with urllib.request.urlopen(f"{url}api/tables") as answer:
            card = next(t for t in json.load(answer) if t["table"] == "cpu-1")
        assert card["advice"]["computer"] == "red" and card["advice"]["level"] == "beginner"
        final = read("cpu-1")
        record = ClubStore(db)
        try:
            # Committed soon after the table took it (the page reads the table first).
            until(lambda: len(resume_game(record.record(final["game_id"]) or "", GAME)
                              .notations()) >= done(final), "the last action committed")
            text = record.record(final["game_id"]) or ""
        finally:
            record.close()
        assert parse_record(text).headers["Computer"] == "red beginner"
        played = resume_game(text, GAME).notations()
        for shown in table.lit:  # every action the computer lit is in the record
            assert any(shown["text"] == n or shown["text"].startswith(n + ": ")
                       for n in played)
        log = (tmp_path / "server.log").read_text()
        assert "the computer plays red (beginner)" in log
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        if server.stdout is not None:
            server.stdout.close()


def test_the_computers_side_is_checked_and_kept_with_the_game(tmp_path: Path) -> None:
    for spec, error in (({"game": GAME, "computer": "green"},
                         "soccer-shogi's sides are blue, red"),
                        ({"game": GAME, "computer": "red", "level": "grandmaster"},
                         "unknown level 'grandmaster'"),
                        ({"game": GAME, "level": "club"}, "computer = \"SIDE\"")):
        with pytest.raises(ValueError, match=error):
            make_assignment("t-1", spec)
    assignment = make_assignment("t-1", {"game": GAME, "computer": "blue", "level": "club"})
    headers = assignment.headers(RULES.start().sides)
    assert headers["Computer"] == "blue club"
    store = ClubStore(tmp_path / "club.db")
    try:
        store.new_game("t-1", GAME, headers)
        active = store.active_game("t-1")
        assert active is not None and active[2]["Computer"] == "blue club"
    finally:
        store.close()


def _server(broker: Any, make_sim: Any, tmp_path: Path, workers: int,
            level: str = "beginner") -> tuple[ClubServer, ClubStore, Table]:
    sim = make_sim(mqtt=broker.url, unit="cpu-1")
    set_up(sim)
    store = ClubStore(tmp_path / "club.db")
    server = ClubServer(broker.url, store, {"cpu-1": make_assignment(
        "cpu-1", {"game": GAME, "computer": "red", "level": level})},
        workers=workers).start()
    return server, store, Table(sim, lambda: server.table_state("cpu-1"), "red")


def test_a_search_that_raises_is_said_and_the_table_plays_on(
        broker, make_sim, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On the loop's table (no workers): the computer's search raises once; the page
    says so, the loop goes on, the players make red's action by hand, and the computer
    plays its next one."""
    import masume.play.computer

    real = masume.play.computer.advise
    failures: list[str] = []

    def failing_once(position: Any, side: str, *args: Any) -> Any:
        if side == "red" and not failures:
            failures.append(side)
            raise RuntimeError("out of memory")
        return real(position, side, *args)

    monkeypatch.setattr(masume.play.computer, "advise", failing_once)
    server, store, table = _server(broker, make_sim, tmp_path, workers=0)
    try:
        table.people()
        state = table.state(lambda s: s["advice"]["error"], "the failure said")
        assert state["advice"]["error"] == (
            "computer: the search failed (RuntimeError: out of memory); make its action by "
            "hand, or ask for a hint")
        assert "the search failed" in state["tracker"]["message"]
        assert state["health"]["problem"] is None
        # The players make red's action by hand: taken as any action.
        table.computer = "nobody"
        assert table.step() == "red"
        table.computer = "red"
        while computers(table) < 1:
            table.step()
        assert failures == ["red"]
        assert server.health_report()["server"]["club-loop"]["faults"] == 0
    finally:
        server.close()
        store.close()


def test_a_worker_killed_while_it_searches_leaves_the_table_playable(
        broker, make_sim, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """With workers, the search is in the table's worker process: killed while the
    computer thinks, the death is said (the log, the table's health), the table opens
    again from its last save in a new worker, the computer thinks again there, and its
    action is lit, carried out and recorded."""
    caplog.set_level(logging.ERROR, logger="masume.club")
    server, store, table = _server(broker, make_sim, tmp_path, workers=2, level="club")
    try:
        table.people()
        table.state(lambda s: s["advice"]["thinking"] == "computer", "the computer thinking")
        pool = server.pool
        assert pool is not None
        slot = pool.slot_of("cpu-1")
        victim = pool.pids[slot]
        assert victim is not None and victim != os.getpid()
        os.kill(victim, signal.SIGKILL)
        until(lambda: pool.generation[slot] == 1, "the dead worker replaced")
        until(lambda: any(f"worker process {victim} died" in r.getMessage()
                          for r in caplog.records), "the death said")
        until(lambda: "its worker died" in (
            server.health_report()["tables"]["cpu-1"]["table"]["last_fault"] or ""),
            "the table says its worker died")
        while computers(table) < 1:
            table.step()
        while table.step() != "blue":
            pass
        state = table.state(lambda s: s["health"]["problem"] is None, "the table well")
        game_id = state["game_id"]
        until(lambda: len(resume_game(store.record(game_id) or "", GAME).notations())
              == done(state), "the record saved")
        assert parse_record(store.record(game_id) or "").headers["Computer"] == "red club"
    finally:
        server.close()
        store.close()


@pytest.mark.browser
def test_the_club_page_says_the_computers_action(broker, make_sim, tmp_path: Path,
                                                 chromium) -> None:
    """The table's club page, in headless Chromium: who the computer plays, and its
    action in words once lit (as the board lights it)."""
    from browser import open_page
    from playwright.sync_api import expect

    from masume.club.web import serve

    server, store, table = _server(broker, make_sim, tmp_path, workers=2)
    url, stop = serve(server)
    try:
        table.people()
        state = table.state(lambda s: (s["advice"]["shown"] or {}).get("kind") == "computer",
                            "the computer's action lit")
        text = state["advice"]["shown"]["text"]
        with open_page(chromium, url + "table/cpu-1", width=1280, height=720) as (page, errors):
            expect(page.locator("#detail-status .computer")).to_have_text(
                "the computer plays red (beginner)")
            expect(page.locator('#detail-status .says[data-kind="computer"]')).to_have_text(
                f"computer: {text}")
            page.goto(url)
            expect(page.locator('[data-table="cpu-1"] .says')).to_have_text(
                f"computer: {text}")
            assert errors == []
        assert table.step() == "red"
    finally:
        stop()
        server.close()
        store.close()
