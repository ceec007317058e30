"""The host's end of the board link (protocol/SPEC.md).

A :class:`BoardSession` keeps one board connected whatever the cable does: it
opens the transport, shakes hands (checking the board's definition id and hash
against hardware/boards/, so a host never drives a board with the wrong map),
receives events exactly once and in order (duplicates dropped, gaps waited out
until the board resends), resynchronises with a snapshot after a reboot or a
journal overflow, sends LED commands until they are acknowledged, and
reconnects with backoff when the link drops.

An event is acknowledged to the board only once its consumer is done with it:
when :meth:`BoardSession.events` hands it out, or, for a consumer that must
first save what the event caused (a game table), when it calls
:meth:`BoardSession.commit`. Until then the board keeps the event in its
journal, so a host that dies loses nothing the board told it. The queue between
the link and its consumer is bounded: when it is full the link stops taking
events (the board keeps them) and says so.

Nothing stops the link's thread: a frame that names what the board does not
have is a counted bad frame; any other fault is logged, counted in
:attr:`BoardSession.health`, and the link reconnects and resynchronises (a new
handshake, then a snapshot: Sparkplug B's rebirth).

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
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Self

from masume.boards import Board, BoardError, load_board
from masume.health import Health
from masume_protocol import codec as c

from .base import LedPicture, LinkState
from .events import BoardEvent, Led, Reading, check_frame, decode_reading
from .transport import LinkDown, Transport

log = logging.getLogger("masume.link")

HELLO_RETRY_S = 0.5
HANDSHAKE_TIMEOUT_S = 3.0
COMMAND_RESEND_S = 0.25
HEARTBEAT_S = 1.0
SILENCE_TIMEOUT_S = 3.5  # no frame from the board for this long: the link is dead
#: The link thread's wait for a frame: a frame ends it at once, commands go out from
#: the caller's thread and ACKs from the committer's, so it only paces the timers
#: (heartbeat, command resend), each far longer: a quiet board costs ten turns a second.
RECEIVE_S = 0.1
MAX_PENDING_COMMANDS = 64
BACKOFF_S = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0)
#: How fast the estimate of the board clock's offset may creep up when no frame
#: comes as fast as the fastest did (a crystal runs off by 0.01 % at most; this
#: allows 0.1 %).
CLOCK_CREEP = 0.001
#: An event that arrives this much later than the board saw it comes from the
#: journal (a link that was cut): more of the backlog may follow.
LATE_S = 0.25
#: Events taken from the board and not yet taken by the consumer, at most. The
#: board's journal holds 256 unacknowledged events; a board that goes on sending
#: live events past that (its consumer stopped reading) is held back here.
EVENT_QUEUE_LIMIT = 1024
#: A frame that names what the board does not have is dropped like a damaged one;
#: an event the board sends this many times so is skipped, so that the stream goes on.
BAD_EVENT_RETRIES = 3
REPORT_EVERY_S = 1.0  # repeated complaints (bad frames, a full queue): one line a second


class BoardMismatch(Exception):
    """The board is not the one the host has a definition for. Not retried."""


class _FrameFault(Exception):
    """Handling a frame failed in a way no check foresaw (its cause chained)."""


@dataclass
class LinkStats:
    connects: int = 0
    bad_frames: int = 0  # damaged (COBS, CRC, layout) or naming what the board does not have
    duplicates: int = 0
    out_of_order: int = 0
    snapshots: int = 0
    command_resends: int = 0
    #: The board's journal as its last heartbeat gave it: (oldest unacked seq, next seq).
    board_journal: tuple[int, int] = (0, 0)
    acked: int = 0  # the last event seq acknowledged to the board
    #: The board's latest refusals (ERROR messages), the newest last.
    board_errors: deque[str] = field(default_factory=lambda: deque(maxlen=20))
    held_back: int = 0  # events not taken because the consumer's queue was full
    skipped: int = 0  # bad events skipped after BAD_EVENT_RETRIES
    events_lost: int = 0  # events the board dropped from a full journal before we had them


class BoardSession:
    """One board, kept connected. Thread-safe; events arrive through :meth:`events`
    (or :meth:`take` and :meth:`commit`, for a consumer that saves before it
    acknowledges).

    ``expect`` names the board definition the host wants (its id); None accepts
    any board whose definition the host knows. ``name`` says whose board it is
    in messages (a club table's unit id; by default the transport's port).

    :meth:`rewind` puts the session where a consumer's saved state left the
    board's event stream (its boot, the last event it holds, the readings then),
    before :meth:`start` or at any time after.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        expect: str | None = None,
        resolve: Callable[[str], Board] = load_board,
        name: str | None = None,
        queue_limit: int = EVENT_QUEUE_LIMIT,
    ) -> None:
        self.transport = transport
        self.expect = expect
        self.resolve = resolve
        self.name = name or transport.port
        self.board: Board | None = None
        self.firmware: str | None = None
        self.readings: dict[str, Reading] = {}
        self.stats = LinkStats()
        self.health = Health("board link", self.name)
        self.state: LinkState = "idle"
        self.error: str | None = None
        self.connected = threading.Event()
        self._events: queue.Queue[BoardEvent] = queue.Queue(queue_limit)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # Event side, all of one boot of the board. Seqs up to _ack are acknowledged;
        # up to _committed its consumer is done with (sent as the next ACK); up to
        # _received handed to the consumer (or skipped, see _skip).
        self._boot = 0
        self._ack = 0
        self._committed = 0
        self._received = 0
        #: Seqs the consumer never sees (bad events skipped, events the board lost
        #: from a full journal): first seq -> last seq of the run.
        self._skip: dict[int, int] = {}
        self._bad_seen: dict[int, int] = {}  # bad event seq -> times it came
        self._board_next = 0  # the board's next event seq, as it last said
        self._rebirth: str | None = None  # asked from another thread: reconnect, resync
        self._complaints: dict[str, tuple[float, int]] = {}  # what -> (last said, since then)
        # Command side.
        self._cmd_seq = 0
        self._pending: list[tuple[int, int, bytes]] = []  # (seq, type, frame) not yet acked
        self._last_send = 0.0
        self._leds: dict[int, Led] | None = None  # the picture to restore on reconnect
        self._snapshot_wanted = False
        self._snapshot_asked = 0.0  # when a snapshot was last asked for
        self._early: list[tuple[int, int, Any]] = []  # frames read with the welcome
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
        """The seq of the last event acknowledged to the board."""
        return self._ack

    @property
    def waiting(self) -> int:
        """Events taken from the board and not yet by the consumer (bounded)."""
        return self._events.qsize()

    @property
    def alive(self) -> bool:
        """Is the link's thread running (it stops only when closed or the board is refused)?"""
        return self._thread is not None and self._thread.is_alive()

    @property
    def connections(self) -> int:
        return self.stats.connects

    def rewind(self, boot: int, ack: int, readings: Mapping[str, Reading] | None = None) -> None:
        """Go back to where a consumer's saved state left the board's stream: the
        events of boot ``boot`` up to ``ack`` are done with, the board's readings
        were ``readings`` then. Events queued and not taken are dropped; the next
        HELLO carries ``boot`` and ``ack``, so the board (which keeps every event
        not acknowledged) sends the rest again. A running link reconnects at once
        (a rebirth: a new handshake, then a snapshot).

        Boot 0 (the consumer holds no event yet) needs no reconnect: the link goes
        on with the board it has, the events queued and not taken are done with (a
        snapshot, asked at once, says where they left the board), and every event
        from now on is the consumer's. A reconnect would count as first contact and
        skip the events the board made before its welcome: a button pressed right
        after a table started was lost so.
        """
        with self._lock:
            self._drain()
            if readings is not None:
                self.readings = dict(readings)
            self._skip.clear()
            self._bad_seen.clear()
            if not boot:
                self._committed = self._received
                self._snapshot_wanted = bool(self._boot)
                return
            self._boot = boot
            self._ack = self._committed = self._received = ack
            self._snapshot_wanted = True
            if self._thread is not None:
                self._rebirth = "rewound to a saved state"

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

    def start(self) -> Self:
        self._thread = threading.Thread(target=self._run, name=f"board-link:{self.name}",
                                        daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)
        self.transport.close()
        self.state = "closed"
        self.health.stop()
        try:
            self._events.put_nowait(None)  # type: ignore[arg-type]  # wakes a waiting take()
        except queue.Full:
            pass  # take() sees the state when the queue runs dry

    def __enter__(self) -> Self:
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
        """Board events in order, each once, each acknowledged as it is handed out.
        Ends after ``timeout`` s without one, or when the session closes; raises
        BoardMismatch if the board is refused."""
        while True:
            batch = self.take(timeout)
            if not batch:
                return
            for event in batch:
                self.commit(event.boot, event.seq)
                yield event

    def take(self, timeout: float | None = None, limit: int = 64) -> list[BoardEvent]:
        """The events waiting, in order (at most ``limit``; waits up to ``timeout`` s
        for the first), not acknowledged: the consumer calls :meth:`commit` once it
        is done with them. Empty after ``timeout``, or when the session is closed;
        BoardMismatch if the board is refused."""
        deadline = None if timeout is None else time.monotonic() + timeout
        first = None
        while first is None:
            try:
                first = self._events.get_nowait()
                continue
            except queue.Empty:
                pass
            if self.state == "failed":
                raise BoardMismatch(self.error)
            if self.state == "closed":
                return []
            wait = 0.25 if deadline is None else min(0.25, deadline - time.monotonic())
            if wait <= 0:
                return []
            try:
                first = self._events.get(timeout=wait)
            except queue.Empty:
                pass
        out = [first]
        while len(out) < limit:
            try:
                event = self._events.get_nowait()
            except queue.Empty:
                break
            if event is None:  # the close() wake-up
                break
            out.append(event)
        return out

    def commit(self, boot: int, seq: int) -> None:
        """The consumer is done with every event of boot ``boot`` up to ``seq``
        (what they caused is saved): the board may forget them. Commits of an
        earlier boot of the board (it restarted meanwhile) change nothing."""
        with self._lock:
            if boot != self._boot or seq <= self._committed:
                return
            self._committed = min(seq, self._received)
        self._acknowledge_now()

    def _acknowledge_now(self) -> None:
        """Acknowledge what is due from the consumer's thread as it commits: the board
        forgets it now, not at the link thread's next turn (which waits up to
        RECEIVE_S when the board is quiet). The link thread's own check stays: an
        ACK sent twice is harmless, acks being cumulative."""
        if not self.connected.is_set():
            return  # the handshake's HELLO carries it
        ack = self._ack_due()
        with self._lock:
            if ack <= self._ack:
                return
            self._ack = ack
            self.stats.acked = ack
            try:
                self._send(c.encode_frame(c.ACK, ack))
            except LinkDown:
                pass  # the link thread notices and reconnects

    def set_leds(self, picture: LedPicture) -> None:
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
        """Connect, serve, reconnect, until closed. Every exception is caught here:
        only a board the host must not drive (BoardMismatch) ends the thread."""
        attempt = 0
        while not self._stop.is_set():
            self.state = "connecting"
            try:
                self.transport.open()
                self._handshake()
                attempt = 0
                self.health.recovered()
                self._serve()
            except BoardMismatch as exc:
                self.state = "failed"
                self.error = str(exc)
                self.health.stop("failed")  # said by the link's error
                log.error("%s", exc)
                self._close_transport()
                return
            except LinkDown as exc:
                log.info("%s: link down: %s", self.name, exc)
            except Exception as exc:  # a bug, or a frame we could not handle: never die
                problem = "bad frame" if isinstance(exc, _FrameFault) else "error"
                cause = exc.__cause__ if isinstance(exc, _FrameFault) else exc
                message = self.health.fault(problem, "resynchronising")
                log.error("%s (%s: %s)", message, type(cause).__name__, cause,
                          exc_info=cause)
                self._snapshot_wanted = True
            self.connected.clear()
            self._close_transport()
            if self._stop.is_set():
                break
            self._stop.wait(BACKOFF_S[min(attempt, len(BACKOFF_S) - 1)])
            attempt += 1

    def _close_transport(self) -> None:
        try:
            self.transport.close()
        except Exception:  # closing a broken port must not stop the link
            log.debug("closing %s failed", self.name, exc_info=True)

    def _send(self, frame: bytes) -> None:
        self.transport.send(frame)

    def _handshake(self) -> None:
        with self._lock:
            # A new connection starts a new command sequence; the LED picture is
            # restored after the welcome, and a snapshot still wanted asked again.
            self._snapshot_wanted |= any(t == c.SNAPSHOT_REQ for _, t, _ in self._pending)
            self._pending.clear()
            self._rebirth = None
            hello_seq = self._cmd_seq
        deadline = time.monotonic() + HANDSHAKE_TIMEOUT_S
        next_hello = 0.0
        while time.monotonic() < deadline and not self._stop.is_set():
            if time.monotonic() >= next_hello:
                ack = self._ack_due()
                self._send(c.encode_frame(c.HELLO, hello_seq, c.pack_hello(self._boot, ack)))
                self._ack = ack
                next_hello = time.monotonic() + HELLO_RETRY_S
            frames = self._receive(0.05)
            for k, (mtype, seq, fields) in enumerate(frames):
                if mtype == c.WELCOME:
                    self._welcome(fields)
                    # What came right after it (the board's resent events) is served next.
                    self._early = frames[k + 1:]
                    return
        raise LinkDown("no answer to hello")

    def _welcome(self, fields: tuple[Any, ...]) -> None:
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
        with self._lock:
            self._board_next = next_seq
            if boot != self._boot:
                # First contact or the board rebooted: what it knew is gone, so take
                # its word for where it stands and ask for every reading. Events of
                # the old boot still queued go to the consumer all the same.
                if self._boot:
                    log.warning("%s: board rebooted; resynchronising", self.name)
                self._boot = boot
                self._ack = self._committed = self._received = next_seq - 1
                self._skip.clear()
                self._bad_seen.clear()
                self._snapshot_wanted = True
            else:
                self._journal_overflowed(first_seq)
        self.stats.connects += 1
        self.state = "connected"
        self._send(c.encode_frame(c.ACK, self._ack))
        with self._lock:
            if self._leds is not None:
                self._queue_command(c.LED_FRAME, c.pack_leds(_entries(self._leds)))
        self._ask_snapshot_if_drained(time.monotonic())
        self.connected.set()

    def _serve(self) -> None:
        last_heard = time.monotonic()
        last_heartbeat = 0.0
        while not self._stop.is_set():
            if self._rebirth:
                raise LinkDown(self._rebirth)
            frames, self._early = self._early + self._receive(RECEIVE_S), []
            now = time.monotonic()
            if frames:
                last_heard = now
            elif now - last_heard > SILENCE_TIMEOUT_S:
                raise LinkDown("board silent")
            self._handle_frames(frames)
            if now - last_heartbeat >= HEARTBEAT_S:
                last_heartbeat = now
                self._send(c.encode_frame(c.HEARTBEAT, 0, c.pack_heartbeat(0, 0, 0, 0)))
            self._flush_commands(now)

    def _receive(self, timeout: float) -> list[tuple[int, int, Any]]:
        return self._decode(self.transport.receive(timeout))

    def _decode(self, raws: list[bytes]) -> list[tuple[int, int, Any]]:
        """The frames of ``raws`` this board can say, decoded; the rest counted as bad."""
        out = []
        for raw in raws:
            try:
                mtype, seq, payload = c.decode_frame(raw)
            except c.FrameError:
                self.stats.bad_frames += 1  # the line's noise: the resend repairs it
                continue
            frame = self._unpack(mtype, seq, payload)
            if frame is not None:
                out.append(frame)
        return out

    def _unpack(self, mtype: int, seq: int, payload: bytes) -> tuple[int, int, Any] | None:
        """An intact frame's fields, checked against the board; None if it is not
        what this board can say (a bad frame all the same: counted and said)."""
        try:
            fields = c.unpack(mtype, payload) if mtype in c.NAMES else None
            if self.board is not None:
                check_frame(self.board, mtype, fields)
        except c.FrameError as exc:
            self.stats.bad_frames += 1
            self._bad_frame(mtype, seq, str(exc))
            return None
        return mtype, seq, fields

    def _bad_frame(self, mtype: int, seq: int, why: str) -> None:
        """Drop a frame that passed its CRC but is malformed or names what the board
        does not have, as if it were damaged (the board sends it again); an event
        the board sends so too often is skipped, or nothing after it would be taken."""
        then = "dropped"
        if mtype in c.EVENTS:
            with self._lock:
                if seq == self._received + 1:
                    times = self._bad_seen[seq] = self._bad_seen.get(seq, 0) + 1
                    if times >= BAD_EVENT_RETRIES:
                        self._bad_seen.pop(seq, None)
                        self._skip[seq] = seq
                        self._received = seq
                        self.stats.skipped += 1
                        then = f"skipped (sent {times} times)"
        resync = mtype in (c.SNAPSHOT, c.WELCOME)
        if resync:
            # What the board says its whole state is, or who it is, cannot be read:
            # ask it again (a rebirth), shown until the snapshot is in.
            then = "dropped; resynchronising with a snapshot"
            with self._lock:
                self._snapshot_wanted = True
        name = c.NAMES.get(mtype, f"type {mtype}")
        message = self.health.fault(f"bad frame ({name} {seq}: {why})", then, recover=resync)
        self._complain("bad frame", message)

    def _complain(self, what: str, message: str) -> None:
        """Log ``message``, at most once a second for the same ``what`` (with a count)."""
        now = time.monotonic()
        said, since = self._complaints.get(what, (0.0, 0))
        if now - said >= REPORT_EVERY_S:
            more = f" ({since} more since the last report)" if since else ""
            log.warning("%s%s", message, more)
            self._complaints[what] = (now, 0)
        else:
            self._complaints[what] = (said, since + 1)

    def _handle_frames(self, frames: list[tuple[int, int, Any]], ack_due: bool = False) -> None:
        """Handle the frames that came, then acknowledge what they made due (one ACK
        for all of them; ``ack_due``: one in any case). A frame that cannot be handled
        is a fault of the link."""
        for mtype, seq, fields in frames:
            try:
                ack_due |= self._handle(mtype, seq, fields)
            except (LinkDown, BoardMismatch):
                raise
            except Exception as exc:
                raise _FrameFault(c.NAMES.get(mtype, mtype)) from exc
        ack = self._ack_due()
        if ack_due or ack > self._ack:
            self._ack = ack
            self.stats.acked = ack
            self._send(c.encode_frame(c.ACK, ack))

    def _handle(self, mtype: int, seq: int, fields: Any) -> bool:
        """Handle one frame from the board; True if an ack should go back."""
        board = self.board
        assert board is not None
        if mtype in c.EVENTS:
            if seq <= self._received:
                self.stats.duplicates += 1
                return True  # tell the board again where we stand
            if seq != self._received + 1:
                self.stats.out_of_order += 1  # a frame before it was lost: wait for the resend
                return False
            self._put(self._event(board, mtype, seq, fields))
            return False  # acknowledged once the consumer commits it
        if mtype == c.SNAPSHOT:
            return self._snapshot(board, seq, fields)
        if mtype == c.ACK:
            with self._lock:
                self._pending = [p for p in self._pending if p[0] > seq]
            return False
        if mtype == c.HEARTBEAT:
            next_seq, first_seq, uptime, boot = fields
            self.stats.board_journal = (first_seq, next_seq)
            if boot != self._boot:
                # The board restarted and its WELCOME was lost (noise): shake hands.
                raise LinkDown("the board restarted")
            self._board_time(uptime)
            with self._lock:
                self._board_next = next_seq
                if next_seq - 1 <= self._received:
                    self._known_until = None  # the board has nothing more: the backlog is in
                self._journal_overflowed(first_seq)
            self._ask_snapshot_if_drained(time.monotonic())
            return False
        if mtype == c.WELCOME:
            if fields[1] == self._boot:
                return False  # a second answer to a HELLO sent twice
            # Unasked, from a new boot: the board restarted while the cable stayed
            # in. Shake hands again so that it takes our commands (and we resync).
            raise LinkDown("the board restarted")
        if mtype == c.ERROR:
            code, text = fields
            self.stats.board_errors.append(text)
            if code == c.E_SENSOR:
                log.warning("%s: board reports a faulty sensor: %s", self.name, text)
            else:
                log.warning("%s: board refused a command: %s", self.name, text)
            return False
        log.debug("ignoring %s from the board", c.NAMES.get(mtype, mtype))
        return False

    def _put(self, event: BoardEvent) -> None:
        """Hand ``event`` (the next in order) to the consumer. When its queue is full
        the event is not taken: the board keeps it and sends it again."""
        with self._lock:
            try:
                self._events.put_nowait(event)
            except queue.Full:
                self.stats.held_back += 1
                self._complain("queue full", f"board link: {self._events.qsize()} events from "
                               f"{self.name} wait to be taken; the board keeps the rest "
                               "(not acknowledged)")
                return
            self._received = event.seq
            if event.type == "square" and event.square is not None:
                self.readings[event.square] = event.reading

    def _snapshot(self, board: Board, seq: int, fields: list[tuple[int, bytes]]) -> bool:
        """Take a snapshot that is exactly where the stream stands: one that covers
        events not received yet (lost on the way) would skip them, die rolls and
        presses included; it is asked for again once they are in."""
        with self._lock:
            if seq != self._received:
                if seq < self._received:
                    self.stats.duplicates += 1  # an old one, delivered again
                else:
                    self._snapshot_wanted = True
                return False
        readings = {}
        for index, raw in fields:
            cell = board.cell(index)
            readings[cell.name] = decode_reading(board, cell, raw)
        event = BoardEvent(seq=seq, type="snapshot", readings=dict(readings), boot=self._boot)
        with self._lock:
            try:
                self._events.put_nowait(event)
            except queue.Full:
                self.stats.held_back += 1
                self._snapshot_wanted = True
                return False
            self._snapshot_wanted = False
        self.readings = readings
        self.stats.snapshots += 1
        if self.health.state == "recovering" and self.connected.is_set():
            self.health.recovered()  # resynchronised after a bad snapshot or welcome
        return False

    def _ask_snapshot_if_drained(self, now: float) -> None:
        """Ask for a snapshot that is wanted once this host holds every event the
        board has (asked before, its answer would cover events still to come)."""
        with self._lock:
            if (self._snapshot_wanted and self._board_next - 1 <= self._received
                    and now - self._snapshot_asked >= HEARTBEAT_S):
                self._snapshot_asked = now
                self._queue_command(c.SNAPSHOT_REQ, b"")

    def _journal_overflowed(self, first_seq: int) -> None:
        """The board's journal now starts at ``first_seq`` (caller holds the lock): if
        events before it never reached us, they are gone. Skip them, take what the
        journal still holds, and ask for a snapshot."""
        if first_seq <= self._received + 1:
            return
        lost = first_seq - 1 - self._received
        self.stats.events_lost += lost
        # One run with the run just before it, if any (nobody took anything since):
        # the runs stay few however long nobody reads.
        start = next((first for first, last in self._skip.items() if last == self._received),
                     self._received + 1)
        self._skip[start] = first_seq - 1
        self._received = first_seq - 1
        self._snapshot_wanted = True
        message = self.health.fault(f"board journal overflowed ({lost} events lost)",
                                    "resynchronising with a snapshot", recover=False)
        log.warning("%s", message)

    def _ack_due(self) -> int:
        """The seq to acknowledge: what the consumer is done with, and past it every
        seq it will never see."""
        with self._lock:
            target = self._committed
            for first in sorted(self._skip):
                if first > target + 1:
                    break
                target = max(target, self._skip.pop(first))
            for seq in [s for s in self._bad_seen if s <= target]:
                del self._bad_seen[seq]
            return max(target, self._ack)

    def _drain(self) -> None:
        while True:
            try:
                self._events.get_nowait()
            except queue.Empty:
                return

    def _event(self, board: Board, mtype: int, seq: int, fields: Any) -> BoardEvent:
        *values, ms = fields
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
            return BoardEvent(seq=seq, type="square", square=cell.name, reading=reading,
                              ms=ms, at=at, boot=self._boot)
        if mtype == c.DIE:
            roll_id, value = values
            return BoardEvent(seq=seq, type="die", value=value, roll_id=roll_id, ms=ms, at=at,
                              boot=self._boot)
        return BoardEvent(seq=seq, type="button", button=board.button(values[0]).name,
                          ms=ms, at=at, boot=self._boot)

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
