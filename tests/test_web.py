"""The web view: its API and event stream over a small in-memory table, and the page
in headless Chromium.

The table here is a stand-in with the table session's shape (``simulated``,
``sides``, ``state()``, ``subscribe()``, ``sim_*``): a dict of stacks on the real
soccer-shogi board definition. The real session, with the simulated board behind it,
is tested with ``masume play``. Every request carries the run's token, as the
printed links do (:func:`signed_in`, :func:`at`); what a request without it, or
a hostile one, gets is in test_web_access.py.
"""

from __future__ import annotations

import json
import queue
import threading
import time
import warnings
from typing import Callable
from urllib.parse import urlsplit

import httpx
import pytest

with warnings.catch_warnings():
    # Starlette 1.x asks for httpx2 behind its TestClient; httpx is what the test extras
    # install, and it works.
    warnings.filterwarnings("ignore", message=".*httpx2", category=UserWarning)
    from starlette.testclient import TestClient

from masume.boards import load_board
from masume.web import create_app, serve
from browser import open_page



class FakeTable:
    """A table in memory: stacks of pieces per cell, LEDs set by the test, and a log
    of the sim calls. Checks what the simulated board would check (a real cell, a
    known piece, something to lift) and refuses everything when not simulated."""

    sides = ("blue", "red")
    computer = None  # people only: a link for each side

    def __init__(self, board: str = "soccer-shogi", *, simulated: bool = True) -> None:
        self._board = load_board(board)
        self.simulated = simulated
        self.pieces: dict[str, list[str]] = {"C5": ["ball", "blue"], "A2": ["red"]}
        self.leds: dict[str, dict] = {}
        self.status = {
            "to_move": "blue", "action_number": 1, "actions_per_turn": 2,
            "score": {"blue": 0, "red": 0}, "message": "blue, action 1 of 2", "awaiting": None,
        }
        self.tracker = {"state": "in-sync", "message": "", "squares": []}
        self.moves: list[dict] = []
        self.outcome = None
        self.last_die = None
        self.choices: list[str] = []
        self.record_text = '[Game "soccer-shogi"]\nA7-A6, A6-A5\n'  # not over
        self.calls: list[tuple] = []
        self._subscribers: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    # -- the contract
    def state(self, viewer: str | None = None) -> dict:  # soccer-shogi hides nothing
        b = self._board
        with self._lock:
            return {
                "game": "soccer-shogi",
                "board": {
                    "id": b.id, "title": b.title,
                    "cells": [
                        {"name": c.name, "x": c.x, "y": c.y, "zone": c.zone, "sensor": c.sensor}
                        for c in b.cells
                    ],
                    "buttons": [x.name for x in b.buttons], "die": b.die,
                    "pieces": list(b.pieces),
                },
                "simulated": self.simulated,
                "pieces": {k: list(v) for k, v in self.pieces.items() if v},
                "leds": json.loads(json.dumps(self.leds)),
                "status": dict(self.status),
                "tracker": dict(self.tracker),
                "moves": json.loads(json.dumps(self.moves)),
                "outcome": self.outcome,
                "link": {"connected": True, "port": "/tmp/fake-port", "error": None},
                "last_die": self.last_die,
                "choices": [{"text": text} for text in self.choices],
            }

    def cards(self) -> list[dict[str, str]]:
        return []  # soccer-shogi plays no cards

    @property
    def board(self):
        return self._board

    def record(self) -> str:
        """The game as a record's text (a review reads it): set by the test."""
        with self._lock:
            return self.record_text

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    @property
    def subscribers(self) -> int:
        with self._lock:
            return len(self._subscribers)

    def changed(self) -> None:
        with self._lock:
            callbacks = list(self._subscribers)
        for callback in callbacks:
            callback()

    def _square(self, square: str) -> None:
        if not self.simulated:
            raise ValueError("not a simulated board")
        if not self._board.has_cell(square) or self._board.cell(square).sensor == "none":
            raise ValueError(f"no square {square!r} on board {self._board.id!r}")

    def sim_lift(self, square: str) -> str:
        self._square(square)
        with self._lock:
            stack = self.pieces.get(square)
            if not stack:
                raise ValueError(f"{square} is empty")
            piece = stack.pop()
            self.calls.append(("lift", square))
        self.changed()
        return piece

    def sim_place(self, square: str, piece: str) -> None:
        self._square(square)
        if piece not in self._board.pieces:
            raise ValueError(f"unknown piece {piece!r}")
        with self._lock:
            self.pieces.setdefault(square, []).append(piece)
            self.calls.append(("place", square, piece))
        self.changed()

    def sim_press(self, button: str) -> None:
        if not self.simulated:
            raise ValueError("not a simulated board")
        self._board.button(button)  # KeyError names the board
        with self._lock:
            self.calls.append(("press", button))
        self.changed()

    def sim_roll(self, value: int | None = None) -> None:
        if not self.simulated:
            raise ValueError("not a simulated board")
        if not self._board.die:
            raise ValueError(f"board {self._board.id!r} has no die")
        with self._lock:
            self.calls.append(("roll", value))
        self.changed()

    def new_game(self) -> None:
        with self._lock:
            self.calls.append(("new game",))
        self.changed()

    def act(self, text: str) -> None:
        """Any board, real or simulated: a choice is made on the page."""
        with self._lock:
            if text not in self.choices:
                raise ValueError(f"{text!r} is not a choice now")
            self.calls.append(("act", text))
            self.choices = []
        self.changed()

    def set(self, **changes) -> None:
        """Change state fields (as the host would) and tell the subscribers."""
        with self._lock:
            for key, value in changes.items():
                setattr(self, key, value)
        self.changed()


# ---------------------------------------------------------------------- the API


def signed_in(app, role: str = "table") -> TestClient:
    """A client that opened ``role``'s link (so it holds the cookie the page sets)."""
    client = TestClient(app, base_url="http://127.0.0.1")
    query = urlsplit(app.state.access.link(role).url).query
    assert client.get(f"/?{query}").status_code == 200
    return client


def at(link: str, path: str) -> str:
    """``path`` ("api/state", "api/stream?as=red") on the server of ``link`` (a
    printed link), with the link's token."""
    base, _, query = link.partition("?")
    return f"{base}{path}{'&' if '?' in path else '?'}{query}"


@pytest.fixture
def table() -> FakeTable:
    return FakeTable()


@pytest.fixture
def client(table: FakeTable) -> TestClient:
    return signed_in(create_app(table))


def test_page_and_static_files(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert "text/html" in page.headers["content-type"]
    for asset in ("/static/app.js", "/static/style.css"):
        assert asset in page.text
        r = client.get(asset)
        assert r.status_code == 200 and r.text.strip()
        assert r.headers["cache-control"] == "no-cache"
    assert client.get("/static/nothing.js").status_code == 404


def test_state_is_the_tables_state(client: TestClient, table: FakeTable) -> None:
    r = client.get("/api/state")
    assert r.status_code == 200
    assert r.json() == table.state()
    assert r.json()["pieces"]["C5"] == ["ball", "blue"]


def test_lift_and_place_go_to_the_table(client: TestClient, table: FakeTable) -> None:
    r = client.post("/api/sim/lift", json={"square": "C5"})
    assert r.status_code == 200 and r.json() == {"ok": True, "piece": "blue"}
    r = client.post("/api/sim/place", json={"square": "C4", "piece": "blue"})
    assert r.status_code == 200 and r.json() == {"ok": True}
    assert table.calls == [("lift", "C5"), ("place", "C4", "blue")]
    assert client.get("/api/state").json()["pieces"] == {"C5": ["ball"], "C4": ["blue"], "A2": ["red"]}


def test_press_and_roll(client: TestClient, table: FakeTable) -> None:
    assert client.post("/api/sim/press", json={"button": "confirm"}).json() == {"ok": True}
    r = client.post("/api/sim/press", json={"button": "jump"})
    assert r.status_code == 400 and "jump" in r.json()["error"]
    # soccer-shogi has no die: the table's refusal comes back as the error
    r = client.post("/api/sim/roll", json={})
    assert r.status_code == 400 and r.json()["error"] == "board 'soccer-shogi' has no die"
    r = client.post("/api/sim/roll", json={"value": "six"})
    assert r.status_code == 400 and "whole number" in r.json()["error"]
    assert table.calls == [("press", "confirm")]


def test_roll_passes_the_value() -> None:
    table = FakeTable("masume-tactics")
    client = signed_in(create_app(table))
    assert client.post("/api/sim/roll", json={"value": 4}).status_code == 200
    # no body: a random roll
    assert client.post("/api/sim/roll", headers={"content-type": "application/json"}).status_code == 200
    assert table.calls == [("roll", 4), ("roll", None)]


@pytest.mark.parametrize(
    "path, body, error",
    [
        ("/api/sim/lift", {"square": "E7"}, "E7 is empty"),
        ("/api/sim/lift", {"square": "Z9"}, "no square 'Z9'"),
        ("/api/sim/lift", {"square": "turn-blue-1"}, "no square 'turn-blue-1'"),
        ("/api/sim/lift", {}, "'square' is required"),
        ("/api/sim/lift", {"square": 5}, "'square' is required"),
        ("/api/sim/place", {"square": "C4"}, "'piece' is required"),
        ("/api/sim/place", {"square": "C4", "piece": "dragon"}, "unknown piece 'dragon'"),
        ("/api/sim/press", {}, "'button' is required"),
    ],
)
def test_bad_requests_say_why(client: TestClient, path: str, body: dict, error: str) -> None:
    r = client.post(path, json=body)
    assert r.status_code == 400
    assert error in r.json()["error"]


def test_body_must_be_a_json_object(client: TestClient) -> None:
    r = client.post("/api/sim/lift", content=b"C5", headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json() == {"error": "the request body is not JSON"}
    r = client.post("/api/sim/lift", json=["C5"])
    assert r.status_code == 400 and "JSON object" in r.json()["error"]
    assert client.get("/api/sim/lift").status_code == 405


def test_a_real_board_is_only_mirrored() -> None:
    table = FakeTable(simulated=False)
    client = signed_in(create_app(table))
    assert client.get("/api/state").json()["simulated"] is False
    for path, body in [
        ("/api/sim/lift", {"square": "C5"}),
        ("/api/sim/place", {"square": "C4", "piece": "blue"}),
        ("/api/sim/press", {"button": "confirm"}),
        ("/api/sim/roll", {}),
    ]:
        r = client.post(path, json=body)
        assert r.status_code == 409, path
        assert "real board" in r.json()["error"]
    assert table.calls == []


def test_a_choice_is_made_on_any_board() -> None:
    for simulated in (True, False):
        table = FakeTable(simulated=simulated)
        table.choices = ["declare A", "declare B"]
        client = signed_in(create_app(table))
        assert client.get("/api/state").json()["choices"] == [{"text": "declare A"},
                                                               {"text": "declare B"}]
        r = client.post("/api/act", json={"action": "declare B"})
        assert r.status_code == 200 and r.json() == {"ok": True}
        assert table.calls == [("act", "declare B")]


@pytest.mark.parametrize("body, error", [
    ({"action": "declare C"}, "'declare C' is not a choice now"),
    ({}, "'action' is required"),
    ({"action": 3}, "'action' is required"),
])
def test_a_refused_choice_says_why(body: dict, error: str) -> None:
    table = FakeTable(simulated=False)
    table.choices = ["declare A"]
    r = signed_in(create_app(table)).post("/api/act", json=body)
    assert r.status_code == 400 and error in r.json()["error"]
    assert table.calls == []


# ------------------------------------------------------------- the event stream


class Events:
    """Reads a server's /api/stream in a thread: each event's data, parsed, in a
    queue; comment lines (heartbeats) counted."""

    def __init__(self, url: str) -> None:
        self.queue: queue.Queue[dict] = queue.Queue()
        self.comments = 0
        self._client = httpx.Client(timeout=httpx.Timeout(10, read=None))
        self._response = self._client.send(
            self._client.build_request("GET", at(url, "api/stream")), stream=True
        )
        assert self._response.status_code == 200
        assert self._response.headers["content-type"].startswith("text/event-stream")
        self.ended = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        data: list[str] = []
        try:
            for line in self._response.iter_lines():
                if line.startswith(":"):
                    self.comments += 1
                elif line.startswith("data:"):
                    data.append(line[5:].strip())
                elif line == "" and data:
                    self.queue.put(json.loads("\n".join(data)))
                    data = []
        except httpx.HTTPError:
            pass
        finally:
            self.ended.set()

    def next(self, timeout: float = 5.0) -> dict:
        return self.queue.get(timeout=timeout)

    def drain(self, quiet: float = 0.3) -> list[dict]:
        """Events until none came for ``quiet`` seconds."""
        out = []
        while True:
            try:
                out.append(self.queue.get(timeout=quiet))
            except queue.Empty:
                return out

    def close(self) -> None:
        self._response.close()
        self._client.close()


@pytest.fixture
def served(table: FakeTable):
    stops = []

    def start(**options) -> str:
        web = serve(table, **options)
        stops.append(web.stop)
        return web.url

    yield start
    for stop in stops:
        stop()


def test_serve_picks_a_port_and_stops(table: FakeTable) -> None:
    web = serve(table)
    url, stop = web.url, web.stop
    base = url.split("?")[0]
    assert base.startswith("http://127.0.0.1:") and base.endswith("/")
    assert not base.endswith(":0/")
    assert httpx.get(at(url, "api/state")).json()["game"] == "soccer-shogi"
    stop()
    stop()  # a second stop does nothing
    with pytest.raises(httpx.ConnectError):
        httpx.get(at(url, "api/state"), timeout=2)


def test_stream_sends_the_state_at_connect_and_on_change(served, table: FakeTable) -> None:
    url = served()
    events = Events(url)
    try:
        first = events.next()
        assert first == table.state()
        table.set(leds={"C4": {"rgb": [0, 255, 0], "pattern": "blink"}})
        assert events.next()["leds"] == {"C4": {"rgb": [0, 255, 0], "pattern": "blink"}}
        # A change that changes nothing is not pushed again.
        table.changed()
        assert events.drain() == []
    finally:
        events.close()


def test_stream_coalesces_bursts(served, table: FakeTable) -> None:
    url = served()
    events = Events(url)
    try:
        events.next()
        start = time.monotonic()
        for n in range(200):
            table.set(status={**table.status, "message": f"change {n}"})
            time.sleep(0.001)
        got = events.drain()
        elapsed = time.monotonic() - start
        assert got, "no push after a burst of changes"
        assert got[-1]["status"]["message"] == "change 199"  # the last state always arrives
        assert len(got) <= elapsed * 20 + 2, f"{len(got)} pushes in {elapsed:.2f} s"
    finally:
        events.close()


def test_stream_heartbeat_and_unsubscribe(served, table: FakeTable) -> None:
    url = served(heartbeat_s=0.1)
    events = Events(url)
    events.next()
    assert table.subscribers == 1
    time.sleep(0.5)
    assert events.comments >= 3
    events.close()
    deadline = time.monotonic() + 5
    while table.subscribers and time.monotonic() < deadline:
        time.sleep(0.05)
    assert table.subscribers == 0, "a closed stream stays subscribed"


def test_stop_ends_open_streams(table: FakeTable) -> None:
    web = serve(table)
    url, stop = web.url, web.stop
    events = Events(url)
    events.next()
    started = time.monotonic()
    stop()
    assert time.monotonic() - started < 3
    assert events.ended.wait(5), "the stream did not end when the server stopped"
    events.close()
    assert table.subscribers == 0


# ------------------------------------------------------------------- the page


@pytest.mark.browser
def test_page_in_chromium(served, table: FakeTable, chromium) -> None:
    from playwright.sync_api import expect

    url = served()
    with open_page(chromium, url, width=1100, height=800) as (page, errors):
        expect(page.locator("body[data-ready=true]")).to_have_count(1)

        # Every cell of the definition is drawn, the squares and the lamps.
        board = load_board("soccer-shogi")
        expect(page.locator("#board [data-cell]")).to_have_count(len(board.cells))
        expect(page.locator('[data-cell="C5"] .piece.top')).to_have_attribute("data-piece", "blue")
        expect(page.locator('[data-cell="C5"] .piece.under')).to_have_attribute("data-piece", "ball")
        expect(page.locator("#turn")).to_contain_text("blue")
        expect(page.locator("#turn")).to_contain_text("action 1 of 2")
        expect(page.locator("#score")).to_contain_text("0")
        expect(page.locator('[data-button="takeback"]')).to_be_enabled()
        expect(page.locator('[data-piece-choice="blue"]')).to_have_count(1)
        expect(page.locator("#link")).to_contain_text("connected")
        expect(page.locator("#tracker")).to_be_hidden()  # in sync: nothing to say

        # Lift the top piece of C5 into the hand, put it down on C4.
        page.locator('[data-cell="C5"]').click()
        expect(page.locator("#hand .hand-piece[data-piece='blue']")).to_have_count(1)
        page.locator('[data-cell="C4"]').click()
        expect(page.locator('[data-cell="C4"] .piece.top')).to_have_attribute("data-piece", "blue")
        expect(page.locator("#hand .hand-piece")).to_have_count(0)
        assert table.calls == [("lift", "C5"), ("place", "C4", "blue")]

        # A piece from the box, and a button.
        page.locator('[data-piece-choice="red"]').click()
        page.locator('[data-cell="E8"]').click()
        expect(page.locator('[data-cell="E8"] .piece.top')).to_have_attribute("data-piece", "red")
        page.locator('[data-button="confirm"]').click()
        expect(page.locator('[data-cell="E8"]')).to_be_visible()
        deadline = time.monotonic() + 5
        while ("press", "confirm") not in table.calls and time.monotonic() < deadline:
            time.sleep(0.05)
        assert table.calls[-2:] == [("place", "E8", "red"), ("press", "confirm")]

        # Holding a piece over an occupied square: the page asks which is meant.
        page.locator('[data-piece-choice="ball"]').click()
        page.locator('[data-cell="C4"]').click()
        page.locator('#cell-menu [data-menu="place"]').click()
        expect(page.locator('[data-cell="C4"] .piece.top')).to_have_attribute("data-piece", "ball")
        page.locator('[data-cell="C4"]').click()  # nothing in hand: lifts the top piece
        expect(page.locator("#hand .hand-piece[data-piece='ball']")).to_have_count(1)
        page.locator("#hand-return").click()
        expect(page.locator("#hand .hand-piece")).to_have_count(0)
        assert table.calls[-2:] == [("place", "C4", "ball"), ("lift", "C4")]

        # What the host says shows up: LEDs, tracker, moves, outcome.
        table.set(
            leds={
                "C3": {"rgb": [0, 255, 0], "pattern": "blink"},
                "turn-blue-1": {"rgb": [0, 0, 255], "pattern": "pulse"},
            },
            tracker={"state": "mismatch", "message": "put the ball back on C5", "squares": ["C5"]},
            moves=[{"number": 1, "side": "blue", "actions": ["C5-C4", "E8"]}],
        )
        c3 = page.locator('[data-cell="C3"]')
        expect(c3).to_have_attribute("data-led", "#00ff00")
        expect(c3).to_have_attribute("data-pattern", "blink")
        lamp = page.locator('[data-cell="turn-blue-1"]')
        expect(lamp).to_have_attribute("data-led", "#0000ff")
        expect(lamp).to_have_attribute("data-pattern", "pulse")
        expect(page.locator("#tracker")).to_be_visible()
        expect(page.locator("#tracker")).to_have_text("put the ball back on C5")
        expect(page.locator('[data-cell="C5"]')).to_have_class(lambda_re("flagged"))
        expect(page.locator("#moves .action")).to_have_text(["C5-C4", "E8"])
        # The other side's player makes the choice now (a kick's receiver): said so.
        table.set(status={**table.status, "message": "red-4 keeps the ball or lets it run",
                          "deciding": "red"})
        expect(page.locator("#turn")).to_contain_text("red decides")
        table.set(status={**table.status, "deciding": None})
        expect(page.locator("#turn")).not_to_contain_text("decides")
        table.set(leds={}, outcome={"winner": "blue", "reason": "goal"})
        expect(c3).not_to_have_attribute("data-led", "#00ff00")
        expect(page.locator("#outcome")).to_contain_text("blue wins")

        # A refused request is shown, not swallowed, and the piece stays in hand.
        page.locator("#palette-name").fill("dragon")
        page.locator("#palette-other button").click()
        page.locator('[data-cell="A3"]').click()
        expect(page.locator("#error")).to_contain_text("unknown piece 'dragon'")
        expect(page.locator("#hand .hand-piece[data-piece='dragon']")).to_have_count(1)
        assert errors == []


def lambda_re(word: str):
    import re

    return re.compile(rf"(^|\s){re.escape(word)}(\s|$)")


@pytest.mark.browser
def test_the_hand_stays_put_while_the_table_speaks(served, table: FakeTable, chromium) -> None:
    """A state the table sends that leaves the hand as it was keeps the hand's buttons:
    a button replaced between a press and its release takes no click (a tap on the
    hand while the board was read chose nothing)."""
    from playwright.sync_api import expect

    url = served()
    with open_page(chromium, url, width=1100, height=800) as (page, errors):
        page.locator('[data-cell="C5"]').click()
        held = page.locator("#hand .hand-piece[data-piece='blue']")
        expect(held).to_have_count(1)
        held.evaluate("button => { button.dataset.seen = 'before'; }")
        table.set(leds={"C4": {"rgb": [0, 255, 0], "pattern": "blink"}},
                  tracker={"state": "lifted", "message": "blue lifted from C5", "squares": []})
        expect(page.locator('[data-cell="C4"]')).to_have_attribute("data-led", "#00ff00")
        expect(page.locator("#tracker")).to_have_text("blue lifted from C5")
        assert held.get_attribute("data-seen") == "before"  # the same button, not redrawn
        # A change to the hand redraws it.
        page.locator('[data-piece-choice="red"]').click()
        expect(page.locator("#hand .hand-piece")).to_have_count(2)
        expect(page.locator("#hand .hand-piece.selected")).to_have_attribute("data-piece", "red")
        assert errors == []


@pytest.mark.browser
def test_choices_panel_in_chromium(served, table: FakeTable, chromium) -> None:
    """A few choices are buttons; many get a text box that narrows the list."""
    from playwright.sync_api import expect

    url = served()
    with open_page(chromium, url, width=1100, height=800) as (page, errors):
        expect(page.locator("body[data-ready=true]")).to_have_count(1)
        expect(page.locator("#choices-card")).to_be_hidden()

        table.set(choices=["kick left", "kick right"])
        expect(page.locator("#choices [data-choice]")).to_have_text(["kick left", "kick right"])
        expect(page.locator("#choice-form")).to_be_hidden()
        page.locator('[data-choice="kick right"]').click()
        expect(page.locator("#choices-card")).to_be_hidden()  # the host took it
        assert table.calls == [("act", "kick right")]

        table.set(choices=[f"system {a}-{b}" for a in range(10) for b in range(10)])
        expect(page.locator("#choice-form")).to_be_visible()
        expect(page.locator("#choices [data-choice]")).to_have_count(12)
        expect(page.locator("#choices-more")).to_contain_text("88 more of 100")
        page.locator("#choice-text").fill("7-")
        expect(page.locator("#choices [data-choice]")).to_have_count(10)
        page.locator("#choice-text").fill("system 7-3")
        expect(page.locator("#choices [data-choice]")).to_have_text(["system 7-3"])
        page.locator("#choice-text").press("Enter")  # one left: Enter chooses it
        expect(page.locator("#choices-card")).to_be_hidden()
        assert table.calls[-1] == ("act", "system 7-3")

        # A refusal is shown.
        table.set(choices=[f"system {n}" for n in range(20)])
        page.locator("#choice-text").fill("system 99")
        page.locator("#choice-form button").click()
        expect(page.locator("#error")).to_contain_text("'system 99' is not a choice now")
        assert errors == []


@pytest.mark.browser
def test_buttons_once_the_game_is_over(served, table: FakeTable, chromium) -> None:
    """Once the outcome is known, what no longer applies is disabled and says why:
    resign, the die; confirm unless a reading is still to choose. Takeback stays (it
    goes back into the game), and a new game is offered."""
    from playwright.sync_api import expect

    url = served()
    with open_page(chromium, url, width=1100, height=800) as (page, errors):
        expect(page.locator("body[data-ready=true]")).to_have_count(1)

        def button(name: str):
            return page.locator(f'[data-button="{name}"]')

        for name in ("confirm", "takeback", "resign"):
            expect(button(name)).to_be_enabled()

        table.set(outcome={"winner": "blue", "reason": "goal"})
        expect(page.locator("#new-game")).to_be_enabled()
        expect(button("resign")).to_be_disabled()
        expect(button("resign")).to_have_attribute("title", "resign: the game is over")
        expect(button("confirm")).to_be_disabled()
        expect(button("takeback")).to_be_enabled()
        expect(button("takeback")).to_have_attribute("title", lambda_re("back into the game"))

        # The last action read two ways: confirm still picks the other reading.
        table.set(tracker={"state": "ambiguous", "message": "", "squares": []})
        expect(button("confirm")).to_be_enabled()
        table.set(tracker={"state": "in-sync", "message": "", "squares": []})
        expect(button("confirm")).to_be_disabled()

        # Taken back into the game: every button again.
        table.set(outcome=None)
        for name in ("confirm", "takeback", "resign"):
            expect(button(name)).to_be_enabled()
        expect(page.locator("#new-game")).to_have_count(0)
        assert errors == []


@pytest.mark.browser
@pytest.mark.parametrize("board", ["eyeshield21", "magic-number-eleven"])
def test_card_mat_zone_names_are_whole_on_a_phone(board: str, chromium) -> None:
    """At a phone's 400 px every zone's name on a card mat is shown whole (wrapped,
    not cut), and the page passes the readability checks (tests/page_checks.py)."""
    from page_checks import readability_problems
    from playwright.sync_api import expect

    table = FakeTable(board)
    table.pieces = {}
    web = serve(table)
    try:
        with open_page(chromium, web.url, width=400, height=900) as (page, _):
            expect(page.locator("body[data-ready=true]")).to_have_count(1)
            expect(page.locator(".cell[data-sensor=card] .cell-name").first).to_be_visible()
            assert readability_problems(page, board) == []
    finally:
        web.stop()
