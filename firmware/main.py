# Runs on the chip at power-up: load board.json, start the board, poll forever.
# With net.json beside it (club mode) the board talks MQTT over Wi-Fi instead of
# USB serial:
#   {"ssid": "...", "password": "...", "broker": "192.168.1.10", "port": 1883,
#    "id": "table-1", "mqtt_password": "...", "tls": false}
# (the id and password come from `masume club broker-config`'s credentials.toml).
import time

import app
from hw_chip import Hardware


def load_net(path="net.json"):
    try:
        import json

        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def start_net(conf):
    import network
    from umqtt.simple import MQTTClient  # type: ignore[import-not-found]  # micropython-lib, by mip

    from link_mqtt import MqttLink

    wlan = network.WLAN(network.STA_IF)
    wlan.active(True)
    wlan.connect(conf["ssid"], conf["password"])  # joins in the background; the link retries
    client = MQTTClient(conf["id"], conf["broker"], port=conf.get("port", 1883),
                        user=conf["id"], password=conf["mqtt_password"], keepalive=10,
                        ssl=bool(conf.get("tls")))
    return MqttLink(client, conf["id"])


board = None  # the running app.Board (a module global: the collector sees it)


def start(usb=None):
    """Boot the board (usb: the host link; the emulated chip gives its own)."""
    global board
    definition, board_hash = app.load_definition()
    conf = load_net()
    board = app.Board(Hardware(definition, usb), definition, board_hash,
                      start_net(conf) if conf else None)


def run():
    # No locals: a small frame (the emulated chip collects garbage in sleep_ms).
    assert board is not None, "start() first"
    while True:
        board.poll()
        time.sleep_ms(1)


if __name__ == "__main__":  # at power-up; the emulated chip imports this module
    start()
    run()
