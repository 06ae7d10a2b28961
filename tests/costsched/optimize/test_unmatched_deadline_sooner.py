"""A missed deadline's "no plan" offers an offering its filters leave out only where that one
reads sooner than the fastest allowed, as the line writes hours: one that needs as long, as
written, is no way to a sooner deadline and is not offered."""

from __future__ import annotations

import pandas as pd

from costsched.optimize.unmatched_deadline import deadline_missed, faster_left_out


def _ranked(left_out_hours: float) -> pd.DataFrame:
    return pd.DataFrame({
        "offering": ["g spot", "g on-demand"],
        "excluded": ["misses deadline", "market not allowed"],
        "expected_hours": [0.2700, left_out_hours], "expected_cost": [0.02, 0.1],
        "gpu_count": [1, 1], "gpu_model": ["L4"] * 2, "market": ["spot", "on_demand"],
        "throughput_estimated": [False, False]})


def test_an_offering_left_out_that_reads_as_long_is_not_offered() -> None:
    left = faster_left_out(_ranked(0.2694), 5 / 60)
    assert left is not None and not left.meets  # faster, by less than the line shows
    line = deadline_missed("f", 5 / 60, "g spot", 0.02, 0.25, left_out=left)
    assert line.endswith("it would meet a deadline at least 0.27 h from now"), line
    assert "on-demand" not in line


def test_one_that_reads_sooner_is_offered() -> None:
    left = faster_left_out(_ranked(0.1500), 5 / 60)
    line = deadline_missed("f", 5 / 60, "g spot", 0.02, 0.25, left_out=left)
    assert line.endswith("it would meet a deadline at least 0.27 h from now, or one at least "
                         "0.15 h from now with on-demand allowed (g on-demand needs 0.15 h)"), line
