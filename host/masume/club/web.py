"""The club's live page: every table at a glance, a page per table with the move
list and a replay slider, pushed by server-sent events within a second.

    GET  /                       all tables (static/club.html)
    GET  /table/{unit}           one table (the same page, table view)
    GET  /api/tables             every table's state
    GET  /api/tables/{unit}      one table's state, with every position for the replay
    GET  /api/stream             SSE: the overview whenever a table changes
    GET  /api/results            every game of the event and its result
    GET  /api/arbiter            {"arbiter": logged in?, "login": is there an arbiter?}
    POST /api/login              {"password"}: the arbiter's session cookie
    POST /api/logout
    POST /api/tables/{unit}/assign {"game": ..., "players": [first, second]}   (arbiter)
                                 (and "computer": SIDE, "level": LEVEL: the computer plays)
    POST /api/tables/{unit}/end    {"result": "blue wins on time"}             (arbiter)

Spectators read: everything they get is the spectator's view of a table
(``TableSession.state()`` with no viewer, through masume.play.cards.for_viewer),
and the replay's positions through the same :func:`masume.play.cards.public_pieces`:
no face-down card's tag or name. Arbiter actions need the arbiter's login
(:mod:`masume.club.arbiter`): 403 without it. Every request passes the gates of
:mod:`masume.web.guard` (Host, Origin, JSON bodies of bounded size and depth).
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from masume.club.arbiter import Arbiter
from masume.play.cards import public_pieces
from masume.web.guard import BadRequest, Guard, HostNames, read_json
from masume.web.server import url_host
from masume.web.sse import Streams, event_stream

if TYPE_CHECKING:
    from masume.club.server import ClubServer

STATIC = Path(__file__).parent / "static"
PUSH_INTERVAL_S = 0.2  # at most five pushes a second, whatever the boards do
#: The longest result an arbiter may give a game.
MAX_RESULT = 120


def _overview(server: ClubServer) -> list[dict[str, Any]]:
    out = []
    for state in server.overview():
        if state.get("running"):
            state = {k: state[k] for k in ("table", "game", "players", "online", "running",
                                           "board", "pieces", "leds", "status", "outcome",
                                           "game_id", "connected", "tracker", "health", "advice")
                     if k in state}
            table = server.table_state(state["table"]) or {}
            state["moves_count"] = sum(len(t["actions"]) for t in table.get("moves", []))
        out.append(state)
    return out


def _table(server: ClubServer, unit: str) -> dict[str, Any] | None:
    state = server.table_state(unit)
    if state is None or not state.get("running"):
        return state
    table = server.tables.get(unit)
    if table is not None:
        state["replay"] = [public_pieces(pos.layout(), position=pos, board=table.board)
                           for pos in table.session.positions()]
    return state


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status)


def create_app(server: ClubServer, *, arbiter: Arbiter | None = None,
               hosts: HostNames | None = None) -> Starlette:
    """The live page of ``server``; ``arbiter``: who may change the event (default:
    nobody); ``hosts``: the names it answers to (default: the loopback's)."""
    arbiter = arbiter or Arbiter(None)
    streams = Streams()

    def is_arbiter(request: Request) -> bool:
        return arbiter.is_arbiter(request.cookies.get(arbiter.cookie))

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "club.html", headers={"Cache-Control": "no-store"})

    async def api_tables(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(_overview, server))

    async def api_table(request: Request) -> Response:
        state = await run_in_threadpool(_table, server, request.path_params["unit"])
        if state is None:
            return _error("no such table", 404)
        return JSONResponse(state)

    async def api_results(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(server.store.games))

    async def api_health(request: Request) -> Response:
        # Every worker's state and faults (masume.health): what an organiser and a
        # fault bench read. Names and counts only, nothing of any game.
        return JSONResponse(await run_in_threadpool(server.health_report),
                            headers={"Cache-Control": "no-store"})

    async def api_arbiter(request: Request) -> Response:
        return JSONResponse({"arbiter": is_arbiter(request), "login": arbiter.enabled},
                            headers={"Cache-Control": "no-store"})

    async def api_login(request: Request) -> Response:
        try:
            data = await read_json(request)
        except BadRequest as exc:
            return _error(str(exc), exc.status)
        address = request.client.host if request.client else ""
        try:
            session = arbiter.login(data.get("password"), address)
        except PermissionError as exc:
            await asyncio.sleep(0.5)  # a wrong guess costs time
            return _error(str(exc), 403)
        response = JSONResponse({"ok": True, "arbiter": True})
        response.set_cookie(arbiter.cookie, session, httponly=True, samesite="strict", path="/")
        return response

    async def api_logout(request: Request) -> Response:
        arbiter.logout(request.cookies.get(arbiter.cookie))
        response = JSONResponse({"ok": True, "arbiter": False})
        response.delete_cookie(arbiter.cookie, path="/")
        return response

    def arbiter_action(action: Callable[[str, dict[str, Any]], None],
                       ) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            if not is_arbiter(request):
                return _error("the arbiter's login is needed: spectators only watch", 403)
            try:
                data = await read_json(request)
                await run_in_threadpool(action, request.path_params["unit"], data)
            except BadRequest as exc:
                return _error(str(exc), exc.status)
            except KeyError as exc:
                return _error(str(exc.args[0]) if exc.args else "no such table", 404)
            except ValueError as exc:
                return _error(str(exc), 400)
            return JSONResponse({"ok": True})

        return endpoint

    def assign(unit: str, data: dict[str, Any]) -> None:
        from masume.club.server import make_assignment

        server.assign(make_assignment(unit, data))  # AssignmentError is a ValueError

    def end(unit: str, data: dict[str, Any]) -> None:
        result = data.get("result")
        if not isinstance(result, str) or not result.strip() or len(result) > MAX_RESULT \
                or not result.isprintable():
            raise ValueError(f"'result' is required: one line of at most {MAX_RESULT} "
                             "characters (\"blue wins on time\", \"draw\", \"abandoned\")")
        if unit not in server.assignments:
            raise KeyError(f"no table {unit!r} at this event")
        server.end(unit, result.strip())

    async def api_stream(request: Request) -> Response:
        def subscribe(wake: Callable[[], None]) -> Callable[[], None]:
            return server.subscribe(lambda unit: wake())

        return event_stream(lambda: _overview(server), subscribe, streams,
                            min_push_interval_s=PUSH_INTERVAL_S)

    app = Starlette(routes=[
        Route("/", page),
        Route("/table/{unit}", page),
        Route("/api/tables", api_tables),
        Route("/api/tables/{unit}", api_table),
        Route("/api/tables/{unit}/assign", arbiter_action(assign), methods=["POST"]),
        Route("/api/tables/{unit}/end", arbiter_action(end), methods=["POST"]),
        Route("/api/results", api_results),
        Route("/api/health", api_health),
        Route("/api/stream", api_stream),
        Route("/api/arbiter", api_arbiter),
        Route("/api/login", api_login, methods=["POST"]),
        Route("/api/logout", api_logout, methods=["POST"]),
    ], middleware=[Middleware(Guard, hosts=hosts or HostNames.for_bind("127.0.0.1"))])
    app.state.streams = streams
    return app


def serve(server: ClubServer, host: str = "127.0.0.1", port: int = 0, *,
          arbiter_password: str | None = None,
          allow_hosts: Iterable[str] = ()) -> tuple[str, Callable[[], None]]:
    """Run the live page with uvicorn in a thread; (url, stop). ``arbiter_password``:
    the arbiter's (None: nobody may change the event from the page); ``allow_hosts``:
    more names the page is reached by (:class:`masume.web.guard.HostNames`)."""
    import uvicorn

    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    real_port = sock.getsockname()[1]
    app = create_app(server, arbiter=Arbiter(arbiter_password, f"masume-club-{real_port}-arbiter"),
                     hosts=HostNames.for_bind(host, allow_hosts))
    config = uvicorn.Config(app, host=host, port=real_port, log_level="warning", access_log=False,
                            lifespan="off", ws="none", timeout_graceful_shutdown=1)
    web = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: web.run(sockets=[sock]), name="club-web", daemon=True)
    thread.start()
    while not web.started and thread.is_alive():
        thread.join(0.01)

    def stop() -> None:
        app.state.streams.close_all()
        web.should_exit = True
        thread.join(5)
        sock.close()

    return f"http://{url_host(host)}:{real_port}/", stop
