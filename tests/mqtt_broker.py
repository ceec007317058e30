"""The tests' Mosquitto: masume.club.mosquitto (shared with `masume bench club`),
and an event's broker as `masume club broker-config` writes it."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

from masume.club.broker import BrokerConfig, write_broker_config
from masume.club.mosquitto import Broker, free_port  # noqa: F401

#: Who runs the tests: the generated broker runs as them, as pytest's folders are
#: theirs alone (as root, broker-config would give its files to `mosquitto`).
ME = pwd.getpwuid(os.geteuid()).pw_name


def event_broker(folder: Path, boards: list[str], servers: list[str], *, tls: bool = True,
                 port: int | None = None, user: str | None = ME,
                 **options) -> tuple[BrokerConfig, Broker]:
    """``write_broker_config`` on free loopback ports (TLS only unless ``tls`` is
    False), and a Mosquitto started with it."""
    conf = write_broker_config(folder / "event", boards, servers, port=port or free_port(),
                               bind="127.0.0.1", tls_port=free_port() if tls else None,
                               user=user, **options)
    port = conf.port if conf.port is not None else conf.tls_port
    return conf, Broker(folder / "broker", config=conf.conf.read_text(), port=port).start()
