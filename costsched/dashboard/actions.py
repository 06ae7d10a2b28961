"""Stop, start and migrate --to from the dashboard: only when the server was started with
them, only with the token, and from a form only with its CSRF value. Each runs the same
service function as the CLI's command and answers that command's `--json`."""

from __future__ import annotations

from starlette.requests import Request

from costsched.dashboard.auth import Access
from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.service import views
from costsched.store import PriceStore

ACTIONS = ("stop", "start", "migrate")


def refusal(access: Access, request: Request, csrf: str | None) -> tuple[int, str] | None:
    """(status, why) when the request may not act; None when it may. `csrf`: the form's
    value (None for an API request, which must carry the token as a bearer)."""
    if not access.actions:
        return 403, "actions are off: start the dashboard with --actions (and a token)"
    if csrf is None:
        if not access.bearer(request):
            return 401, "an action needs the token: send 'Authorization: Bearer TOKEN'"
        return None
    if not access.signed_in(request):
        return 401, "an action needs the token: sign in first"
    if not access.csrf_ok(request, csrf):
        return 403, "the form's CSRF value or origin is wrong: reload the page"
    return None


def run(store: PriceStore, action: str, job: str, *, to: str | None = None) -> dict | list:
    """Carry out `action` on `job` (an id or a name)."""
    if action not in ACTIONS:
        raise InvalidInput(f"action {action!r}: expected one of {', '.join(ACTIONS)}")
    launcher = views.job_launcher(store, job)
    if action == "stop":
        return views.record_document(service.stop(store, launcher, job))
    if action == "start":  # as `costsched start --json --wait 0`: the job's status
        record = service.start(store, launcher, job)
        return views.status_document(service.status(store, launcher, record.id))
    if not to:
        raise InvalidInput("to: name the offering to move the job to, as the tables print "
                           "it ('aws us-west-2 p3.2xlarge spot')")
    service.reconcile(store, launcher)
    advice = service.migrate(store, launcher, job, to=to)
    return views.advice_document(advice, views.price_ages(store, advice))
