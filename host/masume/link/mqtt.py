"""Club mode's transport: the board link over an MQTT broker (paho-mqtt).

The frames are the serial link's, one per MQTT message (the COBS-encoded
frame without its terminating zero). Topics for the board whose unit id is
``ID`` (protocol/SPEC.md, "MQTT"):

    masume/ID/events    board -> host, QoS 1
    masume/ID/commands  host -> board, QoS 1
    masume/ID/status    retained "online" / "offline" (birth and last will)

One :class:`MqttHub` (one broker connection) serves every board of a club
server; each board gets an :class:`MqttTransport` under its own
:class:`~masume.link.session.BoardSession`, so the handshake, acks, resends and
duplicate dropping are exactly the serial link's.

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

from masume_protocol.codec import MAX_FRAME

from .transport import LinkDown

if TYPE_CHECKING:
    from paho.mqtt.client import Client, ConnectFlags, DisconnectFlags, MQTTMessage
    from paho.mqtt.properties import Properties
    from paho.mqtt.reasoncodes import ReasonCode

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

    def deliver(self, payload: bytes) -> None: ...

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


class MqttHub:
    """One connection to the broker for many boards: discovery by the status
    topics, each board's events routed to its transport.

    ``on_status(unit, state)`` is called (on paho's thread) for every status
    message: "online" or "offline". Every board's status is read (the wildcard
    ``masume/+/status``), but only the events of the boards that have a
    transport here (:meth:`transport`, until :meth:`forget`): a club server that
    shares the broker with others gets only its own boards' traffic, and takes
    a board's events over by asking for its transport.

    Two ways to run: :meth:`start` gives the connection paho's own thread, and each
    board a :class:`MqttTransport` that a link thread reads; :meth:`start_on` drives
    it from an asyncio loop instead (one thread for every board: the club server),
    each board's frames handed as they come to its :class:`Receiver`
    (:meth:`attach`), and ``on_connection(up)`` told when the broker comes and goes.
    In that way every call but :attr:`status` and the reports is the loop's own.
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
        self.faults = 0  # exceptions caught in paho's callbacks (logged, then going on)
        self._paho_thread: threading.Thread | None = None
        self.refused: str | None = None  # the broker's answer when it refuses us
        #: Events that came for a board with no transport here (in flight while it
        #: was forgotten; none otherwise: only our boards' events are subscribed).
        self.stray = 0
        self._routes: dict[str, Receiver] = {}
        self.on_connection: Callable[[bool], None] | None = None
        #: The QoS the boards' events are asked for with (start_on: 0, see there).
        self.events_qos = 1
        self._loop: asyncio.AbstractEventLoop | None = None  # start_on's
        self._closing = False
        self._retry = 0  # reconnects tried since the last connection (start_on)
        self._subscribed: set[str] = set()  # events topics asked for on this connection
        self._lock = threading.Lock()
        self._client = new_client(client_id)
        # No limit of paho's on messages awaiting the broker's PUBACK (20 by default):
        # a server's thousand boards' LED frames and ACKs would queue behind it.
        self._client.max_inflight_messages_set(0)
        self.url.configure(self._client)
        self._client.reconnect_delay_set(0.1, 2)  # type: ignore[arg-type]  # seconds, a float
        self._client.on_connect = self._guarded(self._on_connect)
        self._client.on_disconnect = self._guarded(self._on_disconnect)
        self._client.on_message = self._guarded(self._on_message)

    def start(self, wait: float = 5.0) -> MqttHub:
        try:
            self._client.connect_async(self.url.host, self.url.port, keepalive=5)
        except OSError as exc:
            log.warning("broker %s:%d: %s", self.url.host, self.url.port, exc)
        self._client.loop_start()
        self.connected.wait(wait)
        return self

    def start_on(self, loop: asyncio.AbstractEventLoop) -> MqttHub:
        """Drive the connection from ``loop`` (call on its thread): paho's external
        loop API, its socket watched by the loop; keepalive once a second, and the
        reconnects (0.1 s, doubling up to 2 s) are the hub's own."""
        self._loop = loop
        # The events at QoS 0 to this server: the link's own acks and resends make
        # them good, and the broker's window of 20 messages in flight a client (each
        # waiting for its PUBACK) no longer paces a thousand boards' traffic.
        self.events_qos = 0
        client = self._client
        client.on_socket_open = self._socket_open
        client.on_socket_close = self._socket_close
        client.on_socket_register_write = (
            lambda _c, _u, sock: loop.add_writer(sock, self._loop_call, client.loop_write))
        def unregister_write(_client: Client, _userdata: object, sock: Any) -> None:
            loop.remove_writer(sock)

        client.on_socket_unregister_write = unregister_write
        self._reconnect(first=True)
        self._keepalive()
        return self

    def _socket_open(self, client: Client, userdata: object, sock: Any) -> None:
        _no_delay(client, userdata, sock)
        assert self._loop is not None
        self._loop.add_reader(sock, self._loop_call, client.loop_read, 64)

    def _socket_close(self, client: Client, userdata: object, sock: Any) -> None:
        assert self._loop is not None
        self._loop.remove_reader(sock)
        self._loop.remove_writer(sock)

    def _loop_call(self, call: Callable[..., Any], *args: Any) -> None:
        """paho's read, write and keepalive on the loop: what they raise is counted and
        logged, never left to the loop (where it would only be printed)."""
        self._paho_thread = threading.current_thread()
        try:
            call(*args)
        except Exception as exc:
            self.faults += 1
            log.error("broker connection %s: %s in %s, going on", self.client_id,
                      type(exc).__name__, getattr(call, "__name__", call), exc_info=exc)

    def _keepalive(self) -> None:
        if self._closing or self._loop is None:
            return
        self._loop_call(self._client.loop_misc)
        self._loop.call_later(1.0, self._keepalive)

    def _reconnect(self, first: bool = False) -> None:
        if self._closing or self._loop is None:
            return
        try:
            if first:
                self._client.connect(self.url.host, self.url.port, keepalive=5)
            else:
                self._client.reconnect()
            self._retry = 0
        except (OSError, ssl.SSLError) as exc:
            delay = min(2.0, 0.1 * 2 ** self._retry)
            self._retry += 1
            count_drop(self._retry, "broker %s:%d: %s; trying again in %.1f s", self.url.host,
                       self.url.port, exc, delay)
            self._loop.call_later(delay, self._reconnect)

    def attach(self, unit: str, receiver: Receiver) -> None:
        """Hand ``unit``'s frames and status to ``receiver`` (:meth:`start_on`'s way)."""
        if not valid_unit(unit):
            raise ValueError(f"{unit!r} is not a board unit id (letters, digits, _ . -)")
        with self._lock:
            self._routes[unit] = receiver
        self._subscribe(unit)

    def close(self) -> None:
        self._closing = True
        if self._loop is not None:  # on the loop's thread: the DISCONNECT goes out now
            try:
                self._client.disconnect()
                self._client.loop_write()
            finally:
                self.connected.clear()
            return
        try:
            self._client.disconnect()
        finally:
            self._client.loop_stop()
        self.connected.clear()

    def health_report(self) -> dict[str, Any]:
        """The broker connection and paho's thread (which runs every board's traffic)."""
        thread = self._paho_thread
        alive = (self._loop.is_running() if self._loop is not None
                 else thread is not None and thread.is_alive())
        return {"connected": self.connected.is_set(), "alive": alive, "faults": self.faults,
                "malformed": self.malformed, "stray": self.stray, "dropped": self.dropped,
                "frames_dropped": sum(t.dropped for t in list(self._routes.values()))}

    # paho's thread ----------------------------------------------------------

    def _guarded(self, callback: Callable[..., None]) -> Callable[..., None]:
        """A callback for paho's thread: an exception would end that thread, and every
        board's traffic with it. Logged and counted instead; the hub goes on."""
        def run(*args: Any) -> None:
            self._paho_thread = threading.current_thread()
            try:
                callback(*args)
            except Exception as exc:
                self.faults += 1
                log.error("broker connection %s: %s in %s, going on", self.client_id,
                          type(exc).__name__, callback.__name__, exc_info=exc)
        return run

    def _on_connect(self, client: Client, userdata: object, flags: ConnectFlags,
                    reason: ReasonCode, properties: Properties | None = None) -> None:
        if reason.is_failure:
            self.refused = str(reason)
            log.error("broker refused %s: %s", self.client_id, reason)
            return
        self.refused = None
        with self._lock:
            # A new connection (clean session) holds no subscriptions: ask again.
            self._subscribed.clear()
            units = list(self._routes)
        client.subscribe(topic("+", "status"), 1)
        for unit in units:
            self._subscribe(unit)
        self.connected.set()
        log.info("connected to the broker as %s", self.client_id)
        if self.on_connection:
            self.on_connection(True)

    def _on_disconnect(self, client: Client, userdata: object, flags: DisconnectFlags,
                       reason: ReasonCode, properties: Properties | None = None) -> None:
        self.connected.clear()
        log.info("broker connection lost (%s)", reason)
        if self._loop is not None and not self._closing:
            self._loop.call_later(0.1, self._reconnect)
        if self.on_connection:
            self.on_connection(False)

    def _on_message(self, client: Client, userdata: object, message: MQTTMessage) -> None:
        try:
            prefix, unit, kind = message.topic.split("/")
        except ValueError:  # not three levels, or not UTF-8
            prefix = unit = kind = ""
        if prefix != PREFIX or not valid_unit(unit):
            self.malformed += 1
            count_drop(self.malformed, "ignoring a message on %r", message.topic[:100])
            return
        payload = message.payload
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
            route = self._routes.get(unit)
            if route is not None:
                route.status(state)
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
            route = self._routes.get(unit)
            if route is not None:
                route.deliver(bytes(payload))
            else:
                self.stray += 1

    # transports -----------------------------------------------------------

    def transport(self, unit: str) -> MqttTransport:
        if not valid_unit(unit):
            raise ValueError(f"{unit!r} is not a board unit id (letters, digits, _ . -)")
        with self._lock:
            route = self._routes.get(unit)
            if not isinstance(route, MqttTransport):
                route = MqttTransport(self, unit)
                self._routes[unit] = route
        self._subscribe(unit)
        return route

    def forget(self, unit: str) -> None:
        """Stop routing ``unit``'s events here, and stop receiving them."""
        with self._lock:
            self._routes.pop(unit, None)
            asked = topic(unit, "events") in self._subscribed
            self._subscribed.discard(topic(unit, "events"))
        if asked and self.connected.is_set():
            self._client.unsubscribe(topic(unit, "events"))

    @property
    def subscriptions(self) -> set[str]:
        """The topics asked for on the current connection (the status wildcard included)."""
        with self._lock:
            out = set(self._subscribed)
        return out | ({topic("+", "status")} if self.connected.is_set() else set())

    def _subscribe(self, unit: str) -> None:
        """Ask for ``unit``'s events (again after a reconnect); a no-op while the
        broker is away: the connect handler asks for every routed board."""
        name = topic(unit, "events")
        with self._lock:
            if name in self._subscribed or unit not in self._routes:
                return
            self._subscribed.add(name)
        # Outside our lock: paho's own locks are taken in there, and its thread
        # takes ours in the connect handler.
        result, _ = self._client.subscribe(name, self.events_qos)
        if result != 0:
            with self._lock:
                self._subscribed.discard(name)

    def publish(self, topic_: str, payload: bytes, *, qos: int = 1, retain: bool = False) -> None:
        if not self.connected.is_set():
            raise LinkDown("broker not connected")
        info = self._client.publish(topic_, payload, qos=qos, retain=retain)
        if info.rc != 0:
            raise LinkDown(f"publish failed (paho rc {info.rc})")


class MqttTransport:
    """One board's frames through the hub (a :class:`Transport`)."""

    def __init__(self, hub: MqttHub, unit: str) -> None:
        self.hub = hub
        self.unit = unit
        self.commands = topic(unit, "commands")
        self.offline = threading.Event()
        self._frames: queue.Queue[bytes] = queue.Queue(QUEUE_LIMIT)
        self.dropped = 0  # frames dropped because the session did not take them in time

    @property
    def port(self) -> str:
        return f"mqtt://{self.hub.url.host}:{self.hub.url.port}/{self.unit}"

    def status(self, state: str) -> None:
        if state == "offline":
            self.offline.set()

    def deliver(self, payload: bytes) -> None:
        if payload.endswith(b"\x00"):
            payload = payload[:-1]
        if not payload or b"\x00" in payload:
            self.hub.malformed += 1
            count_drop(self.hub.malformed, "ignoring a message from %s: not one frame", self.unit)
            return
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
