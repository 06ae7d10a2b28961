"""The interface every live price collector implements, and the checks on what it collects.

A collector splits its work into *units* (an AWS region, an Azure region or GPU family,
the whole GCP catalog), runs them in a thread pool, and returns a `Collection`: the
validated observation frame, the units it covered, the units that failed (with a
one-line reason), and the rows it rejected. A failing unit never stops the others.
Nothing here writes to the store: `price_collectors.runner` does, in one transaction.
"""

from __future__ import annotations

import json
import logging
import math
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from costsched import catalog
from costsched.model import ALL_MARKETS, CLOUDS, InvalidInput, utc
from costsched.prices import listed_on_demand, on_demand_reference
from costsched.store import OBSERVATION_COLUMNS
from costsched.store.zones import ZONE_KEY
from costsched.validation import (
    identifier_problem,
    offering_problem,
    region_problem,
    zone_problem,
    zoned_times,
)
from costsched.vocabulary import did_you_mean, word
from price_collectors.network import unresolved

logger = logging.getLogger("price_collectors")
logger.addHandler(logging.NullHandler())

# A price above CEILING[market] x the on-demand reference, or below FLOOR x it, is not
# stored (docs/prices.md states the same rule). Spot prices are capped at on-demand on all
# three clouds; 1.5 leaves room for a stale reference. On-demand prices differ by region
# (AWS sa-east-1 ~1.6x us-east-1) and the bundled catalog may be old, hence 3. No cloud
# discounts spot by 99%, and a fixed floor (one cent) would not scale with the instance.
CEILING = {"on_demand": 3.0, "spot": 1.5}
FLOOR = 0.01
# When no on-demand reference exists at all (a type the catalog prices nowhere).
CEILING_PER_GPU_HOUR = 150.0
_SAME = 1e-9  # relative: a price this close to a bound is at it (binary fractions)
# The kinds of problem `problems` finds with a price (the start of its reason).
PRICE_PROBLEMS = ("not a number", "not finite", "not positive", "above ceiling", "below floor")

# A time for every unit, one per unit (AWS watermarks), or None (the collector's default).
Since = datetime | Mapping[str, datetime | None] | None
# progress(cloud, unit, error): called once per finished unit; error is None on success.
ProgressHook = Callable[[str, str, str | None], None]
# planned(cloud, units): called once the units are known, before any is collected.
PlanHook = Callable[[str, Sequence[str]], None]


class CollectorUnavailable(RuntimeError):
    """A collector cannot run at all (SDK not installed, no credentials, no project).

    str() is a one-line message that says what to install or configure.
    """


class UnitError(RuntimeError):
    """One unit (a region...) failed; str() is the one-line reason shown in the summary."""


@dataclass(frozen=True)
class Rejection:
    cloud: str
    region: str
    zone: str
    instance_type: str
    market: str
    usd_per_hour: object
    reason: str

    def __str__(self) -> str:
        where = self.zone or self.region
        return (f"{self.cloud} {where} {self.instance_type} {self.market} "
                f"{self.usd_per_hour!r}: {self.reason}")


@dataclass
class Collection:
    """What one collect() gave: validated observations and what it covered."""

    cloud: str
    observations: pd.DataFrame
    units: list[str] = field(default_factory=list)  # units collected successfully
    failed: dict[str, str] = field(default_factory=dict)  # unit -> one-line error
    rejected: list[Rejection] = field(default_factory=list)
    # Rows a source returned that are not ours to store (Windows meters, commitments...),
    # counted by reason so that a summary can say what was left out and why.
    ignored: Counter = field(default_factory=Counter)
    # Extra coverage facts (e.g. GCP: the zones each priced offering exists in).
    coverage: pd.DataFrame | None = None

    @property
    def regions(self) -> list[str]:
        return sorted(set(self.observations["region"])) if len(self.observations) else []

    def offerings(self) -> pd.DataFrame:
        """The distinct offerings priced by this collection."""
        keys = ["cloud", "region", "zone", "instance_type", "market", "os", "gpu_model",
                "gpu_count", "vcpus", "memory_gb"]
        return self.observations[keys].drop_duplicates(ignore_index=True)

    def rejected_by_reason(self) -> dict[str, int]:
        return dict(Counter(_reason_kind(r.reason) for r in self.rejected))

    def zones(self) -> pd.DataFrame:
        """One row per zone that offers an offering of the coverage (the store's ZONE_KEY
        columns): the coverage's comma-separated `zones`, exploded; empty without any."""
        coverage = self.coverage
        if coverage is None or "zones" not in coverage or coverage.empty:
            return pd.DataFrame({c: pd.Series(dtype=object) for c in ZONE_KEY})
        rows = coverage.assign(cloud=self.cloud, zone=coverage["zones"].fillna("").str.split(","))
        rows = rows.explode("zone")
        rows = rows[rows["zone"].str.strip() != ""]
        return rows[ZONE_KEY].drop_duplicates(ignore_index=True)


@dataclass
class UnitResult:
    """The raw rows of one unit, and source rows deliberately left out."""

    frame: pd.DataFrame
    ignored: Counter = field(default_factory=Counter)
    rejected: list[Rejection] = field(default_factory=list)  # rows that could not be parsed
    coverage: pd.DataFrame | None = None


class Collector(ABC):
    """A source of live prices for one cloud. Subclasses say how to plan and fetch units."""

    cloud: ClassVar[str]
    # True when the source stamps prices with the time of the request rather than the time
    # the price took effect: the runner then stores a row only when the price changed.
    snapshot: ClassVar[bool] = False

    def __init__(
        self,
        *,
        regions: Sequence[str] = (),
        gpus: Sequence[str] = (),
        max_workers: int = 16,
    ) -> None:
        self.regions = list(regions)
        self.gpus = [catalog.gpu_model_name(g) for g in gpus]
        self.max_workers = max(1, max_workers)

    @classmethod
    def from_options(
        cls,
        regions: Sequence[str] = (),
        *,
        gpus: Sequence[str] = (),
        workers: int = 32,
        gcp_project: str | None = None,
    ) -> Collector:
        """A collector with its default (real SDK) clients, from the options a user gives
        for every cloud; a cloud ignores the options that are not its own."""
        return cls(regions=regions, gpus=gpus, max_workers=workers)

    # --- what subclasses implement ----------------------------------------------------

    @abstractmethod
    def plan(self) -> list[str]:
        """The units to collect (may call the cloud, e.g. to list regions)."""

    @abstractmethod
    def collect_unit(self, unit: str, since: datetime | None) -> UnitResult:
        """Fetch one unit's raw observation rows (not yet validated)."""

    def watermark_filters(self) -> dict[str, list[str]] | None:
        """Store filters whose newest time per region is that region's `since`; None: none."""
        return None

    # --- the shared driver --------------------------------------------------------------

    def instance_types(self) -> pd.DataFrame:
        """The catalog's GPU instance types of this cloud, limited to the chosen GPUs."""
        types = catalog.instance_types()
        types = types[types["cloud"] == self.cloud]
        if self.gpus:
            types = types[types["gpu_model"].isin(self.gpus)]
        return types.reset_index(drop=True)

    def collect(
        self,
        since: Since = None,
        progress: ProgressHook | None = None,
        planned: PlanHook | None = None,
    ) -> Collection:
        """Collect every unit (in parallel), validate the rows, and say what failed."""
        units = self.plan()
        if planned:
            planned(self.cloud, units)
        results: dict[str, UnitResult] = {}
        failed: dict[str, str] = {}
        unavailable: CollectorUnavailable | None = None
        pool = ThreadPoolExecutor(max_workers=min(self.max_workers, max(1, len(units))),
                                  thread_name_prefix=f"collect-{self.cloud}")
        try:
            futures = {pool.submit(self.collect_unit, unit, _since_for(since, unit)): unit
                       for unit in units}
            for future in as_completed(futures):
                unit = futures[future]
                error = None
                try:
                    results[unit] = future.result()
                except CollectorUnavailable as exc:  # the cloud as a whole (no SDK...)
                    unavailable, error = exc, one_line(exc)
                except Exception as exc:  # one unit's failure must not stop the others
                    error = failed[unit] = one_line(exc)
                    logger.warning("%s %s failed: %s", self.cloud, unit, error)
                if progress:
                    progress(self.cloud, unit, error)
        finally:
            # On a crash (KeyboardInterrupt...) units not started yet are dropped.
            pool.shutdown(wait=True, cancel_futures=True)
        if unavailable is not None:
            raise unavailable
        ok = [u for u in units if u in results]
        frames = [results[u].frame for u in ok if len(results[u].frame)]
        raw = pd.concat(frames, ignore_index=True) if frames else empty_frame()
        unparsed = [r for u in ok for r in results[u].rejected]
        for rejection in unparsed:
            logger.warning("rejected %s", rejection)
        observations, rejected = validate(raw)
        ignored: Counter = Counter()
        for u in ok:
            ignored.update(results[u].ignored)
        coverage = [results[u].coverage for u in ok if results[u].coverage is not None]
        return Collection(
            cloud=self.cloud, observations=observations, units=ok, failed=failed,
            rejected=unparsed + rejected, ignored=ignored,
            coverage=pd.concat(coverage, ignore_index=True) if coverage else None,
        )


def _since_for(since: Since, unit: str) -> datetime | None:
    if since is None or isinstance(since, datetime):
        return utc(since) if since else None
    value = since.get(unit)
    return utc(value) if value else None


SAVED_JSON = "a saved JSON document"


def json_document(path: Path) -> Any:
    """A saved JSON document (a signal's, as its API answered it); InvalidInput naming
    the file and what is wrong in one line: a folder, a file missing, unreadable, not
    UTF-8 or not JSON. A byte order mark, as some editors save one, is no part of it."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except IsADirectoryError:
        raise InvalidInput(f"{path}: a directory: expected {SAVED_JSON}") from None
    except FileNotFoundError:
        raise InvalidInput(f"{path}: no such file: expected {SAVED_JSON}") from None
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot read it ({exc.strerror or exc}): expected "
                           f"{SAVED_JSON}") from None
    except UnicodeDecodeError:
        raise InvalidInput(f"{path}: not UTF-8 text: expected {SAVED_JSON}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}): "
                           f"expected {SAVED_JSON}") from None


def one_line(exc: BaseException) -> str:
    """A short single-line description of an exception, for summaries and logs; a host
    name that did not resolve in the same words wherever it failed (`network.unresolved`),
    so that the failures of one cause read as one."""
    offline = unresolved(exc)
    if offline:
        return offline
    text = " ".join(str(exc).split()) or type(exc).__name__
    name = type(exc).__name__
    if isinstance(exc, (UnitError, CollectorUnavailable)) or text.startswith(name):
        return text
    return f"{name}: {text}"


def empty_frame() -> pd.DataFrame:
    frame = pd.DataFrame({c: pd.Series(dtype=object) for c in OBSERVATION_COLUMNS})
    frame["effective_at"] = pd.to_datetime(frame["effective_at"], utc=True)
    return frame


def rows_frame(rows: Iterable[tuple], source: str) -> pd.DataFrame:
    """An observation frame from tuples in OBSERVATION_COLUMNS order (without `source`)."""
    rows = list(rows)
    if not rows:
        return empty_frame()
    frame = pd.DataFrame(rows, columns=OBSERVATION_COLUMNS[:-1])
    frame["effective_at"] = pd.to_datetime(frame["effective_at"], utc=True)
    frame["source"] = source
    return frame


# --- validation -----------------------------------------------------------------------

def validation_reference(frame: pd.DataFrame) -> pd.Series:
    """Each row's on-demand reference for the price checks: `costsched.prices.on_demand_reference`
    (the batch's own on-demand price, else today's list price for the region), else the
    catalog's highest list price of the type in any region, else NaN.

    The last fallback is for validation only: a region the catalog does not list would
    otherwise get the lenient per-GPU ceiling, and regional prices differ by less than
    CEILING's margin.
    """
    ref = on_demand_reference(frame)
    anywhere = listed_on_demand().groupby(["cloud", "instance_type"])["usd_per_hour"].max()
    keys = pd.MultiIndex.from_frame(frame[["cloud", "instance_type"]])
    return ref.fillna(pd.Series(anywhere.reindex(keys).to_numpy(dtype=float), index=frame.index))


def validate(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[Rejection]]:
    """Split rows into storable ones and rejections (each logged with its reason)."""
    if frame.empty:
        return frame, []
    frame = frame.reset_index(drop=True)
    reasons = problems(frame)
    bad = reasons.notna()
    rejected = [
        Rejection(r.cloud, r.region, r.zone, r.instance_type, r.market, r.usd_per_hour,
                  reasons[i])
        for i, r in zip(frame.index[bad], frame[bad].itertuples(index=False), strict=True)
    ]
    for rejection in rejected:
        logger.warning("rejected %s", rejection)
    good = frame[~bad].copy()
    good["usd_per_hour"] = pd.to_numeric(good["usd_per_hour"]).astype(float)
    return good.reset_index(drop=True), rejected


def problems(frame: pd.DataFrame) -> pd.Series:
    """What is wrong with each observation row (None: storable), by the rules every source
    shares: names, the offering's GPUs (`costsched.validation`), the time (ISO 8601 with a
    zone, in the supported range) and the price (within FLOOR..CEILING of on-demand).

    On-demand rows are checked first, against the catalog; spot rows are then checked
    against the on-demand prices that passed, so one bad list price cannot wave through
    a bad spot price.
    """
    reasons = pd.Series([None] * len(frame), index=frame.index, dtype=object)
    if frame.empty:
        return reasons
    _names(frame, reasons)
    _identifiers(frame, reasons)
    _check_places(frame, reasons)
    keys = ["cloud", "instance_type", "gpu_model", "gpu_count"]
    text = frame[keys].astype(str)
    offering = text["cloud"].str.cat([text[k] for k in keys[1:]], sep="\x1f")
    distinct = frame[keys].assign(key=offering)[reasons.isna()].drop_duplicates("key")
    checked = {r.key: offering_problem(r.cloud, r.instance_type, r.gpu_model, r.gpu_count)
               for r in distinct.itertuples(index=False)}  # once per distinct offering
    reasons[reasons.isna()] = offering[reasons.isna()].map(checked)
    _sizes(frame, reasons)
    _times(frame, reasons)
    prices = _prices(frame, reasons)
    on_demand = frame["market"] == "on_demand"
    _check_against_reference(frame, prices, reasons, on_demand, None)
    good_od = frame[on_demand & reasons.isna()]
    _check_against_reference(frame, prices, reasons, ~on_demand,
                             pd.concat([good_od, frame[~on_demand & reasons.isna()]]))
    return reasons


def field_problems(row: pd.DataFrame) -> list[str]:
    """What is wrong with each field of a one-row frame by its own rule (cloud, market,
    names, sizes, time, price: `problems`' words), so that one look names every field
    to fix; [] when each field reads (the rules across fields are `problems`')."""
    found = []
    for check in _FIELD_CHECKS:
        reasons = pd.Series([None] * len(row), index=row.index, dtype=object)
        check(row, reasons)
        found.extend(r for r in reasons if r is not None)
    return found


def _names(frame: pd.DataFrame, reasons: pd.Series, names: Sequence[str] = ("cloud", "market")
           ) -> None:
    for name in names:
        allowed = CLOUDS if name == "cloud" else ALL_MARKETS
        # Markets as users type them ('on-demand'; 'on_demand' is accepted as well).
        _mark(reasons, frame[name], lambda v, n=name, ok=allowed, a=tuple(map(word, allowed)):
              None if v in ok else f"{n} {v!r}: expected one of {', '.join(a)}"
              + (did_you_mean(v, list(a)) if isinstance(v, str) else ""))


IDENTIFIERS = ("region", "zone", "instance_type", "os")


def _identifiers(frame: pd.DataFrame, reasons: pd.Series,
                 columns: Sequence[str] = IDENTIFIERS) -> None:
    for column in columns:
        _mark(reasons, frame[column],
              lambda v, c=column: identifier_problem(c, v, empty=c == "zone"))


def _sizes(frame: pd.DataFrame, reasons: pd.Series,
           columns: Sequence[str] = ("vcpus", "memory_gb")) -> None:
    for column in columns:
        numbers = pd.to_numeric(frame[column], errors="coerce")
        fine = numbers.between(0, math.inf) & numbers.lt(math.inf)
        if column == "vcpus":
            fine &= numbers.eq(numbers.round())
        bad = ~fine & reasons.isna()
        what = "a whole number" if column == "vcpus" else "a number"
        reasons[bad] = [f"{column} {v!r}: expected {what} >= 0" for v in frame[column][bad]]


def _times(frame: pd.DataFrame, reasons: pd.Series) -> None:
    time_problems = zoned_times(frame["effective_at"])[1]
    bad = time_problems.notna() & reasons.isna()
    reasons[bad] = [f"effective_at {str(v)!r}: {p}" for v, p in
                    zip(frame["effective_at"][bad], time_problems[bad], strict=True)]


def _prices(frame: pd.DataFrame, reasons: pd.Series) -> pd.Series:
    """Mark prices that are no positive finite number (PRICE_PROBLEMS); the prices read."""
    prices = pd.to_numeric(frame["usd_per_hour"], errors="coerce")
    reasons[prices.isna() & reasons.isna()] = "not a number"
    finite = pd.Series(np.isfinite(prices.to_numpy(dtype=float)), index=frame.index)
    reasons[~finite & reasons.isna()] = "not finite"
    reasons[(prices <= 0) & reasons.isna()] = "not positive"
    return prices


# Each field's own rule, one at a time (`field_problems`).
_FIELD_CHECKS: tuple[Callable[[pd.DataFrame, pd.Series], object], ...] = (
    *(lambda f, r, n=n: _names(f, r, (n,)) for n in ("cloud", "market")),
    *(lambda f, r, c=c: _identifiers(f, r, (c,)) for c in IDENTIFIERS),
    *(lambda f, r, c=c: _sizes(f, r, (c,)) for c in ("vcpus", "memory_gb")),
    _times, _prices)


def _check_places(frame: pd.DataFrame, reasons: pd.Series) -> None:
    """Mark rows whose region is not one of their cloud's (by its documented shape), or
    whose zone is not a zone of their region (`costsched.validation`); once per distinct
    place."""
    open_rows = reasons.isna()
    if not open_rows.any():
        return
    places = frame.loc[open_rows, ["cloud", "region", "zone"]].astype(str)
    key = places["cloud"].str.cat([places["region"], places["zone"]], sep="\x1f")
    found = {}
    for k, r in zip(key, places.itertuples(index=False), strict=True):
        if k not in found:
            found[k] = (region_problem(r.cloud, r.region)
                        or zone_problem(r.cloud, r.region, r.zone))
    reasons[open_rows] = key.map(found)


def _mark(reasons: pd.Series, values: pd.Series, rule: Callable[[object], str | None]) -> None:
    """Set the reason of rows not yet rejected whose value breaks `rule` (one call per
    distinct value)."""
    open_rows = reasons.isna()
    if not open_rows.any():
        return
    codes, distinct = pd.factorize(values[open_rows])
    found = np.array([rule(v) for v in distinct] + [rule(math.nan)], dtype=object)
    reasons[open_rows] = found[codes]  # code -1 (a missing value) picks the last


def _check_against_reference(
    frame: pd.DataFrame,
    prices: pd.Series,
    reasons: pd.Series,
    rows: pd.Series,
    basis: pd.DataFrame | None,
) -> None:
    """Mark rows outside [FLOOR, CEILING] x their on-demand reference."""
    subset = frame[rows & reasons.isna()]
    if subset.empty:
        return
    if basis is None:  # on-demand rows: the catalog is the reference
        ref = validation_reference(subset.assign(market="spot"))
    else:
        ref = validation_reference(basis).loc[subset.index]
    price = prices.loc[subset.index]
    gpus = pd.to_numeric(subset["gpu_count"], errors="coerce").fillna(1).clip(lower=1)
    ceiling = ref * subset["market"].map(CEILING).astype(float)
    ceiling = ceiling.fillna(gpus * CEILING_PER_GPU_HOUR)
    floor = (ref * FLOOR).fillna(0.0)
    # A price at a bound as said passes: 1% of $3.06 is 0.030600000000000002 in binary.
    for i in subset.index[price > ceiling * (1 + _SAME)]:
        basis_text = (f"{CEILING[frame.at[i, 'market']]:g}x on-demand ${ref[i]:.4g}"
                      if ref[i] == ref[i] else f"${CEILING_PER_GPU_HOUR:g}/GPU-hour")
        reasons[i] = f"above ceiling ({basis_text}: at most ${ceiling[i]:.6g}/h)"
    for i in subset.index[price < floor * (1 - _SAME)]:
        reasons[i] = (f"below floor ({FLOOR:.0%} of on-demand ${ref[i]:.4g}: at least "
                      f"${floor[i]:.6g}/h)")


def _reason_kind(reason: str) -> str:
    return reason.split(" (")[0]
