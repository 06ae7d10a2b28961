"""Published spot risk signals: import them from saved documents, list them, and show
what the decision model makes of them (`costsched.optimize.hazard`)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pandas as pd

from costsched.service.stores import StoreLike, using
from costsched.service.values import as_time, choices

# kind -> what its file holds
FILE_KINDS = {
    "advisor": "the Spot Instance Advisor document (spot-advisor-data.json)",
    "placement": "GetSpotPlacementScores answers, each with the InstanceType asked",
    "eviction": "a Resource Graph answer ({\"data\": [...]}) of SpotResources eviction rates",
}


def read_signals(path: str | Path, kind: str, at: datetime | str | None = None
                 ) -> pd.DataFrame:
    """The observations of a saved signal document of `kind` (FILE_KINDS), as of `at`
    (default now: the documents carry no time of their own)."""
    from costsched import file_limits
    from costsched.config import effective
    from price_collectors import azure_eviction, placement_scores, spot_advisor

    choices("kind", [kind], list(FILE_KINDS))
    when = as_time(at, "at")
    file_limits.check(path, file_limits.SIGNALS, effective().files.signals_mb)
    reader = {"advisor": spot_advisor.read_file, "placement": placement_scores.read_file,
              "eviction": azure_eviction.read_file}[kind]
    return reader(Path(path), when)


def import_signals(store: StoreLike, path: str | Path, kind: str,
                   at: datetime | str | None = None) -> tuple[int, int]:
    """Store a saved signal document's observations (all or none): (read, added); one
    already stored (same offering, kind, time and source) is not stored twice."""
    frame = read_signals(path, kind, at)
    return len(frame), add_signals(store, frame)


def add_signals(store: StoreLike, frame: pd.DataFrame) -> int:
    """Store observations read by `read_signals` (all or none): how many were new."""
    with using(store) as opened:
        return opened.signals.add(frame)


def signals(store: StoreLike, at: datetime | str | None = None, *,
            history: bool = False, cloud: str | None = None) -> pd.DataFrame:
    """The newest signal per offering and kind as of `at` (default now), or with `history`
    every stored observation; each with the rate per hour the decision model maps it to."""
    from costsched.model import CLOUDS
    from costsched.optimize.hazard import signal_rate

    if cloud is not None:  # any case ('AWS'); an unknown name is refused, with the choices
        cloud = choices("cloud", [cloud], CLOUDS)[0]
    with using(store) as opened:
        frame = (opened.signals.history(cloud=cloud) if history
                 else opened.signals.latest(as_time(at, "at")))
    if cloud is not None and not history:
        frame = frame[frame["cloud"] == cloud].reset_index(drop=True)
    return frame.assign(prior_per_hour=[signal_rate(k, v) for k, v in
                                        zip(frame["kind"], frame["value"], strict=True)])
