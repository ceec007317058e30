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
"""

from __future__ import annotations

import logging
import queue
import re
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from typing import Callable
from urllib.parse import unquote, urlsplit

from .transport import LinkDown

log = logging.getLogger("masume.link.mqtt")

PREFIX = "masume"
#: Unit ids: what may stand between the slashes of a topic (no wildcards).
UNIT_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
QUEUE_LIMIT = 1024  # frames waiting for one board's session; more are dropped (resent)
#: Boards whose status a hub keeps; the status of any more is ignored (and counted):
#: a flood of made-up unit ids must not grow the server.
MAX_UNITS = 4096
REPORT_EVERY_S = 1.0  # dropped frames are said at most once a second per board


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
    password: str | None = None
    tls: bool = False
    ca: str | None = None

    @classmethod
    def parse(cls, url: str) -> "BrokerUrl":
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

    def configure(self, client) -> None:
        """Credentials and TLS on a paho client."""
        if self.username is not None:
            client.username_pw_set(self.username, self.password)
        if self.tls:
            client.tls_set(ca_certs=self.ca, cert_reqs=ssl.CERT_REQUIRED)


def new_client(client_id: str, *, clean: bool = True):
    import paho.mqtt.client as paho

    client = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=client_id,
                         protocol=paho.MQTTv311, clean_session=clean)
    client.on_socket_open = _no_delay
    return client


def _no_delay(client, userdata, sock) -> None:
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
    """

    def __init__(self, url: str | BrokerUrl, client_id: str,
                 on_status: Callable[[str, str], None] | None = None) -> None:
        self.url = url if isinstance(url, BrokerUrl) else BrokerUrl.parse(url)
        self.client_id = client_id
        self.on_status = on_status
        self.status: dict[str, str] = {}
        self.connected = threading.Event()
        self.malformed = 0
        self.too_many = 0  # status messages of boards past MAX_UNITS, ignored
        self.faults = 0  # exceptions caught in paho's callbacks (logged, then going on)
        self._paho_thread: threading.Thread | None = None
        self.refused: str | None = None  # the broker's answer when it refuses us
        #: Events that came for a board with no transport here (in flight while it
        #: was forgotten; none otherwise: only our boards' events are subscribed).
        self.stray = 0
        self._routes: dict[str, "MqttTransport"] = {}
        self._subscribed: set[str] = set()  # events topics asked for on this connection
        self._lock = threading.Lock()
        self._client = new_client(client_id)
        self.url.configure(self._client)
        self._client.reconnect_delay_set(0.1, 2)
        self._client.on_connect = self._guarded(self._on_connect)
        self._client.on_disconnect = self._guarded(self._on_disconnect)
        self._client.on_message = self._guarded(self._on_message)

    def start(self, wait: float = 5.0) -> "MqttHub":
        try:
            self._client.connect_async(self.url.host, self.url.port, keepalive=5)
        except OSError as exc:
            log.warning("broker %s:%d: %s", self.url.host, self.url.port, exc)
        self._client.loop_start()
        self.connected.wait(wait)
        return self

    def close(self) -> None:
        try:
            self._client.disconnect()
        finally:
            self._client.loop_stop()
        self.connected.clear()

    def health_report(self) -> dict:
        """The broker connection and paho's thread (which runs every board's traffic)."""
        thread = self._paho_thread
        return {"connected": self.connected.is_set(),
                "alive": thread is not None and thread.is_alive(), "faults": self.faults,
                "malformed": self.malformed, "stray": self.stray, "too_many": self.too_many,
                "dropped": sum(t.dropped for t in list(self._routes.values()))}

    # paho's thread ----------------------------------------------------------

    def _guarded(self, callback: Callable) -> Callable:
        """A callback for paho's thread: an exception would end that thread, and every
        board's traffic with it. Logged and counted instead; the hub goes on."""
        def run(*args) -> None:
            self._paho_thread = threading.current_thread()
            try:
                callback(*args)
            except Exception as exc:
                self.faults += 1
                log.error("broker connection %s: %s in %s, going on", self.client_id,
                          type(exc).__name__, callback.__name__, exc_info=exc)
        return run

    def _on_connect(self, client, userdata, flags, reason, properties=None) -> None:
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

    def _on_disconnect(self, client, userdata, flags, reason, properties=None) -> None:
        self.connected.clear()
        log.info("broker connection lost (%s)", reason)

    def _on_message(self, client, userdata, message) -> None:
        try:
            prefix, unit, kind = message.topic.split("/")
        except ValueError:
            prefix = unit = kind = ""
        if prefix != PREFIX or not valid_unit(unit):
            self.malformed += 1
            log.warning("ignoring a message on %r", message.topic[:100])
            return
        if kind == "status":
            state = message.payload.decode("utf-8", "replace")
            if state not in ("online", "offline"):
                self.malformed += 1
                log.warning("ignoring status %r of %s", state[:40], unit)
                return
            if unit not in self.status and len(self.status) >= MAX_UNITS:
                self.too_many += 1
                if self.too_many == 1:
                    log.warning("more than %d boards on the broker: ignoring the status of "
                                "%s and any further new ones (counted)", MAX_UNITS, unit)
                return
            self.status[unit] = state
            route = self._routes.get(unit)
            if route is not None and state == "offline":
                route.offline.set()
            if self.on_status:
                try:
                    self.on_status(unit, state)
                except Exception:
                    log.exception("status handler failed for %s", unit)
        elif kind == "events":
            route = self._routes.get(unit)
            if route is not None:
                route.deliver(bytes(message.payload))
            else:
                self.stray += 1

    # transports -----------------------------------------------------------

    def transport(self, unit: str) -> "MqttTransport":
        if not valid_unit(unit):
            raise ValueError(f"{unit!r} is not a board unit id (letters, digits, _ . -)")
        with self._lock:
            route = self._routes.get(unit)
            if route is None:
                route = self._routes[unit] = MqttTransport(self, unit)
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
        result, _ = self._client.subscribe(name, 1)
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
        self._said = (0.0, 0)  # (when dropping was last said, dropped then)

    @property
    def port(self) -> str:
        return f"mqtt://{self.hub.url.host}:{self.hub.url.port}/{self.unit}"

    def deliver(self, payload: bytes) -> None:
        if payload.endswith(b"\x00"):
            payload = payload[:-1]
        if not payload or b"\x00" in payload:
            return  # not one frame: the CRC check would drop it anyway
        try:
            self._frames.put_nowait(payload)
        except queue.Full:
            # The board sends what is not acknowledged again: nothing is lost, but say it.
            self.dropped += 1
            now = time.monotonic()
            if now - self._said[0] >= REPORT_EVERY_S:
                log.warning("board %s: %d frames dropped, its session is not keeping up (the "
                            "board sends them again)", self.unit, self.dropped - self._said[1])
                self._said = (now, self.dropped)

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
