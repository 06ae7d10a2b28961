"""Why a job has no plan when even its fastest offering misses its deadline, in one line
whose figures agree: the deadline as a user writes it, and what the fastest needs, which is
the deadline it would meet; and an offering its filters leave out that would meet it, or
one sooner, with the key of the filter that leaves it out. Every hours figure of the line
reads at one precision (the most any of them takes), and the figures that rest on an
estimated speed are marked and said once, after the first of them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from costsched.amounts import decimals, hours
from costsched.lazy import pandas as pd
from costsched.model import Constraints
from costsched.optimize.job import Workload
from costsched.optimize.no_plan_keys import change
from costsched.optimize.rank import zone_allowed
from costsched.optimize.unmatched_estimates import estimate_said, estimates_said
from costsched.vocabulary import word

__all__ = ["LeftOut", "deadline_missed", "deadline_said", "faster_left_out", "fastest_missed"]


@dataclass(frozen=True)
class LeftOut:
    """An offering a job's GPU model, GPU count or market filters leave out that would
    meet its deadline (`meets`: 'this one ...'), or one sooner than the fastest it allows
    ('one at least 7.25 h from now ...'): its offering, its expected hours (its start
    counted in them), how allowing it is said ('with 8 GPUs allowed by
    constraints.gpu_counts in job.yaml') and the mark of hours that rest on an estimated
    speed (`row`: its row of the ranking, whose estimate the line's footnote says)."""

    offering: str
    hours: float
    allowed: str
    meets: bool
    mark: str = ""
    row: Any = None

    def places(self, deadline_hours: float) -> int:
        """The decimals its hours take alone: a sooner deadline's, those that read above
        the deadline missed and as the deadline it would meet (`_places_needed`)."""
        return (decimals([self.hours]) if self.meets
                else _places_needed(self.hours, deadline_hours))

    def said(self, places: int, footnote: str = "") -> str:
        """Its words, its hours at `places` decimals, `footnote` after them (the line's
        words of its estimates, when its figure is the first marked)."""
        if self.meets:
            return (f"this one {self.allowed} ({self.offering} needs "
                    f"{hours(self.hours, places)}{self.mark} h{footnote})")
        need = hours(_met(self.hours, places), places)  # one figure: its need, the deadline met
        return (f"one at least {need}{self.mark} h from now {self.allowed} ({self.offering} "
                f"needs {need}{self.mark} h{footnote})")


def fastest_missed(job: Workload, ranked: pd.DataFrame, fastest: pd.Series, key: str) -> str:
    """The planner's line for `job`, whose `fastest` allowed offering (a row of `ranked`)
    misses its deadline: `deadline_missed`, with the offering its filters leave out
    (`faster_left_out`) and one footnote for the estimates of both (`key`: where the job's
    file sets the deadline)."""
    deadline = float(job.job.constraints.deadline_hours)  # type: ignore[arg-type]
    left = faster_left_out(ranked, deadline, job)
    start = float(fastest["start_hours"])
    rows = [fastest, *([left.row] if left is not None else [])]
    footnote = estimates_said([(job, row) for row in rows])[1]
    return deadline_missed(job.name, deadline, str(fastest["offering"]),
                           float(fastest["expected_hours"]) - start, start,
                           (estimate_said(job, fastest)[0], footnote), left, key)


def deadline_missed(name: str, deadline_hours: float, fastest: str, needs_hours: float,
                    start_hours: float = 0.0, estimate: tuple[str, str] = ("", ""),
                    left_out: LeftOut | None = None, key: str = "") -> str:
    """Why a job has no plan when even its fastest offering finishes too late: the deadline
    as the job gives it, in a readable unit (`deadline_said`: '2 h', '0.5 h', '5 min'), the
    need (its expected hours and its first start, `start_hours`) with the places it takes
    to read above the deadline and to be the deadline it would meet, one figure for both
    ('2.413 h', not '2.41 h' then 'at least 2.42 h'). `estimate`: the mark of the fastest's
    hours where they rest on an estimated speed, and the words that say the line's
    estimates (`unmatched_estimates.estimates_said`), once, after the first marked figure;
    the start's hours rest on none. Then the fix: that deadline, with `key` (where the
    job's file sets it: 'constraints.deadline in job.yaml'), and `left_out`
    (`faster_left_out`): an offering its filters leave out that would meet this one, or a
    sooner one. Every hours figure at one precision, the most any of them takes."""
    total = needs_hours + start_hours
    places = max(_places_needed(total, deadline_hours),
                 left_out.places(deadline_hours) if left_out is not None else 0)
    need = _met(total, places)  # met at that
    if left_out is not None and not left_out.meets and _met(left_out.hours, places) >= need:
        left_out = None  # no sooner deadline, as the line reads it: no way to one
    needs = hours(need, places)
    boot = hours(start_hours, places)
    run = hours(need - float(boot.replace(",", "")), places)  # the parts add up to the need
    mark, said = estimate
    here, there = (said, "") if mark or left_out is None or not left_out.mark else ("", said)
    start = f" ({run}{mark} h to run and {boot} h to start)" if start_hours else ""
    fix = (f"; it would meet a deadline at least {needs}{mark} h from now"
           + (f" ({key})" if key else "")
           + (f", or {left_out.said(places, there)}" if left_out is not None else ""))
    return (f"job {name} cannot meet its deadline of {deadline_said(deadline_hours, places)} "
            f"on any allowed offering: the fastest, {fastest}, needs {needs}{mark} h"
            f"{start}{here}{fix}")


def _met(total: float, places: int) -> float:
    """`total` hours rounded up at `places` decimals: the deadline it would meet."""
    return math.ceil(total * 10 ** places - 1e-7) / 10 ** places


MOST_PLACES = 6  # of hours a missed deadline's need takes to read above it
AGREED_PLACES = 4  # the most it takes to read, rounded, as the deadline it would meet


def _places_needed(total: float, deadline_hours: float) -> int:
    """The places (2 at least) at which `total` hours read above the deadline (up to
    MOST_PLACES) and, rounded to the nearest, as the deadline it would meet, rounded up
    (up to AGREED_PLACES: 1.3334 h, not 1.33 h then 1.34 h, for 4/3 h)."""
    places = 2
    while places < MOST_PLACES and round(total, places) <= deadline_hours:
        places += 1
    while places < AGREED_PLACES and round(total, places) < total - 1e-9:
        places += 1
    return places


def deadline_said(deadline_hours: float, places: int = 2) -> str:
    """A deadline in hours as a user would write it: '2 h', '0.5 h', '1.25 h' where two
    decimals give it, else whole minutes ('5 min', '80 min'), else as written where a few
    digits write it ('0.001 h'), else the hours at `places` decimals (more where those
    read as zero) rounded down, so that it never reads above a need shown at `places`."""
    if abs(deadline_hours * 100 - round(deadline_hours * 100)) < 1e-6:
        return f"{round(deadline_hours, 2):,g} h"
    minutes = deadline_hours * 60
    if abs(minutes - round(minutes)) < 1e-6:
        return f"{round(minutes):,} min"
    typed = f"{deadline_hours:,.4g}"
    if "e" not in typed and float(typed.replace(",", "")) == deadline_hours:  # 0.001, 1.125
        return f"{typed} h"
    while places < MOST_PLACES and math.floor(deadline_hours * 10 ** places) == 0:
        places += 1  # never '0.00 h' for a deadline of a few seconds
    if math.floor(deadline_hours * 10 ** places) == 0:
        return f"{deadline_hours * 3600:.2g} s"
    return f"{hours(math.floor(deadline_hours * 10 ** places) / 10 ** places, places)} h"


# The filters a faster offering may be left out by: how its allowing one is said, and the
# filter's field (its key: `no_plan_keys.key`).
_WIDER = {"market": (lambda r: word(str(r["market"])), "markets"),
          "gpu_model": (lambda r: str(r["gpu_model"]), "gpu_models"),
          "gpu_count": (lambda r: f"{int(r['gpu_count'])} GPUs", "gpu_counts")}
_LEFT_OUT = [f"{column} not allowed" for column in _WIDER]


def faster_left_out(ranked: pd.DataFrame, deadline_hours: float,
                    job: Workload | None = None) -> LeftOut | None:
    """The cheapest offering that a job's GPU model, GPU count or market filters leave out
    and that would meet its deadline (its expected hours, its start counted in them:
    'this one with 8 GPUs allowed by constraints.gpu_counts in job.yaml (aws us-west-2
    p3.16xlarge on-demand needs 1.9 h)'); else, where one of those is faster than the
    fastest the job allows, of the GPU models it allows, the fastest of them ('one at least
    7.25 h from now with 4 GPUs allowed by ...'); None when none is faster. Its hours are
    marked where they rest on an estimated speed (`job`'s). `job`: whose filters it fails
    are each said, with their keys in its file (else the first that leaves it out)."""
    wider = ranked[ranked["excluded"].isin(_LEFT_OUT) & ranked["expected_hours"].notna()]
    if job is not None:  # (those its other filters leave out too are no way to a plan)
        wider = wider[_within_others(wider, job.job.constraints)]
    rows = wider[wider["expected_hours"] <= deadline_hours]
    if not rows.empty:
        return _left_out(rows.loc[rows["expected_cost"].idxmin()], job, meets=True)
    allowed = ranked.loc[ranked["excluded"].isin(["", "misses deadline", "over budget"]),
                         "expected_hours"].dropna()
    models = job.job.constraints.gpu_models if job is not None else ()
    if models:  # of its own GPUs: the prices its plan reads (a launch reads every one)
        wider = wider[wider["gpu_model"].isin(list(models))]
    if allowed.empty or wider.empty:
        return None
    row = wider.loc[wider["expected_hours"].idxmin()]
    if float(row["expected_hours"]) >= float(allowed.min()):
        return None
    return _left_out(row, job, meets=False)


def _left_out(row: pd.Series, job: Workload | None, meets: bool) -> LeftOut:
    mark = estimate_said(job, row)[0] if job is not None else ""
    return LeftOut(str(row["offering"]), float(row["expected_hours"]), _allowed(row, job),
                   meets, mark, row)


def _within_others(rows: pd.DataFrame, c: Constraints) -> pd.Series:
    """The offerings of `rows` that the job's filters other than `_WIDER`'s allow."""
    ok = pd.Series(True, index=rows.index)
    if c.instance_types:
        ok &= rows["instance_type"].isin(list(c.instance_types))
    if c.zones:
        ok &= zone_allowed(rows, c.zones)
    if c.max_price_per_hour is not None:
        ok &= rows["usd_per_hour"] <= c.max_price_per_hour
    return ok


def _allowed(row: pd.Series, job: Workload | None) -> str:
    """'with V100 and 8 GPUs allowed by constraints.gpu_models and constraints.gpu_counts
    in job.yaml': each of the job's filters the offering fails (a market, a GPU model, a
    GPU count), with their keys ('with 8 GPUs allowed': the first it fails, without a
    job)."""
    first = str(row["excluded"]).removesuffix(" not allowed")
    if job is None:
        return f"with {_WIDER[first][0](row)} allowed"
    c = job.job.constraints
    failed = [column for column, accepted in (("market", c.markets),
                                              ("gpu_model", c.gpu_models),
                                              ("gpu_count", c.gpu_counts))
              if accepted and row[column] not in accepted] or [first]
    return (f"with {' and '.join(_WIDER[f][0](row) for f in failed)} allowed "
            + change(job, [_WIDER[f][1] for f in failed], "by").replace(" or ", " and "))
