"""The sweep: ending the instances that run for no job. A create whose answer was lost is
looked for by its attempt tag when its launch fails over (`costsched.migration.machine`),
but an instance the cloud shows only later, after every other offering failed too, would
run, and be billed, with nothing to end it. The daemon sweeps every SWEEP_SECONDS: it asks
each launcher in use for costsched's tagged instances (`Launcher.tagged`, in the places
the store's recent moves tried) and ends each live one no live placement owns.

A live instance is ended only when all of these hold:

- its attempt tag (`MoveRecord.attempt`: `{scope}-j{job}-m{move}-{candidate}`) is this
  store's (`costsched.store.scope.ours`: it carries this store's scope) and names a move
  of this store, of the job its job tag names, and a candidate of that move whose offering
  is the instance's (an instance without costsched's tags is never even listed). Another
  costsched using the same account (or the same local instances folder) counts jobs and
  moves from 1 too, but tags its instances with its own scope: they are left alone. A
  tag of the old form (`j{job}-m{move}-{candidate}`) names a move stored before scopes,
  and does not say which store made it;
- the cloud says when it made the instance
  (`Instance.created_at`: EC2's LaunchTime, Compute Engine's creationTimestamp, Azure's
  timeCreated, the local launcher's launch record; when a cloud gives no creation time but
  a start time, that), and that time lies within the move's life, from its creation to
  its last change, give or take CLOCK_SKEW (`Instance.made_between`). One whose making
  time is unknown, or outside its move, may be another store's paying job, and is left
  alone: a stray left running costs less than another team's job ended;
- its id is no open placement's (a live placement is never ended here);
- its move has ended (a move under way adopts what its launch made, or ends it), and
  GRACE_SECONDS have passed since its move, or its placement, ended: a create sent before
  is still given time to be seen and placed by its move.

Each one is ended with one line in its job's log naming the instance, its cloud and
region, why, and what it cost at the stored price (when the cloud says since when it
runs). The listing is made before the store is read, so a launch placed meanwhile
is seen placed.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from costsched import amounts
from costsched.migration.launcher import CloudError, Instance, Launcher
from costsched.model import FINAL_STATES, JOB_STATES
from costsched.service.jobs.runs import JobEvent
from costsched.service.jobs.state_said import state_said
from costsched.store import PriceStore
from costsched.store.moves import MoveRecord
from costsched.store.scope import Attempt, ours, parse_attempt
from costsched.validation import as_time

GRACE_SECONDS = 900.0  # a create's call and its retries are long over by then
SWEEP_SECONDS = 300.0  # between two sweeps of a daemon
LOOKBACK = timedelta(days=7)  # the launchers and places of the moves changed since
SWEEP_EVENT = "sweep"  # the kind of the line in the job's log
_LIVE_JOB_STATES = tuple(s for s in JOB_STATES if s not in FINAL_STATES)


@dataclass(frozen=True)
class Stray:
    """A live instance no live placement owns: its job, why, and its stored price."""

    instance: Instance
    job_id: int
    why: str
    usd_per_hour: float | None

    def line(self, at: datetime) -> str:
        """'ended instance ID (CLOUD REGION): WHY; what it cost'."""
        cloud, region = self.instance.offering_key[:2]
        return (f"ended instance {self.instance.id} ({cloud} {region}), which ran for no "
                f"placement: {self.why}; {self._cost(at)}")

    def _cost(self, at: datetime) -> str:
        price = self.usd_per_hour
        if price is None:
            return "its price is not stored"
        started = self.instance.started_at
        if started is None:
            return (f"billed at {amounts.stored_price(price)}/h (stored price) since it started, "
                    "the cloud does not say when")
        hours = max((at - started).total_seconds(), 0.0) / 3600.0
        span, rate, cost = amounts.hours_times(hours, price)  # the product reads as it is
        return f"up {span} h at {rate}/h (stored price): {cost}"


def launcher_of(spec: dict) -> str:
    """The launcher a job was launched with (its stored spec's)."""
    return str(spec.get("launcher", "local"))


def places_to_sweep(store: PriceStore, since: datetime) -> dict[str, set[tuple[str, str]]]:
    """{launcher name: the (cloud, region) pairs tried by its live jobs' moves and by the
    moves changed since `since`}."""
    live = {r.id: r for r in store.jobs.records(states=_LIVE_JOB_STATES)}
    moves = {m.id: m for m in store.moves.changed_since(since)}
    moves.update((m.id, m) for ms in store.moves.of_jobs(live).values() for m in ms)
    jobs = {**{r.id: r for r in store.jobs.records({m.job_id for m in moves.values()}
                                                   - set(live))}, **live}
    out: dict[str, set[tuple[str, str]]] = {launcher_of(r.spec): set() for r in live.values()}
    for move in moves.values():
        places = out.setdefault(launcher_of(jobs[move.job_id].spec), set())
        places.update((str(c["key"][0]), str(c["key"][1])) for c in move.candidates)
    return out


def owed(store: PriceStore, at: datetime) -> bool:
    """Whether a launch that failed over ended too recently to have been swept yet (a
    create it sent may show up until GRACE_SECONDS after, and is ended by the first sweep
    after that): a supervisor keeps watching until then."""
    since = at - timedelta(seconds=GRACE_SECONDS + SWEEP_SECONDS)
    return any(m.ended and m.tried > 0 for m in store.moves.changed_since(since))


def attempt_of(instance: Instance) -> Attempt | None:
    """What its attempt tag names (scope, job, move, candidate); None: not a move's tag."""
    return parse_attempt(instance.attempt)


def strays(store: PriceStore, instances: Iterable[Instance], at: datetime,
           grace: float = GRACE_SECONDS) -> list[Stray]:
    """The live ones of `instances` no live placement owns, to be ended at `at` (see the
    module's doc for what is left alone)."""
    scope = store.moves.scope
    tagged = {i.id: (i, attempt_of(i)) for i in instances if i.live}
    # Another store's scope: never looked at further (its move ids are not this store's).
    tagged = {k: (i, a) for k, (i, a) in tagged.items()
              if a is not None and a.job_id == i.job_id and a.scope in ("", scope)}
    if not tagged:
        return []
    moves = store.moves.by_ids({a.move_id for _, a in tagged.values()})
    job_ids = {a.job_id for _, a in tagged.values()}
    placed = store.jobs.placements_of(job_ids)
    open_ids = set(placed.loc[placed["end_at"].isna(), "instance"].astype(str))
    ended = placed[placed["end_at"].notna()].groupby("instance")["end_at"].max()
    states = {r.id: state_said(r) for r in store.jobs.records(job_ids)}
    out = []
    for instance_id, (instance, attempt) in sorted(tagged.items()):
        job_id, index = attempt.job_id, attempt.candidate
        move = moves.get(attempt.move_id)
        if move is None or instance_id in open_ids or \
                not ours(instance.attempt, job_id, scope, [move]) or \
                not _launched_by(move, attempt, instance):
            continue
        placement_end = ended.get(instance_id)
        last = max([move.updated_at] + ([placement_end.to_pydatetime()]
                                        if placement_end is not None else []))
        if move.ended and (at - last).total_seconds() >= grace:
            out.append(Stray(instance, job_id, _why(move, instance, placement_end,
                                                    states.get(job_id, "")),
                             _price(move.candidates[index])))
    return out


def _launched_by(move: MoveRecord, attempt: Attempt, instance: Instance) -> bool:
    """Whether `instance` is what `move`'s candidate `attempt.candidate` launched, as this
    store says (its tag is this store's: `ours`)."""
    index = attempt.candidate
    if move.job_id != attempt.job_id or move.scope != attempt.scope or \
            index >= len(move.candidates):
        return False
    if tuple(move.candidates[index]["key"]) != tuple(instance.offering_key):
        return False
    # Made while the move was under way (unproven is left alone): a tag of the old form
    # does not name the store, and a store copied whole carries its scope along.
    return instance.made_between(move.created_at, move.updated_at)


def _why(move: MoveRecord, instance: Instance, placement_end: object, job_state: str) -> str:
    """Why an instance a move launched is stray; `job_state`: its job's state in a sentence
    (`state_said`), '' for a job not in the store."""
    job = f"job {move.job_id} {job_state}" if job_state else \
        f"job {move.job_id} is not in the store"
    if placement_end is not None:
        return f"its placement had ended and {job}"
    return (f"launch attempt {instance.attempt} was never placed (move {move.id}, a "
            f"{move.kind}, {move.state}) and {job}")


def _price(candidate: dict) -> float | None:
    price = candidate.get("usd_per_hour")
    return None if price is None else float(price)


def sweep(store: PriceStore, launcher: Launcher, places: Collection[tuple[str, str]] = (),
          *, at: datetime | str | None = None, grace: float = GRACE_SECONDS
          ) -> list[JobEvent]:
    """End every instance of `launcher` (asked in `places` too) that runs for no live
    placement (`strays`), a line in its job's log each; what was done, a line each (an
    instance the cloud would not end is said, and asked about again at the next sweep).
    A CloudError of the listing is raised: nothing was ended."""
    found = launcher.tagged(places)  # before the store is read: see the module's doc
    when = as_time(at)
    events = []
    for stray in strays(store, found, when, grace):
        try:
            launcher.terminate(stray.instance.id)
        except CloudError as exc:
            events.append(JobEvent(stray.job_id, "cloud", f"instance {stray.instance.id} "
                                   f"runs for no placement and could not be ended: {exc}; "
                                   "asked again at the next sweep", level="warning"))
            continue
        line = stray.line(when)
        store.jobs.note(stray.job_id, SWEEP_EVENT, line, at=when)
        events.append(JobEvent(stray.job_id, SWEEP_EVENT, line, level="warning"))
    return events
