"""A lean MQTT 3.1.1 client on an asyncio loop: the club server's broker connection
(masume.link.mqtt's :class:`~masume.link.mqtt.MqttHub`) and each emulated board's
(``masume bench club --emulated``).

It speaks what those two need and no more: CONNECT with a client id, clean
session, user and password, a last will (topic, message, QoS, retained) and a
keepalive; PUBLISH at QoS 0 and 1 both ways (a QoS 1 message from the broker is
acknowledged with its PUBACK at once, the broker's PUBACKs to ours are counted);
SUBSCRIBE and UNSUBSCRIBE (any topic filter, shared subscriptions
``$share/GROUP/...`` included: the broker does the sharing); PINGREQ while the
connection is quiet, and the connection closed when the broker has said nothing
for one and a half keepalives. TLS is the loop's (``ssl=`` of
:meth:`MqttClient.connect`). Reconnecting is the owner's: ``on_lost`` says when
the connection is gone, and a new client makes the next one (the hub's backoff).

Why our own and not a library: the club server's loop, always runnable at 1,000
boards, spent most of its CPU in paho (reading the boards' messages 47 % of its
samples, publishing 16 %: a message object with its own lock per publish, every
packet through paho's own queues; docs/benchmarks.md, issue 17). The asyncio
clients on PyPI are no leaner: aiomqtt (asyncio-mqtt) wraps paho and keeps its
cost; gmqtt (kept, MQTT 5 first) reads through a StreamReader and a queue task,
makes a Message object per publish, parses MQTT 5 properties into a dict per
message and keeps every QoS 1 message in a heap for its own resends; amqtt is a
broker with a client beside it, on the same per-message objects and tasks. Here
a packet in is parsed where it lands (the loop's ``data_received``) and a packet
out is one ``bytes``, the packets of one turn of the loop written together at its
end (one system call), with no object, lock or queue per message:
what the board link needs, since its own journal, ACKs and resends make a lost
message good (protocol/SPEC.md), so the client keeps no store of its own.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
from collections.abc import Callable

log = logging.getLogger("masume.link.mqtt")

#: CONNACK return codes (MQTT 3.1.1, 3.2.2.3).
REFUSALS = {1: "unacceptable protocol version", 2: "identifier rejected",
            3: "server unavailable", 4: "bad user name or password", 5: "not authorised"}
MAX_LENGTH = 268_435_455  # the longest remaining length MQTT can say


def _string(data: bytes) -> bytes:
    return len(data).to_bytes(2, "big") + data


def packet(first: int, body: bytes) -> bytes:
    """An MQTT packet: its first byte, the body's length (MQTT's variable-length
    integer), the body.

    >>> packet(0xC0, b""), packet(0x30, bytes(200))[:3]
    (b'\\xc0\\x00', b'0\\xc8\\x01')
    """
    n = len(body)
    if n < 128:  # nearly every packet of the board link
        return bytes((first, n)) + body
    length = bytearray()
    while True:
        n, digit = n >> 7, n & 0x7F
        length.append(digit | (0x80 if n else 0))
        if not n:
            return bytes((first,)) + bytes(length) + body


class MqttClient(asyncio.Protocol):
    """One MQTT 3.1.1 connection (see the module's doc).

    ``on_message(topic, payload)`` for every PUBLISH from the broker (the topic
    as its bytes: a caller that routes by topic needs no decoding);
    ``on_connect(code)`` for the CONNACK (0: accepted, else :data:`REFUSALS`; a
    refused connection is then closed); ``on_lost(exc)`` once the connection is
    gone, whatever ended it; ``on_read_done()`` after the messages of one read (a
    caller may hand them on together). Every method is the loop's own.
    """

    def __init__(self, client_id: str, *, on_message: Callable[[bytes, bytes], None],
                 on_connect: Callable[[int], None] | None = None,
                 on_lost: Callable[[Exception | None], None] | None = None,
                 on_read_done: Callable[[], None] | None = None,
                 will: tuple[str | bytes, bytes, int, bool] | None = None,
                 username: str | None = None, password: str | None = None,
                 keepalive: int = 30, clean: bool = True) -> None:
        self.client_id = client_id.encode()
        self.on_message = on_message
        self.on_connect = on_connect
        self.on_lost = on_lost
        self.on_read_done = on_read_done
        self.will = will
        self.username = username
        self.password = password
        self.keepalive = keepalive
        self.clean = clean
        self.transport: asyncio.Transport | None = None
        self.connected = False  # the broker accepted us and the connection is up
        self.unacked = 0  # our QoS 1 messages whose PUBACK has not come
        self.malformed = 0  # packets from the broker that made no sense (the connection closes)
        self._buffer = bytearray()
        self._out: list[bytes] = []  # packets written this turn of the loop (_write)
        self._packet_id = 0
        self._heard = 0.0  # the loop's time of the broker's last bytes
        self._pinger: asyncio.TimerHandle | None = None
        self._lost = False

    async def connect(self, host: str, port: int, *, ssl_context: ssl.SSLContext | None = None,
                      timeout: float = 10.0) -> None:
        """Open the connection and send CONNECT (the CONNACK comes to ``on_connect``).
        OSError (ssl.SSLError, TimeoutError) if the broker cannot be reached."""
        loop = asyncio.get_running_loop()
        await asyncio.wait_for(loop.create_connection(
            lambda: self, host, port, ssl=ssl_context,
            server_hostname=host if ssl_context else None), timeout)

    # ---- asyncio's side ---------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            # Nagle's algorithm off: a small message (an LED frame, an ACK) written while
            # the last is unacknowledged would wait for the peer's delayed ACK, 40 ms on
            # Linux (docs/benchmarks.md, club mode).
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        flags = 0x02 if self.clean else 0
        payload = _string(self.client_id)
        if self.will is not None:
            topic, message, qos, retain = self.will
            flags |= 0x04 | qos << 3 | (0x20 if retain else 0)
            payload += _string(topic.encode() if isinstance(topic, str) else topic)
            payload += _string(message)
        if self.username is not None:
            flags |= 0x80
            payload += _string(self.username.encode())
            if self.password is not None:
                flags |= 0x40
                payload += _string(self.password.encode())
        self._out.clear()  # a new connection: nothing of an old one's goes on it
        transport.write(packet(0x10, _string(b"MQTT") + bytes((4, flags))
                               + self.keepalive.to_bytes(2, "big") + payload))
        loop = asyncio.get_running_loop()
        self._heard = loop.time()
        if self.keepalive:
            self._pinger = loop.call_later(self.keepalive / 2, self._ping_due)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        self.connected = False
        if self._pinger is not None:
            self._pinger.cancel()
            self._pinger = None
        if not self._lost:
            self._lost = True
            if self.on_lost is not None:
                self.on_lost(exc)

    def data_received(self, data: bytes) -> None:
        buffer = self._buffer
        if buffer:
            buffer += data
            data = bytes(buffer)
            buffer.clear()
        self._heard = -1.0  # heard now (the pinger reads the clock only when it runs)
        at, end = 0, len(data)
        while at + 2 <= end:
            first = data[at]
            length = data[at + 1]
            body_at = at + 2
            if length & 0x80:  # a long packet: the rest of its length
                length &= 0x7F
                shift = 7
                while True:
                    if body_at >= end:
                        buffer += data[at:]
                        return
                    digit = data[body_at]
                    body_at += 1
                    length |= (digit & 0x7F) << shift
                    shift += 7
                    if not digit & 0x80:
                        break
                    if shift > 21:
                        self._malformed("a length longer than four bytes")
                        return
            if body_at + length > end:
                break
            self._handle(first, data[body_at:body_at + length])
            at = body_at + length
        if at < end:
            buffer += data[at:]
        if self.on_read_done is not None:
            self.on_read_done()

    def _handle(self, first: int, body: bytes) -> None:
        kind = first >> 4
        if kind == 3:  # PUBLISH
            size = (body[0] << 8) | body[1]
            topic = body[2:2 + size]
            at = 2 + size
            if first & 0x06:  # QoS 1 (or 2, which we never ask for): acknowledge it now
                self._write(b"\x40\x02" + body[at:at + 2])
                at += 2
            self.on_message(topic, body[at:])
        elif kind == 4:  # PUBACK
            self.unacked = max(0, self.unacked - 1)
        elif kind == 2:  # CONNACK
            code = body[1] if len(body) >= 2 else 255
            self.connected = code == 0
            if self.on_connect is not None:
                self.on_connect(code)
            if code != 0 and self.transport is not None:
                self.transport.close()
        elif kind == 9:  # SUBACK: 0x80 for a filter the broker refused
            if b"\x80" in body[2:]:
                log.error("%s: the broker refused a subscription", self.client_id.decode())
        elif kind not in (11, 13):  # UNSUBACK, PINGRESP: nothing to do
            self._malformed(f"packet type {kind}")

    def _malformed(self, what: str) -> None:
        self.malformed += 1
        log.error("%s: %s from the broker: closing", self.client_id.decode(), what)
        if self.transport is not None:
            self.transport.close()

    def _ping_due(self) -> None:
        """Every half keepalive: a PINGREQ; the connection closed if the broker has
        said nothing (no PINGRESP either) for one and a half keepalives."""
        if self.transport is None:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        if self._heard < 0:
            self._heard = now
        elif now - self._heard > self.keepalive * 1.5:
            log.warning("%s: the broker said nothing for %.1f s: closing",
                        self.client_id.decode(), now - self._heard)
            self.transport.close()
            return
        self._write(b"\xc0\x00")
        self._pinger = loop.call_later(self.keepalive / 2, self._ping_due)

    # ---- the caller's side --------------------------------------------------------------

    def _write(self, data: bytes) -> None:
        """Send ``data`` at the end of this turn of the loop, with whatever else is
        written in it: one system call for all (on loopback a send also runs the
        broker's side of TCP in this thread, the larger part of a small publish's cost)."""
        if self.transport is None:
            return
        self._out.append(data)
        if len(self._out) == 1:
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        out, self._out = self._out, []
        if self.transport is not None and out:
            self.transport.write(b"".join(out) if len(out) > 1 else out[0])

    def _next_id(self) -> bytes:
        self._packet_id = self._packet_id % 0xFFFF + 1
        return self._packet_id.to_bytes(2, "big")

    def publish(self, topic: bytes, payload: bytes, qos: int = 0, retain: bool = False) -> bool:
        """Send ``payload`` on ``topic`` (its UTF-8 bytes) at QoS 0 or 1; False if the
        connection is not up (nothing is kept to send later)."""
        if self.transport is None or not self.connected:
            return False
        head = len(topic).to_bytes(2, "big") + topic
        if qos:
            self.unacked += 1
            self._write(packet(0x32 | retain, head + self._next_id() + payload))
        else:
            self._write(packet(0x30 | retain, head + payload))
        return True

    def subscribe(self, topic: str | bytes, qos: int = 1) -> bool:
        if self.transport is None:
            return False
        name = topic.encode() if isinstance(topic, str) else topic
        self._write(packet(0x82, self._next_id() + _string(name) + bytes((qos,))))
        return True

    def unsubscribe(self, topic: str | bytes) -> bool:
        if self.transport is None:
            return False
        name = topic.encode() if isinstance(topic, str) else topic
        self._write(packet(0xA2, self._next_id() + _string(name)))
        return True

    def disconnect(self) -> None:
        """DISCONNECT (the broker then publishes no will) and close."""
        if self.transport is not None:
            self._out.append(b"\xe0\x00")
            self._flush()
            self.transport.close()
