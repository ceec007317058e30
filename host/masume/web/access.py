"""Who may open the local web view: a secret per run, one link per person.

Each run of ``masume play`` makes a random token for each *role*:

- ``table``: the table's own page (the link ``web view:`` prints): the simulated
  board's hands and the choices, and of a card game what everyone at the table may
  see;
- each side of the game (``home``, ``away``, ``blue``, ...): the same controls, and
  that player's own cards;
- ``spectator``: the public view, read only.

The computer's side (``masume play --computer SIDE``) has no role: its page would show
the computer's hidden hand to whoever opened it, and no person plays that side. No link
is made or printed for it, and a request that asks for it (``?as=SIDE``) is refused,
saying whose side it is (docs/ai.md, "The computer's hand").

A link is the server's address with ``?token=``, as Jupyter's is. The page that
link opens sets a cookie per role (``masume-PORT-ROLE``, HttpOnly, SameSite=Strict),
so the page's own requests and its event stream carry the token without it; a
page names its role with ``?as=ROLE`` (none: ``table``). A request is let in as
the role whose token it carries (:meth:`Access.role`); without one it gets 403.
"""

from __future__ import annotations

import hmac
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.requests import Request

TABLE = "table"
SPECTATOR = "spectator"
#: Roles that only watch; every other may lift, place, press, roll and choose.
_READ_ONLY = frozenset({SPECTATOR})


class Denied(Exception):
    """A request without the token its role needs (403)."""


@dataclass(frozen=True)
class Link:
    role: str
    label: str  # "web view", "web view for home", "web view for spectators"
    url: str


class Access:
    """The tokens of one run of the web view at ``base_url`` (``http://host:port/``)."""

    def __init__(self, sides: Iterable[str], base_url: str,
                 computer: str | None = None) -> None:
        everyone = tuple(str(s) for s in sides)
        #: The computer's side: no role, no link (its hand is the computer's alone).
        self.computer = computer if computer in everyone else None
        self.sides = tuple(s for s in everyone if s != self.computer)
        self.base_url = base_url
        self.roles = (TABLE, *self.sides, SPECTATOR)
        if len(set(self.roles)) != len(self.roles) or {TABLE, SPECTATOR} & set(everyone):
            raise ValueError(f"a side may not be called {TABLE!r} or {SPECTATOR!r}")
        self._tokens = {role: secrets.token_urlsafe(18) for role in self.roles}
        port = urlsplit(base_url).port or 80
        self._cookie = {role: f"masume-{port}-{_cookie_word(role, i)}"
                        for i, role in enumerate(self.roles)}

    # ---- links -----------------------------------------------------------------------

    def link(self, role: str) -> Link:
        label = {TABLE: "web view", SPECTATOR: "web view for spectators"}.get(
            role, f"web view for {role}")
        return Link(role, label, f"{self.base_url}?token={self._tokens[role]}")

    def links(self) -> list[Link]:
        """Every link: the table's, each player's, the spectators'."""
        return [self.link(role) for role in self.roles]

    def shareable(self, role: str) -> list[Link]:
        """The links a page of ``role`` may show: the table's page shows every
        player's and the spectators'; a player's page its own and the spectators';
        a spectator's page the spectators'."""
        if role == TABLE:
            shown = [*self.sides, SPECTATOR]
        elif role in self.sides:
            shown = [role, SPECTATOR]
        else:
            shown = [SPECTATOR]
        return [self.link(r) for r in shown]

    def can_act(self, role: str) -> bool:
        return role not in _READ_ONLY

    @staticmethod
    def viewer(role: str) -> str | None:
        """Whose hidden cards a role sees: a side its own, anyone else none."""
        return None if role in (TABLE, SPECTATOR) else role

    # ---- requests --------------------------------------------------------------------

    def cookie(self, role: str) -> tuple[str, str]:
        """The cookie a page of ``role`` is given: (name, value)."""
        return self._cookie[role], self._tokens[role]

    def _role_of_token(self, token: str) -> str | None:
        found = None
        for role, secret in self._tokens.items():  # every one compared: constant time
            if hmac.compare_digest(secret.encode(), token.encode()):
                found = role
        return found

    def role(self, request: Request) -> str:
        """The role a request is let in as; :class:`Denied` when it carries no token
        for the role it asks for (``?as=ROLE``, default ``table``).

        A ``?token=`` in the request says the role itself (``?as=`` must then agree).
        Else the role's cookie must hold its token.
        """
        wanted = request.query_params.get("as") or None
        token = request.query_params.get("token")
        if token is not None:
            role = self._role_of_token(token)
            if role is None:
                raise Denied("this link's secret is not this game's (each start of "
                             "masume play makes new ones)")
            if wanted is not None and wanted != role:
                raise Denied(f"this link is not {wanted}'s")
            return role
        role = wanted or TABLE
        if role == self.computer:
            raise Denied(f"{role} is the computer's side: no page shows its cards")
        if role not in self._tokens:
            raise Denied(f"no one is called {role!r} here")
        name, secret = self.cookie(role)
        if not hmac.compare_digest(request.cookies.get(name, "").encode(), secret.encode()):
            raise Denied("this page was opened without its link's secret" if role == TABLE
                         else f"this page was opened without the secret of {role}'s link")
        return role

    def any_role(self, request: Request) -> bool:
        """Does the request carry any of this run's tokens (for the page's static files)?"""
        token = request.query_params.get("token")
        if token is not None:
            return self._role_of_token(token) is not None
        cookies: Mapping[str, str] = request.cookies
        return any(hmac.compare_digest(cookies.get(self._cookie[r], "").encode(),
                                       self._tokens[r].encode()) for r in self.roles)


def _cookie_word(role: str, index: int) -> str:
    """A role as a cookie name may hold it (side names are plain words; anything else
    by its number)."""
    return role if re.fullmatch(r"[A-Za-z0-9_]+", role) else f"role{index}"
