"""The cost report's figures, checked by hand against the scenario (see scenario.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from costsched.model import InvalidInput
from costsched.prices import listed_on_demand
from costsched.report import Report, build
from costsched.store import PriceStore
from tests.costsched.report.scenario import BETA, NOW, at, fill

EAST_WEST_PER_GB = 0.02  # AWS between its regions (costsched.clouds.aws)


@pytest.fixture()
def filled(any_store: PriceStore) -> tuple[PriceStore, dict[str, int]]:
    return any_store, fill(any_store)


def _row(frame: pd.DataFrame, **match: object) -> pd.Series:
    mask = pd.Series(True, index=frame.index)
    for column, value in match.items():
        mask &= frame[column] == value
    assert mask.sum() == 1, f"{match}: {mask.sum()} rows in\n{frame}"
    return frame[mask].iloc[0]


def _gcp_on_demand() -> float:
    listed = listed_on_demand()
    row = listed[(listed["region"] == "us-central1") & (listed["instance_type"] == "a2-highgpu-1g")]
    return float(row["usd_per_hour"].iloc[0])


def test_spend_per_job_with_both_savings(filled) -> None:
    store, ids = filled
    report = build(store, now=at(NOW))
    assert list(report.jobs["name"]) == ["alpha", BETA, "gamma"]  # "idle" never ran
    alpha = _row(report.jobs, name="alpha")
    # EAST 0-2 at 1.0 and 2-4.5 at 1.5; WEST 3.5-6 at 0.5
    assert alpha["compute_usd"] == pytest.approx(2.0 + 3.75 + 1.25)
    assert alpha["billed_hours"] == pytest.approx(7.0)
    assert alpha["egress_usd"] == pytest.approx(10 * EAST_WEST_PER_GB)
    assert alpha["usd"] == pytest.approx(7.2)
    assert alpha["on_demand_usd"] == pytest.approx(4.5 * 3.0 + 2.5 * 2.5)
    assert alpha["saved_vs_on_demand_usd"] == pytest.approx(19.75 - 7.2)
    # 7 h x 2 steps/s on V100s: 7 h on its launch-time choice (EAST, 1 V100) from 0,
    # charged at EAST's own stored prices: 0-2 at 1.0, 2-7 at 1.5 (not 7 h at 1.0, the
    # launch price frozen).
    assert alpha["launch_choice_usd"] == pytest.approx(2.0 + 5 * 1.5)
    assert alpha["saved_vs_launch_choice_usd"] == pytest.approx(9.5 - 7.2)

    beta = _row(report.jobs, job_id=ids["beta"])
    assert beta["compute_usd"] == pytest.approx(0.5 + 0.5 + 6.0)
    assert beta["egress_usd"] == pytest.approx(5 * EAST_WEST_PER_GB)
    assert beta["on_demand_usd"] == pytest.approx(1 * 2.5 + 4.5 * 3.0)
    assert beta["launch_choice_usd"] == pytest.approx(5.5 * 0.5)  # us-west-2, where it started

    gamma = _row(report.jobs, name="gamma")
    assert gamma["compute_usd"] == pytest.approx(2.0)
    assert gamma["on_demand_usd"] == pytest.approx(_gcp_on_demand())
    # Never moved: its launch-time choice is what it ran on, at the same prices.
    assert gamma["launch_choice_usd"] == pytest.approx(gamma["compute_usd"])
    assert report.totals["usd"] == pytest.approx(7.2 + 7.1 + 2.0)


def test_spend_per_cloud_and_per_day_split_at_midnight(filled) -> None:
    store, ids = filled
    report = build(store, now=at(NOW))
    aws = _row(report.clouds, cloud="aws")
    assert (aws["billed_hours"], aws["compute_usd"]) == (pytest.approx(12.5), pytest.approx(14.0))
    assert aws["egress_usd"] == pytest.approx(0.3)
    assert _row(report.clouds, cloud="gcp")["usd"] == pytest.approx(2.0)

    june1, june2 = pd.Timestamp("2024-06-01", tz="UTC"), pd.Timestamp("2024-06-02", tz="UTC")
    days = report.days
    alpha1 = _row(days, day=june1, job_id=ids["alpha"])
    assert alpha1["compute_usd"] == pytest.approx(2.0 + 2 * 1.5 + 0.5 * 0.5)
    assert alpha1["billed_hours"] == pytest.approx(4.5)
    assert alpha1["egress_usd"] == pytest.approx(0.2)  # moved at 23:30
    alpha2 = _row(days, day=june2, job_id=ids["alpha"])
    assert alpha2["compute_usd"] == pytest.approx(0.5 * 1.5 + 2 * 0.5)
    assert _row(days, day=june1, job_id=ids["beta"])["usd"] == pytest.approx(4.0 + 0.1)
    assert _row(days, day=june2, job_id=ids["beta"])["usd"] == pytest.approx(2 * 1.5)
    assert _row(days, day=june2, cloud="gcp")["usd"] == pytest.approx(2.0)
    assert days["compute_usd"].sum() == pytest.approx(report.jobs["compute_usd"].sum())


def test_moves_with_their_idle_and_egress_costs(filled) -> None:
    store, ids = filled
    report = build(store, now=at(NOW))
    assert list(report.moves["kind"]) == ["migration", "recovery"]  # launches are not moves
    migration = _row(report.moves, kind="migration")
    # the source from the stop request (3) to its end (4.5) at 1.5; the target 3.5-4 at 0.5
    assert migration["idle_usd"] == pytest.approx(1.5 * 1.5 + 0.5 * 0.5)
    assert migration["egress_usd"] == pytest.approx(0.2)
    assert migration["usd"] == pytest.approx(2.7)
    assert migration["source"] == "aws us-east-1a p3.2xlarge spot"
    assert migration["target"] == "aws us-west-2b p3.2xlarge spot"
    recovery = _row(report.moves, kind="recovery")
    assert recovery["job_id"] == ids["beta"]
    assert recovery["idle_usd"] == pytest.approx(0.5 * 1.0)  # target 1.5-2 at 1.0
    assert recovery["egress_usd"] == pytest.approx(0.1)
    assert list(report.egress["usd"]) == pytest.approx([0.2, 0.1])
    assert list(report.egress["gb"]) == [10.0, 5.0]


def test_jobs_near_and_over_their_budget(filled) -> None:
    store, ids = filled
    budgets = build(store, now=at(NOW)).budgets.set_index("job_id")
    assert sorted(budgets.index) == sorted([ids["alpha"], ids["beta"]])
    assert budgets.loc[ids["alpha"], "used"] == pytest.approx(7.2 / 8.0)
    assert budgets.loc[ids["alpha"], "status"] == "near"
    assert budgets.loc[ids["beta"], "spent_usd"] == pytest.approx(7.1)
    assert budgets.loc[ids["beta"], "status"] == "over"


def test_a_job_stopped_at_its_budget_is_listed_however_little_it_spent(filled) -> None:
    """The cap charges ahead for the next watch interval (longer after a slow pass), so a
    job can be stopped well short of 80% of its budget: the table still says why it ended."""
    store, ids = filled
    early = build(store, until=at(2), now=at(NOW))
    assert early.budgets.empty  # by hour 2 neither is near its budget
    said = ("stopped at its own budget: $2.00 spent + $6.50 for the next watch interval "
            "would pass the budget of $8")
    store.jobs.note(ids["alpha"], "budget", said, at=at(2))
    store.jobs.transition(ids["alpha"], "stopped", at=at(2), detail=said)  # as a cap stops
    [row] = build(store, until=at(2), now=at(NOW)).budgets.itertuples()
    assert (row.job_id, row.status) == (ids["alpha"], "stopped at its budget")
    assert row.used == pytest.approx(2.0 / 8.0)


def test_a_job_started_again_after_its_cap_is_not_said_stopped_at_its_budget(filled) -> None:
    """Raised and started again, running or run to its end: its budget's status is what it
    is now, not the stop it had (the trial: 'stopped at its budget' after it succeeded)."""
    store, ids = filled
    said = "stopped at budget job {} (alpha): $2.00 spent".format(ids["alpha"])  # older words
    store.jobs.note(ids["alpha"], "budget", said, at=at(2))
    store.jobs.transition(ids["alpha"], "stopped", at=at(2), detail=said)
    assert build(store, until=at(2), now=at(NOW)).budgets.status.tolist() == [
        "stopped at its budget"]
    store.jobs.transition(ids["alpha"], "pending", at=at(2), detail="started again")
    store.jobs.transition(ids["alpha"], "running", at=at(2))
    assert build(store, until=at(2), now=at(NOW)).budgets.empty
    store.jobs.transition(ids["alpha"], "succeeded", at=at(2))
    assert build(store, until=at(2), now=at(NOW)).budgets.empty


def test_a_period_counts_only_what_happened_in_it(filled) -> None:
    store, ids = filled
    report = build(store, since=at(4), now=at(NOW))  # 2024-06-02 00:00 onwards
    alpha = _row(report.jobs, name="alpha")
    assert alpha["compute_usd"] == pytest.approx(0.5 * 1.5 + 2 * 0.5)
    assert alpha["egress_usd"] == 0.0
    assert alpha["on_demand_usd"] == pytest.approx(0.5 * 3.0 + 2 * 2.5)
    # 2.5 h of work on EAST from the period's start, at EAST's price then (1.5).
    assert alpha["launch_choice_usd"] == pytest.approx(2.5 * 1.5)
    assert report.moves.empty and report.egress.empty
    assert len(report.budgets) == 2  # budgets count the whole life

    early = build(store, until=at(2), now=at(NOW))
    assert _row(early.jobs, name="alpha")["usd"] == pytest.approx(2.0)
    assert _row(early.jobs, name=BETA)["usd"] == pytest.approx(0.5 + 0.5 + 0.1)
    assert list(early.moves["kind"]) == ["recovery"]
    assert early.budgets.empty  # by hour 2 neither is near its budget
    assert "gamma" not in set(early.jobs["name"])


def test_one_job_by_name_or_id(filled) -> None:
    store, ids = filled
    assert list(build(store, job="alpha", now=at(NOW)).jobs["job_id"]) == [ids["alpha"]]
    only_beta = build(store, job=str(ids["beta"]), now=at(NOW))
    assert list(only_beta.clouds["cloud"]) == ["aws"]
    assert list(only_beta.moves["kind"]) == ["recovery"]


def test_bad_input_is_one_line(store: PriceStore) -> None:
    fill(store)
    with pytest.raises(InvalidInput, match="job 'nope': no job"):
        build(store, job="nope")
    with pytest.raises(InvalidInput, match="since 2024-06-02T00:00Z: expected a time before"):
        build(store, since=at(4), until=at(2))
    with pytest.raises(InvalidInput, match="since 'yesterday-ish'"):
        build(store, since="yesterday-ish")


def test_an_empty_store_gives_empty_tables(store: PriceStore) -> None:
    report = build(store)
    assert isinstance(report, Report)
    assert report.jobs.empty and report.days.empty and report.moves.empty
    assert report.totals["usd"] == 0.0
