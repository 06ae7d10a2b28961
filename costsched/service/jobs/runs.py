"""A running job as the store holds it (its record, resolved spec, moves), the limits every
step keeps, and how far it has come."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any

from costsched.costs import nodes_of
from costsched.lazy import pandas as pd
from costsched.migration.launcher import CloudError
from costsched.model import InvalidInput, Offering
from costsched.passes import memo
from costsched.service.glance import no_such_id, no_such_name
from costsched.service.resolve import configured_restarts, resolve
from costsched.service.throughputs import table_with_measured
from costsched.shown_state import shown_state
from costsched.store import PriceStore
from costsched.store.jobs import JobRecord
from costsched.store.moves import MoveRecord
from costsched.throughput import ThroughputTable
from costsched.vocabulary import offering_label
from costsched.work import done_not_known, ended_short, own_total

if TYPE_CHECKING:
    from costsched.jobspec import JobSpec, ResolvedJob
    from costsched.policies import OfferingKey

CANDIDATES = 5  # offerings a launch or recovery may try, best first
MIN_MIGRATION_INTERVAL = timedelta(hours=24)  # at most one planned move a day per job
# Whoever steps a job's moves or recovers it holds "steps:<job id>" meanwhile, so that two
# costsched processes (or daemon threads) never both launch or bill the same step.
STEP_LEASE_SECONDS = 300  # longer than one step (a cloud's launch call included)


@dataclass(frozen=True)
class RunningJob:
    """A job as the store holds it. Its spec is resolved when first asked for (`resolved`,
    once per distinct spec in a pass): a pass that only looks at a job's record, instance
    and costs does not resolve it."""

    record: JobRecord
    launcher: str
    checkpoint_uri: str
    moves: list[MoveRecord]  # as read with the record, oldest first
    resolve: Callable[[], ResolvedJob] = field(repr=False, compare=False)

    @cached_property
    def resolved(self) -> ResolvedJob:
        return self.resolve()

    @cached_property
    def home_region(self) -> str:
        """Its first allowed region, else where its first move went."""
        regions = self.resolved.job.constraints.regions
        if regions:
            return regions[0]
        first = self.moves[0].candidates if self.moves else []
        return first[0]["key"][1] if first else ""

    @property
    def checkpoint_gb(self) -> float:
        """The checkpoint size its spec declares (0 when none), read from its stored spec
        when it is not resolved (as its resolution would give it: the spec was checked when
        it was stored)."""
        if "resolved" in self.__dict__:
            return self.resolved.job.checkpoint_gb
        size = ((self.record.spec.get("spec") or {}).get("checkpoint") or {}).get("size_gb")
        return float(size) if isinstance(size, (int, float)) and \
            not isinstance(size, bool) else 0.0

    @property
    def nodes(self) -> int:
        """Its instances at once (a gang's num_nodes; 1 for others), from its stored spec."""
        if "resolved" in self.__dict__:
            return self.resolved.nodes
        return nodes_of(self.record.spec)


def _newest_open_rows(placements: pd.DataFrame) -> pd.DataFrame:
    """The newest open placement of each job (a move has two open for a while)."""
    return placements[placements["end_at"].isna()].drop_duplicates("job_id", keep="last")


def _newest_open(placements: pd.DataFrame) -> dict[int, pd.Series]:
    """Each job's open placement (the newest, when a move has two open)."""
    newest = _newest_open_rows(placements)
    columns = newest.columns  # one Index shared by every row's Series
    job = columns.get_loc("job_id")
    return {int(values[job]): pd.Series(values, index=columns, dtype=object, name=index,
                                        copy=False)
            for index, *values in newest.itertuples(name=None)}


def steps_left(store: PriceStore, run: RunningJob, at: datetime) -> float | None:
    """The steps the job has left: its total less the newest step it is known to have
    reached (`done_step`); all of them before it reports one (never a guess); None when
    its work is not given (its total is not known)."""
    return progress(store, run, at)[0]


def progress(store: PriceStore, run: RunningJob, at: datetime) -> tuple[float | None, bool]:
    """(steps left, whether a step of the job's own stands behind them)."""
    return _progress_of(run, store.jobs.get(run.record.id).steps_done)


def done_step(run: RunningJob, reported: float) -> float:
    """The step the job stands at: a stopped job's newest checkpoint's step where it is
    known (where `start` resumes, the step it reported before its stop may be later or
    earlier); else the step it reported, or its newest checkpoint's when that is later;
    0 when neither is known."""
    saved = run.record.checkpoint_step
    if run.record.state == "stopped" and saved is not None:
        return max(saved, 0.0)
    return max(reported, saved or 0.0, 0.0)


def _progress_of(run: RunningJob, reported: float,
                 said: bool | None = None) -> tuple[float | None, bool]:
    """`progress` from the step the job reported. Until it reports one (setup, or a job
    that writes no step) no step is guessed from the hours it ran: every step is left. A
    job whose work is not given has no total (None), whatever step it reports. A job whose
    work is given as hours on a reference GPU has all of it left, whatever step it reports
    (its steps are its own, its total in the reference GPU's seconds: `work.own_total`). A
    job that succeeded has none left, unless it reported a step short of its total in its
    own steps (`work.ended_short`; `said`: whether it reported a step, 0 included, where
    known): it has the rest left, as its own step says; one that reported none has a rest
    not known (None: `work.done_not_known`)."""
    total = run.record.steps_total
    if total is None:
        return None, False
    if run.record.state == "succeeded":
        own, done = own_total(run.record.spec, total), done_step(run, reported)
        if done_not_known(True, done, own, said):
            return None, False
        short = own is not None and ended_short(True, done, own, said)
        return (own - done if short and own is not None else 0.0), True
    done = done_step(run, reported)  # a step 0 it reported is a step reported: 0%
    if (done > 0 or said) and own_total(run.record.spec, total) is not None:
        return max(total - done, 0.0), True
    return float(total), False


def all_steps_left(run: RunningJob, reported: float, said: bool) -> float | None:
    """A running job that has reported no step, 0 included (`said`: whether a step reading
    of it is stored; `reported`: the step on its record), with no checkpoint's step behind
    its rest either: its rest is priced as all of its own steps (`_progress_of`), which its
    figures assume none of done; that total. None for any other job, and for one whose work
    is not given in its own steps (`work.own_total`). Status says it on the job's line
    (`JobStatus.no_step`), migrate beside its prices."""
    if run.record.state != "running" or said or reported > 0:
        return None
    _, behind = _progress_of(run, reported, False)
    return None if behind else own_total(run.record.spec, run.record.steps_total)


def _placed_offering(placement: pd.Series) -> Offering:
    from costsched.migration.machine import offering_of  # the mover's: `status` never moves

    return offering_of({"key": [placement[k] for k in (
        "cloud", "region", "zone", "instance_type", "market", "os")],
        "gpu_model": placement["gpu_model"], "gpu_count": int(placement["gpu_count"])})


class JobEvent(str):
    """One thing a reconcile did to a job: its line (this str), the job, what it was
    (`kind`: "move", "checkpoint", "finished", "failed", "recovery", "restart" (on an
    error), "launch", "stopped" (by a stop, its instance lost), "cloud", or "error": what
    kept the pass from looking after it, `trouble`), the log level it deserves and the
    notification it calls for ("recovery", "failure" or "")."""

    job_id: int
    kind: str
    level: str
    notify: str

    def __new__(cls, job_id: int, kind: str, text: str, *, level: str = "info",
                notify: str = "") -> JobEvent:
        made = super().__new__(cls, f"job {job_id}: {text}")
        made.job_id, made.kind, made.level, made.notify = job_id, kind, level, notify
        return made


def one_line(exc: BaseException) -> str:
    """An error in one line: costsched's and a cloud's own words, else its type and first
    line (never a traceback)."""
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    if isinstance(exc, (InvalidInput, CloudError)) and first:
        return first
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def trouble(job_id: int, exc: BaseException, fix: str = "") -> JobEvent:
    """What kept this pass from looking after the job (the others are looked after), in
    one line with the fix when one is known: `status` shows it under the job. Nothing of
    the job was changed by the step that failed but what its own transaction committed
    (the next pass carries it on from there)."""
    return JobEvent(job_id, "error", f"not looked after in this pass: {one_line(exc)}; "
                    + (fix or "tried again at the next pass"), level="error")


def unknown_instance_fix(job_id: int) -> str:
    """The fix for a job whose instance its launcher no longer knows."""
    return (f"`costsched stop {job_id}` ends its placement (its checkpoints are kept), "
            f"then `costsched start {job_id}` starts it again")


def _running(store: PriceStore, job_id: int) -> RunningJob:
    return _run_of(store, store.jobs.get(job_id), store.moves.of_job(job_id))


def _runs(store: PriceStore, job_ids: Iterable[int] | None = None, *,
          states: Sequence[str] = (), records: Sequence[JobRecord] | None = None
          ) -> dict[int, RunningJob]:
    """`_running` of many jobs (every job in `states` when `job_ids` is None; those of
    `records` when the caller read them), from one read of their records and one of their
    moves; by id, oldest first. Their specs are resolved when first asked for, each
    distinct one once (`Resolutions`). No job: nothing read."""
    if records is None:
        ids = None if job_ids is None else list(job_ids)
        records = store.jobs.records(ids, states=states) if ids != [] else []
    if not records:
        return {}
    moves = store.moves.of_jobs([r.id for r in records])
    resolutions = Resolutions(store)
    return {r.id: _run_of(store, r, moves[r.id], resolutions) for r in records}


def _run_of(store: PriceStore, record: JobRecord, moves: list[MoveRecord],
            resolutions: Resolutions | None = None) -> RunningJob:
    return RunningJob(record, record.spec.get("launcher", ""), record.checkpoint_location,
                      moves, partial(resolutions or Resolutions(store), record))


class Resolutions:
    """Stored specs resolved as at their jobs' creation, for the jobs read together: each
    distinct spec once, over one read of the throughput table (in a pass, the pass's
    resolutions and table). A job that names its model differs from another only by its
    name when their specs do, so they share one resolution (and one throughput table)."""

    def __init__(self, store: PriceStore) -> None:
        self.store = store
        self.done: dict[tuple, ResolvedJob] = {}
        self.parsed: dict[tuple, JobSpec] = {}
        self.table: ThroughputTable | None = None

    def __call__(self, record: JobRecord) -> ResolvedJob:
        stored = record.spec
        source = stored.get("source", "<stored spec>")
        spec = stored["spec"]
        named = {k: v for k, v in spec.items() if k != "name"} if spec.get("model") else spec
        launcher = stored.get("launcher")
        launcher = launcher if isinstance(launcher, str) else ""
        key = ("resolved", self.store.url, json.dumps(named, sort_keys=True, default=str),
               source, record.created_at, launcher, configured_restarts())
        if key not in self.done:  # its start and restarts as launched there
            self.done[key] = memo(key, lambda: resolve(self._parsed(spec, source),
                                                       self._table(), record.created_at,
                                                       source=source, launcher=launcher),
                                  shared=True)
        resolved = self.done[key]
        if resolved.job.name == spec.get("name"):
            return resolved
        return replace(resolved, job=replace(resolved.job, name=spec["name"]))

    def _parsed(self, spec: dict, source: str) -> JobSpec:
        """The stored spec parsed; specs that differ only in their name (a sweep's jobs)
        are checked once, the others taking their own name (checked when stored)."""
        from costsched.jobspec import MAX_NAME

        name = spec.get("name")
        if not isinstance(name, str) or not 0 < len(name) <= MAX_NAME:
            return parse(spec, source)  # says what is wrong with it
        shape = ("parsed", json.dumps({k: v for k, v in spec.items() if k != "name"},
                                      sort_keys=True, default=str), source)
        if shape not in self.parsed:
            self.parsed[shape] = parse(spec, source)
        parsed = self.parsed[shape]
        return parsed if parsed.name == name else parsed.model_copy(update={"name": name})

    def _table(self) -> ThroughputTable:
        if self.table is None:
            self.table = memo(("throughputs", self.store.url),
                              lambda: table_with_measured(self.store), shared=True)
        return self.table


# The job spec's models load when a stored spec is first read: a look at jobs that resolves
# none of them (`status` of jobs that ended) does without them.
def parse(data: Any, source: str = "<spec>") -> JobSpec:
    """`costsched.jobspec.parse`."""
    from costsched.jobspec import parse as parsed

    return parsed(data, source)


def _open_placement(store: PriceStore, job_id: int) -> pd.Series | None:
    placements = store.jobs.placements(job_id)
    open_ = placements[placements["end_at"].isna()]
    return None if open_.empty else open_.iloc[-1]


def refuse_live_name(store: PriceStore, name: str) -> None:
    """InvalidInput when a job of that name has not ended: a launch of it is refused (said
    before anything of its plan or budgets)."""
    busy = [r for r in store.jobs.find(name) if not r.final]
    if busy:
        raise InvalidInput(f"job name {name!r}: job {busy[0].id} of that name is "
                           f"{busy[0].state}; stop it first or choose another name")


def job_ids(store: PriceStore, job: int | str | None, states: Sequence[str]) -> list[int]:
    """The id of `job` (an id, or a name: its unfinished job, else its newest), or every
    job in `states` when `job` is None."""
    if job is None:
        return store.jobs.ids(states)
    if isinstance(job, int) or str(job).isdigit():
        try:
            return [store.jobs.get(int(job)).id]
        except InvalidInput:  # no such job: the ids it has
            ids = sorted(r.id for r in store.jobs.records())
            if int(job) in ids:  # (another error than its absence)
                raise
            raise InvalidInput(no_such_id(int(job), ids)) from None
    found = store.jobs.find(str(job))
    if not found:
        names = sorted({r.name for r in store.jobs.records()})
        raise InvalidInput(no_such_name(str(job), names))
    live = [r for r in found if not r.final]
    return [(live or found)[-1].id]


def namesakes(store: PriceStore, job: int | str | None) -> str:
    """When `job` is a name that several jobs have: which one it names (`job_ids`: the
    job of that name not ended, else the newest), the others with their states, and how
    to name one of them (by its id); '' otherwise."""
    if job is None or isinstance(job, int) or str(job).isdigit():
        return ""
    found = store.jobs.find(str(job))
    if len(found) < 2:
        return ""
    shown = job_ids(store, job, states=())[0]
    others = [r for r in found if r.id != shown]
    why = "the one not ended" if not store.jobs.get(shown).final else "the newest"
    listed = ", ".join(f"job {r.id} ({shown_state(r)})" for r in others[-5:][::-1])
    more = f" and {len(others) - 5} older" if len(others) > 5 else ""
    return (f"{len(found)} jobs are named {job}: shown is job {shown}, {why}; the "
            f"other{'s' if len(others) > 1 else ''}: {listed}{more}. `costsched status "
            f"{others[-1].id}` shows job {others[-1].id} (a job's id names it alone)")


def _label(key: OfferingKey) -> str:
    return offering_label(*key[:5])
