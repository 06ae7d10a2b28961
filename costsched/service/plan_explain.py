"""Lines of `plan --explain` that say what its figures are of: the work's hours (hours of
work on the job's reference GPU, or its steps, and the hours they take on the offering
explained), what a gang's nodes do to its price and its preemption rate, and how old the
price its cost is multiplied by is."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from costsched.amounts import MAX_DECIMALS, stored_price
from costsched.optimize.decision import MovePrice
from costsched.optimize.job import Workload
from costsched.price_ages import Stale, newer
from costsched.work import CPU_REFERENCE


def work_line(job: Workload, row: Mapping[str, Any], work_hours: str) -> str:
    """'work: 10 h of work on 1xV100, the job's reference GPU (196,488 steps at 5.458
    steps/s there), take 33.59 h on this offering's 1xT4 at 1.625 steps/s'; `work_hours`:
    the offering's work hours as the expected hours' line writes them."""
    nodes = int(row.get("nodes") or 1)
    gpus = ((f"{nodes} nodes x " if nodes > 1 else "")  # as the plan's table says them
            + (f"{int(row['gpu_count'])}x{row['gpu_model']}" if int(row.get("gpu_count") or 0)
               else "CPU instance"))
    speed = float(row["steps_per_second"])
    work = getattr(job, "work", None)  # a job spec's ResolvedJob says how its work was said
    if work is None or work.hours is None:
        return (f"work: {job.job.steps:,.0f} steps at {speed:.4g} steps/s on this offering's "
                f"{gpus}: {work_hours} h")
    if work.reference == CPU_REFERENCE:
        return f"work: {work.describe()}, the same on any CPU instance: {work_hours} h here"
    said = f"work: {work.describe()}, the job's reference GPU"
    if work.relative:  # speeds relative to the reference: 1 = as fast
        return (f"{said}, take {work_hours} h on this offering's {gpus}, which does "
                f"{speed:.4g} h of that work in an hour")
    count, _, gpu = work.reference.partition("x")
    there = job.table.get(job.job.model, gpu, int(count)).steps_per_second
    return (f"{said} ({job.job.steps:,.0f} steps at {there:.4g} steps/s there), take "
            f"{work_hours} h on this offering's {gpus} at {speed:.4g} steps/s")


# The assumed hour's unit in an estimate's basis ('A10G from L4 (1 steps/s at 1 GPU, an
# assumed hour of work) x 1.44 ...'): one second of the reference's work, no speed.
_ASSUMED_UNIT = re.compile(r"\([0-9.]+ steps/s at [^,()]+, an assumed hour of work\)")


def speed_line(job: Workload, row: Mapping[str, Any], kind: str) -> str:
    """'throughput 5.458 steps/s (measured or published): ...'; for a job whose work is
    assumed, its speed against the reference GPU, whose figure is the assumed hour's unit
    (a second of work there), no steps/s anyone saw."""
    speed, source = float(row["steps_per_second"]), str(row.get("throughput_source", ""))
    work = getattr(job, "work", None)
    if work is None or not work.assumed:
        return f"throughput {speed:.4g} steps/s ({kind}): {source}"
    unit = (f"(the assumed hour of work on {work.on()}, whose unit is a second of work "
            "there: no speed anyone measured)")
    return (f"speed {speed:.4g}, the work done in an hour against {work.on()} "
            f"({kind}): {_ASSUMED_UNIT.sub(unit, source)}")


def booting_none_line(job: Workload) -> str:
    """Where the launcher boots no instance (`start_left_out`), the one line for its start
    and restarts: none there, and what a cloud launcher would count ('' elsewhere): 'start
    and restarts: none (the local launcher boots no instance, ...); on a cloud launcher its
    first start, 0.3 h, comes on top, once, at the offering's $/h, and each restart takes
    0.3 h'."""
    from costsched.own_budget import span

    if not job.start_left_out:
        return ""
    cloud = job.launched_by("")
    first, again = span(cloud.start_hours), span(cloud.restart_hours)
    counted = (f"its first start, {first}, comes on top, once, at the offering's $/h, and "
               f"each restart takes {again}" if job.work_assumed else
               f"its first start, {first}, and each restart, {again}, count in the expected "
               "hours")
    return f"start and restarts: none ({job.start_left_out}); on a cloud launcher {counted}"


def start_line(job: Workload, shown: str) -> str:
    """The job's start as the expected hours count it (`shown`: as that line writes it),
    in `own_budget.start_words`'s words; for assumed work, left out of the per-work-hour
    figure: its hours come on top, once, at the offering's $/h (as the plan's table
    says)."""
    from costsched.own_budget import start_words

    if not getattr(job, "work_assumed", False):
        return f"start: {start_words(job, shown)}"
    return (f"left out of this per-work-hour figure: its start, {start_words(job)}; it "
            "comes on top, once, at the offering's $/h")


def gang_line(row: Mapping[str, Any]) -> str:
    """What a gang of N nodes does to the figures explained: its $/h and its preemption rate
    are N times one instance's (the first of its instances preempted stops it); '' for one
    node."""
    nodes = int(row.get("nodes") or 1)
    if nodes < 2:
        return ""
    price, rate = float(row["usd_per_hour"]), float(row["preemptions_per_hour"])
    return (f"{nodes} nodes: the gang's $/h is {nodes} x one instance's ({nodes} x "
            f"{stored_price(price / nodes)}/h = {stored_price(price)}/h), and its preemption rate "
            f"{nodes} x one instance's ({nodes} x {rate / nodes:.4g}/h = {rate:.4g}/h: the "
            "first of its instances preempted stops it)")


# A spot offering's preemption rate that is its cloud's default alone: no published signal
# and no observation speaks for it. Marked where it stands, and its note says what gives a
# real one.
RATE_MARK = "~"
REAL_RATES = ("`costsched risk import FILE --kind advisor|placement|eviction` stores the "
              "clouds' published signals (`costsched risk show` lists them), and "
              "preemptions observed (costsched's own jobs on a cloud, `costsched prices "
              "import` of traces, `plan --availability LOG`) correct the rate")


def rate_assumed(row: Mapping[str, Any]) -> bool:
    """Whether an offering's preemption rate is assumed: a spot offering's whose basis is
    its cloud's default ('aws default'), nothing published or observed for it."""
    return (str(row.get("market")) == "spot"
            and str(row.get("preemption_basis", "")).strip() == f"{row.get('cloud')} default")


def assumed_rate_line(row: Mapping[str, Any], where: str = "") -> str:
    """`plan --explain`'s line for an assumed rate ('' for one that is not); `where`: ' on
    a cloud' where the local launcher met preemptions there (`hazard.simulated_words`)."""
    if not rate_assumed(row):
        return ""
    return (f"the rate is assumed: the {row['cloud']} default, nothing published or observed "
            f"{where.strip() + ' ' if where else ''}for this offering; {REAL_RATES}")


def cost_line(span: str, rate: str, cost: str, old: Stale | None) -> str:
    """'expected cost = 0.021 h x $0.07962/h = $0.0017', then where the price is older than
    `prices.stale_after` (`old`), its age and what brings a newer one of its cloud, in the
    words of the plan's note."""
    line = f"expected cost = {span} h x {rate}/h = {cost}"
    return line if old is None else f"{line}; {old.note()}: {newer(old.clouds)}"


def move_line(source: str, move: MovePrice, size_gb: float, size_key: str = "") -> str:
    """'a move here from X: $0.3466 (egress $0.0000 for 0.2 GB, restart $0.1733, lost work
    $0.1733, overlap $0.0000)': at the cost line's precision (MAX_DECIMALS), the items
    adding up to the total as written (`reasons.move_items`). `size_key`: the key that
    gives the checkpoint's size where the job's file gives none: the egress is then said
    to be of no size given, never of '0 GB'."""
    from costsched.service.jobs.reasons import move_items

    if not size_key:
        return f"a move here from {source}: {move_items(move, MAX_DECIMALS, f'for {size_gb:g} GB')}"
    return (f"a move here from {source}: {move_items(move, MAX_DECIMALS)}; the checkpoint's "
            f"size is not given, so no egress is counted: {size_key} gives it")
