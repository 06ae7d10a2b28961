from __future__ import annotations

from datetime import datetime, timezone

import pytest

from launchers.cloud_times import transition_time, utc


@pytest.mark.parametrize(("reason", "when"), [
    ("User initiated (2026-11-29 10:04:31 GMT)", datetime(2026, 11, 29, 10, 4, 31)),
    ("Service initiated (2026-01-02 03:04:05 GMT)", datetime(2026, 1, 2, 3, 4, 5)),
    ("User initiated (2026-11-29 10:04:31 UTC)", datetime(2026, 11, 29, 10, 4, 31)),
    ("Server.SpotInstanceTermination: Spot instance termination", None),
    ("", None), (None, None), ("User initiated (2026-11-29 10:04:31)", None),
])
def test_transition_time_reads_ec2s_reason(reason: str | None, when: datetime | None) -> None:
    expected = when.replace(tzinfo=timezone.utc) if when else None
    assert transition_time(reason) == expected


def test_utc_refuses_a_time_of_unknown_zone() -> None:
    assert utc("2026-11-29T10:00:00") is None
    assert utc("2026-11-29T10:00:00Z") == datetime(2026, 11, 29, 10, tzinfo=timezone.utc)
