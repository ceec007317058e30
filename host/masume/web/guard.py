"""The gates of masume's web views (the local view, :mod:`masume.web.server`, and the
club's live page, :mod:`masume.club.web`): what a request must be before a route
sees it.

- **Host.** Only the names the server is reached by (:class:`HostNames`): a page of
  another site whose name was made to resolve to this machine (DNS rebinding) sends
  its own name, and is refused with 403.
- **Origin.** A request that carries one (browsers send it on every POST and on
  every read from another origin) must come from a page of this very server: the
  scheme http and the same host and port as its ``Host``. Else 403, before any
  route runs: a page of another site can neither act nor read.
- **Bodies** (:func:`read_json`): ``application/json`` only (415: a form or a
  ``text/plain`` POST, the kinds another site's page may send without asking, never
  reach a route), at most :data:`MAX_BODY_BYTES` counted as the body arrives (413:
  a 100 MB body is never held in memory), nested at most :data:`MAX_DEPTH` deep
  (400: deeper, Python's parser gives up with a RecursionError).

Starlette's ``TrustedHostMiddleware`` takes a list of names; it cannot say "any IP
literal", which a server on the whole network needs (phones reach it by its
address), hence :class:`Guard`.
"""

from __future__ import annotations

import ipaddress
import json
import socket
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

#: The largest POST body read. The views' bodies are a few hundred bytes; this leaves
#: room for a long choice list while keeping a hostile body cheap to refuse.
MAX_BODY_BYTES = 1 << 20
#: The deepest nesting of a POST body's JSON (the views send two levels).
MAX_DEPTH = 16

#: Names that always mean this machine.
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain"})


def machine_names() -> set[str]:
    """This machine's own names: its host name, fully qualified, and on mDNS."""
    name = socket.gethostname().lower()
    names = {name, f"{name}.local"}
    try:
        names.add(socket.getfqdn().lower())
    except OSError:
        pass
    return {n for n in names if n and n != ".local"}


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def is_loopback(bind: str) -> bool:
    """Does a server bound to ``bind`` listen on this machine only?"""
    ip = _ip(bind)
    return bind.lower() in LOOPBACK_NAMES if ip is None else ip.is_loopback


class HostNames:
    """The host names a server answers to.

    Bound to the loopback (the default): ``localhost`` and the loopback addresses.
    Bound to the network (``0.0.0.0``, ``::`` or an address): any IP literal (a
    rebinding page can only send a *name*), ``localhost``, this machine's names and
    the bind name. ``extra``: more names (a DNS name the club gave the machine,
    ``--http-allow-host``).

    >>> local = HostNames.for_bind("127.0.0.1", ["board.lan"])
    >>> "localhost" in local, "127.0.0.1" in local, "board.lan" in local
    (True, True, True)
    >>> "evil.example" in local, "192.168.1.5" in local
    (False, False)
    >>> "192.168.1.5" in HostNames.for_bind("0.0.0.0")
    True
    """

    def __init__(self, names: Iterable[str], *, any_ip: bool) -> None:
        self.names = frozenset(n.lower().rstrip(".") for n in names if n)
        self.any_ip = any_ip

    @classmethod
    def for_bind(cls, bind: str, extra: Iterable[str] = ()) -> HostNames:
        names = set(LOOPBACK_NAMES) | {n.lower() for n in extra}
        if is_loopback(bind):
            return cls(names, any_ip=False)
        if _ip(bind) is None and bind:
            names.add(bind.lower())
        return cls(names | machine_names(), any_ip=True)

    def __contains__(self, host: object) -> bool:
        if not isinstance(host, str) or not host:
            return False
        host = host.lower().rstrip(".")
        if host in self.names:
            return True
        ip = _ip(host)
        return ip is not None and (self.any_ip or ip.is_loopback)


def _split_host(value: str) -> tuple[str, int] | None:
    """A ``Host`` header's name and port (80 when left out); None if malformed."""
    try:
        parts = urlsplit(f"//{value}")
        return (parts.hostname or "", parts.port or 80)
    except ValueError:
        return None


def refusal(headers: Headers, hosts: HostNames) -> str | None:
    """Why a request with these headers is refused (None: let in)."""
    host = _split_host(headers.get("host", ""))
    if host is None or host[0] not in hosts:
        return (f"masume: this server does not answer to the name {headers.get('host', '')!r}. "
                "Open the address masume printed.")
    origin = headers.get("origin")
    if origin is not None:
        try:
            parts = urlsplit(origin)
            own = (parts.scheme == "http" and (parts.hostname or "", parts.port or 80) == host)
        except ValueError:
            own = False
        if not own:
            return f"masume: requests from pages of other sites ({origin}) are refused."
    return None


class Guard:
    """ASGI middleware: the Host and Origin checks on every HTTP request (403)."""

    def __init__(self, app: ASGIApp, hosts: HostNames) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            why = refusal(Headers(scope=scope), self.hosts)
            if why is not None:
                await PlainTextResponse(why, status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class BadRequest(Exception):
    """A request a route refuses: ``status`` and a message for the page."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


async def read_json(request: Request, *, limit: int = MAX_BODY_BYTES,
                    depth: int = MAX_DEPTH) -> dict[str, Any]:
    """A POST's JSON object ({} for an empty body); :class:`BadRequest` with 415, 413
    or 400 for anything else (see the module docstring)."""
    kind = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if kind != "application/json":
        raise BadRequest("send the request body as JSON (Content-Type: application/json)", 415)
    too_large = BadRequest(f"the request body is larger than {limit} bytes", 413)
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large  # refused before a byte of it is read
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except RecursionError:
        raise BadRequest(f"the request body is nested deeper than {depth} levels") from None
    except ValueError:
        raise BadRequest("the request body is not JSON") from None
    if not isinstance(data, dict):
        raise BadRequest("the request body must be a JSON object")
    if _depth(data) > depth:
        raise BadRequest(f"the request body is nested deeper than {depth} levels")
    return data


def _depth(data: Any) -> int:
    """How deep lists and objects nest in ``data`` (iterative: no recursion limit)."""
    deepest = 0
    stack = [(data, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in item)
    return deepest
