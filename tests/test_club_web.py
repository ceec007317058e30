"""The club's live page in headless Chromium: every table, updated by server push
when a board moves or drops off; a table page with its moves and a replay slider."""

from __future__ import annotations

import json
import urllib.request

import httpx
import pytest
from masume.club.server import ClubServer, make_assignment
from masume.club.store import ClubStore
from masume.club.web import serve
from masume.games import load_rules
from browser import open_page
from test_club import first_action, play, set_up, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def test_live_page_in_chromium(broker, make_sim, tmp_path, chromium):
    units = ["table-1", "table-2"]
    sims = {u: make_sim(mqtt=broker.url, unit=u) for u in units}
    for sim in sims.values():
        set_up(sim)
    store = ClubStore(tmp_path / "club.db")
    server = ClubServer(broker.url, store, {
        u: make_assignment(u, {"game": "soccer-shogi", "players": [f"Ann{i}", f"Bob{i}"]})
        for i, u in enumerate(units)}).start()
    url, stop = serve(server, arbiter_password="arbiter")
    try:
        assert wait_for(lambda: all(u in server.tables and server.tables[u].link.connected.is_set()
                                    for u in units), 30)
        with open_page(chromium, url, width=1280, height=720) as (page, errors):
            page.wait_for_selector('[data-table="table-2"] .online')
            assert "Ann0 v Bob0" in page.inner_text('[data-table="table-1"]')
            assert page.locator('[data-table="table-1"] svg rect').count() > 30
            assert "to move: blue" in page.inner_text('[data-table="table-1"]')
            # A move on the board: the page follows by itself (server push).
            position = load_rules("soccer-shogi").start()
            action = first_action(position)
            play(sims["table-1"], position, action)
            page.wait_for_function(
                "document.querySelector('[data-table=\"table-1\"] .count').textContent === 'actions: 1'")
            # table-2 drops off the Wi-Fi: its card says so.
            sims["table-2"].unplug()
            page.wait_for_selector('[data-table="table-2"] .offline')
            # The table page: its move list and the replay slider.
            page.click('[data-table="table-1"]')
            page.wait_for_selector("#moves li")
            assert position.notation(action) in page.inner_text("#moves")
            assert "live (after 1 actions)" in page.inner_text("#replay-label")
            page.fill("#replay", "0")
            page.dispatch_event("#replay", "input")
            assert "after action 0 of 1" in page.inner_text("#replay-label")
            # The arbiter logs in on the page and ends the game (test_club_access.py: the API).
            assert page.locator("#arbiter-tools").is_hidden()
            page.fill("#login-password", "arbiter")
            page.click("#login-form button")
            page.wait_for_selector("#arbiter-tools:not([hidden])")
            page.fill("#end-result", "Ann0 wins on time")
            page.click("#end-form button")
            page.wait_for_function("document.querySelector('#detail-status').textContent"
                                   ".includes('ended by the arbiter: Ann0 wins on time')")
            assert errors == []
        results = json.load(urllib.request.urlopen(url + "api/results"))
        assert {g["table"] for g in results} == set(units)
        arbiter = httpx.Client(base_url=url)  # the arbiter's login: test_club_access.py
        assert arbiter.post("api/login", json={"password": "arbiter"}).status_code == 200
        bad = arbiter.post("api/tables/table-2/assign", json={"game": "nope"})
        assert bad.status_code == 400
    finally:
        stop()
        server.close()
        store.close()
