"""The host's end of the board link (protocol/SPEC.md).

A :class:`BoardSession` keeps one board connected whatever the cable does: it
opens the transport, shakes hands (checking the board's definition id and hash
against hardware/boards/, so a host never drives a board with the wrong map),
receives events exactly once and in order (acks, duplicates dropped, gaps
waited out until the board resends), resynchronises with a snapshot after a
reboot or a journal overflow, sends LED commands until they are acknowledged,
and reconnects with backoff when the link drops.

>>> session = BoardSession(SerialTransport("/dev/ttyACM0"))   # doctest: +SKIP
>>> session.start()                                          # doctest: +SKIP
>>> for event in session.events():                           # doctest: +SKIP
...     print(event.to_json())
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping

from masume.boards import Board, BoardError, load_board
from masume_protocol import codec as c

from .events import BoardEvent, Led, Reading, decode_reading
from .transport import LinkDown, Transport

log = logging.getLogger("masume.link")

HELLO_RETRY_S = 0.5
HANDSHAKE_TIMEOUT_S = 3.0
COMMAND_RESEND_S = 0.25
HEARTBEAT_S = 1.0
SILENCE_TIMEOUT_S = 3.5  # no frame from the board for this long: the link is dead
MAX_PENDING_COMMANDS = 64
BACKOFF_S = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0)
#: How fast the estimate of the board clock's offset may creep up when no frame
#: comes as fast as the fastest did (a crystal runs off by 0.01 % at most; this
#: allows 0.1 %).
CLOCK_CREEP = 0.001
#: An event that arrives this much later than the board saw it comes from the
#: journal (a link that was cut): more of the backlog may follow.
LATE_S = 0.25


class BoardMismatch(Exception):
    """The board is not the one the host has a definition for. Not retried."""


@dataclass
class LinkStats:
    connects: int = 0
    bad_frames: int = 0
    duplicates: int = 0
    out_of_order: int = 0
    snapshots: int = 0
    command_resends: int = 0
    #: The board's journal as its last heartbeat gave it: (oldest unacked seq, next seq).
    board_journal: tuple[int, int] = (0, 0)
    acked: int = 0  # the last event seq this host holds
    board_errors: list[str] = field(default_factory=list)


class BoardSession:
    """One board, kept connected. Thread-safe; events arrive through :meth:`events`.

    ``expect`` names the board definition the host wants (its id); None accepts
    any board whose definition the host knows.

    ``boot`` and ``ack`` resume the board's event stream where an earlier
    session left it (a server that stores them): the HELLO carries them, so the
    board resends exactly the events after ``ack``; and as this session knows
    none of the board's readings, it asks for a snapshot.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        expect: str | None = None,
        resolve: Callable[[str], Board] = load_board,
        boot: int = 0,
        ack: int = 0,
    ) -> None:
        self.transport = transport
        self.expect = expect
        self.resolve = resolve
        self.board: Board | None = None
        self.firmware: str | None = None
        self.readings: dict[str, Reading] = {}
        self.stats = LinkStats()
        self.state = "idle"  # idle, connecting, connected, failed, closed
        self.error: str | None = None
        self.connected = threading.Event()
        self._events: queue.Queue[BoardEvent | None] = queue.Queue()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # Event side: what we hold from which boot of the board.
        self._boot = boot
        self._ack = ack if boot else 0
        # Command side.
        self._cmd_seq = 0
        self._pending: list[tuple[int, int, bytes]] = []  # (seq, type, frame) not yet acked
        self._last_send = 0.0
        self._leds: dict[int, Led] | None = None  # the picture to restore on reconnect
        self._snapshot_wanted = bool(boot)
        self._early: list[tuple[int, int, object]] = []  # frames read with the welcome
        # The board's clock (protocol 2), mapped onto time.monotonic().
        self.board_version = 0  # the protocol version the board speaks
        self._offset: float | None = None  # host seconds minus board seconds, fastest frame
        self._offset_at = 0.0
        self._ticks: int | None = None  # the board's last ticks_ms (modulo 2**30) ...
        self._board_s = 0.0  # ... and the same, unwrapped, in seconds
        self._known_until: float | None = None  # while a backlog comes in: its last event's time

    # ---- public API -------------------------------------------------------

    @property
    def boot(self) -> int:
        """The boot id of the board this session holds events from (0: none yet)."""
        return self._boot

    @property
    def ack(self) -> int:
        """The seq of the last event this session holds (and has acknowledged)."""
        return self._ack

    def accepted(self, event: BoardEvent) -> None:
        """Called in the link's thread for every event the session accepts, after
        :attr:`ack` has moved past it and before its ACK goes to the board. A
        subclass that must keep events (the club server's store) does it here; if
        it raises, the event is not acknowledged and the link reconnects, so the
        board sends it again."""

    def replay(self, events: list[BoardEvent]) -> None:
        """Hand ``events`` out (through :meth:`events`) before any the board sends:
        events kept from an earlier session and not yet taken by their consumer."""
        for event in events:
            self._events.put(event)

    def clock(self) -> float:
        """Now on ``time.monotonic()``, as far as the board's events are known.

        While a backlog from the board's journal comes in (after a cut), the time
        of the last event taken from it: nothing is known of the board after that
        yet, so a decision that waits for the board to be still must not be taken
        past it. Events' :attr:`BoardEvent.at` are on this clock.
        """
        now = time.monotonic()
        known = self._known_until
        return now if known is None else min(now, known)

    def start(self) -> "BoardSession":
        self._thread = threading.Thread(target=self._run, name="board-link", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)
        self.transport.close()
        self.state = "closed"
        self._events.put(None)

    def __enter__(self) -> "BoardSession":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wait_connected(self, timeout: float | None = None) -> bool:
        """True once a handshake has succeeded; raises BoardMismatch if it cannot."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.connected.is_set():
            if self.state == "failed":
                raise BoardMismatch(self.error)
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            self.connected.wait(0.05 if left is None else min(0.05, left))
        return True

    def events(self, timeout: float | None = None) -> Iterator[BoardEvent]:
        """Board events in order, each once. Ends after ``timeout`` s without one,
        or when the session closes; raises BoardMismatch if the board is refused."""
        while True:
            try:
                event = self._events.get(timeout=timeout)
            except queue.Empty:
                if self.state == "failed":
                    raise BoardMismatch(self.error) from None
                return
            if event is None:
                if self.state == "failed":
                    raise BoardMismatch(self.error)
                return
            yield event

    def set_leds(self, picture: Mapping[str | int, Led]) -> None:
        """Show ``picture`` (cell name or index -> Led); every other cell goes dark.

        The picture is sent until the board acknowledges it, and again after
        every reconnect, so the board always shows the host's latest picture.
        """
        board = self.board
        if board is None:
            raise RuntimeError("no board connected yet")
        frame = {board.cell(k).index: led for k, led in picture.items()}
        with self._lock:
            self._leds = frame
            self._queue_command(c.LED_FRAME, c.pack_leds(_entries(frame)))

    def request_snapshot(self) -> None:
        with self._lock:
            self._queue_command(c.SNAPSHOT_REQ, b"")

    # ---- the link thread --------------------------------------------------

    def _run(self) -> None:
        attempt = 0
        while not self._stop.is_set():
            self.state = "connecting"
            try:
                self.transport.open()
                self._handshake()
                attempt = 0
                self._serve()
            except BoardMismatch as exc:
                self.state = "failed"
                self.error = str(exc)
                log.error("%s", exc)
                self._events.put(None)
                self.transport.close()
                return
            except LinkDown as exc:
                log.info("link down: %s", exc)
            self.connected.clear()
            self.transport.close()
            if self._stop.is_set():
                break
            self._stop.wait(BACKOFF_S[min(attempt, len(BACKOFF_S) - 1)])
            attempt += 1

    def _send(self, frame: bytes) -> None:
        self.transport.send(frame)

    def _handshake(self) -> None:
        with self._lock:
            # A new connection starts a new command sequence; the LED picture is
            # restored after the welcome, and a snapshot still wanted asked again.
            self._snapshot_wanted |= any(t == c.SNAPSHOT_REQ for _, t, _ in self._pending)
            self._pending.clear()
            hello_seq = self._cmd_seq
        deadline = time.monotonic() + HANDSHAKE_TIMEOUT_S
        next_hello = 0.0
        while time.monotonic() < deadline and not self._stop.is_set():
            if time.monotonic() >= next_hello:
                self._send(c.encode_frame(c.HELLO, hello_seq, c.pack_hello(self._boot, self._ack)))
                next_hello = time.monotonic() + HELLO_RETRY_S
            frames = self._receive(0.05)
            for k, (mtype, seq, fields) in enumerate(frames):
                if mtype == c.WELCOME:
                    self._welcome(fields)
                    # What came right after it (the board's resent events) is served next.
                    self._early = frames[k + 1:]
                    return
        raise LinkDown("no answer to hello")

    def _welcome(self, fields: tuple) -> None:
        version, boot, next_seq, first_seq, board_hash, firmware, board_id = fields
        if not c.OLDEST_VERSION <= version <= c.PROTOCOL_VERSION:
            raise BoardMismatch(
                f"board speaks protocol {version}, this host speaks {c.OLDEST_VERSION} to "
                f"{c.PROTOCOL_VERSION}; update the firmware (masume board deploy) or the host"
            )
        if self.expect and board_id != self.expect:
            raise BoardMismatch(f"expected board {self.expect!r}, but {board_id!r} is connected")
        try:
            board = self.resolve(board_id)
        except BoardError as exc:
            raise BoardMismatch(f"the connected board says it is {board_id!r}: {exc}") from None
        if board.hash != board_hash:
            raise BoardMismatch(
                f"board {board_id!r} carries definition hash {board_hash:08x}, the host has "
                f"{board.hash:08x} ({board.source}); deploy the current definition with "
                f"`masume board deploy --board {board_id}`"
            )
        self.board = board
        self.firmware = firmware
        self.board_version = version
        if boot != self._boot or self._ticks is None:
            self._reset_clock()  # a new boot counts its ticks from zero
        if boot != self._boot:
            # First contact or the board rebooted: what it knew is gone, so take
            # its word for where it stands and ask for every reading.
            if self._boot:
                log.warning("board rebooted; resynchronising")
            self._boot = boot
            self._ack = next_seq - 1
            self._snapshot_wanted = True
        elif first_seq > self._ack + 1:
            log.warning("board journal overflowed (events %d-%d lost)", self._ack + 1, first_seq - 1)
            self._snapshot_wanted = True
        self.stats.connects += 1
        self.state = "connected"
        self._send(c.encode_frame(c.ACK, self._ack))
        with self._lock:
            if self._snapshot_wanted:
                self._snapshot_wanted = False
                self._queue_command(c.SNAPSHOT_REQ, b"")
            if self._leds is not None:
                self._queue_command(c.LED_FRAME, c.pack_leds(_entries(self._leds)))
        self.connected.set()

    def _serve(self) -> None:
        last_heard = time.monotonic()
        last_heartbeat = 0.0
        while not self._stop.is_set():
            frames, self._early = self._early + self._receive(0.02), []
            now = time.monotonic()
            if frames:
                last_heard = now
            elif now - last_heard > SILENCE_TIMEOUT_S:
                raise LinkDown("board silent")
            ack_due = False
            for mtype, seq, fields in frames:
                ack_due |= self._handle(mtype, seq, fields)
            if ack_due:
                self._send(c.encode_frame(c.ACK, self._ack))
            if now - last_heartbeat >= HEARTBEAT_S:
                last_heartbeat = now
                self._send(c.encode_frame(c.HEARTBEAT, 0, c.pack_heartbeat(0, 0, 0, 0)))
            self._flush_commands(now)

    def _receive(self, timeout: float) -> list[tuple[int, int, object]]:
        out = []
        for raw in self.transport.receive(timeout):
            try:
                mtype, seq, payload = c.decode_frame(raw)
                fields = c.unpack(mtype, payload) if mtype in c.NAMES else None
            except c.FrameError:
                self.stats.bad_frames += 1
                continue
            out.append((mtype, seq, fields))
        return out

    def _handle(self, mtype: int, seq: int, fields: object) -> bool:
        """Handle one frame from the board; True if an ack should go back."""
        board = self.board
        assert board is not None
        if mtype in c.EVENTS:
            if seq <= self._ack:
                self.stats.duplicates += 1
                return True
            if seq != self._ack + 1:
                self.stats.out_of_order += 1  # a frame before it was lost: wait for the resend
                return False
            try:
                event = self._event(board, mtype, seq, fields)
            except (KeyError, IndexError) as exc:
                log.warning("event %d names something this board does not have: %s", seq, exc)
                event = None
            self._take(seq, event)
            return True
        if mtype == c.SNAPSHOT:
            self.stats.snapshots += 1
            readings = {}
            for index, raw in fields:  # type: ignore[union-attr]
                cell = board.cell(index)
                readings[cell.name] = decode_reading(board, cell, raw)
            self.readings = readings
            self._take(max(self._ack, seq),
                       BoardEvent(seq=seq, type="snapshot", readings=dict(readings)))
            return True
        if mtype == c.ACK:
            with self._lock:
                self._pending = [p for p in self._pending if p[0] > seq]
            return False
        if mtype == c.HEARTBEAT:
            next_seq, first_seq, uptime, boot = fields  # type: ignore[misc]
            self.stats.board_journal = (first_seq, next_seq)
            self.stats.acked = self._ack
            if boot != self._boot:
                # The board restarted and its WELCOME was lost (noise): shake hands.
                raise LinkDown("the board restarted")
            self._board_time(uptime)
            if next_seq - 1 <= self._ack:
                self._known_until = None  # the board has nothing more: the backlog is in
            if first_seq > self._ack + 1:
                log.warning("board journal overflowed; resynchronising")
                self._ack = next_seq - 1
                with self._lock:
                    self._queue_command(c.SNAPSHOT_REQ, b"")
            return False
        if mtype == c.WELCOME:
            if fields[1] == self._boot:  # type: ignore[index]
                return False  # a second answer to a HELLO sent twice
            # Unasked, from a new boot: the board restarted while the cable stayed
            # in. Shake hands again so that it takes our commands (and we resync).
            raise LinkDown("the board restarted")
        if mtype == c.ERROR:
            code, text = fields  # type: ignore[misc]
            self.stats.board_errors.append(text)
            if code == c.E_SENSOR:
                log.warning("board reports a faulty sensor: %s", text)
            else:
                log.warning("board refused a command: %s", text)
            return False
        log.debug("ignoring %s from the board", c.NAMES.get(mtype, mtype))
        return False

    def _take(self, ack: int, event: BoardEvent | None) -> None:
        """Hold everything up to ``ack``, and hand ``event`` out (the caller acks)."""
        before = self._ack
        self._ack = ack
        if event is None:
            return
        try:
            self.accepted(event)
        except Exception as exc:
            self._ack = before  # not kept: not acknowledged, so the board resends it
            log.error("event %d could not be kept (%s); reconnecting", event.seq, exc)
            raise LinkDown(f"event {event.seq} could not be kept") from exc
        self._events.put(event)

    def _event(self, board: Board, mtype: int, seq: int, fields: object) -> BoardEvent:
        *values, ms = fields  # type: ignore[misc]
        at = None
        if ms is not None:
            at = self._board_time(ms)
            if time.monotonic() - at > LATE_S:
                self._known_until = at  # from the journal: more of the backlog may follow
            else:
                self._known_until = None  # as it happened: events come in order, all are in
        if mtype == c.SQUARE:
            index, raw = values
            cell = board.cell(index)
            reading = decode_reading(board, cell, raw)
            self.readings[cell.name] = reading
            return BoardEvent(seq=seq, type="square", square=cell.name, reading=reading,
                              ms=ms, at=at)
        if mtype == c.DIE:
            roll_id, value = values
            return BoardEvent(seq=seq, type="die", value=value, roll_id=roll_id, ms=ms, at=at)
        return BoardEvent(seq=seq, type="button", button=board.button(values[0]).name,
                          ms=ms, at=at)

    # ---- the board's clock ------------------------------------------------

    def _reset_clock(self) -> None:
        self._offset = None
        self._ticks = None
        self._board_s = 0.0
        self._known_until = None

    def _board_time(self, ticks: int) -> float:
        """Where the board's ``ticks`` (ticks_ms of a frame just received) fall on
        time.monotonic(); each frame also refines the mapping.

        The offset between the two clocks is taken from the frame that came
        fastest (the smallest host-minus-board difference: every frame is late
        by its transit, never early), allowed to creep up slowly so that a
        board whose crystal runs slow is followed. An event from the journal is
        late by the whole cut: it does not move the offset. (The board sends a
        heartbeat right after its WELCOME, so the offset is known before the
        journal's events come.)
        """
        received = time.monotonic()
        ticks &= c.TICKS_MASK
        if self._ticks is None:
            self._board_s = ticks / 1000
        else:
            # ticks_ms wraps at 2**30: the signed difference modulo 2**30.
            step = ((ticks - self._ticks + 0x20000000) & c.TICKS_MASK) - 0x20000000
            self._board_s += step / 1000
        self._ticks = ticks
        sample = received - self._board_s
        if self._offset is None:
            self._offset = sample
        else:
            creep = max(0.0, received - self._offset_at) * CLOCK_CREEP
            self._offset = min(sample, self._offset + creep)
        self._offset_at = received
        return self._board_s + self._offset

    def _queue_command(self, mtype: int, payload: bytes) -> None:
        """Queue a command (caller holds the lock); sent now if connected."""
        if len(self._pending) >= MAX_PENDING_COMMANDS:
            # The board is not taking commands: keep the newest; the LED picture
            # is restored in full at the next handshake anyway.
            self._pending.pop(0)
        self._cmd_seq += 1
        frame = c.encode_frame(mtype, self._cmd_seq, payload)
        self._pending.append((self._cmd_seq, mtype, frame))
        if self.connected.is_set() or self.state == "connected":
            try:
                self._send(frame)
                self._last_send = time.monotonic()
            except LinkDown:
                pass  # the link thread notices and reconnects

    def _flush_commands(self, now: float) -> None:
        with self._lock:
            if not self._pending or now - self._last_send < COMMAND_RESEND_S:
                return
            self.stats.command_resends += 1
            for _, _, frame in self._pending:
                self._send(frame)
            self._last_send = now


def _entries(frame: Mapping[int, Led]) -> list[tuple[int, tuple[int, int, int], int]]:
    return [(index, led.rgb, led.pattern_code) for index, led in sorted(frame.items())]
