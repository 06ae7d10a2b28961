"""Collection backtest benchmark: the two collection workloads of docs/backtests.md on the
recorded 2020 traces (imported into a fresh SQLite store), from 2020-02-18:

1. examples/sweep.yaml (six Transformer jobs, 12 h deadlines) with shared instances;
2. 8 jobs over the six published models (1 V100-day each, 48 h deadlines), on whole
   instances and with shared instances.

Each is replayed old-style (every run plans on its own: each run looks its jobs'
throughputs up and solves every decision) and new-style (`run_collection_backtest`: one
lookup per backtest, a decision met again by another run is not solved again), side by
side in one process, checking that both give the same costs and instances. Prints wall
and CPU seconds and the ratios; asserts nothing.

    .venv/bin/python bench/bench_collection_backtest.py [--starts 5] [--full]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from costsched.backtest import PUBLISHED_MODELS, PriceTrace, regular_starts
from costsched.backtest.collection import (
    APPROACHES,
    INSTANCE_COLUMNS,
    RUN_COLUMNS,
    CollectionConfig,
    CollectionReplay,
    run_collection_backtest,
)
from costsched.jobspec import load, resolve
from costsched.optimize.decision import Overheads
from costsched.service.backtest import REPLAY_OS
from costsched.service.collection_backtest import jobs_for_models
from costsched.store import PriceStore, to_epoch_seconds
from costsched.throughput import ThroughputTable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.shared_data
from tests.shared_data import shared_data  # noqa: E402

DISPA = shared_data() / "dispa2020"
FIRST = pd.Timestamp("2020-02-18", tz="UTC").to_pydatetime()


def old_style(trace: PriceTrace, jobs: list, starts: list[int],
              config: CollectionConfig) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every run on its own, as before the shared lookups and decisions."""
    runs, instances = [], []
    for start in starts:
        when = pd.Timestamp(int(start), unit="s", tz="UTC")
        for approach in APPROACHES:
            replay = CollectionReplay(trace, jobs, int(start), approach, config)
            runs.append({"approach": approach, "start": when, **replay.run()})
            instances += [{"approach": approach, "start": when, **i} for i in replay.instances]
    return pd.DataFrame(runs, columns=RUN_COLUMNS), pd.DataFrame(instances,
                                                                 columns=INSTANCE_COLUMNS)


def same(a: tuple[pd.DataFrame, pd.DataFrame], b: tuple[pd.DataFrame, pd.DataFrame]) -> bool:
    (ra, ia), (rb, ib) = a, b
    costs = np.allclose(ra["cost_usd"], rb["cost_usd"], rtol=1e-9, atol=0, equal_nan=True) \
        and np.allclose(ia["cost_usd"], ib["cost_usd"], rtol=1e-9, atol=0)
    cols = ["approach", "offering", "jobs", "gpus_used"]
    return bool(costs and len(ia) == len(ib) and (ia[cols].to_numpy() == ib[cols].to_numpy()).all()
                and (ra["moves"].to_numpy() == rb["moves"].to_numpy()).all())


def timed(fn, *args) -> tuple[object, float, float]:
    t, cpu = time.perf_counter(), time.process_time()
    out = fn(*args)
    return out, time.perf_counter() - t, time.process_time() - cpu


def bench(name: str, trace: PriceTrace, jobs: list, n_starts: int, share: bool) -> None:
    starts = list(to_epoch_seconds(regular_starts(FIRST, n_starts, 24.0)))
    config = CollectionConfig(share_instances=share)
    old, old_wall, old_cpu = timed(old_style, trace, jobs, starts, config)
    new, new_wall, new_cpu = timed(run_collection_backtest, trace, jobs, starts, config)
    print(f"{name:<34} {n_starts:>3} starts  old {old_wall:6.1f} s wall {old_cpu:6.1f} s CPU"
          f"   new {new_wall:6.1f} s wall {new_cpu:6.1f} s CPU   "
          f"x{old_wall / new_wall:4.1f} wall x{old_cpu / new_cpu:4.1f} CPU   "
          f"same results: {same(old, new)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--full", action="store_true", help="also 30 starts")
    args = parser.parse_args()
    from price_collectors import recorded

    with tempfile.TemporaryDirectory() as tmp:
        store = PriceStore(str(Path(tmp) / "prices.sqlite"))
        store.ingest(recorded.read_paths([DISPA / "aws" / "cost", DISPA / "azure"])
                     .observations())
        trace = PriceTrace.from_store(store, os=list(REPLAY_OS))
        store.dispose()
    table = ThroughputTable.load()
    import cvxpy  # noqa: F401  (its import, once per command, is not the replay's time)

    sweep = [resolve(s, table, FIRST, source="sweep.yaml")
             for s in load(ROOT / "examples" / "sweep.yaml")]
    models = jobs_for_models(list(PUBLISHED_MODELS), 8, 1.0, [], table, Overheads(), 1.0)
    counts = [args.starts, 30] if args.full else [args.starts]
    for n in counts:
        bench("sweep.yaml, shared instances", trace, sweep, n, True)
        bench("8 jobs over 6 models, whole", trace, models, n, False)
        bench("8 jobs over 6 models, shared", trace, models, n, True)


if __name__ == "__main__":
    main()
