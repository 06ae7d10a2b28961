"""What jobs cost: each placement charged from the stored price history over its own
interval, plus the egress of copying the checkpoint when a job moves. Pure reads.

The price of an offering at time t is its last observation at or before t; before its
first observation, the first one. A placement is charged every price it ran under, each
for as long as it held. An offering with no stored observation is charged the catalog's
on-demand list prices (by the same rule), else the price the placement recorded at start.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from costsched import catalog
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.list_prices import TYPE_KEY
from costsched.model import InvalidInput, utc
from costsched.optimize.decision import egress_per_gb
from costsched.store import OFFERING_KEY, PriceStore, to_epoch_seconds

_NEEDED = [*OFFERING_KEY, "start_at", "end_at", "usd_per_hour"]
COST_COLUMNS = ["hours", "usd", "price_source"]
MOVE_COLUMNS = [
    "job_id", "from_placement", "to_placement", "at", "from_cloud", "from_region",
    "to_cloud", "to_region", "gb", "usd_per_gb", "usd",
]
_MOVE_REASONS = ("migration", "recovery", "start")  # the checkpoint is copied


@dataclass(frozen=True, eq=False)
class JobCost:
    """A job's cost so far: compute per placement plus egress per move. Its frames are
    rows of frames charged for many jobs at once, taken when first asked for."""

    job_id: int
    compute_usd: float
    egress_usd: float
    charged: pd.DataFrame = field(repr=False)  # placement_costs of its jobs, egress_usd too
    moved: pd.DataFrame = field(repr=False)  # egress_costs of its jobs
    rows: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    total_usd: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "total_usd", self.compute_usd + self.egress_usd)

    @cached_property
    def placements(self) -> pd.DataFrame:
        """Its placements as charged (`placement_costs`, with egress_usd)."""
        return self.charged if self.rows is None else self.charged.iloc[self.rows[0]]

    @cached_property
    def moves(self) -> pd.DataFrame:
        """Its moves' egress (`egress_costs`)."""
        return self.moved if self.rows is None else self.moved.iloc[self.rows[1]]


def job_cost(store: PriceStore, job_id: int, *, now: datetime,
             checkpoint_gb: float) -> JobCost:
    """The cost of job `job_id` up to `now`, summed over its launches, recoveries and
    migrations; `checkpoint_gb` is the size of the checkpoint copied on each move."""
    store.jobs.get(job_id)  # an unknown job is an error, not a cost of 0
    return job_costs(store, [job_id], now=now, checkpoint_gb={int(job_id): checkpoint_gb}
                     )[int(job_id)]


def per_node(charged: pd.DataFrame, job_ids: Iterable[int],
             nodes: Mapping[int, int]) -> pd.DataFrame:
    """`charged` (a row per placement interval of the job in `job_ids`, same order) with
    each row's `usd` times its job's nodes, and a `nodes` column: every node of a
    multi-node job is billed (its checkpoint's egress is not: it is copied once)."""
    many = np.array([nodes.get(int(j), 1) for j in job_ids], dtype=float)
    return charged.assign(usd=charged["usd"].to_numpy() * many, nodes=many.astype(int))


def job_costs(store: PriceStore, job_ids: Iterable[int], *, now: datetime,
              checkpoint_gb: Mapping[int, float],
              nodes: Mapping[int, int] | None = None,
              placements: pd.DataFrame | None = None) -> dict[int, JobCost]:
    """`job_cost` of many jobs from one read of their placements and one set of price
    queries (the cost of a pass over a team's jobs does not grow with a query per job).
    `checkpoint_gb`: each job's checkpoint size; jobs without placements cost 0. `nodes`:
    a multi-node job's instances, each charged (its checkpoint is copied once a move).
    `placements`: theirs, when the caller read them already."""
    wanted = [int(j) for j in job_ids]
    # One job: its own placements; more: every placement in one read.
    placed = placements if placements is not None else \
        store.jobs.placements(wanted[0] if len(wanted) == 1 else None)
    placed = placed[placed["job_id"].isin(wanted)].reset_index(drop=True)
    moves = egress_costs(placed, checkpoint_gb={j: checkpoint_gb[j] for j in wanted})
    charged = placement_costs(store, placed, now=now, egress=moves)
    if nodes and len(charged):
        charged = per_node(charged, charged["job_id"], nodes)
    # Each job's rows and sums from one grouping of every job's (no frame per job).
    by_job = charged.groupby("job_id").indices if len(charged) else {}
    moved = moves.groupby("job_id").indices if len(moves) else {}
    # NaN counts as 0 (np.nansum's rule), summed as np.sum sums each job's rows.
    usd = np.nan_to_num(charged["usd"].to_numpy(dtype=float), nan=0.0, posinf=np.inf,
                        neginf=-np.inf)
    egress_usd = np.nan_to_num(moves["usd"].to_numpy(dtype=float), nan=0.0, posinf=np.inf,
                               neginf=-np.inf)
    none = np.array([], dtype=int)
    out = {}
    for job_id in wanted:
        mine, egress = by_job.get(job_id, none), moved.get(job_id, none)
        out[job_id] = JobCost(job_id=job_id, compute_usd=float(usd[mine].sum()),
                              egress_usd=float(egress_usd[egress].sum()), charged=charged,
                              moved=moves, rows=(mine, egress))
    return out


def charged_records(costs: Iterable[JobCost]) -> dict[int, list[dict]]:
    """Each job's placements as charged (`JobCost.placements`) as records (`to_dict`'s), by
    job id: one conversion of each frame the costs share, not a frame per job."""
    out: dict[int, list[dict]] = {}
    converted: dict[int, list[dict]] = {}
    for cost in costs:
        if cost.rows is None:  # a cost of its own
            out[cost.job_id] = cost.placements.to_dict("records")
            continue
        if id(cost.charged) not in converted:
            converted[id(cost.charged)] = cost.charged.to_dict("records")
        records = converted[id(cost.charged)]
        out[cost.job_id] = [records[i] for i in cost.rows[0]]
    return out


def placement_costs(store: PriceStore, placements: pd.DataFrame, *, now: datetime,
                    egress: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each placement with `hours`, `usd` (its prices integrated over [start_at, end_at or
    `now`]; nothing while it is `waiting` for its instance to run, where the frame says)
    and `price_source` ("stored", "catalog" or "placement"). With `egress` (an
    `egress_costs` frame) also `egress_usd`: the copy of the checkpoint into the placement.

    Stored prices are those of the placement's offering, else of its regional offering
    (zone "") when the placement names a zone.
    """
    needed = _NEEDED if egress is None else [*_NEEDED, "id"]
    missing = [c for c in needed if c not in placements.columns]
    if missing:
        raise InvalidInput(f"placement frame lacks columns: {', '.join(missing)}")
    frame = placements.reset_index(drop=True)
    start = _seconds(frame["start_at"])
    end = _seconds(frame["end_at"].fillna(pd.Timestamp(utc(now))))
    end = np.maximum(end, start)  # an open placement that starts after `now` cost nothing yet
    if "waiting" in frame:  # its instance waits for capacity, billed once it runs: nothing yet
        end = np.where(frame["waiting"].eq(True).to_numpy(), start, end)
    usd = frame["usd_per_hour"].to_numpy(dtype=float) * (end - start) / 3600
    source = np.full(len(frame), "placement", dtype=object)

    # Prices are looked up per distinct offering, then each placement takes its offering's.
    offering = frame.groupby(OFFERING_KEY, sort=False, dropna=False).ngroup().to_numpy()
    offerings = frame[OFFERING_KEY].drop_duplicates().reset_index(drop=True)
    histories = {"catalog": _catalog_history(offerings),
                 "stored": _stored_history(store, offerings, start, end)}
    for name, history in histories.items():  # stored prices win
        charged = _charge(history, offerings, offering, start, end)
        has = ~np.isnan(charged)
        usd[has], source[has] = charged[has], name

    out = frame.assign(hours=(end - start) / 3600, usd=usd, price_source=source)
    if egress is not None:
        into = egress.groupby("to_placement")["usd"].sum()
        out["egress_usd"] = out["id"].map(into).fillna(0.0).astype(float)
    return out


def egress_costs(placements: pd.DataFrame, *,
                 checkpoint_gb: float | Mapping[int, float]) -> pd.DataFrame:
    """One row per move of a job (a placement by migration or recovery after another):
    the checkpoint copied from the previous placement's region to the new one, at the
    source cloud's egress price (free within a region, inter-region within a cloud,
    internet across clouds). `checkpoint_gb`: one size for every job, or one per job id."""
    missing = [c for c in ("id", "job_id", "cloud", "region", "start_at", "reason")
               if c not in placements.columns]
    if missing:
        raise InvalidInput(f"placement frame lacks columns: {', '.join(missing)}")
    ordered = placements.sort_values(["job_id", "start_at", "id"], kind="stable")
    prev = ordered.groupby("job_id").shift(1)
    is_move = (prev["id"].notna() & ordered["reason"].isin(_MOVE_REASONS)).to_numpy()
    to, src = ordered[is_move], prev[is_move]
    if not len(to):
        return pd.DataFrame({c: pd.Series(dtype=_move_dtype(c)) for c in MOVE_COLUMNS})
    gb = _checkpoint_gb(checkpoint_gb, to["job_id"])
    # The price from every (cloud, region) to every other: a small matrix, then lookups.
    places = pd.concat([src[["cloud", "region"]], to[["cloud", "region"]]]).drop_duplicates()
    index = pd.MultiIndex.from_frame(places)
    matrix = egress_per_gb(places["cloud"].to_numpy(), places["region"].to_numpy())
    row = index.get_indexer(pd.MultiIndex.from_frame(src[["cloud", "region"]]))
    col = index.get_indexer(pd.MultiIndex.from_frame(to[["cloud", "region"]]))
    per_gb = matrix[row, col]
    return pd.DataFrame({
        "job_id": to["job_id"].to_numpy(dtype="int64"),
        "from_placement": src["id"].to_numpy(dtype="int64"),
        "to_placement": to["id"].to_numpy(dtype="int64"),
        "at": to["start_at"].to_numpy(),
        "from_cloud": src["cloud"].to_numpy(), "from_region": src["region"].to_numpy(),
        "to_cloud": to["cloud"].to_numpy(), "to_region": to["region"].to_numpy(),
        "gb": gb, "usd_per_gb": per_gb, "usd": gb * per_gb,
    })


# --- price histories ----------------------------------------------------------------------


@dataclass(frozen=True)
class _History:
    """Price histories: `prices` (key, ts, usd_per_hour; by key and time) and `keys`, which
    maps placement columns `on` to a history's key."""

    prices: pd.DataFrame
    keys: pd.DataFrame
    on: list[str]


def _stored_history(store: PriceStore, wanted: pd.DataFrame, start: np.ndarray,
                    end: np.ndarray) -> _History:
    """The stored observations of the `wanted` offerings over the placements' span (the
    earliest start to the latest end): four queries at most (three unless an offering was
    observed only after every placement ended), however many placements and offerings."""
    regional = wanted[wanted["zone"] != ""].assign(zone="")
    keys = pd.concat([wanted, regional]).drop_duplicates()
    empty = _History(pd.DataFrame(columns=["key", "ts", "usd_per_hour"]),
                     pd.DataFrame(columns=[*OFFERING_KEY, "key"]), OFFERING_KEY)
    if keys.empty:
        return empty
    filters = {c: sorted(keys[c].unique()) for c in OFFERING_KEY if c != "zone"}
    known = store.offerings(**filters)
    if known.empty:
        return empty
    known = known[[*OFFERING_KEY, "id"]].merge(keys, on=OFFERING_KEY)
    ids = [int(i) for i in known["id"]]
    lo, hi = _time(start.min()), _time(end.max())
    parts = [store.as_of(lo, id=ids), store.history(lo, hi, id=ids)]
    seen = set(pd.concat(parts)["offering_id"])
    later = [i for i in ids if i not in seen]  # observed only after every placement ended
    if later:
        parts.append(store.history(hi, None, id=later))
    parts = [p for p in parts if not p.empty]
    if not parts:
        return empty
    prices = pd.concat(parts)
    prices = (prices.assign(key=prices["offering_id"].astype("int64"),
                            ts=_seconds(prices["effective_at"]))
              .drop_duplicates(["key", "ts"]).sort_values(["key", "ts"]))
    # Each placement's key: its own offering's id, else its regional offering's.
    exact = known.rename(columns={"id": "key"})
    zoned = (exact[exact["zone"] == ""].drop(columns="zone")
             .merge(wanted[wanted["zone"] != ""], on=[c for c in OFFERING_KEY if c != "zone"]))
    mapping = pd.concat([exact, zoned]).drop_duplicates(OFFERING_KEY, keep="first")
    return _History(prices[["key", "ts", "usd_per_hour"]], mapping[[*OFFERING_KEY, "key"]],
                    OFFERING_KEY)


def _catalog_history(wanted: pd.DataFrame) -> _History:
    """The catalog's on-demand list prices of the `wanted` offerings' on-demand types."""
    listed = catalog.on_demand_observations()
    types = wanted.loc[wanted["market"] == "on_demand", TYPE_KEY].drop_duplicates()
    listed = listed.merge(types, on=TYPE_KEY)
    keys = listed[TYPE_KEY].drop_duplicates().reset_index(drop=True)
    keys = keys.assign(key=np.arange(len(keys)), market="on_demand")
    prices = (listed.merge(keys, on=[*TYPE_KEY, "market"])
              .assign(ts=lambda f: _seconds(f["effective_at"]))
              .sort_values(["key", "ts"]))
    return _History(prices[["key", "ts", "usd_per_hour"]], keys, [*TYPE_KEY, "market"])


def _charge(history: _History, offerings: pd.DataFrame, offering: np.ndarray,
            start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """USD of each placement (its row in `offerings`: `offering`) under `history`; NaN
    where the history has no prices for it."""
    usd = np.full(len(offering), np.nan)
    matched = offerings[OFFERING_KEY].merge(history.keys, how="left", on=history.on)["key"]
    key = matched.to_numpy(dtype=float)[offering]
    has = ~np.isnan(key)
    prices = history.prices
    usd[has] = _integrate(prices["key"].to_numpy(dtype="int64"),
                          prices["ts"].to_numpy(dtype="int64"),
                          prices["usd_per_hour"].to_numpy(dtype=float),
                          key[has].astype("int64"), start[has], end[has])
    return usd


def _integrate(keys: np.ndarray, ts: np.ndarray, price: np.ndarray, key: np.ndarray,
               start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """USD of each [start, end] (epoch seconds) on offering `key` under the observations
    (`keys`, times `ts`, USD/hour `price`; sorted by key, then time): each offering's step
    function of last observations, its first price before its first one; NaN for a key
    without observations. All intervals at once: a cumulative sum per offering, then two
    binary searches per interval."""
    out = np.full(len(key), np.nan)
    if not len(key) or not len(keys):
        return out
    groups, first = np.unique(keys, return_index=True)
    group = np.searchsorted(groups, key).clip(max=len(groups) - 1)
    known = groups[group] == key
    if not known.any():
        return out
    group, start, end = group[known], start[known], end[known]
    ts, price = ts.astype(float), price.astype(float)
    # USD·s accrued from each offering's first observation to each of its observations.
    same = keys[1:] == keys[:-1]
    step = np.concatenate([[0.0], np.where(same, np.diff(ts) * price[:-1], 0.0)])
    accrued = pd.Series(step).groupby(keys).cumsum().to_numpy()
    # One sorted axis for every offering: group g's times sit in [g * width, (g+1) * width).
    base = min(ts.min(), start.min(), end.min())
    width = max(ts.max(), start.max(), end.max()) - base + 1
    axis = np.searchsorted(groups, keys) * width + (ts - base)

    def accrued_at(t: np.ndarray) -> np.ndarray:
        i = np.searchsorted(axis, group * width + (t - base), side="right") - 1
        i = np.maximum(i, first[group])
        return accrued[i] + price[i] * (t - ts[i])

    out[known] = (accrued_at(end.astype(float)) - accrued_at(start.astype(float))) / 3600
    return out


# --- small helpers ------------------------------------------------------------------------


def _seconds(times: pd.Series) -> np.ndarray:
    if len(times) == 0:
        return np.empty(0, dtype="int64")
    return to_epoch_seconds(times.reset_index(drop=True))


def _time(seconds: int) -> datetime:
    return pd.Timestamp(int(seconds), unit="s", tz="UTC").to_pydatetime()


def _checkpoint_gb(size: float | Mapping[int, float], job_ids: pd.Series) -> np.ndarray:
    sizes = dict(size) if isinstance(size, Mapping) else None
    if sizes is not None:
        absent = sorted({int(j) for j in job_ids} - {int(j) for j in sizes})
        if absent:
            raise InvalidInput(f"checkpoint size of job {absent[0]}: expected a size in GB")
    values = [sizes[int(j)] if sizes is not None else size for j in job_ids]
    for value in values:
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (
                math.isfinite(value) and value >= 0):
            raise InvalidInput(f"checkpoint size {value!r}: expected a number of GB >= 0")
    return np.asarray(values, dtype=float)


def _move_dtype(column: str) -> str:
    if column in ("job_id", "from_placement", "to_placement"):
        return "int64"
    if column == "at":
        return "datetime64[ns, UTC]"
    return "float64" if column in ("gb", "usd_per_gb", "usd") else "object"
