"""A plan refused for its own budget says which figures the budget it asks for holds: the
cost it is short of is the expected one, the amount to raise it to is the launch's (its
pessimistic cost and the watch's first interval, in the launch's own words), and that
amount plans and launches it."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

from costsched import own_budget, service

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
# Hours of spot work: preemptions at the 95% quantile cost more than the expected ones.
SPOT = ("name: tiny\nrun: 'true'\nsteps: 200000\nthroughputs: {A10G: 20}\n"
        "constraints: {gpu_models: [A10G], markets: [spot], regions: [us-east-1], "
        "budget: 0.012}\n")
CHECKED = re.compile(
    r"costs \$(?P<cost>[\d.]+) \(.*\); launch checks a budget by the pessimistic cost "
    r"\$(?P<worst>[\d.]+) \(preemptions at the 95% quantile\) \+ \$(?P<ahead>[\d.]+) for "
    r"the first watch interval \(30 s at \$[\d.]+/h\): raise constraints\.budget in "
    r"(?P<file>\S+) to (?P<amount>[\d.]+)$")


def _plan(tmp_path: Path, text: str):  # noqa: ANN202
    path = tmp_path / "job.yaml"
    path.write_text(text)
    [plan] = service.plan(str(tmp_path / "empty.sqlite"), [path], at=NOW).jobs
    return plan, path


def test_a_budget_short_names_the_figures_its_amount_holds(tmp_path: Path) -> None:
    plan, path = _plan(tmp_path, SPOT)
    assert plan.best is None
    found = CHECKED.search(plan.reason)
    assert found is not None, plan.reason
    assert found["file"] == str(path)
    cost, worst, ahead, amount = (float(found[k]) for k in ("cost", "worst", "ahead", "amount"))
    assert worst > cost  # the two figures differ, and the line says which one is asked for
    short = re.search(r"budget \$0\.0120 is \$([\d.]+) short", plan.reason)
    assert short is not None and round(cost - 0.012, 4) == float(short[1]), plan.reason
    # the amount is the launch's rule of these very figures, as shown
    assert own_budget.enough_usd(0.0, worst, 0.0, ahead)[0] == amount
    assert worst + ahead <= amount


def test_the_amount_it_asks_for_plans_the_job(tmp_path: Path) -> None:
    plan, _ = _plan(tmp_path, SPOT)
    amount = plan.reason.rsplit(" to ", 1)[1]
    raised, _ = _plan(tmp_path, SPOT.replace("budget: 0.012", f"budget: {amount}"))
    assert raised.best is not None, raised.reason
