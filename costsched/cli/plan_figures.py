"""What a plan table's figures rest on, where they stand: the speed column and the work's
columns of `costsched plan`, their marks, and the notes that say what each mark means and
which key or command gives the real figure.

A job's work is steps, hours of work on a reference GPU, or (a SkyPilot task that says
none) an hour assumed on its slowest GPU (`costsched.work`). Assumed work has no total: its
table shows the expected cost of an hour of the reference's work (`$/work-h`), by which the
offerings rank, and says which key gives the work. A speed costsched estimated is marked,
and so are the hours and cost computed from it.
"""

from __future__ import annotations

import shlex

from costsched.amounts import (
    FINEST,
    HOURS_MOST,
    MAX_DECIMALS,
    decimals,
    decimals_kept,
    derived_per_hour,
    finest,
    given,
    hours_all,
    hours_times,
    ratio,
    stored_places,
    stored_prices,
    total_as_written,
    usd,
    usd_all,
)
from costsched.amounts import as_written as written_at
from costsched.amounts import hours as hours_of
from costsched.cli.common import user_text
from costsched.lazy import pandas as pd
from costsched.optimize.job import Workload
from costsched.optimize.unmatched_deadline import deadline_said
from costsched.optimize.unmatched_estimates import ESTIMATED_MARK, steps_estimated
from costsched.price_ages import Stale, newer
from costsched.service.plan_explain import RATE_MARK, REAL_RATES, rate_assumed
from costsched.service.plan_interval import Interval
from costsched.spec_errors import as_written
from costsched.throughput import MEASURED_BY_COSTSCHED, model_key
from costsched.vocabulary import counted, prefixed
from costsched.work import CPU_REFERENCE, Work

MEASURED_MARK = "+"  # a throughput costsched measured on earlier runs
BUDGET_MARK = "!"  # a cost whose pessimistic figure may not fit the job's budget
PER_WORK_HOUR = "$/work-h"  # assumed work: the expected cost of an hour of it


def relative(work: Work | None) -> bool:
    """Speeds are shown against the work's reference (hours of work, no model)."""
    return work is not None and work.hours is not None and (
        work.relative or work.reference == CPU_REFERENCE)


def speed_column(work: Work | None) -> str:
    return "speed" if relative(work) else "steps/s"


def speed_cell(r: object) -> str:
    """A row's speed, marked when estimated or measured by costsched."""
    return (f"{r.steps_per_second:.4g}" + (ESTIMATED_MARK if r.throughput_estimated else "")
            + (MEASURED_MARK if str(r.throughput_source).startswith(MEASURED_BY_COSTSCHED)
               else ""))


def written_places(text: str) -> int | None:
    """The decimals of a figure as a table writes it ('$0.759*': 3), marks aside; None
    for one without decimals."""
    return len(text.partition(".")[2].rstrip("*!~+")) if "." in text else None


def times_line(span: float, usd_per_hour: float, cost: float,
               written: tuple[str, str] | None = None, mark: str = "") -> str:
    """'1.6561 h x $2.8600/h = $4.74': hours times a price making the amount as written
    (`amounts.hours_times`); `written`: (hours, amount) as the table's columns beside it
    write them: their decimals are kept, the hours' where the product reads so; else the
    amount is a cost the user weighs, as the table and launch write it (`decimals_kept`:
    '0.2868 h x $0.07962/h = $0.0228', never '0.29 h x $0.07962/h = $0.02' beside a row
    of $0.0228); `mark` after each figure made from an estimate."""
    hours_places, usd_places = ((None, decimals_kept([cost])) if written is None
                                else map(written_places, written))
    hours, rate, money = hours_times(span, usd_per_hour, cost, usd_places)
    if hours_places is not None and usd(written_at(span, hours_places) * written_at(
            usd_per_hour, stored_places(usd_per_hour)), usd_places) == money:  # the column's
        hours = hours_of(span, hours_places)
    return f"{hours}{mark} h x {rate}/h = {money}{mark}"


def rate_cell(r: object) -> str:
    """A row's preemption rate, marked when assumed (its cloud's default alone)."""
    row = {k: getattr(r, k, None) for k in ("market", "cloud", "preemption_basis")}
    return f"{r.preemptions_per_hour:.3f}" + (RATE_MARK if rate_assumed(row) else "")


def rates_assumed(shown: pd.DataFrame) -> pd.Series:
    """Per row of `shown`, whether its preemption rate is assumed (`rate_assumed`)."""
    read = shown[[c for c in ("market", "cloud", "preemption_basis") if c in shown]]
    return pd.Series([rate_assumed(r) for r in read.to_dict("records")], index=shown.index,
                     dtype=bool)


# What a note on a column the table left out to fit says of it.
HIDDEN = "not shown: --wide shows it"


def rate_note(shown: pd.DataFrame, nodes: int = 1, hidden: bool = False) -> str:
    """What the assumed rate's mark says, and what gives real rates ('' when none is); a
    gang's rate is its `nodes` times the cloud's default for one, said so. `hidden`: the
    table left out its preempt/h column (and the mark with it)."""
    assumed = shown[rates_assumed(shown)] if len(shown) else shown
    if assumed.empty:
        return ""
    firsts = assumed.groupby("cloud", sort=False)["preemptions_per_hour"].first().items()
    def default(cloud: str, rate: float) -> str:
        if nodes == 1:
            return f"{cloud} {rate:.3f}/h"
        # a node's at the decimals at which the product, as written, reads as the table's
        places = next(p for p in (3, 4, 5, 6)
                      if f"{round(rate / nodes, p) * nodes:.3f}" == f"{rate:.3f}")
        return (f"{cloud} {rate / nodes:.{places}f}/h a node x {nodes} nodes = "
                f"{rate:.3f}/h")

    defaults = ", ".join(default(c, r) for c, r in firsts)
    head = (f"assumed preemption rate of the preempt/h column ({HIDDEN})" if hidden
            else f"{RATE_MARK} assumed preemption rate")
    return user_text(f"{head}: the cloud's default ({defaults}), "
                     f"nothing published or observed for the offering; {REAL_RATES}")


def interval_note(interval: Interval | None, shown: pd.DataFrame) -> str:
    """A spot plan's note of a checkpoint interval its job's file does not set: the
    default it assumes and the key that sets it ('' when given, or nothing is spot)."""
    if interval is None or not (shown["market"] == "spot").any():
        return ""
    return user_text(interval.note())


def work_estimated(job: Workload) -> bool:
    """Whether the job's steps rest on an estimated speed: work said as hours on a reference
    GPU whose speed for the model costsched estimated. Every hours and cost figure of its
    plan then rests on that estimate, whatever the speed of the offering (a refusal's too:
    `optimize.unmatched_estimates`)."""
    return steps_estimated(job)


def estimated_figures(shown: pd.DataFrame, job: Workload) -> pd.Series:
    """Per row of `shown`, whether its hours, cost and vs OD V100 rest on an estimate: its
    speed, or the job's steps (`work_estimated`)."""
    return shown["throughput_estimated"].astype(bool) | work_estimated(job)


def vs_cell(r: object, baseline_estimated: bool, estimated: bool | None = None,
            places: int | None = None) -> str:
    """A row's expected cost against the on-demand V100 baseline's, marked when either
    rests on an estimate (`estimated`: the row's figures do, default its speed; '-'
    without a baseline); `places`: its column's decimals (`vs_places`)."""
    value = r.vs_on_demand_v100
    if value != value:
        return "-"
    mine = r.throughput_estimated if estimated is None else estimated
    return ratio(value, places) + (ESTIMATED_MARK if mine or baseline_estimated else "")


def vs_places(shown: pd.DataFrame) -> int:
    """The decimals of the column of `vs_cell`: one precision for its ratios."""
    return decimals(shown["vs_on_demand_v100"].tolist())


def work_columns(work: Work | None) -> list[str]:
    """The columns of what the work costs: hours and total, or per hour of assumed work."""
    return [PER_WORK_HOUR] if work is not None and work.assumed else ["hours", "total $"]


def work_cells(shown: pd.DataFrame, work: Work | None, places: tuple[int, int],
               estimated: pd.Series | None = None,
               beside: tuple[float, float] | None = None) -> list[list[str]]:
    """Each row's cells under `work_columns`, each column at one precision (the money rule
    of `costsched.amounts`), marked where `estimated` (default: where the speed is).
    `places`: the totals' decimals and the hours' (`total_places`, `product_places`: as
    the $/h column reads them, `plan_cells.ranking_cells`). `beside`: (hours, cost)
    written under the table (the baseline's), at the same precision as the columns, and
    returned as a last row ([hours, cost])."""
    flags = shown["throughput_estimated"] if estimated is None else estimated
    marks = [ESTIMATED_MARK if e else "" for e in flags]
    if work is not None and work.assumed:  # a rate: MAX_DECIMALS at least (`derived_per_hour`)
        per_work = list(shown["expected_cost"] / (work.hours or 1.0))
        rate_places = apart_places(per_work, MAX_DECIMALS, FINEST)
        return [[usd(c, rate_places) + m] for c, m in zip(per_work, marks, strict=True)]
    extra = [] if beside is None else [beside]
    spans_of = [*shown["expected_hours"], *(h for h, _ in extra)]
    costs = [*shown["expected_cost"], *(c for _, c in extra)]
    totals = [usd(c, places[0]) for c in costs]
    spans = [hours_of(h, places[1]) for h in spans_of]
    return [[h + m, c + m] for h, c, m in zip(spans, totals, marks + [""] * len(extra),
                                              strict=True)]


def product_places(shown: pd.DataFrame, places: int, least: int) -> int:
    """The hours column's decimals at which each row's $/h as its cell writes it
    (`stored_price`: a stored price at its own decimals; a figure of more digits, one made
    by dividing, at MAX_DECIMALS, as `derived_per_hour` writes it) times its hours, as
    written, reads as its total at `places` does: `least` where those do, else the fewest
    more (up to HOURS_MOST). Never a price's decimals beyond those its cell shows: a row
    that reads as its total at no hours' decimals (its price's cell short of its digits)
    is one the hours cannot make add up, and leaves the others' alone; nor is a row whose
    total is not its price times its hours (a gang's: N instances) one to multiply."""
    rows = [(written_at(p, stored_places(p)), float(h), usd(c, places)) for p, h, c in zip(
        (float(v) for v in shown["usd_per_hour"]), shown["expected_hours"],
        shown["expected_cost"], strict=True)
        if abs(float(c) - p * float(h)) <= 1e-9 * max(1.0, abs(float(c)))]

    def adds_up(row: tuple[float, float, str], digits: int) -> bool:
        price, span, total = row
        return usd(price * written_at(span, digits), places) == total

    rows = [r for r in rows if adds_up(r, HOURS_MOST)]
    return next((d for d in range(least, HOURS_MOST + 1)
                 if all(adds_up(r, d) for r in rows)), least)


def product_cells(spans: pd.Series, costs: pd.Series) -> list[tuple[str, str]]:
    """(hours, total) of each row of a table of offerings' hours and totals without a $/h
    column (the collection's), as the rankings write the same figures: each at their
    price, the total over the hours (`product_places`)."""
    frame = pd.DataFrame({"expected_hours": list(spans), "expected_cost": list(costs)})
    frame["usd_per_hour"] = frame["expected_cost"] / frame["expected_hours"].where(
        frame["expected_hours"] > 0)
    places = total_places(frame, list(costs))
    digits = product_places(frame.dropna(), places, decimals(list(spans)))
    return [(hours_of(h, digits), usd(c, places)) for h, c in zip(spans, costs, strict=True)]


def collection_rows(a: pd.DataFrame, by_offering: bool
                    ) -> tuple[list[str], list[list[str]], list[float]]:
    """A collection plan's table (its heads, its rows, each row's cost): a row per job, or
    (`by_offering`: a large collection) a row per offering used, with its jobs, longest
    hours and total."""
    if by_offering:
        used = a.groupby("offering", sort=False).agg(
            jobs=("job", "size"), hours=("hours", "max"), cost=("cost", "sum"))
        costs = list(used["cost"])
        return ["offering", "jobs", "longest h", "total $"], [
            [offering, f"{r.jobs:,}", span, cost] for (offering, r), span, cost in zip(
                used.iterrows(), hours_all(*used["hours"]), totals(costs), strict=True)], costs
    return ["job", "offering", "hours", "total $"], [
        [r.job, r.offering, span, cost] for r, (span, cost) in zip(
            a.itertuples(), product_cells(a["hours"], a["cost"]), strict=True)], list(a["cost"])


def heading_figures(rows: list[list[str]], costs: list[float],
                    makespan: float) -> tuple[str, str]:
    """A collection's total and makespan at the decimals of its table's last two columns
    (hours, total $), the total the sum of its rows as they read: 'total $0.0808, makespan
    0.254 h' over four rows of 0.254 h and $0.0202 (never '$0.08, 0.25 h')."""
    def places(cell: str) -> int:
        return len(cell.rpartition(".")[2]) if "." in cell else 0

    money, span = max(places(r[-1]) for r in rows), max(places(r[-2]) for r in rows)
    return usd(total_as_written(costs, money), money), hours_of(makespan, span)


def total_places(shown: pd.DataFrame, costs: list[float]) -> int:
    """A cost the user weighs: under a dime at MAX_DECIMALS, as launch writes it, and more
    where two of the offerings' totals would read alike ($0.0103, never $0.01)."""
    return apart_places(list(shown["expected_cost"]), decimals_kept(costs))


def apart_places(values: list[float], least: int, most: int | None = None) -> int:
    """The decimals of a column of a plan's amounts (totals, prices per hour): `least` at
    fewest, more until every two of `values` that differ at `most` decimals (by default
    `amounts.finest` of them) read apart."""
    most = max(least, finest(values) if most is None else most)
    apart = len({usd(v, most) for v in values})
    return next((p for p in range(least, most) if len({usd(v, p) for v in values}) == apart),
                most)


def totals(costs: list[float]) -> list[str]:
    """A column of expected costs as the rankings write them (`work_cells`): under a dime
    at MAX_DECIMALS, more where two that differ would read alike."""
    places = apart_places(costs, decimals_kept(costs))
    return [usd(c, places) for c in costs]


def price_cells(shown: pd.DataFrame) -> list[str]:
    """The $/h column: the stored prices at one precision (`stored_prices`), as every
    command writes a column of them; the column aligns them right."""
    return stored_prices([float(v) for v in shown["usd_per_hour"]])


PRICE_OF = "price of"  # the column of the dates of stale prices, where a row has one


def stale_rows(shown: pd.DataFrame, at: object, stale_after: float) -> list[bool]:
    """Whether each row's price is older than `stale_after` hours at `at` (the rule of
    `service.staleness.stale`)."""
    from costsched.service.staleness import age_hours

    if shown.empty or "effective_at" not in shown:
        return [False] * len(shown)
    return [bool(v) for v in age_hours(shown["effective_at"], at) > stale_after]  # type: ignore[arg-type]


def price_dates(shown: pd.DataFrame, at: object, stale_after: float) -> list[str] | None:
    """The PRICE_OF column: the date of each row's price that is older than `stale_after`
    hours ('2026-01-01'; '-' for a newer one), so that a table of fresh and old prices
    says which row's is old; None where none is, or where every row's is old and of one
    date (the note under the table says it: no column)."""
    old = stale_rows(shown, at, stale_after)
    if not any(old):
        return None
    times = pd.to_datetime(shown["effective_at"], utc=True)
    dates = [f"{t:%Y-%m-%d}" if stale else "-" for t, stale in zip(times, old, strict=True)]
    return None if all(old) and len(set(dates)) == 1 else dates


def dated(columns: list[str], rows: list[list[str]], shown: pd.DataFrame, at: object,
          stale_after: float) -> tuple[list[str], list[list[str]]]:
    """The plan table's `columns` and `rows` with the PRICE_OF column after its prices
    (`price_dates`) where a row's price is older than `stale_after` hours; as they are
    otherwise."""
    found = price_dates(shown, at, stale_after)
    if found is None:
        return columns, rows
    at_ = columns.index("$/h") + 1
    return ([*columns[:at_], PRICE_OF, *columns[at_:]],
            [[*row[:at_], date, *row[at_:]] for row, date in zip(rows, found, strict=True)])


def stale_note(old: Stale, shown: pd.DataFrame, at: object, stale_after: float,
               hidden: bool = False) -> str:
    """The note under a table of stale prices (`old`), naming the PRICE_OF column where the
    table has it (`hidden`: left out to fit, and --wide shows it), and what brings newer
    prices of their clouds."""
    where = (f", each one's date under '{PRICE_OF}'"
             + (f" ({HIDDEN})" if hidden else "")
             if price_dates(shown, at, stale_after) is not None else "")
    return f"{old.note()}{where}: {user_text(newer(old.clouds))}"  # (markup: text escaped)


def gang_note(job: Workload, shown: pd.DataFrame, work: Work | None,
              hidden: tuple[str, ...] = ()) -> str:
    """For a job of several nodes: that its speed is the gang's, as its `throughputs:`
    gives it (a figure is never one node's times the nodes), with the first row's figure
    where the job's file gave it ('' for one node); `hidden`: the columns the table left
    out to fit (its speed column's note then says --wide shows it)."""
    nodes = getattr(job, "nodes", 1)
    if nodes <= 1 or shown.empty:
        return ""
    key = as_written("throughputs", bool(getattr(job, "sky", False)))
    first = shown.iloc[0]
    given_here = (str(first["throughput_source"]).startswith("job spec")
                  and not bool(first["throughput_estimated"]) and not relative(work))
    pace = (f"{first['steps_per_second']:.4g} steps/s on {first['gpu_model']}" if given_here
            else f"the {speed_column(work)} column"
            + (f" ({HIDDEN})" if speed_column(work) in hidden else ""))
    figure = f"`{key}: {{{first['gpu_model']}: ...}}`" if given_here else f"`{key}:`"
    return user_text(f"{nodes} nodes: {pace} is the gang's pace, all {nodes} nodes "
                     f"together, as {figure} gives it (never one node's times {nodes}): "
                     "give the gang's measured pace there")


def zone_note(job: Workload, shown: pd.DataFrame) -> str:
    """For rows priced for a whole region where the job's file names one zone of it: that
    zone, its key, and that `--emit sky` keeps it ('gcp us-central1 is priced for the whole
    region; resources.zone in task.yaml names us-central1-a there, which `costsched plan
    --emit sky` keeps'); '' where none is."""
    from costsched.optimize.no_plan_keys import in_file, key
    from costsched.skypilot_emit import pinned_zone

    zones, order = job.job.constraints.zones, getattr(job, "order", ())
    if not zones and not any(alt.get("zones") for alt in order):
        return ""
    named = {}
    for r in shown[shown["zone"].fillna("") == ""].itertuples():
        zone = pinned_zone(zones, order, str(r.cloud), str(r.region))
        if zone:
            named[f"{r.cloud} {r.region}"] = zone
    if not named:
        return ""
    written = f"{key(job, 'zones')}{in_file(job)}"
    return "; ".join(f"{place} is priced for the whole region; {written} names {zone} "
                     "there, which `costsched plan --emit sky` keeps"
                     for place, zone in named.items())


def start_note(job: Workload, work: Work | None) -> str:
    """What the work's columns count beside the work: the job's start, once, at each
    offering's $/h ('hours and total $ count its start once, at each offering's $/h: 0.25 h
    to get an instance up and the job started = 10 min boot and set-up ([migration]
    restart_minutes) + ...', `own_budget.start_words`), as rich prints it."""
    if not job.start_hours:
        return ""
    from costsched.own_budget import start_words

    words = start_words(job)
    if job.work_assumed:  # a rate per hour of work: the start, paid once, is not in it
        return user_text(f"its start comes on top, once, at the offering's $/h: {words}")
    columns = work_columns(work)
    verb = "count" if len(columns) > 1 else "counts"
    return user_text(f"{' and '.join(columns)} {verb} its start once, at each offering's "
                     f"$/h: {words}")


def group_work(steps: float, work: Work | None) -> str:
    """The work column of `plan`'s table of groups: steps, or hours on the reference."""
    return f"{steps:,.0f} steps" if work is None or work.hours is None else work.describe()


def group_cells(bests: list[tuple[pd.Series | None, Work | None]]) -> list[list[str]]:
    """The hours and total of each group's best offering ('-' where it has none; for
    assumed work no hours and the cost of an hour of it, a rate), the totals and hours each
    at one precision down their column."""
    def assumed(work: Work | None) -> bool:
        return work is not None and work.assumed

    given = [(b, w) for b, w in bests if b is not None and not assumed(w)]
    spans = iter(hours_all(*(b["expected_hours"] for b, _ in given)))
    totals = iter(usd_all(*(b["expected_cost"] for b, _ in given)))
    out = []
    for best, work in bests:
        if best is None:
            out.append(["-", "-"])
        elif assumed(work):
            out.append(["-", derived_per_hour(best["expected_cost"] / (work.hours or 1.0))  # type: ignore[union-attr]
                        + "/work-h"])
        else:
            out.append([next(spans), next(totals)])
    return out


def per_work_hour(shown: pd.DataFrame, work: Work | None) -> pd.Series | None:
    """`plan --json`'s `usd_per_work_hour`: the expected cost of an hour of the reference's
    work, where the work is hours on a reference; None where it is steps."""
    if work is None or work.hours is None:
        return None
    return shown["expected_cost"] / work.hours


# A ranking's figures that exist only for the assumed hour of a job that gives no work:
# null in `plan --json`, their values under the row's "assumed" (a script reading them
# at the top level never takes them for the job's own).
ASSUMED_ROW = ("steps_per_second", "work_hours", "start_hours", "start_cost",
               "expected_hours", "expected_cost", "pessimistic_cost", "budget_may_not_fit",
               "budget_does_not_fit")


def json_rows(records: list[dict], work: Work | None) -> list[dict]:
    """`plan --json`'s ranking rows: for assumed work, ASSUMED_ROW null at the top level and
    under "assumed" (with "speed_vs_reference", the table's speed: work done in an hour
    against the reference GPU); as they are otherwise."""
    if work is None or not work.assumed:
        return records
    return [{**r, **dict.fromkeys(ASSUMED_ROW), "speed_vs_reference": r["steps_per_second"],
             "assumed": {k: r[k] for k in ASSUMED_ROW}} for r in records]


def title_work(work: Work | None, model: str, steps: float, estimated: bool = False,
               of_set: bool = False) -> str:
    """What the table's title says of the work: 'ResNet-50, 20,000 steps', '3 h of work on
    1xV100', 'work not given: per hour of work on 1xV100' (`of_set`: the task names several
    GPUs, of which the unit is the slowest, `work.unit_gpu`); the steps marked when they
    rest on an estimated speed (`estimated`, `work_estimated`)."""
    if work is None or work.hours is None:
        return f"{model}, {steps:,.0f} steps"
    if work.assumed:
        said = (f"{work.steps_given:,.0f} steps, speed not given" if work.steps_given is not None
                else "work not given")
        return (f"{said}: per {work.unit()}"
                + (" (the slowest GPU of the task)" if of_set else ""))
    if relative(work):
        return work.describe()
    mark = ESTIMATED_MARK if estimated else ""
    return f"{model}, {work.describe()} ({steps:,.0f}{mark} steps)"


def title(names: list[str], job: Workload, objective: str, estimated: bool = False) -> str:
    """The title of the table `names` share (one job, or a sweep's identical jobs): the
    jobs, their work, the objective, and the deadline and budget, which hold for each job
    of several ('3 jobs of sweep mf (mf-1..3), 2,000 steps each; by cost, budget $10.00
    each'). The model once: a job named after its model is not 'myclf: myclf', nor is a
    sweep's first job its model."""
    c = job.job.constraints
    each = " each" if len(names) > 1 else ""
    model = job.job.model if getattr(job, "model_named", True) or len(names) == 1 else ""
    of_set = len(c.gpu_models) > 1 or len(c.gpu_counts) > 1  # a set: the unit its slowest
    work = title_work(job.work, model, job.job.steps, estimated, of_set).removeprefix(", ")
    each_work = work if job.work is not None and job.work.assumed else work + each
    subject = covered(names)
    head = (prefixed(subject, each_work) if model or len(names) == 1
            else f"{subject}, {each_work}")
    return (f"{head}; by {objective}"
            + (f", deadline {deadline_said(c.deadline_hours)}{each}" if c.deadline_hours
               else "")
            + (f", budget {given(c.budget_usd)}{each}" if c.budget_usd else ""))


def covered(names: list[str]) -> str:
    """'a'; '3 jobs of sweep s (s-1..3)' for a sweep's jobs (named as a sweep names
    them); else '3 jobs (a, b, c)'."""
    if len(names) == 1:
        return names[0]
    base = names[0].rpartition("-")[0]
    if base and names == [f"{base}-{i}" for i in range(1, len(names) + 1)]:
        return f"{counted(len(names), 'job')} of sweep {base} ({base}-1..{len(names)})"
    shown = ", ".join(names) if len(names) <= 6 else f"{names[0]}, ..., {names[-1]}"
    return f"{counted(len(names), 'job')} ({shown})"


def notes(shown: pd.DataFrame, work: Work | None, hint: str,
          steps_estimated: bool = False, hidden: tuple[str, ...] = ()) -> list[str]:
    """The notes under the table: the work's assumption and its key, what the speed column
    is against, and what the marks mean. `hint`: the command that shows how an estimated
    speed was made; `steps_estimated`: the work's steps rest on one (`work_estimated`);
    `hidden`: the columns the table left out to fit (a note on one says --wide shows it)."""
    out = []
    if work is not None and work.assumed:
        out.append(work.assumption())
        out.append(f"{PER_WORK_HOUR}: the expected cost of an hour of work on {work.on()} "
                   "(the $/h over the speed, preemptions included); offerings rank by it")
    if relative(work) and work is not None and work.reference != CPU_REFERENCE:
        where = f" ({HIDDEN})" if "speed" in hidden else ""
        out.append(f"speed{where}: work done in an hour against {work.on()} (1 = as fast)")
    if shown["throughput_estimated"].any() or steps_estimated:
        figures = "cost" if work is not None and work.assumed else "hours, cost"
        # the column named as its own note names it where the table left it out
        vs = "vs OD V100" + (f" ({HIDDEN})" if "vs OD V100" in hidden else "")
        steps = (f"; the {work.steps:,.0f} steps too ({work.hours:g} h on {work.on()} "
                 f"at an estimated speed), and every hours, cost and {vs} figure from "
                 "them" if steps_estimated and work is not None else "")
        out.append(f"{ESTIMATED_MARK} estimated speed, and the {figures} and {vs} from "
                   f"it{steps} ({hint} "
                   "gives the rule; `throughputs:` in the job's file, `costsched: "
                   "{throughputs: ...}` in a SkyPilot task, gives measured ones)")
    if shown["throughput_source"].astype(str).str.startswith(MEASURED_BY_COSTSCHED).any():
        out.append(f"{MEASURED_MARK} {MEASURED_BY_COSTSCHED} on earlier runs (`costsched "
                   "throughput show --measured`)")
    return out


def rule_hint(model: str, table_frame: pd.DataFrame, source: str, first_of_file: bool,
              shown: pd.DataFrame) -> str:
    """The command that shows how a speed was estimated: `throughput show --model` for a
    model of the throughput table, else (speeds from the job's own file) `plan FILE
    --explain` of its first estimated offering, else `plan FILE --json`."""
    key = model_key(model)
    rows = table_frame[table_frame["model"].map(model_key) == key]
    own = rows["source"].astype(str).str.startswith("job spec").any()
    if not own:
        return f"`costsched throughput show --model '{user_text(model)}'`"
    where = shlex.quote(user_text(source))
    if first_of_file and shown["throughput_estimated"].any():
        label = shown.loc[shown["throughput_estimated"].astype(bool), "offering"].iloc[0]
        return f"`costsched plan {where} --explain '{label}'`"
    return f"`costsched plan {where} --json` (each row's throughput_source)"


def collection_note(jobs: list) -> str:
    """A collection of jobs some of which give no work: whose totals rest on an assumed
    hour ('' when none)."""
    assumed = [j.name for j in jobs if j.work is not None and j.work.assumed]
    if not assumed:
        return ""
    shown = ", ".join(assumed[:6]) + (f", ... ({len(assumed)} in all)" if len(assumed) > 6
                                      else "")
    return (f"the work of {shown} is not given: the collection counts 1 h of work on the "
            "slowest GPU of each (a total needs the work: `costsched: {hours: H}` or "
            "`costsched: {model: NAME, steps: N}`)")


def budget_marked(cells: list[list[str]], shown: pd.DataFrame) -> list[list[str]]:
    """The work's cells of each row of `shown` (`service.budget_short.with_budget_risk`), the last
    (its cost) marked where its pessimistic cost may not fit the job's budget."""
    return [[*row[:-1], row[-1] + (BUDGET_MARK if risky else "")]
            for row, risky in zip(cells, shown["budget_may_not_fit"], strict=True)]


def budget_note(job: Workload, shown: pd.DataFrame) -> str:
    """What the budget mark says, as `launch` will act on each marked row: its pessimistic
    cost and the watch's charge ahead for its first interval at the row's $/h (the figures
    and the rule `launch` checks the budget by, `service.budget_short.launch_fit`), and the
    verdict there: refused, with the budget that launches it, or asking for --yes. Rows
    that read the same are named together ('on #1-#3'); '' when no row is marked."""
    from costsched import own_budget
    from costsched.service.budget_short import launch_fit, raise_to

    budget = job.job.constraints.budget_usd
    refused: dict[str, list[int]] = {}  # each figure (and its fix), and the rows it is on
    asks: dict[str, list[int]] = {}
    spans, fix = [], ""
    fits = [(i, r, launch_fit(job, r) if r["budget_may_not_fit"] else None)
            for i, (_, r) in enumerate(shown.iterrows(), start=1)]
    # One precision for the line: the finest its rows' figures need, the budget's too.
    places = max((fit.places() for _, _, fit in fits if fit is not None), default=2)
    for i, r, fit in fits:
        if fit is None:
            continue
        figure = f"{usd(fit.pessimistic_usd, places)} + {usd(fit.ahead_usd, places)}"
        if fit.fits:
            asks.setdefault(figure, []).append(i)
        else:
            refused.setdefault(f"{figure} {{rows}} ({{fix}}to {raise_to(fit)})", []).append(i)
            fix = fit.fix
        spans.append(str(r["ahead_said"]).rpartition(" at ")[0])
    if not spans or budget is None:
        return ""
    verdicts = []
    for words, figures in (("does not fit", refused), ("may not fit", asks)):
        if figures:
            done = "is refused" if figures is refused else "asks for --yes"
            rows = sorted(i for on in figures.values() for i in on)
            each = ", ".join((f if "{rows}" in f else f + " {rows}").format(
                rows=rows_said(on), fix="" if n else f"{fix} ")  # the key once, then amounts
                for n, (f, on) in enumerate(figures.items()))
            verdicts.append(f"{words} {rows_said(rows)}, a launch there {done}: {each}")
    span = spans[0] if len(set(spans)) == 1 else "the watch interval"
    return (f"{BUDGET_MARK} against its budget {given(budget, places)} as `costsched launch` "
            f"checks it, its pessimistic cost (preemptions at the {own_budget.PERCENTILE:.0%} "
            f"quantile) + the watch's charge ahead for its first interval ({span} at the "
            f"row's $/h): {'; '.join(verdicts)}")


def rows_said(rows: list[int]) -> str:
    """The table's rows `rows` (ascending) in words: 'on #2', 'on #1-#10', 'on #1, #3 and
    #5-#7'."""
    runs: list[list[int]] = []
    for row in rows:
        if runs and row == runs[-1][-1] + 1:
            runs[-1].append(row)
        else:
            runs.append([row])
    named = [f"#{run[0]}" if len(run) == 1 else f"#{run[0]}-#{run[-1]}" for run in runs]
    return "on " + (named[0] if len(named) == 1 else
                    f"{', '.join(named[:-1])} and {named[-1]}")
