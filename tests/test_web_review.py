"""The review of a finished game on the page (issue 18): the computer's comments on the
biggest mistakes, made on the web view's worker thread (masume.play.review), through
the API over the in-memory table of test_web.py, and in headless Chromium over a real
`masume play --simulate --resume` of a finished record."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from test_web import FakeTable, TestClient, at, signed_in
from waiting import HANG_S

from masume.ai import Level
from masume.boards import load_board
from masume.games import load_rules
from masume.play.review import ReviewRefused, Reviews
from masume.web import create_app

RECORDS = Path(__file__).parent / "records"
#: A finished game of Soccer Shogi (22 actions, red wins 2-1).
FINISHED = RECORDS / "soccer-shogi" / "example-3.txt"
#: So many iterations a position, whatever the load (the time is only the hang guard).
LEVEL = Level("test", seconds=HANG_S, iterations=100)


def review_of(client, review_id: str) -> dict:
    response = client.get(f"/api/review/{review_id}")
    assert response.status_code == 200, response.text
    return response.json()


def test_the_review_of_the_tables_finished_game() -> None:
    """Asked for the table's game once it is over: made off the table (the table's lock
    held all along does not stop it), its progress and comments read from the API, each
    comment a legal better action where the one played stood, drawn on the board; asked
    again, the same review."""
    table = FakeTable()
    app = create_app(table, review_level=LEVEL)
    client = signed_in(app)

    refused = client.post("/api/review", json={})
    assert refused.status_code == 400
    assert refused.json()["error"] == "the game is not over: a review reads a finished game"

    table.record_text = FINISHED.read_text(encoding="utf-8")
    asked = client.post("/api/review", json={})
    assert asked.status_code == 200, asked.text
    review_id = asked.json()["id"]
    with table._lock:  # the table busy: the review needs nothing of it once asked
        assert app.state.reviews.get(review_id).finished.wait(HANG_S)

    review = review_of(client, review_id)
    assert (review["status"], review["done"], review["total"]) == ("done", 22, 22)
    assert review["outcome"] == "red wins (goals)"
    steps = review["steps"]
    assert len(steps) == 23 and steps[-1]["played"] is None
    assert [s["played"] for s in steps[:2]] == ["C4-C5", "C5-C6"]
    assert steps[0]["pieces"]["C4"] == ["ball", "red"]

    position = load_rules("soccer-shogi").from_text(
        "2B2/BBBBB/5/5/2R2/5/RR1RR/2R2 red 0 ball=C4 keepers=C8,C1 score=1-1")
    positions = [position]
    for step in steps[:-1]:
        positions.append(positions[-1].apply(positions[-1].parse_action(step["played"])))
    mistakes = review["mistakes"]
    assert mistakes, "the computer found nothing to say"
    assert [m["loss"] for m in mistakes] == sorted((m["loss"] for m in mistakes), reverse=True)
    for m in mistakes:
        before = positions[m["index"]]
        better = before.parse_action(m["better"])
        assert before.is_legal(better) and m["better"] != m["played"]
        assert m["played"] == steps[m["index"]]["played"] and m["loss"] >= 0.05
        assert m["comment"] == (f"{m['side']} played {m['played']}; {m['better']} was better "
                                f"(lost {m['loss']:.2f})")
        after = before.apply(better).layout()
        assert m["put"] and all(sq in after for sq in m["put"])

    again = client.post("/api/review", json={})
    assert again.json() == {"ok": True, "id": review_id, "status": "done"}
    # A spectator reads it too, without the positions when asked so.
    spectator = signed_in(app, "spectator")
    brief = spectator.get(f"/api/review/{review_id}?steps=0&as=spectator").json()
    assert "steps" not in brief and brief["mistakes"] == mistakes


@pytest.mark.parametrize(("body", "status", "error"), [
    ({"record": "[Game \"soccer-shogi\"\nA7-A6\n"}, 400,
     "the record cannot be read: file line 1: malformed header"),
    ({"record": "[Game \"soccer-shogi\"]\nA7-A6, A6-A5\nZ9-Z10, C2-C3\n"}, 400,
     "the record cannot be read: line 2: Z9-Z10: "),
    ({"record": "[Game \"chess\"]\ne4\n"}, 400, "the record cannot be read: unknown game"),
    ({"record": (RECORDS / "shogi-soccer" / "figure1-opening.txt").read_text()}, 400,
     "this table plays soccer-shogi: the record is of shogi-soccer"),
    ({"record": 7}, 400, "'record' must be a record's text"),
    ({"record": ""}, 400, "'record' must be a record's text"),
])
def test_a_review_of_a_corrupted_record_says_why(body: dict, status: int, error: str) -> None:
    client = signed_in(create_app(FakeTable(), review_level=LEVEL))
    response = client.post("/api/review", json=body)
    assert response.status_code == status
    assert response.json()["error"].startswith(error), response.json()
    assert client.get("/api/state").status_code == 200  # and the table goes on


def test_a_record_too_long_or_from_a_spectator_is_refused() -> None:
    app = create_app(FakeTable(), review_level=LEVEL)
    long = '[Game "soccer-shogi"]\n' + "A7-A6, A6-A7\nE2-E3, E3-E2\n" * 260
    response = signed_in(app).post("/api/review", json={"record": long})
    assert response.status_code == 400
    assert response.json()["error"] == "the record holds 1040 actions: a review reads at most 1000"
    spectator = signed_in(app, "spectator")
    response = spectator.post("/api/review?as=spectator",
                              json={"record": FINISHED.read_text(encoding="utf-8")})
    assert response.status_code == 403
    assert response.json()["error"] == "a spectator's page reviews the table's game only"


def test_the_review_needs_a_link_and_the_pages_own_origin() -> None:
    app = create_app(FakeTable(), review_level=LEVEL)
    stranger = TestClient(app, base_url="http://127.0.0.1")  # no link's token, no cookie
    assert stranger.post("/api/review", json={}).status_code == 403
    assert stranger.get("/api/review/0123456789abcdef").status_code == 403
    player = signed_in(app)
    foreign = player.post("/api/review", json={}, headers={"Origin": "http://evil.example"})
    assert foreign.status_code == 403


def test_a_review_that_does_not_exist() -> None:
    client = signed_in(create_app(FakeTable(), review_level=LEVEL))
    for review_id in ("0123456789abcdef", "%3Cscript%3E", "x" * 300):
        response = client.get(f"/api/review/{review_id}")
        assert response.status_code == 404
        assert response.json()["error"].startswith("no review ")
    assert client.get("/api/review/..%2F..%2Fetc").status_code == 404  # no route at all


def test_a_record_sent_is_reviewed_and_kept_by_its_text() -> None:
    """A player may send a finished record of the board's game; the same text is the
    same review; a failing search is said, and the worker goes on."""
    reviews = Reviews(LEVEL, kept=2)
    board = load_board("soccer-shogi")
    text = FINISHED.read_text(encoding="utf-8")
    first = reviews.ask(text, board)
    assert reviews.ask(text, board) is first
    assert first.finished.wait(HANG_S) and first.status == "done"
    other = reviews.ask(text + "# the same game, another text\n", board)
    assert other is not first and other.finished.wait(HANG_S)
    third = reviews.ask(text + "# a third\n", board)  # the oldest finished one goes
    assert reviews.get(first.id) is None and reviews.get(third.id) is third
    with pytest.raises(ReviewRefused, match="not over"):
        reviews.ask('[Game "soccer-shogi"]\n', board)
    reviews.close()


# ---- in the browser ----------------------------------------------------------------


def expect_the_better_action(page: Any, mistake: dict, step: dict) -> None:
    """The board at a review's ``mistake`` (on a table's page or the club's): where the
    better action puts and takes (a square taken from and put on, as where a kicked
    ball stood and a piece goes, shows where to put, as the board's LEDs do), and the
    pieces as they stood before the mistake (``step``)."""
    from playwright.sync_api import expect

    for square in mistake["put"]:
        expect(page.locator(f'[data-cell="{square}"]')).to_have_attribute("data-better", "put")
    for square in sorted(set(mistake["take"]) - set(mistake["put"])):
        expect(page.locator(f'[data-cell="{square}"]')).to_have_attribute("data-better", "take")
    for square, stack in step["pieces"].items():
        expect(page.locator(f'[data-cell="{square}"]')).to_have_attribute(
            "data-pieces", " ".join(stack))


def review_api(url: str, path: str) -> dict:
    with urllib.request.urlopen(at(url, path)) as response:
        return json.load(response)


@pytest.mark.slow
@pytest.mark.browser
def test_the_review_on_the_page_of_a_finished_game(tmp_path: Path, chromium) -> None:
    """`masume play --simulate --resume` of a finished record: the page offers the
    review, shows its progress, steps through the game (buttons, arrow keys), says the
    computer's comment at a mistake and lights the better action; readable at 400 px."""
    from page_checks import readability_problems
    from browser import open_page
    from playwright.sync_api import expect
    from test_play import Play

    folder = tmp_path / "20261124-120000-soccer-shogi"
    folder.mkdir()
    (folder / "record.txt").write_text(FINISHED.read_text(encoding="utf-8"), encoding="utf-8")
    play = Play("soccer-shogi", "--simulate", "--resume", str(folder), "--http-port", "0",
                "--games-dir", str(tmp_path))
    try:
        url = play.until("web view: ").split(": ", 1)[1]
        with open_page(chromium, url, width=400, height=800) as (page, errors):
            expect(page.locator("#outcome")).to_contain_text("red wins")
            start = page.locator("#review-start")
            expect(start).to_be_visible()
            start.click()
            progress = page.locator("#review-progress")
            expect(progress).to_have_attribute("data-status", "done")
            expect(progress).to_contain_text("the worst first")
            expect(page.locator("#review-at")).to_contain_text("after action 0 of 22")
            expect(page.locator('[data-cell="C4"] .piece.top')).to_have_attribute(
                "data-piece", "red")

            review_id = page.evaluate("""async () => {
                const r = await fetch('/api/review', {method: 'POST',
                  headers: {'Content-Type': 'application/json'}, body: '{}'});
                return (await r.json()).id; }""")
            review = review_api(url, f"api/review/{review_id}")
            worst = review["mistakes"][0]

            # Step with the keys to the worst mistake: its comment, its better action.
            page.locator("#review-last").click()
            expect(page.locator("#review-at")).to_contain_text("after action 22 of 22")
            page.keyboard.press("Home")
            expect(page.locator("#review-at")).to_have_attribute("data-at", "0")
            for _ in range(worst["index"]):
                page.keyboard.press("ArrowRight")
            expect(page.locator("#review-at")).to_have_attribute(
                "data-at", str(worst["index"]))
            comment = page.locator("#review-comment")
            expect(comment).to_have_text(worst["comment"])
            expect_the_better_action(page, worst, review["steps"][worst["index"]])
            for square in worst["put"]:
                expect(page.locator(f'[data-cell="{square}"]')).to_have_attribute(
                    "data-pattern", "blink")
            assert readability_problems(page, "review at 400 px") == []

            # One back: no comment there unless a mistake stood there too; the list
            # of comments jumps to each.
            page.locator("#review-prev").click()
            expect(page.locator("#review-at")).to_have_attribute(
                "data-at", str(worst["index"] - 1))
            page.locator(f'[data-review-index="{worst["index"]}"]').click()
            expect(comment).to_have_text(worst["comment"])
            page.locator("#review-close").click()
            expect(page.locator("[data-better]")).to_have_count(0)
            expect(start).to_be_visible()
            assert readability_problems(page, "review closed at 400 px") == []

            # A saved game's record file, of a game this board plays; a corrupted one
            # is refused, saying why.
            corrupted = tmp_path / "corrupted.txt"
            corrupted.write_text('[Game "soccer-shogi"]\nA7-A6, A6-A5\nZ9-Z10\n')
            page.locator("#review-file").set_input_files(str(corrupted))
            expect(progress).to_contain_text(
                "no review: the record cannot be read: line 2: Z9-Z10")
            page.locator("#review-file").set_input_files(
                str(RECORDS / "soccer-shogi" / "match-2-3.txt"))
            expect(progress).to_have_attribute("data-status", "done")
            expect(page.locator("#review-at")).to_contain_text("after action 0 of 29")
            assert errors == []
    finally:
        play.stop()


#: A finished game of each of the five games: as recorded, or ended by a resignation.
FINISHED_GAMES = {
    "soccer-shogi": ("soccer-shogi/example-3.txt", None),
    "shogi-soccer": ("shogi-soccer/figure1-opening.txt", None),
    "masume-tactics": ("masume-tactics/kick-off-and-goal.txt", "away"),
    "magic-number-eleven": ("magic-number-eleven/seed-tackle.txt", "home"),
    "eyeshield21": ("eyeshield21/first-turns.txt", "home"),
}


@pytest.mark.parametrize("game", sorted(FINISHED_GAMES))
def test_every_game_is_reviewed_as_everyone_saw_it(game: str) -> None:
    """Each of the five games: the review is made, every position and every comment as
    everyone at the table saw it (no card's tag; a card on the mat is a card)."""
    path, resigned = FINISHED_GAMES[game]
    text = (RECORDS / path).read_text(encoding="utf-8")
    if resigned:
        text = text.replace(f'[Game "{game}"]', f'[Game "{game}"]\n[Resigned "{resigned}"]')
    rules = load_rules(game)
    board = load_board(rules.board)
    reviews = Reviews(Level("test", seconds=HANG_S, iterations=10))
    review = reviews.ask(text, board)
    assert review.finished.wait(HANG_S)
    view = review.view()
    assert (view["status"], view["done"]) == ("done", view["total"]), view["error"]
    assert len(view["steps"]) == view["total"] + 1
    said = json.dumps(view)
    assert "tag:" not in said
    card_cells = {c.name for c in board.sensed if c.sensor == "card"}
    for step in view["steps"]:
        for cell, stack in step["pieces"].items():
            assert cell not in card_cells or set(stack) == {"card"}
    reviews.close()
