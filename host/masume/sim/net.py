"""The simulated board's network: a paho client standing in for the chip's
Wi-Fi and umqtt (firmware/hw_sim.MqttClient calls these methods).

It behaves like umqtt.simple on a board: ``connect`` blocks until the broker
answers (or fails), nothing reconnects by itself (the firmware's link_mqtt
retries), and a lost connection makes the next publish fail. :meth:`cut` pulls
the Wi-Fi: the socket dies without a goodbye, so the broker publishes the
board's last will, and nothing gets through until :meth:`restore`.
"""

from __future__ import annotations

import collections
import socket
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from masume.link.mqtt import BrokerUrl, new_client

if TYPE_CHECKING:
    from paho.mqtt.client import Client, ConnectFlags, DisconnectFlags, MQTTMessage
    from paho.mqtt.properties import Properties
    from paho.mqtt.reasoncodes import ReasonCode

CONNECT_TIMEOUT_S = 2.0
INBOX_LIMIT = 256


class BoardNetwork:
    def __init__(self, url: str | BrokerUrl, unit: str) -> None:
        self.url = url if isinstance(url, BrokerUrl) else BrokerUrl.parse(url)
        self.unit = unit
        self.client_id = f"masume-board-{unit}"
        self.connects = 0
        #: (topic, hex) -> None, before each publish (benchmarks).
        self.on_publish: Callable[[str, str], None] | None = None
        #: Called when a message comes or the connection drops: the board wakes up for it.
        self.on_input: Callable[[], None] = lambda: None
        self._cut = False
        self._client: Client | None = None
        self._connected = threading.Event()
        self._inbox: collections.deque[str] = collections.deque(maxlen=INBOX_LIMIT)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._will = ("", "")
        self._loop_thread: threading.Thread | None = None

    # ---- what the firmware calls ----------------------------------------

    def connect(self, will_topic: str, will_message: str) -> bool:
        if self._cut or self._stop.is_set():
            return False
        self._drop_client()
        client = new_client(self.client_id)
        self.url.configure(client)
        self._will = (will_topic, will_message)
        if will_topic:
            client.will_set(will_topic, will_message.encode(), qos=1, retain=True)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        # Every read and write of the socket in the loop thread: paho would otherwise
        # write a publish from the firmware's thread while the loop reads, and a TLS
        # connection (OpenSSL's) must not be used by two threads at once: its records
        # come out corrupt ("bad record mac"), or the heap does.
        client.on_socket_register_write = lambda *_: None
        self._connected.clear()
        try:
            client.connect(self.url.host, self.url.port, keepalive=3)
        except (OSError, ValueError):
            return False
        with self._lock:
            self._client = client
        self._loop_thread = threading.Thread(target=self._loop, args=(client,),
                                             name=f"sim-net-{self.unit}", daemon=True)
        self._loop_thread.start()
        if not self._connected.wait(CONNECT_TIMEOUT_S):
            self._drop_client()
            return False
        self.connects += 1
        return True

    def publish(self, topic: str, data_hex: str, retain: bool, qos: int) -> bool:
        if self.on_publish is not None:
            self.on_publish(topic, data_hex)
        client = self._client
        if client is None or self._cut or not self._connected.is_set():
            return False
        info = client.publish(topic, bytes.fromhex(data_hex), qos=min(int(qos), 1),
                              retain=bool(retain))
        return info.rc == 0

    def subscribe(self, topic: str, qos: int) -> bool:
        client = self._client
        if client is None or self._cut or not self._connected.is_set():
            return False
        return client.subscribe(topic, min(int(qos), 1))[0] == 0

    def read(self) -> str:
        try:
            return self._inbox.popleft()
        except IndexError:
            return ""

    def has_input(self) -> bool:
        """A message waits for the firmware's next read."""
        return bool(self._inbox)

    # ---- the tests' and the operator's hands -----------------------------

    @property
    def online(self) -> bool:
        return self._connected.is_set() and not self._cut

    def cut(self) -> None:
        """The Wi-Fi drops: the connection dies unannounced (the broker sends the will)."""
        self._cut = True
        client = self._client
        if client is not None:
            sock = client.socket()
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)  # type: ignore[attr-defined]  # a socket
                except OSError:
                    pass
        self._drop_client()

    def restore(self) -> None:
        self._cut = False

    def close(self) -> None:
        self._stop.set()
        client = self._client
        if client is not None and self._connected.is_set():
            try:
                # Powered off: say so, as the last will would have.
                if self._will[0]:
                    client.publish(self._will[0], self._will[1].encode(), qos=1,
                                   retain=True).wait_for_publish(1.0)
                client.disconnect()
            except Exception:  # noqa: BLE001, S110 (powering off: a broker away is fine)
                pass
        self._drop_client()

    # ---- paho ---------------------------------------------------------------

    def _drop_client(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        self._connected.clear()
        if client is not None:
            try:
                sock = client.socket()
                if sock is not None:
                    sock.close()
            except Exception:  # noqa: BLE001, S110 (already closed)
                pass

    def _loop(self, client: Client) -> None:
        while self._client is client:  # till it is dropped (_drop_client)
            try:
                rc: int = client.loop(0.05)
            except Exception:  # noqa: BLE001 (a dropped connection: handled as one)
                rc = 1
            if rc != 0:
                self._connected.clear()
                if self._client is client:
                    time.sleep(0.05)
                if client.socket() is None:
                    return

    def _on_connect(self, client: Client, userdata: object, flags: ConnectFlags,
                    reason: ReasonCode, properties: Properties | None = None) -> None:
        if not reason.is_failure:
            self._connected.set()

    def _on_disconnect(self, client: Client, userdata: object, flags: DisconnectFlags,
                       reason: ReasonCode, properties: Properties | None = None) -> None:
        self._connected.clear()
        self.on_input()

    def _on_message(self, client: Client, userdata: object, message: MQTTMessage) -> None:
        self._inbox.append(f"{message.topic} {bytes(message.payload).hex()}")
        self.on_input()
