"""Small hand-made price traces whose right answers can be worked out by hand."""

from __future__ import annotations

import pandas as pd

from costsched.backtest import BacktestConfig, BacktestJob, PriceTrace, run_backtest
from costsched.model import Job
from costsched.optimize.decision import Overheads

T0 = pd.Timestamp("2020-01-01", tz="UTC")
DAY = pd.Timedelta(days=1)
# (cloud, region, zone, instance type, GPU model, GPU count)
V100_A = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "V100", 1)
V100_B = ("aws", "us-east-1", "us-east-1b", "p3.2xlarge", "V100", 1)
K80_A = ("aws", "us-east-1", "us-east-1a", "p2.xlarge", "K80", 1)
V100X4_A = ("aws", "us-east-1", "us-east-1a", "p3.8xlarge", "V100", 4)
AZ_V100 = ("azure", "eastus", "", "Standard_NC6s_v3", "V100", 1)
WEST_V100 = ("aws", "us-west-2", "us-west-2a", "p3.2xlarge", "V100", 1)


def history(rows: list[tuple[tuple, float, float]]) -> pd.DataFrame:
    """rows of (offering, USD/hour, days after T0 the price takes effect)."""
    records = []
    for (cloud, region, zone, itype, gpu, count), price, day in rows:
        records.append({"cloud": cloud, "region": region, "zone": zone, "instance_type": itype,
                        "market": "spot", "os": "linux", "gpu_model": gpu, "gpu_count": count,
                        "vcpus": 8, "memory_gb": 61.0, "usd_per_hour": price,
                        "effective_at": T0 + day * DAY, "source": "test"})
    return pd.DataFrame(records)


def trace(rows: list[tuple[tuple, float, float]]) -> PriceTrace:
    return PriceTrace.from_history(history(rows))


def job(model: str, v100_days: float, table, region: str = "us-east-1") -> BacktestJob:
    steps = v100_days * 86_400 * table.get(model, "V100", 1).steps_per_second
    return BacktestJob(Job(f"{model}@{region}", "", model, steps), region, v100_days)


def one(tr: PriceTrace, bj: BacktestJob, policy, costs: Overheads | None = None,
        table=None, margin: float = 0.05) -> pd.Series:
    config = BacktestConfig(overheads=costs or Overheads.free(), margin=margin)
    frame = run_backtest(tr, [bj], [T0.to_pydatetime()], [policy], config, table)
    row = frame.iloc[0]
    assert row["error"] is None, row["error"]
    return row


def free_but_idle(hours: float) -> Overheads:
    """Only idle time per migration (no egress, no copy), to make hand arithmetic easy."""
    return Overheads(restart_minutes=hours * 60, warmup_minutes=0, lost_work_minutes=0,
                     transfer_gbps=float("inf"), egress=False)


__all__ = ["AZ_V100", "DAY", "K80_A", "T0", "V100X4_A", "V100_A", "V100_B", "WEST_V100",
           "free_but_idle", "history", "job", "one", "trace"]
