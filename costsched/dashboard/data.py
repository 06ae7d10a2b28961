"""The dashboard's documents: what its pages show and its JSON API serves, built by the
service functions and `costsched.service.views`, the same code that writes the CLI's
`--json`. Nothing here charges, ranks or decides; it reads and assembles.

- jobs: `costsched status --no-reconcile --json` (optionally one state, a name pattern,
  labels and a budget: `costsched.service.job_filters`),
  with a failed job's output and errors redacted (`masked`);
- job: one job's status, the policy's advice (`migrate JOB --dry-run --json`), its cost
  report (`report --job JOB --json`), budget, checkpoints and log tail;
- spend: `costsched report --json`;
- prices: the offerings the running jobs use and their alternatives (`prices show --json`),
  each used offering's history (`prices history --json`) and spot risk signals
  (`risk show --json`).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pandas as pd

from costsched import own_budget
from costsched.dashboard import job_output
from costsched.model import FINAL_STATES, JOB_STATES, InvalidInput, TryAgain
from costsched.redact import redact, redact_url
from costsched.service import jobs as service
from costsched.service import views
from costsched.service.job_filters import job_filter
from costsched.service.jobs.budgets import budgets_now, job_forecasts
from costsched.service.values import as_time
from costsched.store import PriceStore
from costsched.throughput_learned import progress_record_words
from costsched.vocabulary import RESTART_MARK, restart_move

LOG_LINES = 60  # lines of a job's output its page shows
HISTORY_DAYS = 30  # of price history on the prices page
ALTERNATIVES = 12  # offerings shown per GPU model of the running jobs
CHEAPEST = 3  # offerings shown per GPU model when no job runs


def jobs_document(store: PriceStore, *, states: list[str] | None = None,
                  name: str | None = None, labels: list[str] | None = None,
                  budget: str | None = None) -> dict:
    """`costsched status --no-reconcile --json [--state S] [--name N] [--label K=V]
    [--budget B]`."""
    from costsched import daemon
    from costsched.config import effective
    from costsched.daemon.supervision import recovery

    launcher = views.job_launcher(store, None)
    only = job_filter(labels or [], budget, where="label")
    shown = service.status(store, launcher, None, reconcile_first=False,
                           states=states or [], name=name or None, only=only)
    from costsched.service.booking import held_unused

    now = datetime.now(timezone.utc)
    held = held_unused(store, now, {s.record.id for s in shown})  # as `status --json`
    watch = recovery(store, effective(), now)
    # The supervisor's next re-plan, which the store's schedule does not hold, as
    # `status --json` gives it.
    scheduled = watch.scheduled(daemon.status(store), now)
    # The budgets of the jobs shown, as `status` filters them; every budget when unfiltered.
    narrowed = bool(states) or bool(name) or not only.empty
    budgets = budgets_now(store, of_jobs={s.record.id for s in shown} if narrowed else None)
    doc = views.status_document(shown, scheduled, budgets, held)
    armed = watch.document(now)  # as `status --json` says it
    stored = {s.record.id: s.record.spec for s in shown}
    return {**doc, "jobs": [masked(j, stored.get(j["id"], {})) for j in doc["jobs"]],
            "recovery": armed}


def masked(job: dict, stored: dict | None = None) -> dict:
    """A job of a status document with its free text (why it failed, its last lines of
    output, a checkpoint store's error, the daemon's details) passed through
    `costsched.redact`: a job's output may print a credential; the dashboard never shows
    one. Its output also masks the --secret values of `stored` (the job's stored spec), or
    is withheld where they cannot be known (`job_output`). The values of the envs its file
    names like a secret's are masked in all of them first, as `status` masks them
    (`glance.remember_secrets`): a job's first page never shows one. Figures and names are
    left as they are."""
    from costsched.service.glance import remember_secrets

    remember_secrets(stored or {})
    out = {**job, **{k: redact(job[k]) for k in ("trouble", "waits", "instance_detail")
                     if job.get(k)}}
    if job.get("failure"):
        failure = job["failure"]
        out["failure"] = {**failure, "detail": redact(failure["detail"] or ""),
                          "log_tail": job_output.shown_lines(job["id"], stored or {},
                                                             failure["log_tail"])}
    if job.get("checkpoint_error"):
        out["checkpoint_error"] = redact(job["checkpoint_error"])
    return out


def forecasts(store: PriceStore, jobs: list[dict], at: datetime | None = None
              ) -> dict[int, dict]:
    """Per job of a jobs document: its own budget as it stands (`own_budget`, None where
    it has none) and, for a running job, its forecast at `at` (default now): what it spent
    plus its cost to its end, the figure its own budget's forecast is (`job_forecasts`:
    `status`'s budgets read the same)."""
    if not jobs:
        return {}
    records = store.jobs.records([j["id"] for j in jobs])
    figures = job_forecasts(store, [r.id for r in records], at=at)
    budgets = own_budget.budgets(store, records)
    return {j["id"]: {"budget_usd": budgets.get(j["id"]),
                      "forecast_usd": figures.get(j["id"])} for j in jobs}


def _advice(store: PriceStore, launcher: Any, job_id: int | None) -> list[dict]:
    """`migrate [JOB] --dry-run --json`: what the policy would do with the running job (or
    every running job), in dollars."""
    try:
        advice = service.migrate(store, launcher, job_id, dry_run=True)
    except TryAgain:  # its recovery under way (its placement ended): no advice now
        return []
    return views.advice_document(advice, views.price_ages(store, advice))


def job_document(store: PriceStore, job: int | str, at: datetime | None = None) -> dict:
    """One job: its status (`status JOB --no-reconcile --json`'s one job), the policy's
    advice, its cost report, budget and forecast (at `at`, default now: `forecasts`),
    checkpoints, events and log tail."""
    from costsched.report import build

    job_id = service.job_ids(store, job, states=())[0]
    launcher = views.job_launcher(store, job_id)
    shown = service.status(store, launcher, job_id, reconcile_first=False)
    [status] = views.status_document(shown)
    record = store.jobs.get(job_id)
    status = masked(status, record.spec)
    advice = _advice(store, launcher, job_id) if record.state == "running" else []
    events = store.jobs.events(job_id)
    return {
        "job": status,
        "budget_usd": own_budget.budgets(store, [record]).get(job_id),
        "forecast_usd": job_forecasts(store, [job_id], at=at).get(job_id),
        "advice": advice,
        "report": views.report_document(report := build(store, job=job_id),
                                        budgets_now(store, at=report.until,
                                                    of_jobs={job_id})),
        # How the pages write the report's charges (`Report.tables`): not --json's.
        "report_written": written(report),
        "events": [{**e, "detail": redact(progress_record_words(str(e["detail"]))
                                          if e["kind"] == "progress" else str(e["detail"]))}
                   for e in views.frame_records(events.tail(200))],
        "price_changes": price_changes(store, job_id),
        "costs_note": views.costs_note(shown),  # its prices' age, as `status` notes it
        "checkpoints": checkpoints(record.checkpoint_location),
        "log_tail": _log_tail(store, launcher, job_id, record.spec),
    }


def price_changes(store: PriceStore, job_id: int) -> list[dict]:
    """At each change of the job's placement (a move, a start), the hourly price then of
    the offering it left (`from`) and of the one it took (`to`), each node's, from the
    stored prices as its cost is charged: a price that changed while the job ran is the
    one it would have kept paying, not the one it was placed at. `reason`: why it changed
    (`model.PLACEMENT_REASONS`): a migration is a move for price, a recovery or a start is
    not."""
    from costsched.costs import charge

    rows = store.jobs.placement_rows([job_id])
    pairs = list(zip(rows, rows[1:], strict=False))
    if not pairs:
        return []
    second = timedelta(seconds=1)  # a second at each change, at the price then in effect
    probes = [p._replace(start_at=after.start_at, end_at=after.start_at + second,
                         waiting=False) for before, after in pairs for p in (before, after)]
    # (rounded off the float noise of an integral over one second; no price has 9 decimals)
    prices = [round(usd * 3600, 9) for _, usd, _ in charge(store, probes, now=as_time(None))]
    # A recovery after the job's own error is a restart on error, not a preemption's.
    restarted = {m.target_instance for m in store.moves.of_jobs([job_id])[job_id]
                 if restart_move(m.kind, m.detail)}
    return [{"at": after.start_at, "from": prices[2 * i], "reason": RESTART_MARK
             if after.reason == "recovery" and after.instance in restarted else after.reason,
             "to": prices[2 * i + 1], "saves": prices[2 * i] - prices[2 * i + 1]}
            for i, (_, after) in enumerate(pairs)]


def checkpoints(location: str) -> dict:
    """The job's published checkpoints, newest first (or why they cannot be listed)."""
    shown = redact_url(location) if location else ""
    if not location:
        return {"location": "", "items": [], "error": "no checkpoint location"}
    try:
        from launchers.checkpoints import open_store

        items = open_store(location).list()
    except Exception as exc:  # noqa: BLE001 - a store that cannot be read is shown, not fatal
        return {"location": shown, "items": [], "error": redact(str(exc))}
    return {"location": shown, "error": None, "items": [
        {"version": c.version, "name": c.describe(), "size": c.size, "sha256": c.sha256,
         "published_at": c.published_at} for c in sorted(items, key=lambda c: -c.version)]}


def _log_tail(store: PriceStore, launcher: Any, job_id: int, stored: dict) -> str:
    try:
        return job_output.shown(job_id, stored,
                                service.logs(store, launcher, job_id, tail=LOG_LINES))
    except (InvalidInput, OSError) as exc:
        return f"(no output: {redact(str(exc))})"


def spend_document(store: PriceStore, *, since: str | None = None,
                   until: str | None = None, job: str | None = None,
                   shown: bool = False) -> dict:
    """`costsched report --json [--since] [--until] [--job]`; `shown` (the Spend page):
    with how its charges are written (`written`), which --json leaves out."""
    from costsched.report import build

    built = build(store, since=since or None, until=until or None, job=job or None)
    doc = views.report_document(built, budgets_now(  # a report of one job: its budgets
        store, at=built.until, of_jobs=built.job_ids() if job else None))
    return {**doc, **written(built)} if shown else doc


def written(built: Any) -> dict:
    """How the report `built` writes its charges (`Report.tables`): the charged
    figures' precision under "scale", and what its spend tables' cells are made of under
    "parts"."""
    return {k: v for k, v in built.tables().items() if k in ("scale", "parts")}


def prices_document(store: PriceStore) -> dict:
    """The offerings the unfinished jobs are placed on, the alternatives of the same GPU
    models as of now (cheapest per GPU-hour first; with no job running, the cheapest of
    every GPU model: the prices are shown all the same), each used instance type's price
    history over the last HISTORY_DAYS days in its regions (from the price in effect then),
    the newest spot risk signals of the instance types shown, and the cheapest on-demand
    and spot price of every GPU model and count, each with its own age (`costsched gpus`)."""
    from costsched.service.gpus import gpu_summary
    from costsched.service.prices import price_history, prices
    from costsched.service.signals import signals

    now = pd.Timestamp(as_time(None))
    live = [s for s in JOB_STATES if s not in FINAL_STATES]
    placed = store.jobs.placements_of([int(i) for i in store.jobs.list(states=live)["id"]])
    used = placed[placed["end_at"].isna()] if len(placed) else placed
    jobs = [{"job_id": int(p.job_id), "cloud": p.cloud, "region": p.region, "zone": p.zone,
             "instance_type": p.instance_type, "market": p.market, "gpu_model": p.gpu_model,
             "usd_per_hour": float(p.usd_per_hour)} for p in used.itertuples()]
    gpus = sorted({j["gpu_model"] for j in jobs})
    frame = prices(store, now, gpu_models=gpus) if gpus else prices(store, now)
    alternatives = (frame.groupby("gpu_model", sort=False).head(
        ALTERNATIVES if gpus else CHEAPEST) if len(frame) else frame)
    history = {}
    for instance_type, regions in _by_type(jobs).items():
        rows = price_history(store, instance_type, regions=regions)
        history[instance_type] = views.frame_records(_window(rows, now))
    types = {j["instance_type"] for j in jobs} | (
        set() if gpus or alternatives.empty else set(alternatives["instance_type"]))
    risk = signals(store, now)
    risk = risk[risk["instance_type"].isin(types)] if len(risk) else risk
    return {"at": now, "jobs": jobs, "prices": views.frame_records(alternatives),
            "history": history, "signals": {"signals": views.frame_records(risk)},
            "gpus": views.frame_records(gpu_summary(store, now))}


def _window(rows: pd.DataFrame, now: pd.Timestamp) -> pd.DataFrame:
    """The price changes of the last HISTORY_DAYS days, and for each offering the price in
    effect when they begin (however old: its age shows)."""
    if rows.empty:
        return rows
    start = now - timedelta(days=HISTORY_DAYS)
    key = ["cloud", "region", "zone", "market"]
    recent = rows[rows["effective_at"] >= start]
    before = rows[rows["effective_at"] < start].groupby(key, sort=False).tail(1)
    return pd.concat([before, recent]).sort_values(["effective_at", "zone"])


def _by_type(jobs: list[dict]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for j in jobs:
        regions = out.setdefault(j["instance_type"], [])
        if j["region"] not in regions:
            regions.append(j["region"])
    return out
