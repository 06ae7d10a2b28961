"""One preemption hazard per offering: the rate per hour of running spot time at which an
instance there is taken away. Every decision reads it from here: the planner's ranking,
the policies' market views, the deadline policies (`hazards_per_second`) and the live
path (launch, recovery, migration).

**Prior, from the published signals.** Each spot offering starts from a prior rate r0:

- AWS Spot Instance Advisor bucket (interruptions over the past month, per region,
  instance type and OS) and Azure spot eviction-rate bucket (per size and location): the
  bucket's midpoint share (<5%: 2.5%, 5-10%: 7.5%, 10-15%: 12.5%, 15-20%: 17.5%, >20%:
  25%) scaled so that the top bucket is ANCHOR_PER_HOUR, the AWS rate measured on
  p3.2xlarge in us-east-1 (`costsched.clouds.aws`), an offering the Advisor puts in its
  top bucket: r0 = ANCHOR_PER_HOUR x share / 25%.
- EC2 spot placement score s (1-10; 10 = a request very likely to be filled):
  r0 = ANCHOR_PER_HOUR x (11 - s) / 10, i.e. 1 -> the anchor, 10 -> a tenth of it.
- several signals for one offering: the geometric mean of their rates;
- none (GCP publishes none, or the signals are older than 30 days): the cloud's default
  (`costsched.clouds`).

These mappings are stated assumptions (the clouds publish buckets, not rates); the
offering's own observations correct them as they accumulate.

**Observations, pooled up.** Preemptions k and spot hours t observed (costsched's own
jobs, preemption traces, probe logs) are pooled over four nested groups of an offering:
its zone, its region, its instance type (GPU model x count) across regions, its cloud.
Each group's data outside the next finer group form a ring, counted once. Going from the
cloud ring to the zone ring, a relative risk theta (observed over prior-expected
preemptions) is shrunk gamma-Poisson style toward the coarser level's:

    theta_0 = 1
    theta_level = (k_ring + a x theta_coarser) / (E_ring + a)
    rate = r0 x theta_zone

where E_ring = sum over the ring's observations of hours x their own prior rate, and
a = PRIOR_HOURS x r0 (the coarser estimate counts as PRIOR_HOURS hours observed). With data
of the offering's own group only this is (k + r0 x PRIOR_HOURS) / (t + PRIOR_HOURS): the
posterior mean of a Poisson rate under a gamma prior of mean r0 and PRIOR_HOURS hours.
On-demand offerings: 0.

**The local launcher's preemptions are not counted.** Its instances run on this machine,
standing in for an offering: what they meet is a simulation, said where the rate is
explained (`Evidence.simulated`), never counted as the cloud's.
"""

from __future__ import annotations

from dataclasses import dataclass

from costsched import clouds
from costsched.amounts import hours
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.vocabulary import counted

PRIOR_HOURS = 24.0
# The AWS rate measured on p3.2xlarge in us-east-1 (dispa2020): the top bucket's rate.
ANCHOR_PER_HOUR = 0.0854
BUCKET_LABELS = ("<5%", "5-10%", "10-15%", "15-20%", ">20%")
BUCKET_SHARES = (0.025, 0.075, 0.125, 0.175, 0.25)  # midpoints; >20% taken as 25%
EVICTION_LABELS = ("0-5", "5-10", "10-15", "15-20", "20+")  # Azure's spellings
# From the coarsest group to the finest: (name, the columns naming the group).
LEVELS = (("cloud", ("cloud",)),
          ("instance type", ("cloud", "gpu_model", "gpu_count")),
          ("region", ("cloud", "region", "gpu_model", "gpu_count")),
          ("zone", ("cloud", "region", "zone", "gpu_model", "gpu_count")))
COLUMNS = ["preemptions_per_hour", "preemption_basis"]
_SIGNAL_KEY = ["cloud", "region", "instance_type"]


def bucket_rate(index: float) -> float:
    """Per-hour rate of an Advisor or Azure eviction bucket (0 = <5% .. 4 = >20%)."""
    i = int(min(max(round(index), 0), len(BUCKET_SHARES) - 1))
    return ANCHOR_PER_HOUR * BUCKET_SHARES[i] / BUCKET_SHARES[-1]


def placement_rate(score: float) -> float:
    """Per-hour rate of a spot placement score (1-10)."""
    s = min(max(float(score), 1.0), 10.0)
    return ANCHOR_PER_HOUR * (11 - s) / 10


def signal_rate(kind: str, value: float) -> float:
    """The stated rate per hour of one signal observation."""
    return placement_rate(value) if kind == "placement" else bucket_rate(value)


def signal_label(kind: str, value: float) -> str:
    if kind == "placement":
        return f"placement score {value:g}"
    i = int(min(max(round(value), 0), len(BUCKET_LABELS) - 1))
    return f"{'advisor' if kind == 'advisor' else 'eviction'} {BUCKET_LABELS[i]}"


@dataclass(frozen=True)
class Evidence:
    """What the hazards are computed from: observed preemptions and spot hours per group
    (columns among cloud, region, zone, gpu_model, gpu_count; preemptions, hours), and
    the newest published signals (`SignalStore.latest`). `simulated`: the preemptions the
    local launcher's instances met per offering (cloud, region, zone, instance_type;
    preemptions), said by `explain`, never counted."""

    observed: pd.DataFrame | None = None
    signals: pd.DataFrame | None = None
    simulated: pd.DataFrame | None = None

    @classmethod
    def of(cls, value: Evidence | pd.DataFrame | None) -> Evidence:
        """Evidence as given, or a frame of observations alone."""
        if isinstance(value, Evidence):
            return value
        return cls(observed=value)

    def with_observed(self, *frames: pd.DataFrame | None) -> Evidence:
        """This evidence with more observations (frames may group by different columns)."""
        parts = [f for f in (self.observed, *frames) if f is not None and len(f)]
        observed = pd.concat(parts, ignore_index=True) if parts else None
        return Evidence(observed, self.signals, self.simulated)


def priors(frame: pd.DataFrame, signals: pd.DataFrame | None) -> tuple[np.ndarray, np.ndarray]:
    """Per row of `frame` (cloud, region, instance_type): its prior rate and where it
    comes from, for a spot offering."""
    cloud = frame["cloud"].astype(str)
    default = {c: clouds.default_preemption(c).per_hour for c in pd.unique(cloud)}
    rate = cloud.map(default).to_numpy(dtype=float)
    label = (cloud + " default").to_numpy(dtype=object)
    if signals is None or signals.empty or "instance_type" not in frame.columns:
        return rate, label
    linux = signals[signals["os"].astype(str).str.lower() != "windows"]
    if linux.empty:
        return rate, label
    per = linux.assign(log_rate=[np.log(signal_rate(k, v)) for k, v in
                                 zip(linux["kind"], linux["value"], strict=True)],
                       what=[signal_label(k, v) for k, v in
                             zip(linux["kind"], linux["value"], strict=True)])
    # A zoned signal (placement scores per zone) speaks for its zone; a regional one for
    # every zone of its region.
    grouped = per.groupby([*_SIGNAL_KEY, "zone"], as_index=False).agg(
        log_rate=("log_rate", "mean"), what=("what", " + ".join))
    regional = grouped[grouped["zone"] == ""].drop(columns="zone")
    keys = frame[_SIGNAL_KEY].astype(str)
    hit = keys.merge(regional, on=_SIGNAL_KEY, how="left")
    if "zone" in frame.columns:
        zoned = grouped[grouped["zone"] != ""]
        if len(zoned):
            z = frame[[*_SIGNAL_KEY, "zone"]].astype(str).merge(
                zoned, on=[*_SIGNAL_KEY, "zone"], how="left")
            use = z["log_rate"].notna().to_numpy()
            hit.loc[use, ["log_rate", "what"]] = z.loc[use, ["log_rate", "what"]].to_numpy()
    found = hit["log_rate"].notna().to_numpy()
    rate = np.where(found, np.exp(hit["log_rate"].to_numpy(dtype=float)), rate)
    label = np.where(found, hit["what"].to_numpy(dtype=object), label)
    return rate, label


def offering_hazards(frame: pd.DataFrame,
                     evidence: Evidence | pd.DataFrame | None = None) -> pd.DataFrame:
    """The hazard of each offering row: columns preemptions_per_hour and
    preemption_basis (where the rate comes from), indexed like `frame`."""
    return _hazards(frame, Evidence.of(evidence))[COLUMNS]


def hazards_per_second(frame: pd.DataFrame,
                       evidence: Evidence | pd.DataFrame | None = None) -> np.ndarray:
    """The same hazards per second of running time (the deadline policies' unit)."""
    return offering_hazards(frame, evidence)["preemptions_per_hour"].to_numpy(float) / 3600


def explain(frame: pd.DataFrame, evidence: Evidence | pd.DataFrame | None = None
            ) -> list[list[str]]:
    """The arithmetic of each row's hazard, a list of lines per row."""
    evidence = Evidence.of(evidence)
    detail = _hazards(frame, evidence)
    local = _simulated(frame, evidence.simulated)
    out = []
    for i in range(len(detail)):
        row = detail.iloc[i]
        if not row["spot"]:
            out.append(["on-demand: no preemptions (rate 0)"])
            continue
        none = "nothing observed on a cloud" if local[i] else "nothing observed"
        r0, a = row["prior"], PRIOR_HOURS * row["prior"]
        lines = [f"prior r0 = {r0:.4g}/h ({row['prior_source']}); prior weight a = "
                 f"{PRIOR_HOURS:g} h x r0 = {a:.4g} expected preemptions"]
        theta = 1.0
        for name, _ in LEVELS:
            k, t, e = row[f"k {name}"], row[f"t {name}"], row[f"e {name}"]
            if t > 0:
                new = (k + a * theta) / (e + a)
                lines.append(f"{name}: {k:g} preemptions in {hours(t)} h (expected {e:.3g} at "
                             f"their priors): theta = ({k:g} + {a:.3g} x {theta:.3g}) / "
                             f"({e:.3g} + {a:.3g}) = {new:.3g}")
                theta = new
            else:
                lines.append(f"{name}: {none}; theta stays {theta:.3g}")
        lines.append(f"rate = r0 x theta = {r0:.4g} x {theta:.3g} = "
                     f"{row['preemptions_per_hour']:.4g}/h")
        if local[i]:
            lines.append(f"{counted(local[i], 'preemption')} on the local launcher, not "
                         "counted: a local run is a simulation")
        out.append(lines)
    return out


def simulated_words(frame: pd.DataFrame, evidence: Evidence | pd.DataFrame | None
                    ) -> list[str]:
    """Per row: ' on a cloud' where the local launcher's instances met preemptions there
    (`Evidence.simulated`: not counted, so 'nothing observed' needs saying where), else ''."""
    local = _simulated(frame, Evidence.of(evidence).simulated)
    return [" on a cloud" if n else "" for n in local]


_OFFERING = ["cloud", "region", "zone", "instance_type"]


def _simulated(frame: pd.DataFrame, simulated: pd.DataFrame | None) -> list[int]:
    """Per row of `frame`: the preemptions the local launcher's instances met on its
    offering (0 for none)."""
    if simulated is None or simulated.empty or not set(_OFFERING) <= set(frame.columns):
        return [0] * len(frame)
    keys = frame[_OFFERING].fillna("").astype(str).reset_index(drop=True)
    seen = simulated.assign(**{c: simulated[c].fillna("").astype(str) for c in _OFFERING})
    seen = seen.groupby(_OFFERING, as_index=False)["preemptions"].sum()
    joined = keys.merge(seen, on=_OFFERING, how="left")
    return [int(n) for n in joined["preemptions"].fillna(0)]


def _hazards(frame: pd.DataFrame, evidence: Evidence) -> pd.DataFrame:
    spot = (frame["market"] == "spot").to_numpy()
    r0, source = priors(frame, evidence.signals)
    a = PRIOR_HOURS * r0
    theta = np.ones(len(frame))
    out = pd.DataFrame({"spot": spot, "prior": r0, "prior_source": source},
                       index=frame.index)
    basis = np.full(len(frame), "", dtype=object)
    sums = _level_sums(frame, evidence)
    for i, (name, _) in enumerate(LEVELS):
        k, t, e = sums[i]
        if i + 1 < len(LEVELS):  # the ring: this group less the next finer one
            k, t, e = k - sums[i + 1][0], t - sums[i + 1][1], e - sums[i + 1][2]
        t = np.where(t > 1e-9, t, 0.0)
        seen = t > 0
        theta = np.where(seen, (k + a * theta) / (e + a), theta)
        what = ("measured in " if name in ("zone", "region") else "pooled from ") + name
        # An offering of no zone (zone ""): its 'zone' is its region, and says so.
        whats = np.where(frame["zone"].fillna("").astype(str).to_numpy() == "",
                         "measured in region", what) if name == "zone" and "zone" in frame else \
            np.full(len(frame), what, dtype=object)
        # Whole hours in this narrow column, but never "0 h" for minutes observed.
        for row in np.flatnonzero(seen):  # (the words of the rows seen at this level alone)
            kk, tt = k[row], t[row]
            basis[row] = f"{whats[row]}: {kk:g} in {hours(tt) if tt < 1 else f'{tt:,.0f}'} h"
        out[f"k {name}"], out[f"t {name}"], out[f"e {name}"] = k, t, e
    rate = r0 * theta
    out["preemptions_per_hour"] = np.where(spot, rate, 0.0)
    text = np.where(basis != "", basis + "; prior " + source.astype(str), source)
    out["preemption_basis"] = np.where(spot, text, "on-demand")
    return out


def _level_sums(frame: pd.DataFrame, evidence: Evidence
                ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per level: preemptions, hours and prior-expected preemptions observed in each
    row's group (rows of observations that name the level's columns)."""
    zeros = np.zeros(len(frame))
    observed = evidence.observed
    if observed is None or observed.empty:
        return [(zeros, zeros, zeros)] * len(LEVELS)
    obs = observed.copy()
    if "instance_type" in obs.columns:
        obs_prior, _ = priors(obs.fillna({"instance_type": ""}), evidence.signals)
    else:
        obs_prior, _ = priors(obs, None)
    obs["expected"] = obs["hours"].to_numpy(dtype=float) * obs_prior
    out = []
    for _, columns in LEVELS:
        if not all(c in obs.columns and c in frame.columns for c in columns):
            out.append((zeros, zeros, zeros))
            continue
        rows = obs.dropna(subset=list(columns))
        rows = rows.astype({"gpu_count": "int64"}) if "gpu_count" in columns else rows
        grouped = rows.groupby(list(columns))[["preemptions", "hours", "expected"]].sum()
        # Each row's group looked up by its key (a left join, each row's group or nothing
        # observed): a dict, as the groups are few and a merge costs more than the sums.
        of_group = {key if isinstance(key, tuple) else (key,): sums for key, sums in
                    zip(grouped.index.tolist(), grouped.to_numpy(dtype=float).tolist(),
                        strict=True)}
        keys = frame[list(columns)]
        if "gpu_count" in columns:
            keys = keys.astype({"gpu_count": "int64"})
        nothing = (0.0, 0.0, 0.0)
        found = np.array([of_group.get(key, nothing)
                          for key in zip(*(keys[c].tolist() for c in columns), strict=True)],
                         dtype=float).reshape(len(frame), 3)
        out.append((found[:, 0], found[:, 1], found[:, 2]))
    return out
