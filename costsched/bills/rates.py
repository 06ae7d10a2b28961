"""What the bill says a placement's offering cost per hour, and the stored price it corrects.

For each placement with billed compute lines (in USD): the span its compute lines cover
within the placement, the billed USD (its compute, less the credits on that compute matched
to it: a Savings Plan's, a sustained use discount) over that span's hours (the billed
effective rate),
and the estimate over the same span, charged from the stored prices by
`costsched.costs.placement_costs` (the report's own charge). Where they differ by more
than the tolerance, the billed rate is stored as a price observation of the offering the
estimate was priced from (source "bill"), effective at the end of the billed span: later
estimates use it until a newer price is observed.
"""

from __future__ import annotations

import pandas as pd

from costsched import catalog
from costsched.bills import aws, azure, gcp
from costsched.costs import placement_costs
from costsched.store import OBSERVATION_COLUMNS, OFFERING_KEY, PriceStore

SOURCE = "bill"
RATE_COLUMNS = ["placement_id", "job_id", *OFFERING_KEY, "gpu_model", "gpu_count",
                "start_at", "end_at", "hours", "billed_usd", "estimated_usd", "billed_usd_per_hour",
                "estimated_usd_per_hour", "recorded"]


def of_compute(line: pd.Series) -> bool:
    """Whether a credit line is a discount on compute (a Savings Plan's negation of an
    instance's usage, a sustained use discount on an instance's cores): by its usage type,
    read as its cloud reads a usage line's."""
    if line["cloud"] == "aws":
        return aws.category("Usage", line["usage_type"], line["service"]) == "compute"
    if line["cloud"] == "gcp":
        return gcp.category("regular", line["service"], line["usage_type"]) == "compute"
    return azure.category("Usage", line["service"]) == "compute"


def billed_rates(store: PriceStore, lines: pd.DataFrame, placed: pd.DataFrame,
                 now: pd.Timestamp) -> pd.DataFrame:
    """RATE_COLUMNS (recorded False) per placement with billed compute in USD: its compute
    lines, less the credits on that compute matched to it."""
    ours = lines[lines["placement_id"].notna() & (lines["currency"].str.upper() == "USD")]
    usage = ours["category"] == "compute"
    credits = ours["category"] == "credit"
    if credits.any():
        credits[credits] = ours[credits].apply(of_compute, axis=1).astype(bool)
    if not usage.any() or placed.empty:
        return pd.DataFrame(columns=RATE_COLUMNS)
    compute = ours[usage | credits]
    # The billed span is that of the usage lines; their credits are netted in its USD.
    span = compute.assign(usage_start=compute["usage_start"].where(usage[usage | credits]),
                          usage_end=compute["usage_end"].where(usage[usage | credits]))
    billed = span.groupby(span["placement_id"].astype("int64")).agg(
        billed_usd=("usd", "sum"), lo=("usage_start", "min"), hi=("usage_end", "max"))
    billed = billed[billed["lo"].notna()]  # credits alone bill no hours
    spans = placed.set_index("id").join(billed, how="inner")
    spans["end_at"] = spans["end_at"].fillna(now)
    spans["start_at"] = spans[["start_at", "lo"]].max(axis=1)
    spans["end_at"] = spans[["end_at", "hi"]].min(axis=1)
    spans = spans[spans["end_at"] > spans["start_at"]]
    if spans.empty:
        return pd.DataFrame(columns=RATE_COLUMNS)
    spans = spans.rename_axis("placement_id").reset_index()
    charged = placement_costs(store, spans, now=now.to_pydatetime())
    hours = charged["hours"].to_numpy(dtype=float)
    out = spans.assign(hours=hours, estimated_usd=charged["usd"].to_numpy(dtype=float),
                       billed_usd_per_hour=spans["billed_usd"] / hours,
                       estimated_usd_per_hour=charged["usd"].to_numpy(dtype=float) / hours,
                       recorded=False)
    return out[RATE_COLUMNS].reset_index(drop=True)


def correct(store: PriceStore, rates: pd.DataFrame, tolerance: float) -> pd.DataFrame:
    """Store each rate off its estimate by more than `tolerance` (a share) as a price
    observation; `rates` with `recorded` set where one was stored or already was."""
    off = (rates["estimated_usd"] > 0) & (
        (rates["billed_usd"] / rates["estimated_usd"].where(rates["estimated_usd"] > 0) - 1)
        .abs() > tolerance)
    rows = [_observation(store, row) for row in rates[off].to_dict("records")]
    if rows:
        store.ingest(pd.DataFrame(rows, columns=OBSERVATION_COLUMNS))
    return rates.assign(recorded=off.to_numpy())


def _observation(store: PriceStore, rate: dict) -> list:
    """The billed rate as an observation of the offering whose stored prices the estimate
    used: the placement's own, else its regional one (zone ''), else its own (new)."""
    key = {c: rate[c] for c in OFFERING_KEY}
    known = store.offerings(**{c: key[c] for c in OFFERING_KEY if c != "zone"})
    exact = known[known["zone"] == key["zone"]]
    regional = known[known["zone"] == ""]
    chosen = exact if not exact.empty else regional
    if not chosen.empty:
        found = chosen.iloc[0]
        key["zone"] = str(found["zone"])
        attrs = [found["gpu_model"], int(found["gpu_count"]), int(found["vcpus"]),
                 float(found["memory_gb"])]
    else:
        listed = catalog.lookup(key["cloud"], key["instance_type"]) or {}
        attrs = [rate["gpu_model"], int(rate["gpu_count"]), int(listed.get("vcpus", 0)),
                 float(listed.get("memory_gb", 0.0))]
    at = pd.Timestamp(rate["end_at"]).floor("s")
    return [*(key[c] for c in OFFERING_KEY), *attrs, float(rate["billed_usd_per_hour"]), at,
            SOURCE]
