"""`report --billed`: what the clouds billed beside what costsched estimated, per job and day.

The estimate is the cost report's own (`costsched.report.build`: compute and egress per job
and UTC day, charged from the stored prices); the bill is the imported line items matched
to the job's placements (`costsched bills import`), on the day their usage started. The
difference (billed less estimated) is itemised:

- compute: billed compute less estimated compute; egress: billed data transfer less the
  estimated checkpoint copies;
- storage, tax, credits (credits, refunds, discounts; negative), other: billed only (the
  estimate has none of them);
- rounding: the bill's own rounding lines, plus a compute or egress difference no larger
  than half a cent per billed line of it (what rounding each line to the cent can make).

An account's charges that name no resource and were matched to no placement (tax, credits,
rounding) are shared: each job gets the part of such a line that its matched usage is of
all the usage the account was billed (compute, storage, egress, other) over the line's
period, on the days of that usage. What other workloads of the account account for stays
unmatched.

The items add up to the difference. A job is flagged when its difference over the period
is more than `bills.difference_threshold` of its estimate (any billed USD when nothing was
estimated). Lines in another currency than USD are counted, not added.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import pandas as pd

from costsched.amounts import Scale, as_written, difference_as_written, no_noise, sum_as_written
from costsched.bills import rates
from costsched.report import Report, build
from costsched.report.cells import shown_rows
from costsched.report.data import reported_jobs
from costsched.store import PriceStore
from costsched.store.bills import BillStore

ITEMS = ["compute_usd", "storage_usd", "egress_usd", "tax_usd", "credits_usd",
         "rounding_usd", "other_usd"]
DAY_COLUMNS = ["day", "job_id", "name", "estimated_usd", "billed_usd", "difference_usd",
               *ITEMS]
JOB_COLUMNS = ["job_id", "name", "estimated_usd", "billed_usd", "difference_usd",
               "difference_share", *ITEMS, "flagged"]
UNMATCHED_COLUMNS = ["cloud", "category", "lines", "usd"]
SHARED = ("tax", "credit", "rounding")  # an account's charges, shared when they name nothing
USAGE = ("compute", "storage", "egress", "other")  # what a shared charge is shared by
ROUNDING_PER_LINE = 0.005  # USD: a line rounded to the cent moves at most this much
_BILLED = {"compute": "compute", "storage": "storage_usd", "egress": "egress", "tax": "tax_usd",
           "credit": "credits_usd", "rounding": "rounding_usd", "other": "other_usd"}


@dataclass(frozen=True, eq=False)
class BilledReport:
    """Billed against estimated over [since, until] (since None: from the first placement).

    days: per UTC day and job (DAY_COLUMNS); jobs: per job over the period, flagged past
    `threshold`; unmatched: the period's lines matched to no placement, per cloud and
    category (kept, never dropped); rates: per placement with billed compute, the billed
    effective rate beside the estimate's (`costsched.bills.rates`); other_currency: lines
    billed in another currency than USD (not added); not_covered_usd: the estimate on days
    of clouds no imported export covers (not compared)."""

    since: pd.Timestamp | None
    until: pd.Timestamp
    threshold: float
    days: pd.DataFrame = field(repr=False)
    jobs: pd.DataFrame = field(repr=False)
    unmatched: pd.DataFrame = field(repr=False)
    rates: pd.DataFrame = field(repr=False)
    other_currency: int = 0
    not_covered_usd: float = 0.0
    placed: bool = True  # whether anything was placed in the period (`Report.placed`)
    # The cost report's scale for charged figures (`Report.scale`): its money is written
    # at no fewer decimals, as the report beside it writes the same charges.
    scale: Scale | None = None
    imported: int = 0  # the bill lines the store holds, of any period (none: never imported)
    # The estimate as the cost report writes it (`written_estimate`): by job, by (day, job),
    # and the figure not compared; empty where the report was not written at a scale.
    written: dict = field(default_factory=dict, repr=False)

    def shown(self, name: str) -> pd.DataFrame:
        """Its table `name` ("jobs", "days", ...) as the text writes it: a job's (or a
        day's) estimate as the cost report writes the same charges (the sum of its rows as
        written at the store's scale), its difference the bill less that; JSON's figures
        are the exact ones."""
        frame = getattr(self, name)
        found = self.written.get(name)
        if not found or frame.empty:
            return frame
        keys = (frame["job_id"] if name == "jobs" else
                zip(frame["day"], frame["job_id"], strict=True))
        estimated = [found.get(k, e) for k, e in zip(keys, frame["estimated_usd"], strict=True)]
        places = self.scale.usd if self.scale is not None else 2
        return frame.assign(estimated_usd=estimated, difference_usd=[
            no_noise(difference_as_written(b, e, places))
            for b, e in zip(frame["billed_usd"], estimated, strict=True)])

    @property
    def totals(self) -> dict[str, float | int]:
        sums = {c: float(self.jobs[c].sum()) for c in
                ("estimated_usd", "billed_usd", "difference_usd", *ITEMS)}
        return {**sums, "flagged_jobs": int(self.jobs["flagged"].sum()),
                "unmatched_lines": int(self.unmatched["lines"].sum()),
                "unmatched_usd": float(self.unmatched["usd"].sum()),
                "not_covered_usd": self.not_covered_usd, "other_currency_lines":
                self.other_currency}

    @property
    def shown_totals(self) -> dict[str, float | int]:
        """`totals` as the text writes them: the estimate the sum of the jobs' as written
        (`shown`), the difference the bill less it, and the estimate not compared the cost
        report's spend as written less what was compared, so that the two add up to it."""
        if not self.written:
            return self.totals
        jobs = self.shown("jobs")
        places = self.scale.usd if self.scale is not None else 2
        estimated = sum_as_written(jobs["estimated_usd"], places) if len(jobs) else 0.0
        billed = sum_as_written(jobs["billed_usd"], places) if len(jobs) else 0.0
        return {**self.totals, "estimated_usd": estimated, "billed_usd": billed,
                "difference_usd": no_noise(round(billed - estimated, places)),
                "not_covered_usd": self.written["not_covered"]}


def build_billed(store: PriceStore, *, since: datetime | str | None = None,
                 until: datetime | str | None = None, job: int | str | None = None,
                 now: datetime | str | None = None, threshold: float | None = None
                 ) -> BilledReport:
    """The billed report of the jobs in `store` (or of `job`) over [since, until] as of
    `now`; `threshold`: the share of its estimate past which a job's difference is flagged
    (default: the configuration's `bills.difference_threshold`)."""
    if threshold is None:
        from costsched.config import effective

        threshold = float(effective().bills.difference_threshold)
    estimated = build(store, since=since, until=until, job=job, now=now)
    jobs = reported_jobs(store, job)
    names = {j.id: j.name for j in jobs}
    bills = BillStore(store.engine)
    found = bills.lines(since=estimated.since, until=estimated.until)
    start = None if estimated.since is None else pd.Timestamp(estimated.since)
    end = pd.Timestamp(estimated.until)
    usd = found["currency"].str.upper().isin(["USD", ""])
    lines = found[usd]
    mine = lines[lines["job_id"].notna() & lines["job_id"].isin(list(names))]
    shares, left = _shares(bills, names, start, end)
    # A day of a cloud is compared once an export covers it (some line of that cloud that
    # day): a cloud whose bill is not imported (or has no bill: local runs) is not "unbilled".
    covered = set(zip(found["cloud"], found["usage_start"].dt.floor("D"), strict=True))
    est = estimated.days
    compared = pd.Series([(c, d) in covered for c, d in zip(est["cloud"], est["day"],
                                                             strict=True)], dtype=bool)
    billed = pd.concat([mine, shares], ignore_index=True) if len(shares) else mine
    days = _days(est[compared.to_numpy()], billed, names)
    placed = store.jobs.placements(jobs[0].id if len(jobs) == 1 else None)
    placed = placed[placed["job_id"].isin(list(names))]
    return BilledReport(
        since=start, until=end, threshold=threshold, days=days,
        jobs=_job_table(days, threshold),
        unmatched=_unmatched(lines[lines["placement_id"].isna()], left),
        rates=rates.billed_rates(store, mine, placed, end),
        other_currency=int((~usd).sum()),
        not_covered_usd=float(est.loc[~compared.to_numpy(), "usd"].sum()),
        placed=estimated.placed, scale=estimated.scale, imported=bills.count(),
        written=written_estimate(estimated, est, compared.to_numpy()))


def written_estimate(estimated: Report, est: pd.DataFrame, compared: np.ndarray) -> dict:
    """The estimate as the cost report `estimated` writes it (its spend tables' cells, the
    sums of their parts as written at the store's scale): "jobs", by job, its row where
    every day of it is compared, else the sum of its compared days' cells; "days", by
    (day, job), the sum of that day's cells of the job (one per cloud); "not_covered", the
    report's spend as written less what was compared. {} where it has no scale."""
    if estimated.scale is None or not estimated.rows.get("jobs"):
        return {}
    places = estimated.scale.usd
    tables = estimated.tables()
    _, day_cells = shown_rows("days", tables)
    _, job_cells = shown_rows("jobs", tables)
    days: dict = {}
    whole: dict = {}
    for row, cell, seen in zip(estimated.rows["days"], day_cells, compared, strict=True):
        key = (pd.Timestamp(row["day"]), row["job_id"])
        if seen:
            days[key] = round(days.get(key, 0.0) + as_written(float(cell["usd"]), places),
                              places)
        whole[row["job_id"]] = whole.get(row["job_id"], True) and bool(seen)
    jobs: dict = {}
    for row, cell in zip(estimated.rows["jobs"], job_cells, strict=True):
        job = row["job_id"]
        jobs[job] = (as_written(float(cell["usd"]), places) if whole.get(job, False) else
                     sum_as_written([v for (_, j), v in days.items() if j == job], places))
    spend = sum_as_written([c["usd"] for c in job_cells], places)
    compared_sum = sum_as_written([v for v in jobs.values() if v == v], places)
    return {"jobs": jobs, "days": days,
            "not_covered": no_noise(round(spend - (compared_sum if compared_sum == compared_sum
                                                   else 0.0), places))}


def _days(estimate: pd.DataFrame, lines: pd.DataFrame, names: dict) -> pd.DataFrame:
    keys = ["day", "job_id"]
    est = (estimate.groupby(keys)[["compute_usd", "egress_usd", "usd"]].sum()
           .rename(columns={"compute_usd": "est_compute", "egress_usd": "est_egress",
                            "usd": "estimated_usd"}))
    billed = lines.assign(day=lines["usage_start"].dt.floor("D"),
                          job_id=lines["job_id"].astype("int64"),
                          item=lines["category"].map(_BILLED).fillna("other_usd"))
    by_item = billed.pivot_table(index=keys, columns="item", values="usd", aggfunc="sum")
    counts = billed.pivot_table(index=keys, columns="item", values="usd", aggfunc="count")
    frame = est.join(by_item, how="outer").join(counts.add_prefix("n_"), how="outer")
    for column in ("est_compute", "est_egress", "estimated_usd", "compute", "egress",
                   *(c for c in ITEMS if c not in ("compute_usd", "egress_usd")),
                   "n_compute", "n_egress"):
        frame[column] = frame[column].astype(float).fillna(0.0) if column in frame else 0.0
    frame["billed_usd"] = frame[["compute", "egress", "storage_usd", "tax_usd", "credits_usd",
                                 "rounding_usd", "other_usd"]].sum(axis=1)
    frame["rounding_usd"] = frame["rounding_usd"].astype(float)
    for item, billed_col, est_col in (("compute_usd", "compute", "est_compute"),
                                      ("egress_usd", "egress", "est_egress")):
        gap = frame[billed_col] - frame[est_col]
        tolerance = ROUNDING_PER_LINE * frame[f"n_{billed_col}"].clip(lower=1)
        small = gap.abs() <= tolerance
        frame[item] = gap.where(~small, 0.0)
        frame["rounding_usd"] += gap.where(small, 0.0)
    frame["difference_usd"] = (frame["billed_usd"] - frame["estimated_usd"]).map(no_noise)
    frame = frame.reset_index()
    frame["name"] = frame["job_id"].map(names)
    frame["day"] = pd.to_datetime(frame["day"], utc=True)
    return frame.sort_values(keys, ignore_index=True)[DAY_COLUMNS].astype(
        {c: float for c in DAY_COLUMNS[3:]})


def _job_table(days: pd.DataFrame, threshold: float) -> pd.DataFrame:
    sums = days.groupby(["job_id", "name"])[DAY_COLUMNS[3:]].sum().reset_index()
    sums["difference_usd"] = sums["difference_usd"].map(no_noise)  # days' +0.1 and -0.1
    estimated = sums["estimated_usd"]
    sums["difference_share"] = sums["difference_usd"] / estimated.where(estimated > 0)
    sums["flagged"] = np.where(estimated > 0,
                               sums["difference_usd"].abs() > threshold * estimated,
                               sums["billed_usd"].abs() >= 0.01)
    return sums[JOB_COLUMNS].astype({"flagged": bool})


def _unmatched(lines: pd.DataFrame, left: pd.Series) -> pd.DataFrame:
    """Per cloud and category, the lines matched to no job and their USD (of a shared line,
    what the jobs' shares left)."""
    lines = lines.assign(usd=lines["id"].map(left).fillna(lines["usd"]))
    if lines.empty:
        return pd.DataFrame(columns=UNMATCHED_COLUMNS).astype({"lines": int, "usd": float})
    out = lines.groupby(["cloud", "category"]).agg(lines=("usd", "size"), usd=("usd", "sum"))
    return out.reset_index()[UNMATCHED_COLUMNS]


def _shares(bills: BillStore, names: dict, since: pd.Timestamp | None, until: pd.Timestamp
            ) -> tuple[pd.DataFrame, pd.Series]:
    """The jobs' shares of the account charges naming no resource that overlap the period
    (as lines: usage_start on the day of the usage that earns them, job_id, category, usd),
    and per such line, the USD no job's share took."""
    overlapping = bills.lines(until=until.to_pydatetime(),
                              ending_after=None if since is None else since.to_pydatetime())
    shared = overlapping[overlapping["placement_id"].isna()
                         & (overlapping["resource_id"].str.strip() == "")
                         & overlapping["category"].isin(SHARED)
                         & overlapping["currency"].str.upper().isin(["USD", ""])]
    columns = ["usage_start", "job_id", "category", "usd"]
    if shared.empty:
        return pd.DataFrame(columns=columns), pd.Series(dtype=float)
    base = bills.lines(since=shared["usage_start"].min().to_pydatetime(),
                       until=shared["usage_end"].max().to_pydatetime())
    base = base[base["category"].isin(USAGE) & base["currency"].str.upper().isin(["USD", ""])]
    rows, left = [], {}
    # One share per span of the account: its tax, credit and rounding lines together.
    for (cloud, account, start, end), lines in shared.groupby(
            ["cloud", "account", "usage_start", "usage_end"]):
        usage = base[(base["cloud"] == cloud)
                     & ((base["account"] == account) if account else True)
                     & (base["usage_start"] >= start)
                     & (base["usage_start"] < max(end, start))]
        total = float(usage["usd"].sum())
        if total <= 0:
            continue
        matched = usage[usage["job_id"].notna()]
        kept = 1 - float(matched["usd"].sum()) / total
        left.update({i: usd * kept for i, usd in zip(lines["id"], lines["usd"], strict=True)})
        ours = matched[matched["job_id"].isin(list(names))
                       & (matched["usage_start"] < until)
                       & ((matched["usage_start"] >= since) if since is not None else True)]
        earned = ours.groupby([ours["usage_start"].dt.floor("D"), "job_id"])["usd"].sum()
        charged = lines.groupby("category")["usd"].sum()
        rows += [(day, job, category, usd * part / total)
                 for (day, job), part in earned.items() for category, usd in charged.items()]
    return pd.DataFrame(rows, columns=columns), pd.Series(left, dtype=float)
