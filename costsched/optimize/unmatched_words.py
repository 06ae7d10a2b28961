"""What a "no plan" says of a job's shape, place and market (`unmatched`), and the filters
that pick the offerings of each from a frame of prices: one wording, one filter, for each
class of "no offering" and for the price-missing words (`unmatched_prices`).

Pure: frames in, words out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from costsched.amounts import stored_price
from costsched.lazy import pandas as pd
from costsched.model import Constraints
from costsched.optimize.rank import zone_allowed

SHOWN = 3  # offerings named as what exists instead
VALUES_SHOWN = 12  # values named as those priced


@dataclass(frozen=True)
class Missing:
    """What no priced offering has (`what`), what exists instead, and how to get it."""

    what: str
    instead: list[str] = field(default_factory=list)
    fix: str = ""
    dropped: list[str] = field(default_factory=list)  # a task's alternatives left out
    # The key of the job's file that gets it a plan ('change constraints.regions in
    # job.yaml', `no_plan_keys.change`): said of the job, not of a shape of its set.
    change: str = ""

    def line(self, job: str) -> str:
        """The one line `plan` and `launch` print: 'job NAME: what; instead; fix; change',
        then the task's alternatives dropped as it was read ('note: ...')."""
        return "; ".join([f"job {job}: {self.what}", *self.instead,
                          *filter(None, [self.fix, self.change]),
                          *(f"note: {d}" for d in self.dropped)])

    def why(self) -> str:
        """'what; instead; fix; change': why, with what exists and how to get it."""
        return "; ".join([self.what, *self.instead, *filter(None, [self.fix, self.change])])

    def note(self, shape: str) -> str:
        """A shape of a job's set left out: 'A100:1 left out: what; instead; fix'."""
        return "; ".join([f"{shape} left out: {self.what}", *self.instead,
                          *filter(None, [self.fix])])



# --- filters -------------------------------------------------------------------------------


def in_shape(frame: pd.DataFrame, c: Constraints, cpu: bool = False) -> pd.Series:
    """The offerings of the shape asked: CPU instance types (no GPU) for CPU work."""
    ok = (frame["gpu_count"].fillna(0) == 0) if cpu else pd.Series(True, index=frame.index)
    for column, accepted in (("gpu_model", c.gpu_models), ("gpu_count", c.gpu_counts),
                             ("instance_type", c.instance_types)):
        if accepted:
            ok &= frame[column].isin(list(accepted))
    return ok


def in_place(frame: pd.DataFrame, c: Constraints) -> pd.Series:
    ok = pd.Series(True, index=frame.index)
    for column, accepted in (("cloud", c.clouds), ("region", c.regions)):
        if accepted:
            ok &= frame[column].isin(list(accepted))
    if c.zones:
        ok &= zone_allowed(frame, c.zones)
    return ok


def in_market(frame: pd.DataFrame, c: Constraints) -> pd.Series:
    return (frame["market"].isin(list(c.markets)) if c.markets
            else pd.Series(True, index=frame.index))



# --- words ---------------------------------------------------------------------------------


def shape_words(c: Constraints, market: pd.DataFrame, cpu: bool) -> str:
    """'A100:1', 'A100:1 or V100:1', 'p3.2xlarge', 'a CPU instance type'."""
    if cpu:
        return "CPU instance types" + (f" {named_types(c.instance_types)}"
                                       if c.instance_types else "")
    if c.gpu_models:
        counts = c.gpu_counts
        if c.instance_types:  # the pairs the instance types have, as the catalog says
            typed = market[market["instance_type"].isin(list(c.instance_types))]
            pairs = sorted({f"{g}:{int(n)}" for g, n in zip(typed["gpu_model"],
                                                              typed["gpu_count"], strict=True)
                            if g in c.gpu_models and (not counts or int(n) in counts)})
            if pairs:
                return " or ".join(pairs)
        if counts:
            return " or ".join(f"{g}:{n}" for g in c.gpu_models for n in counts)
        return " or ".join(c.gpu_models)
    if c.instance_types:
        return named_types(c.instance_types)
    if c.gpu_counts:
        return " or ".join(f"{n} GPUs" for n in c.gpu_counts)
    return "a GPU instance type"


def named_types(types: Sequence[str]) -> str:
    """'p3.2xlarge or g4dn.xlarge', 'c6i.2xlarge, c6i.4xlarge, ... (15 in all)'."""
    types = sorted(types)
    if len(types) <= 3:
        return " or ".join(types)
    return ", ".join(types[:3]) + f", ... ({len(types)} in all)"


def where_words(c: Constraints) -> str:
    parts = [*c.clouds, *c.regions, *c.zones]
    return "in " + ", ".join(parts) if parts else ""


def is_number(text: str) -> bool:
    """Whether `text` is a number (GPU counts list in numeric order: 2 before 16)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def values_listed(values: Sequence[str]) -> str:
    return ", ".join(values[:VALUES_SHOWN]) + (f", ... ({len(values)} in all)"
                                               if len(values) > VALUES_SHOWN else "")


def offerings_said(rows: pd.DataFrame) -> str:
    """The first few offerings of `rows` priced: 'gcp us-central1 a2-highgpu-1g $3.67/h, ...'."""
    shown = [f"{r.cloud} {r.zone or r.region} {r.instance_type} {stored_price(r.usd_per_hour)}/h"
             for r in rows.head(SHOWN).itertuples()]
    return ", ".join(shown) + (f" ({len(rows)} in all)" if len(rows) > SHOWN else "")


def counts_priced(c: Constraints, market: pd.DataFrame) -> list[str]:
    """Each GPU model asked at the counts priced on the job's clouds (else any that do)."""
    out = []
    for g in c.gpu_models:
        rows = market[market["gpu_model"] == g]
        own = rows[rows["cloud"].isin(list(c.clouds))] if c.clouds else rows
        rows = own if not own.empty else rows
        counts = sorted({int(n) for n in rows["gpu_count"]})
        if counts:
            on = f" on {', '.join(sorted(set(rows['cloud'].astype(str))))}" if c.clouds else ""
            out.append(f"{g} is priced at {', '.join(map(str, counts))} "
                       f"{'GPU' if counts == [1] else 'GPUs'}{on}")
    return out


