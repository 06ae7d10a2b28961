"""`plan` flags, where the figures stand, an offering whose pessimistic cost may not fit
the job's budget: the figure and the rule `launch` refuses by without --yes (preemptions at
the 95th percentile), in the table, its note and --json alike."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from costsched.cli.plan_figures import rows_said
from costsched.config import BudgetsConfig
from costsched.service.jobs.budget_launch import launch_fits
from costsched.store import PriceStore
from tests.costsched.service.test_budget_launch import AT, _job, priced  # noqa: F401

WHEN = AT.isoformat()


def _plan(cli, db_path: Path, job: Path, *more: str):  # noqa: ANN001, ANN202
    shown = cli("plan", job, "--db", db_path, "--at", WHEN, *more)
    assert shown.exit_code == 0, shown.output
    return shown


def test_an_offering_whose_pessimistic_cost_may_overrun_the_budget_is_flagged(
        tmp_path: Path, priced: PriceStore, cli, db_path: Path) -> None:  # noqa: F811, ANN001
    [fit] = launch_fits(priced, [_job(tmp_path, budget=1000)], BudgetsConfig(), AT)
    between = round((fit.expected_usd + fit.pessimistic_usd) / 2, 2)
    job = _job(tmp_path, budget=between)
    [risky] = launch_fits(priced, [job], BudgetsConfig(), AT)
    assert risky.fits and not risky.safe  # launch asks for --yes
    doc = json.loads(_plan(cli, db_path, job, "--json").stdout)
    [row] = doc["rankings"][0]["ranking"]
    assert row["pessimistic_cost"] == risky.pessimistic_usd  # the launch's own figure
    assert row["budget_may_not_fit"] is True
    text = _plan(cli, db_path, job).stdout
    [line] = [r for r in text.splitlines() if r.strip(" │").startswith("1 ")]
    assert f"{round(fit.expected_usd, 2):,.2f}!" in line.replace("$", "")
    [note] = " ".join(text.split()).split("! against")[1:]  # (wrapped at the terminal's width)
    assert f"its budget ${between:,.2f} as `costsched launch` checks it" in note
    assert (f"may not fit on #1, a launch there asks for --yes: ${risky.pessimistic_usd:,.2f}"
            f" + ${risky.ahead_usd:,.2f} on #1") in note and "refused" not in note


@pytest.mark.parametrize("constraints", [{"budget": 1000}, {}])
def test_an_offering_that_fits_even_pessimistically_is_not_flagged(
        tmp_path: Path, priced: PriceStore, cli, db_path: Path,  # noqa: F811, ANN001
        constraints: dict) -> None:
    job = _job(tmp_path, **constraints)
    doc = json.loads(_plan(cli, db_path, job, "--json").stdout)
    [row] = doc["rankings"][0]["ranking"]
    assert row["budget_may_not_fit"] is False
    text = _plan(cli, db_path, job).stdout
    assert not [n for n in text.splitlines() if n.strip().startswith("!")]
    assert row["budget_does_not_fit"] is False
    assert "!" not in "".join(r for r in text.splitlines() if r.strip(" │").startswith("1 "))


def test_a_budget_short_only_of_the_watchs_charge_ahead_is_flagged_as_launch_refuses_it(
        tmp_path: Path, priced: PriceStore, cli, db_path: Path,  # noqa: F811, ANN001
        monkeypatch: pytest.MonkeyPatch) -> None:
    # An hour's watch interval: the charge ahead is the offering's hour, $0.90.
    monkeypatch.setenv("COSTSCHED_DAEMON_WATCH_SECONDS", "3600")
    [fit] = launch_fits(priced, [_job(tmp_path, budget=1000)], BudgetsConfig(), AT,
                        interval_seconds=3600)
    assert fit.ahead_usd == pytest.approx(0.9)
    # Over the pessimistic cost, under it with the charge ahead.
    between = round(fit.pessimistic_usd + fit.ahead_usd / 2, 2)
    job = _job(tmp_path, budget=between)
    [risky] = launch_fits(priced, [job], BudgetsConfig(), AT, interval_seconds=3600)
    assert risky.pessimistic_usd < between < risky.pessimistic_usd + risky.ahead_usd
    assert risky.fits and not risky.safe
    doc = json.loads(_plan(cli, db_path, job, "--json").stdout)
    [row] = doc["rankings"][0]["ranking"]
    assert row["pessimistic_cost"] == risky.pessimistic_usd
    assert row["budget_may_not_fit"] is True
    text = _plan(cli, db_path, job).stdout
    [note] = " ".join(text.split()).split("! against")[1:]
    assert ("the watch's charge ahead for its first interval (3600 s at the row's $/h): "
            "may not fit on #1, a launch there asks for --yes: "
            f"${risky.pessimistic_usd:,.2f} + ${risky.ahead_usd:,.2f} on #1") in note
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    refused = cli("launch", job, "--launcher", "local", "--wait", "0")
    assert refused.exit_code != 0 and "may not fit; give --yes" in refused.output
    said = " ".join(refused.output.split())
    assert (f"pessimistic ${risky.pessimistic_usd:,.2f} (preemptions at the 95% quantile) + "
            f"${risky.ahead_usd:,.2f} for the first watch interval (3600 s at $0.9000/h) "
            f"against ${between:,.2f} left of its own budget") in said
    assert priced.jobs.list().empty


def test_rows_a_launch_refuses_say_so_with_the_budget_that_launches_them_together(
        tmp_path: Path, priced: PriceStore, cli, db_path: Path,  # noqa: F811, ANN001
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Three zones at one price: the same figures, named once for all three rows.
    priced.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone=zone, instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=0.9, effective_at=AT, source="test") for zone in ("us-east-1b",
                                                                       "us-east-1c")]))
    monkeypatch.setenv("COSTSCHED_DAEMON_WATCH_SECONDS", "3600")
    [fit] = launch_fits(priced, [_job(tmp_path, budget=1000)], BudgetsConfig(), AT,
                        interval_seconds=3600)
    # Over the expected cost, under it with the watch's charge ahead: a launch refuses it.
    short = round(fit.expected_usd + fit.ahead_usd / 2, 2)
    job = _job(tmp_path, budget=short)
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    refused = cli("launch", job, "--launcher", "local", "--wait", "0", "--yes")
    assert refused.exit_code != 0 and "does not fit" in refused.output
    fix = " ".join(refused.output.split()).rpartition("; ")[2]
    assert fix.startswith(f"raise constraints.budget in {job} to ")
    doc = json.loads(_plan(cli, db_path, job, "--json").stdout)
    rows = doc["rankings"][0]["ranking"]
    assert [r["budget_does_not_fit"] for r in rows] == [True] * 3
    text = _plan(cli, db_path, job).stdout
    [note] = " ".join(text.split()).split("! against")[1:]
    note = note.split(" baseline: ")[0]  # (the next note)
    assert note.endswith(
        "does not fit on #1-#3, a launch there is refused: "
        f"${fit.pessimistic_usd:,.2f} + ${fit.ahead_usd:,.2f} on #1-#3 ({fix})")
    assert "--yes" not in note and note.count("#1-#3") == 2


@pytest.mark.parametrize(("rows", "said"), [
    ([2], "on #2"), (list(range(1, 11)), "on #1-#10"), ([1, 3, 4], "on #1 and #3-#4"),
    ([1, 3, 5, 6, 7], "on #1, #3 and #5-#7")])
def test_rows_are_named_in_runs(rows: list[int], said: str) -> None:
    assert rows_said(rows) == said
