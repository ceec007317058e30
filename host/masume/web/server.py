"""The web view's server: a Starlette app over one table session.

The table session (``masume.play.table.TableSession``, or anything else that is a
:class:`masume.play.face.TableFace`) gives:

- ``simulated``: True on masume's simulated board;
- ``sides``: the game's sides (each player gets a link of their own);
- ``computer``: the side the computer plays, or None: it gets no link (its page would
  show the computer's hand);
- ``state(viewer=None) -> dict``: the whole picture, JSON-able, as ``viewer`` (a
  side, or None: anyone) may see it in a game that hides cards;
- ``subscribe(callback) -> unsubscribe``: ``callback()`` (from any thread) whenever
  ``state()`` may have changed;
- ``act(text)``: make one of the choices ``state()["choices"]`` lists (actions the
  sensors cannot see, e.g. declaring a system), on any board, raising
  ``ValueError`` with a readable message when it is not a choice now;
- on the simulated board only: ``sim_lift(square) -> piece``, ``sim_place(square,
  piece)``, ``sim_press(button)``, ``sim_roll(value=None)``, raising ``ValueError``
  with a readable message on misuse.

Who gets in (:mod:`masume.web.access`, :mod:`masume.web.guard`): every request needs
this run's token for its role (``?token=`` in a printed link, then the cookie the
page sets; the page's requests add ``?as=ROLE``), else 403 (a page that says to
open the address the terminal printed); a ``Host`` other than this server's names
or an ``Origin`` other than its own pages: 403; a POST from a spectator: 403; a
POST body that is not ``application/json``: 415, over 1 MiB: 413, nested too deep: 400.

Routes:

=====================  =================================================================
``GET /``              the page (static/index.html, app.js, style.css under /static/);
                       ``?token=``: the link's role, remembered in a cookie
``GET /api/access``    the page's role, whose cards it sees, whether it may act, and
                       the links it may share (URL and QR code as SVG)
``GET /api/state``     ``state(viewer)`` as JSON, ``viewer`` the role's side (a
                       player's link) or None (the table's, a spectator's)
``GET /api/cards``     ``cards()``: every card of the game's set, for the card picker
``GET /api/stream``    Server-Sent Events: the full state at connect and after every
                       change (bursts coalesced to at most one push per 50 ms), a
                       comment line as heartbeat every 15 s
``POST /api/act``      ``{"action"}`` -> ``{"ok": true}``: make a choice (any board)
``POST /api/hint``     ``{}`` -> ``{"ok": true}``: light the best action for the side to
                       act, once found (any board; ``state()["advice"]``)
``POST /api/review``   ``{}`` or ``{"record": text}`` -> ``{"ok": true, "id", "status"}``: the
                       computer's review of the table's finished game, or of a record
                       of a game this board plays (a player's page only; 403 for a
                       spectator's) (masume.play.review): made on a
                       worker thread of its own, kept by the record; 400 saying why
                       when the record cannot be read or the game is not over
``GET /api/review/{id}`` the review: its progress (``done`` of ``total``), the comments,
                       and (unless ``?steps=0``) every position as anyone saw it; 404
                       for a review this view does not hold
``POST /api/sim/lift`` ``{"square"}`` -> ``{"ok": true, "piece": name}``
``POST /api/sim/place`` ``{"square", "piece"}`` -> ``{"ok": true}``
``POST /api/sim/card`` ``{"square", "card"}`` -> ``{"ok": true}``: put that card of the set
                       down (the simulated mat reads its tag)
``POST /api/sim/press`` ``{"button"}`` -> ``{"ok": true}``
``POST /api/sim/roll`` ``{"value"?}`` -> ``{"ok": true}``
=====================  =================================================================

All POST routes answer 400 ``{"error": ...}`` on a bad request or when the table
refuses; the sim routes answer 409 when the board is a real one (the page then
only mirrors its pieces; choices are still made on the page).

:func:`serve` runs the app with uvicorn in a background thread and returns its
links and a stop function.
"""

from __future__ import annotations

import functools
import html
import logging
import socket
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    Response,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from masume.ai import Level
from masume.play.face import TableFace
from masume.play.review import REVIEW_LEVEL, ReviewRefused, Reviews
from masume.web.access import Access, Denied, Link
from masume.web.guard import BadRequest, Guard, HostNames, is_loopback, read_json
from masume.web.sse import HEARTBEAT_S, Streams, event_stream, to_json

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).with_name("static")
#: The review's client, this page's and the club's (masume.club.web serves it too).
REVIEW_SCRIPT = STATIC_DIR / "review.js"
#: A Japanese font, served to the pages (Shogi-piece soccer's kanji on a phone or a
#: machine without one): Debian's fonts-noto-cjk, which scripts/setup installs.
CJK_FONT = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
#: Shortest time between two pushes on one stream: at most 20 pushes a second.
MIN_PUSH_INTERVAL_S = 0.05


class _GatedStatic(StaticFiles):
    """The page's static files, for holders of a link only, revalidated every time
    (no stale app.js after an update)."""

    def __init__(self, *, access: Access, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.access.any_role(Request(scope)):
            await _denied(Request(scope), Denied())(scope, receive, send)
            return
        await super().__call__(scope, receive, send)

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers["Cache-Control"] = "no-cache"
        return response


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise BadRequest(f"{key!r} is required (a non-empty string)")
    return value


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def review_response(reviews: Reviews, request: Request, how: str) -> Response:
    """``GET /api/review/{review}`` (this page's and the club's): the review kept by
    that id (``?steps=0``: without the positions), or 404 saying ``how`` to ask."""
    review_id = request.path_params["review"]
    review = reviews.get(review_id)
    if review is None:
        return _error(f"no review {review_id!r} here: ask for one ({how})", 404)
    steps = request.query_params.get("steps") != "0"
    return JSONResponse(review.view(steps=steps), headers={"Cache-Control": "no-store"})


DENIED_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>masume: open your link</title>
<style>body{{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}}
pre{{background:#f2f2ee;padding:.6rem;overflow-x:auto}}</style></head>
<body><h1>masume: open the address the terminal printed</h1>
<p>{why}.</p>
<p>Each time <code>masume play</code> starts, it prints one address per person, each
with its own secret:</p>
<pre>web view: http://&hellip;/?token=&hellip;
web view for &lt;player&gt;: http://&hellip;/?token=&hellip;
web view for spectators: http://&hellip;/?token=&hellip;</pre>
<p>Open yours (a player's phone can scan its QR code on the table's page). An address
from an earlier game no longer opens this one.</p></body></html>
"""


def _denied(request: Request, exc: Exception) -> Response:
    why = str(exc) or "this page was opened without its link's secret"
    if request.url.path.startswith(("/api/", "/static/")):
        return _error(f"{why}: open the address masume printed when it started", 403)
    return HTMLResponse(DENIED_PAGE.format(why=html.escape(why)), status_code=403)


@functools.lru_cache(maxsize=64)
def qr_svg(url: str) -> str:
    """A QR code of ``url`` as inline SVG, for a phone to scan off the page."""
    import segno

    return segno.make(url, error="m").svg_inline(scale=4, border=2, dark="#111", light="#fff")


def create_app(
    table: TableFace,
    *,
    access: Access | None = None,
    hosts: HostNames | None = None,
    heartbeat_s: float = HEARTBEAT_S,
    min_push_interval_s: float = MIN_PUSH_INTERVAL_S,
    review_level: Level = REVIEW_LEVEL,
) -> Starlette:
    """The web view's app for one table session (see the module docstring).

    ``access``: the run's links (default: new ones at ``http://127.0.0.1/``);
    ``hosts``: the names it answers to (default: the loopback's); ``review_level``: the
    review's search a position (masume.play.review)."""
    access = access or Access(table.sides, "http://127.0.0.1/", table.computer)
    hosts = hosts or HostNames.for_bind("127.0.0.1")
    streams = Streams()
    reviews = Reviews(review_level)

    def viewing(request: Request) -> Callable[[], Any]:
        """What a request may see: ``state(viewer)`` for its role's viewer."""
        viewer = access.viewer(access.role(request))
        return (lambda: table.state(viewer)) if viewer else table.state

    async def index(request: Request) -> Response:
        role = access.role(request)
        response = FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-store"})
        if "token" in request.query_params:
            name, value = access.cookie(role)
            response.set_cookie(name, value, httponly=True, samesite="strict", path="/")
        return response

    async def cjk_font(request: Request) -> Response:
        if not CJK_FONT.is_file():
            return _error("no Japanese font on the host (apt-get install fonts-noto-cjk)", 404)
        return FileResponse(CJK_FONT, media_type="font/collection",
                            headers={"Cache-Control": "max-age=86400"})

    async def api_access(request: Request) -> Response:
        role = access.role(request)

        def described(link: Link) -> dict[str, str]:
            return {"role": link.role, "label": link.label, "url": link.url,
                    "qr": qr_svg(link.url)}

        links = await run_in_threadpool(lambda: [described(x) for x in access.shareable(role)])
        phones = None
        if is_loopback(urlsplit(access.base_url).hostname or ""):
            phones = ("phones cannot open this address: start masume play with "
                      "--http-host 0.0.0.0 to play from phones on this network")
        return JSONResponse({"role": role, "viewer": access.viewer(role),
                             "can_act": access.can_act(role), "links": links, "phones": phones},
                            headers={"Cache-Control": "no-store"})

    async def api_state(request: Request) -> Response:
        state = await run_in_threadpool(viewing(request))
        return Response(
            to_json(state), media_type="application/json", headers={"Cache-Control": "no-store"}
        )

    async def api_stream(request: Request) -> Response:
        return event_stream(viewing(request), table.subscribe, streams,
                            min_push_interval_s=min_push_interval_s, heartbeat_s=heartbeat_s)

    def post_route(action: Callable[[dict[str, Any]], dict[str, Any]], *,
                   sim_only: bool = True) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            role = access.role(request)
            if not access.can_act(role):
                return _error("a spectator's page only watches: the players move "
                              "with their own links", 403)
            if sim_only and not table.simulated:
                return _error(
                    "this is a real board: the page only mirrors it; "
                    "move the pieces and press the buttons on the board itself",
                    409,
                )
            try:
                data = await read_json(request)
                result = await run_in_threadpool(action, data)
            except BadRequest as exc:
                return _error(str(exc), exc.status)
            except KeyError as exc:
                return _error(str(exc.args[0]) if exc.args else "not found", 400)
            except ValueError as exc:
                return _error(str(exc) or type(exc).__name__, 400)
            except Exception as exc:  # a bug below us; tell the page rather than hang up
                log.exception("request %s failed", request.url.path)
                return _error(f"{type(exc).__name__}: {exc}", 500)
            return JSONResponse({"ok": True, **result})

        return endpoint

    def act(data: dict[str, Any]) -> dict[str, Any]:
        table.act(_text(data, "action"))
        return {}

    def new_game(data: dict[str, Any]) -> dict[str, Any]:
        table.new_game()
        return {}

    def hint(data: dict[str, Any]) -> dict[str, Any]:
        table.hint()
        return {}

    async def api_review(request: Request) -> Response:
        # Any role may ask for the table's game (a spectator too: reading a finished game
        # changes nothing); a record sent, only a player. A review is kept by its record,
        # and one worker makes them one at a time.
        role = access.role(request)
        try:
            data = await read_json(request)
            text = data.get("record")
            if text is not None and (not isinstance(text, str) or not text.strip()):
                raise BadRequest("'record' must be a record's text (masume.records), "
                                 "or left out for this table's game")
            if text is not None and not access.can_act(role):
                return _error("a spectator's page reviews the table's game only", 403)
            review = await run_in_threadpool(
                reviews.ask, text if text is not None else table.record(), table.board)
        except BadRequest as exc:
            return _error(str(exc), exc.status)
        except ReviewRefused as exc:
            return _error(str(exc), 400)
        return JSONResponse({"ok": True, "id": review.id, "status": review.status})

    async def api_review_of(request: Request) -> Response:
        access.role(request)
        return review_response(reviews, request, "the page's Review button; a review is kept "
                                                 "while masume play runs")

    def lift(data: dict[str, Any]) -> dict[str, Any]:
        return {"piece": table.sim_lift(_text(data, "square"))}

    def place(data: dict[str, Any]) -> dict[str, Any]:
        table.sim_place(_text(data, "square"), _text(data, "piece"))
        return {}

    def place_card(data: dict[str, Any]) -> dict[str, Any]:
        table.sim_place_card(_text(data, "square"), _text(data, "card"))
        return {}

    async def api_cards(request: Request) -> Response:
        access.role(request)
        found = await run_in_threadpool(table.cards)
        return JSONResponse({"cards": found})

    def press(data: dict[str, Any]) -> dict[str, Any]:
        table.sim_press(_text(data, "button"))
        return {}

    def roll(data: dict[str, Any]) -> dict[str, Any]:
        value = data.get("value")
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise BadRequest("'value' must be a whole number, or left out for a random roll")
        table.sim_roll(value)
        return {}

    app = Starlette(
        routes=[
            Route("/", index),
            Route("/api/access", api_access),
            Route("/fonts/cjk", cjk_font),
            Route("/api/state", api_state),
            Route("/api/stream", api_stream),
            Route("/api/act", post_route(act, sim_only=False), methods=["POST"]),
            Route("/api/new-game", post_route(new_game, sim_only=False), methods=["POST"]),
            Route("/api/hint", post_route(hint, sim_only=False), methods=["POST"]),
            Route("/api/review", api_review, methods=["POST"]),
            Route("/api/review/{review}", api_review_of),
            Route("/api/sim/lift", post_route(lift), methods=["POST"]),
            Route("/api/sim/place", post_route(place), methods=["POST"]),
            Route("/api/sim/card", post_route(place_card), methods=["POST"]),
            Route("/api/cards", api_cards),
            Route("/api/sim/press", post_route(press), methods=["POST"]),
            Route("/api/sim/roll", post_route(roll), methods=["POST"]),
            Mount("/static", _GatedStatic(access=access, directory=STATIC_DIR), name="static"),
        ],
        middleware=[Middleware(Guard, hosts=hosts)],
        exception_handlers={Denied: _denied},
    )
    app.state.table = table
    app.state.streams = streams
    app.state.access = access
    app.state.reviews = reviews
    return app


def lan_address() -> str:
    """This machine's address on its network (what a phone on the same Wi-Fi opens),
    or 127.0.0.1 when it has none. A UDP socket "connected" to an outside address
    takes the address its route would use; nothing is sent."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed anywhere
            address: str = probe.getsockname()[0]
            return address
        except OSError:
            return "127.0.0.1"


def url_host(host: str) -> str:
    """How a URL names a server bound to ``host`` (all interfaces: its LAN address)."""
    if host in ("", "0.0.0.0", "::"):
        return lan_address()
    return f"[{host}]" if ":" in host else host


@dataclass(frozen=True)
class WebView:
    """A running web view: its links (the table's first) and how to stop it."""

    links: list[Link]
    stop: Callable[[], None]

    @property
    def url(self) -> str:
        """The table's link (``web view:``): the one page that plays the game."""
        return self.links[0].url

    def link(self, role: str) -> str:
        return next(x.url for x in self.links if x.role == role)


def listen(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """The web view's listening socket on ``host``:``port``; OSError, saying so, when the
    port is taken (bound first, so that ``masume play`` refuses a busy port before it
    makes anything)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot serve the web view on {host}:{port}: {exc.strerror or exc}"
                      ) from exc
    return sock


def serve(
    table: TableFace, host: str = "127.0.0.1", port: int = 0, *, allow_hosts: Iterable[str] = (),
    sock: socket.socket | None = None, **options: Any
) -> WebView:
    """Run the web view with uvicorn in a background thread.

    ``port=0`` picks a free port; ``sock``: a socket :func:`listen` bound already (then
    ``port`` is its). ``allow_hosts``: more names the server answers to
    (beside its own, see :class:`masume.web.guard.HostNames`). Returns the links
    (e.g. ``http://127.0.0.1:41234/?token=...``) and ``stop()``, which ends the
    open event streams and the server and waits for its thread. ``options`` go to
    :func:`create_app`.
    """
    import uvicorn

    if sock is None:
        sock = listen(host, port)
    real_port = sock.getsockname()[1]
    access = Access(table.sides, f"http://{url_host(host)}:{real_port}/", table.computer)
    app = create_app(table, access=access, hosts=HostNames.for_bind(host, allow_hosts),
                     **options)

    config = uvicorn.Config(
        app,
        host=host,
        port=real_port,
        log_level="warning",
        access_log=False,
        lifespan="off",
        ws="none",
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # noqa: BLE001 (reported to the caller below)
            failure.append(exc)
        finally:
            sock.close()

    thread = threading.Thread(target=run, name=f"masume-web:{real_port}", daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError(f"the web view did not start: {failure[0] if failure else 'exited'}")
        thread.join(0.01)

    stopped = threading.Lock()

    def stop() -> None:
        if not stopped.acquire(blocking=False):
            return
        app.state.streams.close_all()
        app.state.reviews.close()
        server.should_exit = True
        thread.join(10)

    return WebView(access.links(), stop)
