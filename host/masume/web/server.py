"""The web view's server: a Starlette app over one table session.

The table session (``masume.play.table.TableSession``, or anything with the same
shape) gives:

- ``simulated``: True on masume's simulated board;
- ``state() -> dict``: the whole picture, JSON-able;
- ``subscribe(callback) -> unsubscribe``: ``callback()`` (from any thread) whenever
  ``state()`` may have changed;
- ``act(text)``: make one of the choices ``state()["choices"]`` lists (actions the
  sensors cannot see, e.g. declaring a system), on any board, raising
  ``ValueError`` with a readable message when it is not a choice now;
- on the simulated board only: ``sim_lift(square) -> piece``, ``sim_place(square,
  piece)``, ``sim_press(button)``, ``sim_roll(value=None)``, raising ``ValueError``
  with a readable message on misuse.

Routes:

=====================  =================================================================
``GET /``              the page (static/index.html, app.js, style.css under /static/)
``GET /api/state``     ``state()`` as JSON; ``?as=SIDE``: ``state(SIDE)``, what that player
                       may see in a game that hides cards (default: a spectator's view)
``GET /api/cards``     ``cards()``: every card of the game's set, for the card picker
``GET /api/stream``    Server-Sent Events: the full state at connect and after every
                       change (bursts coalesced to at most one push per 50 ms), a
                       comment line as heartbeat every 15 s
``POST /api/act``      ``{"action"}`` -> ``{"ok": true}``: make a choice (any board)
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

:func:`serve` runs the app with uvicorn in a background thread and returns its URL
and a stop function.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
from pathlib import Path
from typing import Any, AsyncIterator, Callable

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).with_name("static")
#: Shortest time between two pushes on one stream: at most 20 pushes a second.
MIN_PUSH_INTERVAL_S = 0.05
#: A comment line on an idle stream this often, so proxies and browsers keep it open.
HEARTBEAT_S = 15.0
NO_CACHE = {"Cache-Control": "no-cache"}


def _to_json(state: Any) -> str:
    return json.dumps(state, separators=(",", ":"), ensure_ascii=False, default=str)


class _NoCacheStatic(StaticFiles):
    """Static files the browser revalidates every time (no stale app.js after an update)."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers["Cache-Control"] = "no-cache"
        return response


class _Streams:
    """The open event streams of one app, so they can all be ended at shutdown."""

    def __init__(self) -> None:
        self.closing = threading.Event()
        self._wakers: set[Callable[[], None]] = set()
        self._lock = threading.Lock()

    def add(self, waker: Callable[[], None]) -> None:
        with self._lock:
            self._wakers.add(waker)

    def discard(self, waker: Callable[[], None]) -> None:
        with self._lock:
            self._wakers.discard(waker)

    def close_all(self) -> None:
        self.closing.set()
        with self._lock:
            wakers = list(self._wakers)
        for wake in wakers:
            wake()

    def __len__(self) -> int:
        with self._lock:
            return len(self._wakers)


class _BadRequest(Exception):
    pass


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        raise _BadRequest("the request body is not JSON") from None
    if not isinstance(data, dict):
        raise _BadRequest("the request body must be a JSON object")
    return data


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise _BadRequest(f"{key!r} is required (a non-empty string)")
    return value


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def create_app(
    table: Any,
    *,
    heartbeat_s: float = HEARTBEAT_S,
    min_push_interval_s: float = MIN_PUSH_INTERVAL_S,
) -> Starlette:
    """The web view's app for one table session (see the module docstring)."""
    streams = _Streams()

    async def index(request: Request) -> Response:
        return FileResponse(STATIC_DIR / "index.html", headers=NO_CACHE)

    def state_for(request: Request) -> Callable[[], Any]:
        viewer = request.query_params.get("as")
        return (lambda: table.state(viewer)) if viewer else table.state

    async def api_state(request: Request) -> Response:
        state = await run_in_threadpool(state_for(request))
        return Response(
            _to_json(state), media_type="application/json", headers={"Cache-Control": "no-store"}
        )

    async def api_stream(request: Request) -> Response:
        loop = asyncio.get_running_loop()
        changed = asyncio.Event()

        def wake() -> None:
            try:
                loop.call_soon_threadsafe(changed.set)
            except RuntimeError:  # the loop is gone: the server has stopped
                pass

        streams.add(wake)
        unsubscribe = table.subscribe(wake)
        state = state_for(request)

        async def events() -> AsyncIterator[str]:
            try:
                yield "retry: 1000\n\n"
                last = None
                while not streams.closing.is_set():
                    changed.clear()
                    body = _to_json(await run_in_threadpool(state))
                    if body != last:
                        yield f"data: {body}\n\n"
                        last = body
                    pushed = loop.time()
                    try:
                        await asyncio.wait_for(changed.wait(), heartbeat_s)
                    except TimeoutError:
                        yield ": heartbeat\n\n"
                        continue
                    # Coalesce a burst of changes into one push.
                    wait = min_push_interval_s - (loop.time() - pushed)
                    if wait > 0:
                        await asyncio.sleep(wait)
            finally:
                streams.discard(wake)
                unsubscribe()

        return StreamingResponse(
            events(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    def post_route(action: Callable[[dict[str, Any]], dict[str, Any]], *, sim_only: bool = True):
        async def endpoint(request: Request) -> Response:
            if sim_only and not getattr(table, "simulated", False):
                return _error(
                    "this is a real board: the page only mirrors it; "
                    "move the pieces and press the buttons on the board itself",
                    409,
                )
            try:
                data = await _body(request)
                result = await run_in_threadpool(action, data)
            except _BadRequest as exc:
                return _error(str(exc), 400)
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

    def lift(data: dict[str, Any]) -> dict[str, Any]:
        return {"piece": table.sim_lift(_text(data, "square"))}

    def place(data: dict[str, Any]) -> dict[str, Any]:
        table.sim_place(_text(data, "square"), _text(data, "piece"))
        return {}

    def place_card(data: dict[str, Any]) -> dict[str, Any]:
        table.sim_place_card(_text(data, "square"), _text(data, "card"))
        return {}

    async def api_cards(request: Request) -> Response:
        cards = getattr(table, "cards", None)
        found = await run_in_threadpool(cards) if cards else []
        return JSONResponse({"cards": found})

    def press(data: dict[str, Any]) -> dict[str, Any]:
        table.sim_press(_text(data, "button"))
        return {}

    def roll(data: dict[str, Any]) -> dict[str, Any]:
        value = data.get("value")
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise _BadRequest("'value' must be a whole number, or left out for a random roll")
        table.sim_roll(value)
        return {}

    app = Starlette(
        routes=[
            Route("/", index),
            Route("/api/state", api_state),
            Route("/api/stream", api_stream),
            Route("/api/act", post_route(act, sim_only=False), methods=["POST"]),
            Route("/api/sim/lift", post_route(lift), methods=["POST"]),
            Route("/api/sim/place", post_route(place), methods=["POST"]),
            Route("/api/sim/card", post_route(place_card), methods=["POST"]),
            Route("/api/cards", api_cards),
            Route("/api/sim/press", post_route(press), methods=["POST"]),
            Route("/api/sim/roll", post_route(roll), methods=["POST"]),
            Mount("/static", _NoCacheStatic(directory=STATIC_DIR), name="static"),
        ]
    )
    app.state.table = table
    app.state.streams = streams
    return app


def _url_host(host: str) -> str:
    if host in ("", "0.0.0.0"):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def serve(
    table: Any, host: str = "127.0.0.1", port: int = 0, **options: Any
) -> tuple[str, Callable[[], None]]:
    """Run the web view with uvicorn in a background thread.

    ``port=0`` picks a free port. Returns the page's URL (e.g.
    ``http://127.0.0.1:41234/``) and ``stop()``, which ends the open event streams
    and the server and waits for its thread. ``options`` go to :func:`create_app`.
    """
    import uvicorn

    app = create_app(table, **options)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot serve the web view on {host}:{port}: {exc}") from exc
    real_port = sock.getsockname()[1]

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
        except BaseException as exc:  # reported to the caller below
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
        server.should_exit = True
        thread.join(10)

    return f"http://{_url_host(host)}:{real_port}/", stop
