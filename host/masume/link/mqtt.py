"""Club mode's transport: the board link over an MQTT broker.

The frames are the serial link's, one per MQTT message (the COBS-encoded
frame without its terminating zero). Topics for the board whose unit id is
``ID`` (protocol/SPEC.md, "MQTT"):

    masume/ID/events    board -> host, QoS 1
    masume/ID/commands  host -> board, QoS 1
    masume/ID/status    retained "online" / "offline" (birth and last will)

One :class:`MqttHub` (one broker connection, masume.link.mqtt_client's lean asyncio
client) serves every board of a club server: on the server's loop each board's
frames go to its :class:`~masume.link.loop.LoopLink`; or, on a loop of the hub's own,
each board gets an :class:`MqttTransport` under its own
:class:`~masume.link.session.BoardSession`, so the handshake, acks, resends and
duplicate dropping are exactly the serial link's. :func:`new_client` is a paho client
(the simulated board's network, masume.sim.net, stands in for the chip's umqtt with
it; the tests' other clients).

What comes in is bounded before it is kept: a message longer than a frame can be,
a status other than online/offline, more statuses than :data:`UNIT_LIMIT` boards,
or more frames than :data:`QUEUE_LIMIT` waiting for one board are dropped,
counted and logged (the broker's own limits, ``masume club broker-config``, keep
them from reaching us in the first place).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import queue
import re
import socket
import ssl
import stat
import threading
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import unquote, urlsplit

from masume.health import LOOP_CPU
from masume_protocol.codec import MAX_FRAME

from .mqtt_client import REFUSALS, MqttClient
from .transport import LinkDown

if TYPE_CHECKING:
    from paho.mqtt.client import Client

log = logging.getLogger("masume.link.mqtt")

PREFIX = "masume"
#: Unit ids: what may stand between the slashes of a topic (no wildcards).
UNIT_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
QUEUE_LIMIT = 1024  # frames waiting for one board's session; more are dropped (resent)
#: The longest message a frame makes: COBS adds a byte per 254 (and one), and a
#: sender may keep the terminating zero. Anything longer is no frame.
MAX_MESSAGE = MAX_FRAME + MAX_FRAME // 254 + 2
STATUSES = ("online", "offline")
#: Boards whose status the hub keeps (discovery); a flood of made-up unit ids on a
#: broker without ACLs stops here.
UNIT_LIMIT = 10_000
#: The server's keepalive with the broker: a ping every half of it while quiet, and the
#: connection given up when the broker says nothing for one and a half.
KEEPALIVE_S = 5
#: Where a broker password comes from when it is not in a file (never the command line).
PASSWORD_ENV = "MASUME_MQTT_PASSWORD"


def topic(unit: str, kind: str) -> str:
    return f"{PREFIX}/{unit}/{kind}"


def valid_unit(unit: str) -> bool:
    return bool(UNIT_RE.match(unit))


@dataclass(frozen=True)
class BrokerUrl:
    """``mqtt://[user[:password]@]host[:port]`` or ``mqtts://`` (TLS, port 8883).

    ``?ca=PATH`` names the CA certificate to trust for mqtts."""

    host: str
    port: int
    username: str | None = None
    password: str | None = dataclasses.field(default=None, repr=False)
    tls: bool = False
    ca: str | None = None

    @classmethod
    def parse(cls, url: str) -> BrokerUrl:
        parts = urlsplit(url)
        if parts.scheme not in ("mqtt", "mqtts", "tcp", "ssl"):
            raise ValueError(f"broker URL {url!r}: use mqtt://host:port or mqtts://host:port")
        tls = parts.scheme in ("mqtts", "ssl")
        if not parts.hostname:
            raise ValueError(f"broker URL {url!r} has no host")
        query = dict(p.split("=", 1) for p in parts.query.split("&") if "=" in p)
        return cls(
            host=parts.hostname,
            port=parts.port or (8883 if tls else 1883),
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
            tls=tls,
            ca=unquote(query["ca"]) if "ca" in query else None,
        )

    @classmethod
    def from_command_line(cls, url: str, password_file: Path | None = None,
                          environ: Mapping[str, str] = os.environ) -> BrokerUrl:
        """A broker URL given on a command line, its password from ``password_file``
        (:func:`read_password`) or else ``$MASUME_MQTT_PASSWORD``.

        Every user of the machine reads a process's arguments (``ps``,
        ``/proc/PID/cmdline``), so a URL that carries a password is refused.
        """
        parsed = cls.parse(url)
        if parsed.password is not None:
            raise ValueError(
                f"the broker URL carries a password, which ps shows to every user of this "
                f"machine: give {parsed.public()} and the password in a file "
                f"(--password-file FILE) or in the environment ({PASSWORD_ENV})")
        if parsed.username is None:
            if password_file is not None:
                raise ValueError(f"--password-file: the broker URL names no user "
                                 f"({parsed.public('USER')})")
            return parsed  # an anonymous broker (a rehearsal on one machine)
        password: str | None
        if password_file is not None:
            password = read_password(password_file, parsed.username)
        else:
            password = environ.get(PASSWORD_ENV) or None
        if password is None:
            raise ValueError(f"no password for broker user {parsed.username}: give "
                             f"--password-file FILE or set {PASSWORD_ENV}")
        return dataclasses.replace(parsed, password=password)

    def public(self, username: str | None = None) -> str:
        """The URL without its password (for messages); ``username`` stands in for a missing one."""
        user = self.username or username
        scheme = "mqtts" if self.tls else "mqtt"
        query = f"?ca={self.ca}" if self.ca else ""
        return f"{scheme}://{user + '@' if user else ''}{self.host}:{self.port}{query}"

    def ssl_context(self) -> ssl.SSLContext | None:
        """TLS for mqtts (the system's CAs, or ``?ca=``'s), else None."""
        if not self.tls:
            return None
        return ssl.create_default_context(cafile=self.ca)

    def configure(self, client: Client) -> None:
        """Credentials and TLS on a paho client."""
        if self.username is not None:
            client.username_pw_set(self.username, self.password)
        if self.tls:
            client.tls_set(ca_certs=self.ca, cert_reqs=ssl.CERT_REQUIRED)


def read_password(path: Path, username: str) -> str:
    """A broker password from a file: the file holds the password alone (its first
    line), or it is a credentials file as ``masume club broker-config`` writes
    (``credentials.toml``), and ``username``'s entry is taken. ValueError if none."""
    path = Path(path)
    try:
        text = path.read_text()
        mode = path.stat().st_mode
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"password file {path}: {exc}") from None
    if mode & (stat.S_IRGRP | stat.S_IROTH):
        log.warning("password file %s can be read by other users (chmod 600 %s)", path, path)
    credentials = parse_credentials(text)
    if credentials is not None:
        if username not in credentials:
            raise ValueError(f"password file {path}: no password for {username}")
        return credentials[username]
    password = text.split("\n", 1)[0].rstrip("\r")
    if not password:
        raise ValueError(f"password file {path}: its first line is empty")
    return password


def parse_credentials(text: str) -> dict[str, str] | None:
    """user -> password of a credentials file (TOML: ``[boards]`` and ``[servers]``
    tables of ``"user" = "password"``); None if ``text`` is not one."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    parts = [data.get(part) for part in ("boards", "servers")]
    if not any(isinstance(part, dict) for part in parts):
        return None
    return {user: password for part in parts if isinstance(part, dict)
            for user, password in part.items() if isinstance(password, str)}


def count_drop(count: int, message: str, *args: object) -> None:
    """Log a drop whose running ``count`` is 1, 10, 100, ...: every kind of drop is in
    the log, and a flood of them does not fill it."""
    if str(count).rstrip("0") == "1":
        log.warning(message + " (%d so far)", *args, count)


class Receiver(Protocol):
    """Where the hub hands one board's traffic: its frames, and its status."""

    dropped: int  # frames it could not take (counted in the hub's health report)

    def deliver(self, payloads: list[bytes]) -> None:
        """The board's messages that came in one read of the connection, in order."""

    def status(self, state: str) -> None: ...


def new_client(client_id: str, *, clean: bool = True) -> Client:
    import paho.mqtt.client as paho
    from paho.mqtt.enums import CallbackAPIVersion

    client = paho.Client(CallbackAPIVersion.VERSION2, client_id=client_id,
                         protocol=paho.MQTTv311, clean_session=clean)
    client.on_socket_open = _no_delay
    return client


def _no_delay(client: Client, userdata: object, sock: Any) -> None:
    """Nagle's algorithm off: a small message (an LED frame, an ACK) written while
    the last one is unacknowledged would otherwise wait for the peer's delayed ACK,
    40 ms on Linux (docs/benchmarks.md, club mode)."""
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except (OSError, AttributeError):
        pass  # not a TCP socket (a websocket wrapper, a unix socket): nothing to turn off


class _HubClient(MqttClient):
    """The hub's connection, its reading counted as the loop's ``mqtt-read`` stage
    (masume.health.LoopCpu; the boards' frames handed on from it are theirs), its
    writing as ``publish``."""

    def data_received(self, data: bytes) -> None:
        LOOP_CPU.run("mqtt-read", super().data_received, data)

    def _flush(self) -> None:  # the turn's packets written: the publishing's system call
        LOOP_CPU.run("publish", super()._flush)


class MqttHub:
    """One connection to the broker for many boards: discovery by the status
    topics, each board's events routed to its transport.

    ``on_status(unit, state)`` is called (on the hub's loop) for every status
    message: "online" or "offline". Every board's status is read (the wildcard
    ``masume/+/status``), but only the events of the boards that have a
    transport here (:meth:`transport`, until :meth:`forget`): a club server that
    shares the broker with others gets only its own boards' traffic, and takes
    a board's events over by asking for its transport.

    The connection is a :class:`~masume.link.mqtt_client.MqttClient` on an asyncio
    loop. :meth:`start_on` puts it on the caller's loop (the club server: one thread
    for every board), each board's frames handed as they come to its
    :class:`Receiver` (:meth:`attach`), and ``on_connection(up)`` told when the
    broker comes and goes; every call but :attr:`status` and the reports is then the
    loop's own. :meth:`start` gives it a loop on a thread of its own instead, and
    each board a :class:`MqttTransport` that a link thread reads (any thread may
    call it). Either way it reconnects by itself (0.1 s, doubling up to 2 s) and
    asks again for what it had subscribed.
    """

    def __init__(self, url: str | BrokerUrl, client_id: str,
                 on_status: Callable[[str, str], None] | None = None) -> None:
        self.url = url if isinstance(url, BrokerUrl) else BrokerUrl.parse(url)
        self.client_id = client_id
        self.on_status = on_status
        self.status: dict[str, str] = {}
        self.connected = threading.Event()
        self.malformed = 0  # messages on a topic we do not know, statuses not online/offline
        #: Messages dropped by a limit: longer than a frame (:data:`MAX_MESSAGE`), or the
        #: status of a board beyond :data:`UNIT_LIMIT`.
        self.dropped = 0
        self.faults = 0  # exceptions caught in the connection's callbacks (logged, going on)
        self.refused: str | None = None  # the broker's answer when it refuses us
        #: Events that came for a board with no transport here (in flight while it
        #: was forgotten; none otherwise: only our boards' events are subscribed).
        self.stray = 0
        self.received = 0  # messages from the broker
        self.sent = 0  # messages published
        self._routes: dict[str, Receiver] = {}
        #: The events topic (its bytes) -> its board's receiver: the way of nearly
        #: every message, looked up without decoding or splitting the topic.
        self._event_routes: dict[bytes, Receiver] = {}
        self._came: dict[bytes, list[bytes]] = {}  # a read's events, by topic (_read_done)
        self.on_connection: Callable[[bool], None] | None = None
        #: The QoS the boards' events are asked for with (start_on: 0, see there).
        self.events_qos = 1
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None  # the loop's thread (threading.get_ident())
        self._own_thread: threading.Thread | None = None  # start()'s
        self._closing = False
        self._retry = 0  # reconnects tried since the last connection
        self._client: MqttClient | None = None
        self._subscribed: set[str] = set()  # events topics asked for on this connection
        self._lock = threading.Lock()

    def start(self, wait: float = 5.0) -> MqttHub:
        """The connection on a loop of its own thread (a :class:`MqttTransport` per board)."""
        loop = asyncio.new_event_loop()
        self._own_thread = threading.Thread(target=loop.run_forever, daemon=True,
                                            name=f"mqtt-{self.client_id}")
        self._own_thread.start()
        loop.call_soon_threadsafe(self._guarded, self.start_on, loop)
        self.connected.wait(wait)
        return self

    def start_on(self, loop: asyncio.AbstractEventLoop) -> MqttHub:
        """Drive the connection from ``loop`` (call on its thread)."""
        self._loop = loop
        self._loop_thread = threading.get_ident()
        if self._own_thread is None:
            # The events at QoS 0 to this server: the link's own acks and resends make
            # them good, and the broker's window of 20 messages in flight a client (each
            # waiting for its PUBACK) no longer paces a thousand boards' traffic.
            self.events_qos = 0
        self._reconnect()
        return self

    def _on_loop(self, call: Callable[..., Any], *args: Any) -> None:
        """``call(*args)`` now on the loop's thread, else soon there (start()'s way)."""
        if self._loop_thread == threading.get_ident() or self._loop is None:
            call(*args)
        else:
            self._loop.call_soon_threadsafe(self._guarded, call, *args)

    def _guarded(self, call: Callable[..., Any], *args: Any) -> None:
        """A call of the connection's: what it raises is counted and logged, never left
        to the loop (where it would only be printed) or to a link's thread."""
        try:
            call(*args)
        except Exception as exc:
            self.faults += 1
            log.error("broker connection %s: %s in %s, going on", self.client_id,
                      type(exc).__name__, getattr(call, "__name__", call), exc_info=exc)

    def _reconnect(self) -> None:
        if self._closing or self._loop is None:
            return
        url = self.url
        client = _HubClient(self.client_id, on_message=self._on_message,
                            on_connect=self._on_connect, on_lost=self._on_lost,
                            on_read_done=self._read_done,
                            username=url.username, password=url.password, keepalive=KEEPALIVE_S)
        self._client = client
        self._loop.create_task(self._connect(client))

    async def _connect(self, client: MqttClient) -> None:
        try:
            await client.connect(self.url.host, self.url.port, ssl_context=self.url.ssl_context())
        except (OSError, ssl.SSLError) as exc:  # TimeoutError is an OSError
            self._try_again(f"broker {self.url.host}:{self.url.port}: {exc or type(exc).__name__}")

    def _try_again(self, why: str) -> None:
        if self._closing or self._loop is None:
            return
        delay = min(2.0, 0.1 * 2 ** self._retry)
        self._retry += 1
        count_drop(self._retry, "%s; trying again in %.1f s", why, delay)
        self._loop.call_later(delay, self._reconnect)

    def attach(self, unit: str, receiver: Receiver) -> None:
        """Hand ``unit``'s frames and status to ``receiver`` (:meth:`start_on`'s way)."""
        if not valid_unit(unit):
            raise ValueError(f"{unit!r} is not a board unit id (letters, digits, _ . -)")
        with self._lock:
            self._routes[unit] = receiver
            self._event_routes[topic(unit, "events").encode()] = receiver
        self._on_loop(self._subscribe, unit)

    def close(self) -> None:
        self._closing = True
        done = threading.Event()

        def bye() -> None:
            try:
                if self._client is not None:
                    self._client.disconnect()  # the DISCONNECT goes out now
            finally:
                self.connected.clear()
                done.set()

        if self._own_thread is not None and self._loop is not None:
            loop = self._loop
            loop.call_soon_threadsafe(bye)
            done.wait(5)
            loop.call_soon_threadsafe(loop.stop)
            self._own_thread.join(5)
            if not self._own_thread.is_alive():
                loop.close()
            return
        self._on_loop(bye)

    def health_report(self) -> dict[str, Any]:
        """The broker connection and the loop that runs every board's traffic."""
        loop = self._loop
        return {"connected": self.connected.is_set(),
                "alive": loop is not None and loop.is_running(), "faults": self.faults,
                "malformed": self.malformed, "stray": self.stray, "dropped": self.dropped,
                "received": self.received, "sent": self.sent,
                "unacked": self._client.unacked if self._client else 0,
                "frames_dropped": sum(t.dropped for t in list(self._routes.values()))}

    # the connection's callbacks (on the loop) ------------------------------------

    def _on_connect(self, code: int) -> None:
        if code != 0:
            self.refused = REFUSALS.get(code, f"code {code}")
            log.error("broker refused %s: %s", self.client_id, self.refused)
            return  # the client closes the connection: _on_lost tries again
        self.refused = None
        self._retry = 0
        with self._lock:
            # A new connection (clean session) holds no subscriptions: ask again.
            self._subscribed.clear()
            units = list(self._routes)
        assert self._client is not None
        self._client.subscribe(topic("+", "status"), 1)
        for unit in units:
            self._subscribe(unit)
        self.connected.set()
        log.info("connected to the broker as %s", self.client_id)
        if self.on_connection:
            self._guarded(self.on_connection, True)

    def _on_lost(self, exc: Exception | None) -> None:
        was = self.connected.is_set()
        self.connected.clear()
        if was:
            log.info("broker connection lost (%s)", exc or "closed")
            if self.on_connection:
                self._guarded(self.on_connection, False)
        if not self._closing:
            self._try_again(f"broker connection {self.client_id} "
                            f"{'lost' if was else 'not made'} ({exc or 'closed'})")

    def _on_message(self, name: bytes, payload: bytes) -> None:
        self.received += 1
        LOOP_CPU.messages += 1
        route = self._event_routes.get(name)
        if route is not None:  # a board's events: nearly every message
            if len(payload) > MAX_MESSAGE:
                self.dropped += 1
                count_drop(self.dropped, "dropping a %d-byte message from %s: no frame is "
                           "longer than %d", len(payload), name.decode().split("/")[1],
                           MAX_MESSAGE)
                return
            came = self._came.get(name)
            if came is None:
                self._came[name] = [payload]
            else:
                came.append(payload)
            return
        self._read_done()  # what came before this message goes first
        try:
            prefix, unit, kind = name.decode().split("/")
        except (ValueError, UnicodeDecodeError):  # not three levels, or not UTF-8
            prefix = unit = kind = ""
        if prefix != PREFIX or not valid_unit(unit):
            self.malformed += 1
            count_drop(self.malformed, "ignoring a message on %r", name[:100])
            return
        if kind == "status":
            state = payload.decode("ascii", "replace") if len(payload) <= len("offline") else ""
            if state not in STATUSES:
                self.malformed += 1
                count_drop(self.malformed, "ignoring status %r of %s",
                           payload[:40].decode("utf-8", "replace"), unit)
                return
            if unit not in self.status and len(self.status) >= UNIT_LIMIT:
                self.dropped += 1
                count_drop(self.dropped, "ignoring %s: already %d boards known", unit, UNIT_LIMIT)
                return
            self.status[unit] = state
            receiver = self._routes.get(unit)
            if receiver is not None:
                self._guarded(receiver.status, state)
            if self.on_status:
                try:
                    self.on_status(unit, state)
                except Exception:
                    log.exception("status handler failed for %s", unit)
        elif kind == "events":
            if len(payload) > MAX_MESSAGE:
                self.dropped += 1
                count_drop(self.dropped, "dropping a %d-byte message from %s: no frame is "
                           "longer than %d", len(payload), unit, MAX_MESSAGE)
                return
            self.stray += 1  # a board with no transport here (its route would have taken it)
        else:
            self.malformed += 1
            count_drop(self.malformed, "ignoring a message on %r", name[:100])

    def _read_done(self) -> None:
        """The end of a read: each board's messages of it handed on together (the
        frames of a resent journal make one turn of its link, and one ACK)."""
        came, self._came = self._came, {}
        for name, payloads in came.items():
            route = self._event_routes.get(name)
            if route is None:
                self.stray += len(payloads)
                continue
            try:
                route.deliver(payloads)
            except Exception as exc:
                self.faults += 1
                log.error("broker connection %s: %s delivering to %s, going on",
                          self.client_id, type(exc).__name__, name[:100], exc_info=exc)

    # transports -----------------------------------------------------------

    def transport(self, unit: str) -> MqttTransport:
        if not valid_unit(unit):
            raise ValueError(f"{unit!r} is not a board unit id (letters, digits, _ . -)")
        with self._lock:
            route = self._routes.get(unit)
            if not isinstance(route, MqttTransport):
                route = MqttTransport(self, unit)
                self._routes[unit] = route
                self._event_routes[topic(unit, "events").encode()] = route
        self._on_loop(self._subscribe, unit)
        return route

    def forget(self, unit: str) -> None:
        """Stop routing ``unit``'s events here, and stop receiving them."""
        name = topic(unit, "events")
        with self._lock:
            self._routes.pop(unit, None)
            self._event_routes.pop(name.encode(), None)
            asked = name in self._subscribed
            self._subscribed.discard(name)
        if asked:
            self._on_loop(self._unsubscribe, name)

    def _unsubscribe(self, name: str) -> None:
        if self._client is not None and self.connected.is_set():
            self._client.unsubscribe(name)

    @property
    def subscriptions(self) -> set[str]:
        """The topics asked for on the current connection (the status wildcard included)."""
        with self._lock:
            out = set(self._subscribed)
        return out | ({topic("+", "status")} if self.connected.is_set() else set())

    def _subscribe(self, unit: str) -> None:
        """On the loop: ask for ``unit``'s events (again after a reconnect); a no-op
        while the broker is away: the connect handler asks for every routed board."""
        name = topic(unit, "events")
        client = self._client
        with self._lock:
            if name in self._subscribed or unit not in self._routes:
                return
            if client is None or not client.connected:
                return
            self._subscribed.add(name)
        client.subscribe(name, self.events_qos)

    def publish(self, topic_: str | bytes, payload: bytes, *, qos: int = 1,
                retain: bool = False) -> None:
        """Publish now (on the loop's thread) or soon (another's, :meth:`start`'s way);
        LinkDown while the broker is away."""
        if not self.connected.is_set():
            raise LinkDown("broker not connected")
        name = topic_ if isinstance(topic_, bytes) else topic_.encode()
        if self._loop_thread != threading.get_ident():
            assert self._loop is not None
            self._loop.call_soon_threadsafe(self._publish_soon, name, payload, qos, retain)
            return
        client = self._client
        if client is None or not LOOP_CPU.run("publish", client.publish, name, payload, qos,
                                              retain):
            raise LinkDown("broker not connected")
        self.sent += 1
        LOOP_CPU.messages += 1

    def _publish_soon(self, name: bytes, payload: bytes, qos: int, retain: bool) -> None:
        """A publish from a link's thread: lost if the broker went meanwhile (the link
        sends it again, as a publish the broker never acknowledged)."""
        if self._client is not None and self._client.publish(name, payload, qos, retain):
            self.sent += 1


class MqttTransport:
    """One board's frames through the hub (a :class:`Transport`)."""

    def __init__(self, hub: MqttHub, unit: str) -> None:
        self.hub = hub
        self.unit = unit
        self.commands = topic(unit, "commands").encode()
        self.offline = threading.Event()
        self._frames: queue.Queue[bytes] = queue.Queue(QUEUE_LIMIT)
        self.dropped = 0  # frames dropped because the session did not take them in time

    @property
    def port(self) -> str:
        return f"mqtt://{self.hub.url.host}:{self.hub.url.port}/{self.unit}"

    def status(self, state: str) -> None:
        if state == "offline":
            self.offline.set()

    def deliver(self, payloads: list[bytes]) -> None:
        for payload in payloads:
            if payload.endswith(b"\x00"):
                payload = payload[:-1]
            if not payload or b"\x00" in payload:
                self.hub.malformed += 1
                count_drop(self.hub.malformed, "ignoring a message from %s: not one frame",
                           self.unit)
                continue
            try:
                self._frames.put_nowait(payload)
            except queue.Full:
                # Its session is behind: the board resends what is not acknowledged.
                self.dropped += 1
                count_drop(self.dropped, "%s: %d frames wait already, dropping one", self.unit,
                           QUEUE_LIMIT)

    def open(self) -> None:
        if not self.hub.connected.is_set():
            raise LinkDown("broker not connected")
        if self.hub.status.get(self.unit) != "online":
            raise LinkDown(f"board {self.unit} is offline")
        self.offline.clear()
        while True:
            try:
                self._frames.get_nowait()
            except queue.Empty:
                break

    def close(self) -> None:
        pass

    def send(self, frame: bytes) -> None:
        if frame.endswith(b"\x00"):
            frame = frame[:-1]
        self.hub.publish(self.commands, frame)

    def receive(self, timeout: float) -> list[bytes]:
        if self.offline.is_set():
            self.offline.clear()
            raise LinkDown(f"board {self.unit} went offline (last will)")
        if not self.hub.connected.is_set():
            time.sleep(min(timeout, 0.05))
            raise LinkDown("broker connection lost")
        out = []
        try:
            out.append(self._frames.get(timeout=timeout))
            while True:
                out.append(self._frames.get_nowait())
        except queue.Empty:
            pass
        return out
