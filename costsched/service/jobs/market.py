"""The market a pass decides its jobs in, read once (`market_at`): the prices as of a time,
the preemption rates, the offerings that just met no capacity, the account's quotas, the
planner's prepared offerings, and the speed the rest of each running job runs at
(`rest_tables`: its measured speed where one is trusted, else its plan's;
`costsched.throughput_rest`)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from datetime import datetime, timedelta
from functools import cached_property

from costsched.jobspec import ResolvedJob
from costsched.lazy import pandas as pd
from costsched.model import InvalidInput
from costsched.optimize.hazard import Evidence
from costsched.optimize.planner import JobPlan, prepare, rank_key
from costsched.optimize.quotas import blocked_keys
from costsched.passes import memo
from costsched.policies import OfferingKey
from costsched.prices import prices_at
from costsched.service.decide import decision_rates
from costsched.service.quotas import QuotaFacts
from costsched.service.speeds import job_paces, rest_table
from costsched.store import PriceStore
from costsched.store.quotas import refusals_recorded
from costsched.throughput import ThroughputTable
from costsched.throughput_rest import RestTable

CAPACITY_COOLDOWN = timedelta(minutes=30)  # an offering without capacity is tried last


class Market:
    """What every job of a pass is decided from, read once: the prices as of `when`, the
    preemption rates, the offerings that just met no capacity, the account's quotas, the
    planner's offerings (with the quota that binds each)."""

    def __init__(self, store: PriceStore, when: datetime) -> None:
        self.store, self.when = store, when
        self._attached: dict[tuple[bool, int], pd.DataFrame] = {}
        self._over: dict[tuple[bool, int, int], frozenset[OfferingKey]] = {}
        # (job id, id of its table): (that table, kept alive; the rest's table)
        self._rest: dict[tuple[int, int], tuple[ThroughputTable, ThroughputTable]] = {}
        # a job's ranking (`rank_key`, ...): (its job, whose table is kept alive; its plan)
        self._plans: dict[Hashable, tuple[ResolvedJob, JobPlan]] = {}

    @cached_property
    def frame(self) -> pd.DataFrame:
        return self._frame(include_cpu=False)

    @cached_property
    def cpu_frame(self) -> pd.DataFrame:
        """The prices with the CPU instance types too (for CPU jobs)."""
        return self._frame(include_cpu=True)

    def prices(self, include_cpu: bool) -> pd.DataFrame:
        """`frame`, or `cpu_frame` with `include_cpu` (read only)."""
        return self.cpu_frame if include_cpu else self.frame

    def _frame(self, include_cpu: bool) -> pd.DataFrame:
        frame = prices_at(self.store, self.when, include_cpu=include_cpu)
        if frame.empty:
            raise InvalidInput(f"at {self.when:%Y-%m-%d %H:%M} UTC: no prices known; import "
                               "or collect prices first")
        return frame

    @cached_property
    def rates(self) -> Evidence:
        """Preemption rates: costsched's own jobs' and the store's observations."""
        return decision_rates(self.store, self.when, measured_rates(self.store, self.when))

    @property
    def full(self) -> set[OfferingKey]:
        """Offerings that met no capacity lately on a cloud's own instances (read afresh:
        a launch of the pass may just have met none): tried last."""
        return self.full_for(here=False)

    def full_for(self, here: bool) -> set[OfferingKey]:
        """`full`, for the launches of a launcher whose instances run on this machine
        (`here`) with the capacity its own simulated instances met too."""
        return set(self.full_seen(here))

    def full_seen(self, here: bool) -> dict[OfferingKey, datetime]:
        """`full_for`, each offering with when it last met no capacity (what says why a
        launch tries it after the others: `tried_last`)."""
        seen = self.store.availability.since(self.when - CAPACITY_COOLDOWN, event="capacity",
                                             clouds_only=not here)
        return {(r.cloud, r.region, r.zone, r.instance_type, r.market, "linux"):
                r.at.to_pydatetime() for r in seen.itertuples()}  # oldest first: the last kept

    @property
    def quotas(self) -> QuotaFacts:
        """The account's quotas as last read, and the launches they refused since (read
        again once a launch of this process was refused: a later job of the pass knows)."""
        return QuotaFacts.of(self.store)

    @cached_property
    def _prepared(self) -> pd.DataFrame:
        # Inside a pass, the offerings the launch's estimate ranks too (`service.estimates`).
        return memo(("prepared", self.store.url, self.when),
                    lambda: prepare(self.frame, self.rates), shared=True)

    @cached_property
    def _cpu_prepared(self) -> pd.DataFrame:
        return prepare(self.cpu_frame, self.rates)

    @property
    def offerings(self) -> pd.DataFrame:
        """The planner's prepared offerings, with the quota that binds each (read only:
        every job ranks the same ones)."""
        return self._with_quotas(cpu=False)

    @property
    def cpu_offerings(self) -> pd.DataFrame:
        return self._with_quotas(cpu=True)

    def _with_quotas(self, cpu: bool) -> pd.DataFrame:
        key = (cpu, refusals_recorded())
        if key not in self._attached:
            self._attached[key] = self.quotas.attach(self._cpu_prepared if cpu
                                                     else self._prepared)
        return self._attached[key]

    def offerings_for(self, resolved: ResolvedJob) -> pd.DataFrame:
        """The offerings a job ranks: with the CPU instance types for a CPU job."""
        return self.cpu_offerings if resolved.cpu else self.offerings

    def plan(self, resolved: ResolvedJob, make: Callable[[], JobPlan]) -> JobPlan:
        """The job's plan in this market, made once (`make()`): a launch's budget check,
        its placement and the prediction it keeps read the one plan. A job alike in all
        its ranking depends on (`planner.rank_key`, its deadline as a time, its `ordered:`
        alternatives, its notes) shares it, as its own; a quota refusal recorded since
        (the offerings' quotas changed) makes it again."""
        key = (rank_key(resolved), resolved.cpu, resolved.deadline_at, repr(resolved.order),
               repr(getattr(resolved, "notes", ())), refusals_recorded())
        if key not in self._plans:
            self._plans[key] = (resolved, make())
        return self._plans[key][1].for_job(resolved)

    def over_quota(self, resolved: ResolvedJob) -> frozenset[OfferingKey]:
        """The offerings whose quota does not hold the job's instances (its nodes), one
        set for every job of that size (the one a job runs on may be in it: its own
        instances are counted in the quota's use)."""
        key = (resolved.cpu, resolved.nodes, refusals_recorded())
        if key not in self._over:
            self._over[key] = frozenset(blocked_keys(self.offerings_for(resolved),
                                                     resolved.nodes))
        return self._over[key]

    def share_over_quota(self, resolved: ResolvedJob, offerings: pd.DataFrame) -> None:
        """Give `over_quota` the job's set from `offerings`: the offerings of this market's
        own prices, rates and quotas, prepared by the caller (a plan's, its superseded
        prices left out), so that it prepares them no second time."""
        key = (resolved.cpu, resolved.nodes, refusals_recorded())
        if key not in self._over:
            self._over[key] = frozenset(blocked_keys(offerings, resolved.nodes))

    def rest_tables(self, jobs: Sequence[tuple[int | None, ResolvedJob]]
                    ) -> list[ThroughputTable]:
        """The table the rest of each job (its id, None when not stored yet, and its
        resolved spec) is priced with: at its measured pace where it has a trusted measured
        speed, else its own (`service.speeds.rest_table`). Its records, placements and step
        readings are read once for all of them, and kept for the pass."""
        todo = {j for j, r in jobs if j is not None and (j, id(r.table)) not in self._rest
                and not isinstance(r.table, RestTable)}  # (priced at its pace already)
        if todo:
            records = self.store.jobs.records(sorted(todo))
            mine = {j: r for j, r in jobs if j in todo}
            paces = job_paces(self.store, records, {
                j: (r.job.model, r.table) for j, r in mine.items()})
            for record in records:
                resolved = mine[record.id]
                self._rest[(record.id, id(resolved.table))] = (resolved.table, rest_table(
                    resolved.table, resolved.job.model, record.spec,
                    paces.get(record.id, [])))
        return [self._rest.get((j, id(r.table)), (None, r.table))[1] if j is not None
                else r.table for j, r in jobs]


def measured_rates(store: PriceStore, at: datetime) -> pd.DataFrame | None:
    """Preemptions per spot hour that costsched's own jobs met on the clouds before `at`,
    per (cloud, region, zone, instance type, GPU model and count): the decision model
    pools them (`hazard`). (A plan as of a past time counts nothing after it.) Neither the
    hours nor the preemptions of the local launcher's instances count: they stand in for
    an offering on this machine, and say nothing of its cloud."""
    when = pd.Timestamp(at)
    seen = store.availability.since(clouds_only=True)
    seen = seen[seen["at"] <= when]
    placements = store.jobs.placements()
    if placements.empty:
        return None
    spot = placements[(placements["market"] == "spot") & (placements["start_at"] < when)]
    spot = spot[~spot["job_id"].isin(_run_here(store, set(spot["job_id"])))]
    if spot.empty:
        return None
    end = spot["end_at"].fillna(when).clip(upper=when)
    hours = (end - spot["start_at"]).dt.total_seconds().clip(lower=0) / 3600
    keys = ["cloud", "region", "zone", "instance_type", "gpu_model", "gpu_count"]
    frame = spot.assign(hours=hours).groupby(keys, as_index=False)["hours"].sum()
    preempted = seen[seen["event"] == "preempted"].groupby(keys).size().rename("preemptions")
    frame = frame.join(preempted, on=keys).fillna({"preemptions": 0})
    return frame[frame["hours"] > 0]


def _run_here(store: PriceStore, job_ids: set[int]) -> set[int]:
    """Those of `job_ids` run by a launcher whose instances run on this machine (as their
    specs say; one that does not say is a cloud's, as before)."""
    from launchers import runs_here

    return {r.id for r in store.jobs.records(sorted(job_ids))
            if runs_here(str(r.spec.get("launcher", "")))} if job_ids else set()


def pass_table(store: PriceStore) -> ThroughputTable:
    """The store's throughput table with its measured speeds (`table_with_measured`), read
    once per pass (`costsched.passes`): the table a launch resolves its jobs with is the one
    its budget check and its start read."""
    from costsched.service.throughputs import table_with_measured

    return memo(("throughputs", store.url), lambda: table_with_measured(store), shared=True)


def market_at(store: PriceStore, when: datetime) -> Market:
    """The market of `when`, built once per pass (`costsched.passes`)."""
    return memo(("market-now", store.url, when), lambda: Market(store, when), shared=True)
