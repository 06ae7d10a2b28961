"""Import spot availability into interval frames (`SpotAvailabilityStore.add` stores them).

Formats, told apart by suffix and content:
- spot-trace JSON (`{"metadata": {"gap_seconds": G}, "data": [n0, n1, ...]}`): tick i
  covers [i*G, (i+1)*G) seconds from the trace's start, n > 0 meaning available (under a
  folder named `availability`) or running (under `preemption`). The file is named
  `<zone>_<gpu>_<count>.json` (`us-east-1a_v100_1.json`: AWS us-east-1a, 1xV100, so
  p3.2xlarge); the trace starts at midnight UTC of the day its folder names
  (`aws-02-15-2023`), unless a start time is given. Consecutive ticks of one state become
  one interval.
- probe logs (`*.out`, `costsched.optimize.availability.read_probe_log`): each instance is
  available from its creation to its preemption or last poll; a preemption and a failed
  creation are unavailable until the probe's next attempt on the same zone and GPUs.
  A failure whose zone or GPUs the log does not name is not stored.
A file is the unit of validity: a bad file is one error line naming it, and the other
files of the same call are imported.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from costsched import catalog, file_limits
from costsched.model import InvalidInput, utc
from costsched.optimize.availability import cloud_region, read_probe_log
from costsched.store.spot_availability import COLUMNS
from price_collectors import recorded

PROBE_SUFFIX = ".out"
TRACE_KINDS = ("availability", "preemption")
_TRACE_NAME = re.compile(r"^(?P<zone>[a-z0-9-]+)_(?P<gpu>[a-z0-9-]+)_(?P<n>\d+)\.json$",
                         re.IGNORECASE)
_START_FOLDER = re.compile(r"^[a-z]+-(?P<m>\d{2})-(?P<d>\d{2})-(?P<y>\d{4})$")
_SNIFF_BYTES = 4096
_ONE_SECOND = pd.Timedelta(seconds=1)


@dataclass
class ParsedAvailability:
    """What reading availability files gave: interval frames, per file, and errors."""

    frames: list[pd.DataFrame] = field(default_factory=list)
    files: list[tuple[Path, int]] = field(default_factory=list)  # file, intervals read
    errors: list[str] = field(default_factory=list)

    def intervals(self) -> pd.DataFrame:
        if not self.frames:
            return pd.DataFrame(columns=COLUMNS)
        return pd.concat(self.frames, ignore_index=True)


def is_availability_file(path: Path) -> bool:
    """A probe log (`*.out`) or a spot trace (JSON named like one or opening with its
    `metadata`/`gap_seconds`)."""
    if path.suffix == PROBE_SUFFIX:
        return True
    if path.suffix != ".json":
        return False
    if _TRACE_NAME.match(path.name):
        return True
    try:
        with path.open("rb") as fh:
            head = fh.read(_SNIFF_BYTES)
    except OSError:
        return False
    return b'"gap_seconds"' in head or head.lstrip().startswith(b'{"metadata"')


def split(paths: Iterable[str | Path]) -> tuple[list[Path], list[Path]]:
    """(availability files, the other paths) under `paths`: directories are searched
    recursively (other files in them count when they are price logs); the other paths
    (price logs, and paths that are neither, for their importer to report) keep their
    order."""
    found: list[Path] = []
    others: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for file in sorted(p for p in path.rglob("*") if p.is_file()):
                if is_availability_file(file):
                    found.append(file)
                elif file.suffix in recorded.SUFFIXES:
                    others.append(file)
            continue
        (found if path.is_file() and is_availability_file(path) else others).append(path)
    return found, others


def read_paths(files: Iterable[Path], *, start: datetime | None = None,
               progress: Callable[[Path], None] | None = None,
               limit_mb: float | None = None) -> ParsedAvailability:
    """Parse every availability file; a bad file becomes an error, never an exception.
    `start`: the start of spot traces whose folder names no day. A file over `limit_mb`
    (default `file_limits.IMPORT`'s) is refused before it is read."""
    result = ParsedAvailability()
    for path in files:
        try:
            file_limits.check(path, file_limits.IMPORT, limit_mb)
            frame = read_file(path, start=start)
        except InvalidInput as exc:
            message = str(exc)
            result.errors.append(message if message.startswith(str(path))
                                 else f"{path}: {message}")
        except OSError as exc:
            result.errors.append(f"{path}: cannot read: {exc.strerror or exc}")
        else:
            result.frames.append(frame)
            result.files.append((path, len(frame)))
        if progress:
            progress(path)
    return result


def read_file(path: Path, *, start: datetime | None = None) -> pd.DataFrame:
    """The intervals of one availability file (a probe log or a spot trace)."""
    if path.suffix == PROBE_SUFFIX:
        return read_probe_intervals(path)
    return read_spot_trace(path, start=start)


# --- spot traces ----------------------------------------------------------------------


def read_spot_trace(path: Path, *, start: datetime | None = None) -> pd.DataFrame:
    """A spot trace as run-length encoded intervals."""
    name = _TRACE_NAME.match(path.name)
    if name is None:
        raise InvalidInput(f"{path}: trace file name: expected <zone>_<gpu>_<count>.json, "
                           "such as us-east-1a_v100_1.json")
    kind = _trace_kind(path)
    begin = pd.Timestamp(utc(start)) if start is not None else _folder_start(path)
    try:
        cloud, region = cloud_region(name["zone"])
    except InvalidInput as exc:
        raise InvalidInput(f"{path}: trace file name: {exc}") from None
    gpu, count = catalog.gpu_model_name(name["gpu"]), int(name["n"])
    gap, ticks = _trace_ticks(path)
    up = ticks > 0
    edges = np.flatnonzero(up[1:] != up[:-1]) + 1
    first = np.concatenate([[0], edges])
    last = np.concatenate([edges, [len(up)]])
    step = pd.Timedelta(seconds=gap)
    return pd.DataFrame({
        "cloud": cloud, "region": region, "zone": name["zone"],
        "instance_type": instance_type_for(cloud, gpu, count),
        "gpu_model": gpu, "gpu_count": count,
        "start": begin + first * step, "end": begin + last * step,
        "available": up[first], "kind": kind, "source": _trace_source(path, kind),
    })[COLUMNS]


def _trace_ticks(path: Path) -> tuple[float, np.ndarray]:
    try:
        doc = json.loads(path.read_bytes())
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise InvalidInput(f"{path}: not a spot trace: expected JSON "
                           '{"metadata": {"gap_seconds": G}, "data": [...]}') from None
    if not isinstance(doc, dict) or not isinstance(doc.get("metadata"), dict) \
            or not isinstance(doc.get("data"), list):
        raise InvalidInput(f"{path}: not a spot trace: expected JSON "
                           '{"metadata": {"gap_seconds": G}, "data": [...]}')
    gap = doc["metadata"].get("gap_seconds")
    if isinstance(gap, bool) or not isinstance(gap, (int, float)) or not 0 < gap < 1e7:
        raise InvalidInput(f"{path}: metadata.gap_seconds {gap!r}: expected a positive "
                           "number of seconds")
    data = doc["data"]
    if not data:
        raise InvalidInput(f"{path}: data: expected at least one tick")
    for i, n in enumerate(data):
        if isinstance(n, bool) or not isinstance(n, (int, float)) or not n >= 0 \
                or n == float("inf"):
            raise InvalidInput(f"{path}: data[{i}] {n!r}: expected a count >= 0")
    return float(gap), np.asarray(data, dtype=float)


def _trace_kind(path: Path) -> str:
    for folder in reversed(path.parent.parts):
        if folder in TRACE_KINDS:
            return folder
    raise InvalidInput(f"{path}: trace kind unknown: expected the file under a folder "
                       f"named {' or '.join(TRACE_KINDS)}")


def _folder_start(path: Path) -> pd.Timestamp:
    for folder in reversed(path.parent.parts):
        if m := _START_FOLDER.match(folder):
            try:
                return pd.Timestamp(int(m["y"]), int(m["m"]), int(m["d"]), tz="UTC")
            except ValueError:
                raise InvalidInput(f"{path}: folder {folder!r}: not a date (expected "
                                   "<cloud>-MM-DD-YYYY)") from None
    raise InvalidInput(f"{path}: trace start unknown: expected a folder named "
                       "<cloud>-MM-DD-YYYY (such as aws-02-15-2023) or a start time")


def _trace_source(path: Path, kind: str) -> str:
    """The trace's path from its kind folder: the same wherever the traces are kept."""
    parts = path.parts
    at = len(parts) - 1 - parts[::-1].index(kind)
    return "/".join(parts[at:])[-256:]


# --- probe logs -----------------------------------------------------------------------


def read_probe_intervals(path: Path) -> pd.DataFrame:
    """A probe log's instance lives and failed creations as `probe` intervals."""
    log = read_probe_log(path)
    key = ["cloud", "region", "zone", "gpu_model", "gpu_count"]
    lives = pd.DataFrame(log.lives, columns=[*key, "start", "end", "preempted"])
    fails = pd.DataFrame([f for f in log.failures
                          if f["zone"] is not None and f["gpu_model"] is not None],
                         columns=[*key, "at"])
    lives["start"], lives["end"] = _times(path, lives["start"]), _times(path, lives["end"])
    fails["at"] = _times(path, fails["at"])
    last = _times(path, pd.Series([log.last]))[0]
    attempts = pd.concat([lives[[*key, "start"]].rename(columns={"start": "at"}),
                          fails[[*key, "at"]]], ignore_index=True)
    lives_of = dict(tuple(lives.groupby(key, sort=False)))
    fails_of = dict(tuple(fails.groupby(key, sort=False)))
    rows: list[dict] = []
    for offering, tried in attempts.groupby(key, sort=False):
        times = sorted(tried["at"])
        where = dict(zip(key, offering, strict=True))

        def down_until(t: pd.Timestamp, times: list = times) -> pd.Timestamp:
            i = bisect.bisect_right(times, t)
            return max(times[i] if i < len(times) else last, t + _ONE_SECOND)

        for life in lives_of.get(offering, lives.iloc[:0]).itertuples():
            end = max(life.end, life.start + _ONE_SECOND)
            rows.append(where | {"start": life.start, "end": end, "available": True})
            if life.preempted:
                rows.append(where | {"start": end, "end": down_until(end),
                                     "available": False})
        for at in fails_of.get(offering, fails.iloc[:0])["at"]:
            rows.append(where | {"start": at, "end": down_until(at), "available": False})
    if not rows:
        raise InvalidInput(f"{path}: no instance or failed creation with a zone and GPUs")
    frame = pd.DataFrame(rows)
    frame["instance_type"] = [instance_type_for(c, g, n) for c, g, n in zip(
        frame["cloud"], frame["gpu_model"], frame["gpu_count"], strict=True)]
    frame["kind"] = "probe"
    frame["source"] = "/".join(path.parts[-3:])[-256:]
    return frame.sort_values(["zone", "instance_type", "start"], ignore_index=True)[COLUMNS]


def _times(path: Path, values: pd.Series) -> pd.Series:
    try:
        return pd.to_datetime(values, utc=True, format="ISO8601")
    except (ValueError, TypeError):
        raise InvalidInput(f"{path}: a time is not ISO 8601 (such as "
                           "2020-03-15T10:07:33.000Z)") from None


def instance_type_for(cloud: str, gpu_model: str, gpu_count: int) -> str:
    """The catalog's first instance type of `cloud` with `gpu_count` x `gpu_model`."""
    found = _types_by_gpus().get((cloud, gpu_model, int(gpu_count)))
    if found is None:
        raise InvalidInput(f"{gpu_count}x{gpu_model} on {cloud}: no such instance type in "
                           "the catalog (`costsched catalog` lists them)")
    return found


@cache
def _types_by_gpus() -> dict[tuple[str, str, int], str]:
    types = catalog.instance_types().drop_duplicates(["cloud", "gpu_model", "gpu_count"])
    return {(c, g, int(n)): t for c, g, n, t in zip(
        types["cloud"], types["gpu_model"], types["gpu_count"], types["instance_type"],
        strict=True)}
