"""Spot risk: expected time and cost of a job that may be preempted.

Model (stated, exact under its assumptions): preemptions arrive as a Poisson process of
rate `lam` per hour while the job runs; the job checkpoints every `tau` hours of work at
no cost; after a preemption it loses the work since its last checkpoint and spends
`restart` hours (relaunch + restoring the checkpoint) before running again. A segment of
`tau` hours of work then takes, in expectation,

    E[segment] = (exp(lam * tau) - 1) * (1 / lam + restart)

and W hours of work (n = floor(W / tau) full segments and a remainder r) take
(n * expm1(lam * tau) + expm1(lam * r)) * (1 / lam + restart), which tends to W as lam -> 0.
The instance is billed for all of that time (a slight overestimate: a relaunch is not billed
until the new instance starts). Deadlines compare against this expectation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

# Default preemption rates per spot hour when no measurement of the offering exists.
# AWS and GCP: measured with `availability.preemption_rates` from the dispa2020 probe logs
# (../shared/data/dispa2020/{aws,gcp}/availability, MIT licence). Azure: no recorded log;
# the AWS figure stands in, an assumption.


@dataclass(frozen=True, slots=True)
class DefaultRate:
    per_hour: float
    source: str


DEFAULT_RATES: dict[str, DefaultRate] = {
    "aws": DefaultRate(0.0854, "measured: dispa2020 aws/availability, us-east-1, "
                       "2020-03-15..17: 32 preemptions in 374.6 instance-hours"),
    "gcp": DefaultRate(0.633, "measured: dispa2020 gcp/availability, us-central1/us-east1/"
                       "us-west1, 2020-03-01..07: 445 preemptions in 703.2 instance-hours"),
    "azure": DefaultRate(0.0854, "assumed: no recorded Azure eviction log; the AWS rate"),
}
# Weight of the cloud default when shrinking a measured group's rate: it counts as this
# many instance-hours observed at the default rate (a gamma prior), so 0 preemptions in a
# short probe does not become a rate of 0.
PRIOR_HOURS = 24.0
DEFAULT_CHECKPOINT_HOURS = 0.5
DEFAULT_RESTART_HOURS = 5 / 60
RESTORE_GB_PER_SECOND = 0.1  # reading a checkpoint from object storage, order of magnitude


def restart_hours(restart_minutes: float, checkpoint_gb: float) -> float:
    """Relaunch time plus the time to read the checkpoint back."""
    return restart_minutes / 60 + checkpoint_gb / RESTORE_GB_PER_SECOND / 3600


def expected_hours(work_hours: np.ndarray | float, rate: np.ndarray | float,
                   checkpoint_hours: np.ndarray | float,
                   restart: np.ndarray | float) -> np.ndarray:
    """Expected wall-clock hours to finish `work_hours` of uninterrupted work (broadcasts)."""
    w = np.asarray(work_hours, dtype=float)
    lam = np.asarray(rate, dtype=float)
    tau = np.asarray(checkpoint_hours, dtype=float)
    full = np.floor(w / tau)
    rest = w - full * tau
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        risky = (full * np.expm1(lam * tau) + np.expm1(lam * rest)) * (1 / lam + restart)
    return np.where(lam > 0, risky, w)


def expected_hours_risky(work_hours: np.ndarray, rate: np.ndarray,
                         checkpoint_hours: np.ndarray, restart: np.ndarray) -> np.ndarray:
    """`expected_hours` for rates that are all > 0, computed in place over a fresh
    (jobs, offerings) array: the hot loop of ranking many jobs at once."""
    with np.errstate(invalid="ignore", over="ignore"):
        full = np.floor(work_hours / checkpoint_hours)
        rest = full * checkpoint_hours
        np.subtract(work_hours, rest, out=rest)
        rest *= rate
        np.expm1(rest, out=rest)
        full *= _expm1_outer(checkpoint_hours, rate)
        full += rest
        full *= 1 / rate + restart
    return full


def offering_rates(frame: pd.DataFrame, measured: pd.DataFrame | None = None,
                   defaults: dict[str, DefaultRate] | None = None) -> pd.DataFrame:
    """Preemption rate per hour of each offering row, with its basis.

    On-demand rows: 0. Spot rows: a measured group (`availability.preemption_rates`
    output; matched on the columns it was grouped by) shrunk toward the cloud default by
    PRIOR_HOURS, else the cloud default. Columns: preemptions_per_hour, preemption_basis.
    """
    defaults = defaults or DEFAULT_RATES
    default = frame["cloud"].map({c: d.per_hour for c, d in defaults.items()})
    rate = default.to_numpy(dtype=float)
    basis = np.array([f"{c} default" for c in frame["cloud"]], dtype=object)
    if measured is not None and not measured.empty:
        keys = [c for c in ("cloud", "region", "zone", "gpu_model", "gpu_count")
                if c in measured.columns]
        joined = frame[keys].merge(measured[[*keys, "preemptions", "hours"]], on=keys,
                                   how="left")
        k = joined["preemptions"].to_numpy(dtype=float)
        t = joined["hours"].to_numpy(dtype=float)
        hit = ~np.isnan(t)
        shrunk = (k + rate * PRIOR_HOURS) / (t + PRIOR_HOURS)
        rate = np.where(hit, shrunk, rate)
        basis = np.where(hit, [f"measured: {int(a) if a == a else 0} in {b:.0f} h"
                               for a, b in zip(k, t, strict=True)], basis)
    spot = (frame["market"] == "spot").to_numpy()
    return pd.DataFrame({
        "preemptions_per_hour": np.where(spot, rate, 0.0),
        "preemption_basis": np.where(spot, basis, "on-demand"),
    }, index=frame.index)


def _expm1_outer(tau: np.ndarray, rate: np.ndarray) -> np.ndarray:
    """expm1(tau * rate) for a column of per-job intervals against per-offering rates; jobs
    share a few checkpoint intervals, so compute each distinct row once."""
    tau = np.asarray(tau, dtype=float)
    if tau.ndim == 2 and tau.shape[1] == 1 and len(tau) > 8:
        values, inverse = np.unique(tau[:, 0], return_inverse=True)
        if len(values) * 4 <= len(tau):
            return np.expm1(values[:, None] * rate)[inverse]
    return np.expm1(tau * rate)
