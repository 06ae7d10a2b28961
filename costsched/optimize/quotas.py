"""Whether the account's quotas hold an offering: per offering, the quota that binds it
(`costsched.clouds.quotas` says which ones it draws on) and how many of its instances fit
in what is left of it; per job of N nodes, the mark of an offering they do not fit in.

An offering over quota stays in the ranking, behind every one that fits (`behind_quota`):
the quota is a fact with an age, and where nothing fits, trying is how one learns it has
changed. An offering whose quotas are not known (never read, no permission) is ranked as
if it fit. Pure: frames in, frames out.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass

from costsched.amounts import stored_price, usd
from costsched.clouds.quotas import Need, needs, where
from costsched.frames import OFFERING_KEY
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd

# The columns `attach` adds: the binding quota of one instance (its need, in its unit),
# what is left of it (limit - used), the size of a launch it refused since it was read
# (0: a refusal of unknown size; NaN: none), and how many instances fit in it (NaN: not
# known).
QUOTA_COLUMNS = ["quota_code", "quota_name", "quota_scope", "quota_unit", "quota_account",
                 "quota_need", "quota_free", "quota_limit", "quota_used", "quota_refused",
                 "quota_observed_at", "quota_instances"]
_TYPE_KEY = ["cloud", "region", "instance_type", "market", "gpu_model", "gpu_count", "vcpus"]
EPSILON = 1e-9


def attach(offerings: pd.DataFrame, quotas: pd.DataFrame) -> pd.DataFrame:
    """`offerings` with QUOTA_COLUMNS: of the quotas each draws on and that were read (or
    refused a launch), the one that holds the fewest of its instances. `quotas`: the
    store's (`QuotaStore.current`)."""
    out = offerings.drop(columns=[c for c in QUOTA_COLUMNS if c in offerings.columns])
    facts = _facts(quotas)
    if out.empty or not facts:
        return out.assign(**{c: _empty(c, out.index) for c in QUOTA_COLUMNS})
    types = out[[c for c in _TYPE_KEY if c in out.columns]].copy()
    if "vcpus" not in types:
        types["vcpus"] = 0
    keys = list(types.itertuples(index=False, name=None))
    found = {key: _binding(key, facts) for key in set(keys)}
    rows = [found[key] for key in keys]
    return out.assign(**{c: pd.Series([r[i] for r in rows], index=out.index,
                                      dtype=_empty(c, range(0)).dtype)
                         for i, c in enumerate(QUOTA_COLUMNS)})


def over_quota(ranked: pd.DataFrame, nodes: int = 1) -> pd.Series:
    """Per offering, why the quota does not hold `nodes` instances of it ('' when it does,
    or when its quota is not known): 'quota 0 of 8 vCPUs: request L-7212CCBC in
    us-east-1'."""
    out = pd.Series("", index=ranked.index, dtype=object)
    if "quota_instances" not in ranked.columns:
        return out
    short = ranked["quota_instances"].to_numpy(dtype=float) < nodes
    for i in np.flatnonzero(short):
        out.iloc[i] = mark(ranked.iloc[i], nodes)
    return out


def mark(row: pd.Series, nodes: int = 1) -> str:
    """The plan's mark of an offering its quota does not hold (`over_quota`)."""
    need = float(row["quota_need"]) * nodes
    unit, code, scope = row["quota_unit"], row["quota_code"], row["quota_scope"]
    refused = row["quota_refused"]
    if _known(refused):  # what a launch was refused since the quota was last read
        held = (f"quota refused a launch of {float(refused):g} {unit}" if refused > 0
                else "quota refused a launch")
    else:
        held = f"quota {max(float(row['quota_free']), 0.0):g} of {need:g} {unit}"
    return f"{held}: request {code} {where(str(scope))}"


def behind_quota(ranked: pd.DataFrame, nodes: int = 1) -> pd.DataFrame:
    """`ranked` with `quota` (`over_quota`), the choosable offerings the quota holds first,
    then those it does not, then the rest; within each, as ranked."""
    why = over_quota(ranked, nodes)
    choosable = ranked["excluded"] == "" if "excluded" in ranked else pd.Series(
        True, index=ranked.index)
    group = np.where(~choosable, 2, np.where(why != "", 1, 0))
    ranked = ranked.assign(quota=why)
    if not (group == 1).any():
        return ranked
    order = np.argsort(group, kind="stable")
    return ranked.iloc[order].reset_index(drop=True)


@dataclass(frozen=True)
class QuotaCost:
    """What the account's quotas cost a job: the cheapest offering it would have taken
    that they do not hold (`blocked`, with its mark `why`), against the first one they
    hold (`chosen`); `usd`, the difference in expected cost (NaN where the ranking has
    none), `usd_per_hour` in price."""

    chosen: str
    blocked: str
    why: str
    usd: float
    usd_per_hour: float

    def line(self) -> str:
        """'quota cost: $12.40 more (+$0.9180/h) on aws us-west-2a p3.2xlarge spot than on
        aws us-east-1a p3.2xlarge spot, which the quota does not hold (quota 0 of 8 vCPUs:
        request L-7212CCBC in us-east-1)'."""
        more = (f"{usd(self.usd)} more (+{stored_price(self.usd_per_hour)}/h)"
                if _known(self.usd) else f"+{stored_price(self.usd_per_hour)}/h")
        return (f"quota cost: {more} on {self.chosen} than on {self.blocked}, which the "
                f"quota does not hold ({self.why})")


def quota_cost(ranked: pd.DataFrame) -> QuotaCost | None:
    """Of a `behind_quota` ranking, what going where the quota holds costs: the first
    choosable offering that fits against the cheapest over quota (by expected cost where
    the ranking has it, else by price). None when nothing is over quota, nothing fits, or
    the one that fits is not dearer."""
    if "quota" not in ranked.columns or ranked.empty:
        return None
    choosable = (ranked["excluded"] == "") if "excluded" in ranked else pd.Series(
        True, index=ranked.index)
    choosable = choosable.to_numpy(dtype=bool)
    held = choosable & (ranked["quota"] == "").to_numpy(dtype=bool)
    short = choosable & (ranked["quota"] != "").to_numpy(dtype=bool)
    if not held.any() or not short.any():
        return None  # (most rankings: no quota known) before any rows are copied
    fits, over = ranked[held], ranked[short]
    chosen = fits.iloc[0]
    by = "expected_cost" if "expected_cost" in ranked and _known(chosen["expected_cost"]) \
        else "usd_per_hour"
    priced = over[over[by].notna()]
    if priced.empty:
        return None
    cheapest = priced.loc[priced[by].idxmin()]
    extra = float(chosen[by]) - float(cheapest[by])
    if extra <= EPSILON:
        return None
    usd = extra if by == "expected_cost" else math.nan
    return QuotaCost(str(chosen["offering"]), str(cheapest["offering"]), str(cheapest["quota"]),
                     usd, float(chosen["usd_per_hour"]) - float(cheapest["usd_per_hour"]))


def blocked_keys(offerings: pd.DataFrame, nodes: int = 1) -> set[tuple]:
    """The keys (OFFERING_KEY) of the offerings whose quota does not hold `nodes`
    instances."""
    if "quota_instances" not in offerings.columns or offerings.empty:
        return set()
    short = offerings[offerings["quota_instances"].to_numpy(dtype=float) < nodes]
    return set(short[OFFERING_KEY].itertuples(index=False, name=None))


# --- what was read -------------------------------------------------------------------------


def _facts(quotas: pd.DataFrame) -> dict[tuple[str, str], dict[str, dict]]:
    """(cloud, scope) -> code in lower case -> its row."""
    out: dict[tuple[str, str], dict[str, dict]] = {}
    for r in quotas.to_dict("records"):
        out.setdefault((r["cloud"], r["scope"]), {})[str(r["code"]).lower()] = r
    return out


def _binding(key: Hashable, facts: dict[tuple[str, str], dict[str, dict]]) -> tuple:
    """QUOTA_COLUMNS' values of the quota that holds the fewest instances of one type."""
    cloud, region, instance_type, market, gpu_model, gpu_count, vcpus = key  # type: ignore[misc]
    best: tuple | None = None
    for need in needs(str(cloud), str(region), str(instance_type), str(market),
                      "" if pd.isna(gpu_model) else str(gpu_model),
                      0 if pd.isna(gpu_count) else int(gpu_count),
                      0 if pd.isna(vcpus) else int(vcpus)):
        held = _held(need, facts.get((need.cloud, need.scope), {}))
        if held is not None and (best is None or _tightness(held) < _tightness(best)):
            best = held
    return best if best is not None else tuple(_empty(c, range(1)).iloc[0]
                                               for c in QUOTA_COLUMNS)


def _held(need: Need, read: dict[str, dict]) -> tuple | None:
    """QUOTA_COLUMNS' values of one need, from what was read of its scope; None when
    nothing was."""
    limits = {c: (r["limit"] if _known(r["limit"]) else math.inf)
              for c, r in read.items() if need.draws_on(c)}
    found = need.applies(limits)
    if found is None or need.amount <= 0:
        return None
    r = read[found]
    code = str(r["code"])  # as the cloud spells it
    used = float(r["used"]) if _known(r["used"]) else 0.0
    free = float(r["limit"]) - used if _known(r["limit"]) else math.nan
    refused = math.nan
    if not pd.isna(r["refused_at"]) and (pd.isna(r["observed_at"])
                                         or r["refused_at"] > r["observed_at"]):
        # A launch of `refused` units was turned down since the last reading: no request
        # as large fits (none at all when its size is not known: 0).
        refused = float(r["refused"]) if _known(r["refused"]) else 0.0
    if not _known(free) and not _known(refused):
        return None
    instances = (math.floor(max(free, 0.0) / need.amount + EPSILON) if _known(free)
                 else math.inf)
    if _known(refused):  # k instances fit only where k x need is below what was refused
        instances = min(instances, max(math.ceil(refused / need.amount - EPSILON) - 1, 0))
    return _values(need, code, r, free, refused, float(instances))


def _tightness(values: tuple) -> tuple[float, float]:
    """How tightly a quota holds an instance (the least binds): the instances that fit,
    then the share of one instance's need that is left (the family's 0 before the region's
    14 when neither holds 24 vCPUs)."""
    need, free, instances = values[5], values[6], values[-1]
    return instances, (free / need if _known(free) else math.inf)


def _values(need: Need, code: str, r: dict, free: float, refused: float,
            instances: float) -> tuple:
    return (code, r["name"] or need.name or code, need.scope, need.unit, r["account"],
            need.amount, free, r["limit"], r["used"], refused, r["observed_at"], instances)


def _known(value: object) -> bool:
    return value is not None and not pd.isna(value)


def _empty(column: str, index: pd.Index | range) -> pd.Series:
    """The column of offerings whose quotas are not known."""
    if column == "quota_observed_at":
        return pd.Series(pd.NaT, index=index, dtype="datetime64[ns, UTC]")
    if column in ("quota_need", "quota_free", "quota_limit", "quota_used", "quota_refused",
                  "quota_instances"):
        return pd.Series(np.nan, index=index, dtype=float)
    return pd.Series("", index=index, dtype=object)
