"""The price history: import recorded logs, prices as of a time, history, export."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from costsched import catalog, file_limits
from costsched.clouds.hints import collect_hint
from costsched.config import effective
from costsched.model import CLOUDS, MARKETS, InvalidInput
from costsched.prices import SPOT_PLACE, partial_source, prices_at
from costsched.service.repriced_jobs import Repriced, Touched, repriced
from costsched.service.stores import StoreLike, using
from costsched.service.values import as_time, choices
from costsched.service.values import regions as known_regions
from costsched.spot_market import taken_whole
from costsched.taskfile import close_files

EXPORT_SUFFIXES = (".csv", ".parquet")


@dataclass(frozen=True)
class SpotReading:
    """How an import's spot prices of `cloud` were read: as its whole spot market or as a
    partial update (`partial`), asked for (`prices import --partial` or `--whole`) or
    decided by how many of the cloud's `bundled` spot offerings they list (`listed`;
    `costsched.spot_market.taken_whole`)."""

    cloud: str
    listed: int
    bundled: int
    partial: bool
    asked: bool

    def note(self) -> str | None:
        """The one line that says a reading the user did not ask for and the flag for the
        other one; None when asked, or when read whole (the import's note of what the
        prices hide then says so, `HiddenSnapshot`)."""
        if self.asked or not self.partial:
            return None
        return (f"{self.cloud} spot: read as a partial update, since the prices list "
                f"{self.listed:,} of {self.cloud}'s {self.bundled:,} bundled spot offerings: "
                "they replace the bundled prices of their own places (a zone's: not its "
                "region's) and hide none of the rest; `costsched prices import --whole "
                f"FILE` takes them as {self.cloud}'s "
                "whole spot market")


@dataclass(frozen=True)
class ImportResult:
    files: int  # files read
    read: int  # observations in them
    inserted: int
    unchanged: int  # already stored
    errors: list[str] = field(default_factory=list)  # one line per file not imported
    store: str = ""
    # Spot availability (traces and probe logs): intervals read and newly stored, and per
    # file {"file", "intervals"}.
    intervals: int = 0
    intervals_inserted: int = 0
    availability: list[dict] = field(default_factory=list)
    # Booked capacity (capacity block offerings, reservations held): read, newly stored,
    # and per file {"file", "offerings"}.
    booked: int = 0
    booked_inserted: int = 0
    booked_files: list[dict] = field(default_factory=list)
    # Prices stored before, imported again with `partial`: now marked as a partial update.
    marked_partial: int = 0
    # Prices stored as a partial update, imported again with `partial` False: now whole.
    marked_whole: int = 0
    clouds: list[str] = field(default_factory=list)  # the clouds of the prices read
    # Per cloud with spot prices read: how they were read (`SpotReading`).
    spot_readings: list[SpotReading] = field(default_factory=list)
    # Jobs already run (ended or running) whose cost the prices change, and the change of
    # their cost in all, in USD (`service.repriced_jobs`).
    repriced_jobs: int = 0
    repriced_running: int = 0
    repriced_usd: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)

    def repriced_line(self) -> str | None:
        """'re-prices 2 jobs already run: their cost changes by -$0.00010', or None."""
        return Repriced(self.repriced_jobs, self.repriced_usd, self.repriced_running).line()


# progress(files done, files in all, the file just read)
ImportProgress = Callable[[int, int, Path], None]


def import_prices(store: StoreLike, paths: Sequence[str | Path], *,
                  progress: ImportProgress | None = None,
                  trace_start: datetime | str | None = None,
                  partial: bool | None = None) -> ImportResult:
    """Import recorded price logs (AWS spot history JSON, Azure daily CSV, exports) and
    spot availability (spot traces, probe logs) from files or directories: the prices in
    one transaction, the availability in another. A bad file is an error line, not an
    exception. `trace_start`: when spot traces start whose folder names no day (default:
    midnight UTC of the day their folder names). `partial`: the prices are a partial
    update of their clouds' markets (`costsched.spot_market.PARTIAL`; stored prices they
    repeat are marked so too), or with False each cloud's whole spot market (stored prices
    they repeat lose that mark); None (default): per cloud, whole only if they list most of
    its bundled spot offerings (`costsched.spot_market.taken_whole`). A path that does not
    exist raises InvalidInput naming it, before anything is read or stored."""
    from price_collectors import availability, booked, recorded

    check_paths(paths)
    limit = effective().files.import_mb  # each file's size, checked before it is read
    start = as_time(trace_start, "trace start") if trace_start is not None else None
    traces, others = availability.split(paths)
    files, expand_errors = recorded.expand(others)
    blocks = [f for f in files if booked.is_booked_body(f)]
    files = [f for f in files if f not in set(blocks)]
    done = 0

    def advance(path: Path) -> None:
        nonlocal done
        done += 1
        if progress:
            progress(done, len(files) + len(traces) + len(blocks), path)

    parsed = recorded.read_paths(files, progress=advance, limit_mb=limit)
    found = availability.read_paths(traces, start=start, progress=advance, limit_mb=limit)
    offered, block_errors, per_file = _booked_bodies(blocks, advance, limit)
    intervals = found.intervals()
    with using(store) as opened:
        observations = parsed.observations()
        readings = spot_readings(observations, partial)
        clouds = observations["cloud"].astype(str)
        if partial is None:  # by what they list, per cloud
            some = {r.cloud for r in readings if r.partial}
        else:
            some = set(clouds) if partial else set()
        observations = observations.assign(source=observations["source"].where(
            ~clouds.isin(some), observations["source"].map(partial_source)))
        touched = Touched(opened, observations, datetime.now(timezone.utc))
        before = touched.charges(opened)  # what jobs already run cost before these prices
        result = opened.ingest(observations)
        marked = 0 if partial is None else opened.mark_partial(observations, partial)
        after = repriced(touched, before, touched.charges(opened))
        added = opened.spot_availability.add(intervals)
        booked_added = sum(opened.booked.add(o, tenancy=t)[0] for o, t in offered)
    return ImportResult(files=parsed.files + len(found.files) + len(per_file),
                        read=result.total, inserted=result.inserted,
                        unchanged=result.unchanged,
                        errors=[*expand_errors, *parsed.errors, *found.errors,
                                *block_errors],
                        store=opened.where, intervals=len(intervals),
                        intervals_inserted=added,
                        availability=[{"file": str(path), "intervals": n}
                                      for path, n in found.files],
                        booked=sum(len(o) for o, _ in offered), booked_inserted=booked_added,
                        booked_files=per_file,
                        marked_partial=marked if partial else 0,
                        marked_whole=marked if partial is False else 0,
                        clouds=sorted(set(observations["cloud"].astype(str))),
                        spot_readings=readings, repriced_jobs=after.jobs,
                        repriced_running=after.running, repriced_usd=after.usd)


def spot_readings(observations: pd.DataFrame, partial: bool | None) -> list[SpotReading]:
    """Per cloud with spot prices among `observations`, how they are read: as asked
    (`partial` True or False), else by how many of its bundled spot offerings (places:
    cloud, region, type) they list (`costsched.spot_market.taken_whole`)."""
    spot = observations[observations["market"].astype(str) == "spot"]
    if spot.empty:
        return []
    bundled = prices_at(None, datetime.now(timezone.utc), markets=["spot"])
    places = {tuple(map(str, row)) for row in bundled[SPOT_PLACE].to_numpy().tolist()}
    out = []
    for cloud, rows in spot.groupby(spot["cloud"].astype(str), sort=True):
        listed = {tuple(map(str, row)) for row in rows[SPOT_PLACE].to_numpy().tolist()}
        of_cloud = sum(1 for place in places if place[0] == cloud)
        count = len(listed & places)
        whole = taken_whole(count, of_cloud) if partial is None else not partial
        out.append(SpotReading(str(cloud), count, of_cloud, not whole, partial is not None))
    return out


def _booked_bodies(paths: Sequence[Path], advance: Callable[[Path], None],
                   limit_mb: float | None = None,
                   ) -> tuple[list[tuple[list, list[str]]], list[str], list[dict]]:
    """The booked offerings of each DescribeCapacityBlockOfferings or
    DescribeCapacityReservations body (seen when the file was written: its age), the
    errors of the bad ones and per good file its count. A file over `limit_mb` is refused
    unread."""
    from price_collectors import booked

    offered, errors, per_file = [], [], []
    for path in paths:
        too_large = file_limits.problem(path, file_limits.IMPORT, limit_mb)
        if too_large is not None:
            errors.append(too_large)
            advance(path)
            continue
        seen = datetime.fromtimestamp(path.stat().st_mtime, tz=timezone.utc)
        try:
            found = booked.read_body(path, seen)
        except InvalidInput as exc:
            errors.append(str(exc))
        else:
            offered.append(found)
            per_file.append({"file": str(path), "offerings": len(found[0])})
        advance(path)
    return offered, errors, per_file


def check_paths(paths: Sequence[str | Path]) -> None:
    """InvalidInput naming the paths to import that do not exist."""
    missing = [Path(p) for p in paths if not Path(p).exists()]
    if missing:
        close = close_files(missing[0]) if len(missing) == 1 else ""
        raise InvalidInput(f"{', '.join(map(str, missing))}: cannot read: no such file or "
                           f"directory{close}")


def prices(
    store: StoreLike,
    at: datetime | str | None = None,
    *,
    clouds: Sequence[str] = (),
    regions: Sequence[str] = (),
    gpu_models: Sequence[str] = (),
    markets: Sequence[str] = (),
    instance_types: Sequence[str] = (),
    cheapest_per_gpu: bool = False,
) -> pd.DataFrame:
    """Every matching offering's price as of `at` (default now), current before superseded
    (`superseded`, see `costsched.prices.prices_at`), cheapest per GPU-hour first, with its
    age in days (`age_days`) and spot discount; the catalog's list prices fill in missing
    on-demand prices. `cheapest_per_gpu`: only the cheapest offering of each GPU model."""
    when = as_time(at, "at")
    gpus = [catalog.gpu_model_name(g) for g in gpu_models]
    filters = dict(clouds=choices("cloud", clouds, CLOUDS), regions=known_regions(regions),
                   gpu_models=gpus, markets=choices("market", markets, MARKETS),
                   instance_types=list(instance_types))
    with using(store) as opened:
        frame = prices_at(opened, when, superseded=True, **filters)
    age = pd.Timestamp(when) - pd.to_datetime(frame["effective_at"], utc=True)
    frame = frame.assign(age_days=age.dt.total_seconds() / 86400)
    if cheapest_per_gpu:
        frame = frame.drop_duplicates("gpu_model")  # rows are sorted cheapest first
    return frame


def price_history(
    store: StoreLike,
    instance_type: str,
    *,
    regions: Sequence[str] = (),
    markets: Sequence[str] = (),
    since: datetime | str | None = None,
    until: datetime | str | None = None,
    bundled: bool = True,
) -> pd.DataFrame:
    """Every known price change of an instance type in [since, until], oldest first: the
    store's observations and (with `bundled`) the bundled catalog's dated prices, each row
    with its source. A bundled price equal to the one before it in the same place (a weekly
    reading of an unchanged price) is not a change: the row before says until when it was
    seen (`last_seen_at`; a stored row's is its own time)."""
    start = as_time(since, "since") if since is not None else None
    end = as_time(until, "until") if until is not None else None
    market = choices("market", markets, MARKETS)
    known_regions(regions)
    with using(store) as opened:
        frame = opened.history(start=start, end=end, instance_type=[instance_type],
                               region=list(regions), market=market)
    frame = frame.drop(columns=["offering_id"]).assign(last_seen_at=frame["effective_at"])
    if bundled:
        listed = _changes_only(catalog.price_history(instance_type))
        keep = pd.Series(True, index=listed.index)
        if regions:
            keep &= listed["region"].isin(list(regions))
        if market:
            keep &= listed["market"].isin(market)
        if start is not None:
            keep &= listed["last_seen_at"] >= pd.Timestamp(start)
        if end is not None:
            keep &= listed["effective_at"] <= pd.Timestamp(end)
        frame = pd.concat([f for f in (frame, listed[keep]) if not f.empty] or [frame],
                          ignore_index=True)
    return frame.sort_values(["effective_at", "zone"], kind="stable", ignore_index=True)


def _changes_only(listed: pd.DataFrame) -> pd.DataFrame:
    """Bundled rows (oldest first) less those whose price equals the one before in the same
    place, with `last_seen_at`: the time of the last row of its run of equal prices."""
    if listed.empty:
        return listed.assign(last_seen_at=listed["effective_at"])
    place = ["cloud", "region", "zone", "instance_type", "market", "os"]
    before = listed.groupby(place, sort=False)["usd_per_hour"].shift()
    new = (before.isna() | (listed["usd_per_hour"] != before)).to_numpy()
    run = listed.assign(_new=new).groupby(place, sort=False)["_new"].cumsum()  # per place
    seen = listed.assign(_run=run).groupby([*place, "_run"], sort=False)[
        "effective_at"].transform("max")
    return listed.assign(last_seen_at=seen)[new]


def export_prices(store: StoreLike, path: str | Path) -> int:
    """Write the whole price history to a .csv or .parquet file that `import_prices`
    reads; the number of observations written."""
    from price_collectors import recorded

    path = Path(path)
    if path.suffix not in EXPORT_SUFFIXES:
        raise InvalidInput(f"{path}: unknown export format: expected a .csv or .parquet path")
    with using(store) as opened:
        frame = opened.observations()
    recorded.write_export(frame, path)
    return len(frame)


def spot_availability(store: StoreLike) -> pd.DataFrame:
    """What the store knows of spot availability: per offering, kind (availability,
    preemption, probe) and source: intervals, first and last time, hours observed and the
    share available."""
    with using(store) as opened:
        return opened.spot_availability.summary()


@dataclass(frozen=True)
class HiddenSnapshot:
    """A cloud whose stored spot prices are newer than its bundled spot snapshot: plans
    then take the store's as the cloud's whole spot market (`costsched.prices.prices_at`;
    not those imported as a partial update), and the `offerings` the snapshot priced but
    the store does not, of `dated`, are not offered."""

    cloud: str
    offerings: int
    dated: str

    def note(self) -> str:
        return (f"{self.cloud} spot: the stored prices are newer than the bundled ones, so "
                f"plans take them as {self.cloud}'s whole spot market: {self.offerings:,} "
                f"bundled spot offerings they do not list (the newest of {self.dated}) are not "
                f"offered; {collect_hint([self.cloud])} reads every type, and "
                "`costsched prices import --partial FILE` imports a file of some of them "
                "without hiding the rest (importing a file again with it brings back what "
                "that file hid)")


def hidden_snapshot(store: StoreLike, at: datetime | str | None = None) -> list[HiddenSnapshot]:
    """Per cloud, the bundled spot offerings that the store's newer spot prices leave out
    of plans as of `at` (default now): none where the store holds no spot price of it."""
    key = SPOT_PLACE  # by place: a type stored in zones of a region is listed there
    when = as_time(at)
    bundled = prices_at(None, when, markets=["spot"])
    with using(store) as opened:
        combined = prices_at(opened, when, markets=["spot"])
    kept = set(map(tuple, combined[key].astype(str).to_numpy().tolist()))
    out = []
    for cloud, rows in bundled.groupby("cloud", sort=True):
        left = [k for k in map(tuple, rows[key].astype(str).to_numpy().tolist())
                if k not in kept]
        if left:
            newest = pd.Timestamp(rows["effective_at"].max())
            out.append(HiddenSnapshot(str(cloud), len(left), f"{newest:%Y-%m-%d}"))
    return out
