"""Who may read and act: the dashboard's token, its session cookie and CSRF check.

The token is the user's secret (from $COSTSCHED_DASHBOARD_TOKEN or a file), never shown,
logged or put in a URL. A browser signs in once with it and then holds a session cookie
(HttpOnly, SameSite=Strict) whose value is derived from the token, not the token itself;
scripts send `Authorization: Bearer TOKEN`. A form that acts carries a CSRF value derived
from the token too, and its Origin, when the browser sends one, must be this server.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from dataclasses import dataclass

from starlette.requests import Request

COOKIE = "costsched_dashboard"
MIN_TOKEN_LENGTH = 16


@dataclass(frozen=True)
class Access:
    """`token`: None for an open, read-only dashboard on loopback. `actions`: stop, start
    and migrate are served (a token is then required). `reads_need_token`: every page
    asks for the token (a server bound to another address than loopback)."""

    token: str | None
    actions: bool = False
    reads_need_token: bool = False

    def _derived(self, purpose: bytes) -> str:
        assert self.token is not None
        return hmac.new(self.token.encode(), purpose, hashlib.sha256).hexdigest()

    @property
    def session(self) -> str:
        """The session cookie's value."""
        return self._derived(b"costsched dashboard session")

    @property
    def csrf(self) -> str:
        """The value every acting form carries."""
        return self._derived(b"costsched dashboard csrf")

    def token_matches(self, given: str) -> bool:
        return self.token is not None and hmac.compare_digest(given.encode(),
                                                              self.token.encode())

    def bearer(self, request: Request) -> bool:
        """The request names the token in its Authorization header."""
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and self.token_matches(given.strip())

    def signed_in(self, request: Request) -> bool:
        """The request carries the session cookie, or the token as a bearer."""
        if self.token is None:
            return False
        cookie = request.cookies.get(COOKIE, "")
        return hmac.compare_digest(cookie.encode(), self.session.encode()) or self.bearer(request)

    def may_read(self, request: Request) -> bool:
        return not self.reads_need_token or self.signed_in(request)

    def csrf_ok(self, request: Request, given: str) -> bool:
        """A form's CSRF value is right and, when the browser says where the form was, it
        was this server's page (a bearer request carries no cookie to forge)."""
        if self.bearer(request):
            return True
        origin = request.headers.get("origin")
        if origin is not None and origin != _own_origin(request):
            return False
        return self.token is not None and hmac.compare_digest(given.encode(),
                                                              self.csrf.encode())


def _own_origin(request: Request) -> str:
    return f"{request.url.scheme}://{request.headers.get('host', '')}"


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 and `localhost`: the addresses only this machine reaches."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_token(token: str | None, *, host: str, actions: bool, source: str) -> None:
    """Refuse a setup that would expose the store or its jobs: another address than
    loopback, or actions, without a token; a token too short to be one."""
    if token is not None and len(token) < MIN_TOKEN_LENGTH:
        raise ValueError(f"{source}: expected a token of at least {MIN_TOKEN_LENGTH} "
                         "characters")
    if token is None and not is_loopback(host):
        raise ValueError(f"--host {host}: serving another address than loopback needs a "
                         "token (set COSTSCHED_DASHBOARD_TOKEN or --token-file)")
    if token is None and actions:
        raise ValueError("--actions: stop, start and migrate need a token (set "
                         "COSTSCHED_DASHBOARD_TOKEN or --token-file)")
