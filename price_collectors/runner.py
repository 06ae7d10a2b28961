"""Run collectors and store what they collected: one transaction per run.

Each cloud's collector runs in its own thread (and its regions in its own pool). Nothing
is written until every collector has finished; then the whole batch goes to
`PriceStore.ingest` in one transaction, so a crash mid-collection leaves the store as it
was, and a re-run stores only what is new (the store is idempotent on offering and time;
snapshot sources, whose times are the request's, are stored only when the price moved).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import numpy as np
import pandas as pd

from costsched.model import InvalidInput
from costsched.store import OFFERING_KEY, PriceStore
from costsched.vocabulary import prefixed
from price_collectors.aws import AwsCollector
from price_collectors.azure import AzureCollector
from price_collectors.azure_eviction import AzureEvictionCollector
from price_collectors.base import (
    Collection,
    Collector,
    PlanHook,
    ProgressHook,
    empty_frame,
    one_line,
)
from price_collectors.gcp import GcpCollector
from price_collectors.placement_scores import PlacementScoreCollector
from price_collectors.spot_advisor import SpotAdvisorCollector

MAX_REJECTIONS_SHOWN = 20
# The live collector of each cloud.
COLLECTORS: dict[str, type[Collector]] = {
    c.cloud: c for c in (AwsCollector, GcpCollector, AzureCollector)}

# The published spot risk signals of each cloud (GCP publishes none), collected with the
# prices: each has `cloud`, `name` and `collect(at) -> frame of risk signal observations`.
SIGNAL_COLLECTORS: dict[str, tuple[type, ...]] = {
    "aws": (SpotAdvisorCollector, PlacementScoreCollector),
    "azure": (AzureEvictionCollector,)}
# A signal unchanged since its last stored observation is stored again after this long
# (history stays one row a day at most, and `SignalStore.latest` sees it fresh).
SIGNAL_REFRESH = timedelta(days=1)


@dataclass
class CloudSummary:
    cloud: str
    regions: list[str] = field(default_factory=list)
    units: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    collected: int = 0
    unchanged_snapshot: int = 0
    rejected: int = 0
    rejected_by_reason: dict[str, int] = field(default_factory=dict)
    rejections: list[str] = field(default_factory=list)
    ignored: dict[str, int] = field(default_factory=dict)
    zones: int = 0  # (zone, instance type, market) rows of zone coverage recorded
    error: str | None = None

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class RunSummary:
    clouds: dict[str, CloudSummary]
    inserted: int = 0
    unchanged: int = 0
    store: str = ""
    # Risk signal collectors run with the prices: name -> observations stored, or error.
    signals: dict[str, int | str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(not c.error and not c.failed for c in self.clouds.values())

    @property
    def rejected(self) -> int:
        return sum(c.rejected for c in self.clouds.values())

    def to_dict(self) -> dict:
        return {"inserted": self.inserted, "unchanged": self.unchanged,
                "rejected": self.rejected, "ok": self.ok, "store": self.store,
                "signals": dict(self.signals),
                "clouds": {name: c.to_dict() for name, c in self.clouds.items()}}


def make_collectors(
    regions: dict[str, list[str]],
    *,
    gpus: Sequence[str] = (),
    gcp_project: str | None = None,
    workers: int = 32,
) -> list[Collector]:
    """Collectors with their default (real SDK) clients: cloud -> its regions ([] = all)."""
    unknown = [cloud for cloud in regions if cloud not in COLLECTORS]
    if unknown:
        raise InvalidInput(f"cloud {unknown[0]!r}: no collector; expected one of "
                           f"{', '.join(COLLECTORS)}")
    return [COLLECTORS[cloud].from_options(names, gpus=gpus, workers=workers,
                                           gcp_project=gcp_project)
            for cloud, names in regions.items()]


def make_signal_collectors(regions: dict[str, list[str]]) -> list:
    """The risk signal collectors of the clouds in `regions` (cloud -> its regions)."""
    return [kind(names) for cloud, names in regions.items()
            for kind in SIGNAL_COLLECTORS.get(cloud, ())]


def run_signals(collectors: Sequence, store: PriceStore,
                at: datetime | None = None) -> dict[str, int | str]:
    """Collect each signal and store the observations that changed (or were last stored
    over SIGNAL_REFRESH ago). A collector that cannot run gives its one-line error."""
    when = at or datetime.now(timezone.utc)
    out: dict[str, int | str] = {}
    for collector in collectors:
        label = f"{collector.cloud}:{collector.name}"
        try:
            frame = collector.collect(when)
        except Exception as exc:  # the signal as a whole could not be collected
            out[label] = one_line(exc)
            continue
        out[label] = store.signals.add(changed_signals(frame, store, when))
    return out


def changed_signals(frame: pd.DataFrame, store: PriceStore, at: datetime) -> pd.DataFrame:
    """The observations whose value differs from the newest stored one of the same
    offering and kind, or whose newest is older than SIGNAL_REFRESH."""
    key = ["cloud", "region", "zone", "instance_type", "os", "kind"]
    stored = store.signals.latest(at, max_age=SIGNAL_REFRESH)
    if frame.empty or stored.empty:
        return frame
    merged = frame.merge(stored[[*key, "value"]].rename(columns={"value": "stored"}),
                         on=key, how="left")
    keep = (merged["stored"].isna() | (merged["stored"] != merged["value"])).to_numpy()
    return frame[keep].reset_index(drop=True)


def watermarks(store: PriceStore, filters: dict[str, list[str]]) -> dict[str, datetime]:
    """The newest stored observation time per region among the offerings `filters` select."""
    latest = store.as_of(datetime.now(timezone.utc) + timedelta(days=1), **filters)
    if latest.empty:
        return {}
    newest = latest.groupby("region")["effective_at"].max()
    return {region: ts.to_pydatetime() for region, ts in newest.items()}


def drop_unchanged(frame: pd.DataFrame, store: PriceStore) -> tuple[pd.DataFrame, int]:
    """Rows whose price differs from the offering's latest stored price (or that are older
    than it), and the number of rows dropped because nothing changed."""
    if frame.empty:
        return frame, 0
    clouds = sorted(set(frame["cloud"]))
    stored = store.as_of(datetime.now(timezone.utc) + timedelta(days=1), cloud=clouds)
    if stored.empty:
        return frame, 0
    stored = stored[[*OFFERING_KEY, "usd_per_hour", "effective_at"]].rename(
        columns={"usd_per_hour": "stored_price", "effective_at": "stored_at"})
    merged = frame.merge(stored, on=OFFERING_KEY, how="left")
    same = (merged["stored_price"].notna()
            & np.isclose(merged["usd_per_hour"].astype(float),
                         merged["stored_price"].astype(float), rtol=1e-9, atol=0)
            & (merged["effective_at"] >= merged["stored_at"]))
    keep = ~same.to_numpy()
    return frame[keep].reset_index(drop=True), int((~keep).sum())


def run(
    collectors: Sequence[Collector],
    store: PriceStore,
    *,
    since: datetime | None = None,
    progress: ProgressHook | None = None,
    planned: PlanHook | None = None,
) -> RunSummary:
    """Collect from every collector, then store the whole batch in one transaction, and
    then the zones that offer what was priced per region (`PriceStore.record_zones`).

    A cloud that cannot run at all (no SDK, no credentials) is reported in its summary's
    `error`; failed units in `failed`. Anything else (a crash) propagates before any write.
    """
    summaries = {c.cloud: CloudSummary(c.cloud) for c in collectors}
    collections: dict[str, Collection] = {}

    def one(collector: Collector) -> None:
        try:
            when = since
            filters = collector.watermark_filters()
            if when is None and filters is not None:
                when = watermarks(store, filters)
            collections[collector.cloud] = collector.collect(
                when, progress=progress, planned=planned)
        except Exception as exc:  # the cloud as a whole could not run
            # One line naming the cloud once, however its SDK's error spelled it.
            summaries[collector.cloud].error = prefixed(collector.cloud, one_line(exc))

    with ThreadPoolExecutor(max_workers=max(1, len(collectors)),
                            thread_name_prefix="collect") as pool:
        for future in [pool.submit(one, c) for c in collectors]:
            future.result()  # re-raises a crash (KeyboardInterrupt, SystemExit...)
    seen_at = datetime.now(timezone.utc)  # when the zones offered what they offer

    frames, zones = [], []
    for collector in collectors:
        collection = collections.get(collector.cloud)
        if collection is None:
            continue
        frame = collection.observations
        summary = summaries[collector.cloud]
        if collector.snapshot:
            frame, summary.unchanged_snapshot = drop_unchanged(frame, store)
        _fill(summary, collection)
        if len(frame):
            frames.append(frame)
        offered_in = collection.zones()
        summary.zones = len(offered_in)
        if len(offered_in):
            zones.append(offered_in)
    batch = pd.concat(frames, ignore_index=True) if frames else empty_frame()
    result = store.ingest(batch)
    if zones:
        store.record_zones(pd.concat(zones, ignore_index=True), seen_at)
    unchanged = result.unchanged + sum(s.unchanged_snapshot for s in summaries.values())
    return RunSummary(summaries, inserted=result.inserted, unchanged=unchanged,
                      store=store.where)


def _fill(summary: CloudSummary, collection: Collection) -> None:
    summary.regions = collection.regions
    summary.units = len(collection.units) + len(collection.failed)
    summary.failed = dict(sorted(collection.failed.items()))
    summary.collected = len(collection.observations)
    summary.rejected = len(collection.rejected)
    summary.rejected_by_reason = collection.rejected_by_reason()
    summary.rejections = [str(r) for r in collection.rejected[:MAX_REJECTIONS_SHOWN]]
    summary.ignored = dict(Counter(collection.ignored).most_common())
