"""``masume club broker-config``: a Mosquitto configuration for one event, safe
by default.

Writes into a folder:

    mosquitto.conf    the listener(s), anonymous access off, each client's id forced to its
                      user name (a board's credentials cannot push another board off), a
                      packet size limit (a frame and its headers, with room to spare), bounded
                      queues, persistence (retained status topics survive a broker restart)
    passwords         one user per board (its unit id) and per club server, hashed
                      as mosquitto_passwd does ($7$: PBKDF2-SHA512)
    acl               a board may publish only masume/<id>/events and .../status and
                      read only masume/<id>/commands; a club server reads and writes masume/#
    credentials.toml  the clear passwords, for the boards' net.json and the servers'
                      --password-file: keep it with the organiser, not on the broker
    tls/              with --tls-port: a CA (ca.crt, ca.key), the broker's certificate
                      and key (openssl); the broker then listens with TLS only, unless
                      also_plain keeps the plain listener
    data/             the broker's persistence

What the broker reads (passwords, acl, tls/server.key, data/) is its user's alone
(mode 0600, 0700): Mosquitto started as root reads them after it has become that
user (``mosquitto``), so as root they are given to it. credentials.toml and
tls/ca.key stay the organiser's (0600).
"""

from __future__ import annotations

import base64
import hashlib
import os
import pwd
import secrets
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from masume.link.mqtt import MAX_MESSAGE, parse_credentials, topic, valid_unit

PBKDF2_ITERATIONS = 101  # mosquitto_passwd's default for $7$ (the passwords are random: 144 bits)


def _largest_publish() -> int:
    """Bytes of the largest packet a board or a server sends: a QoS 1 PUBLISH of the
    largest frame on the longest topic (fixed header, topic, packet id, payload)."""
    remaining = 2 + len(topic("x" * 64, "commands")) + 2 + MAX_MESSAGE
    length_bytes = 1 + (remaining >= 128) + (remaining >= 16384) + (remaining >= 2097152)
    return 1 + length_bytes + remaining


#: Mosquitto's ``max_packet_size``: a client sending a longer packet is cut off as
#: soon as its length is read, before the broker keeps any of it. Twice the largest
#: packet of the protocol (a CONNECT with its will and credentials is smaller).
MAX_PACKET = 2 * _largest_publish()
#: Per client, QoS 1 messages waiting above those in flight (a server behind its
#: boards, a board behind its commands), at the least. The limit is one for every
#: client, and the client that needs it is the club server: every board's events
#: and heartbeats go to it. With Mosquitto's default (1,000) a server that stalled a
#: second at 300 boards had its messages dropped (the broker's log: "Outgoing
#: messages are being dropped for client masume-club-club", $SYS/broker/publish/
#: messages/dropped 895): the boards resend their events, but late.
MAX_QUEUED = 2000
#: Seconds of a hall's traffic the broker keeps for a server that stalls, and what
#: a board sends a second (a heartbeat, about one event, a command's ACK).
QUEUE_S = 10
MESSAGES_PER_BOARD_S = 3
#: And in bytes, per client: a hall's messages are small (a heartbeat is 31 bytes
#: on the wire); this bounds a client whose queue fills with the largest.
MAX_QUEUED_BYTES = 64 * 1024 * 1024
MAX_INFLIGHT = 20  # per client, QoS 1 messages sent and not yet acknowledged


def max_queued(boards: int) -> int:
    """Mosquitto's ``max_queued_messages`` for a hall of ``boards``: QUEUE_S of
    every board's messages, for the server they all go to.

    >>> max_queued(10), max_queued(300), max_queued(1000)
    (2000, 9000, 30000)
    """
    return max(MAX_QUEUED, QUEUE_S * MESSAGES_PER_BOARD_S * boards)


def hash_password(password: str, salt: bytes | None = None) -> str:
    salt = salt or secrets.token_bytes(12)
    digest = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, PBKDF2_ITERATIONS)
    return (f"$7${PBKDF2_ITERATIONS}${base64.b64encode(salt).decode()}$"
            f"{base64.b64encode(digest).decode()}")


@dataclass
class BrokerConfig:
    folder: Path
    port: int | None  # the plain listener; None: TLS only
    boards: dict[str, str]  # unit -> password
    servers: dict[str, str]  # server user -> password
    tls_port: int | None = None
    user: str | None = None  # the user Mosquitto runs as

    @property
    def conf(self) -> Path:
        return self.folder / "mosquitto.conf"

    @property
    def ca(self) -> Path:
        return self.folder / "tls" / "ca.crt"

    def url(self, user: str, host: str = "127.0.0.1", tls: bool | None = None) -> str:
        """``user``'s URL, password included: for in-process use (tests, benchmarks),
        never for a command line. TLS when asked, or when there is no plain listener."""
        password = self.boards.get(user) or self.servers[user]
        if tls or (tls is None and self.port is None):
            return f"mqtts://{user}:{password}@{host}:{self.tls_port}?ca={self.ca}"
        return f"mqtt://{user}:{password}@{host}:{self.port}"


def write_broker_config(folder: Path, boards: list[str], servers: list[str], *,
                        port: int = 1883, bind: str = "0.0.0.0", tls_port: int | None = None,
                        tls_host: str = "localhost", also_plain: bool = False,
                        user: str | None = None) -> BrokerConfig:
    """Write the event's broker configuration into ``folder`` (see the module's doc).

    With ``tls_port`` the broker listens with TLS only, unless ``also_plain`` keeps the
    plain listener on ``port``. ``user``: the account Mosquitto runs as (default:
    ``mosquitto`` when run as root, else whoever runs this)."""
    for name in list(boards) + list(servers):
        if not valid_unit(name):
            raise ValueError(f"{name!r} is not a valid id (letters, digits, _ . -)")
    clash = set(boards) & set(servers)
    if clash:
        raise ValueError(f"a board and a server share the name {min(clash)!r}")
    if also_plain and tls_port is None:
        raise ValueError("also_plain keeps a plain listener next to TLS: give a TLS port too")
    account = broker_account(user)
    folder = folder.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    creds_path = folder / "credentials.toml"
    try:
        old = parse_credentials(creds_path.read_text()) or {}
    except OSError:
        old = {}
    board_pw = {b: old.get(b) or secrets.token_urlsafe(18) for b in boards}
    server_pw = {s: old.get(s) or secrets.token_urlsafe(18) for s in servers}

    lines = [f"{u}:{hash_password(p)}" for u, p in {**server_pw, **board_pw}.items()]
    _write_private(folder / "passwords", "\n".join(lines) + "\n", account)

    acl = ["# masume club: written by `masume club broker-config`", ""]
    for s in servers:
        acl += [f"user {s}", "topic readwrite masume/#", ""]
    for b in boards:
        acl += [f"user {b}", f"topic write {topic(b, 'events')}",
                f"topic write {topic(b, 'status')}", f"topic read {topic(b, 'commands')}", ""]
    _write_private(folder / "acl", "\n".join(acl), account)

    data = folder / "data"
    data.mkdir(mode=0o700, exist_ok=True)
    _give(data, account, 0o700)
    # Every user holds one connection (its id is its name); the rest is room for
    # reconnects and for strangers while they are refused.
    max_connections = 4 * (len(boards) + len(servers)) + 32
    conf = [
        "# masume club: written by `masume club broker-config`",
        f"user {account.pw_name}",
        "per_listener_settings false",
        "allow_anonymous false",
        f"password_file {folder / 'passwords'}",
        f"acl_file {folder / 'acl'}",
        f"# The largest packet of the protocol is {_largest_publish()} bytes (a frame of",
        "# MAX_FRAME bytes on the longest topic): a longer one cuts its sender off",
        "# before the broker keeps any of it.",
        f"max_packet_size {MAX_PACKET}",
        f"max_inflight_messages {MAX_INFLIGHT}",
        f"max_queued_messages {max_queued(len(boards))}",
        f"max_queued_bytes {MAX_QUEUED_BYTES}",
        "# Every masume client uses a clean session: anything else is gone after an hour.",
        "persistent_client_expiration 1h",
        "persistence true",
        f"persistence_location {data}/",
        # Each frame is a small message answered by another: with Nagle's algorithm
        # on, one waits for the client's delayed ACK (40 ms on Linux) behind the last.
        "set_tcp_nodelay true",
    ]
    # Options of each listener (any before the first `listener` line would open a
    # default one on 1883). A client's id is its user name: another board's credentials
    # cannot take a board's id and push it off; a user has one connection at a time.
    listener = ["use_username_as_clientid true", f"max_connections {max_connections}",
                "max_qos 1"]
    if tls_port is None or also_plain:
        conf += ["", f"listener {port} {bind}", *listener]
    if tls_port is not None:
        tls = folder / "tls"
        make_certificates(tls, tls_host, account)
        conf += ["", f"listener {tls_port} {bind}", *listener, f"cafile {tls / 'ca.crt'}",
                 f"certfile {tls / 'server.crt'}", f"keyfile {tls / 'server.key'}",
                 "tls_version tlsv1.2"]
    (folder / "mosquitto.conf").write_text("\n".join(conf) + "\n")

    creds = ["# masume club credentials: give each board its own, keep this file private", ""]
    creds += ["[boards]"] + [f'"{b}" = "{p}"' for b, p in board_pw.items()] + [""]
    creds += ["[servers]"] + [f'"{s}" = "{p}"' for s, p in server_pw.items()]
    _write_private(creds_path, "\n".join(creds) + "\n")
    return BrokerConfig(folder, port if tls_port is None or also_plain else None,
                        board_pw, server_pw, tls_port, account.pw_name)


def broker_account(user: str | None = None) -> pwd.struct_passwd:
    """The account Mosquitto will run as: ``user``, else ``mosquitto`` for root (it
    switches to that user), else whoever runs this. ValueError if it cannot own the
    broker's files."""
    me = os.geteuid()
    if user is None:
        user = "mosquitto" if me == 0 else pwd.getpwuid(me).pw_name
    try:
        account = pwd.getpwnam(user)
    except KeyError:
        raise ValueError(f"no user {user!r} on this machine: name the user Mosquitto "
                         f"runs as (--user)") from None
    if account.pw_uid != me and me != 0:
        raise ValueError(f"only root can give the broker's files to {user!r}: run as "
                         f"root, or as {user}")
    return account


def closed_to(folder: Path, user: str) -> Path | None:
    """The first folder on the way to ``folder`` that ``user`` cannot enter (a broker
    run as root in /root/event, say, cannot read its files as `mosquitto`), or None."""
    account = pwd.getpwnam(user)
    if account.pw_uid == 0:
        return None
    groups = set(os.getgrouplist(account.pw_name, account.pw_gid))
    for path in reversed([folder, *folder.parents]):
        st = path.stat()
        if st.st_uid == account.pw_uid:
            allowed = st.st_mode & stat.S_IXUSR
        elif st.st_gid in groups:
            allowed = st.st_mode & stat.S_IXGRP
        else:
            allowed = st.st_mode & stat.S_IXOTH
        if not allowed:
            return path
    return None


def make_certificates(folder: Path, host: str, account: pwd.struct_passwd) -> None:
    """A CA and a broker certificate signed by it, with openssl (kept if present).
    The broker's key is ``account``'s alone, the CA's key stays with whoever runs this."""
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "server.crt").exists():
        def run(*args: str) -> None:
            subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

        run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "365", "-subj",
            "/CN=masume club CA", "-keyout", "ca.key", "-out", "ca.crt")
        run("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={host}", "-keyout",
            "server.key", "-out", "server.csr")
        (folder / "san.ext").write_text(f"subjectAltName=DNS:{host},IP:127.0.0.1\n")
        run("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "365", "-out", "server.crt", "-extfile", "san.ext")
        for scratch in ("server.csr", "san.ext"):
            (folder / scratch).unlink()
    # Also on a run over an older folder, whose key was left readable by all.
    os.chmod(folder / "ca.key", 0o600)
    _give(folder / "server.key", account, 0o600)


def _write_private(path: Path, text: str, account: pwd.struct_passwd | None = None) -> None:
    """Write ``path`` readable by its owner only: ``account`` if given, else whoever runs this."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # an existing file keeps its mode through O_CREAT
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    if account is not None:
        _give(path, account, 0o600)


def _give(path: Path, account: pwd.struct_passwd, mode: int) -> None:
    if os.stat(path).st_uid != account.pw_uid:
        os.chown(path, account.pw_uid, account.pw_gid)
    os.chmod(path, mode)
