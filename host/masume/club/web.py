"""The club's live page: every table at a glance, a page per table with the move
list and a replay slider, pushed by server-sent events within a second.

    GET  /                       all tables (static/club.html)
    GET  /static/review.js       the review's client, the table page's own
                                 (masume.web.server.REVIEW_SCRIPT)
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
    GET  /game/{id}              a finished game's review (the same page, review view)
    POST /api/review             {"game": id}: the computer's review of that game of the
                                 club's store (masume.play.review, as on a table's own
                                 page): {"ok", "id", "status", "game", "table", "board"};
                                 400 if the game is not over, 404 if there is no such game
    GET  /api/review/{id}        the review: its progress, comments and positions
                                 (``?steps=0``: without the positions)

Spectators read: everything they get is the spectator's view of a table
(``TableSession.state()`` with no viewer, through masume.play.cards.for_viewer),
and the replay's positions through the same :func:`masume.play.cards.public_pieces`:
no face-down card's tag or name. Arbiter actions need the arbiter's login
(:mod:`masume.club.arbiter`): 403 without it. Every request passes the gates of
:mod:`masume.web.guard` (Host, Origin, JSON bodies of bounded size and depth).

A finished game's review is the table page's own (:class:`masume.play.review.Reviews`:
the record read and replayed at once, the positions as everyone saw them, the search on
one worker thread of the page's, reviews kept by the record's digest), asked by the
game's number in the store (``GET /api/results``): anyone may ask, as at a table, and
what the store holds bounds the reviews there can be. The record is read from the
store; the board it is drawn on is the table's when the table still plays that game on
a board of its own, else the game's usual board.
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

from masume.ai import Level
from masume.boards import Board, load_board
from masume.club.arbiter import Arbiter
from masume.games import load_rules
from masume.play.cards import public_pieces
from masume.play.review import REVIEW_LEVEL, Review, ReviewRefused, Reviews
from masume.play.view import BoardView, board_view
from masume.web.guard import BadRequest, Guard, HostNames, read_json
from masume.web.server import REVIEW_SCRIPT, review_response, url_host
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


#: The largest game number the stores keep (SQLite's and PostgreSQL's 64-bit ids).
MAX_GAME_ID = 2**63 - 1


def _game_id(data: dict[str, Any]) -> int:
    game_id = data.get("game")
    if isinstance(game_id, bool) or not isinstance(game_id, int) \
            or not 1 <= game_id <= MAX_GAME_ID:
        raise BadRequest("'game' must be a game's number in the club's store "
                         "(GET /api/results)")
    return game_id


class NoSuchGame(LookupError):
    """No game of that number in the club's store (the message says so, for the page)."""


def _board_for(server: ClubServer, table: str, game: str) -> Board:
    """The board a game of ``table`` is drawn on: the table's own if it still plays that
    game on a board named for it, else the game's usual board."""
    assignment = server.assignments.get(table)
    if assignment is not None and assignment.game == game and assignment.board:
        return load_board(assignment.board)
    return load_board(load_rules(game).board)


def _ask_review(server: ClubServer, reviews: Reviews, game_id: int
                ) -> tuple[Review, dict[str, Any], BoardView]:
    """The review of game ``game_id`` of the store (kept, else queued), the game's row
    and the board it is drawn on. NoSuchGame: no such game; ReviewRefused: not over,
    or a record that cannot be read."""
    game = server.store.game(game_id)
    if game is None:
        raise NoSuchGame(f"no game {game_id} in the club's store (GET /api/results "
                          "lists them)")
    try:
        board = _board_for(server, game["table"], game["game"])
    except ValueError as exc:  # a game or board this host does not know (BoardError too)
        raise ReviewRefused(f"game {game_id} cannot be drawn here: {exc}") from None
    if not game["record"]:
        raise ReviewRefused("the game is not over: a review reads a finished game")
    return reviews.ask(game["record"], board), game, board_view(board)


def create_app(server: ClubServer, *, arbiter: Arbiter | None = None,
               hosts: HostNames | None = None, review_level: Level = REVIEW_LEVEL) -> Starlette:
    """The live page of ``server``; ``arbiter``: who may change the event (default:
    nobody); ``hosts``: the names it answers to (default: the loopback's);
    ``review_level``: a review's search a position (masume.play.review)."""
    arbiter = arbiter or Arbiter(None)
    streams = Streams()
    reviews = Reviews(review_level)

    def is_arbiter(request: Request) -> bool:
        return arbiter.is_arbiter(request.cookies.get(arbiter.cookie))

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "club.html", headers={"Cache-Control": "no-store"})

    async def review_script(request: Request) -> Response:
        # Revalidated every time, as the table page's static files: no stale script.
        return FileResponse(REVIEW_SCRIPT, headers={"Cache-Control": "no-cache"})

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

    async def api_review(request: Request) -> Response:
        try:
            game_id = _game_id(await read_json(request))
            review, game, board = await run_in_threadpool(_ask_review, server, reviews, game_id)
        except BadRequest as exc:
            return _error(str(exc), exc.status)
        except NoSuchGame as exc:
            return _error(str(exc), 404)
        except ReviewRefused as exc:
            return _error(str(exc), 400)
        return JSONResponse({"ok": True, "id": review.id, "status": review.status,
                             "game": game_id, "table": game["table"], "board": board})

    async def api_review_of(request: Request) -> Response:
        return review_response(reviews, request, "POST /api/review with the game's number; "
                                                 "a review is kept while the club server runs")

    async def api_stream(request: Request) -> Response:
        def subscribe(wake: Callable[[], None]) -> Callable[[], None]:
            return server.subscribe(lambda unit: wake())

        return event_stream(lambda: _overview(server), subscribe, streams,
                            min_push_interval_s=PUSH_INTERVAL_S)

    app = Starlette(routes=[
        Route("/", page),
        Route("/table/{unit}", page),
        Route("/game/{game}", page),
        Route("/static/review.js", review_script),
        Route("/api/tables", api_tables),
        Route("/api/tables/{unit}", api_table),
        Route("/api/tables/{unit}/assign", arbiter_action(assign), methods=["POST"]),
        Route("/api/tables/{unit}/end", arbiter_action(end), methods=["POST"]),
        Route("/api/results", api_results),
        Route("/api/review", api_review, methods=["POST"]),
        Route("/api/review/{review}", api_review_of),
        Route("/api/health", api_health),
        Route("/api/stream", api_stream),
        Route("/api/arbiter", api_arbiter),
        Route("/api/login", api_login, methods=["POST"]),
        Route("/api/logout", api_logout, methods=["POST"]),
    ], middleware=[Middleware(Guard, hosts=hosts or HostNames.for_bind("127.0.0.1"))])
    app.state.streams = streams
    app.state.reviews = reviews
    return app


def serve(server: ClubServer, host: str = "127.0.0.1", port: int = 0, *,
          arbiter_password: str | None = None, allow_hosts: Iterable[str] = (),
          review_level: Level = REVIEW_LEVEL) -> tuple[str, Callable[[], None]]:
    """Run the live page with uvicorn in a thread; (url, stop). ``arbiter_password``:
    the arbiter's (None: nobody may change the event from the page); ``allow_hosts``:
    more names the page is reached by (:class:`masume.web.guard.HostNames`);
    ``review_level``: a review's search a position."""
    import uvicorn

    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    real_port = sock.getsockname()[1]
    app = create_app(server, arbiter=Arbiter(arbiter_password, f"masume-club-{real_port}-arbiter"),
                     hosts=HostNames.for_bind(host, allow_hosts), review_level=review_level)
    config = uvicorn.Config(app, host=host, port=real_port, log_level="warning", access_log=False,
                            lifespan="off", ws="none", timeout_graceful_shutdown=1)
    web = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: web.run(sockets=[sock]), name="club-web", daemon=True)
    thread.start()
    while not web.started and thread.is_alive():
        thread.join(0.01)

    def stop() -> None:
        app.state.streams.close_all()
        app.state.reviews.close()
        web.should_exit = True
        thread.join(5)
        sock.close()

    return f"http://{url_host(host)}:{real_port}/", stop
