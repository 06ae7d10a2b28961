"""What `status` prints: the jobs' table and the lines under it (why a job failed, why its
budget stopped it and what starts it again, its placements as charged, what comes next),
the scheduled optimizer's tasks; `launch` and `start` show their jobs alike."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from costsched.amounts import (
    CHARGED,
    NOISE,
    Scale,
    block_hours,
    charged_hours,
    charged_usd,
    charging,
    decimals,
    given,
    placement_times,
    stored_price,
    total_as_written,
    usd,
)
from costsched.cli.booked import booked_lines, held_lines
from costsched.cli.common import (
    NEVER_RUN,
    NO_JOBS,
    asked_wide,
    console,
    print_json,
    printable,
    table,
)
from costsched.cli.long_table import Lines, print_table
from costsched.cli.said import Said, as_json
from costsched.cli.status_gangs import instance_state, lost_lines, node_notices
from costsched.cli.status_next import (
    failed_next,
    next_to_start,
    secrets_for_start,
    short_next,
    stopped_next,
)
from costsched.clipped import clipped
from costsched.model import failure_words
from costsched.service import jobs as service
from costsched.service import views
from costsched.service.jobs.restarts import is_restart
from costsched.vocabulary import offering_label, prefixed
from costsched.work import REST_NOT_PRICED

if TYPE_CHECKING:
    from costsched.service.jobs.caps import BudgetState

# A failed job's reason in the list of every job: one line, cut here (`status JOB` has it
# whole, with its output's last lines).
BRIEF_CHARS = 100


def print_status(shown: list[service.JobStatus], json_out: bool, title: str = "Jobs",
                  scheduled: list[Any] | None = None, budgets: list[Any] | None = None,
                  recovery: Any = None, held: list[Any] | None = None,
                  brief: bool = False, none: str = NO_JOBS,
                  assumed_figures: bool = False,
                  starts: Mapping[int, str] | None = None,
                  said: Mapping[str, Sequence[Said]] | None = None) -> int | None:
    """The jobs, and with `scheduled` (costsched.daemon.status) the scheduled optimizer's
    tasks, with `recovery` (costsched.daemon.supervision.Recovery) whether a daemon watches
    the store, with `held` the capacity paid for that no job shown uses, with `budgets`
    (`budgets_now`) why a budget's cap stopped a job and, with `starts`
    (`budget_start.start_commands`), the one command that starts it again; `brief`
    (the list of every job): a failed job's reason in one line, not its output's last
    lines; `none`: what it says when no job is shown; `assumed_figures`: figures of an
    assumed hour of work are shown beside it (`launch`'s), and its note says so. --json
    is {"jobs": [...], "daemon": [...], "budgets": [...], "recovery": {...},
    "held_bookings": [...]}, each job with `said` of its name (`launch`'s warnings and notes
    of its file, printed on stderr) under "messages". Returns the decimals of the cost
    column (None when no table was printed), at which a table printed beside it writes the
    same amounts."""
    from costsched.service.jobs import over_cap
    from costsched.service.speeds import short_work
    from costsched.service.speeds import status_flags as speed_flags

    now = datetime.now(timezone.utc)
    if scheduled is not None and recovery is not None and (
            json_out or any(t.next_run or t.last for t in scheduled)):
        scheduled = recovery.scheduled(scheduled, now)  # (else one sentence says it all)
    if json_out:
        doc = views.status_document(shown, scheduled, budgets, held)
        for job in doc if isinstance(doc, list) else doc["jobs"]:
            if said is not None and job.get("name") in said:
                job["messages"] = as_json(said[job["name"]])
        if recovery is not None and isinstance(doc, dict):
            doc["recovery"] = recovery.document(now)
        print_json(doc)  # (its document says each job's flag itself)
        return None
    flags = speed_flags(shown)  # measured speed far from the plan's: {job id: words}
    if scheduled is not None:
        print_daemon(scheduled, None if recovery is None else recovery.unscheduled())
    armed = None if recovery is None else recovery.line(now)
    if armed:
        console.print(printable(armed), highlight=False, markup=False, soft_wrap=True)
    for line in held_lines(held or []):
        console.print(printable(f"booked: {line}"), highlight=False, markup=False,
                      soft_wrap=True)
    if not shown:
        console.print(none, highlight=False, markup=False)
        return None
    rows = []
    # The store's scale (`costsched.amounts`): each job's cost is the sum of its parts
    # listed under it as written ($0.0060 and $0.0048 make $0.0108), at one precision.
    scale = view_scale(shown)
    # Hours from the store's decimals, each placement's the fewest at which its product
    # reads as its amount (`amounts.placement_times`), as the report and the dashboard.
    places, spans = scale.usd, scale.hours
    costs = [charged_usd(_total(s, places), places) for s in shown]
    wide = asked_wide()  # (--wide: the instance each job runs on, as --json names it)
    for s, cost in zip(shown, costs, strict=True):
        p = s.open_placement
        where = "-" if p is None else offering_label(p["cloud"], p["region"], p["zone"],
                                                     p["instance_type"], p["market"])
        name = s.record.name + (f" ({s.nodes} nodes)" if s.nodes > 1 else "")
        rows.append([str(s.record.id), name, s.shown_state, where,
                     instance_state(s), *([instance_of(s) or "-"] if wide else []),
                     progress(s), cost,
                     str(sum(m.kind == "migration" and m.state == "done" for m in s.moves)),
                     str(s.recoveries)])
    print_table(title, ["id", "job", "state", "placement", "instance state",
                        *(["instance"] if wide else []), "progress", "cost $", "migrations",
                        "recoveries"], rows,
                detail=["recoveries", "migrations", "instance state"])
    out = Lines()
    dues = due_places(shown, now)  # and one for the hours to or from the deadlines
    for s in shown:
        if s.due is not None:
            due = views.due_words(s.due, now, s.record.final, s.record.state,
                                  s.record.updated_at, dues, short=bool(s.steps_not_reached))
            out.print(f"  job {s.record.id}: {due}")
        if s.next and s.decision is not None:
            out.print(printable(f"  job {s.record.id} next: {s.next} "
                                f"({views.decided_words(s.decision, now)})"))
        elif undecided(s) and recovery is not None:
            out.print(printable(f"  job {s.record.id} next: "
                                f"{recovery.undecided(s.record.id, now, scheduled, s.due)}"))
        # Its measured speed: far from its plan's, else as every view shows it.
        speed = flags.get(s.record.id) or (None if brief or s.speed is None else s.speed.line)
        flag = [f"throughput: {speed}"] if speed else []
        words = short_work(s)
        # Of a job whose work is not given, its note says why its rest cannot be priced.
        merged = words == REST_NOT_PRICED and s.assumed_work is not None
        short = [words] if words and not merged else []
        # More steps than it declares: said once (a running job's rest line says it).
        short = short or ([s.steps_past] if s.steps_past else [])
        resumes = [line for line in (s.resumes, s.steps_not_reached and (
            f"{s.steps_not_reached}; {short_next(s)}"), s.steps_not_reported,
            not brief and failed_next(s),
            not brief and stopped_next(s)) if line]
        on = [] if brief or not instance_of(s) else [f"instance {instance_of(s)}"]
        said = on + problems(s, brief, assumed_figures, merged) + in_setup(s, now) + resumes \
            + cap_lines(s, budgets or [], starts) + flag + short \
            + [line for line in [over_cap.of_status(s, budgets, places)] if line] \
            + cap_move_lines(s) + node_notices(s) + lost_lines(s)
        said = next_to_start(said, secrets_for_start(s, said))
        for line in said + booked_lines(s, now):
            out.print(printable(f"  job {s.record.id}: {line}"), soft_wrap=True)
        if lists_placements(s):  # each placement as charged, then egress and bookings
            for line in part_lines(s, places, spans) + repriced_lines(s):
                out.print(printable(f"  job {s.record.id}: {line}"))
    from costsched.service.views import costs_note  # (the charges' prices' age)

    stale = costs_note(list(shown), now)
    if stale:
        out.print(printable(stale), soft_wrap=True)
    out.flush()
    return places


def instance_of(s: service.JobStatus) -> str:
    """The instance the job runs on, named as its launcher and `--json` name it (what
    `python -m launchers.local preempt` and a cloud's console take); '' with none."""
    p = s.open_placement
    return str(p.get("instance") or "") if p is not None else ""


def in_setup(s: service.JobStatus, now: datetime) -> list[str]:
    """A job whose instance reports its setup running: since when and for how long
    (`setup_phase.setup_words`); [] for any other."""
    if s.setup_since is None:
        return []
    from costsched.service.setup_phase import setup_seconds, setup_words

    return [setup_words(s.setup_since, setup_seconds(s.setup_since, now), now)]


def view_scale(shown: list[service.JobStatus]) -> Scale:
    """The precision the jobs `shown` were read with (`service.status` sets it), else that
    of charged figures (`amounts.CHARGED`): one for every store and call."""
    return next((s.scale for s in shown if s.scale is not None), CHARGED)


def written_costs(shown: list[service.JobStatus]) -> dict[int, tuple[float, float]]:
    """Each job's cost, exact and as `status`'s cost column writes it (the sum of its
    parts as written at the store's scale), by id: a job's own budget's spend reads so."""
    places = view_scale(shown).usd
    return {s.record.id: (s.cost.total_usd + s.booked_usd, _total(s, places)) for s in shown}


def due_places(shown: list[service.JobStatus], now: datetime) -> int:
    """The decimals of the hours to or from the deadlines of the jobs `shown`, read
    together and by themselves (not at the placements' precision), as `launch` and the
    dashboard write them: 'in 1.98 h' in each, not 'in 1.9793 h' beside 0.0031 h of a
    placement."""
    return decimals([views.due_hours(s.due, now, s.record.final, s.record.state,
                                     s.record.updated_at) for s in shown if s.due is not None])


def _amounts(s: service.JobStatus) -> list[float]:
    """What the job's cost adds up (`part_lines`' figures): each placement as charged (an
    open one never zero, `costsched.amounts.charging`), egress, capacity booked; a job
    placed and not charged yet, '<$0.0001' from its first moment."""
    out = [charging(p.usd, p.end_at is None) for p in s.cost.charged]
    if s.open_placement is not None and all(p.id != s.open_placement["id"]
                                            for p in s.cost.charged):
        out.append(charging(0.0))  # placed, not charged yet
    return out + [v for v in (s.cost.egress_usd, s.booked_usd) if v]


def _total(s: service.JobStatus, places: int) -> float:
    """The job's cost as its column says it: the sum of its parts as written at the
    store's scale (`places`), as the lines under the table list them."""
    return total_as_written(_amounts(s), places)


# What began a placement, said of the placement (its billed time is the placement's, from
# that moment to its end, not the time the launch or the move took).
PLACED_BY = {"launch": "placed at its launch", "recovery": "placed at its recovery",
             "migration": "placed by its migration", "start": "placed at its start"}


def part_lines(s: service.JobStatus, places: int, spans: int) -> list[str]:
    """What the job's cost column adds up, as `status` lists it under the table: each
    placement as billed, its hours times its price making its amount as written
    ('placed at its launch on X: billed 0.0147 h x $0.0796/h = $0.00117'), the
    checkpoints' copies between them and the capacity bought for it, each at the store's
    scale (`places` for money; `spans` for hours where the product reads so): they visibly
    add up to the cost column's figure, which is their sum as written."""
    restarted = {m.target_instance for m in s.moves if is_restart(m)}  # on an error
    capped = _cap_moves(s)
    spans = block_hours([x for p in s.cost.charged if (x := _product(p, places))], places,
                        spans)  # one precision for the job's hours, read together
    out = [_placement_line(p, places, spans, str(p.instance) in restarted,
                           capped.get(str(p.instance), ""))
           for p in s.cost.charged]
    if s.cost.egress_usd:
        out.append("checkpoint copies between clouds or regions (egress), "
                   + charged_usd(s.cost.egress_usd, places))
    if s.booked_usd:
        out.append(f"capacity booked for it, upfront, {charged_usd(s.booked_usd, places)}")
    return out


def _cap_moves(s: service.JobStatus) -> dict[str, str]:
    """The words of each move a budget's cap made of the job, by the instance it moved it
    to ('moved at its own budget: ...', `cap_move.moved_at_cap`)."""
    from costsched.service.jobs.cap_move import moved_at_cap

    return {m.target_instance: said for m in s.moves
            if m.target_instance and (said := moved_at_cap(m.detail))}


def cap_move_lines(s: service.JobStatus) -> list[str]:
    """Why a budget's cap moved the job to where it runs now, in the move's own words
    ('moved at its own budget: its forecast ... passes the budget of ...; move to ...'),
    while it runs there."""
    if s.record.final or s.open_placement is None:
        return []
    said = _cap_moves(s).get(str(s.open_placement.get("instance", "")), "")
    return [said] if said else []


def _product(p: Any, places: int) -> tuple[float, float, float, bool] | None:
    """(hours, price, amount, running) of a placement its line writes as a product."""
    live, price = p.end_at is None, p.charged_usd_per_hour * max(int(p.nodes), 1)
    if (not live and abs(p.hours) < NOISE) or not math.isfinite(price) or \
            "<" in charged_usd(charging(p.usd, live), places):
        return None
    return (p.hours, price, p.usd, live)


def _placement_line(p: Any, places: int, spans: int, restart: bool = False,
                    capped: str = "") -> str:
    """A placement as billed: hours x the hourly price it was charged on average (all its
    nodes: `costs.Charged.charged_usd_per_hour`) = its amount, as written adding up
    (`amounts.times`): the price at its own decimals, the hours at the store's scale (or
    the fewest more that add up), and while it runs at the decimals at which a product
    adds up whatever its hours (`amounts.steady_hours`): the same call after call. Where
    no product reads as the amount (an average price of many digits), its hours and
    amount with the average, no product. One that ended billed for no time
    says why, never '0.00 h': it never ran (it waited for capacity), or it ended within
    the second it began (charges are by the second)."""
    live = p.end_at is None
    # A move a cap made: 'placed by its move at its own budget's cap' ('budget NAME's').
    at_cap = capped.partition(": ")[0].removeprefix("moved at ")
    placed = ("placed at its restart on error" if restart else
              f"placed by its move at {at_cap}'s cap" if at_cap else
              PLACED_BY.get(p.reason, p.reason))
    head = (f"{placed} on "
            f"{offering_label(p.cloud, p.region, p.zone, p.instance_type, p.market)}")
    money = charged_usd(charging(p.usd, live), places)
    if not live and abs(p.hours) < NOISE:
        return (f"{head}: {'never ran' if getattr(p, 'waiting', False) else 'under a second'}"
                f", {money}")
    nodes = f" for {p.nodes} nodes" if p.nodes > 1 else ""  # its cost is every node's
    so_far = " so far" if live else ""
    price = p.charged_usd_per_hour * max(int(p.nodes), 1)
    if not math.isfinite(price) or "<" in money:  # a charge too small to write as a product
        return f"{head}{nodes}: billed {charged_hours(charging(p.hours, live), spans)} h" \
               f"{so_far}, {money}"
    # Growing, at the decimals at which it adds up call after call; ended, the scale's
    # where they do.
    found = placement_times(p.hours, price, p.usd, places, spans, live)  # as the report's
    if found is None:  # no false product: what it was billed, and the average price
        return (f"{head}{nodes}: billed {charged_hours(p.hours, spans)} h{so_far}, {money}"
                f" ({stored_price(price)}/h{nodes} on average)")
    span, price_, _ = found
    return f"{head}: billed {span} h{so_far} x {price_}/h{nodes} = {money}"


_PRICES = {"stored": "the stored prices of its time", "catalog": "the catalog's list prices"}


def repriced_lines(s: service.JobStatus) -> list[str]:
    """Its placements charged at another hourly price than the one they were placed at
    (`costs.repriced`): the stored prices of their time, as costs are charged (a price
    imported later that was in effect then included), said in a line each, both prices
    for the same nodes, as the dashboard's job page says them (`costs.rate_words`)."""
    from costsched.costs import rate_words, repriced

    return [f"{p.reason} on {offering_label(p.cloud, p.region, p.zone, p.instance_type, p.market)}"
            f" is charged from {_PRICES.get(p.price_source, 'its prices')}: "
            f"{rate_words(p.usd_per_hour, p.charged_usd_per_hour, p.nodes, '/h')}"
            for p in s.cost.charged
            if repriced(p.usd_per_hour, p.charged_usd_per_hour, p.nodes)]


def undecided(s: service.JobStatus) -> bool:
    """Whether the job runs where the decider has not decided on it yet (just launched,
    recovered or moved, before the next pass that decides)."""
    return s.decision is None and s.record.state == "running" and s.steps_left != 0 and \
        s.open_placement is not None and s.instance_state == "running"


def lists_placements(s: service.JobStatus) -> bool:
    """Whether `status` lists the job's placements under the table: one that moved, or
    ended, or whose cost column is more than its placement (egress, capacity booked):
    every part the column adds up is then listed, running or not."""
    return len(s.cost.charged) > 1 or s.record.final or bool(s.cost.egress_usd) or \
        bool(s.booked_usd)


def progress(s: service.JobStatus) -> str:
    """'42%' when the job reported its step, 'step N' when its total is not known, 'no
    step yet' while it runs without one; '-' for a job that ended before it reported any."""
    return views.progress_words(s.progress, s.progress_source,
                                live=not s.record.final and not s.reported, step=s.step,
                                setup=s.in_setup)


def problems(s: service.JobStatus, brief: bool = False, figures: bool = False,
             rest: bool = False) -> list[str]:
    """What kept this look from looking after the job, why a failed job failed
    (`failure_lines`), a checkpoint store that fails now, a step not reported a minute
    into its run (`JobStatus.no_step`), and what gives an assumed work
    its total (`rest`: and that its rest cannot be priced, in the same line)."""
    from costsched.redact import remembered_masked
    from costsched.service.glance import remember_secrets

    out = [s.trouble] if s.trouble else []  # this look could not look after it: why
    if s.failure is not None:
        remember_secrets(s.record.spec)  # its output may print a secret
        out += failure_lines(s.failure, brief, s.record.id
                             if brief or s.failure.node is not None else None)
    if s.checkpoint_error:
        out.append(f"checkpoints not published: {s.checkpoint_error}")
    if s.no_step:  # its step not written a minute into its run, as its checkpoints above
        out.append(s.no_step)
    if not s.record.final and s.waits:  # a daemon cannot carry it on: why, and the fix
        out.append(s.waits)
    if s.assumed_work is not None and not s.record.final:  # what gives it a total
        out.append(s.assumed_work.assumption(figures, rest))
    return [remembered_masked(line) for line in out]


def failure_lines(f: service.Failure, brief: bool = False, job_id: int | None = None
                  ) -> list[str]:
    """Why the job failed: its exit code or phase, the launcher's words, then its output's
    last lines, each said once (the launcher's words often quote the last line: they are
    then left to the lines). `brief`: one line of at most BRIEF_CHARS, the same words with
    the last line in them, and where to read the rest (`costsched status JOB_ID`)."""
    words = failure_words(f.exit_code, f.detail)  # the exit code named once
    if f.phase:  # 'failed in setup: exit code 2', not '...: setup failed: exit code 2'
        words = words.removeprefix(f"{f.phase} failed: ")
    head = f"failed in {f.phase}" if f.phase else "failed"
    bare = head if f.exit_code is None else f"{head} with exit code {f.exit_code}"
    said = (f"{head} with {words}" if words.startswith("exit code") else
            prefixed(head, words) if words else head)
    tail = [line for line in f.log_tail if line.strip()] or list(f.log_tail)
    last = tail[-1].strip() if tail else ""
    if brief:
        if last and last not in said:
            said = f"{said}: {last}" if said == bare else f"{said}; {last}"
        lines, cut = len(tail) > 1, len(said) > BRIEF_CHARS
        said = clipped(said, BRIEF_CHARS)  # paths cut from their left, "(" closed
        more = ("says it in full, with its last lines" if cut and lines else
                "says it in full" if cut else "shows its last lines" if lines else "")
        return [said + (f" (`costsched status {job_id}` {more})"
                        if more and job_id is not None else "")]
    if last and last in said:  # the last line is said below: the head says what else
        said = said.replace(f" ({last})", "").replace(f": {last}", "")
        if last in said:
            said = bare
    out = [said]
    if tail:
        lines = "its last line" if len(tail) == 1 else f"its last {len(tail)} lines"
        if f.node is not None:  # the gang's failing node's, not rank 0's
            lines = f"node {f.node}'s last line" if len(tail) == 1 else \
                f"node {f.node}'s last {len(tail)} lines"
            if job_id is not None:
                lines += f" (`costsched logs {job_id} --node {f.node}` prints its output)"
        out.append(f"{lines}:")
        out.extend(f"  | {line}" for line in tail)
    return out


def cap_lines(s: service.JobStatus, budgets: list[BudgetState],
              starts: Mapping[int, str] | None = None) -> list[str]:
    """A job its budget's cap stopped (and still stopped): the budget, its cap and what
    was spent, and the one command that starts it again (`starts`, by job id: as `start`
    checks it, `budget_start.start_commands`), else what gives it more. Whether that
    budget is still set is the job's own word (its own budget stays with it; a named one
    is the configuration's), never whether `budgets` holds it."""
    from costsched import own_budget  # (the store with it: not for a task refused early)

    why = s.stopped_why
    name = own_budget.stopped_at(why, s.record.id)  # '': its own
    if s.record.state != "stopped" or name is None:
        return []
    found = [b for b in budgets if s.record.id in b.jobs
             and (b.kind == "job" if name == "" else b.name == name)]
    job = s.record.name
    start = (starts or {}).get(s.record.id)
    if not found and not _still_set(s, name):  # nothing caps it now
        return [f"{why}; that budget is no longer configured: `costsched start {job}` "
                "starts it again"]
    b = found[0] if found else None
    more = (f"give it more: `costsched start {job} --budget USD` (USD: its whole budget)"
            if name == "" else _named_fix(name, None if b is None else b.period))
    if b is None:  # its figures not read here
        return [f"{why}; to start it again, {start or more}"]
    # The stop as it was made: its own reason in its own figures (what was spent and the
    # next watch interval's charge passing the cap), never the budget's figures of now.
    stopped = _stop_reason(why, name)
    if b.left_usd > 0:  # raised since, or a new period: `start`'s check says what it needs
        # The cap as set now; what is left at the spend's precision (the stop's line's,
        # where it reads finer), and the cap at it where it has more decimals (spent and
        # left add up to it as written).
        from costsched.service.jobs.stop_line import spent_places

        places = max(decimals([b.spent_usd, b.left_usd]), spent_places(stopped))
        cap, left = given(b.usd, places), usd(b.left_usd, places)
        period = {"day": " a day", "month": " a month"}.get(b.period, " in total")
        now = f"its budget of {cap}" if b.kind == "job" else f"budget {name}'s {cap}{period}"
        return [f"{stopped}; {left} left now of {now}: "
                + (start or f"`costsched start {job}` says whether that is enough, and what "
                   "is if not")]
    return [f"{stopped}; to start it again, {start or more}"]


def _stop_reason(why: str, name: str) -> str:
    """A stop at a cap (its recorded `why`; `name`: '' its own budget, else the named
    one's) as status says it: the budget in words (its own as 'its own budget', however
    an older stop named it), then the stop's reason, and why a move was not made where
    its cap was to move it."""
    from costsched import own_budget

    head, _, reason = why.partition(": ")
    said = f"stopped at {own_budget.OWN}" if name == "" else head
    return f"{said}: {reason}" if reason else said


def _still_set(s: service.JobStatus, name: str) -> bool:
    """Whether the budget `name` ('' its own) that stopped job `s` is still set: its own
    stays with it (its spec's, or as `start --budget` gave it); a named one while the
    configuration has it and the job joins it."""
    if name == "":
        return True
    from costsched.config import effective
    from costsched.service.jobs.caps import joins

    budget = effective().budgets.named.get(name)
    return budget is not None and joins(s.record.spec, name, budget)


def _named_fix(name: str, period: str | None) -> str:
    """What gives named budget `name` more (`caps.named_fix`) at its `period` (None: as
    configured)."""
    from costsched.config import effective
    from costsched.service.jobs.caps import named_fix

    return named_fix(name, period or effective().budgets.named[name].period)


def print_daemon(scheduled: list[Any], unscheduled: str | None = None) -> None:
    """The scheduled optimizer's tasks; none scheduled nor run: `unscheduled` (who runs
    them, while a daemon watches the store), else that they never ran."""
    if all(t.next_run is None and t.last is None for t in scheduled):
        console.print(unscheduled or NEVER_RUN, highlight=False, markup=False,
                      soft_wrap=True)
        return
    rows = [[t.task, "-" if t.next_run is None else f"{t.next_run:%Y-%m-%d %H:%M:%S}",
             "-" if t.last is None else f"{t.last.started_at:%Y-%m-%d %H:%M:%S}",
             "-" if t.last is None else t.last.status,
             "" if t.last is None else t.last.detail] for t in scheduled]
    console.print(table("Scheduled optimizer (UTC)", ["task", "next run", "last run",
                                                      "result", "detail"], rows,
                        detail=["last run"]))
    for t in scheduled:
        for f in t.failures:
            console.print(printable(f"  {t.task} failed at {f.started_at:%Y-%m-%d %H:%M:%S}: "
                                    f"{f.detail}"), highlight=False, markup=False)

