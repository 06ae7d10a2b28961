"""A launch the account's quota refused (`QuotaError`): recorded against that quota, so that
the next decision knows it (`QuotaStore.refused`), said in one line with the quota's name
and the request that lifts it, and the move's next candidate that does not draw on the
same quota (`next_fitting`): every other offering under it would be refused too."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from costsched import catalog
from costsched.clouds.quotas import Need, needs, request_line, where
from costsched.migration.launcher import QuotaError
from costsched.model import Offering


def refused(quotas: Any, exc: QuotaError, at: datetime) -> str:
    """Record `exc` against its quota in `quotas` (a QuotaStore) and say it: 'quota All P
    Spot Instance Requests (L-7212CCBC) in us-east-1 refused 8 vCPUs
    (MaxSpotInstanceCountExceeded: ...); ask for it: aws service-quotas ...'. A quota no
    mapping names is said without being recorded."""
    found = quota_of(exc.offering, exc.quota)
    if found is None:
        return f"the account's quota refused it ({exc.reason})"
    need, code = found
    asked = need.amount * exc.instances
    row = _stored(quotas, need.cloud, need.scope, code)
    code = str(row["code"]) if row else code  # as the reading spelt it
    quotas.refused(need.cloud, need.scope, code, unit=need.unit, asked=asked, at=at,
                   detail=exc.reason, name=need.name if need.name != need.code else "")
    row = _stored(quotas, need.cloud, need.scope, code)
    name = (row or {}).get("name") or (need.name if code == need.code else "")
    used = (row or {}).get("used")
    used = 0.0 if used is None or used != used else float(used)
    quota = f"{name} ({code})" if name and name != code else code
    return (f"quota {quota} {where(need.scope)} refused {asked:g} {need.unit} "
            f"({exc.reason}); ask for it: "
            + request_line(need.cloud, code, need.scope, used + asked,
                           str((row or {}).get("account") or "")))


def quota_of(offering: Offering, named: str = "") -> tuple[Need, str] | None:
    """The quota a refusal of `offering` is of, and its code: the one the cloud's answer
    `named`, else the first the offering draws on (its GPUs' or vCPUs' where there is one
    quota a market); None when no mapping names one."""
    drawn = offering_needs(offering)
    for need in drawn:
        if named and need.draws_on(named):
            return need, named
    return (drawn[0], drawn[0].code) if drawn else None


def offering_needs(offering: Offering) -> tuple[Need, ...]:
    """The quotas an instance of `offering` draws on (its vCPUs from the catalog where the
    offering does not say them)."""
    vcpus = offering.vcpus
    if not vcpus:
        listed = catalog.lookup(offering.cloud, offering.instance_type)
        vcpus = int(listed["vcpus"]) if listed and listed.get("vcpus") else 0
    return needs(offering.cloud, offering.region, offering.instance_type, offering.market,
                 offering.gpu_model, offering.gpu_count, vcpus)


def next_fitting(candidates: Sequence[Offering], tried: int, exc: QuotaError,
                 keep: int | None = None) -> int:
    """The index of the first candidate after `tried` that does not draw on the quota that
    refused `exc` for as much as was refused (there, it would be refused too), or `keep`
    (a candidate tried whatever its quota); the length of `candidates` when none is
    left."""
    found = quota_of(exc.offering, exc.quota)
    if found is None:
        return tried + 1
    need, code = found
    asked = need.amount * exc.instances
    for i in range(tried + 1, len(candidates)):
        if i == keep:
            return i
        same = [n for n in offering_needs(candidates[i])
                if (n.cloud, n.scope) == (need.cloud, need.scope) and n.draws_on(code)]
        if not same or same[0].amount * exc.instances < asked:
            return i
    return len(candidates)


def _stored(quotas: Any, cloud: str, scope: str, code: str) -> dict | None:
    frame = quotas.current()
    row = frame[(frame["cloud"] == cloud) & (frame["scope"] == scope)
                & (frame["code"].str.lower() == code.lower())]
    return None if row.empty else row.iloc[0].to_dict()
