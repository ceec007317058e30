"""``masume club broker-config``: a Mosquitto configuration for one event.

Writes into a folder:

    mosquitto.conf    listener(s), anonymous access off, the password and ACL files,
                      persistence (retained status topics survive a broker restart)
    passwords         one user per board (its unit id) and per club server, hashed
                      as mosquitto_passwd does ($7$: PBKDF2-SHA512)
    acl               a board may publish only masume/<id>/events and .../status and
                      read only masume/<id>/commands; a club server reads and writes masume/#
    credentials.toml  the clear passwords, for the boards' net.json and the servers'
                      broker URLs: keep it with the organiser, not on the broker
    tls/              with --tls: a CA, the broker's certificate and key (openssl)
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
import subprocess
from dataclasses import dataclass
from pathlib import Path

from masume.link.mqtt import topic, valid_unit

PBKDF2_ITERATIONS = 101  # mosquitto_passwd's default for $7$


def hash_password(password: str, salt: bytes | None = None) -> str:
    salt = salt or secrets.token_bytes(12)
    digest = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, PBKDF2_ITERATIONS)
    return (f"$7${PBKDF2_ITERATIONS}${base64.b64encode(salt).decode()}$"
            f"{base64.b64encode(digest).decode()}")


@dataclass
class BrokerConfig:
    folder: Path
    port: int
    boards: dict[str, str]  # unit -> password
    servers: dict[str, str]  # server user -> password
    tls_port: int | None = None

    @property
    def conf(self) -> Path:
        return self.folder / "mosquitto.conf"

    def url(self, user: str, host: str = "127.0.0.1", tls: bool = False) -> str:
        password = self.boards.get(user) or self.servers[user]
        if tls:
            return f"mqtts://{user}:{password}@{host}:{self.tls_port}?ca={self.folder / 'tls' / 'ca.crt'}"
        return f"mqtt://{user}:{password}@{host}:{self.port}"


def write_broker_config(folder: Path, boards: list[str], servers: list[str], *,
                        port: int = 1883, bind: str = "0.0.0.0", tls_port: int | None = None,
                        tls_host: str = "localhost") -> BrokerConfig:
    for name in list(boards) + list(servers):
        if not valid_unit(name):
            raise ValueError(f"{name!r} is not a valid id (letters, digits, _ . -)")
    clash = set(boards) & set(servers)
    if clash:
        raise ValueError(f"a board and a server share the name {sorted(clash)[0]!r}")
    folder = folder.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    creds_path = folder / "credentials.toml"
    old = _read_credentials(creds_path)
    board_pw = {b: old.get(b) or secrets.token_urlsafe(18) for b in boards}
    server_pw = {s: old.get(s) or secrets.token_urlsafe(18) for s in servers}

    lines = [f"{u}:{hash_password(p)}" for u, p in {**server_pw, **board_pw}.items()]
    _write_private(folder / "passwords", "\n".join(lines) + "\n")

    acl = ["# masume club: written by `masume club broker-config`", ""]
    for s in servers:
        acl += [f"user {s}", "topic readwrite masume/#", ""]
    for b in boards:
        acl += [f"user {b}", f"topic write {topic(b, 'events')}", f"topic write {topic(b, 'status')}",
                f"topic read {topic(b, 'commands')}", ""]
    (folder / "acl").write_text("\n".join(acl))

    conf = [
        "# masume club: written by `masume club broker-config`",
        "per_listener_settings false",
        "allow_anonymous false",
        f"password_file {folder / 'passwords'}",
        f"acl_file {folder / 'acl'}",
        "persistence true",
        f"persistence_location {folder}/",
        "max_queued_messages 2000",
        # Each frame is a small message answered by another: with Nagle's algorithm
        # on, one waits for the client's delayed ACK (40 ms on Linux) behind the last.
        "set_tcp_nodelay true",
        "",
        f"listener {port} {bind}",
    ]
    if tls_port is not None:
        tls = folder / "tls"
        make_certificates(tls, tls_host)
        conf += ["", f"listener {tls_port} {bind}", f"cafile {tls / 'ca.crt'}",
                 f"certfile {tls / 'server.crt'}", f"keyfile {tls / 'server.key'}",
                 "tls_version tlsv1.2"]
    (folder / "mosquitto.conf").write_text("\n".join(conf) + "\n")

    creds = ["# masume club credentials: give each board its own, keep this file private", ""]
    creds += ["[boards]"] + [f'"{b}" = "{p}"' for b, p in board_pw.items()] + [""]
    creds += ["[servers]"] + [f'"{s}" = "{p}"' for s, p in server_pw.items()]
    _write_private(creds_path, "\n".join(creds) + "\n")
    return BrokerConfig(folder, port, board_pw, server_pw, tls_port)


def make_certificates(folder: Path, host: str) -> None:
    """A CA and a broker certificate signed by it, with openssl (kept if present)."""
    folder.mkdir(parents=True, exist_ok=True)
    if (folder / "server.crt").exists():
        return

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "365", "-subj",
        "/CN=masume club CA", "-keyout", "ca.key", "-out", "ca.crt")
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={host}", "-keyout", "server.key",
        "-out", "server.csr")
    (folder / "san.ext").write_text(f"subjectAltName=DNS:{host},IP:127.0.0.1\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "365", "-out", "server.crt", "-extfile", "san.ext")
    os.chmod(folder / "server.key", 0o644)  # mosquitto may run as its own user


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)


def _read_credentials(path: Path) -> dict[str, str]:
    import tomllib

    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    return {k: v for part in ("boards", "servers") for k, v in data.get(part, {}).items()
            if isinstance(v, str)}
