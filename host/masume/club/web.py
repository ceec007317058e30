"""The club's live page: every table at a glance, a page per table with the move
list and a replay slider, pushed by server-sent events within a second.

    GET  /                       all tables (static/club.html)
    GET  /table/{unit}           one table (the same page, table view)
    GET  /api/tables             every table's state
    GET  /api/tables/{unit}      one table's state, with every position for the replay
    GET  /api/stream             SSE: the overview whenever a table changes
    GET  /api/results            every game of the event and its result
    POST /api/tables/{unit}/assign {"game": ..., "players": [first, second]}
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from pathlib import Path
from typing import Any, AsyncIterator, Callable

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

STATIC = Path(__file__).parent / "static"
PUSH_INTERVAL_S = 0.2  # at most five pushes a second, whatever the boards do
HEARTBEAT_S = 15.0


def _overview(server) -> list[dict[str, Any]]:
    out = []
    for state in server.overview():
        if state.get("running"):
            state = {k: state[k] for k in ("table", "game", "players", "online", "running",
                                           "board", "pieces", "leds", "status", "outcome",
                                           "game_id", "connected", "tracker") if k in state}
            state["moves_count"] = sum(len(t["actions"]) for t in server.table_state(
                state["table"]).get("moves", []))
        out.append(state)
    return out


def _table(server, unit: str) -> dict[str, Any] | None:
    state = server.table_state(unit)
    if state is None or not state.get("running"):
        return state
    table = server.tables.get(unit)
    if table is not None:
        state["replay"] = [{sq: list(p) for sq, p in pos.layout().items()}
                           for pos in table.session.positions()]
    return state


def create_app(server) -> Starlette:
    wakers: set[Callable[[], None]] = set()
    closing = threading.Event()

    def changed(unit: str) -> None:
        for wake in list(wakers):
            wake()

    server.subscribe(changed)

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "club.html", headers={"Cache-Control": "no-store"})

    async def api_tables(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(_overview, server))

    async def api_table(request: Request) -> Response:
        state = await run_in_threadpool(_table, server, request.path_params["unit"])
        if state is None:
            return JSONResponse({"error": "no such table"}, 404)
        return JSONResponse(state)

    async def api_results(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(server.store.games))

    async def api_assign(request: Request) -> Response:
        from masume.club.server import AssignmentError, make_assignment

        unit = request.path_params["unit"]
        try:
            data = json.loads(await request.body() or b"{}")
            if not isinstance(data, dict):
                raise AssignmentError("send a JSON object")
            assignment = make_assignment(unit, data)
        except (ValueError, AssignmentError) as exc:
            return JSONResponse({"error": str(exc)}, 400)
        await run_in_threadpool(server.assign, assignment)
        return JSONResponse({"ok": True})

    async def api_stream(request: Request) -> Response:
        loop = asyncio.get_running_loop()
        event = asyncio.Event()

        def wake() -> None:
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:
                pass

        wakers.add(wake)

        async def events() -> AsyncIterator[str]:
            try:
                yield "retry: 1000\n\n"
                last = None
                while not closing.is_set():
                    event.clear()
                    body = json.dumps(await run_in_threadpool(_overview, server))
                    if body != last:
                        yield f"data: {body}\n\n"
                        last = body
                    try:
                        await asyncio.wait_for(event.wait(), HEARTBEAT_S)
                    except TimeoutError:
                        yield ": heartbeat\n\n"
                    await asyncio.sleep(PUSH_INTERVAL_S)
            finally:
                wakers.discard(wake)

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store"})

    app = Starlette(routes=[
        Route("/", page),
        Route("/table/{unit}", page),
        Route("/api/tables", api_tables),
        Route("/api/tables/{unit}", api_table),
        Route("/api/tables/{unit}/assign", api_assign, methods=["POST"]),
        Route("/api/results", api_results),
        Route("/api/stream", api_stream),
    ])
    app.state.closing = closing
    return app


def serve(server, host: str = "127.0.0.1", port: int = 0) -> tuple[str, Callable[[], None]]:
    """Run the live page with uvicorn in a thread; (url, stop)."""
    import uvicorn

    app = create_app(server)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    real_port = sock.getsockname()[1]
    config = uvicorn.Config(app, host=host, port=real_port, log_level="warning", access_log=False,
                            lifespan="off", ws="none", timeout_graceful_shutdown=1)
    web = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: web.run(sockets=[sock]), name="club-web", daemon=True)
    thread.start()
    while not web.started and thread.is_alive():
        thread.join(0.01)

    def stop() -> None:
        app.state.closing.set()
        web.should_exit = True
        thread.join(5)
        sock.close()

    return f"http://{host}:{real_port}/", stop
