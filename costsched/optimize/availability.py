"""Preemption rates measured from availability probe logs.

A probe launches spot/preemptible instances and polls them (dispa2020's
`aws/availability/*.out`, `gcp/availability/*.out`). Lines:

    [ts] Created instance X with N GPU(s) of type T in zone Z
    [ts] Instance X running in zone Z
    [ts] Instance X not running in zone Z
    [ts] Instance X creation failed          (or: Instance with N GPU(s) of type T ...)
    [ts] Successfully deleted instance X

An instance's lifetime runs from "Created" to its first "not running" (a preemption) or,
if none, to its last "running" (censored). With exponential lifetimes the maximum
likelihood rate is preemptions / observed instance-hours, counting censored time.
`read_probe_log` is the one parser of this format: the lifetimes here and the probe
intervals the store keeps (`price_collectors.availability`) both come from it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from costsched import clouds
from costsched.catalog import gpu_model_name
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.model import InvalidInput

_LINE = re.compile(r"^\[(?P<ts>[^\]]+)\]\s+(?P<msg>.*)$")
_CREATED = re.compile(
    r"^Created instance (?P<id>\S+) with (?P<n>\d+) GPU\(s\) of type (?P<gpu>\S+) "
    r"in zone (?P<zone>\S+)$"
)
_STATE = re.compile(r"^Instance (?P<id>\S+) (?P<state>running|not running) in zone (?P<zone>\S+)$")
_FAILED = re.compile(r"^Instance (?:with (?P<n>\d+) GPU\(s\) of type (?P<gpu>\S+)|(?P<id>\S+)) "
                     r"creation failed$")

LIFETIME_COLUMNS = ["cloud", "region", "zone", "gpu_model", "gpu_count", "instance",
                    "start", "end", "preempted"]
FAILURE_COLUMNS = ["cloud", "region", "zone", "gpu_model", "gpu_count", "instance", "at"]


@dataclass
class ProbeLog:
    """What one probe log says: each launched instance's life (LIFETIME_COLUMNS) and each
    failed creation (FAILURE_COLUMNS; where the log names no zone or no GPU for it, and
    no other line of the same instance name does, those are None), times as text."""

    path: Path
    lives: list[dict] = field(default_factory=list)
    failures: list[dict] = field(default_factory=list)
    first: str | None = None  # the first and last time the log mentions
    last: str | None = None


def cloud_region(zone: str) -> tuple[str, str]:
    """('aws', 'us-east-1') for 'us-east-1b'; ('gcp', 'us-west1') for 'us-west1-b'; a zone
    whose region does not exist (`costsched.clouds`) is refused."""
    found = clouds.zone_region(zone)
    if found is None:
        shapes = " or ".join(f"{c.name} ({c.zone_example})" for c in clouds.CLOUDS.values()
                             if c.zone_pattern is not None)
        raise InvalidInput(f"zone {zone!r}: expected a zone name of {shapes}")
    problem = clouds.place_problem(*found, zone)
    if problem is not None:
        raise InvalidInput(f"zone {zone!r}: {problem}")
    return found


def _line_place(path: Path, lineno: int, zone: str) -> tuple[str, str]:
    try:
        return cloud_region(zone)
    except InvalidInput as exc:
        raise InvalidInput(f"{path}: line {lineno}: {exc}") from None


def lifetimes(paths: Iterable[str | Path]) -> pd.DataFrame:
    """One row per launched instance: where, which GPUs, start, end and whether it was
    preempted (False = still running when last polled)."""
    rows: list[dict] = []
    for path in paths:
        rows.extend(read_probe_log(Path(path)).lives)
    frame = pd.DataFrame(rows, columns=LIFETIME_COLUMNS)
    frame["start"] = pd.to_datetime(frame["start"], utc=True)
    frame["end"] = pd.to_datetime(frame["end"], utc=True)
    return frame


def read_probe_log(path: Path) -> ProbeLog:
    """Parse one probe log; a file that is not one is an InvalidInput naming it."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot read ({exc.strerror})") from None
    try:
        if b"\0" in data:
            raise UnicodeDecodeError("utf-8", data, 0, 1, "NUL byte")
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"{path}: not a probe log: binary or not UTF-8 text") from None
    log = ProbeLog(path)
    live: dict[str, dict] = {}
    configs: dict[str, tuple[str, str, int]] = {}  # instance name -> zone, GPU, count
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        m = _LINE.match(line)
        if not m:
            raise InvalidInput(f"{path}: line {lineno}: expected '[time] message'")
        ts, msg = m.group("ts"), m.group("msg").strip()
        log.first = log.first or ts
        log.last = ts
        if c := _CREATED.match(msg):
            if c["id"] in live:  # a name reused before we saw the old one go: close it
                log.lives.append(live.pop(c["id"]))
            cloud, region = _line_place(path, lineno, c["zone"])
            gpu, count = gpu_model_name(c["gpu"]), int(c["n"])
            configs.setdefault(c["id"], (c["zone"], gpu, count))
            live[c["id"]] = dict(cloud=cloud, region=region, zone=c["zone"],
                                 gpu_model=gpu, gpu_count=count,
                                 instance=c["id"], start=ts, end=ts, preempted=False)
        elif s := _STATE.match(msg):
            inst = live.get(s["id"])
            if inst is None:  # the poll of an instance that never started names its zone
                failed = log.failures[-1] if log.failures else None
                if failed and failed["instance"] == s["id"] and failed["zone"] is None:
                    failed["zone"] = s["zone"]
                continue
            inst["end"] = ts
            if s["state"] == "not running":
                inst["preempted"] = True
                log.lives.append(live.pop(s["id"]))
        elif f := _FAILED.match(msg):
            log.failures.append(dict(zone=None, instance=f["id"], at=ts,
                                     gpu_model=gpu_model_name(f["gpu"]) if f["gpu"] else None,
                                     gpu_count=int(f["n"]) if f["n"] else None))
        elif not msg.startswith("Successfully deleted"):
            raise InvalidInput(f"{path}: line {lineno}: unrecognised message {msg[:60]!r}")
    if log.last is None:
        raise InvalidInput(f"{path}: not a probe log: no line '[time] Created instance ...'")
    log.lives.extend(live.values())
    for failed in log.failures:  # a probe reuses a name for the same zone and GPUs
        zone, gpu, count = configs.get(failed["instance"], (None, None, None))
        failed["zone"] = failed["zone"] or zone
        if failed["gpu_model"] is None and zone == failed["zone"]:
            failed["gpu_model"], failed["gpu_count"] = gpu, count
        cloud, region = cloud_region(failed["zone"]) if failed["zone"] else (None, None)
        failed["cloud"], failed["region"] = cloud, region
    return log


def preemption_rates(lives: pd.DataFrame,
                     by: tuple[str, ...] = ("cloud", "region", "gpu_model", "gpu_count"),
                     ) -> pd.DataFrame:
    """Per group: instances, preemptions, observed hours and the rate per hour
    (preemptions / hours), with an approximate 95% interval from the variance-stabilised
    Poisson count (a wide interval means few events)."""
    hours = (lives["end"] - lives["start"]).dt.total_seconds() / 3600
    frame = lives.assign(hours=hours, events=lives["preempted"].astype(int))
    grouped = frame.groupby(list(by), as_index=False).agg(
        instances=("instance", "size"), preemptions=("events", "sum"), hours=("hours", "sum")
    )
    k = grouped["preemptions"].to_numpy(dtype=float)
    t = grouped["hours"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        grouped["per_hour"] = np.where(t > 0, k / t, np.nan)
        # Anscombe-style interval on a Poisson count: (sqrt(k + 3/8) -+ 0.98)^2 / t.
        grouped["low_per_hour"] = np.maximum(np.sqrt(k + 3 / 8) - 0.98, 0) ** 2 / t
        grouped["high_per_hour"] = (np.sqrt(k + 3 / 8) + 0.98) ** 2 / t
    return grouped


RATE_KEYS = ("cloud", "region", "gpu_model", "gpu_count")


def merge_rates(*measured: pd.DataFrame | None,
                by: tuple[str, ...] = RATE_KEYS) -> pd.DataFrame | None:
    """Several measurements of preemptions and spot hours per group (frames with `by`,
    preemptions, hours, such as `preemption_rates` gives) as one, counts summed; None
    when there is none."""
    parts = [m[[*by, "preemptions", "hours"]] for m in measured if m is not None and len(m)]
    if not parts:
        return None
    return pd.concat(parts, ignore_index=True).groupby(list(by), as_index=False)[
        ["preemptions", "hours"]].sum()
