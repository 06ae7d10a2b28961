"""How far the online policies stay above the hindsight oracle, per row of docs/backtests.md's
backtest table (6 models x 2 home regions, 30 daily starts from 2020-02-10, 4-day jobs
sized on a V100, migration costs charged with the default overheads).

The gap of a row is the policy's cost summed over the starts / the oracle's - 1. Prints a
markdown table of gaps and each row's USD, their mean and maximum per policy against the
targets (mean 5%, no row above 10%), the same for the starts before and after every cloud
of the trace is first priced (the recorded Azure log begins on 2020-02-24: before it, the
oracle foresees its offerings' arrival), the policies' migrations and their time per table;
asserts nothing.

The USD gap of the starts before every cloud is priced is then split where it arises: after
that time (each run against the oracle for the rest of its job from where the run was
then: what the policy loses with every offering in sight) and before it; and, of the runs
the policy finished before it, how much an oracle over the offerings priced at their start
also saves (hindsight of those prices) and how much only the full oracle does (its
foresight of the offerings priced later).

    .venv/bin/python bench/oracle_gap.py [--db prices.sqlite] [--policies dynamic,...]

`--db`: a store holding the recorded AWS and Azure logs (imported into it if it is a new
file); default: a fresh temporary store.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from costsched.backtest import (
    PUBLISHED_MODELS,
    BacktestConfig,
    BacktestJob,
    Oracle,
    PriceTrace,
    jobs_for_models,
    make_replay_policy,
    regular_starts,
    run_backtest,
    simulate,
    throughputs,
)
from costsched.backtest.accounting import Run
from costsched.backtest.engine import past_prices
from costsched.policies import JobState
from costsched.store import PriceStore
from costsched.throughput import ThroughputTable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.shared_data
from tests.shared_data import shared_data  # noqa: E402

DISPA = shared_data() / "dispa2020"
FIRST_START = "2020-02-10"
TARGET_MEAN, TARGET_MAX = 0.05, 0.10


def load_trace(db: Path | None) -> PriceTrace:
    from price_collectors import recorded

    with tempfile.TemporaryDirectory() as tmp:
        path = db or Path(tmp) / "prices.sqlite"
        fresh = not path.exists()
        store = PriceStore(str(path))
        if fresh:
            parsed = recorded.read_paths([DISPA / "aws" / "cost", DISPA / "azure"])
            store.ingest(parsed.observations())
        trace = PriceTrace.from_store(store, os=["linux", "linux-vpc"])
        store.dispose()
    return trace


def totals(results: pd.DataFrame) -> pd.DataFrame:
    """Rows (model, region), a column per policy: USD summed over the starts."""
    ok = results[results["cost_usd"].notna()]
    return ok.pivot_table(index=["model", "region"], columns="policy", values="cost_usd",
                          aggfunc="sum", sort=False)


def gaps(results: pd.DataFrame) -> pd.DataFrame:
    """Rows (model, region), a column per policy: cost over the oracle's - 1."""
    total = totals(results)
    return total.drop(columns="oracle").div(total["oracle"], axis=0) - 1


def every_cloud_priced(trace: PriceTrace) -> pd.Timestamp:
    """The first instant every cloud of the trace has a price: before it, the oracle knows
    that a cloud's offerings are to appear and an online policy cannot."""
    priced = ~np.isnan(trace.prices)
    first = np.where(priced.any(axis=0), trace.times[priced.argmax(axis=0)], np.inf)
    by_cloud = pd.Series(first, index=trace.offerings["cloud"].to_numpy()).groupby(level=0)
    return pd.Timestamp(by_cloud.min().max(), unit="s", tz="UTC")


def before_and_after(trace: PriceTrace, jobs: list[BacktestJob], starts: list,
                     name: str, config: BacktestConfig, table: ThroughputTable,
                     covered: pd.Timestamp) -> pd.DataFrame:
    """A row per run of policy `name` from a start before `covered`: its USD (`usd`), the
    USD of its periods from its first decision at or after `covered` (`after`), the
    oracle's USD for the rest of the job from where the run was then (`oracle_after`; both
    NaN for a run finished before), and the oracle's over the offerings priced at the start
    only (`oracle_start`)."""
    cut = covered.timestamp()
    policy = make_replay_policy(name, config.margin, config.period_hours)
    period_s = int(round(config.period_hours * 3600))
    typical = past_prices(trace)
    rows = []
    for bj in jobs:
        job = bj.job if bj.job.checkpoint_gb > 0 else replace(
            bj.job, checkpoint_gb=config.checkpoint_gb)
        rate = throughputs(trace, table, job.model)
        for start in starts:
            t0 = int(pd.Timestamp(start).timestamp())
            if t0 >= cut:
                continue
            run = Run(trace, rate, job.steps, t0, period_s, config.overheads,
                      job.checkpoint_gb, job.checkpoint_hours)
            state = JobState(job, bj.region, job.steps, None, config.overheads)
            steps: list[tuple[int, int, float, int]] = []
            usd = simulate(policy, run, state, typical=typical, margin=config.margin,
                           on_step=lambda *step, into=steps: into.append(step))["cost_usd"]
            after = oracle_after = np.nan
            later = [k for k, (t, *_) in enumerate(steps) if t >= cut]
            if later:
                k = later[0]
                t, prev, left, _ = steps[k]
                after = sum(run.advance_one(i, p, new, rest).usd
                            for i, (_, p, rest, new) in enumerate(steps) if i >= k)
                rest_run = Run(trace, rate, left, t, period_s, config.overheads,
                               job.checkpoint_gb, job.checkpoint_hours)
                placed = JobState(job, bj.region, left, trace.keys[prev], config.overheads)
                oracle_after = simulate(Oracle(), rest_run, placed)["cost_usd"]
            priced = ~np.isnan(trace.price_at(t0))
            oracle_start = simulate(Oracle(), replace_trace(run, trace.subset(priced)),
                                    state)["cost_usd"]
            rows.append({"model": job.model, "region": bj.region,
                         "start": pd.Timestamp(start), "usd": usd,
                         "after": after, "oracle_after": oracle_after,
                         "oracle_start": oracle_start})
    return pd.DataFrame(rows)


def replace_trace(run: Run, trace: PriceTrace) -> Run:
    """`run` over another trace of the same times (its offerings' throughputs kept)."""
    keep = np.array([run.trace.rows[k] for k in trace.keys], dtype=int)
    return Run(trace, run.steps_per_second[keep], run.steps, run.start, run.period_s,
               run.overheads, run.checkpoint_gb, run.checkpoint_hours)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument("--policies", default="dynamic,dynamic-aware")
    parser.add_argument("--period-hours", type=float, default=24.0)
    parser.add_argument("--margin", type=float, default=BacktestConfig.margin)
    args = parser.parse_args()
    names = [p.strip() for p in args.policies.split(",") if p.strip()]

    trace = load_trace(args.db)
    table = ThroughputTable()
    jobs = jobs_for_models(PUBLISHED_MODELS, 4, ["us-east-1", "us-west-2"], table)
    starts = regular_starts(pd.Timestamp(FIRST_START, tz="UTC").to_pydatetime(), 30)
    config = BacktestConfig(period_hours=args.period_hours, margin=args.margin)
    frames, seconds = [], {}
    for name in [*names, "oracle"]:
        t, cpu = time.perf_counter(), time.process_time()
        frames.append(run_backtest(trace, jobs, starts, [name], config, table))
        seconds[name] = (time.perf_counter() - t, time.process_time() - cpu)
    results = pd.concat(frames, ignore_index=True)
    gap = gaps(results)[names]
    usd = totals(results)[[*names, "oracle"]]

    print("| model | region | " + " | ".join(names) + " | USD: " + " / ".join([*names, "oracle"])
          + " |")
    print("|---|---|" + "---|" * (len(names) + 1))
    for (model, region), row in gap.iterrows():
        spent = " / ".join(f"{v:,.0f}" for v in usd.loc[(model, region)])
        print(f"| {model} | {region} | " + " | ".join(f"{v:+.1%}" for v in row)
              + f" | {spent} |")
    print("| mean | | " + " | ".join(f"{v:+.1%}" for v in gap.mean()) + " | |")
    print("| max | | " + " | ".join(f"{v:+.1%}" for v in gap.max()) + " | |")
    covered = every_cloud_priced(trace)
    for part, rows in (("starts before every cloud is priced", results["start"] < covered),
                       ("starts once every cloud is priced", results["start"] >= covered)):
        if not rows.any():
            continue
        split = gaps(results[rows])[names]
        print(f"{part} ({covered:%Y-%m-%d %H:%M} UTC), {results[rows]['start'].nunique()} "
              "starts: " + ", ".join(f"{n} mean {split[n].mean():+.1%} max {split[n].max():+.1%}"
                                      for n in names))
    early = results[(results["start"] < covered) & (results["policy"] == "oracle")]
    oracle_usd = early.set_index(["model", "region", "start"])["cost_usd"]
    for name in names if len(early) else []:
        split = before_and_after(trace, jobs, starts, name, config, table, covered)
        split = split.set_index(["model", "region", "start"])
        split["oracle"] = oracle_usd.reindex(split.index).to_numpy()
        gap_usd = float((split["usd"] - split["oracle"]).sum())
        lost_after = float((split["after"] - split["oracle_after"]).sum())
        done = split[split["after"].isna()]
        print(f"{name}: of the ${gap_usd:,.0f} above the oracle in those starts, "
              f"${lost_after:,.0f} after {covered:%Y-%m-%d %H:%M} UTC (against the oracle "
              f"for the rest of each job from where it ran then) and "
              f"${gap_usd - lost_after:,.0f} before; of the {len(done)} runs done before, "
              f"${(done['usd'] - done['oracle']).sum():,.0f}: "
              f"${(done['usd'] - done['oracle_start']).sum():,.0f} against an oracle over "
              "the offerings priced at their start, "
              f"${(done['oracle_start'] - done['oracle']).sum():,.0f} the oracle's "
              "foresight of the offerings priced later")
    migrations = results.groupby("policy")["migrations"].sum()
    for name in [*names, "oracle"]:
        wall, cpu = seconds[name]
        line = (f"{name:>16}: {wall:6.2f} s per table ({cpu:.2f} s CPU), "
                f"{migrations[name]:4d} migrations")
        if name in gap:
            line += (f", mean gap {gap[name].mean():+.1%} ({gap[name].mean() / TARGET_MEAN:.2f}x"
                     f" of target), max {gap[name].max():+.1%} "
                     f"({gap[name].max() / TARGET_MAX:.2f}x of target)")
        print(line)


if __name__ == "__main__":
    main()
