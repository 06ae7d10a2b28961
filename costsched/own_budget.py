"""A job's own budget as it stands, one fact read in one place: the amount `start --budget`
last gave it (kept in its events: its spec stays as it was launched), else its spec's
`constraints.budget`. `status`, `report`, the dashboard, the API, a start's and a
recovery's placement and the watch's cap check all read it here, with what the job spent
against it (`spent`: its compute on each of its nodes and its checkpoint's egress at each
move, from the stored prices)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from costsched import checkpoint_sizes
from costsched.amounts import (
    MAX_DECIMALS,
    NOISE,
    apart,
    decimals,
    decimals_kept,
    given,
    stored_price,
    usd,
)
from costsched.costs import charge, egress_rows, job_costs
from costsched.model import InvalidInput
from costsched.store import PriceStore
from costsched.store.job_rows import JobRecord, PlacementRow

if TYPE_CHECKING:
    from costsched.jobspec import ResolvedJob
    from costsched.optimize.job import Workload
    from costsched.rest_cost import RestCost

RAISED = "raised to $"  # how a budget event says `start --budget` set the budget
OWN = "its own budget"  # how a job's own budget is named in words (a named one: "budget X")
NOT_MOVED = "; not moved: "  # a stop of a job its cap was to move: '...; not moved: WHY'
_STOPPED_AT = "stopped at "  # how a stop at a budget's cap is recorded: 'stopped at OWN: ...'


def called(name: str | None) -> str:
    """A budget in words: the job's own (`name` None), else 'budget NAME'."""
    return OWN if name is None else f"budget {name}"


def stopped_at(detail: str | None, job_id: int) -> str | None:
    """The budget whose cap a stop's `detail` says stopped job `job_id`: '' its own (said
    'stopped at its own budget: ...', or formerly 'stopped at budget job N (NAME): ...'), a
    named budget's name, None when no cap stopped it."""
    said = detail or ""
    if said.startswith(f"{_STOPPED_AT}{OWN}") or \
            said.startswith(f"{_STOPPED_AT}budget job {int(job_id)} ("):
        return ""
    if said.startswith(f"{_STOPPED_AT}budget "):
        return said[len(f"{_STOPPED_AT}budget "):].split(": ", 1)[0]
    return None


MOVED_AT = "moved at "  # a move at a cap, in its own words: 'moved at its own budget: ...'


def moved_by_cap(detail: str | None) -> str | None:
    """The budget whose cap made a move, as its `MoveRecord.detail` says it ('to OFFERING;
    moved at its own budget: ...'): 'its own budget' or 'budget NAME'; None for any other
    move."""
    said = (detail or "").partition("; ")[2]
    return said.removeprefix(MOVED_AT).split(": ", 1)[0] if said.startswith(MOVED_AT) \
        else None


def not_moved(detail: str | None) -> str:
    """Why a stop at a cap (its `detail`) did not move the job (`at_cap = "move"`), as the
    stop says it after `NOT_MOVED`; '' when it does not."""
    return (detail or "").partition(NOT_MOVED)[2]


def capped_now(store: PriceStore, records: Sequence[JobRecord]) -> dict[int, str]:
    """The budget whose cap keeps each of `records` stopped now ('' its own, else the
    named budget's name): a job is stopped at a cap while the last change of its state is
    that stop; one started again since (running, succeeded, or stopped otherwise) is not."""
    stopped = [r.id for r in records if r.state == "stopped"]
    said = store.jobs.last_details(stopped, "state") if stopped else {}
    return {j: b for j, detail in said.items() if (b := stopped_at(detail, j)) is not None}


def start_usd(job: ResolvedJob, usd_per_hour: float) -> float:
    """What getting job `job` going is expected to cost: its start as its plan counts it
    (`ResolvedJob.start_hours`) at the offering's `usd_per_hour` (all its nodes). At a launch,
    its first start (boot and set-up, warm-up; no checkpoint to copy); placed again from
    its checkpoint (`resumes`: a `start` after a stop), its restart, the checkpoint's copy
    included. The plan's expected cost counts it once, and so do a launch's budget check
    and line and a start's check and hint, each itemising it (`start_said`)."""
    return job.start_hours * usd_per_hour


def start_words(job: Workload, shown: str | None = None) -> str:
    """What a job's start is and where its figure comes from, in the words `plan`, its
    `--explain`, `--json` and `launch` all use: '0.25 h to get an instance up and the job
    started = 10 min boot and set-up ([migration] restart_minutes) + 5 min warm-up
    ([migration] warmup_minutes)'; for a job placed again from its checkpoint (`resumes`),
    '... and the job going again from its checkpoint = ... + 0.1333 min to copy the 1 GB
    checkpoint ...'. `shown`: the hours as the line they stand in writes them (else a
    span: '0.008 s', never a float's exponent). Where the launcher boots no instance,
    'left out: the local launcher boots no instance (...)'."""
    left_out = getattr(job, "start_left_out", "")
    if left_out:
        return f"left out: {left_out}"
    said = job.start_said()  # 'first start 0.25 h: 10 min boot ...' (the parts, keyed)
    parts = said.partition(": ")[2]
    what = ("going again from its checkpoint" if getattr(job, "resumes", False)
            else "started")
    hours = f"{shown} h" if shown else span(job.start_hours)
    return (f"{hours} to get an instance up and the job {what}"
            + (f" = {parts}" if parts else ""))


def start_said(job: Workload) -> str:
    """Where `start_usd`'s hours come from, as a launch's budget line and a start's hint say
    it: "its start: 0.25 h to get an instance up and the job started = 10 min boot and
    set-up ([migration] restart_minutes) + ..." (`start_words`); "its start left out: the
    local launcher boots no instance (...)" where the launcher boots none."""
    left_out = getattr(job, "start_left_out", "")
    return f"{START_LEFT_OUT}: {left_out}" if left_out else f"its start: {start_words(job)}"


START_LEFT_OUT = "its start left out"  # (a launcher that boots no instance: `start_said`)


def span(hours: float) -> str:
    """A part of a start as it reads best: '0.25 h', '1.5 min', '0.008 s' (never a
    float's exponent)."""
    if hours >= 0.01:
        return f"{hours:.4g} h"
    if hours * 60 >= 0.1:
        return f"{hours * 60:.4g} min"
    return f"{hours * 3600:.2g} s" if hours > 0 else "0 s"


REST_MARGIN_SECONDS = 1.0  # what the charge ahead of a job near its end adds to its rest


def ahead_seconds(interval_seconds: float, rest_seconds: float = math.nan) -> float:
    """The span the watch charges a running job ahead: the next watch interval, or, where
    the job's rest at its pace (`rest_seconds`: its steps left at its measured speed, or
    its plan's where none is measured) takes less, that rest in whole seconds (as it is
    billed) and one more (`REST_MARGIN_SECONDS`); the interval where its rest is not known
    (NaN, or 0: no speed known for it). A job whose spend plus its rest fits its cap runs
    to its end; the rest is charged again at each watch while it runs."""
    if not (math.isfinite(rest_seconds) and rest_seconds > 0):
        return interval_seconds
    whole = math.ceil(round(rest_seconds, 6)) + REST_MARGIN_SECONDS
    return min(interval_seconds, whole)


def rest_now(rest_seconds: float, since_seconds: float, interval_seconds: float) -> float:
    """A running job's rest now at its pace, from its rest at its last step reading
    (`rest_seconds`, read `since_seconds` ago): less the time since that reading, as its
    spend is billed to now (a step read at one watch is 30 s old at the next), credited
    up to one watch interval (`interval_seconds`: a job that reported no step for longer
    is not assumed to have trained meanwhile), and never below its last second (one its
    pace says is at its end but that has not said so is charged as one about to end). A
    rest not known (NaN, 0: no speed known) or not finite stays as it is."""
    if not (math.isfinite(rest_seconds) and rest_seconds > 0):
        return rest_seconds
    credit = min(max(since_seconds, 0.0), interval_seconds)
    return max(rest_seconds - credit, min(rest_seconds, LAST_SECOND))


LAST_SECOND = 1.0  # the least rest `rest_now` leaves a running job whose rest was known


def room(ahead_seconds: float) -> float:
    """The seconds more than its pace takes that a job's rest may run, and the job still
    finish within a budget that holds its spend, its start, its rest at its pace and the
    charge ahead of `ahead_seconds` (`enough_usd`, as a stop's hint gives it): at each
    watch the cap holds its spend and its rest now (`rest_now`) and one second more
    (`ahead_seconds`), billed by the whole second (one more), so the charge ahead less
    those two seconds is the room; the hint adds no other margin for a slower pace."""
    return max(math.floor(ahead_seconds) - REST_MARGIN_SECONDS - 1.0, 0.0)


def ahead_usd(usd_per_hour: float, seconds: float, rest_seconds: float = math.nan) -> float:
    """What the watch charges a running job ahead (`caps.enforce`): its price (all its
    nodes) over the next watch interval of `seconds`, or its rest's (`ahead_seconds`) where
    that is shorter. A job's own budget must hold what it spent, what its rest is expected
    to cost and this charge (`enough_usd`), or the watch stops it: a launch's check
    (`LaunchFit`), a start's and a move's count it as the watch does (`charged_ahead`)."""
    return usd_per_hour * ahead_seconds(seconds, rest_seconds) / 3600


def charged_ahead(usd_per_hour: float, interval_seconds: float,
                  rest_seconds: float = math.nan, configured: float | None = None
                  ) -> tuple[float, str]:
    """What the watch charges a job ahead at `usd_per_hour` (all its nodes) where its rest
    takes `rest_seconds` (`ahead_usd`: the interval, or its rest where that is shorter),
    and that span in words (`ahead_said`; `configured`: the configured interval, where
    `interval_seconds` is the watch's span): one rule for the watch, a launch's check and
    a move's."""
    seconds = ahead_seconds(interval_seconds, rest_seconds)
    return (ahead_usd(usd_per_hour, interval_seconds, rest_seconds),
            ahead_said(seconds, usd_per_hour, configured, rest=seconds < interval_seconds))


def rest_seconds(rest_usd: float, usd_per_hour: float) -> float:
    """The seconds a rest expected to cost `rest_usd` at `usd_per_hour` takes; NaN where
    either is not known."""
    if not (math.isfinite(rest_usd) and usd_per_hour > 0):
        return math.nan
    return rest_usd / usd_per_hour * 3600


def ahead_said(seconds: float, usd_per_hour: float, interval_seconds: float | None = None,
               rest: bool = False) -> str:
    """The span the watch charges ahead and at what price, in words: '30 s at $0.3644/h';
    when the time since the last check was longer than the configured
    `interval_seconds` (a slow pass, which makes the next check as late): '60 s, as long
    as since the last check (the watch interval is 30 s), at $0.3644/h'; `rest`: the span
    is the job's rest (`ahead_seconds`): '2 s, to its end at its pace, at $0.0796/h'."""
    price = f"{stored_price(usd_per_hour)}/h"
    if interval_seconds is not None and seconds > interval_seconds + 0.5:
        return (f"{seconds:.0f} s, as long as since the last check (the watch interval is "
                f"{interval_seconds:g} s), at {price}")
    if rest:
        return f"{seconds:g} s, to its end at its pace, at {price}"
    return f"{seconds:g} s at {price}"


def passes(parts: Sequence[float], cap_usd: float) -> bool:
    """Whether `parts` (what was spent, the charge ahead, ...) summed pass `cap_usd`: by
    more than a float's rounding error (`amounts.NOISE`), as an amount that reaches the
    cap exactly does not pass it ($0.0199 + $0.0049 against $0.0248, though the floats
    add to a hair above it). The one test of a stop at a cap and of a start's check."""
    return math.fsum(parts) - cap_usd > NOISE


def enough_usd(spent_usd: float, rest_usd: float, start_usd: float,
               ahead_usd: float) -> tuple[float, int]:
    """The own budget a job needs to run and finish (the one rule of a launch's check, a
    start's check and their hints, which the watch's cap keeps): what it spent, what its
    steps left are expected to cost, its start and the watch's charge ahead for its next
    interval (`ahead_usd`), rounded up at its decimals (`amounts.decimals`, and two
    significant digits at least); and those decimals."""
    need = spent_usd + rest_usd + start_usd + ahead_usd
    # two significant digits at least, so that rounding up never asks for much more than
    # is needed (0.0109: 0.011, not 0.02)
    least = decimals([need])
    significant = -math.floor(math.log10(need)) + 1 if need > 0 else 0
    places = max(least, min(significant, MAX_DECIMALS))
    amount = float(f"{math.ceil(need * 10 ** places) / 10 ** places:.{places}f}")
    if amount - 10 ** -places >= need:  # the product rounded up a last digit too many
        amount = float(f"{amount - 10 ** -places:.{places}f}")
    while places > least and float(f"{amount:.{places - 1}f}") == amount:  # 0.05, not 0.050
        places -= 1
    return amount, places


@dataclass(frozen=True)
class Pace:
    """The steps a job made in the hours it ran (its placements, end to end: set-up and
    stalls included, so a lower bound of its speed, which prices its rest high enough)."""

    steps: float
    hours: float

    @property
    def per_second(self) -> float:
        return self.steps / (self.hours * 3600)

    def said(self) -> str:
        """'its own 11.7 steps/s (434 steps in 0.0103 h)'."""
        return (f"its own {self.per_second:,.3g} steps/s ({self.steps:,.0f} steps in "
                f"{self.hours:.3g} h)")


def logged_pace(store: PriceStore, record: JobRecord, at: datetime) -> Pace | None:
    """Job `record`'s pace as its record has it: the furthest step it reported (or
    checkpointed) over the hours its placements ran until `at` (the union of their spans:
    a move's two placements at once count once); None before a step or an hour."""
    steps = max(float(record.steps_done or 0.0), float(record.checkpoint_step or 0.0))
    spans = sorted((p.start_at, p.end_at or at) for p in store.jobs.placement_rows([record.id]))
    seconds, reach = 0.0, None
    for start, end in spans:
        start = start if reach is None else max(start, reach)
        if end > start:
            seconds += (end - start).total_seconds()
        reach = end if reach is None else max(reach, end)
    if steps <= 0 or seconds <= 0:
        return None
    return Pace(steps, seconds / 3600)


class Refusal(str):
    """Why a job's budgets do not let it start again, in one line ('job 4 (fit) is at its
    budget: WHY; FIX'), with its `fix` alone: the one command (`costsched start NAME
    --budget N`, the amount that is enough) or configuration key that gives it enough."""

    fix: str

    def __new__(cls, why: str, fix: str) -> Refusal:
        out = super().__new__(cls, f"{why}; {fix}")
        out.fix = fix
        return out


class StartShort(InvalidInput):
    """A start refused for its budgets (`Refusal`): `fix`, what gives it enough."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(str(refusal))
        self.fix = refusal.fix


@dataclass(frozen=True)
class OwnBudget:
    """A job's own budget (`usd`, the whole of its life) and what it spent so far."""

    usd: float
    spent_usd: float

    @property
    def left_usd(self) -> float:
        return self.usd - self.spent_usd


def checked(usd: float) -> float:
    """A budget the user gives (`start --budget`): a positive amount, else InvalidInput."""
    if not usd > 0:
        raise InvalidInput(f"--budget {usd!r}: expected a positive amount of USD")
    return float(usd)


def _spec(stored: Mapping) -> dict:
    return (stored.get("spec") or {}) if isinstance(stored, Mapping) else {}


def of_spec(stored: Mapping) -> float | None:
    """The budget the job's stored spec sets (constraints.budget), or None."""
    budget = (_spec(stored).get("constraints") or {}).get("budget")
    return float(budget) if isinstance(budget, (int, float)) and budget > 0 else None


def checkpoint_gb(stored: Mapping) -> float:
    """The checkpoint size the job declares (what each move copies), 0 when it says none."""
    size = (_spec(stored).get("checkpoint") or {}).get("size_gb")
    return float(size) if isinstance(size, (int, float)) else 0.0


def raised(store: PriceStore, job_ids: Sequence[int] | None) -> dict[int, float]:
    """Each job's own budget as `start --budget` last set it (one read; None: every job's)."""
    rows = store.jobs.event_rows(None if job_ids is None else [int(j) for j in job_ids],
                                 kinds=["budget"])
    return {e.job_id: float(e.detail[len(RAISED):].split(" ", 1)[0].replace(",", ""))
            for e in rows if (e.detail or "").startswith(RAISED)}  # the last wins


def raised_said(usd: float, old: float | None) -> str:
    """The event of a budget `start --budget` set to `usd` (`old`: the one it had, None
    when it had none), both as the user gives budgets ('raised to $0.27 (was $0.10)'):
    `raised` reads it back, so an amount its decimals do not write exactly is written
    whole."""
    written = given(usd)
    if float(written[1:].replace(",", "")) != usd:
        written = f"${usd:.12g}"
    was = "it had none" if old is None else f"was {given(old)}"
    return f"{RAISED}{written[1:]} ({was})"


def raise_budget(store: PriceStore, job_id: int, usd: float, *, at: datetime) -> float:
    """Set job `job_id`'s own budget to `usd` (kept in its events, read by
    `own_budget.budgets`; its spec is as it was launched): a job stopped at its cap can
    then be started again. Returns the old one (NaN: it had none)."""
    record = store.jobs.get(job_id)
    usd = checked(usd)
    old = budgets(store, [record]).get(job_id)
    store.jobs.note(job_id, "budget", raised_said(usd, old), at=at)
    return float("nan") if old is None else old


def budgets(store: PriceStore, records: Sequence[JobRecord], *, every: bool = False
            ) -> dict[int, float]:
    """The own budget as it stands of each of `records` that has one (`every`: `records`
    are all the store's jobs, their events read at once)."""
    if not records:
        return {}
    out = {r.id: b for r in records if (b := of_spec(r.spec)) is not None}
    out.update(raised(store, None if every else [r.id for r in records]))
    return out


def of_job(store: PriceStore, record: JobRecord, at: datetime, nodes: int,
           usd: float | None = None) -> OwnBudget | None:
    """Job `record`'s own budget as it stands (`usd`: as the user gives it now) and what
    its whole life (each of its `nodes`) spent until `at`; None when it has none."""
    usd = budgets(store, [record]).get(record.id) if usd is None else checked(usd)
    if usd is None:
        return None
    placed = store.jobs.placement_rows([record.id])
    found = spent(store, placed, None, at, {record.id: checkpoint_gb(record.spec)},
                  {record.id: nodes})
    return OwnBudget(usd, found.get(record.id, 0.0))


def spent(store: PriceStore, placed: Sequence[PlacementRow], since: datetime | None,
          at: datetime, sizes: Mapping[int, float], nodes: Mapping[int, int]
          ) -> dict[int, float]:
    """Each job's compute (each of its `nodes`) and egress (its checkpoint as measured in
    its store, else its declared `sizes`, copied at each move, once) in [since, at] from
    the stored prices. Over a whole life (`since` None) it is the job's bill to `at`
    (`costs.job_costs`, as `status` and the reports bill it), the same figure: a stop at a
    cap ends its placements at `at` and is then billed what it was decided on."""
    if not placed:
        return {}
    if since is None:
        ids = sorted({p.job_id for p in placed})
        billed = job_costs(store, ids, now=at, placements=placed, nodes=nodes,
                           checkpoint_gb={j: sizes.get(j, 0.0) for j in ids})
        return {int(j): float(cost.total_usd) for j, cost in billed.items()}
    moves = egress_rows(placed, checkpoint_gb={p.job_id: sizes.get(p.job_id, 0.0)
                                               for p in placed},
                        measured=checkpoint_sizes.of_moved(store, placed))
    rows = list(placed)
    if since is not None:  # (none kept: none charged, not a row of NaNs)
        rows = [p._replace(start_at=max(p.start_at, since)) for p in placed
                if (p.end_at or at) > since]
        moves = [m for m in moves if m.at >= since]
    compute: dict[int, list[float]] = {}
    for p, (_, charged, _) in zip(rows, charge(store, rows, now=at, nodes=nodes), strict=True):
        compute.setdefault(p.job_id, []).append(charged)
    out = {j: total(values) for j, values in compute.items()}
    egress: dict[int, list[float]] = {}
    for move in moves:
        egress.setdefault(move.job_id, []).append(move.usd)
    for job_id, values in egress.items():
        out[job_id] = out.get(job_id, 0.0) + total(values)
    return {int(k): float(v) for k, v in out.items()}


def total(values: Sequence[float]) -> float:
    """The sum of `values` (NaN counted as 0) as pandas sums a group's: with a running
    compensation for what each addition rounded away."""
    out = compensation = 0.0
    for value in values:
        if value != value:
            continue
        y = value - compensation
        t = out + y
        compensation = t - out - y
        out = t
    return out


# --- a job's cost against a budget before it starts: `launch`'s check, `plan`'s flag -----

PERCENTILE = 0.95  # the quantile of preemptions a pessimistic cost counts
WORSE_PLACES = 2  # decimals beyond its others a launch line takes to read the two apart


@dataclass(frozen=True)
class LaunchFit:
    """One job against one budget at launch."""

    job: str
    budget: str  # "its own budget" or "budget NAME"
    expected_usd: float
    pessimistic_usd: float
    left_usd: float
    fix: str = ""  # what gives the job more: the key to raise, and where
    start_usd: float = 0.0  # of `expected_usd`: its first start (`own_budget.start_usd`)
    start_said: str = ""  # where its start's hours come from (`own_budget.start_said`)
    # Where the deadline policy places it when not on the plan's first choice, and why
    # (`pick_note`): said in a line before this one.
    placed: str = ""
    # Where its figures rest on an estimated speed or on an assumed amount of work: the
    # mark after them and the words that say so (`budget_launch.rests_on`); ('', '') on
    # given figures.
    estimate: tuple[str, str] = ("", "")
    # What the watch charges it ahead once it runs (`ahead_usd`), and that span in words
    # (`ahead_said`): a budget must hold its cost and this, or the first watch stops it.
    ahead_usd: float = 0.0
    ahead_said: str = ""
    # `expected_usd` itemised: its work, preemptions and start (`rest_cost`); None where
    # the figure is not made of them (a policy's own).
    rest: RestCost | None = None

    @property
    def fits(self) -> bool:
        return self.expected_usd + self.ahead_usd <= self.left_usd

    @property
    def safe(self) -> bool:
        """Whether even the pessimistic cost fits."""
        return self.pessimistic_usd + self.ahead_usd <= self.left_usd

    def enough(self) -> tuple[float, int]:
        """The budget that holds its pessimistic cost and the watch's charge ahead
        (`enough_usd`): launched with it, it fits (its start is in its cost)."""
        return enough_usd(0.0, self.pessimistic_usd, 0.0, self.ahead_usd)

    def places(self) -> int:
        """One precision for the line's amounts, at which a small cost keeps its digits,
        a cost over what is left reads over it and the pessimistic cost over the expected
        one (`apart`)."""
        places = decimals_kept([self.expected_usd, self.pessimistic_usd, self.left_usd,
                                self.start_usd])
        # each cost and the charge ahead, summed as they are written ('$0.0030 + $0.0030'
        # of a $0.006 budget reads as fitting: '$0.00302 + $0.00302' does not)
        over = [[v, self.ahead_usd] for v in (self.expected_usd, self.pessimistic_usd)
                if v + self.ahead_usd > self.left_usd]
        # and a pessimistic cost above the expected one reads above it, where two more
        # decimals show it (a difference below that is no risk worth a longer line: the
        # two then read alike)
        worse = ([apart(self.pessimistic_usd, self.expected_usd, places)]
                 if self.pessimistic_usd > self.expected_usd else [])
        return max([places, *(apart(v, self.left_usd, places) for v in over),
                    *(w for w in worse if w <= places + WORSE_PLACES)])

    def line(self) -> str:
        verdict = ("fits" if self.safe else "may not fit" if self.fits else "does not fit")
        places = self.places()
        mark, words = self.estimate
        expected = usd(self.expected_usd, places) + mark
        start = usd(self.start_usd, places)
        left = given(self.left_usd, places)  # what is left of a budget, at the line's
        said = f"; {self.start_said}" if self.start_said else ""
        started = (f" ({start} of it to start it{said})" if self.start_usd > 0 else
                   f" ({self.start_said})" if self.start_said.startswith(START_LEFT_OUT)
                   else "")  # which start it counts: the launcher's
        if self.rest is not None:  # its parts, the start with them: one bracket
            expected = self.rest.said(places, mark, said if started else "")
            started = ""
        fix = self.fix
        if self.budget == OWN and fix.startswith("raise "):  # its own: to how much
            amount, digits = self.enough()
            fix = f"{fix} to {amount:.{digits}f}"
        return (f"job {self.job}: expected {expected}{started}, pessimistic "
                f"{self.worst_said(places)} against {left} left of {self.budget}: "
                f"{verdict}{words}" + (f"; {fix}" if not self.fits and fix else ""))

    def worst_said(self, places: int | None = None) -> str:
        """'$1.4210 (preemptions at the 95% quantile) + $0.0034 for the first watch
        interval (30 s at $0.4028/h)': the pessimistic cost and, where it weighs on the
        verdict, the watch's charge ahead; the figures a budget is checked by and
        `enough` adds up, in the words of the launch's line and of a plan refused for its
        budget (at `places`, by default the line's `places`)."""
        places = self.places() if places is None else places
        ahead = "".join(f" + {usd(v, places)} for the first watch interval"
                        + (f" ({self.ahead_said})" if self.ahead_said else "")
                        for v in self._ahead())
        return (f"{usd(self.pessimistic_usd, places)}{self.estimate[0]} (preemptions at "
                f"the {PERCENTILE:.0%} quantile){ahead}")

    def _ahead(self) -> list[float]:
        """The watch's charge ahead where the line says it: where it is not safe."""
        return [self.ahead_usd] if self.ahead_usd > 0 and not self.safe else []


def poisson_quantile(mean: float, q: float = PERCENTILE) -> int:
    """The smallest k with P(N <= k) >= q for N ~ Poisson(mean)."""
    if not mean > 0:
        return 0
    k, term = 0, math.exp(-mean)
    total = term
    while total < q and k < 100_000:
        k += 1
        term *= mean / k
        total += term
    return k


def pessimistic_usd(job: ResolvedJob, row: Mapping) -> float:
    """What job `job` costs on a plan's `row` (its offering: `usd_per_hour` of all its
    nodes, `work_hours`, `expected_hours`, `expected_cost`, `preemptions_per_hour`) with
    preemptions at the 95th percentile: over its expected hours, preemptions arrive as a
    Poisson process at the offering's rate, and each costs a restart and the work lost
    since the last checkpoint (half the checkpoint interval). The 95th percentile of that
    count is the smallest k with P(N <= k) >= 0.95; the cost is the work hours plus k
    restarts' hours, and its start (`start_usd`), at the offering's price, never below the
    expected cost. A launch checks each budget by it (`LaunchFit.safe`), and a plan flags
    the offerings it may take over the job's budget by the same rule."""
    expected = float(row["expected_cost"])  # the plan's: its first start counted once
    price = float(row["usd_per_hour"])
    rate = row.get("preemptions_per_hour", 0.0) if hasattr(row, "get") else 0.0
    mean = float(row["expected_hours"]) * float(rate or 0.0)
    each = job.restart_hours + job.checkpoint_hours / 2
    return max(expected, (float(row["work_hours"]) + poisson_quantile(mean) * each) * price
               + start_usd(job, price))
