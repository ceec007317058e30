"""The arbiter's login on the club's live page.

Spectators only read the live page. What changes an event (assign a table a new
game, end a game) needs the arbiter: one password for the event, given to the
server in a file or the environment (never on the command line, where ``ps``
shows it to everyone on the machine), typed into the page's login form. A good
login gets a random session cookie (HttpOnly: no script reads it; SameSite=Strict:
no other site's page sends it), valid for :data:`SESSION_S`. HTTP Basic would send
the password itself with every request over the club's Wi-Fi.

Wrong passwords are throttled per address (:data:`TRIES` a minute), so a password
cannot be guessed from a phone in the room.
"""

from __future__ import annotations

import hmac
import os
import secrets
import threading
import time
from pathlib import Path

#: The environment variable that may hold the arbiter's password.
PASSWORD_ENV = "MASUME_ARBITER_PASSWORD"
#: How long a login lasts: a long event day.
SESSION_S = 16 * 3600.0
#: Wrong passwords allowed per address in :data:`TRY_WINDOW_S`.
TRIES = 5
TRY_WINDOW_S = 60.0


class PasswordError(ValueError):
    pass


def read_password(path: str | Path | None, environ: dict[str, str] | None = None) -> str | None:
    """The arbiter's password: the first line of ``path``, else ``$MASUME_ARBITER_PASSWORD``,
    else None (no arbiter: nobody may change the event from the page)."""
    if path is not None:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise PasswordError(f"cannot read the arbiter password file {path}: {exc}") from None
        password = text.splitlines()[0].strip() if text.strip() else ""
        if not password:
            raise PasswordError(f"the arbiter password file {path} is empty")
        return password
    password = (os.environ if environ is None else environ).get(PASSWORD_ENV, "")
    return password or None


class Arbiter:
    """The arbiter's password and the sessions logged in with it."""

    def __init__(self, password: str | None, cookie: str = "masume-club-arbiter") -> None:
        self._password = password
        self.cookie = cookie
        self._sessions: dict[str, float] = {}  # session id -> expiry (time.monotonic)
        self._failures: dict[str, list[float]] = {}  # address -> times of wrong passwords
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self._password is not None

    def login(self, password: object, address: str) -> str:
        """A new session id for the right password; PermissionError saying why not."""
        if self._password is None:
            raise PermissionError("no arbiter on this server: start masume club serve with "
                                  f"--arbiter-password-file FILE or {PASSWORD_ENV}")
        now = time.monotonic()
        with self._lock:
            recent = [t for t in self._failures.get(address, []) if now - t < TRY_WINDOW_S]
            self._failures[address] = recent
            if len(recent) >= TRIES:
                raise PermissionError("too many wrong passwords: wait a minute")
            if not isinstance(password, str) or not hmac.compare_digest(
                    password.encode(), self._password.encode()):
                recent.append(now)
                raise PermissionError("wrong password")
            self._failures.pop(address, None)
            session = secrets.token_urlsafe(24)
            self._sessions = {s: t for s, t in self._sessions.items() if t > now}
            self._sessions[session] = now + SESSION_S
            return session

    def logout(self, session: str | None) -> None:
        with self._lock:
            self._sessions.pop(session or "", None)

    def is_arbiter(self, session: str | None) -> bool:
        if not session:
            return False
        with self._lock:
            expires = self._sessions.get(session)
            return expires is not None and expires > time.monotonic()
