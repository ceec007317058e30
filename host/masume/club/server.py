"""``masume club serve``: one server runs the game of every table at a club night.

    boards --MQTT--> broker --> MqttHub --> one ClubLink (a BoardSession) per board
                                               |  every event committed before its ACK
                                               v
                                 TableSession (tracker, rules, LEDs) --> ClubStore

Boards are discovered by their retained status topic; a board that is not in
the assignments (an unregistered board) is logged and ignored. A table's game
outlives its board's drops and reboots (the BoardSession reconnects and
resynchronises) and the server's own restarts (the game, the link's boot and
ack, and the events not yet taken by the game all come back from the store).
"""

from __future__ import annotations

import hashlib
import logging
import queue
import threading
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from masume.boards import Board, BoardError, load_board
from masume.link import BoardEvent, BoardSession
from masume.link.mqtt import BrokerUrl, MqttHub, valid_unit
from masume.play.table import TableSession
from masume.records import parse_record, rules_for, start_position, write_record
from masume.rules import Game, Rules, load_rules
from masume.subscribers import Subscribers

from .store import ClubStore

log = logging.getLogger("masume.club")

LEASE_S = 6.0  # a board's owner must renew within this long, or another server takes it
RENEW_S = 2.0


@dataclass(frozen=True)
class Assignment:
    """What a table plays: the game, the board definition, the two players."""

    table: str  # the board's unit id (its MQTT topics)
    game: str
    board: str | None = None
    players: tuple[str, str] = ("", "")
    options: str = ""

    def headers(self, rules: Rules) -> dict[str, str]:
        sides = [str(s) for s in getattr(rules, "sides", ())] or ["Blue", "Red"]
        out = {"Table": self.table}
        for side, name in zip(sides, self.players):
            if name:
                out[side.capitalize()] = name
        if self.options:
            out["Options"] = self.options
        return out


class AssignmentError(ValueError):
    pass


def load_assignments(path: str | Path) -> dict[str, Assignment]:
    """The tables file (TOML)::

        [tables.table-1]          # the board's unit id
        game = "soccer-shogi"
        players = ["Aiko", "Ben"] # first player, second player
        board = "soccer-shogi"    # optional: the game's usual board
    """
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise AssignmentError(f"{path}: {exc}") from None
    tables = data.get("tables", {})
    if not isinstance(tables, dict):
        raise AssignmentError(f"{path}: [tables] must be a table of tables")
    return {unit: make_assignment(unit, spec, str(path)) for unit, spec in tables.items()}


def make_assignment(unit: str, spec: Mapping[str, Any], where: str = "") -> Assignment:
    where = f"{where}: " if where else ""
    if not valid_unit(unit):
        raise AssignmentError(f"{where}{unit!r} is not a board unit id (letters, digits, _ . -)")
    if not isinstance(spec, Mapping) or not isinstance(spec.get("game"), str):
        raise AssignmentError(f"{where}table {unit!r} needs game = \"...\"")
    try:
        rules = load_rules(spec["game"])
        load_board(spec.get("board") or rules.board)
    except (ValueError, BoardError) as exc:
        raise AssignmentError(f"{where}table {unit!r}: {exc}") from None
    players = spec.get("players", ["", ""])
    if (not isinstance(players, (list, tuple)) or len(players) > 2
            or not all(isinstance(p, str) for p in players)):
        raise AssignmentError(f"{where}table {unit!r}: players = [\"first\", \"second\"]")
    players = tuple(list(players) + ["", ""])[:2]
    return Assignment(unit, spec["game"], spec.get("board"), players,  # type: ignore[arg-type]
                      str(spec.get("options", "")))


class ClubLink(BoardSession):
    """A BoardSession whose place in the board's event stream survives the server:
    boot and ack come from the store, and each event is stored before its ACK."""

    def __init__(self, transport, store: ClubStore, unit: str, game_id: int, **kwargs) -> None:
        boot, ack = store.link_state(unit)
        super().__init__(transport, boot=boot, ack=ack, **kwargs)
        self.store = store
        self.unit = unit
        self.game_id = game_id

    def accepted(self, event: BoardEvent) -> None:
        # Committed before the ACK goes out: a server killed after the ACK still
        # has the event, and one killed before it gets the event again.
        self.store.accept_event(self.unit, self.boot, self.ack, self.game_id, event)


class TableStore:
    """What TableSession writes (save, log, headers), into the club's store."""

    def __init__(self, store: ClubStore, game_id: int, unit: str, headers: Mapping[str, str]):
        self.store = store
        self.game_id = game_id
        self.unit = unit
        self.headers = dict(headers)
        self.folder = f"game {game_id}"

    def save(self, game: Game) -> None:
        outcome = game.position.outcome()
        result = str(outcome) if outcome else (
            f"{self.headers['Resigned']} resigned" if self.headers.get("Resigned") else None)
        self.store.save_game(self.game_id, write_record(game, self.headers), self.headers, result)

    def log(self, kind: str, **fields: Any) -> None:
        if kind == "board":  # the table took a board event: it is done
            self.store.log_event_taken(self.game_id, self.unit, fields)
        else:
            self.store.log(self.game_id, kind, fields)

    def close(self) -> None:
        pass


def resume_game(record_text: str, game_name: str) -> Game:
    record = parse_record(record_text)
    rules = rules_for(record, game_name)
    game = Game(start_position(record, rules))
    for turn in record.turns:
        for text in turn.actions:
            game.push_notation(text)
    return game


@dataclass
class ClubTable:
    unit: str
    assignment: Assignment
    board: Board
    game_id: int
    link: ClubLink
    session: TableSession
    moves: int = 0
    actions: list[tuple[str, str, str]] = field(default_factory=list)


class ClubServer:
    """Every table of the event. ``assignments``: unit id -> Assignment.

    ``server_id`` names this server to the broker and, with several servers on
    one broker and one database, in the owners table: a server runs only the
    boards it holds a lease for, and takes over a board whose lease ran out.
    """

    def __init__(self, broker: str | BrokerUrl, store: ClubStore,
                 assignments: Mapping[str, Assignment],
                 *, server_id: str = "club", shared: bool = False,
                 on_change: Callable[[str], None] | None = None) -> None:
        self.broker = broker
        self.store = store
        self.assignments = dict(assignments)
        self.server_id = server_id
        self.shared = shared
        self.on_change = on_change
        self.tables: dict[str, ClubTable] = {}
        self.unregistered: set[str] = set()
        self.hub: MqttHub | None = None
        self._lock = threading.RLock()
        self._work: queue.Queue[str | None] = queue.Queue()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._subscribers = Subscribers("masume.club")
        self._unowned: dict[str, float] = {}
        #: Tables whose game the arbiter ended (unit -> result): idle until assigned.
        self.ended: dict[str, str | None] = {}

    # ---- running ----------------------------------------------------------------

    def start(self, wait: float = 5.0) -> "ClubServer":
        if self.shared:
            self.store.heartbeat(self.server_id, LEASE_S)
        self.hub = MqttHub(self.broker, f"masume-club-{self.server_id}", on_status=self._on_status)
        for target, name in ((self._worker, "club-tables"), (self._leases, "club-leases")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        self.hub.start(wait)
        return self

    def close(self) -> None:
        self._stop.set()
        self._work.put(None)
        for thread in self._threads:
            thread.join(timeout=5)
        with self._lock:
            tables = list(self.tables.values())
            self.tables.clear()
        for table in tables:
            self._stop_table(table, release=True)
        if self.shared:
            self.store.leave(self.server_id)
        if self.hub:
            self.hub.close()

    def _on_status(self, unit: str, state: str) -> None:
        if unit not in self.assignments:
            if unit not in self.unregistered:
                self.unregistered.add(unit)
                log.warning("board %r is not registered for this event: ignored", unit)
            return
        self._work.put(unit)
        self._changed(unit)

    def _worker(self) -> None:
        while not self._stop.is_set():
            unit = self._work.get()
            if unit is None:
                return
            try:
                self._ensure(unit)
            except Exception:
                log.exception("could not start table %s", unit)

    def preferred(self, unit: str) -> bool:
        """Is this server the one that should run ``unit``? Rendezvous hashing over
        the live servers: each board has one, and when a server comes or goes only
        its own boards move."""
        servers = self.store.live_servers() or [self.server_id]
        if self.server_id not in servers:
            servers.append(self.server_id)

        def weight(server: str) -> bytes:
            return hashlib.sha256(f"{server}/{unit}".encode()).digest()

        return max(servers, key=weight) == self.server_id

    def _leases(self) -> None:
        """With shared=True: renew our boards' leases, give up the ones we lost,
        and look again at every online board (another server may have stopped)."""
        while True:
            if self.shared:
                self.store.heartbeat(self.server_id, LEASE_S)
            if self._stop.wait(RENEW_S):
                return
            if not self.shared or self.hub is None:
                continue
            with self._lock:
                mine = list(self.tables.values())
            for table in mine:
                if not self.store.claim(table.unit, self.server_id, LEASE_S):
                    log.warning("table %s is run by another server now", table.unit)
                    with self._lock:
                        self.tables.pop(table.unit, None)
                    self._stop_table(table, release=False)
            for unit, state in list(self.hub.status.items()):
                if state == "online" and unit in self.assignments and unit not in self.tables:
                    self._work.put(unit)

    def _ensure(self, unit: str) -> None:
        with self._lock:
            if unit in self.tables or self._stop.is_set():
                return
        ended = self.store.ended_game(unit)
        if ended is not None:
            with self._lock:
                self.ended[unit] = ended[1]
            return  # the arbiter ended its game: it waits for its next assignment
        if self.shared:
            if not self.preferred(unit):
                # Another live server should run it: take it only once it has been
                # left without an owner for a whole lease (that server is gone).
                owner = self.store.owners().get(unit)
                now = time.time()
                since = self._unowned.setdefault(unit, now)
                if owner is not None and owner[1] >= now:
                    self._unowned.pop(unit, None)
                    return
                if now - since < LEASE_S:
                    return
            if not self.store.claim(unit, self.server_id, LEASE_S):
                return  # another server runs it
            self._unowned.pop(unit, None)
        table = self._start_table(unit, self.assignments[unit])
        with self._lock:
            self.tables[unit] = table
        self._changed(unit)

    def _start_table(self, unit: str, assignment: Assignment) -> ClubTable:
        assert self.hub is not None
        rules = load_rules(assignment.game)
        board = load_board(assignment.board or rules.board)
        active = self.store.active_game(unit)
        game = None
        if active and active[1] == assignment.game:
            game_id, _, headers, record = active
            if record:
                try:
                    game = resume_game(record, assignment.game)
                except Exception as exc:  # a damaged record must not stop the event
                    log.error("table %s: cannot resume game %d (%s); starting afresh",
                              unit, game_id, exc)
                    game = None
        if game is None:
            headers = assignment.headers(rules)
            game_id = self.store.new_game(unit, assignment.game, headers)
            self.store.close_open_events(unit)
            game = Game(rules.start())
        link = ClubLink(self.hub.transport(unit), self.store, unit, game_id,
                        expect=board.id, resolve=lambda _id: board)
        # Events stored but not taken by the game before a crash: they go first.
        link.replay(self.store.open_events(unit, game_id))
        table_store = TableStore(self.store, game_id, unit, headers)
        holder: dict[str, ClubTable] = {}

        def on_action(what: str, side: str, notation: str) -> None:
            table = holder.get("t")
            if table is not None:
                table.actions.append((what, side, notation))

        session = TableSession(rules, board, link, game=game, store=table_store,
                               port=link.transport.port, on_action=on_action)
        table = holder["t"] = ClubTable(unit, assignment, board, game_id, link, session)
        session.subscribe(lambda: self._changed(unit))
        link.start()
        session.start()
        log.info("table %s: %s, game %d, %d actions so far", unit, assignment.game, game_id,
                 len(game.actions))
        return table

    def _stop_table(self, table: ClubTable, release: bool) -> None:
        table.session.close()
        table.link.close()
        if self.hub:
            self.hub.forget(table.unit)
        if release and self.shared:
            self.store.release(table.unit, self.server_id)

    # ---- the organiser's hands ----------------------------------------------------

    def assign(self, assignment: Assignment) -> None:
        """Give a table a (new) game and players; the table's current game ends."""
        with self._lock:
            self.assignments[assignment.table] = assignment
            old = self.tables.pop(assignment.table, None)
        if old is not None:
            self._stop_table(old, release=False)
        rules = load_rules(assignment.game)
        self.store.new_game(assignment.table, assignment.game, assignment.headers(rules))
        self.store.close_open_events(assignment.table)
        with self._lock:
            self.ended.pop(assignment.table, None)
        if self.hub and self.hub.status.get(assignment.table) == "online":
            self._work.put(assignment.table)
        self._changed(assignment.table)

    def end(self, unit: str, result: str) -> None:
        """End the table's game with the arbiter's ``result`` ("blue wins on time",
        "draw", "abandoned"): the game is stored with it, and the table waits for its
        next assignment. KeyError when the table has no game to end."""
        with self._lock:
            table = self.tables.pop(unit, None)
        if table is not None:
            self._stop_table(table, release=False)
            game_id = table.game_id
        else:
            active = self.store.active_game(unit)
            if active is None:
                raise KeyError(f"table {unit!r} has no game to end")
            game_id = active[0]
        self.store.end_game(game_id, result)
        with self._lock:
            self.ended[unit] = result
        log.info("table %s: game %d ended by the arbiter: %s", unit, game_id, result)
        self._changed(unit)

    # ---- what the live page reads -----------------------------------------------------

    def subscribe(self, callback: Callable[[str], None]) -> Callable[[], None]:
        return self._subscribers.add(callback)

    def _changed(self, unit: str) -> None:
        if self.on_change:
            self.on_change(unit)
        self._subscribers.notify(unit)

    def table_state(self, unit: str) -> dict[str, Any] | None:
        with self._lock:
            table = self.tables.get(unit)
            assignment = self.assignments.get(unit)
        online = bool(self.hub and self.hub.status.get(unit) == "online")
        if table is None:
            if assignment is None:
                return None
            state = {"table": unit, "game": assignment.game,
                     "players": list(assignment.players), "online": online, "running": False}
            if unit in self.ended:
                state["result"] = self.ended[unit]
            return state
        state = table.session.state()
        state.update(table=unit, players=list(assignment.players) if assignment else [],
                     online=online, running=True, game_id=table.game_id,
                     connected=table.link.connected.is_set())
        return state

    def overview(self) -> list[dict[str, Any]]:
        return [s for s in (self.table_state(u) for u in sorted(self.assignments)) if s]
