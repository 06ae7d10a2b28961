"""Starting again a job its own budget's cap stopped (local launcher, real subprocesses, a
real SQLite store): the start prices the steps left (from the step it resumes at) against
what is left of its budget as it stands, the one `start --budget` gives it; a plain start
that cannot run names the amount that is enough, and that amount starts it and lets it
finish; the budget raised reads the same in status, report, the dashboard and the API."""

from __future__ import annotations

import json
import math
import re
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml
from starlette.testclient import TestClient

from costsched import measured, own_budget
from costsched.config import BudgetsConfig
from costsched.dashboard.app import create_app
from costsched.service import jobs as service
from costsched.service.jobs import caps
from costsched.service.jobs.runs import _running, steps_left
from tests.costsched.service.test_budget_caps import USD_PER_HOUR, local  # noqa: F401
from tests.costsched.service.test_jobs import TRAIN, wait_for
from tests.real_jobs import SETTLE

STEPS = 800  # 8 s at the 100 steps/s it runs at: 8 cents at one cent a second
# Its plan (800 steps at the 10,000 steps/s declared, and no start: the local launcher
# boots no instance) fits; all 800 steps at its pace ($0.08) not.
BUDGET = 0.05


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _stopped_at_cap(store, launcher, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """A job launched within its budget (it declares 100x its pace), stopped at its cap
    by a budget check once its speed is measured, about a third of the way in (the check
    charges the whole budget ahead: it stops the job whatever it spent)."""
    spec = {"name": "capped", "steps": STEPS, "throughputs": {"V100": 10_000},
            "run": f"{sys.executable} {TRAIN} --steps {STEPS} --step-seconds 0.01 "
                   "--checkpoint-every 0.2",
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"], "budget": BUDGET},
            "checkpoint": {"interval_minutes": 30, "size_gb": 0.01}}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(spec))
    monkeypatch.chdir(tmp_path)
    [job] = service.launch(store, ["job.yaml"], launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))

    def third_done() -> bool:  # (its checks charge a short interval: they let it run on
        # unless a loaded machine makes them late enough to stop it at its cap first)
        service.reconcile(store, launcher, budgets=BudgetsConfig(), watch_seconds=0.01)
        record = store.jobs.get(job.id)
        return record.state == "stopped" or record.steps_done >= STEPS / 3

    wait_for(third_done, seconds=SETTLE, poll=0.2)
    # (A check that charges the whole interval, not its rest: it stops the job.)
    with monkeypatch.context() as patched:
        patched.setattr(own_budget, "REST_MARGIN_SECONDS", math.inf)
        caps.enforce(store, launcher, BudgetsConfig(), _now(),
                     interval_seconds=BUDGET * 3600 / USD_PER_HOUR)
    assert store.jobs.get(job.id).state == "stopped"
    said = [e.detail for e in store.jobs.event_rows([job.id], kinds=["budget"])]
    assert any(d.startswith("stopped at its own budget") for d in said)
    return job.id


def _measured_pace(cli, job_id: int) -> float:
    """The job's measured steps per second, as `report --json` shows it."""
    report = json.loads(cli("report", "--json").output)
    [row] = [r for r in report["speeds"] if r["job_id"] == job_id]
    return float(row["measured_sps"])


def _budgets_shown(store, cli, job_id: int) -> dict[str, float]:
    """The job's own budget as each view shows it."""
    status = json.loads(cli("status", str(job_id), "--no-reconcile", "--json").output)
    report = json.loads(cli("report", "--json").output)
    dashboard = TestClient(create_app(store))
    api = dashboard.get(f"/api/jobs/{job_id}").json()
    [mine] = [b for b in status["budgets"] if b["name"] == f"job {job_id} (capped)"]
    # (the report's table of budgets near or at their cap lists it while it is stopped
    # at its cap, or near its budget)
    rows = [b["budget_usd"] for b in report["budgets"] if b["job_id"] == job_id]
    [now] = [b for b in report["budgets_now"] if b["name"] == f"job {job_id} (capped)"]
    [listed] = [j for j in dashboard.get("/api/jobs").json()["jobs"] if j["id"] == job_id]
    shown = {"status": mine["usd"], "report now": now["usd"], "api": api["budget_usd"],
             "listed": listed.get("budget_usd", api["budget_usd"])}
    return shown | ({"report": rows[0]} if rows else {})


def test_a_job_stopped_at_its_budget_starts_on_the_amount_its_refusal_names(
        tmp_path: Path, local, cli, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    store, launcher = local
    monkeypatch.setattr(measured, "MIN_TRAINING_SECONDS", 1.0)  # its pace, measured soon
    job_id = _stopped_at_cap(store, launcher, tmp_path, monkeypatch)
    record = store.jobs.get(job_id)
    resumes_at = record.checkpoint_step
    assert 0 < resumes_at < STEPS
    left = steps_left(store, _running(store, job_id), _now())
    assert left == STEPS - resumes_at  # from the step its newest checkpoint holds
    [own] = caps.budget_states(store, BudgetsConfig(), _now(), 30)
    # All its steps at its measured pace cost more than the budget (its plan said less):
    # only its steps left are priced against what is left.
    spent = own.spent_usd

    # A plain start: refused in one line that names the amount that is enough.
    plain = cli("start", str(job_id), "--wait", "0")
    assert plain.exit_code == 2  # bad input
    [line] = plain.output.strip().splitlines()
    # (no start: the local launcher boots no instance, and the line names none)
    assert f"its {left:,.0f} steps left are expected to cost $" in line, line
    found = re.search(r"`costsched start capped --budget ([0-9.]+)` \(\$([0-9.]+) spent \+ "
                      r"\$([0-9.]+) expected for its ([0-9,]+) steps left at its measured [0-9.,]+ "
                      r"steps/s on aws us-east-1a p3\.2xlarge spot"
                      r"() \+ \$([0-9.]+) for the next watch interval"
                      r"(?: \([0-9]+ s, to its end at its pace\))?"
                      r"(?:; their exact sum rounded up to the cent)?\)"
                      r"; its steps left: \$[0-9.]+ \([^;]*\)"
                      r"(?:; that amount also holds its rest taking about [0-9]+ s longer "
                      r"than priced)?$", line)
    assert found, line
    amount, *parts = (float(found.group(i) or 0) for i in (1, 2, 3, 5, 6))
    assert found.group(4) == f"{left:,.0f}"
    assert parts[0] == pytest.approx(spent, abs=1e-4)
    # its steps left at the pace it was measured at (over the second or so this test
    # lets it be judged on, a loaded machine's pace is far from its 100 steps/s either
    # way), the figure the refusal prices them with
    pace = _measured_pace(cli, job_id)
    assert parts[1] == pytest.approx(left / pace * USD_PER_HOUR / 3600, rel=0.1, abs=0.006)
    assert parts[2] == 0 and _running(store, job_id).resolved.start_hours == 0  # no restart
    # the watch's charge ahead: its rest (as written, to the cent: a second at most) and a
    # second, shorter than one watch interval
    assert parts[3] == pytest.approx(
        own_budget.ahead_usd(USD_PER_HOUR, 30, parts[1] * 3600 / USD_PER_HOUR), abs=0.011)
    assert parts[3] < 30 * USD_PER_HOUR / 3600
    # Rounded up to the cent (each part as written is within half a cent of its own).
    assert sum(parts) - 0.02 <= amount <= sum(parts) + 0.03

    # Too little: refused, and the budget is as it was everywhere.
    short = cli("start", str(job_id), "--budget", f"{spent + parts[1] / 2:.4f}", "--wait", "0")
    assert short.exit_code == 2 and "steps left are expected to cost" in short.output
    assert set(_budgets_shown(store, cli, job_id).values()) == {BUDGET}

    # A cent under the amount named: refused by the same rule, naming the same amount.
    under = cli("start", str(job_id), "--budget", f"{amount - 0.01:.2f}", "--wait", "0")
    assert under.exit_code == 2 and f"--budget {amount:.2f}`" in under.output, under.output

    # The amount named: started from its checkpoint, and the budget is that everywhere.
    started = cli("start", str(job_id), "--budget", str(amount), "--wait", "0")
    assert started.exit_code == 0, started.output
    assert set(_budgets_shown(store, cli, job_id).values()) == {amount}
    # The watch's cap check (a watch interval ahead, as the start priced it) lets it run,
    # and it runs on to its end within that budget.
    checked = caps.enforce(store, launcher, BudgetsConfig(), _now(), interval_seconds=30)
    assert [e.kind for e in checked] in ([], ["budget"]), checked  # at most a warning
    assert store.jobs.get(job_id).state != "stopped"  # not stopped at its cap
    shown = "".join(service.follow(store, launcher, job_id, poll=0.2))
    assert store.jobs.get(job_id).state == "succeeded", shown
    assert f"resumed from step {resumes_at:.0f}" in shown or "resumed" in shown
    [own] = caps.budget_states(store, BudgetsConfig(), _now(), 30)
    assert own.usd == amount and own.spent_usd <= amount and not math.isnan(own.spent_usd)
