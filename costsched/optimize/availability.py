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
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from costsched import clouds
from costsched.catalog import gpu_model_name
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


def cloud_region(zone: str) -> tuple[str, str]:
    """('aws', 'us-east-1') for 'us-east-1b'; ('gcp', 'us-west1') for 'us-west1-b'."""
    found = clouds.zone_region(zone)
    if found is None:
        shapes = " or ".join(f"{c.name} ({c.zone_example})" for c in clouds.CLOUDS.values()
                             if c.zone_pattern is not None)
        raise InvalidInput(f"zone {zone!r}: expected a zone name of {shapes}")
    return found


def lifetimes(paths: Iterable[str | Path]) -> pd.DataFrame:
    """One row per launched instance: where, which GPUs, start, end and whether it was
    preempted (False = still running when last polled)."""
    rows: list[dict] = []
    for path in paths:
        rows.extend(_file_lifetimes(Path(path)))
    frame = pd.DataFrame(rows, columns=LIFETIME_COLUMNS)
    frame["start"] = pd.to_datetime(frame["start"], utc=True)
    frame["end"] = pd.to_datetime(frame["end"], utc=True)
    return frame


def _file_lifetimes(path: Path) -> list[dict]:
    live: dict[str, dict] = {}
    done: list[dict] = []
    try:
        text = path.read_text()
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot read ({exc.strerror})") from None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        m = _LINE.match(line)
        if not m:
            raise InvalidInput(f"{path}: line {lineno}: expected '[time] message'")
        ts, msg = m.group("ts"), m.group("msg").strip()
        if c := _CREATED.match(msg):
            if c["id"] in live:  # a name reused before we saw the old one go: close it
                done.append(live.pop(c["id"]))
            cloud, region = cloud_region(c["zone"])
            live[c["id"]] = dict(cloud=cloud, region=region, zone=c["zone"],
                                 gpu_model=gpu_model_name(c["gpu"]), gpu_count=int(c["n"]),
                                 instance=c["id"], start=ts, end=ts, preempted=False)
        elif s := _STATE.match(msg):
            inst = live.get(s["id"])
            if inst is None:  # a probe of an instance that never started
                continue
            inst["end"] = ts
            if s["state"] == "not running":
                inst["preempted"] = True
                done.append(live.pop(s["id"]))
        elif not (_FAILED.match(msg) or msg.startswith("Successfully deleted")):
            raise InvalidInput(f"{path}: line {lineno}: unrecognised message {msg[:60]!r}")
    return done + list(live.values())


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
