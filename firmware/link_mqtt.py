# The board's MQTT link (club mode): the same protocol frames as on the USB
# serial line, one frame per MQTT message (protocol/SPEC.md, "MQTT"): the
# COBS-encoded frame without its terminating zero. For a board whose unit id
# is ID (net.json on the chip, `masume sim --id` in the simulator):
#
#   masume/ID/events    board -> host: every frame the board sends, QoS 1
#   masume/ID/commands  host -> board: every frame the host sends, QoS 1
#   masume/ID/status    retained: "online" (birth, published after connecting)
#                       and "offline" (the last will the broker publishes when
#                       the board drops off without a goodbye)
#
# `client` is umqtt.simple's or umqtt.robust's MQTTClient on the chip, or the
# simulator's stand-in (hw_sim.MqttClient): set_callback, set_last_will,
# connect, subscribe, publish, check_msg; OSError when the network is gone.
# Losing messages is fine: the protocol's journal, acks and resends repair it
# (the link keeps journalling while it is down and reconnects every 2 s).

from clock import ticks_diff

RETRY_MS = 2000  # reconnect attempts while the broker or the Wi-Fi is away
INBOX = 64  # commands held between two passes at most; more are dropped (resent)
READS_PER_PASS = 16


class MqttLink:
    def __init__(self, client, unit, prefix="masume"):
        self.client = client
        base = prefix + "/" + unit + "/"
        self.events = (base + "events").encode()
        self.commands = (base + "commands").encode()
        self.status = (base + "status").encode()
        self.up = False
        self.last_try = 0
        self.tried = False
        self.inbox = []
        self.dropped = 0
        self.connects = 0
        client.set_callback(self._message)
        client.set_last_will(self.status, b"offline", True, 1)

    def _message(self, topic, msg):
        if topic != self.commands:
            return
        if len(self.inbox) < INBOX:
            self.inbox.append(msg)
        else:
            self.dropped += 1

    def connect(self, now):
        self.last_try = now
        self.tried = True
        try:
            self.client.connect()
            self.client.subscribe(self.commands, 1)
            self.client.publish(self.status, b"online", True, 1)
            self.up = True
            self.connects += 1
        except OSError:
            self.up = False
        return self.up

    def send(self, frame):
        """Publish one frame (encode_frame's bytes, zero included); dropped when down."""
        if not self.up:
            return
        if frame and frame[-1] == 0:
            frame = frame[:-1]
        try:
            self.client.publish(self.events, frame, False, 1)
        except OSError:
            self.up = False

    def poll(self, deliver, now):
        """Reconnect when due, then hand every command that arrived to deliver(frame)."""
        if not self.up:
            if self.tried and ticks_diff(now, self.last_try) < RETRY_MS:
                return
            if not self.connect(now):
                return
        try:
            for _ in range(READS_PER_PASS):
                before = len(self.inbox)
                self.client.check_msg()
                if len(self.inbox) == before:
                    break
        except OSError:
            self.up = False
        inbox = self.inbox
        if inbox:
            self.inbox = []
            for frame in inbox:
                deliver(frame)
