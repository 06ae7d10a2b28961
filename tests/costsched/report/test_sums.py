"""The report's sums and durations on plain rows agree to the last bit with the frames'
(`report.sums`): a group's sum, a column's sum and a duration's seconds. (A figure is
rounded half up, `costsched.amounts.half_up`, never as an array rounds it.)"""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta, timezone

import pandas as pd

from costsched.report.sums import column_sum, group_sum, group_sums, seconds


def _figures(rng: random.Random, n: int) -> list[float]:
    out = []
    for _ in range(n):
        kind = rng.random()
        out.append(math.nan if kind < 0.1 else rng.uniform(0, 1e-3) if kind < 0.4
                   else rng.uniform(0, 5000) * 10 ** rng.randint(-4, 2))
    return out


def test_a_groups_sum_is_the_frames_to_the_last_bit() -> None:
    rng = random.Random(7)
    for n in (1, 2, 7, 8, 9, 17, 130, 300):
        values = _figures(rng, n)
        keys = [rng.randint(0, 3) for _ in values]
        frame = pd.DataFrame({"key": keys, "value": values})
        expected = frame.groupby("key")["value"].sum()
        wanted = frame.groupby("key")["value"].sum(min_count=1)
        for key in expected.index:
            mine = [v for k, v in zip(keys, values, strict=True) if k == key]
            assert group_sum(mine) == expected[key]
            found = group_sum(mine, nan_when_none=True)
            assert found == wanted[key] or (math.isnan(found) and math.isnan(wanted[key]))


def test_group_sums_are_the_frames_in_each_of_their_ways_to_the_last_bit() -> None:
    """Rows in their groups' order or not, with NaN or without, groups sorted or in order
    of appearance, one column or two together: a frame sums each group its own way."""
    rng = random.Random(13)
    for trial in range(120):
        n = rng.randint(1, 300)
        keys = sorted(rng.randint(0, 5) for _ in range(n)) if trial % 2 else [
            rng.randint(0, 5) for _ in range(n)]
        first = [rng.uniform(0, 10) * 10 ** rng.randint(-3, 3) for _ in range(n)]
        second = _figures(rng, n) if trial % 3 == 0 else [rng.uniform(0, 7) for _ in range(n)]
        frame = pd.DataFrame({"key": keys, "a": first, "b": second})
        for sort in (True, False):
            expected = frame.groupby("key", sort=sort)[["a", "b"]].sum()
            found = group_sums(keys, first, second, sort=sort)
            assert list(found) == expected.index.tolist()
            assert [v for sums in found.values() for v in sums] == [
                v for row in expected.itertuples(index=False) for v in row]
            alone = frame.groupby("key", sort=sort)["a"].sum()
            assert [v[0] for v in group_sums(keys, first, sort=sort).values()] == \
                alone.tolist()


def test_a_columns_sum_is_the_frames_to_the_last_bit() -> None:
    rng = random.Random(11)
    for n in (0, 1, 5, 8, 9, 16, 100, 129, 1000):
        values = _figures(rng, n)
        assert column_sum(values) == pd.Series(values, dtype=float).sum()
        found = column_sum(values, nan_when_none=True)
        expected = pd.Series(values, dtype=float).sum(min_count=1)
        assert found == expected or (math.isnan(found) and math.isnan(expected))


def test_a_durations_seconds_are_the_frames() -> None:
    rng = random.Random(3)
    start = datetime(2024, 6, 1, 20, 0, tzinfo=timezone.utc)
    spans = [timedelta(seconds=rng.randint(-10**6, 10**7), microseconds=rng.randint(0, 999_999))
             for _ in range(2000)]
    ends = [start + s for s in spans]
    expected = (pd.Series(ends) - pd.Timestamp(start)).dt.total_seconds().tolist()
    assert [seconds(e - start) for e in ends] == expected
