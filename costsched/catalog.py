"""The bundled offering catalog: GPU instance types and their on-demand list prices.

CSV files in `costsched/data` (facts from the providers' public price lists and
notices; each price row names its source and the day or month it held for, each retirement
its notice). This is the embedded default when no prices were collected.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import cache
from importlib import resources
from pathlib import Path

# The catalog's names and the light readers live in bundled_prices (no pandas) for the
# quick commands; they are the catalog's too.
from costsched import bundled_prices
from costsched.bundled_prices import (  # noqa: F401
    CATALOG_SOURCE,
    ENV_DISCOVERED,
    GPU_MODELS,
    SPOT_SNAPSHOT_SOURCE,
    discovered_path,
    gpu_model_name,
    parse_gpu,
)
from costsched.catalog_version import CATALOG_VERSION  # noqa: F401
from costsched.kept import kept
from costsched.lazy import pandas as pd
from costsched.model import InvalidInput

TYPE_COLUMNS = list(bundled_prices.TYPE_FIELDS)


def _read(name: str) -> pd.DataFrame:
    with resources.files("costsched.data").joinpath(name).open("r") as fh:
        return pd.read_csv(fh)


def discovered_types(path: Path | None = None) -> pd.DataFrame:
    """The instance types a refresh discovered (TYPE_COLUMNS and where they are offered:
    regions, zones, source); empty when there is no such file."""
    path = path or discovered_path()
    if not path.exists():
        return pd.DataFrame(columns=[*TYPE_COLUMNS, "regions", "zones", "source"])
    try:
        frame = pd.read_csv(path, dtype={"regions": str, "zones": str, "gpu_model": str})
    except (OSError, ValueError) as exc:
        raise bundled_prices.not_discovered_file(path, exc) from None
    bundled_prices.check_discovered_fields(path, list(frame.columns))
    return check_types(frame, str(path))


def reload() -> None:
    """Read the catalog's files again (after a refresh wrote discovered types)."""
    for loader in (_all_types, instance_types, on_demand_prices, _type_index,
                   on_demand_observations, spot_observations, _retired_days,
                   on_demand_history):
        loader.cache_clear()


def _kept(name: str, compute: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """A frame of the bundled files and the discovered-types file, kept between runs
    (`costsched.kept`: computed again when either changes)."""
    import numpy
    import pandas

    arrow = sys.modules.get("pyarrow")  # (pandas's string columns, when it is installed)
    return kept(f"catalog-{name}", compute, [discovered_path()],
                also=(pandas.__version__, numpy.__version__, getattr(arrow, "__version__", "")))


@cache
def _all_types() -> pd.DataFrame:
    """Every instance type, GPU and CPU (gpu_count 0, gpu_model ""): the bundled ones, then
    the discovered ones the bundled files do not name."""
    return _kept("types", _read_types)


def _read_types() -> pd.DataFrame:
    types = check_types(_read("instance_types.csv"), "instance_types.csv")
    found = discovered_types()
    if not found.empty:
        known = set(zip(types["cloud"], types["instance_type"], strict=True))
        fresh = found[[(c, t) not in known for c, t in
                       zip(found["cloud"], found["instance_type"], strict=True)]]
        types = pd.concat([types, fresh[TYPE_COLUMNS]], ignore_index=True)
    retired = _read("retirements.csv")[["cloud", "instance_type", "retired"]]
    types = types.merge(retired, on=["cloud", "instance_type"], how="left")
    types["retired"] = pd.to_datetime(types["retired"], utc=True)
    return types


def check_types(types: pd.DataFrame, where: str) -> pd.DataFrame:
    """Instance type rows with gpu_model "" exactly where gpu_count is 0; InvalidInput
    (naming the file, row and field) otherwise."""
    types = types.copy()
    shapes = [bundled_prices.type_shape(count, model, where, i + 2) for i, (count, model)
              in enumerate(zip(types["gpu_count"], types["gpu_model"], strict=True))]
    types["gpu_model"] = [model for _, model in shapes]
    types["gpu_count"] = pd.Series([count for count, _ in shapes], index=types.index,
                                   dtype=int)
    types["gpu_memory_gb"] = pd.to_numeric(types["gpu_memory_gb"], errors="coerce").fillna(0)
    return types


@cache
def instance_types(include_cpu: bool = False) -> pd.DataFrame:
    """cloud, instance_type, gpu_model, gpu_count, gpu_memory_gb, vcpus, memory_gb, and
    `retired`: the UTC day from which the provider no longer rents it (NaT if it does).
    GPU types only, unless `include_cpu` (CPU types: gpu_count 0, gpu_model "")."""
    types = _all_types()
    if not include_cpu:
        types = types[types["gpu_count"] > 0].reset_index(drop=True)
    return types


@cache
def on_demand_prices(include_cpu: bool = False) -> pd.DataFrame:
    """cloud, region, instance_type, usd_per_hour, as_of, source: joined with the types."""
    listed = _read("on_demand_prices.csv")
    return listed.merge(instance_types(include_cpu), on=["cloud", "instance_type"],
                        how="inner")


@cache
def _type_index() -> dict[tuple[str, str], dict]:
    return {
        (row["cloud"], row["instance_type"]): row
        for row in _all_types().to_dict("records")
    }


def lookup(cloud: str, instance_type: str) -> dict | None:
    """The catalog row of an instance type, or None when the catalog does not know it."""
    return _type_index().get((cloud, instance_type))


def types_of(cloud: str) -> list[str]:
    """The instance types of `cloud` the catalog knows (bundled and discovered), sorted."""
    return sorted(t for c, t in _type_index() if c == cloud)


def lookup_any(instance_type: str) -> dict | None:
    """The catalog row of an instance type on whichever cloud has it, or None."""
    return next((row for (_, name), row in _type_index().items() if name == instance_type),
                None)


def require(cloud: str, instance_type: str) -> dict:
    """The catalog row of an instance type; an InvalidInput naming the known ones if absent."""
    row = lookup(cloud, instance_type)
    if row is None:
        known = sorted(t for c, t in _type_index() if c == cloud)
        shown = ", ".join(known[:12]) + (", ..." if len(known) > 12 else "")
        raise InvalidInput(
            f"unknown {cloud} instance type {instance_type!r}: expected a GPU type of the "
            f"catalog ({shown}; the catalog lists every one)"
        )
    return row


@cache
def on_demand_observations(include_cpu: bool = False) -> pd.DataFrame:
    """The catalog's on-demand prices as an observation frame (zone "" = regional price);
    GPU types only unless `include_cpu`."""
    return _kept(f"on-demand-{'all' if include_cpu else 'gpu'}", lambda: _observations(
        on_demand_prices(include_cpu), "", "on_demand", CATALOG_SOURCE))


@cache
def on_demand_history() -> dict[tuple[str, str, str, str], tuple[tuple[int, float], ...]]:
    """`on_demand_observations` as plain rows, for charging placements without pandas:
    per (cloud, region, instance_type, os), each list price as (the epoch second it held
    from, USD/hour), oldest first (file order within a time). Read with the csv module;
    a discovered-types file, when there is one, is read as `discovered_types` reads it."""
    bundled = {(r["cloud"], r["instance_type"]): int(float(r["gpu_count"])) > 0
               for r in bundled_prices.bundled_rows("instance_types.csv")}
    gpu = {key for key, has_gpu in bundled.items() if has_gpu}
    if discovered_path().exists():  # the bundled row of a type wins over a discovered one
        found = discovered_types()
        gpu |= {(c, t) for c, t, n in zip(found["cloud"], found["instance_type"],
                                          found["gpu_count"], strict=True)
                if n > 0 and (c, t) not in bundled}
    out: dict[tuple[str, str, str, str], list[tuple[int, float]]] = {}
    for row in bundled_prices.bundled_rows("on_demand_prices.csv"):
        if (row["cloud"], row["instance_type"]) in gpu:
            key = (row["cloud"], row["region"], row["instance_type"], "linux")
            since = int(bundled_prices.as_of_time(row["as_of"]).timestamp())
            out.setdefault(key, []).append((since, float(row["usd_per_hour"])))
    return {key: tuple(sorted(prices, key=lambda p: p[0])) for key, prices in out.items()}


@cache
def spot_observations(include_cpu: bool = False) -> pd.DataFrame:
    """The bundled snapshot of spot prices (spot_prices.csv) as an observation frame: a
    fallback before any collection, dated by the day it was read or the month it was
    published for (price history where a source was read on many days). The source column
    says where each figure comes from. GPU types only unless `include_cpu`."""
    return _kept(f"spot-{'all' if include_cpu else 'gpu'}",
                 lambda: _spot_observations(include_cpu))


def _spot_observations(include_cpu: bool) -> pd.DataFrame:
    listed = _read("spot_prices.csv").merge(instance_types(include_cpu),
                                            on=["cloud", "instance_type"], how="inner")
    zones = ["" if pd.isna(z) else str(z) for z in listed["zone"]]
    return _observations(listed, zones, "spot", SPOT_SNAPSHOT_SOURCE + ": " + listed["source"])


def price_history(instance_type: str) -> pd.DataFrame:
    """Every bundled price of an instance type (GPU or CPU; on-demand and spot), oldest
    first, as observation rows whose source names the bundled row's own ('catalog 2026.11:
    <where it was read>')."""
    listed = on_demand_prices(include_cpu=True)
    listed = listed[listed["instance_type"] == instance_type]
    spot = _read("spot_prices.csv").merge(instance_types(include_cpu=True),
                                          on=["cloud", "instance_type"], how="inner")
    spot = spot[spot["instance_type"] == instance_type]
    frames = [_observations(listed, "", "on_demand", CATALOG_SOURCE + ": " + listed["source"]),
              _observations(spot, ["" if pd.isna(z) else str(z) for z in spot["zone"]], "spot",
                            CATALOG_SOURCE + ": " + spot["source"])]
    frame = pd.concat([f for f in frames if not f.empty] or frames[:1], ignore_index=True)
    return frame.sort_values("effective_at", kind="stable", ignore_index=True)


def _observations(listed: pd.DataFrame, zone: object, market: str,
                  source: object) -> pd.DataFrame:
    """Bundled prices (with their instance type's columns and an `as_of`: a day or a month)
    as an observation frame."""
    return pd.DataFrame(
        {
            "cloud": listed["cloud"],
            "region": listed["region"],
            "zone": zone,
            "instance_type": listed["instance_type"],
            "market": market,
            "os": "linux",
            "gpu_model": listed["gpu_model"],
            "gpu_count": listed["gpu_count"].astype(int),
            "vcpus": listed["vcpus"].astype(int),
            "memory_gb": listed["memory_gb"].astype(float),
            "usd_per_hour": listed["usd_per_hour"].astype(float),
            "effective_at": as_of_times(listed["as_of"]),
            "source": source,
        }
    )


def as_of_times(as_of: pd.Series) -> pd.Series:
    """`bundled_prices.as_of_time` of each bundled `as_of` (a day, or a month: its first
    day)."""
    text = as_of.astype(str)
    return pd.to_datetime(text.where(text.str.len() > 7, text + "-01"), format="%Y-%m-%d",
                          utc=True)


def retired_mask(frame: pd.DataFrame, at: pd.Timestamp) -> pd.Series:
    """Rows (with cloud and instance_type) whose type the provider had retired by `at`."""
    retired = {key for key, day in _retired_days().items() if day <= at}
    mask = pd.Series(False, index=frame.index)
    if not retired or frame.empty:
        return mask
    # Few types are retired: the rows that may be one are found by name first.
    maybe = frame["instance_type"].isin({name for _, name in retired}).to_numpy()
    if maybe.any():
        mask[maybe] = [key in retired for key in zip(frame["cloud"].to_numpy()[maybe],
                                                     frame["instance_type"].to_numpy()[maybe],
                                                     strict=True)]
    return mask


@cache
def _retired_days() -> dict[tuple[str, str], pd.Timestamp]:
    """(cloud, instance type) -> the UTC day it was retired, for the retired types."""
    types = _all_types()
    gone = types[types["retired"].notna()]
    return dict(zip(zip(gone["cloud"], gone["instance_type"], strict=True), gone["retired"],
                    strict=True))


def gpu_family(gpu: str) -> str:
    """The family of a GPU model as the catalog names its variants: the name before its
    variant's suffix ('A100' of 'A100-80GB', 'H100' of 'H100-MEGA')."""
    return gpu.split("-", 1)[0].upper()
