"""The club's live page: spectators read the redacted view only, the arbiter's actions
need the arbiter's login. Real HTTP with hostile headers against the real server
(uvicorn on a free port), a real Mosquitto, a simulated card mat on MQTT."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from masume.club.arbiter import TRIES, read_password
from masume.club.server import ClubServer, make_assignment
from masume.club.store import ClubStore
from masume.club.web import serve
from masume.games import load_rules
from masume.play.cards import cards_of, set_up
from test_club import wait_for

pytestmark = pytest.mark.slow

PASSWORD = "correct horse battery staple"
UNIT = "table-1"
#: The first action of Eyeshield 21: a character put down face down.
SECRET = "F01.1"


@pytest.fixture
def club(broker, make_sim, tmp_path: Path):
    """A club server with one Eyeshield 21 table whose first action (a face-down
    character) has been played on the simulated mat; its live page."""
    position = load_rules("eyeshield21").start()
    sim = make_sim("eyeshield21", mqtt=broker.url, unit=UNIT)
    for cell, piece in set_up(position.layout(), position):
        sim.place(cell, piece)
    store = ClubStore(tmp_path / "club.db")
    assignment = make_assignment(UNIT, {"game": "eyeshield21", "players": ["Ann", "Bob"]})
    server = ClubServer(broker.url, store, {UNIT: assignment}).start()
    url, stop = serve(server, arbiter_password=PASSWORD)
    try:
        assert wait_for(lambda: UNIT in server.tables
                        and server.table_state(UNIT)["tracker"]["state"] == "in-sync", 60)
        sim.place("home-character-1", cards_of(position).copy(SECRET).piece)
        assert wait_for(lambda: len(server.tables[UNIT].session.game.actions) == 1)
        yield url, server, store
    finally:
        stop()
        server.close()
        store.close()


def test_a_spectator_never_sees_a_face_down_card(club) -> None:
    url, server, store = club
    copy = cards_of(server.tables[UNIT].session.game.position).copy(SECRET)
    secrets = (copy.tag, copy.id, copy.card.name)
    # The arbiter's record names it (so there is something to hide) ...
    # (saved just after the game took the action: wait for the save, not the action)
    assert wait_for(lambda: f"{SECRET}@home-character-1"
                    in (store.record(server.tables[UNIT].game_id) or ""), 30)
    # ... and nothing a spectator gets does.
    table = httpx.get(url + f"api/tables/{UNIT}").json()
    assert len(table["replay"]) == 2
    assert table["replay"][1]["home-character-1"] == ["card"]
    assert table["moves"][0]["actions"] == ["?@home-character-1"]
    with httpx.stream("GET", url + "api/stream") as stream:
        pushed = next(line for line in stream.iter_lines() if line.startswith("data:"))
    for path, text in [("tables", httpx.get(url + "api/tables").text),
                       ("table", json.dumps(table)), ("stream", pushed),
                       ("results", httpx.get(url + "api/results").text)]:
        for secret in secrets:
            assert secret not in text, (path, secret)
        assert "tag:E5" not in text, path


def test_arbiter_actions_need_the_arbiters_login(club, tmp_path: Path) -> None:
    url, server, store = club
    game_id = server.tables[UNIT].game_id
    end = url + f"api/tables/{UNIT}/end"
    assign = url + f"api/tables/{UNIT}/assign"
    new_game = {"game": "eyeshield21", "players": ["Cho", "Dan"]}

    def active() -> list:
        return [(g["id"], g["result"]) for g in store.games() if g["active"]]

    # A spectator: refused, nothing changed.
    spectator = httpx.Client(base_url=url)
    assert spectator.get("api/arbiter").json() == {"arbiter": False, "login": True}
    for path, body in [(end, {"result": "Ann wins"}), (assign, new_game)]:
        r = spectator.post(path, json=body)
        assert r.status_code == 403 and "arbiter's login" in r.json()["error"]
        # A forged cookie is no login.
        r = httpx.post(path, json=body, cookies={f"masume-club-{httpx.URL(url).port}-arbiter": "x"})
        assert r.status_code == 403
    assert active() == [(game_id, None)] and UNIT in server.tables

    # Wrong password; a login from another site's page; a text/plain login.
    assert spectator.post("api/login", json={"password": "guess"}).status_code == 403
    r = spectator.post("api/login", json={"password": PASSWORD},
                       headers={"Origin": "http://evil.example"})
    assert r.status_code == 403 and not spectator.cookies
    r = spectator.post("api/login", content=json.dumps({"password": PASSWORD}),
                       headers={"Content-Type": "text/plain"})
    assert r.status_code == 415

    # The arbiter logs in: an HttpOnly, SameSite=Strict session cookie.
    arbiter = httpx.Client(base_url=url)
    r = arbiter.post("api/login", json={"password": PASSWORD})
    assert r.status_code == 200
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert PASSWORD not in cookie
    assert arbiter.get("api/arbiter").json() == {"arbiter": True, "login": True}
    # Still no action from another site's page, even with the arbiter's cookie.
    r = arbiter.post(end, json={"result": "Ann wins"}, headers={"Origin": "http://evil.example"})
    assert r.status_code == 403 and active() == [(game_id, None)]
    assert arbiter.post(end, json={"result": "x" * 500}).status_code == 400
    assert arbiter.post(url + "api/tables/nowhere/end", json={"result": "draw"}).status_code == 404

    # The arbiter ends the game: stored with its result; the table waits.
    r = arbiter.post(end, json={"result": "Ann wins on time"})
    assert r.status_code == 200, r.text
    assert active() == []
    assert [g["result"] for g in store.games() if g["id"] == game_id] == ["Ann wins on time"]
    shown = httpx.get(url + f"api/tables/{UNIT}").json()
    assert shown["running"] is False and shown["result"] == "Ann wins on time"

    # A new game for the table, then logged out: refused again.
    assert arbiter.post(assign, json=new_game).status_code == 200
    assert wait_for(lambda: UNIT in server.tables and server.tables[UNIT].game_id != game_id)
    assert server.table_state(UNIT)["players"] == ["Cho", "Dan"]
    assert arbiter.post("api/logout", json={}).status_code == 200
    assert arbiter.post(end, json={"result": "draw"}).status_code == 403
    assert len(active()) == 1


def test_a_game_the_arbiter_ended_stays_ended_after_a_restart(club) -> None:
    """The server stopped and started again on the same database: the table the
    arbiter ended waits for its next assignment; its game is not started again."""
    url, server, store = club
    game_id = server.tables[UNIT].game_id
    arbiter = httpx.Client(base_url=url)
    assert arbiter.post("api/login", json={"password": PASSWORD}).status_code == 200
    r = arbiter.post(f"api/tables/{UNIT}/end", json={"result": "Ann wins on time"})
    assert r.status_code == 200, r.text
    server.close()  # (the fixture's close after this is a no-op)
    again = ClubServer(server.broker, store, server.assignments).start()
    try:
        assert wait_for(lambda: UNIT in again.ended)
        assert UNIT not in again.tables
        assert [(g["id"], g["result"]) for g in store.games()] == [(game_id, "Ann wins on time")]
    finally:
        again.close()


def test_guessing_the_password_is_throttled(club) -> None:
    url, _, _ = club
    guesser = httpx.Client(base_url=url)
    for n in range(TRIES):
        assert guesser.post("api/login", json={"password": f"guess {n}"}).json()["error"] == \
            "wrong password"
    r = guesser.post("api/login", json={"password": PASSWORD})
    assert r.status_code == 403 and "too many" in r.json()["error"]


def test_the_live_page_answers_only_to_its_own_names(club) -> None:
    url, _, _ = club
    port = httpx.URL(url).port
    for path in ("", "api/tables", f"api/tables/{UNIT}", "api/stream"):
        r = httpx.get(url + path, headers={"Host": f"evil.example:{port}"})
        assert r.status_code == 403, path
    deep = httpx.post(url + "api/login", content=b"[" * 100_000 + b"]" * 100_000,
                      headers={"Content-Type": "application/json"})
    assert deep.status_code == 400
    huge = httpx.post(url + "api/login", content=b" " * (2 << 20),
                      headers={"Content-Type": "application/json"})
    assert huge.status_code == 413


def test_the_password_comes_from_a_file_or_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "arbiter"
    path.write_text(PASSWORD + "\n")
    assert read_password(path, {}) == PASSWORD
    assert read_password(None, {"MASUME_ARBITER_PASSWORD": "env"}) == "env"
    assert read_password(None, {}) is None
    path.write_text("\n")
    with pytest.raises(ValueError, match="empty"):
        read_password(path, {})
    with pytest.raises(ValueError, match="cannot read"):
        read_password(tmp_path / "missing", {})


def test_the_health_report_is_read_only_and_names_no_card(club) -> None:
    """/api/health: every worker's state for an organiser (and `masume bench faults`);
    names and counts only, read only."""
    url, server, store = club
    answer = httpx.get(url + "api/health")
    assert answer.status_code == 200
    health = answer.json()
    assert health["tables"][UNIT]["table"]["alive"] and health["tables"][UNIT]["link"]["alive"]
    assert health["hub"]["alive"] and all(w["alive"] for w in health["server"].values())
    copy = cards_of(server.tables[UNIT].session.game.position).copy(SECRET)
    assert not [s for s in (copy.tag, copy.id, copy.card.name) if s in answer.text]
    assert httpx.post(url + "api/health", json={}).status_code == 405
    assert httpx.get(url + "api/health", headers={"Host": "evil.example"}).status_code == 403
