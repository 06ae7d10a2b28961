"""Preemption rates measured from availability probe logs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from costsched import clouds
from costsched.model import InvalidInput
from costsched.optimize.availability import cloud_region, lifetimes, preemption_rates

LOG = """\
[2020-03-15T10:00:00.000Z] Created instance i-1 with 1 GPU(s) of type k80 in zone us-east-1b
[2020-03-15T10:00:10.000Z] Created instance i-2 with 8 GPU(s) of type v100 in zone us-east-1c
[2020-03-15T10:01:00.000Z] Instance with 8 GPU(s) of type k80 creation failed
[2020-03-15T11:00:00.000Z] Instance i-1 running in zone us-east-1b
[2020-03-15T11:00:01.000Z] Instance i-2 running in zone us-east-1c
[2020-03-15T12:00:00.000Z] Instance i-1 not running in zone us-east-1b
[2020-03-15T12:00:01.000Z] Successfully deleted instance i-1
[2020-03-15T13:00:01.000Z] Instance i-2 running in zone us-east-1c
[2020-03-15T13:30:00.000Z] Created instance i-1 with 1 GPU(s) of type k80 in zone us-east-1b
[2020-03-15T14:30:00.000Z] Instance i-1 running in zone us-east-1b
"""


def test_lifetimes_and_rates_of_a_small_log(tmp_path: Path) -> None:
    path = tmp_path / "probe.out"
    path.write_text(LOG)
    lives = lifetimes([path])
    assert len(lives) == 3  # i-1 twice (a reused name), i-2 once
    first = lives.iloc[0]
    assert (first["gpu_model"], first["gpu_count"], first["preempted"]) == ("K80", 1, True)
    assert first["end"] - first["start"] == pd.Timedelta(hours=2)
    rates = preemption_rates(lives, by=("cloud", "gpu_model"))
    k80 = rates[rates["gpu_model"] == "K80"].iloc[0]
    assert (k80["preemptions"], k80["hours"]) == (1, pytest.approx(3.0))
    assert k80["per_hour"] == pytest.approx(1 / 3)
    v100 = rates[rates["gpu_model"] == "V100"].iloc[0]
    assert (v100["preemptions"], v100["per_hour"]) == (0, 0.0)
    assert v100["high_per_hour"] > 0  # no events still leaves an upper bound


def test_recorded_logs_give_the_stated_defaults(dispa: Path) -> None:
    for cloud in ("aws", "gcp"):
        lives = lifetimes(sorted((dispa / cloud / "availability").glob("*.out")))
        overall = preemption_rates(lives, by=("cloud",)).iloc[0]
        default = clouds.default_preemption(cloud)
        assert overall["per_hour"] == pytest.approx(default.per_hour, rel=1e-3)
        assert f"{int(overall['preemptions'])} preemptions" in default.source
    aws = preemption_rates(lifetimes((dispa / "aws" / "availability").glob("*.out")))
    k80 = aws[(aws["gpu_model"] == "K80") & (aws["gpu_count"] == 1)].iloc[0]
    v100 = aws[(aws["gpu_model"] == "V100") & (aws["gpu_count"] == 1)].iloc[0]
    assert k80["per_hour"] > v100["per_hour"]  # the recorded K80s were preempted, V100s not


def test_bad_lines_are_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.out"
    path.write_text(LOG + "garbage\n")
    with pytest.raises(InvalidInput, match=r"bad.out: line 11"):
        lifetimes([path])


def test_zones_tell_the_cloud() -> None:
    assert cloud_region("us-east-1b") == ("aws", "us-east-1")
    assert cloud_region("us-west1-b") == ("gcp", "us-west1")
    with pytest.raises(InvalidInput):
        cloud_region("moon-1")
