"""`plan --explain`'s line of expected hours says what each figure is: the expected hours,
and what they would be were the rate 0 (the work and the start), never '(work alone if
rate is 0)' beside expected hours that are not the work."""

from __future__ import annotations

import re
from datetime import datetime, timezone

from costsched import service
from costsched.jobspec import parse
from costsched.store import PriceStore

AT = datetime(2026, 11, 20, 12, tzinfo=timezone.utc)


def _line(store: PriceStore, spec: dict) -> str:
    result = service.plan(store, parse(spec), at=AT)  # an empty store: the bundled prices
    best = result.ranking("r").iloc[0]
    [line] = [x for x in result.explain(best["offering"], "r")
              if x.startswith("expected hours = ")]
    return line


def test_the_line_names_the_expected_hours_and_the_hours_at_rate_zero(
        store: PriceStore, cloud_launcher: str) -> None:
    line = _line(store, {"name": "r", "model": "ResNet-50 (batch size 64)", "steps": 20_000,
                         "constraints": {"markets": ["spot"]}})
    assert "if rate is 0" not in line, line
    found = re.search(r"work ([\d.,]+) h, .* start ([\d.,]+) h: expected ([\d.,]+) h "
                      r"\(the work and the start, ([\d.,]+) h, if the rate were 0\)$", line)
    assert found, line
    work, start, _, base = (float(v.replace(",", "")) for v in found.groups())
    assert round(work + start, 6) == base, line  # as written

