"""The JSON API under /api/: the documents of `costsched.dashboard.data` (the CLI's
`--json` shapes), the live stream, and the actions when they are enabled."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from costsched.dashboard import actions, data, live
from costsched.service.views import dumps


def json_response(document: Any, status_code: int = 200) -> Response:
    """`document` encoded as the CLI's `--json` encodes it (times in ISO 8601 UTC)."""
    return Response(dumps(document), status_code=status_code,
                    media_type="application/json")


def error(status_code: int, message: str) -> Response:
    return json_response({"error": message}, status_code)


def states_of(request: Request) -> list[str]:
    """The `state` filters in their stored spelling, or one line naming the first that is
    no state, the states and the close one (as `status --state` says it)."""
    from costsched.service.job_filters import parse_states

    return parse_states([s.strip() for v in request.query_params.getlist("state")
                         for s in v.split(",") if s.strip()], where="state")


async def jobs(request: Request) -> Response:
    """GET /api/jobs?state=running&name=resnet*&label=team=vision&budget=vision:
    `costsched status --no-reconcile --json` (`label` repeated or comma-separated: all)."""
    dashboard = request.app.state.dashboard
    q = request.query_params
    return json_response(await dashboard.read(
        data.jobs_document, states=states_of(request), name=q.get("name"),
        labels=labels_of(request), budget=q.get("budget")))


def labels_of(request: Request) -> list[str]:
    """The query's `label=LABEL=VALUE` filters (repeated, or comma-separated as the jobs
    page's field sends them; empty ones left out)."""
    return [p.strip() for v in request.query_params.getlist("label") for p in v.split(",")
            if p.strip()]


async def job(request: Request) -> Response:
    """GET /api/jobs/{job}: one job, by id or name (`data.job_document`)."""
    dashboard = request.app.state.dashboard
    return json_response(await dashboard.read(data.job_document, request.path_params["job"]))


async def spend(request: Request) -> Response:
    """GET /api/spend?since=&until=&job=: `costsched report --json`."""
    q = request.query_params
    return json_response(await request.app.state.dashboard.read(
        data.spend_document, since=q.get("since"), until=q.get("until"), job=q.get("job")))


async def prices(request: Request) -> Response:
    """GET /api/prices: the running jobs' offerings, alternatives, history and signals."""
    return json_response(await request.app.state.dashboard.read(data.prices_document))


async def events(request: Request) -> Response:
    """GET /api/events: server-sent events, `change` whenever the store's jobs change."""
    dashboard = request.app.state.dashboard

    def read() -> str:
        with dashboard._lock:
            return live.fingerprint(dashboard.store)

    return StreamingResponse(live.stream(read, request.is_disconnected,
                                         dashboard.poll_seconds),
                             media_type="text/event-stream",
                             headers={"cache-control": "no-store"})


async def act(request: Request) -> Response:
    """POST /api/jobs/{job}/{stop|start|migrate}: with the token as a bearer; migrate
    takes {"to": "CLOUD ZONE-OR-REGION TYPE MARKET"} as JSON. Answers the CLI's `--json`
    of the same command."""
    dashboard = request.app.state.dashboard
    refused = actions.refusal(dashboard.access, request, csrf=None)
    if refused:
        return error(*refused)
    body: dict = {}
    if request.headers.get("content-type", "").startswith("application/json"):
        body = await request.json()
    done = await dashboard.read(actions.run, request.path_params["action"],
                                request.path_params["job"], to=body.get("to"))
    return json_response(done)


def routes() -> list[Route]:
    return [Route("/api/jobs", jobs), Route("/api/jobs/{job}", job),
            Route("/api/spend", spend), Route("/api/prices", prices),
            Route("/api/events", events),
            Route("/api/jobs/{job}/{action:str}", act, methods=["POST"])]
