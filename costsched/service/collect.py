"""Collecting today's prices from the clouds' APIs into the store."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from costsched import catalog
from costsched import clouds as cloud_facts
from costsched.model import InvalidInput
from costsched.service.stores import StoreLike, using
from costsched.service.values import as_time, at_least, choices

if TYPE_CHECKING:
    from price_collectors.base import PlanHook, ProgressHook
    from price_collectors.runner import RunSummary


def route_regions(regions: Sequence[str], clouds: Sequence[str] = (),
                  ) -> dict[str, list[str]]:
    """Each cloud's share of `regions`, told apart by the clouds' region name shapes.

    No regions: every cloud of `clouds` (default all) with [] (all its regions). With
    regions and no clouds, only the clouds that own one of them; with clouds named, each
    of them must own one.
    """
    explicit = bool(clouds)
    names = list(dict.fromkeys(choices("cloud", clouds, cloud_facts.NAMES)
                               or cloud_facts.NAMES))
    routed: dict[str, list[str]] = {c: [] for c in names}
    for region in regions:
        owners = cloud_facts.owners_of_region(region)
        if not owners:
            # suggested from the clouds named (--cloud aws: aws's regions), else all
            named = tuple(names) if explicit else cloud_facts.NAMES
            raise InvalidInput(cloud_facts.region_problem(region, named)
                               or f"region {region!r}")
        if not any(c in routed for c in owners):
            raise InvalidInput(f"region {region!r} is a region of {owners[0]}, but the clouds "
                               f"asked for are {', '.join(names)}")
        for cloud in owners:
            if cloud in routed:
                routed[cloud].append(region)
    if regions:
        empty = [c for c, r in routed.items() if not r]
        if explicit and empty:
            example = cloud_facts.get(empty[0]).region_example
            raise InvalidInput(f"cloud {empty[0]}: none of the regions {', '.join(regions)} is "
                               f"a {empty[0]} region (like {example})")
        routed = {c: r for c, r in routed.items() if r}
    return routed


@dataclass(frozen=True)
class CollectRequest:
    """A checked collection: each cloud's regions ([] = all of them) and the options."""

    regions: dict[str, list[str]]
    gpus: list[str] = field(default_factory=list)
    since: datetime | None = None
    gcp_project: str | None = None
    workers: int = 32

    @property
    def clouds(self) -> list[str]:
        return list(self.regions)


def collect_request(
    *,
    clouds: Sequence[str] = (),
    regions: Sequence[str] = (),
    gpus: Sequence[str] = (),
    since: datetime | str | None = None,
    gcp_project: str | None = None,
    workers: int = 32,
) -> CollectRequest:
    """The values of `collect_prices` checked, and the regions routed to their clouds."""
    routed = route_regions(regions, clouds)
    gpu_models = [catalog.gpu_model_name(g) for g in gpus]
    when = as_time(since, "since") if since is not None else None
    at_least("workers", workers, 1, "a whole number")
    return CollectRequest(routed, gpu_models, when, gcp_project, workers)


def collect_prices(
    store: StoreLike,
    *,
    clouds: Sequence[str] = (),
    regions: Sequence[str] = (),
    gpus: Sequence[str] = (),
    since: datetime | str | None = None,
    gcp_project: str | None = None,
    workers: int = 32,
    progress: ProgressHook | None = None,
    planned: PlanHook | None = None,
    signals: bool = False,
) -> RunSummary:
    """Collect current on-demand and spot GPU prices and store what is new, in one
    transaction; with `signals`, the clouds' published spot risk signals too (AWS Spot
    Instance Advisor buckets and placement scores, Azure eviction rates; each collector's
    count or error in the summary's `signals`). A cloud that cannot run (no SDK, no
    credentials) is reported in its summary's `error`, a failed region in `failed`; the
    others are stored.

    `clouds` (default all) and `regions` (default all of theirs) choose what to collect,
    `gpus` the GPU models. `since`: AWS spot history from this time; default the newest
    stored time of each region, or 7 days ago. `gcp_project`: the project whose
    accelerator availability is read. `workers`: regions collected at once, per cloud.
    `progress(cloud, unit, error)` follows each unit, `planned(cloud, units)` says which
    units a cloud will collect.
    """
    request = collect_request(clouds=clouds, regions=regions, gpus=gpus, since=since,
                              gcp_project=gcp_project, workers=workers)
    summary = run_collection(store, request, progress=progress, planned=planned)
    if signals:
        from price_collectors import runner

        with using(store) as opened:
            summary.signals = runner.run_signals(
                runner.make_signal_collectors(request.regions), opened)
    return summary


def run_collection(store: StoreLike, request: CollectRequest, *,
                   progress: ProgressHook | None = None,
                   planned: PlanHook | None = None) -> RunSummary:
    """Collect what `request` asks for with the clouds' real SDK clients, and store it;
    then read the accounts' quotas in the regions collected (`price_collectors.quotas`)."""
    from price_collectors import runner
    from price_collectors.quotas import read_quotas

    collectors = runner.make_collectors(request.regions, gpus=request.gpus,
                                        gcp_project=request.gcp_project,
                                        workers=request.workers)
    with using(store) as opened:
        summary = runner.run(collectors, opened, since=request.since, progress=progress,
                             planned=planned)
        # A cloud that could not be collected at all said why already.
        regions = {c: request.regions[c] or s.regions for c, s in summary.clouds.items()
                   if not s.error}
        summary.quotas = read_quotas(opened, regions, gcp_project=request.gcp_project)
        return summary
