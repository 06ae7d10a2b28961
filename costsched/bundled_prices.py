"""The bundled list prices and spot prices as plain rows, read with the csv module; and
the one rule saying when a bundled price is superseded (`superseded`).

For the commands that answer from the bundled catalog and a SQLite store's prices (read
by `costsched.service.glance`) and the instance types a refresh discovered: `costsched
gpus` starts in a fraction of the time pandas takes to import. The rules are those of
`costsched.prices.prices_at(..., superseded=True)`, row for row and in the same order
(tests compare the two): per (cloud, region, instance type) the newest on-demand list
price that held by the time asked for, per (cloud, region, zone, instance type) the
newest bundled spot price, neither for a type retired by then; the stored prices with
them, the newer winning (`_with_stored`); superseded prices after current ones.
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from functools import cache
from importlib import resources
from pathlib import Path

from costsched import clouds
from costsched.amounts import age, stored_price
from costsched.catalog_version import CATALOG_VERSION
from costsched.default_hosts import other_host
from costsched.kept import kept
from costsched.model import CLOUDS, MARKETS, InvalidInput
from costsched.spot_market import (
    PARTIAL,
    SPOT_OFFERING,
    bundled_place_holds,
    bundled_spot_holds,
)
from costsched.vocabulary import choose, closest, did_you_mean

# The GPU models, named as SkyPilot users write them (older first within a family).
GPU_MODELS = ("K80", "P4", "P100", "V100", "T4", "A10", "A10G", "L4", "A40", "L40", "L40S",
              "A100", "A100-80GB", "H100", "H100-MEGA", "H200", "GH200", "B200", "MI300X")
# Other names of the catalog's GPUs (upper case, as SkyPilot and the vendors write them):
# the memory a model's base name already means, and the form factors of one model.
GPU_ALIASES = {"A100-40GB": "A100", "A100-SXM4-40GB": "A100", "A100-40G": "A100",
               "A100-SXM4-80GB": "A100-80GB", "A100-80G": "A100-80GB",
               "H100-80GB": "H100", "H100-SXM": "H100", "H100-SXM5-80GB": "H100",
               "H100-80GB-HBM3": "H100", "V100-16GB": "V100", "T4-16GB": "T4",
               "L4-24GB": "L4", "A10G-24GB": "A10G", "H200-141GB": "H200"}
CATALOG_SOURCE = f"catalog {CATALOG_VERSION}"
SPOT_SNAPSHOT_SOURCE = f"catalog {CATALOG_VERSION} spot snapshot"
# Instance types found by `costsched catalog refresh` (price_collectors.discovery).
ENV_DISCOVERED = "COSTSCHED_DISCOVERED_TYPES"
SUMMARY_KEY = ("gpu_model", "gpu_count")
TYPE_FIELDS = ("cloud", "instance_type", "gpu_model", "gpu_count", "gpu_memory_gb", "vcpus",
               "memory_gb")
OFFERING_COLUMNS = ("gpu_model", "gpu_count", "cloud", "region", "zone", "instance_type",
                    "market", "usd_per_hour", "usd_per_gpu_hour", "effective_at",
                    "age_days", "superseded", "source")
# A bundled price is superseded at a time when, after its own date and by that time, a
# bundled price of the same instance type (cloud and market) changed somewhere by more
# than PRICE_CHANGE from the one before it in the same place: the list price has changed
# since (AWS cut p5's in mid-2025; GCP's H100 spot prices rose through 2026), so the
# older figure is no longer the type's price anywhere. Smaller differences are rounding
# between sources. A superseded price ranks behind every current one, and plans leave it
# out (`superseded`).
PRICE_CHANGE = 0.01
# Where a view picks one spot price per GPU model and count (`gpu_summary`), a spot price
# older than this ranks behind younger ones: it is shown only where none is younger. Spot
# prices move (GCP's H100 spot rose 2.5x in the first half of 2026); list prices rarely
# do, and one that changed makes the older ones superseded.
OLD_DAYS = 365


def discovered_path() -> Path:
    """$COSTSCHED_DISCOVERED_TYPES, else discovered_types.csv in the user data directory."""
    if os.environ.get(ENV_DISCOVERED):
        return Path(os.environ[ENV_DISCOVERED]).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("costsched")) / "discovered_types.csv"


def gpu_model_name(value: str) -> str:
    """The catalog's spelling of a GPU model, given any case ('v100' -> 'V100'), a cloud's
    accelerator name ('nvidia-tesla-v100', 'nvidia-h100-80gb' -> 'H100') or a vendor's
    ('NVIDIA Tesla V100', 'tesla-v100')."""
    text = str(value).strip()
    for cloud in clouds.CLOUDS.values():
        model = cloud.gpu_model_of(text)
        if model is not None:
            return model
    name = re.sub(r"[\s_]+", "-", text.upper())
    name = re.sub(r"^(NVIDIA-)?(TESLA-)?", "", name)
    name = GPU_ALIASES.get(name, name)
    found = {m.upper(): m for m in GPU_MODELS}.get(name)
    if found is None:
        counted = counted_name(name)
        raise InvalidInput(
            f"unknown GPU model {value!r}: expected one of {', '.join(GPU_MODELS)} "
            "(or a cloud's name of one, such as nvidia-tesla-v100)"
            + (f"; did you mean {counted!r}? (a count is written MODEL:COUNT)" if counted
               else did_you_mean(name, GPU_MODELS)))
    return found


def closest_gpus(name: str, models: Iterable[str]) -> list[str]:
    """The GPU models of `models` closest to `name`, closest first ([] when none is
    close): a model that is `name` with letters after it ('A10' -> 'A10G', 'L40' ->
    'L40S': the variant of the GPU asked that the clouds sell) alone, else those that
    read alike."""
    key = name.strip().upper()
    models = [m for m in models if m.upper() != key]
    variants = [m for m in models if m.upper().startswith(key) and m[len(key):].isalpha()]
    return variants or closest(name, models)


def counted_name(name: str) -> str:
    """'H100:8' for a model and count written as one name ('H100X8', or '8XH100' as the
    tables write '8xH100'); '' for any other name."""
    models = {m.upper(): m for m in GPU_MODELS}
    after = re.fullmatch(r"(.+?)-?X(\d+)", name)
    before = re.fullmatch(r"(\d+)-?X(.+)", name)
    for model, count in ((after and after.groups()) or ("", "0"),
                         (before and before.groups()[::-1]) or ("", "0")):
        if model in models and int(count) > 0:
            return f"{models[model]}:{int(count)}"
    return ""


def parse_gpu(value: str) -> tuple[str, int]:
    """'V100' -> ('V100', 1); 'v100:8' -> ('V100', 8)."""
    name, _, count = str(value).partition(":")
    n = count.strip() or "1"
    if not n.isdigit() or int(n) < 1:
        raise ValueError(f"{value!r}: expected GPU or GPU:COUNT such as V100 or V100:8")
    return gpu_model_name(name), int(n)


def age_text(days: float) -> str:
    """How old a price is (`days`) by the one rule of ages (`costsched.amounts.age`):
    '3 h', '12 days', '18 mo'; '-' for none (NaN)."""
    return age(days * 86_400)


def gpu_order(model: str) -> int:
    """A GPU model's place in GPU_MODELS (unknown ones last)."""
    return _ORDER.get(model, len(_ORDER))


_ORDER = {m: i for i, m in enumerate(GPU_MODELS)}


@cache  # read once: the rows are never changed in place
def _read(name: str) -> tuple[dict[str, str], ...]:
    with resources.files("costsched.data").joinpath(name).open("r", newline="") as fh:
        rows = csv.reader(fh)
        header = next(rows)
        return tuple(dict(zip(header, row, strict=True)) for row in rows)


def bundled_rows(name: str) -> tuple[dict[str, str], ...]:
    """The rows of a bundled CSV file of `costsched/data`, as text, read once."""
    return _read(name)


@cache  # a few dozen dates among thousands of rows
def as_of_time(text: str) -> datetime:
    """When a bundled price held from: its `as_of`, a day ('2026-07-30', the day it was
    read) or a month ('2025-10': the first day of the month it is known to hold for)."""
    form = "%Y-%m-%d" if len(text) > 7 else "%Y-%m"
    return datetime.strptime(text, form).replace(tzinfo=timezone.utc)


def type_shape(count: object, model: object, where: str, line: int) -> tuple[int, str]:
    """An instance type row's (GPU count, GPU model): the model "" exactly where the count
    is 0 (a CPU type); InvalidInput naming the file (`where`), row and field otherwise."""
    name = "" if model is None or model != model else str(model).strip()  # NaN: none
    try:
        number = float(str(count))
    except ValueError:
        number = float("nan")
    if number != number or number < 0 or number != int(number):
        raise InvalidInput(f"{where}: row {line}: field gpu_count: expected a whole "
                           f"number >= 0, got {count!r}")
    if (number == 0) != (name == ""):
        raise InvalidInput(f"{where}: row {line}: field gpu_model: expected empty exactly "
                           f"when gpu_count is 0 (a CPU instance type), got {name!r} with "
                           f"gpu_count {int(number)}")
    return int(number), name


def _discovered_stamp() -> tuple[str, int, int] | None:
    """The discovered-types file as it is now (path, mtime, size); None when there is none:
    what the readers below are cached by, so that a refresh is seen."""
    path = discovered_path()
    try:
        stat = path.stat()
    except OSError:
        return None
    return str(path), stat.st_mtime_ns, stat.st_size


@cache
def _gpu_types(stamp: tuple[str, int, int] | None) -> dict[tuple[str, str], dict]:
    """(cloud, instance type) -> the GPU type's row, with `retired` (a UTC day or None):
    the bundled types, then those of the discovered-types file (`stamp`) the bundled files
    do not name (as `costsched.catalog` combines them)."""
    retired = {(r["cloud"], r["instance_type"]):
               datetime.strptime(r["retired"], "%Y-%m-%d").replace(tzinfo=timezone.utc)
               for r in _read("retirements.csv")}
    types, known = {}, set()
    for row in _read("instance_types.csv"):
        key = (row["cloud"], row["instance_type"])
        known.add(key)
        count = int(float(row["gpu_count"]))
        if count > 0:
            types[key] = {"gpu_model": row["gpu_model"].strip(), "gpu_count": count,
                          "retired": retired.get(key)}
    for line, row in _discovered_rows(stamp):
        key = (row["cloud"], row["instance_type"])
        count, model = type_shape(row["gpu_count"], row["gpu_model"], stamp[0], line)
        if count > 0 and key not in known:
            types[key] = {"gpu_model": model, "gpu_count": count, "retired": retired.get(key)}
    return types


def _discovered_rows(stamp: tuple[str, int, int] | None) -> list[tuple[int, dict]]:
    """(file row number, row) of the discovered-types file; InvalidInput when it is not
    one (the words of `costsched.catalog.discovered_types`)."""
    if stamp is None:
        return []
    path = stamp[0]
    try:
        with open(path, newline="") as fh:
            reader = csv.DictReader(fh)
            header, rows = reader.fieldnames or [], list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise not_discovered_file(path, exc) from None
    check_discovered_fields(path, header)
    return [(i + 2, row) for i, row in enumerate(rows)]


def not_discovered_file(path: object, exc: Exception) -> InvalidInput:
    """The refusal of a discovered-types file that cannot be read as CSV."""
    return InvalidInput(f"{path}: not a discovered-types CSV ({exc}); run `costsched catalog "
                        "refresh` again")


def check_discovered_fields(path: object, header: Sequence[str]) -> None:
    """InvalidInput when a discovered-types file's header lacks a type's fields."""
    missing = [c for c in TYPE_FIELDS if c not in header]
    if missing:
        raise InvalidInput(f"{path}: missing field(s) {', '.join(missing)}: expected "
                           f"{', '.join(TYPE_FIELDS)}, regions, zones, source")


def _rows_of(name: str, cloud: str, instance_type: str) -> list[dict[str, str]]:
    """The rows of one instance type of a bundled CSV file, as `_read` has them: only they
    are made dicts (a charge's price date needs its type's rows, not the whole list)."""
    with resources.files("costsched.data").joinpath(name).open("r", newline="") as fh:
        rows = csv.reader(fh)
        header = next(rows)
        at = header.index("cloud"), header.index("instance_type")
        return [dict(zip(header, row, strict=True)) for row in rows
                if row[at[1]] == instance_type and row[at[0]] == cloud]


def _priced(rows: Sequence[dict[str, str]], types: dict[tuple[str, str], dict]) -> list[dict]:
    """The price `rows` whose type is a GPU type of `types`, in their order, with the type's
    GPU model and count, `effective_at` (`as_of_time`) and usd_per_hour."""
    out = []
    for row in rows:
        kind = types.get((row["cloud"], row["instance_type"]))
        if kind is not None:
            out.append({**row, **kind, "usd_per_hour": float(row["usd_per_hour"]),
                        "effective_at": as_of_time(row["as_of"])})
    return out


@cache
def _on_demand(stamp: tuple[str, int, int] | None) -> list[dict]:
    return _as_on_demand(_priced(_read("on_demand_prices.csv"), _gpu_types(stamp)))


def _as_on_demand(rows: list[dict]) -> list[dict]:
    for row in rows:
        row.update(zone="", market="on_demand", source=CATALOG_SOURCE)
    return sorted(rows, key=lambda r: r["effective_at"])  # stable: file order within a month


@cache
def _spot(stamp: tuple[str, int, int] | None) -> list[dict]:
    return _as_spot(_priced(_read("spot_prices.csv"), _gpu_types(stamp)))


def _as_spot(rows: list[dict]) -> list[dict]:
    for row in rows:
        row.update(zone=row["zone"] or "", market="spot",
                   source=f"{SPOT_SNAPSHOT_SOURCE}: {row['source']}")
    return sorted(rows, key=lambda r: r["effective_at"])


@cache
def _changes() -> dict[tuple[str, str, str], list[tuple[datetime, str]]]:
    """(cloud, instance type, market) -> [(day, what changed)], oldest first: each time a
    bundled price of the type in one place (region, zone) differed by more than
    PRICE_CHANGE from the place's previous bundled price. Every type, GPU or CPU. Kept
    between runs (`costsched.kept`): a function of the bundled files alone."""
    return kept("bundled-price-changes", _read_changes)


def _read_changes() -> dict[tuple[str, str, str], list[tuple[datetime, str]]]:
    out: dict[tuple[str, str, str], list[tuple[datetime, str]]] = {}
    for name, market in (("on_demand_prices.csv", "on_demand"), ("spot_prices.csv", "spot")):
        rows = sorted(((as_of_time(r["as_of"]), float(r["usd_per_hour"]), r)
                       for r in _read(name)), key=lambda t: t[0])
        last: dict[tuple, tuple[datetime, float]] = {}
        for day, price, r in rows:
            place = (r["cloud"], r["instance_type"], r["region"], r.get("zone") or "")
            before = last.get(place)
            if before is not None and day > before[0] and abs(price / before[1] - 1) > PRICE_CHANGE:
                out.setdefault((r["cloud"], r["instance_type"], market), []).append(
                    (day, f"{r['instance_type']} {market.replace('_', '-')} in "
                          f"{place[3] or place[2]} went from {stored_price(before[1])}/h "
                          f"({before[0]:%Y-%m-%d}) to {stored_price(price)}/h ({day:%Y-%m-%d})"))
            last[place] = (day, price)
    return out


def superseded(cloud: str, instance_type: str, market: str, effective_at: datetime,
               when: datetime) -> str | None:
    """Why a bundled price dated `effective_at` is superseded at `when` (the first change
    of its type's price after it, by then: see PRICE_CHANGE), or None if it is current."""
    for day, what in _changes().get((cloud, instance_type, market), ()):
        if effective_at < day <= when:
            return what
    return None


def old(market: str, age_days: float) -> bool:
    """Whether a price of `market` this old ranks behind younger ones of its shape: a spot
    price over OLD_DAYS old."""
    return market == "spot" and age_days > OLD_DAYS


def oldest_price(clouds: Sequence[str] = (), gpu_models: Sequence[str] = ()
                 ) -> datetime | None:
    """When the oldest bundled GPU price (of `clouds` and `gpu_models`, when given) took
    effect; None when none is bundled."""
    stamp = _discovered_stamp()
    times = [r["effective_at"] for r in (*_on_demand(stamp), *_spot(stamp))
             if (not clouds or r["cloud"] in clouds)
             and (not gpu_models or r["gpu_model"] in gpu_models)]
    return min(times, default=None)


def _newest(rows: list[dict], key: tuple[str, ...], when: datetime) -> list[dict]:
    """Per `key`, the last row (in the rows' order) that held by `when` and whose type was
    not retired by then, at that row's place."""
    last: dict[tuple, tuple[int, dict]] = {}
    for i, row in enumerate(rows):
        if row["effective_at"] <= when:
            last[tuple(row[k] for k in key)] = (i, row)
    return [row for _, row in sorted(last.values(), key=lambda p: p[0])
            if row["retired"] is None or row["retired"] > when]


@cache
def _offering_rows(stamp: tuple[str, int, int] | None, cloud: str, instance_type: str,
                   market: str) -> list[dict]:
    """The bundled rows of one (cloud, instance type, market) as `_on_demand` and `_spot`
    have them, in their order, read from the rows of that type alone."""
    name, shaped = {"on_demand": ("on_demand_prices.csv", _as_on_demand),
                    "spot": ("spot_prices.csv", _as_spot)}.get(market, (None, None))
    kind = _gpu_types(stamp).get((cloud, instance_type))
    if name is None or shaped is None or kind is None:
        return []
    return shaped(_priced(_rows_of(name, cloud, instance_type), {(cloud, instance_type): kind}))


def took_effect(cloud: str, region: str, zone: str, instance_type: str, market: str,
                when: datetime) -> datetime | None:
    """When the bundled price of an offering that held at `when` took effect: its zone's,
    else its region's; None where none held (as `prices_at` lists them: the last row of
    the place by `when`, unless its type was retired by then). One offering's rows only,
    however many the list has."""
    rows = _offering_rows(_discovered_stamp(), cloud, instance_type, market)
    for place in ((region, zone), (region, "")):
        held = [r for r in rows if (r["region"], r["zone"]) == place
                and r["effective_at"] <= when]
        if held:
            last = held[-1]
            return last["effective_at"] if last["retired"] is None or \
                last["retired"] > when else None
    return None


def prices_at(when: datetime, *, clouds: Sequence[str] = (),
              gpu_models: Sequence[str] = (), stored: Sequence[dict] = (),
              spot_markets: Mapping[str, datetime] | None = None) -> list[dict]:
    """The bundled GPU offerings' prices that held at `when`, with a store's (`stored`:
    its GPU offerings' prices at `when`, `glance.stored_gpu_prices`), current ones first,
    cheapest per GPU-hour first (then by cloud, region and zone): dicts with the offering,
    market, usd_per_hour, usd_per_gpu_hour, effective_at, age_days, superseded (bool: see
    PRICE_CHANGE) and source. `spot_markets` are the clouds whose spot market the store
    holds (`glance.stored_spot_markets`: read over the whole store, as `costsched.prices`
    reads them); default: those of `stored`, which must then be every stored price."""

    def wanted(r: dict) -> bool:
        return ((not clouds or r["cloud"] in clouds)
                and (not gpu_models or r["gpu_model"] in gpu_models))

    stamp = _discovered_stamp()
    on_demand = [r for r in _newest(_on_demand(stamp), ("cloud", "region", "instance_type"),
                                    when) if wanted(r)]
    spot = [r for r in _newest(_spot(stamp), ("cloud", "region", "zone", "instance_type"),
                               when) if wanted(r)]
    if spot_markets is None:
        spot_markets = _newest_times([r for r in stored if not str(r.get(
            "source", "")).startswith(PARTIAL)], "spot", lambda r: r["cloud"])
    own, on_demand, spot = _with_stored([r for r in stored if wanted(r)], on_demand, spot,
                                        spot_markets)
    rows = own + on_demand + spot
    collected = {id(r) for r in own}  # a stored price is never superseded
    out = [{
        "gpu_model": r["gpu_model"], "gpu_count": r["gpu_count"], "cloud": r["cloud"],
        "region": r["region"], "zone": r["zone"], "instance_type": r["instance_type"],
        "market": r["market"], "usd_per_hour": r["usd_per_hour"],
        "usd_per_gpu_hour": r["usd_per_hour"] / r["gpu_count"],
        "effective_at": r["effective_at"],
        "age_days": (when - r["effective_at"]).total_seconds() / 86400,
        "superseded": id(r) not in collected and superseded(
            r["cloud"], r["instance_type"], r["market"], r["effective_at"], when) is not None,
        "source": r["source"],
    } for r in rows]
    out.sort(key=lambda r: (r["superseded"], r["usd_per_gpu_hour"], r["cloud"], r["region"],
                            r["zone"]))
    return out


def _with_stored(stored: list[dict], on_demand: list[dict], spot: list[dict],
                 spot_markets: Mapping[str, datetime]
                 ) -> tuple[list[dict], list[dict], list[dict]]:
    """(the stored prices kept, the on-demand list prices kept, the spot snapshot prices
    kept), as `costsched.prices.prices_at` combines them: a cloud's snapshot prices no
    newer than its newest stored spot price (`spot_markets`, `costsched.spot_market`) are
    left out, and at each place those no newer than a stored spot price there; per (cloud,
    region, type) the newer on-demand price of the list and the store's wins; a snapshot
    price replaces the store's spot prices of its place (a spot price's place: its
    offering's cloud, region, zone and type, `spot_market.SPOT_OFFERING`)."""
    spot = [r for r in spot if bundled_spot_holds(r["cloud"], r["effective_at"], spot_markets)]
    if not stored:
        return stored, on_demand, spot

    def key(r: dict) -> tuple[str, str, str]:
        return r["cloud"], r["region"], r["instance_type"]

    def place(r: dict) -> tuple[str, ...]:
        return tuple(r[c] for c in SPOT_OFFERING)

    stored_at = _newest_times(stored, "spot", place)  # a partial update's places among them
    spot = [r for r in spot if bundled_place_holds(r["effective_at"],
                                                   stored_at.get(place(r)))]
    listed_at = _newest_times(stored, "on_demand", key)
    if listed_at and on_demand:
        on_demand = [r for r in on_demand
                     if key(r) not in listed_at or r["effective_at"] > listed_at[key(r)]]
        replaced = {key(r) for r in on_demand} & listed_at.keys()
        stored = [r for r in stored if r["market"] != "on_demand" or key(r) not in replaced]
    places = {place(r) for r in spot}
    stored = [r for r in stored if r["market"] != "spot" or place(r) not in places]
    return stored, on_demand, spot


def _newest_times(rows: list[dict], market: str, key: Callable[[dict], Hashable]
                  ) -> dict[Hashable, datetime]:
    """Per `key`, the newest effective_at of the rows of `market`."""
    out: dict[Hashable, datetime] = {}
    for r in rows:
        if r["market"] == market:
            k = key(r)
            out[k] = max(r["effective_at"], out.get(k, r["effective_at"]))
    return out


def gpu_offerings(gpu: str, when: datetime, *, clouds: Sequence[str] = (),
                  stored: Sequence[dict] = (),
                  spot_markets: Mapping[str, datetime] | None = None) -> list[dict]:
    """Every offering of one GPU model at `when` (OFFERING_COLUMNS), bundled and `stored`
    (`prices_at`, as `spot_markets`): fewest GPUs first, then current before superseded,
    then cheapest."""
    rows = prices_at(when, clouds=cloud_names(clouds), gpu_models=[gpu_model_name(gpu)],
                     stored=stored, spot_markets=spot_markets)
    rows.sort(key=lambda r: (r["gpu_count"], r["superseded"], r["usd_per_hour"], r["market"]))
    # No quota is known on this path (`glance.stored_gpu_prices` leaves a store that holds
    # quotas to the service): none marks an offering.
    return [{**{c: r[c] for c in OFFERING_COLUMNS}, "quota": ""} for r in rows]


def gpu_summary(when: datetime, *, clouds: Sequence[str] = (),
                stored: Sequence[dict] = (),
                spot_markets: Mapping[str, datetime] | None = None) -> list[dict]:
    """One row per GPU model and count (as `costsched.service.gpus.gpu_summary`): per
    market the cheapest price (current before superseded, then spot prices under OLD_DAYS
    before older), where, its age in days, whether it is superseded, its source and its
    quota mark (None where the market has no price); a GPU's other hosts than its default
    (`default_hosts`) are left out, as a job naming only the GPU is not offered them."""
    rows = [r for r in prices_at(when, clouds=cloud_names(clouds), stored=stored,
                                 spot_markets=spot_markets)
            if not other_host(r["instance_type"])]  # the host of a job naming GPUs alone
    keys = sorted(dict.fromkeys((r["gpu_model"], r["gpu_count"]) for r in rows),
                  key=lambda k: (gpu_order(k[0]), k[1]))
    out = {k: dict(zip(SUMMARY_KEY, k, strict=True)) for k in keys}
    for market in MARKETS:
        cheapest: dict[tuple, dict] = {}
        for r in sorted((r for r in rows if r["market"] == market),
                        key=lambda r: (r["superseded"], old(market, r["age_days"]),
                                       r["usd_per_hour"])):
            cheapest.setdefault((r["gpu_model"], r["gpu_count"]), r)
        for key, summary in out.items():
            r = cheapest.get(key)
            summary.update({
                f"{market}_usd_per_hour": None if r is None else r["usd_per_hour"],
                f"{market}_where": None if r is None else
                f"{r['cloud']} {r['zone'] or r['region']} {r['instance_type']}",
                f"{market}_age_days": None if r is None else r["age_days"],
                f"{market}_superseded": None if r is None else r["superseded"],
                f"{market}_source": None if r is None else r["source"],
                f"{market}_quota": None if r is None else ""})  # none known here
    return list(out.values())


def cloud_names(values: Sequence[str]) -> list[str]:
    spelled, error = choose(values, CLOUDS)
    if error is not None:
        raise InvalidInput(f"cloud {error}")
    return spelled
