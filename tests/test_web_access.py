"""Who gets into the local web view: real HTTP requests with hostile headers against
the real server (uvicorn on a free port), over the in-memory table of test_web and
over a running `masume play`.

Each run has a secret per person (the table, each player, the spectators): no
secret, 403; a foreign Host (DNS rebinding) or Origin (another site's page), 403;
a POST that is not JSON, 415; a body over the limit, 413 while it arrives; a body
nested too deep, 400. A player's hidden cards only with that player's link.
"""

from __future__ import annotations

import json
import re
import select
import socket
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from masume.web import serve
from masume.web.guard import LOOPBACK_NAMES, MAX_BODY_BYTES, HostNames, machine_names
from masume.web.server import lan_address, qr_svg
from test_web import FakeTable, at

SIDES = ("blue", "red")


@pytest.fixture
def table() -> FakeTable:
    return FakeTable()


@pytest.fixture
def web(table: FakeTable):
    view = serve(table)
    yield view
    view.stop()


def base(link: str) -> str:
    return link.split("?")[0]


def port_of(link: str) -> int:
    return urlsplit(link).port


def token_of(link: str) -> str:
    return urlsplit(link).query.removeprefix("token=")


# ---- the secret ----------------------------------------------------------------------


def test_every_request_needs_the_runs_secret(web, table: FakeTable) -> None:
    url = base(web.url)
    page = httpx.get(url)
    assert page.status_code == 403
    assert "text/html" in page.headers["content-type"]
    assert "open the address the terminal printed" in page.text
    assert "web view for spectators" in page.text
    for path in ("api/state", "api/stream", "api/cards", "api/access", "static/app.js",
                 "api/state?as=blue"):
        assert httpx.get(url + path).status_code == 403, path
    r = httpx.post(url + "api/sim/lift", json={"square": "C5"})
    assert r.status_code == 403 and "masume printed" in r.json()["error"]
    # A wrong secret, or one of an earlier run, is no better.
    other = serve(FakeTable())
    try:
        for stale in (other.url, web.url[:-3] + "abc"):
            assert httpx.get(at(url + "?" + urlsplit(stale).query, "api/state")).status_code == 403
    finally:
        other.stop()
    assert table.calls == []


def test_the_link_sets_a_strict_cookie_for_the_pages_requests(web) -> None:
    client = httpx.Client()
    page = client.get(web.link("blue"))
    assert page.status_code == 200
    cookie = page.headers["set-cookie"]
    assert cookie.startswith(f"masume-{port_of(web.url)}-blue={token_of(web.link('blue'))};")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    url = base(web.url)
    # The page's own requests: the cookie, found by the role the page names.
    assert client.get(url + "api/state?as=blue").status_code == 200
    assert client.get(url + "static/app.js").status_code == 200
    assert client.get(url + "api/access?as=blue").json()["role"] == "blue"
    assert client.get(url + "api/state").status_code == 403  # the table's page: not this link
    assert client.get(url + "api/state?as=red").status_code == 403


def test_a_players_view_only_with_that_players_link(web, table: FakeTable) -> None:
    seen: list = []
    table.state = lambda viewer=None: (seen.append(viewer), {"viewer": viewer})[1]
    assert httpx.get(at(web.link("red"), "api/state")).json() == {"viewer": "red"}
    assert httpx.get(at(web.link("spectator"), "api/state")).json() == {"viewer": None}
    assert httpx.get(at(web.url, "api/state")).json() == {"viewer": None}
    for link in (web.url, web.link("blue"), web.link("spectator")):
        r = httpx.get(at(link, "api/state?as=red"))
        assert r.status_code == 403 and "not red's" in r.json()["error"]
    assert seen == ["red", None, None]


def test_a_spectator_only_watches(web, table: FakeTable) -> None:
    spectator = web.link("spectator")
    for path, body in [("api/sim/lift", {"square": "C5"}), ("api/act", {"action": "x"})]:
        r = httpx.post(at(spectator, path), json=body)
        assert r.status_code == 403 and "only watches" in r.json()["error"]
    assert httpx.get(at(spectator, "api/access")).json()["can_act"] is False
    assert httpx.post(at(web.link("red"), "api/sim/lift"), json={"square": "C5"}).status_code == 200
    assert table.calls == [("lift", "C5")]


def test_each_page_shares_only_its_own_links_with_their_qr_codes(web) -> None:
    def shared(link: str) -> dict:
        return {x["role"]: x for x in httpx.get(at(link, "api/access")).json()["links"]}

    on_table = shared(web.url)
    assert list(on_table) == ["blue", "red", "spectator"]
    for role, entry in on_table.items():
        assert entry["url"] == web.link(role)
        # The QR code is the printed link's, exactly (what a phone scans is what was printed).
        assert entry["qr"] == qr_svg(web.link(role)) and entry["qr"].startswith("<svg")
    assert list(shared(web.link("blue"))) == ["blue", "spectator"]  # never red's
    assert list(shared(web.link("spectator"))) == ["spectator"]
    access = httpx.get(at(web.url, "api/access")).json()
    assert access["role"] == "table" and access["can_act"] is True
    assert "--http-host 0.0.0.0" in access["phones"]  # 127.0.0.1: phones cannot reach it


# ---- Host and Origin ------------------------------------------------------------------


def test_a_foreign_host_is_refused_everywhere(web) -> None:
    """DNS rebinding: a page of evil.example whose name now resolves to 127.0.0.1."""
    port = port_of(web.url)
    for link, path in [(web.url, ""), (web.link("blue"), "api/state?as=blue"),
                       (web.link("blue"), "api/stream?as=blue"), (web.url, "static/app.js"),
                       (web.url, "api/access")]:
        for host in (f"evil.example:{port}", "evil.example", f"localhost.evil.example:{port}",
                     f"127.0.0.1.nip.io:{port}"):
            r = httpx.get(at(link, path), headers={"Host": host})
            assert r.status_code == 403, (path, host)
            assert "does not answer to the name" in r.text
    # Its own names are fine.
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}"):
        assert httpx.get(at(web.link("blue"), "api/state"), headers={"Host": host}).status_code == 200


def test_a_name_can_be_added_and_the_network_bind_takes_addresses_and_own_names(
        table: FakeTable) -> None:
    view = serve(table, allow_hosts=["board.club.lan"])
    try:
        port = port_of(view.url)
        ok = httpx.get(at(view.url, "api/state"), headers={"Host": f"board.club.lan:{port}"})
        assert ok.status_code == 200
    finally:
        view.stop()
    network = HostNames.for_bind("0.0.0.0")
    for name in ("192.168.1.23", "10.0.0.5", "[fe80::1]", "localhost", *machine_names()):
        assert name in network, name
    assert "evil.example" not in network
    loopback = HostNames.for_bind("127.0.0.1")
    assert "192.168.1.23" not in loopback and "[fe80::1]" not in loopback
    if socket.gethostname().lower() not in LOOPBACK_NAMES:
        assert socket.gethostname() not in loopback
    view = serve(table, host="0.0.0.0")
    try:
        assert urlsplit(view.url).hostname == lan_address()  # what a phone on the Wi-Fi opens
        port = port_of(view.url)
        for host in (f"{lan_address()}:{port}", f"{socket.gethostname()}:{port}"):
            r = httpx.get(f"http://127.0.0.1:{port}/api/state?{urlsplit(view.url).query}",
                          headers={"Host": host})
            assert r.status_code == 200, host
        r = httpx.get(f"http://127.0.0.1:{port}/api/state?{urlsplit(view.url).query}",
                      headers={"Host": f"evil.example:{port}"})
        assert r.status_code == 403
    finally:
        view.stop()


@pytest.mark.parametrize("origin", [
    "http://evil.example", "http://127.0.0.1:1", "https://127.0.0.1:{port}", "null",
    "http://localhost:{port}",  # another name of this machine: another origin
])
def test_a_foreign_origin_can_neither_act_nor_read(web, table: FakeTable, origin: str) -> None:
    origin = origin.format(port=port_of(web.url))
    client = httpx.Client()
    client.get(web.url)  # the victim's browser holds the cookie
    url = base(web.url)
    for path, body in [("api/sim/lift", {"square": "C5"}), ("api/act", {"action": "x"}),
                       ("api/sim/press", {"button": "confirm"})]:
        r = client.post(url + path, json=body, headers={"Origin": origin})
        assert r.status_code == 403 and "other sites" in r.text, path
        r = httpx.post(at(web.url, path), json=body, headers={"Origin": origin})
        assert r.status_code == 403, path
        # The cross-site form: a "simple" text/plain POST, with the cookie.
        r = client.post(url + path, content=json.dumps(body).encode(),
                        headers={"Origin": origin, "Content-Type": "text/plain"})
        assert r.status_code == 403, path
    r = client.get(url + "api/state", headers={"Origin": origin})
    assert r.status_code == 403
    assert table.calls == []  # nothing recorded
    # The page's own origin is welcome.
    own = f"http://127.0.0.1:{port_of(web.url)}"
    r = client.post(url + "api/sim/lift", json={"square": "C5"}, headers={"Origin": own})
    assert r.status_code == 200 and table.calls == [("lift", "C5")]


# ---- bodies ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [None, "text/plain", "application/x-www-form-urlencoded",
                                  "multipart/form-data; boundary=x", "application/jsonx"])
def test_a_post_must_be_json(web, table: FakeTable, kind: str | None) -> None:
    """What another site's page may send without asking (a "simple" request) never acts."""
    headers = {"Content-Type": kind} if kind else {}
    r = httpx.post(at(web.url, "api/sim/lift"), content=b'{"square": "C5"}', headers=headers)
    if kind is None:  # httpx sends no Content-Type for raw bytes
        assert "content-type" not in r.request.headers
    assert r.status_code == 415 and "application/json" in r.json()["error"]
    assert table.calls == []
    r = httpx.post(at(web.url, "api/sim/lift"), content=b'{"square": "C5"}',
                   headers={"Content-Type": "application/json; charset=utf-8"})
    assert r.status_code == 200


def test_deep_json_is_a_400(web, table: FakeTable) -> None:
    for body in (b'{"square":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
                 b"[" * 100_000 + b"]" * 100_000,
                 b'{"square": "C5", "x": ' + b"[" * 20 + b"]" * 20 + b"}"):
        r = httpx.post(at(web.url, "api/sim/lift"), content=body,
                       headers={"Content-Type": "application/json"})
        assert r.status_code == 400 and "nested deeper" in r.json()["error"], body[:30]
    assert table.calls == []


def rss_kib(pid: int | str = "self") -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1))


def send_huge(url: str, size: int, *, declared: bool, path: str = "api/sim/lift") -> tuple[int, int]:
    """POST ``size`` bytes of JSON-ish junk to ``path`` over a raw socket, as fast as the
    server takes them, stopping when it answers. Returns (status, bytes sent)."""
    parts = urlsplit(at(url, path))
    sock = socket.create_connection((parts.hostname, parts.port), timeout=30)
    length = f"Content-Length: {size}" if declared else "Transfer-Encoding: chunked"
    sock.sendall((f"POST {parts.path}?{parts.query} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                  f"Content-Type: application/json\r\n{length}\r\n\r\n").encode())
    chunk = b" " * 65536
    framed = chunk if declared else b"%x\r\n" % len(chunk) + chunk + b"\r\n"
    sent = 0
    try:
        while sent < size and not select.select([sock], [], [], 0)[0]:
            sock.sendall(framed)
            sent += len(chunk)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server answered and hung up: read its answer
    answer = b""
    while b"\r\n" not in answer:
        data = sock.recv(4096)
        if not data:
            break
        answer += data
    sock.close()
    return int(answer.split()[1]), sent


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
def test_a_huge_body_is_refused_as_it_arrives(web, table: FakeTable, declared: bool) -> None:
    before = rss_kib()
    status, sent = send_huge(web.url, 100 * 1024 * 1024, declared=declared)
    assert status == 413
    assert sent < 32 * 1024 * 1024, f"{sent} bytes taken before the refusal"
    grown = rss_kib() - before
    assert grown < 32 * 1024, f"the server grew by {grown} KiB"
    assert table.calls == []
    # The server still serves.
    assert httpx.get(at(web.url, "api/state")).status_code == 200
    small = b'{"square": "C5", "pad": "' + b" " * (MAX_BODY_BYTES - 100) + b'"}'
    r = httpx.post(at(web.url, "api/sim/lift"), content=small,
                   headers={"Content-Type": "application/json"})
    assert r.status_code == 200  # just under the limit: taken


# ---- `masume play`, as a user runs it ---------------------------------------------------


@pytest.mark.slow
def test_masume_play_lets_in_only_its_own_people(tmp_path: Path) -> None:
    """The real server, a real game: hostile requests change nothing, a 100 MB body does
    not grow it, and the printed links work."""
    from test_play import Play, state, wait_state

    play = Play("soccer-shogi", "--simulate", "--http-port", "0", "--games-dir", str(tmp_path),
                stdin=subprocess.DEVNULL)
    try:
        printed = {}
        line = play.until("web view: ")
        printed["table"] = line.split(": ", 1)[1]
        while "spectators" not in printed:
            label, link = play.until("web view for ").split(": ", 1)
            printed[label.removeprefix("web view for ")] = link
        assert list(printed) == ["table", "blue", "red", "spectators"]
        assert all(re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[\w-]{20,}", x)
                   for x in printed.values())
        assert len(set(printed.values())) == 4
        url = printed["table"]
        start = wait_state(url, lambda s: s["link"]["connected"]
                           and s["tracker"]["state"] == "in-sync")
        port = port_of(url)
        lift = at(url, "api/sim/lift")
        json_type = {"Content-Type": "application/json"}
        # Another site's page: a text/plain POST (no preflight), a foreign Origin.
        assert httpx.post(lift, content=b'{"square": "C5"}',
                          headers={"Content-Type": "text/plain"}).status_code == 415
        assert httpx.post(lift, json={"square": "C5"},
                          headers={"Origin": "http://evil.example"}).status_code == 403
        # DNS rebinding: the state and the stream as a player.
        for path in ("api/state", "api/stream"):
            r = httpx.get(at(printed["red"], path), headers={"Host": f"evil.example:{port}"})
            assert r.status_code == 403
        # No secret.
        assert httpx.get(base(url) + "api/state").status_code == 403
        # Deep JSON and a 100 MB body.
        deep = httpx.post(lift, content=b"[" * 100_000 + b"]" * 100_000, headers=json_type)
        assert deep.status_code == 400
        server = play.proc.pid
        before = rss_kib(server)
        for declared in (True, False):
            status, _ = send_huge(url, 100 * 1024 * 1024, declared=declared)
            assert status == 413
        grown = rss_kib(server) - before
        assert grown < 32 * 1024, f"masume play grew by {grown} KiB"
        time.sleep(1.0)  # a still board: had anything been lifted, the tracker would say so
        after = state(url)
        assert after["pieces"] == start["pieces"] and after["moves"] == []
        assert after["tracker"]["state"] == "in-sync"
        # A player's own link plays.
        assert httpx.post(at(printed["blue"], "api/sim/lift"), json={"square": "C5"}).json() == {
            "ok": True, "piece": "blue"}
        assert httpx.post(at(printed["spectators"], "api/sim/place"),
                          json={"square": "C5", "piece": "blue"}).status_code == 403
        assert httpx.post(at(printed["blue"], "api/sim/place"),
                          json={"square": "C5", "piece": "blue"}).status_code == 200
    finally:
        play.stop()
    assert play.proc.returncode == 0, play.proc.stderr.read()
    assert "game saved in " in play.printed()


# ---- the page ------------------------------------------------------------------------------


@pytest.mark.browser
def test_each_link_opens_its_own_page_in_chromium(web, table: FakeTable, tmp_path: Path,
                                                  chromium) -> None:
    from playwright.sync_api import expect

    errors: list[str] = []
    contexts: list = []

    def open_page(link: str, context=None):
        """A tab at ``link``: in a browser of its own (its own cookies), or beside the
        tabs of ``context``."""
        if context is None:
            context = chromium.new_context(viewport={"width": 1100, "height": 900})
            contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(link)
        return page

    try:
        # The table's link: the secret leaves the address bar; the players' QR codes.
        page = open_page(web.url)
        expect(page.locator("body[data-ready=true]")).to_have_count(1)
        assert page.evaluate("location.search") == ""
        expect(page.locator("#role")).to_have_text("this page: the table")
        page.locator("#links summary").click()
        figures = page.locator("#links-list figure")
        expect(figures).to_have_count(3)
        assert [f.get_attribute("data-role") for f in figures.all()] == ["blue", "red",
                                                                        "spectator"]
        for role in ("blue", "red", "spectator"):
            entry = page.locator(f'#links-list figure[data-role="{role}"]')
            assert entry.locator("a").get_attribute("href") == web.link(role)
            expect(entry.locator(".qr svg")).to_be_visible()
        expect(page.locator("#links-note")).to_contain_text("--http-host 0.0.0.0")
        page.screenshot(path=str(tmp_path / "table.png"))
        # A reload keeps working (the cookie), and so does the page's own request.
        page.reload()
        expect(page.locator("body[data-ready=true]")).to_have_count(1)
        page.locator('[data-cell="C5"]').click()
        expect(page.locator("#hand .hand-piece[data-piece='blue']")).to_have_count(1)
        assert table.calls == [("lift", "C5")]

        # A player's link, in the same browser: each tab keeps its own role.
        player = open_page(web.link("red"), page.context)
        expect(player.locator("body[data-ready=true]")).to_have_count(1)
        assert player.evaluate("location.search") == "?as=red"
        expect(player.locator("#role")).to_have_text("this page: red")
        player.locator("#links summary").click()
        assert [f.get_attribute("data-role") for f in
                player.locator("#links-list figure").all()] == ["red", "spectator"]
        player.locator('[data-cell="A2"]').click()
        expect(player.locator("#hand .hand-piece[data-piece='red']")).to_have_count(1)
        assert table.calls[-1] == ("lift", "A2")
        page.reload()
        expect(page.locator("#role")).to_have_text("this page: the table")

        # A spectator's link: no hands, no buttons, nothing happens on a click.
        watcher = open_page(web.link("spectator"))
        expect(watcher.locator("body[data-ready=true]")).to_have_count(1)
        expect(watcher.locator("#role")).to_contain_text("spectator")
        expect(watcher.locator("#sim-controls")).to_be_hidden()
        expect(watcher.locator('[data-button="confirm"]')).to_be_disabled()
        calls = len(table.calls)
        watcher.locator('[data-cell="C5"]').click()
        table.set(choices=["declare A"])
        expect(watcher.locator("#choices-card")).to_be_hidden()
        expect(page.locator("#choices [data-choice]")).to_have_text(["declare A"])
        assert len(table.calls) == calls
        watcher.screenshot(path=str(tmp_path / "spectator.png"))

        # No secret: the page says what to open.
        stranger = open_page(base(web.url))
        expect(stranger.locator("h1")).to_contain_text("open the address the terminal printed")
        stranger.screenshot(path=str(tmp_path / "denied.png"))
        assert errors == []
    finally:
        for context in contexts:
            context.close()
