"""The dashboard's pages: Jobs, a job, Spend and Prices, rendered on the server from the
same documents the API serves. `?fragment=1` answers only the page's live part, which the
page's script fetches again whenever the store changes."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from costsched.dashboard import actions, api, data, live, render
from costsched.dashboard.auth import COOKIE
from costsched.model import SHOWN_STATES
from costsched.report.tables import TABLES, row_keys, split_columns

STATES = SHOWN_STATES  # the jobs page's filter: the states it shows, as `status --state`


def _page(request: Request, template: str, **context: object) -> Response:
    dashboard = request.app.state.dashboard
    fragment = request.query_params.get("fragment") == "1"
    section = {"job.html": "jobs"}.get(template, template.removesuffix(".html"))
    return dashboard.html(f"_{template}" if fragment else template, request=request,
                          csrf=dashboard.access.csrf if dashboard.access.token else "",
                          section=section, **context)


async def _version(request: Request) -> str:
    return await request.app.state.dashboard.read(live.fingerprint)


async def jobs_page(request: Request) -> Response:
    dashboard = request.app.state.dashboard
    states = api.states_of(request)  # a misspelt one refused as the API and `status` do
    state = ",".join(states)  # the one the filter shows chosen
    name = request.query_params.get("name") or ""
    labels = api.labels_of(request)
    budget = request.query_params.get("budget") or ""
    version = await _version(request)
    doc = await dashboard.read(data.jobs_document, states=states,
                               name=name or None, labels=labels, budget=budget or None)
    extra = await dashboard.read(data.forecasts, doc["jobs"])
    bars = {"labels": [f'{j["name"]} ({j["id"]})' for j in doc["jobs"]], "series": [
        {"label": "spent", "values": [j["cost_usd"] for j in doc["jobs"]]},
        {"label": "forecast", "values": [extra[j["id"]]["forecast_usd"] for j in doc["jobs"]]},
        {"label": "budget", "values": [extra[j["id"]]["budget_usd"] for j in doc["jobs"]]}]}
    return _page(request, "jobs.html", doc=doc, extra=extra, states=STATES, state=state,
                 name=name, label=", ".join(labels), budget=budget, version=version,
                 chart=bars, budget_state=render.budget_state)


async def job_page(request: Request) -> Response:
    dashboard = request.app.state.dashboard
    version = await _version(request)
    doc = await dashboard.read(data.job_document, request.path_params["job"])
    doc["report"] = {**doc["report"], **doc["report_written"]}  # charges as every view writes them
    placements = doc["job"]["placements"]
    return _page(request, "job.html", doc=doc, job=doc["job"], version=version,
                 timeline=render.timeline(placements),
                 moved=render.price_moves(doc["price_changes"]),
                 budget_state=render.budget_state(
                     doc["forecast_usd"] if doc["forecast_usd"] is not None
                     else doc["job"]["cost_usd"], doc["budget_usd"]))


async def spend_page(request: Request) -> Response:
    dashboard = request.app.state.dashboard
    q = request.query_params
    version = await _version(request)
    doc = await dashboard.read(data.spend_document, since=q.get("since"),
                               until=q.get("until"), shown=True)  # as every view writes
    charts = {"days": render.day_series(doc["days"]),
              "clouds": {"labels": [c["cloud"] for c in doc["clouds"]],
                         "series": [{"label": "spend", "values": [c["usd"] for c in
                                                                  doc["clouds"]]}]},
              "jobs": {"labels": [f'{j["name"]} ({j["job_id"]})' for j in doc["jobs"]],
                       "series": [
                  {"label": "spend", "values": [j["usd"] for j in doc["jobs"]]},
                  {"label": "on-demand", "values": [j["on_demand_usd"] for j in doc["jobs"]]},
                  {"label": "launch-time choice kept",
                   "values": [j["launch_choice_usd"] for j in doc["jobs"]]}]}}
    return _page(request, "spend.html", doc=doc, charts=charts, version=version,
                 since=q.get("since") or "", until=q.get("until") or "",
                 tables=[(t.name, t.title) for t in TABLES], split_columns=split_columns,
                 row_keys=row_keys)


async def prices_page(request: Request) -> Response:
    dashboard = request.app.state.dashboard
    version = await _version(request)
    doc = await dashboard.read(data.prices_document)
    since = doc["at"] - timedelta(days=data.HISTORY_DAYS)
    histories = {t: render.history_series(rows, since, doc["at"])
                 for t, rows in doc["history"].items()}
    used = {(j["cloud"], j["region"], j["zone"], j["instance_type"], j["market"])
            for j in doc["jobs"]}
    return _page(request, "prices.html", doc=doc, histories=histories, used=used,
                 version=version)


async def act(request: Request) -> Response:
    """POST /jobs/{job}/{action} from the job page's forms."""
    dashboard = request.app.state.dashboard
    form = await request.form()
    job = request.path_params["job"]
    refused = actions.refusal(dashboard.access, request, csrf=str(form.get("csrf", "")))
    if refused:
        return dashboard.html("error.html", status_code=refused[0], message=refused[1])
    await dashboard.read(actions.run, request.path_params["action"], job,
                         to=str(form.get("to", "")) or None)
    return RedirectResponse(f"/jobs/{quote(job)}", status_code=303)


def to_login(request: Request) -> Response:
    return RedirectResponse(f"/login?next={quote(request.url.path)}", status_code=303)


async def login(request: Request) -> Response:
    """GET: the sign-in form. POST: the token, checked; a session cookie on success."""
    dashboard = request.app.state.dashboard
    access = dashboard.access
    target = request.query_params.get("next", "/")
    target = target if target.startswith("/") and not target.startswith("//") else "/"
    if request.method == "GET":
        return dashboard.html("login.html", next=target, failed=False)
    form = await request.form()
    origin = request.headers.get("origin")
    own = f"{request.url.scheme}://{request.headers.get('host', '')}"
    if (origin is not None and origin != own) or not access.token_matches(
            str(form.get("token", ""))):
        return dashboard.html("login.html", status_code=401, next=target, failed=True)
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(COOKIE, access.session, httponly=True, samesite="strict",
                        secure=request.url.scheme == "https")
    return response


async def logout(request: Request) -> Response:
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(COOKIE)
    return response


def routes() -> list[Route]:
    return [Route("/", jobs_page), Route("/jobs/{job}", job_page), Route("/spend", spend_page),
            Route("/prices", prices_page),
            Route("/jobs/{job}/{action:str}", act, methods=["POST"]),
            Route("/login", login, methods=["GET", "POST"]),
            Route("/logout", logout, methods=["POST"])]
