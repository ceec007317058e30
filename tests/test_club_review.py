"""A finished club game's review on the club's pages (issue 18): the game's record read
from the club's store (SQLite, PostgreSQL) by a real club server on a real Mosquitto,
reviewed by the table page's own code (masume.play.review), in headless Chromium; and
what the review refuses, said with a 4xx."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from masume.ai import Level
from masume.club.server import ClubServer, make_assignment
from masume.club.store import ClubStore
from masume.club.web import serve
from masume.games import load_rules
from test_club import first_action, play, set_up, wait_for
from test_club_store import store_url  # noqa: F401 (the fixture: SQLite, PostgreSQL)
from waiting import HANG_S

RECORDS = Path(__file__).parent / "records"
#: A finished game of Soccer Shogi (22 actions, red wins 2-1).
FINISHED = (RECORDS / "soccer-shogi" / "example-3.txt").read_text(encoding="utf-8")
#: So many iterations a position, whatever the load (the time is only the hang guard).
LEVEL = Level("test", seconds=HANG_S, iterations=100)


def archive(store: ClubStore) -> dict[str, int]:
    """Games of an earlier round in the club's store, as the club saves them: one
    finished, one whose record cannot be read, one of a game this host does not know,
    one never saved."""
    games = {}
    for name, game, record, result in [
            ("finished", "soccer-shogi", FINISHED, "red wins (goals)"),
            ("corrupted", "soccer-shogi", '[Game "soccer-shogi"]\nA7-A6, A6-A5\nZ9-Z10\n',
             "red wins"),
            ("unknown", "chess", '[Game "chess"]\ne4\n', "white wins"),
            ("unsaved", "soccer-shogi", None, None)]:
        headers = {"Table": f"old-{name}", "Red": "Ann", "Blue": "Bob"}
        games[name] = store.new_game(f"old-{name}", game, headers)
        if record is not None:
            store.save_game(games[name], record, headers, result)
    return games


@pytest.mark.slow
def test_the_club_review_refuses_what_it_cannot_read(store_url, broker) -> None:  # noqa: F811
    """Hostile or impossible asks: a 4xx saying why, never a traceback; the page goes on."""
    store = ClubStore(store_url)
    games = archive(store)
    live = store.new_game("table-1", "soccer-shogi", {"Table": "table-1"})  # not over
    server = ClubServer(broker.url, store, {"table-1": make_assignment(
        "table-1", {"game": "soccer-shogi", "players": ["Ann", "Bob"]})}).start()
    url, stop = serve(server, review_level=LEVEL)
    try:
        client = httpx.Client(base_url=url)
        for body, status, error in [
                ({"game": 10**9}, 404, "no game 1000000000 in the club's store"),
                ({"game": live}, 400, "the game is not over: a review reads a finished game"),
                ({"game": games["unsaved"]}, 400, "the game is not over"),
                ({"game": games["corrupted"]}, 400,
                 "the record cannot be read: line 2: Z9-Z10"),
                ({"game": games["unknown"]}, 400,
                 f"game {games['unknown']} cannot be drawn here: "),
                ({"game": "1"}, 400, "'game' must be a game's number in the club's store"),
                ({"game": True}, 400, "'game' must be a game's number"),
                ({"game": -1}, 400, "'game' must be a game's number"),
                ({"game": 2**70}, 400, "'game' must be a game's number"),
                ({"game": 1.5}, 400, "'game' must be a game's number"),
                ({}, 400, "'game' must be a game's number"),
                ({"game": [1]}, 400, "'game' must be a game's number")]:
            response = client.post("api/review", json=body)
            assert (response.status_code, response.json()["error"][:len(error)]) \
                == (status, error), body
        for raw, status, error in [(b"{", 400, "the request body is not JSON"),
                                   (b"[1]", 400, "the request body must be a JSON object"),
                                   (b"\xff\xfe", 400, "the request body is not JSON"),
                                   (b'{"a":' * 100 + b"1" + b"}" * 100, 400,
                                    "the request body is nested deeper")]:
            response = client.post("api/review", content=raw,
                                   headers={"Content-Type": "application/json"})
            assert (response.status_code, response.json()["error"][:len(error)]) \
                == (status, error), raw
        response = client.post("api/review", content=b"game=1",
                               headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert response.status_code == 415
        foreign = client.post("api/review", json={"game": games["finished"]},
                              headers={"Origin": "http://evil.example"})
        assert foreign.status_code == 403
        for review_id in ("0123456789abcdef", "%3Cscript%3E", "x" * 300):
            response = client.get(f"api/review/{review_id}")
            assert response.status_code == 404
            assert response.json()["error"].startswith("no review ")
        assert client.get("game/not-a-number").status_code == 200  # the page says why
        # And the finished game is reviewed, asked twice the same review.
        asked = client.post("api/review", json={"game": games["finished"]})
        assert asked.status_code == 200, asked.text
        again = client.post("api/review", json={"game": games["finished"]}).json()
        assert again["id"] == asked.json()["id"] and again["table"] == "old-finished"
        assert client.get("api/tables").status_code == 200
    finally:
        stop()
        server.close()
        store.close()


@pytest.mark.slow
@pytest.mark.browser
def test_a_finished_club_game_is_reviewed_in_chromium(store_url, broker, make_sim,  # noqa: F811
                                                      tmp_path, chromium) -> None:
    """A club server on a real Mosquitto with a table playing on a simulated board, its
    store holding a finished game of an earlier round: the overview lists the finished
    game, its review page shows the review's progress, steps through the game, says the
    computer's comment at a mistake and lights the better action; the live table goes on
    meanwhile."""
    from page_checks import readability_problems
    from test_web_review import expect_the_better_action
    from browser import open_page
    from playwright.sync_api import expect

    store = ClubStore(store_url)
    games = archive(store)
    sim = make_sim(mqtt=broker.url, unit="table-1")
    set_up(sim)
    server = ClubServer(broker.url, store, {"table-1": make_assignment(
        "table-1", {"game": "soccer-shogi", "players": ["Cy", "Di"]})}).start()
    url, stop = serve(server, review_level=LEVEL)
    try:
        assert wait_for(lambda: "table-1" in server.tables
                        and server.tables["table-1"].link.connected.is_set(), HANG_S)
        with open_page(chromium, url, width=400, height=800) as (page, errors):
            page.wait_for_selector('[data-table="table-1"] .online')
            finished = page.locator(f'#finished [data-game="{games["finished"]}"]')
            expect(finished).to_contain_text("old-finished: soccer-shogi: red wins (goals)")
            # Games not over are not offered (the live one, the one never saved).
            expect(page.locator(f'#finished [data-game="{games["unsaved"]}"]')).to_have_count(0)
            assert readability_problems(page, "club overview at 400 px") == []
            finished.locator("a").click()
            page.wait_for_url(f"{url}game/{games['finished']}")
            progress = page.locator("#review-progress")
            expect(progress).to_have_attribute("data-status", "done")
            expect(progress).to_contain_text("the worst first (red wins (goals))")
            at = page.locator("#review-at")
            expect(at).to_contain_text("after action 0 of 22")
            expect(page.locator('[data-cell="C4"]')).to_have_attribute(
                "data-pieces", "ball red")

            review_id = page.evaluate("""async (game) => {
                const r = await fetch('/api/review', {method: 'POST',
                  headers: {'Content-Type': 'application/json'},
                  body: JSON.stringify({game})});
                return (await r.json()).id; }""", games["finished"])
            review = httpx.get(f"{url}api/review/{review_id}").json()
            assert (review["status"], review["done"], review["total"]) == ("done", 22, 22)
            worst = review["mistakes"][0]

            # Step with the keys to the worst mistake: its comment, its better action.
            page.locator("#review-last").click()
            expect(at).to_contain_text("after action 22 of 22 · the end")
            page.keyboard.press("Home")
            expect(at).to_have_attribute("data-at", "0")
            for _ in range(worst["index"]):
                page.keyboard.press("ArrowRight")
            expect(at).to_have_attribute("data-at", str(worst["index"]))
            comment = page.locator("#review-comment")
            expect(comment).to_have_text(f"{worst['comment']} (the better action is lit)")
            expect_the_better_action(page, worst, review["steps"][worst["index"]])
            assert readability_problems(page, "club review at 400 px") == []
            # One back, then the list of comments jumps to each.
            page.locator("#review-prev").click()
            expect(at).to_have_attribute("data-at", str(worst["index"] - 1))
            for mistake in review["mistakes"]:
                page.locator(f'[data-review-index="{mistake["index"]}"]').click()
                expect(at).to_have_attribute("data-at", str(mistake["index"]))
                expect(comment).to_contain_text(mistake["comment"])

            # The live table went on: a move on its board is taken.
            position = load_rules("soccer-shogi").start()
            play(sim, position, first_action(position))
            assert wait_for(lambda: len(server.tables["table-1"].session.positions()) == 2,
                            HANG_S)

            # A game that is not over, and one that does not exist: the page says why.
            page.goto(f"{url}game/{store.active_game('table-1')[0]}")
            expect(progress).to_have_attribute("data-status", "refused")
            expect(progress).to_have_text(
                "no review: the game is not over: a review reads a finished game")
            page.goto(f"{url}game/999999")
            expect(progress).to_have_text(
                "no review: no game 999999 in the club's store (GET /api/results lists them)")
            page.goto(f"{url}game/%3Cb%3Ex")
            expect(progress).to_contain_text("no review: 'game' must be a game's number")
            assert errors == []
    finally:
        stop()
        server.close()
        store.close()
