"""The replay engine: identical jobs are replayed once and counted, and the report weighs
each replay by the jobs it stands for."""

from __future__ import annotations

from dataclasses import replace

import pytest

from costsched.backtest import (
    RESULT_COLUMNS,
    BacktestConfig,
    per_run,
    relative_costs,
    run_backtest,
    summarize,
)
from costsched.optimize.decision import Overheads
from costsched.throughput import ThroughputTable
from tests.costsched.backtest.handmade import (
    AZ_V100,
    DAY,
    T0,
    V100_A,
    V100_B,
    V100X4_A,
    WEST_V100,
    job,
    one,
    trace,
)

TABLE = ThroughputTable()
RESNET, A3C = "ResNet-50 (batch size 128)", "A3C"
TRACE = trace([(V100_A, 1.0, 0), (V100_B, 0.9, 0), (V100_B, 3.0, 1), (WEST_V100, 0.7, 0),
               (V100X4_A, 2.0, 0)])
STARTS = [T0.to_pydatetime(), (T0 + DAY / 4).to_pydatetime()]
POLICIES = ["static", "cheapest-hourly", "dynamic"]


def replay(jobs, progress=None):  # noqa: ANN001, ANN201
    return run_backtest(TRACE, jobs, STARTS, POLICIES, BacktestConfig(
        overheads=Overheads.free()), TABLE, progress=progress)


def sweep(n: int, model: str = RESNET) -> list:
    first = job(model, 2, TABLE)
    return [replace(first, job=replace(first.job, name=f"sweep-{i}")) for i in range(1, n + 1)]


def test_identical_jobs_replay_once_and_are_counted() -> None:
    done: list[int] = []
    jobs = [*sweep(5), job(A3C, 2, TABLE)]
    frame = replay(jobs, progress=done.append)
    assert list(frame.columns) == RESULT_COLUMNS
    assert len(frame) == 2 * len(STARTS) * len(POLICIES)
    counts = frame.groupby("job")["jobs"].unique().to_dict()
    assert {k: v.tolist() for k, v in counts.items()} == {"sweep-1": [5], f"{A3C}@us-east-1": [1]}
    assert sum(done) == len(jobs) * len(STARTS) * len(POLICIES)
    assert (frame["preemptions"] == 0).all()
    # The one replay of the group is the same as replaying one of its jobs alone.
    alone = replay(sweep(1))
    mine = frame[frame["job"] == "sweep-1"].reset_index(drop=True)
    assert mine["cost_usd"].tolist() == pytest.approx(alone["cost_usd"].tolist())


def test_jobs_that_differ_in_what_a_replay_reads_are_not_grouped() -> None:
    a, b = sweep(2)
    b = replace(b, job=replace(b.job, checkpoint_gb=9.0))
    c = replace(a, region="us-west-2", job=replace(a.job, name="c"))
    frame = replay([a, b, c])
    assert set(frame["job"]) == {"sweep-1", "sweep-2", "c"} and (frame["jobs"] == 1).all()


def test_summaries_weigh_each_replay_by_its_jobs() -> None:
    # A group of three and a shorter job of the same model and region: weights matter.
    grouped = replay([*sweep(3), job(RESNET, 1, TABLE)])
    # The same rows fanned out: one per job, each job named apart.
    fanned = grouped.loc[grouped.index.repeat(grouped["jobs"])].reset_index(drop=True)
    fanned["job"] = fanned["job"] + "#" + fanned.groupby(["job", "start", "policy"]).cumcount(
        ).astype(str)
    fanned["jobs"] = 1
    assert len(fanned) == 4 * len(STARTS) * len(POLICIES)
    a = summarize(grouped).set_index(["model", "policy"])
    b = summarize(fanned).set_index(["model", "policy"])
    assert a["runs"].to_dict() == b["runs"].to_dict() == {k: 4 * len(STARTS) for k in a.index}
    unweighted = summarize(grouped.assign(jobs=1)).set_index(["model", "policy"])
    assert unweighted.loc[(RESNET, "dynamic"), "reduction"] != pytest.approx(
        a.loc[(RESNET, "dynamic"), "reduction"])
    for column in ("reduction", "reduction_vs_cheapest_hourly", "migrations"):
        assert a[column].to_dict() == pytest.approx(b[column].to_dict())


def test_reductions_against_each_baseline() -> None:
    frame = replay([job(RESNET, 2, TABLE)])
    summary = summarize(frame).set_index("policy")
    cost = frame.groupby("policy")["cost_usd"].sum()
    assert summary.loc["dynamic", "reduction"] == pytest.approx(cost["static"] / cost["dynamic"])
    assert summary.loc["dynamic", "reduction_vs_cheapest_hourly"] == pytest.approx(
        cost["cheapest-hourly"] / cost["dynamic"])
    assert summary.loc["static", "saving_pct_vs_cheapest_hourly"] == pytest.approx(
        100 * (1 - cost["static"] / cost["cheapest-hourly"]))
    # cheapest-hourly found the cheaper V100 in us-west-2 that static cannot use.
    assert summary.loc["cheapest-hourly", "reduction"] > 1
    assert relative_costs(frame).set_index("policy")["reduction"].to_dict() == pytest.approx(
        summary["reduction"].to_dict())
    runs = per_run(frame)
    by_run = runs.set_index(["start", "policy"])
    base = frame.set_index(["start", "policy"])["cost_usd"]
    start = frame["start"].iloc[0]
    assert by_run.loc[(start, "dynamic"), "reduction_vs_cheapest_hourly"] == pytest.approx(
        base[(start, "cheapest-hourly")] / base[(start, "dynamic")])


@pytest.mark.parametrize("policy", ["dynamic", "dynamic-aware", "oracle"])
def test_a_running_job_moves_to_a_cloud_first_priced_after_it_started(policy: str) -> None:
    # Azure has no price at the start; once it has, the replayed decider sees it and moves
    # the job there at the first decision (the move charged).
    tr = trace([(V100_A, 3.0, 0), (AZ_V100, 0.5, 1)])
    row = one(tr, job(A3C, 3, TABLE), policy, Overheads(), TABLE)
    assert row["first_offering"].startswith("aws:")
    assert row["last_offering"].startswith("azure:")
    assert row["migrations"] == 1
    assert 3.0 * 24 + 0.5 * 48 < row["cost_usd"] < 3.0 * 24 + 0.5 * 49
