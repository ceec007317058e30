"""The board link on an asyncio loop: a :class:`BoardSession` without a thread.

A club server holds a thousand boards; a thread per board that wakes ten times a
second to pace its timers costs more than the boards' play (issue 17). A
:class:`LoopLink` is the same session (the handshake, acks, resends, duplicate
dropping, snapshots, the board's clock: every rule of masume.link.session is the
one above) driven from outside: the MQTT hub hands it each frame as it comes
(:meth:`LoopLink.deliver`), and one loop timer per board serves the real
deadlines only: the heartbeat once a second (which also notices a silent board),
a command's resend while one is unacknowledged, the HELLO's retry while shaking
hands, the backoff after a drop. A board that says nothing costs its heartbeat.

``on_change`` is called (on the loop) when there are events to take, when the
backlog of a cut link is all in (the board's clock is known again), and when the
link comes up or goes down: what a table waits for. Nothing here raises into the
loop: a fault is counted in :attr:`health`, logged, and the link shakes hands again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from masume.alarm import Alarm
from masume.boards import Board, load_board
from masume.health import LOOP_CPU
from masume_protocol import codec as c

from .session import (
    BACKOFF_S,
    COMMAND_RESEND_S,
    HANDSHAKE_TIMEOUT_S,
    HEARTBEAT_S,
    HELLO_RETRY_S,
    SILENCE_TIMEOUT_S,
    BoardMismatch,
    BoardSession,
    _FrameFault,
)
from .transport import LinkDown

if TYPE_CHECKING:
    from .mqtt import MqttHub

log = logging.getLogger("masume.link")
#: The host's heartbeat, the same frame every second to every board.
HOST_HEARTBEAT = c.encode_frame(c.HEARTBEAT, 0, c.pack_heartbeat(0, 0, 0, 0))[:-1]


class _HubSend:
    """The transport a LoopLink needs: sending through the hub (frames come to
    :meth:`LoopLink.deliver`, never from a receive)."""

    def __init__(self, hub: MqttHub, unit: str) -> None:
        from .mqtt import topic

        self.hub = hub
        self.commands = topic(unit, "commands").encode()
        self.port = f"mqtt://{hub.url.host}:{hub.url.port}/{unit}"

    def open(self) -> None:
        pass

    def close(self) -> None:
        pass

    def send(self, frame: bytes, qos: int = 1) -> None:
        self.hub.publish(self.commands, frame[:-1] if frame.endswith(b"\x00") else frame,
                         qos=qos)

    def receive(self, timeout: float) -> list[bytes]:
        raise LinkDown("a loop link is handed its frames")


class LoopLink(BoardSession):
    """One board over ``hub`` (started with :meth:`MqttHub.start_on` on ``loop``),
    as unit ``unit``. Every method but the readers is the loop's own."""

    def __init__(self, hub: MqttHub, unit: str, loop: asyncio.AbstractEventLoop, *,
                 expect: str | None = None, resolve: Callable[[str], Board] = load_board,
                 name: str | None = None) -> None:
        self._hub_send = _HubSend(hub, unit)
        super().__init__(self._hub_send, expect=expect, resolve=resolve, name=name or unit)
        self.hub = hub
        self.unit = unit
        self.loop = loop
        self.on_change: Callable[[], None] | None = None
        self.dropped = 0  # a loop link drops nothing (the hub's report sums this)
        self._started = False
        self._handshaking = False
        self._hello_seq = 0
        self._handshake_until = 0.0
        self._next_hello = 0.0
        self._attempt = 0
        self._last_heard = 0.0
        self._last_heartbeat = 0.0
        # the heartbeat, a resend, a hello
        self._alarm = Alarm(loop, lambda: LOOP_CPU.run("link-timers", self._on_timer))
        self._backoff = Alarm(loop, self._retry)  # the next handshake after a drop
        self._waiting_online = False  # down until the board's status says online again

    # ---- what the hub and the table call -------------------------------------------

    @property
    def alive(self) -> bool:
        return self._started and self.state not in ("closed", "failed")

    def start(self) -> LoopLink:
        self._started = True
        self._connect()
        return self

    def close(self) -> None:
        self._started = False
        self._cancel()
        self.state = "closed"
        self.connected.clear()
        self.health.stop()

    def rewind(self, boot: int, ack: int, readings: Any = None) -> None:
        super().rewind(boot, ack, readings)
        if self._started and boot:  # boot 0 goes on with the board it has (see there)
            self._down("rewound to a saved state", at_once=True)

    def deliver(self, payloads: list[bytes]) -> None:
        """Frames from the board, those of one read together (the hub's
        :class:`~masume.link.mqtt.Receiver`): a resent journal is one ACK."""
        LOOP_CPU.run("frames", self._deliver, payloads)

    def _deliver(self, payloads: list[bytes]) -> None:
        if not self._started:
            return
        serving = self.state == "connected" and not self._handshaking
        frames = []
        resent = 0
        for payload in payloads:
            payload = payload[:-1] if payload.endswith(b"\x00") else payload
            if not payload or b"\x00" in payload:
                self.hub.malformed += 1
                continue
            if serving:
                head = c.peek_frame(payload)
                if head is not None and head[0] in c.EVENTS and head[1] <= self._received:
                    # An event handled already (a journal resent while the ACK was on
                    # its way): told where we stand, by one ACK for them all, and
                    # neither decoded nor checked (its seq alone says it is old; a
                    # damaged one is no worse answered so).
                    resent += 1
                    continue
            try:
                mtype, seq, body = c.decode_frame(payload)
            except c.FrameError:
                self.stats.bad_frames += 1  # the line's noise: the resend repairs it
                continue
            frame = self._unpack(mtype, seq, body)
            if frame is not None:
                frames.append(frame)
        if resent:
            self.stats.duplicates += resent
            if not frames:
                LOOP_CPU.relabel("resent")  # the board's resends alone (a server behind)
        if not frames and not resent:
            return
        before = (self._received, self._known_until, self.state, self._events.qsize())
        try:
            self._frames(frames, resent=bool(resent))
        except Exception as exc:  # noqa: BLE001 (never into the loop: said, then resync)
            self._failure(exc)
        after = (self._received, self._known_until is None, self.state, self._events.qsize())
        LOOP_CPU.events += max(0, after[3] - before[3])
        if (after[3] > before[3] or after[2] != before[2]
                or (before[1] is not None and after[1])):
            self._changed()

    def status(self, state: str) -> None:
        """The board's retained status: offline (its last will) drops the link until
        it is online again."""
        if not self._started:
            return
        if state == "offline":
            if self.state != "connecting" or not self._waiting_online:
                self._down(f"board {self.unit} went offline (last will)")
            self._waiting_online = True
        elif self._waiting_online:
            self._waiting_online = False
            self._attempt = 0
            self._connect()

    def broker(self, up: bool) -> None:
        """The hub's connection came (shake hands again) or went."""
        if not self._started:
            return
        if up:
            self._attempt = 0
            self._connect()
        else:
            self._down("broker connection lost", wait=True)

    def _queue_command(self, mtype: int, payload: bytes) -> None:
        super()._queue_command(mtype, payload)
        if self._started and self.state == "connected":
            self._alarm.at(self._last_send + COMMAND_RESEND_S)

    # ---- the handshake, the frames, the timer --------------------------------------

    def _connect(self) -> None:
        """Start a handshake (the thread's _handshake, with the loop's timer)."""
        self._cancel()
        if not self._started:
            return
        self.state = "connecting"
        log.debug("%s: connecting (broker %s, board %s)", self.name, self.hub.connected.is_set(),
                  self.hub.status.get(self.unit))
        if not self.hub.connected.is_set() or self.hub.status.get(self.unit) != "online":
            self._waiting_online = self.hub.status.get(self.unit) != "online"
            return  # the hub says when the broker or the board is back
        with self._lock:
            self._snapshot_wanted |= any(t == c.SNAPSHOT_REQ for _, t, _ in self._pending)
            self._pending.clear()
            self._rebirth = None
            self._hello_seq = self._cmd_seq
        self._handshaking = True
        now = time.monotonic()
        self._handshake_until = now + HANDSHAKE_TIMEOUT_S
        self._next_hello = now
        self._on_timer()

    def _hello(self, now: float) -> None:
        ack = self._ack_due()
        self._send(c.encode_frame(c.HELLO, self._hello_seq, c.pack_hello(self._boot, ack)))
        self._ack = ack
        self._next_hello = now + HELLO_RETRY_S

    def _frames(self, frames: list[tuple[int, int, Any]], resent: bool = False) -> None:
        if self._handshaking:
            for k, (mtype, _seq, fields) in enumerate(frames):
                if mtype == c.WELCOME:
                    self._handshaking = False
                    self._welcome(fields)
                    self._attempt = 0
                    self.health.recovered()
                    now = time.monotonic()
                    self._last_heard = now
                    self._last_heartbeat = 0.0
                    self._serve_frames(frames[k + 1:], now)
                    return
            return  # anything before the WELCOME is the old connection's
        if self.state == "connected":
            self._serve_frames(frames, time.monotonic(), resent)

    def _serve_frames(self, frames: list[tuple[int, int, Any]], now: float,
                      resent: bool = False) -> None:
        """The thread's _serve for the frames that came now (its timers: _on_timer);
        ``resent``: events handled already came too (an ACK goes back in any case)."""
        if frames or resent:
            self._last_heard = now
        self._handle_frames(frames, ack_due=resent)
        if not self._alarm.armed:
            self._on_timer()

    def _on_timer(self) -> None:
        if not self._started:
            return
        try:
            now = time.monotonic()
            if self._handshaking:
                if now >= self._handshake_until:
                    raise LinkDown("no answer to hello")
                if now >= self._next_hello:
                    self._hello(now)
                self._alarm.at(min(self._next_hello, self._handshake_until))
                return
            if self.state != "connected":
                return
            if now - self._last_heard > SILENCE_TIMEOUT_S:
                raise LinkDown("board silent")
            if now - self._last_heartbeat >= HEARTBEAT_S:
                self._last_heartbeat = now
                # QoS 0: a heartbeat lost is made good by the next, and a thousand boards'
                # heartbeats a second need no broker's acknowledgement each.
                self._hub_send.send(HOST_HEARTBEAT, qos=0)
            self._flush_commands(now)
            wake = self._last_heartbeat + HEARTBEAT_S
            if self._pending:
                wake = min(wake, self._last_send + COMMAND_RESEND_S)
            self._alarm.at(wake)
        except Exception as exc:  # noqa: BLE001 (never into the loop)
            self._failure(exc)

    def _cancel(self) -> None:
        self._alarm.cancel()
        self._backoff.cancel()
        self._handshaking = False

    def _failure(self, exc: Exception) -> None:
        """The thread's _run's except clauses: refused, down, or a fault (resync)."""
        if isinstance(exc, BoardMismatch):
            self.state = "failed"
            self.error = str(exc)
            self.health.stop("failed")
            log.error("%s", exc)
            self._cancel()
            self.connected.clear()
            self._changed()
            return
        if isinstance(exc, LinkDown):
            self._down(str(exc))
            return
        problem = "bad frame" if isinstance(exc, _FrameFault) else "error"
        cause = exc.__cause__ if isinstance(exc, _FrameFault) else exc
        message = self.health.fault(problem, "resynchronising")
        log.error("%s (%s: %s)", message, type(cause).__name__, cause, exc_info=cause)
        self._snapshot_wanted = True
        self._down(message)

    def _down(self, why: str, *, at_once: bool = False, wait: bool = False) -> None:
        """The link is down: shake hands again after the backoff (``at_once``: now;
        ``wait``: when the hub says the broker is back)."""
        if self.state in ("closed", "failed"):
            return
        was = self.connected.is_set()
        log.info("%s: link down: %s", self.name, why)
        self._cancel()
        self.connected.clear()
        self.state = "connecting"
        if wait:
            pass
        elif at_once:
            self._connect()
        else:
            delay = BACKOFF_S[min(self._attempt, len(BACKOFF_S) - 1)]
            self._attempt += 1
            self._backoff.at(time.monotonic() + delay)
        if was:
            self._changed()

    def _retry(self) -> None:
        try:
            self._connect()
        except Exception as exc:  # noqa: BLE001 (never into the loop)
            self._failure(exc)

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()
