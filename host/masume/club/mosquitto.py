"""A Mosquitto of our own (tests, `masume bench club`): a free loopback port, a
config in a folder of ours. Never the machine's broker on 1883.

``Broker(folder).start()``; ``restart()`` keeps the port (and, with persistence,
the retained messages).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

from .broker import MAX_QUEUED_BYTES, max_queued

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
HALL_BOARDS = 1000  # what the tests' and benches' broker is sized for (issue 17's hall)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Broker:
    def __init__(self, folder: Path, config: str | None = None, port: int | None = None) -> None:
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.config_path = folder / "mosquitto.conf"
        if config is None:
            config = (f"listener {self.port} 127.0.0.1\nallow_anonymous true\n"
                      f"persistence true\npersistence_location {folder}/\n"
                      # Nagle off towards the clients, and queues sized for a
                      # hall (see broker.py)
                      "set_tcp_nodelay true\n"
                      f"max_queued_messages {max_queued(HALL_BOARDS)}\n"
                      f"max_queued_bytes {MAX_QUEUED_BYTES}\n")
        if os.geteuid() == 0 and "\nuser " not in "\n" + config:
            # As root, mosquitto would switch to its own user, who cannot read the
            # test's temp files: stay the test's user.
            config = "user root\n" + config
        self.config_path.write_text(config)
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = folder / "mosquitto.log"

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self) -> Broker:
        if not os.path.exists(MOSQUITTO):
            raise RuntimeError("mosquitto is not installed (scripts/setup installs it)")
        self.proc = subprocess.Popen([MOSQUITTO, "-c", str(self.config_path)],
                                     stdout=open(self.log, "ab"),  # noqa: SIM115 (the broker's)
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mosquitto exited: {self.log.read_text()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("mosquitto did not open its port")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def restart(self, down_for: float = 0.5) -> None:
        self.stop()
        time.sleep(down_for)
        self.start()
