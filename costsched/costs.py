"""What jobs cost: each placement charged from the stored price history over its own
interval, plus the egress of copying the checkpoint when a job moves. Pure reads.

The price of an offering at time t is its last observation at or before t; before its
first observation, the first one. A placement is charged every price it ran under, each
for as long as it held. An offering with no stored observation is charged the catalog's
on-demand list prices (by the same rule), else the price the placement recorded at start.

Every hourly price here is one instance's, as every offering is quoted: the stored and
catalog prices, and a placement's own `usd_per_hour` (the price of its offering when it
began, as the launch, recovery or move that placed it recorded it). A gang of N nodes
(`nodes`) is charged N times it, less each node's gaps; `Charged.charged_usd_per_hour` is
one instance's too, so the two compare like with like (`repriced`), and the views write
a gang's both for its N nodes (`rate_words`).

One path computes on plain rows (the store's PlacementRow, price rows, the catalog's list
read with the csv module): `status` charges its jobs without loading pandas. The frames
the report, bills and notebooks read are built from those rows (`JobCost.placements`, and
`placement_costs` and `egress_costs`, which take and give frames around the same path).
"""

from __future__ import annotations

import bisect
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cached_property
from typing import NamedTuple

from costsched import catalog, checkpoint_sizes
from costsched.amounts import stored_price
from costsched.lazy import pandas as pd
from costsched.model import InvalidInput, utc
from costsched.optimize.decision import Place, egress_usd_per_gb
from costsched.store import OFFERING_KEY, PriceStore, to_epoch_seconds
from costsched.store.database import epoch_second
from costsched.store.job_rows import PlacementRow, placement_frame

_NEEDED = [*OFFERING_KEY, "start_at", "end_at", "usd_per_hour"]
COST_COLUMNS = ["hours", "usd", "price_source"]
MOVE_COLUMNS = [
    "job_id", "from_placement", "to_placement", "at", "from_cloud", "from_region",
    "to_cloud", "to_region", "gb", "usd_per_gb", "usd", "gb_source",
]
_MOVE_REASONS = checkpoint_sizes.MOVE_REASONS  # the checkpoint is copied
Key = tuple[str, str, str, str, str, str]  # an offering: OFFERING_KEY's values


class Charged(NamedTuple):
    """A placement as charged: `placement` (a PlacementRow) with the `hours` it is billed,
    its `usd` (every node's), where its prices came from (`price_source`: "stored",
    "catalog" or "placement"), the `egress_usd` of the checkpoint copied into it, and its
    job's `nodes`."""

    placement: PlacementRow
    hours: float
    usd: float
    price_source: str
    egress_usd: float = 0.0
    nodes: int = 1

    def __getattr__(self, name: str) -> object:  # the placement's fields, as on a frame row
        return getattr(self.placement, name)

    @property
    def charged_usd_per_hour(self) -> float:
        """The hourly price it was charged on average, one instance's as its own
        `usd_per_hour` (the price when it began): `usd` over its hours times its nodes, so
        that hours x nodes x this price make its usd. The charge follows the stored prices
        as they changed while it ran. NaN without hours."""
        node_hours = self.hours * max(int(self.nodes), 1)
        return self.usd / node_hours if node_hours > 0 else math.nan

    def record(self) -> dict:
        """Its fields by name, as a row of `JobCost.placements` (and the hourly price it
        was charged on average, `charged_usd_per_hour`)."""
        return {**self.placement._asdict(), "hours": self.hours, "usd": self.usd,
                "price_source": self.price_source, "egress_usd": self.egress_usd,
                "nodes": self.nodes, "charged_usd_per_hour": self.charged_usd_per_hour}


class Move(NamedTuple):
    """A move that copied a job's checkpoint (MOVE_COLUMNS): from one placement's region
    to the next one's, `gb` at `usd_per_gb`; `gb_source` says whether the GB are the
    checkpoint's measured size ("measured") or its job file's `checkpoint.size_gb`
    ("declared", when nothing is measured)."""

    job_id: int
    from_placement: int
    to_placement: int
    at: datetime
    from_cloud: str
    from_region: str
    to_cloud: str
    to_region: str
    gb: float
    usd_per_gb: float
    usd: float
    gb_source: str = checkpoint_sizes.DECLARED


_CHARGED_COLUMNS = [*COST_COLUMNS, "egress_usd", "nodes"]


@dataclass(frozen=True, eq=False)
class JobCost:
    """A job's cost so far: compute per placement plus egress per move. `charged` and
    `moved` are its rows; `placements` and `moves` the same as frames, built when first
    asked for."""

    job_id: int
    compute_usd: float
    egress_usd: float
    charged: tuple[Charged, ...] = field(default=(), repr=False)
    moved: tuple[Move, ...] = field(default=(), repr=False)
    # Per placement charged (in `charged`'s order): when the price it was charged at its
    # end took effect (`charge`'s dates), None where not known.
    priced_at: tuple[datetime | None, ...] = field(default=(), repr=False)
    total_usd: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "total_usd", self.compute_usd + self.egress_usd)

    @cached_property
    def placements(self) -> pd.DataFrame:
        """Its placements as charged (`placement_costs`'s columns, egress_usd and nodes)."""
        return placement_frame(((*c.placement, *c[1:]) for c in self.charged),
                               _CHARGED_COLUMNS)

    @cached_property
    def moves(self) -> pd.DataFrame:
        """Its moves' egress (`egress_costs`)."""
        return moves_frame(self.moved)


def job_cost(store: PriceStore, job_id: int, *, now: datetime,
             checkpoint_gb: float) -> JobCost:
    """The cost of job `job_id` up to `now`, summed over its launches, recoveries and
    migrations; `checkpoint_gb` is the size of the checkpoint copied on each move."""
    store.jobs.get(job_id)  # an unknown job is an error, not a cost of 0
    return job_costs(store, [job_id], now=now, checkpoint_gb={int(job_id): checkpoint_gb}
                     )[int(job_id)]


def job_costs(store: PriceStore, job_ids: Iterable[int], *, now: datetime,
              checkpoint_gb: Mapping[int, float],
              nodes: Mapping[int, int] | None = None,
              placements: Sequence[PlacementRow] | None = None) -> dict[int, JobCost]:
    """`job_cost` of many jobs from one read of their placements and one set of price
    queries (the cost of a pass over a team's jobs does not grow with a query per job).
    `checkpoint_gb`: each job's checkpoint size; jobs without placements cost 0. `nodes`:
    a multi-node job's instances, each charged (its checkpoint is copied once a move).
    `placements`: theirs (the store's rows), when the caller read them already."""
    wanted = [int(j) for j in job_ids]
    # One job: its own placements; more: every placement in one read.
    placed = placements if placements is not None else store.jobs.placement_rows(
        wanted[:1] if len(wanted) == 1 else None)
    mine = set(wanted)
    placed = [p for p in placed if p.job_id in mine]
    moves = egress_rows(placed, checkpoint_gb={j: checkpoint_gb[j] for j in wanted},
                        measured=checkpoint_sizes.of_moved(store, placed))
    into: dict[int, float] = {}
    for move in moves:
        into[move.to_placement] = into.get(move.to_placement, 0.0) + move.usd
    many = nodes or {}
    charged_of: dict[int, list[Charged]] = {j: [] for j in wanted}
    dates_of: dict[int, list[datetime | None]] = {j: [] for j in wanted}
    dates: list[datetime | None] = []
    for p, (hours, usd, source), date in zip(
            placed, charge(store, placed, now=now, nodes=many, dates=dates), dates,
            strict=True):
        charged_of[p.job_id].append(Charged(p, hours, usd, source, into.get(p.id, 0.0),
                                            int(many.get(p.job_id, 1))))
        dates_of[p.job_id].append(date)
    moved_of: dict[int, list[Move]] = {j: [] for j in wanted}
    for move in moves:
        moved_of[move.job_id].append(move)
    return {j: JobCost(job_id=j, compute_usd=_sum([c.usd for c in charged_of[j]]),
                       egress_usd=_sum([m.usd for m in moved_of[j]]),
                       charged=tuple(charged_of[j]), moved=tuple(moved_of[j]),
                       priced_at=tuple(dates_of[j]))
            for j in wanted}


def charged_records(costs: Iterable[JobCost]) -> dict[int, list[dict]]:
    """Each job's placements as charged (`JobCost.placements`) as records, by job id."""
    return {cost.job_id: [c.record() for c in cost.charged] for cost in costs}


def charge(store: PriceStore, placements: Sequence[PlacementRow], *, now: datetime,
           nodes: Mapping[int, int] | None = None,
           dates: list[datetime | None] | None = None) -> list[tuple[float, float, str]]:
    """(hours, usd, price_source) of each placement: its prices integrated over [start_at,
    end_at or `now`] (nothing while it is `waiting` for its instance to run); the source
    is "stored", "catalog" or "placement". Stored prices are those of the placement's
    offering, else of its regional offering (zone "") when the placement names a zone.
    With `nodes` (a multi-node job's instances, by job id), the usd of every node, each
    over the placement's span less its gaps (`JobStore.node_gaps`: a node not running).
    `dates`: a list that gets, per placement, when the price it was charged at its end
    took effect (`_price_dates`), for how old the prices behind a charge are."""
    until = epoch_second(now)
    spans = _Spans([p.offering_key for p in placements],
                   [epoch_second(p.start_at) for p in placements],
                   [until if p.end_at is None else epoch_second(p.end_at) for p in placements],
                   [p.usd_per_hour for p in placements], [bool(p.waiting) for p in placements])
    charged = _charge_spans(store, *spans, dates=dates)
    if dates is not None:
        _placed_dates(dates, charged, placements)
    if nodes is None:
        return charged
    return _every_node(store, charged, spans, [p.id for p in placements],
                       [nodes.get(p.job_id, 1) for p in placements])


def repriced(usd_per_hour: float | None, charged_usd_per_hour: float | None,
             nodes: int = 1) -> bool:
    """Whether a placement was charged at another hourly price on average than the one it
    was placed at, as the two read (`rate_words`: $/h at 4 decimals, for its `nodes`);
    both are one instance's (see above). Not when it has no charged price yet (no hours:
    NaN or None)."""
    if charged_usd_per_hour is None or charged_usd_per_hour != charged_usd_per_hour:
        return False
    n = _count(nodes)
    placed = math.nan if usd_per_hour is None else float(usd_per_hour) * n
    return stored_price(float(charged_usd_per_hour) * n) != stored_price(placed)


def rate_words(usd_per_hour: float | None, charged_usd_per_hour: float | None,
               nodes: int = 1, unit: str = "") -> str:
    """A placement's hourly price as charged, so that its hours times it make its cost:
    '$0.9200', a gang's for all its nodes ('$0.6000 for 2 nodes'); where it was charged
    at another price than it was placed at (`repriced`), the average charged beside the
    price when it began, each for the same nodes ('$2.7500 on average ($0.9200 when
    placed)', '$0.6000 for 2 nodes on average ($0.4000 when placed)'). `unit`: '/h' after
    each price."""
    n = _count(nodes)
    placed = math.nan if usd_per_hour is None else float(usd_per_hour) * n
    gang = f" for {n} nodes" if n > 1 else ""
    if not repriced(usd_per_hour, charged_usd_per_hour, n):
        return f"{stored_price(placed)}{unit}{gang}"
    average = float(charged_usd_per_hour) * n  # type: ignore[arg-type]
    return (f"{stored_price(average)}{unit}{gang} on average ({stored_price(placed)}{unit} "
            "when placed)")


def nodes_of(stored: Mapping) -> int:
    """A job's instances at once from its stored spec (num_nodes; 1 but for a gang): each
    is charged. The one reader of it, for `status`, the report and the running jobs."""
    value = ((stored.get("spec") if isinstance(stored, Mapping) else None) or {}).get(
        "num_nodes", 1)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 1 else 1


def _count(nodes: object) -> int:
    """A job's nodes, 1 where it is not known (None, NaN)."""
    try:
        return max(int(nodes), 1)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return 1


def egress_rows(placements: Sequence[PlacementRow], *,
                checkpoint_gb: float | Mapping[int, float],
                measured: Mapping[int, checkpoint_sizes.Measured] | None = None
                ) -> list[Move]:
    """One Move per move of a job (a placement by migration or recovery after another):
    the checkpoint copied from the previous placement's region to the new one, at the
    source cloud's egress price (free within a region, inter-region within a cloud,
    internet across clouds), by job and time. Its GB: the checkpoint's size measured in the
    job's store at the move (`measured`, by job id: `checkpoint_sizes.at_move`), else
    `checkpoint_gb`, the declared size (one for every job, or one per job id)."""
    ordered = sorted(placements, key=lambda p: (p.job_id, p.start_at, p.id))
    pairs = [(src, to) for src, to in zip(ordered, ordered[1:], strict=False)
             if src.job_id == to.job_id and to.reason in _MOVE_REASONS]
    sizes = _checkpoint_gb(checkpoint_gb, [to.job_id for _, to in pairs])
    out = []
    for (src, to), declared in zip(pairs, sizes, strict=True):
        found = checkpoint_sizes.at_move((measured or {}).get(int(to.job_id), ()), to.start_at)
        gb = declared if found is None else found
        per_gb = egress_usd_per_gb(Place(src.cloud, src.region), Place(to.cloud, to.region))
        out.append(Move(int(to.job_id), int(src.id), int(to.id), to.start_at, src.cloud,
                        src.region, to.cloud, to.region, gb, per_gb, gb * per_gb,
                        checkpoint_sizes.DECLARED if found is None
                        else checkpoint_sizes.MEASURED))
    return out


# --- frames around the same path ----------------------------------------------------------


def placement_costs(store: PriceStore, placements: pd.DataFrame, *, now: datetime,
                    egress: pd.DataFrame | None = None,
                    nodes: Mapping[int, int] | None = None) -> pd.DataFrame:
    """`charge` of a frame of placements: each row with `hours`, `usd` and `price_source`
    (a `waiting` column, where the frame has one, says which are not billed yet). With
    `egress` (an `egress_costs` frame) also `egress_usd`: the copy of the checkpoint into
    the placement. With `nodes` (by job id: the frame has `job_id`), every node's usd, as
    `charge` says; a row whose `id` names its placement (else NaN) is charged its gaps."""
    needed = _NEEDED if egress is None else [*_NEEDED, "id"]
    if nodes is not None:
        needed = [*needed, "job_id"]
    missing = [c for c in needed if c not in placements.columns]
    if missing:
        raise InvalidInput(f"placement frame lacks columns: {', '.join(missing)}")
    frame = placements.reset_index(drop=True)
    start = _seconds(frame["start_at"])
    end = _seconds(frame["end_at"].fillna(pd.Timestamp(utc(now))))
    waiting = (frame["waiting"].eq(True).tolist() if "waiting" in frame
               else [False] * len(frame))
    keys = list(zip(*(frame[c].tolist() for c in OFFERING_KEY), strict=True))
    spans = _Spans(keys, start, end, frame["usd_per_hour"].astype(float).tolist(), waiting)
    charged = _charge_spans(store, *spans)
    if nodes is not None:
        ids = (frame["id"] if "id" in frame else pd.Series([None] * len(frame))).tolist()
        charged = _every_node(store, charged, spans, [None if i != i else i for i in ids],
                              [nodes.get(int(j), 1) for j in frame["job_id"]])
    hours, usd, source = (list(c) for c in zip(*charged, strict=True)) if len(frame) \
        else ([], [], [])
    out = frame.assign(hours=pd.Series(hours, dtype=float), usd=pd.Series(usd, dtype=float),
                       price_source=pd.Series(source, dtype=object))
    if egress is not None:
        into = egress.groupby("to_placement")["usd"].sum()
        out["egress_usd"] = out["id"].map(into).fillna(0.0).astype(float)
    return out


def egress_costs(placements: pd.DataFrame, *,
                 checkpoint_gb: float | Mapping[int, float],
                 measured: Mapping[int, checkpoint_sizes.Measured] | None = None
                 ) -> pd.DataFrame:
    """`egress_rows` of a frame of placements, as a frame (MOVE_COLUMNS)."""
    missing = [c for c in ("id", "job_id", "cloud", "region", "start_at", "reason")
               if c not in placements.columns]
    if missing:
        raise InvalidInput(f"placement frame lacks columns: {', '.join(missing)}")
    rows = [_Placed(*r) for r in placements[["id", "job_id", "cloud", "region", "start_at",
                                             "reason"]].itertuples(index=False, name=None)]
    return moves_frame(egress_rows(rows, checkpoint_gb=checkpoint_gb,  # type: ignore[arg-type]
                                   measured=measured))


def moves_frame(moves: Iterable[Move]) -> pd.DataFrame:
    """Moves as a frame of MOVE_COLUMNS."""
    frame = pd.DataFrame(list(moves), columns=MOVE_COLUMNS)
    frame = frame.astype({"job_id": "int64", "from_placement": "int64",
                          "to_placement": "int64", "gb": float, "usd_per_gb": float,
                          "usd": float})
    frame["at"] = pd.to_datetime(frame["at"], utc=True) if len(frame) else \
        pd.Series(dtype="datetime64[ns, UTC]")
    return frame


class _Placed(NamedTuple):  # what egress_rows reads of a placement frame's row
    id: int
    job_id: int
    cloud: str
    region: str
    start_at: datetime
    reason: str


# --- price histories ----------------------------------------------------------------------

_SUMMED_STEPS = 64  # the most price changes `_Steps.usd` adds part by part


class _Steps:
    """An offering's prices as a step function (sorted (epoch second, USD/hour) pairs):
    the USD·s accrued from its first observation to each of them, for integrals."""

    __slots__ = ("ts", "price", "accrued")

    def __init__(self, observed: Sequence[tuple[int, float]]) -> None:
        self.ts = [float(t) for t, _ in observed]
        self.price = [float(p) for _, p in observed]
        total, self.accrued = 0.0, [0.0]
        for i in range(1, len(self.ts)):
            total += (self.ts[i] - self.ts[i - 1]) * self.price[i - 1]
            self.accrued.append(total)

    def since(self, t: int) -> int:
        """When the price in effect at `t` (epoch seconds) took effect (before the first
        observation, the first's time)."""
        return int(self.ts[max(bisect.bisect_right(self.ts, float(t)) - 1, 0)])

    def usd(self, start: int, end: int) -> float:
        """USD of [start, end] (epoch seconds): before the first observation, its price;
        each price over its part (two large accrued sums' difference is no exact figure:
        4 s at $0.9000/h, 0.000999999998344), over many the accrued sums' difference."""
        s, e = float(start), float(end)
        i = max(bisect.bisect_right(self.ts, s) - 1, 0)
        last = max(bisect.bisect_right(self.ts, e) - 1, 0)
        if last - i > _SUMMED_STEPS:
            return (self._at(e) - self._at(s)) / 3600
        total, at = 0.0, s
        for j in range(i, last):
            total += self.price[j] * (self.ts[j + 1] - at)
            at = self.ts[j + 1]
        return (total + self.price[last] * (e - at)) / 3600

    def _at(self, t: float) -> float:
        i = max(bisect.bisect_right(self.ts, t) - 1, 0)
        return self.accrued[i] + self.price[i] * (t - self.ts[i])


class _Spans(NamedTuple):  # what `_charge_spans` charges, a list per field
    keys: Sequence[Key]
    start: Sequence[int]
    end: Sequence[int]
    rate: Sequence[float]
    waiting: Sequence[bool]


def _every_node(store: PriceStore, charged: list[tuple[float, float, str]], spans: _Spans,
                ids: Sequence[int | None], counts: Sequence[int]
                ) -> list[tuple[float, float, str]]:
    """`charged` (one node's, per span) as every node's: times `counts`, less what each
    gap of a node of the span's placement (`ids`; None: none) would have cost at the same
    prices over the part of the span it covers (a gap still open: to the span's end)."""
    gangs = [i for i, n in zip(ids, counts, strict=True) if i is not None and n > 1]
    gaps = store.jobs.node_gaps(int(i) for i in gangs) if gangs else {}
    rows, left_out = [], _Spans([], [], [], [], [])
    for row, placement in enumerate(ids):
        if placement is None or counts[row] <= 1 or spans.waiting[row]:
            continue
        for gap in gaps.get(int(placement), ()):
            lo = max(spans.start[row], gap.start)
            hi = spans.end[row] if gap.end is None else min(spans.end[row], gap.end)
            if hi > lo:
                rows.append(row)
                for field, value in zip(left_out, (spans.keys[row], lo, hi, spans.rate[row],
                                                   False), strict=True):
                    field.append(value)  # type: ignore[attr-defined]
    less = [0.0] * len(charged)
    for row, (_, usd, _) in zip(rows, _charge_spans(store, *left_out), strict=True):
        less[row] += usd
    return [(hours, usd * n - cut, source) for (hours, usd, source), n, cut
            in zip(charged, counts, less, strict=True)]


def _charge_spans(store: PriceStore, keys: Sequence[Key], start: Sequence[int],
                  end: Sequence[int], rate: Sequence[float], waiting: Sequence[bool],
                  dates: list[datetime | None] | None = None
                  ) -> list[tuple[float, float, str]]:
    """(hours, usd, source) of each span: on offering keys[i] from start[i] to end[i]
    (epoch seconds; nothing when it ends before it starts, or while waiting[i]), at the
    stored prices, else the catalog's, else rate[i] USD/hour. `dates`: gets, per span,
    when the stored or catalog price in effect at its end took effect (None for a span
    charged at its own rate: `_placed_dates` says it)."""
    if not keys:
        return []
    # An open placement that starts after `now` cost nothing yet; a waiting one neither.
    ends = [s if w else max(e, s) for s, e, w in zip(start, end, waiting, strict=True)]
    offerings = list(dict.fromkeys(keys))
    stored = _stored_steps(store, offerings, min(start), max(ends))
    listed = _catalog_steps(offerings)
    out = []
    for key, s, e, r in zip(keys, start, ends, rate, strict=True):
        usd, source, since = r * (e - s) / 3600, "placement", None
        for name, steps in (("catalog", listed.get(key)), ("stored", stored.get(key))):
            found = math.nan if steps is None else steps.usd(s, e)
            if not math.isnan(found):  # stored prices win
                usd, source, since = found, name, steps.since(e)
        out.append(((e - s) / 3600, usd, source))
        if dates is not None:
            dates.append(None if since is None else _time(since))
    return out


def _placed_dates(dates: list[datetime | None], charged: Sequence[tuple[float, float, str]],
                  placements: Sequence[PlacementRow]) -> None:
    """`dates` (one per placement, `_charge_spans`'s) with those charged at their own
    price (source "placement": none stored for their offering) filled in: when the
    bundled price list's price of their offering that held at their start took effect,
    the price they were placed at (None where it lists none)."""
    from costsched import bundled_prices

    for i, ((_, _, source), p) in enumerate(zip(charged, placements, strict=True)):
        if source == "placement" and dates[i] is None:
            dates[i] = bundled_prices.took_effect(p.cloud, p.region, p.zone,
                                                  p.instance_type, p.market, p.start_at)


def _stored_steps(store: PriceStore, wanted: list[Key], lo: int, hi: int
                  ) -> dict[Key, _Steps]:
    """The stored observations of the `wanted` offerings over [lo, hi], by offering (a
    zoned one without an offering of its own: its region's): four queries at most (three
    unless an offering was observed only after hi), however many placements."""
    regional = [(c, r, "", t, m, o) for c, r, z, t, m, o in wanted if z != ""]
    keys = set(wanted) | set(regional)
    columns = [c for c in OFFERING_KEY if c != "zone"]
    filters = {c: sorted({k[OFFERING_KEY.index(c)] for k in keys}) for c in columns}
    ids = {}
    for row in store.offering_rows(**filters):
        key = (row.cloud, row.region, row.zone, row.instance_type, row.market, row.os)
        if key in keys:
            ids[key] = int(row.id)
    if not ids:
        return {}
    known = sorted(set(ids.values()))
    first, last = _time(lo), _time(hi)
    parts = [store.as_of_rows(first, id=known), store.history_rows(first, last, id=known)]
    seen = {row[part.columns.index("id")] for part in parts for row in part.rows}
    later = [i for i in known if i not in seen]  # observed only after every placement ended
    if later:
        parts.append(store.history_rows(last, None, id=later))
    observed: dict[int, dict[int, float]] = {}
    for part in parts:
        at = [part.columns.index(c) for c in ("id", "effective_ts", "usd_per_hour")]
        for row in part.rows:
            observed.setdefault(int(row[at[0]]), {}).setdefault(int(row[at[1]]),
                                                                float(row[at[2]]))
    steps = {i: _Steps(sorted(prices.items())) for i, prices in observed.items()}
    out = {}
    for key in wanted:  # its own offering, else its region's
        found = ids.get(key, ids.get((*key[:2], "", *key[3:])))
        if found is not None and found in steps:
            out[key] = steps[found]
    return out


def _catalog_steps(wanted: list[Key]) -> dict[Key, _Steps]:
    """The catalog's on-demand list prices of the `wanted` on-demand offerings (a zone is
    charged its region's list price)."""
    listed = catalog.on_demand_history() if any(k[4] == "on_demand" for k in wanted) else {}
    out = {}
    for key in wanted:
        cloud, region, _, instance_type, market, os_name = key
        prices = listed.get((cloud, region, instance_type, os_name))
        if market == "on_demand" and prices:
            out[key] = _Steps(prices)
    return out


# --- small helpers ------------------------------------------------------------------------


def array_sum(values: Sequence[float]) -> float:
    """The sum of `values` as a frame's column sums them (`_sum`), for rows."""
    return _sum(values)


def _sum(values: Sequence[float]) -> float:
    """The sum of `values` with NaN counted as 0, added as numpy adds a float array
    (pairwise, eight at a time), so a job's total is the same to the last bit as a sum of
    its frame's column."""
    values = [0.0 if v != v else v for v in values]

    def pairwise(a: Sequence[float]) -> float:
        n = len(a)
        if n < 8:
            total = 0.0
            for v in a:
                total += v
            return total
        if n <= 128:
            r = list(a[:8])
            i = 8
            while i < n - n % 8:
                for j in range(8):
                    r[j] += a[i + j]
                i += 8
            total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
            for v in a[i:]:
                total += v
            return total
        half = n // 2
        half -= half % 8
        return pairwise(a[:half]) + pairwise(a[half:])

    return float(pairwise(values))


def _seconds(times: pd.Series) -> list[int]:
    if len(times) == 0:
        return []
    return to_epoch_seconds(times.reset_index(drop=True)).tolist()


def _time(seconds: int) -> datetime:
    return datetime.fromtimestamp(int(seconds), timezone.utc)


def _checkpoint_gb(size: float | Mapping[int, float], job_ids: Sequence[int]) -> list[float]:
    if not job_ids:
        return []
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
    return [float(v) for v in values]
