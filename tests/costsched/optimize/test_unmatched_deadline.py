"""A deadline no allowed offering meets, said in one line (as `plan` and `launch` print it):
one footnote for every figure that rests on an estimated speed, and every hours figure
(what the fastest needs, its parts, the deadline it would meet, what an offering its
filters leave out needs) at one precision; the deadline itself as the user wrote it."""

from __future__ import annotations

import dataclasses
import re
from datetime import datetime, timezone

import pandas as pd
import pytest

from costsched.jobspec import parse, resolve
from costsched.optimize.planner import plan_job, prepare
from costsched.optimize.unmatched_deadline import deadline_missed, faster_left_out
from costsched.prices import prices_at
from costsched.throughput import ThroughputTable

AT = datetime(2020, 3, 1, tzinfo=timezone.utc)


def _job(deadline: float):  # noqa: ANN202
    spec = parse({"name": "fit", "run": "true", "throughputs": {"V100": 5.0}, "steps": 4000,
                  "constraints": {"gpu_models": ["K80"], "gpu_counts": [1],
                                  "deadline": deadline}})
    return resolve(spec, ThroughputTable(), AT, source="fit.yaml")


@pytest.fixture(scope="module")
def offerings(recorded_store):  # noqa: ANN001, ANN201
    return prepare(prices_at(recorded_store, AT))


def _hours_shown(line: str) -> list[str]:
    """Every hours figure of the line but the deadline as the user wrote it."""
    return re.findall(r"([\d,]+\.\d+)\*? h\b", re.sub(r"deadline of \S+ (h|min)", "", line))


def test_one_footnote_for_the_fastest_and_the_sooner_one_left_out(offerings) -> None:  # noqa: ANN001
    """1xK80 (its speed estimated) misses 0.25 h; 16xK80, left out by its GPU count, is
    sooner (estimated too): one footnote names both estimates and both keys."""
    reason = plan_job(_job(0.25), offerings).reason
    assert "cannot meet its deadline of 0.25 h" in reason, reason
    assert reason.count("(* from") == 1, reason
    assert re.search(r"\(\* from an estimated speed on 1xK80 and an estimated speed on "
                     r"16xK80: `throughputs: \{K80: STEPS_PER_S, \"K80:16\": STEPS_PER_S\}` "
                     r"in fit\.yaml gives the measured figures\)", reason), reason
    assert re.search(r"one at least [\d.]+\* h from now with 16 GPUs allowed", reason), reason


def test_the_hours_of_one_message_read_at_one_precision(offerings) -> None:  # noqa: ANN001
    """What 1xK80 needs takes three decimals to read above the deadline; the V100 its
    filters leave out, which meets it, reads at those too (never 1.424 h beside 0.48 h)."""
    reason = plan_job(_job(0.5), offerings).reason
    assert "this one with V100 allowed" in reason, reason
    shown = _hours_shown(reason)
    assert len(shown) >= 5 and len({len(s.partition(".")[2]) for s in shown}) == 1, reason
    assert reason.count("(* from") == 1, reason


def test_the_footnote_follows_the_first_marked_figure() -> None:
    """The fastest on a given speed, the one left out on an estimated one: the footnote
    follows the figure it is for, once."""
    ranked = pd.DataFrame({
        "offering": ["a 1", "b 8"], "excluded": ["misses deadline", "gpu_count not allowed"],
        "expected_hours": [9.0, 1.25], "expected_cost": [9.0, 8.0], "gpu_count": [1, 8],
        "gpu_model": ["V100"] * 2, "market": ["on_demand"] * 2,
        "throughput_estimated": [False, True]})
    left = faster_left_out(ranked, 0.9)
    assert left is not None and left.mark == ""  # (no job: no estimate said)
    line = deadline_missed("j", 0.9, "a 1", 8.75, 0.25, ("", " (* from X)"),
                           left_out=dataclasses.replace(left, mark="*"))
    assert line.count("(* from X)") == 1
    assert line.endswith("needs 9.00 h (8.75 h to run and 0.25 h to start); it would meet a "
                         "deadline at least 9.00 h from now, or one at least 1.25* h from now "
                         "with 8 GPUs allowed (b 8 needs 1.25* h (* from X))"), line
