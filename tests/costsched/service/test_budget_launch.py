"""Budgets at launch: the expected cost and a pessimistic one (preemptions at the 95th
percentile) against what is left of each budget, in one line; refused when the expected
cost does not fit, or the pessimistic one without --yes (the CLI, a real SQLite store)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
import yaml

from costsched.config import BudgetsConfig
from costsched.model import InvalidInput
from costsched.own_budget import poisson_quantile
from costsched.service.jobs.budget_launch import launch_fits
from costsched.store import PriceStore
from tests.costsched.test_rest_cost import itemised

AT = pd.Timestamp("2026-01-01T00:00:00Z").to_pydatetime()


@pytest.fixture
def priced(db_path: Path) -> PriceStore:
    store = PriceStore(f"sqlite:///{db_path}")
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=0.9, effective_at=AT, source="test")]))
    return store


def _job(tmp_path: Path, **constraints: object) -> Path:
    """100 hours on a V100 at $0.90/h spot: $90 of work before preemptions."""
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump({
        "name": "long", "run": "true", "throughputs": {"V100": 1}, "steps": 360_000,
        "checkpoint": {"size_gb": 1, "interval_minutes": 60},
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"], **constraints}}))
    return path


def test_the_95th_percentile_of_a_poisson_count() -> None:
    assert poisson_quantile(0.0) == 0
    assert poisson_quantile(1.0) == 3  # P(N<=2) = 0.920, P(N<=3) = 0.981
    mean = 20.0
    k = poisson_quantile(mean)
    cdf = [sum(math.exp(-mean) * mean**i / math.factorial(i) for i in range(j + 1))
           for j in (k - 1, k)]
    assert cdf[0] < 0.95 <= cdf[1]


def test_the_pessimistic_cost_counts_more_preemptions_than_the_expected_one(
        tmp_path: Path, priced: PriceStore) -> None:
    [fit] = launch_fits(priced, [_job(tmp_path, budget=1000)], BudgetsConfig(), AT)
    assert 90 < fit.expected_usd < fit.pessimistic_usd
    assert fit.budget == "its own budget" and fit.left_usd == 1000 and fit.safe
    team = BudgetsConfig.model_validate({"named": {"vision": {"usd": 95}}})
    fits = launch_fits(priced, [_job(tmp_path, budget_name="vision")], team, AT)
    assert [(f.budget, f.left_usd) for f in fits] == [("budget vision", 95)]


def test_launch_refuses_what_may_not_fit_unless_told_yes(
        tmp_path: Path, priced: PriceStore, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    from launchers import make_launcher

    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    # As the local launcher checks it: its start left out (it boots no instance).
    [fit] = launch_fits(priced, [_job(tmp_path, budget=1000)], BudgetsConfig(), AT,
                        launcher=make_launcher("local"))
    between = round((fit.expected_usd + fit.pessimistic_usd) / 2, 2)
    job = _job(tmp_path, budget=between)
    refused = cli("launch", job, "--launcher", "local", "--wait", "0")
    assert refused.exit_code != 0
    assert fit.start_usd == 0
    said = refused.output
    assert said.startswith(f"error: job long: expected ${fit.expected_usd:,.2f} ("), said
    # its expected cost itemised: its work and what preemptions add, at its price
    total, parts = itemised(said)
    assert float(total) == round(fit.expected_usd, 2) and "to start it" not in parts
    assert said.endswith(
        "; its start left out: the local launcher boots no instance, and the job's setup is "
        f"in its billed hours), pessimistic ${fit.pessimistic_usd:,.2f} (preemptions at the "
        f"95% quantile) + ${fit.ahead_usd:,.2f} for the first watch interval (30 s at "
        f"$0.9000/h) against ${between:,.2f} left of its own budget: may not fit; give --yes "
        "to launch it anyway\n"), said
    assert priced.jobs.list().empty
    launched = cli("launch", job, "--launcher", "local", "--wait", "0", "--yes")
    assert launched.exit_code == 0, launched.output
    assert "may not fit" in launched.output and len(priced.jobs.list()) == 1


def test_the_budget_is_checked_on_the_offering_named_at_launch(
        tmp_path: Path, priced: PriceStore) -> None:
    """`launch --offering` runs the job where the user says: its budget line prices that
    offering, not the planner's first choice."""
    priced.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1b", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=2.7, effective_at=AT, source="test")]))
    job = _job(tmp_path, budget=1000)
    [best] = launch_fits(priced, [job], BudgetsConfig(), AT)
    [named] = launch_fits(priced, [job], BudgetsConfig(), AT,
                          offering="aws us-east-1b p3.2xlarge spot")
    assert named.expected_usd == pytest.approx(3 * best.expected_usd)
    with pytest.raises(InvalidInput, match="not a priced offering now"):
        launch_fits(priced, [job], BudgetsConfig(), AT, offering="aws us-west-2a p3.2xlarge spot")


def test_a_launch_refused_for_its_name_says_nothing_of_its_budget(
        tmp_path: Path, priced: PriceStore) -> None:
    """A job of that name runs: the refusal comes first, with no line of a plan before it."""
    job = _job(tmp_path, budget=1000)
    running = priced.jobs.create("long", {"spec": {}}, 10, at=AT)
    with pytest.raises(InvalidInput, match=rf"^job name 'long': job {running} of that name "
                                           r"is pending; stop it first or choose another"):
        launch_fits(priced, [job], BudgetsConfig(), AT)


def test_a_small_cost_keeps_its_digits_on_the_budget_line() -> None:
    from costsched.own_budget import LaunchFit

    line = LaunchFit("train", "its own budget", 0.0129, 0.0149, 0.014).line()
    assert "expected $0.0129, pessimistic $0.0149" in line
    # What is left of a budget reads at its line's precision: one line, one precision.
    assert "against $0.0140 left" in line and line.endswith("may not fit")  # (its line's)
    big = LaunchFit("train", "its own budget", 12.5, 14.0, 20.0).line()
    assert "expected $12.50, pessimistic $14.00" in big and "$20.00 left" in big


def test_what_is_left_of_a_budget_reads_as_the_budget_beside_small_costs() -> None:
    from costsched.own_budget import LaunchFit

    # What is left, at the line's precision beside small costs.
    line = LaunchFit("train", "its own budget", 0.0129, 0.0149, 5.0).line()
    assert "expected $0.0129, pessimistic $0.0149" in line
    assert "against $5.0000 left of its own budget: fits" in line  # (at its line's)
    # A cap less a spend of many digits: at the line's decimals, never rounded up to
    # read above a cost that does not fit.
    over = LaunchFit("train", "its own budget", 0.0129, 0.0149, 0.01289999).line()
    assert "against $0.01289999 left" in over and "does not fit" in over


def test_a_pessimistic_cost_above_the_expected_never_reads_as_it() -> None:
    """The trial's 'expected $3.00 ..., pessimistic $3.00': a 95% figure a little above
    the mean is written at the decimals at which it reads above it."""
    from costsched.own_budget import LaunchFit

    line = LaunchFit("budget", "its own budget", 2.9987, 3.0012, 0.5, start_usd=2.89).line()
    assert "expected $2.999 (" in line and "pessimistic $3.001 (" in line, line
    same = LaunchFit("train", "its own budget", 3.0, 3.0, 5.0).line()
    assert "expected $3.00, pessimistic $3.00 " in same  # (no preemption: one figure)
    # A difference of a millionth of the cost is no reason for eight decimals: the line
    # keeps its own precision (at most two decimals more), and the two read alike.
    close = LaunchFit("t", "its own budget", 0.01937425, 0.0193744, 3.0,
                      start_usd=0.0005871).line()
    assert "expected $0.0194 ($0.0006 of it to start it), pessimistic $0.0194 " in close


def test_a_bad_offering_is_refused_in_the_words_plan_writes_offerings(
        tmp_path: Path, priced: PriceStore) -> None:
    """One spelling of an offering: the refusal asks for it as `plan` and `prices show`
    write it ('aws us-east-1b p3.2xlarge spot'), names the close ones, and the colon form
    is accepted too."""
    priced.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1b", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=2.7, effective_at=AT, source="test")]))
    job = _job(tmp_path, budget=1000)
    with pytest.raises(InvalidInput) as refused:
        launch_fits(priced, [job], BudgetsConfig(), AT, offering="aws us-east-9b p3.2xlarge spot")
    said = str(refused.value)
    assert said.startswith("offering 'aws us-east-9b p3.2xlarge spot': not a priced offering "
                           "now; expected cloud, zone or region, instance type and market as "
                           "`costsched plan` names them ('"), said
    assert "did you mean 'aws us-east-1b p3.2xlarge spot'" in said
    assert "cloud:zone-or-region" not in said
    [colon] = launch_fits(priced, [job], BudgetsConfig(), AT,
                          offering="aws:us-east-1b:p3.2xlarge:spot")
    [label] = launch_fits(priced, [job], BudgetsConfig(), AT,
                          offering="aws us-east-1b p3.2xlarge spot")
    assert colon.expected_usd == label.expected_usd
