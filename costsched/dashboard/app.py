"""The dashboard's ASGI application (Starlette): its pages, JSON API, live stream and,
when enabled, actions, over one store.

`create_app(store, access)` builds it; `costsched dashboard` serves it with uvicorn.
Reads of the store run one at a time in a worker thread (the service's passes are
synchronous); the event loop only serves.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from costsched.dashboard import api, pages
from costsched.dashboard.auth import Access
from costsched.dashboard.render import FILTERS, GLOBALS
from costsched.model import InvalidInput
from costsched.redact import redact
from costsched.store import PriceStore

HERE = Path(__file__).parent
T = TypeVar("T")

# No inline script or style, nothing from elsewhere: chart data sits in JSON blocks.
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
                               "img-src 'self' data:; connect-src 'self'; "
                               "frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    "x-content-type-options": "nosniff",
    # Not no-referrer: under it a browser sends `Origin: null` with a form, and the CSRF
    # check could not tell the dashboard's own forms from another site's.
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
}


class Dashboard:
    """What every route needs: the store, who may do what, the templates, and a lock that
    keeps the store's reads one at a time."""

    def __init__(self, store: PriceStore, access: Access, poll_seconds: float) -> None:
        self.store = store
        self.access = access
        self.poll_seconds = poll_seconds
        self._lock = threading.Lock()
        self.templates = Environment(loader=FileSystemLoader(HERE / "templates"),
                                     autoescape=select_autoescape(["html"]),
                                     trim_blocks=True, lstrip_blocks=True)
        self.templates.filters.update(FILTERS)
        self.templates.globals.update(GLOBALS)

    async def read(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`fn(store, ...)` in a worker thread, one at a time."""
        def locked() -> T:
            with self._lock:
                return fn(self.store, *args, **kwargs)

        return await run_in_threadpool(locked)

    def html(self, template: str, status_code: int = 200, **context: Any) -> Response:
        text = self.templates.get_template(template).render(access=self.access, **context)
        return Response(text, status_code=status_code, media_type="text/html; charset=utf-8")


class _Guard:
    """Security headers on every response; without the token, a server that needs it for
    reads answers only its sign-in page and static files."""

    def __init__(self, app: ASGIApp, dashboard: Dashboard) -> None:
        self.app = app
        self.dashboard = dashboard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        request = Request(scope)
        path = scope["path"]
        open_path = path in ("/login", "/favicon.ico") or path.startswith("/static/")
        if not open_path and not self.dashboard.access.may_read(request):
            response = (api.error(401, "this dashboard needs its token: send "
                                  "'Authorization: Bearer TOKEN'") if path.startswith("/api/")
                        else pages.to_login(request))
            await response(scope, receive, with_headers)
            return
        await self.app(scope, receive, with_headers)


# How the store says a job it was asked for does not exist (by id, or by name).
_NO_SUCH_JOB = re.compile(r"\bno such job\b|\bno job of that\b")


async def _invalid(request: Request, exc: Exception) -> Response:
    message = redact(str(exc))
    status = 404 if _NO_SUCH_JOB.search(message) else 400
    if request.url.path.startswith("/api/"):
        return api.error(status, message)
    dashboard: Dashboard = request.app.state.dashboard
    return dashboard.html("error.html", status_code=status, message=message,
                          heading="Not found" if status == 404 else "Not shown")


async def _not_found(request: Request, exc: Exception) -> Response:
    """An address the dashboard does not serve: JSON under /api/ (its API speaks JSON),
    else the page a job not there gets, naming the pages there are."""
    path = request.url.path
    if path.startswith("/api/"):
        return api.error(404, f"{path}: no such address: the API serves "
                         "/api/jobs, /api/jobs/JOB, /api/spend, /api/prices (JSON) and "
                         "/api/events (server-sent events: a stream that stays open until "
                         "you close it)")
    dashboard: Dashboard = request.app.state.dashboard
    return dashboard.html("error.html", status_code=404, heading="Not found",
                          message=f"{path}: no such page: the dashboard's pages are / (the "
                                  "jobs), /jobs/JOB (one job), /spend and /prices")


def create_app(store: PriceStore, access: Access | None = None, *,
               poll_seconds: float = 2.0) -> Starlette:
    """The dashboard over `store`. `access`: default read-only on loopback, no token."""
    dashboard = Dashboard(store, access or Access(token=None), poll_seconds)
    routes = [*pages.routes(), *api.routes(),
              Mount("/static", StaticFiles(directory=HERE / "static"), name="static")]
    app = Starlette(routes=routes, middleware=[Middleware(_Guard, dashboard=dashboard)],
                    exception_handlers={InvalidInput: _invalid, 404: _not_found})
    app.state.dashboard = dashboard
    return app


def dashboard_of(request: Request) -> Dashboard:
    return request.app.state.dashboard
