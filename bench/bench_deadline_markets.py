"""Deadline policies across markets: leave-one-set-out over every trace set.

Every availability recording at hand is a trace set (those of one recording are held out
together: their markets are the same days), each judged in the job shapes below, every
zone in turn as the home zone, against the hindsight optimum of the same runs and uniform
progress (Can't Be Late's rule, one zone):

- spot-traces 2023-02 (../shared/data/spot-traces, availability, 9 AWS V100 zones, 45
  days, 195-s ticks): the deadline table (48-hour jobs due in 52 or 70 hours, 3- or
  12-minute restarts, 30-minute checkpoints of 1 GB), 20 starts, on the 5 zones
  bench_deadline tunes on and on the 4 others; reference prices (on-demand $3.06/h, spot
  30% of it);
- skynomad-v100 (../shared/data/skynomad-v100, the same recording with per-tick spot
  prices): SkyNomad's setting (40-hour job due in 60, 12-minute restarts, 15-s checkpoints
  of 50 GB) on its 5 published windows and 3 zones, against the exact optimum;
- spot-traces 2023-04 (preemption recording, 4 zones, 7 days, read at 195-s ticks) and
  16-node 2023-08 (bench/data, one instance: where at least one of 16 ran; 3 zones, 11
  days, 5-minute ticks): the deadline table and SkyNomad's job shape, reference prices;
- dispa2020 gcp 2020-03 (../shared/data/dispa2020, GCP probe logs, 1xV100 in 2 zones,
  1xP100 and 1xK80 in 3, 69 hours, read at 1-minute ticks): 24-hour jobs due in 30 or 48
  hours, 3- or 12-minute restarts, 30-minute checkpoints; on-demand $3.06/h and spot 30% of
  it (the recording has no prices; only their ratio matters here);
- synthetic (regime changes; no recording behind them): 21 days of 3 zones in 3 regions,
  spells and gaps log-normal (medians 2, 1 and 3 hours with spot, 0.5, 1 and 0.5 hours
  without, log-sigma 1.2), then: the most reliable zone turns scarce half-way (spells x0.2,
  gaps x4); spot prices rising in steps from 23% to 57% of on-demand, the path of GCP's
  a3-highgpu-1g spot price in us-central1 from 2025-12-04 to 2026-07-30
  (../shared/data/gcp-prices-2026, 239 days put on the 21, a step every day or two of the
  trace); shortages shared by the zones every 12 hours on average (each zone in 80%).
  Each in the deadline table and SkyNomad's shape.

spot-hedge's constants are chosen per held-out recording from a grid, on the other
recordings' sets only (cold start: no market history before a run), then judged on the
held-out sets; its default constants are those chosen with the 2023-02 recording held
out (the recording of SkyNomad's windows). Prints the candidates' scores per set, the
leave-one-set-out table (cost over the optimum and over uniform progress, mean over the
settings and worst window) beside the fixed policies, with no market history and with the
whole recording before each run, and the time taken.

    .venv/bin/python bench/bench_deadline_markets.py [--sets NAME,...] [--grid small]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from itertools import product
from pathlib import Path

import numpy as np
import pandas as pd

from costsched.backtest.deadline import AvailabilityTrace
from costsched.backtest.deadline.crossval import (
    Case,
    Scorer,
    TraceSet,
    leave_one_set_out,
    score_sets,
)
from costsched.backtest.deadline.synthetic import SpotModel, Variation, stepped_prices
from costsched.policies.deadline import SpotAnywhere, SpotRisk
from costsched.policies.deadline.base import MarketPrior
from costsched.policies.deadline.hedge import HedgeConstants, SpotHedge
from price_collectors.availability import read_paths

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.shared_data
from tests.shared_data import shared_data  # noqa: E402

DATA = shared_data()
FEB = DATA / "spot-traces" / "availability" / "1-node" / "aws-02-15-2023"
APRIL = DATA / "spot-traces" / "preemption" / "1-node" / "aws-04-22-2023"
AUGUST = ROOT / "bench" / "data" / "spot-traces" / "16-node" / "aws-08-27-2023"
SKYNOMAD = DATA / "skynomad-v100"
GCP = DATA / "dispa2020" / "gcp" / "availability"
PRICES_2026 = DATA / "gcp-prices-2026" / "prices.csv"
TICK = 195
ON_DEMAND, SPOT_SHARE = 3.06, 0.30
TUNE_ZONES = ["us-east-1a", "us-east-1d", "us-east-2a", "us-west-2a", "us-west-2c"]
OTHER_ZONES = ["us-east-1c", "us-east-1f", "us-east-2b", "us-west-2b"]
SKY_ZONES = ["us-east-1c", "us-east-2b", "us-west-2a"]
TABLE = dict(job_hours=48.0, deadlines=(52.0, 70.0), restarts=(3.0, 12.0),
             checkpoint_minutes=30.0)
SKY_JOB = dict(job_hours=39.93888888888889, deadlines=(59.90833333333333,), restarts=(12.0,),
               checkpoint_minutes=0.25, checkpoint_gb=50.0)
GCP_JOB = dict(job_hours=24.0, deadlines=(30.0, 48.0), restarts=(3.0, 12.0),
               checkpoint_minutes=30.0)
STARTS = 20
SYNTHETIC_ZONES = ("us-east-1a", "us-east-2a", "us-west-2a")
HELD_FOR_DEFAULT = "aws-2023-02"
# The grid of spot-hedge's constants searched per fold.
PRIORS = {"prior 50%/1h": MarketPrior(),
          "prior 90%/4h": MarketPrior(0.9, 14400.0, 3600.0, 14400.0),
          "prior 95%/8h": MarketPrior(0.95, 28800.0, 3600.0, 28800.0)}
SCARCITY = (0.25, 0.5)
HEDGE_ABOVE = (0.9, 0.97, 1.0)  # 1.0: never on-demand instead of spot now


def spot_trace(folder: Path, zones: list[str], start: str) -> AvailabilityTrace:
    """JSON spot traces of `zones` read at TICK-second ticks (a tick takes the state at its
    start), on their common span, at the reference prices."""
    rows = []
    for zone in zones:
        doc = json.loads((folder / f"{zone}_v100_1.json").read_text())
        gap = int(doc["metadata"]["gap_seconds"])
        data = np.asarray(doc["data"]) > 0
        ticks = len(data) * gap // TICK
        rows.append(data[np.arange(ticks) * TICK // gap])
    n = min(len(r) for r in rows)
    return AvailabilityTrace.from_arrays(np.array([r[:n] for r in rows]), zones, TICK,
                                         start=start)


def skynomad_case() -> Case:
    prices = json.loads((SKYNOMAD / "v100_spot_prices.json").read_text())
    ticks = len(prices[f"{SKY_ZONES[0]}_v100_1"])
    first = pd.read_csv(SKYNOMAD / "availability" / f"{SKY_ZONES[0]}_v100_1.csv", nrows=1)
    available = [pd.read_csv(SKYNOMAD / "availability" / f"{z}_v100_1.csv")["availability"]
                 .to_numpy()[:ticks].astype(bool) for z in SKY_ZONES]
    spot = np.array([prices[f"{z}_v100_1"] for z in SKY_ZONES], dtype=float)
    trace = AvailabilityTrace.from_arrays(np.array(available), SKY_ZONES, TICK,
                                          start=first["date"].iloc[0], spot_price=spot,
                                          on_demand_price=ON_DEMAND)
    published = pd.read_csv(SKYNOMAD / "published_v100_results.csv")
    hours = sorted(published.loc[published["task_type"] == "multi_region",
                                 "env_start_hours"].unique())
    starts = tuple(int(h * 3600 // TICK) for h in hours)
    return Case("skynomad windows", trace, starts=starts, optimum_states=None, **SKY_JOB)


def gcp_cases() -> list[Case]:
    frame = read_paths(sorted(GCP.glob("*.out"))).intervals()
    cases = []
    for gpu in ("v100", "p100", "k80"):
        kind = f"n1-standard-{4 if gpu == 'k80' else 8}+1xnvidia-tesla-{gpu}"
        part = frame[frame["instance_type"] == kind]
        trace = AvailabilityTrace.from_intervals(part, 60, spot_price=ON_DEMAND * SPOT_SHARE,
                                                 on_demand_price=ON_DEMAND)
        cases.append(Case.spread(f"gcp {gpu}", trace, 10, **GCP_JOB))
    return cases


def price_path() -> list[float]:
    """GCP a3-highgpu-1g spot over on-demand in us-central1, one value a day."""
    frame = pd.read_csv(PRICES_2026)
    rows = frame[(frame["instance_type"] == "a3-highgpu-1g")
                 & (frame["region"] == "us-central1")].copy()
    rows["share"] = rows["spot_price_usd_per_hour"] / rows["ondemand_usd_per_hour"]
    daily = rows.set_index(pd.to_datetime(rows["observed_date"]))["share"].sort_index()
    return daily.resample("D").ffill().tolist()


def synthetic_sets() -> list[TraceSet]:
    model = SpotModel.parametric(SYNTHETIC_ZONES, TICK, (2.0, 1.0, 3.0), (0.5, 1.0, 0.5),
                                 sigma=1.2, seed=7)
    like = AvailabilityTrace.from_arrays(np.zeros((3, 1), dtype=bool), SYNTHETIC_ZONES, TICK)
    ticks = 21 * 86400 // TICK
    variations = {
        "synthetic: zone turns scarce": Variation("scarce", scarce_zone=2, scarce_from=0.5,
                                                  scarce_spell=0.2, scarce_gap=4.0),
        "synthetic: 2026 price steps": Variation("prices"),
        "synthetic: shared shortages": Variation("shared", shortage_hours=12,
                                                 shortage_share=0.8),
    }
    sets = []
    for seed, (name, variation) in enumerate(variations.items()):
        trace = model.sample(ticks, variation, seed=seed, like=like)
        if "price" in name:
            trace = stepped_prices(trace, price_path())
        sets.append(TraceSet(name, "synthetic", table_and_sky(name, trace)))
    return sets


def table_and_sky(name: str, trace: AvailabilityTrace) -> tuple[Case, ...]:
    return (Case.spread(f"{name} (table)", trace, STARTS, **TABLE),
            Case.spread(f"{name} (SkyNomad's job)", trace, 12, **SKY_JOB))


def trace_sets() -> list[TraceSet]:
    feb = spot_trace(FEB, TUNE_ZONES + OTHER_ZONES, "2023-02-15")
    april = spot_trace(APRIL, ["us-east-1c", "us-east-1f", "us-west-2b", "us-west-2c"],
                       "2023-04-22")
    counts = [np.asarray(json.loads((AUGUST / f"{z}_v100_1.json").read_text())["data"])
              for z in ("us-east-2b", "us-west-2a", "us-west-2c")]
    n = min(len(c) for c in counts)
    august = AvailabilityTrace.from_counts(np.array([c[:n] for c in counts]),
                                           ["us-east-2b", "us-west-2a", "us-west-2c"], 300,
                                           1, start="2023-08-27")
    return [
        TraceSet("spot-traces 2023-02", "aws-2023-02", (
            Case.spread("2023-02 tune zones", feb.subset(TUNE_ZONES), STARTS, **TABLE),
            Case.spread("2023-02 other zones", feb.subset(OTHER_ZONES), STARTS, **TABLE))),
        TraceSet("skynomad-v100", "aws-2023-02", (skynomad_case(),)),
        TraceSet("spot-traces 2023-04", "aws-2023-04", table_and_sky("2023-04", april)),
        TraceSet("16-node 2023-08, one instance", "aws-2023-08",
                 table_and_sky("2023-08", august)),
        TraceSet("dispa2020 gcp 2020-03", "gcp-2020-03", tuple(gcp_cases())),
        *synthetic_sets(),
    ]


def candidates(grid: str) -> dict[str, object]:
    """spot-hedge with each choice of its constants (`--grid small`: the priors only)."""
    out = {}
    for (label, prior), scarcity, above in product(
            PRIORS.items(), SCARCITY if grid == "full" else (0.5,),
            HEDGE_ABOVE if grid == "full" else (0.9,)):
        constants = HedgeConstants(hedge_above=above, keep_above=above / 2,
                                   scarcity=scarcity, prior=prior)
        out[f"{label}, scarcity {scarcity:g}, hedge above {above:g}"] = (
            lambda c=constants: SpotHedge(c))
    return out


def table(loso: pd.DataFrame, fixed: dict[str, pd.DataFrame]) -> str:
    head = ["set", "spot-hedge vs optimum (mean / worst)", "vs uniform progress (mean / "
            "worst)", *[f"{p} vs optimum (mean / worst)" for p in fixed], "missed"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in loso.itertuples(index=False):
        cells = [row.set, f"{row.vs_optimum:+.1%} / {row.worst_vs_optimum:+.1%}",
                 f"{row.vs_uniform:+.1%} / {row.worst_vs_uniform:+.1%}"]
        misses = int(row.misses)
        for frame in fixed.values():
            other = frame.set_index("set").loc[row.set]
            cells.append(f"{other['vs_optimum']:+.1%} / {other['worst_vs_optimum']:+.1%}")
            misses += int(other["misses"])
        cells.append(str(misses))
        lines.append("| " + " | ".join(cells) + " |")
    worst = loso.loc[loso["vs_optimum"].idxmax()]
    lines.append(f"\nworst set (spot-hedge, out of sample): {worst['set']} "
                 f"{worst['vs_optimum']:+.1%} over the optimum; mean over the sets "
                 f"{loso['vs_optimum'].mean():+.1%}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", help="comma-separated set names (default: all)")
    parser.add_argument("--grid", choices=("full", "small"), default="full")
    args = parser.parse_args()
    wall, cpu = time.perf_counter(), time.process_time()
    sets = trace_sets()
    if args.sets:
        wanted = set(args.sets.split(","))
        sets = [s for s in sets if s.name in wanted]
    print(f"{len(sets)} sets read in {time.perf_counter() - wall:.0f} s", flush=True)
    scorer = Scorer()
    grid = candidates(args.grid)
    scores = score_sets(sets, grid, scorer, "none",
                        progress=lambda s, c: print(f"  scored {s}: {c}", flush=True))
    print("\nspot-hedge's candidates, cold start, cost over the optimum (mean over the "
          "settings), per set:")
    print(scores.pivot_table(index="candidate", columns="set", values="vs_optimum",
                             sort=False).map(lambda v: f"{v:+.1%}").to_string())
    loso = leave_one_set_out(scores)
    print("\nchosen per held-out recording:")
    for held, part in loso.groupby("recording", sort=False):
        print(f"  {held}: {part['chosen'].iloc[0]} (train {part['train_vs_optimum'].iloc[0]:+.1%})")
    default = HedgeConstants()
    chosen = loso.loc[loso["recording"] == HELD_FOR_DEFAULT, "chosen"]
    for name, make in grid.items():
        if make().constants == default:
            print(f"spot-hedge's default constants: {name}; chosen with {HELD_FOR_DEFAULT} "
                  f"held out: {chosen.iloc[0] if len(chosen) else '-'}")
    fixed = {"spot-anywhere": SpotAnywhere, "spot-risk": SpotRisk}
    for history in ("none", "full"):
        if history == "full":
            picks = dict(zip(loso["set"], loso["chosen"], strict=True))
            rows = []
            for trace_set in sets:
                name = picks[trace_set.name]
                rows.append(score_sets([trace_set], {name: grid[name]}, scorer, "full"))
            loso = pd.concat(rows, ignore_index=True).merge(
                loso[["set", "chosen"]], on="set")
        others = {p: score_sets(sets, {p: make}, scorer, history) for p, make in fixed.items()}
        print(f"\nleave-one-set-out, market history before each run: {history}")
        print(table(loso, others))
    print(f"\n{time.perf_counter() - wall:.0f} s wall, {time.process_time() - cpu:.0f} s CPU")


if __name__ == "__main__":
    main()
