"""A preemption an instance of the local launcher met is a simulation: kept, never counted
as the cloud's (`measured_rates`), and `plan --explain` says so where the rate is
explained, not "nothing observed" beside a preemption costsched saw. A cloud's own
preemption is counted and changes the rate. SQLite store, bundled-free prices."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import yaml

from costsched.model import Offering
from costsched.service import plan
from costsched.store import PriceStore
from tests.costsched.service.test_jobs import offer

NOW = datetime(2026, 3, 2, 12, tzinfo=timezone.utc)
EAST = Offering("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "V100", 1)
SPEC = {"name": "km", "run": "python train.py", "steps": 4000,
        "throughputs": {"V100": 1.0},
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"]}}


def explained(tmp_path: Path, source: str | None) -> tuple[list[str], float]:
    """`plan --explain`'s lines of the plan's choice and its rate, after a preemption
    observed from `source` ('local': the local launcher's; None: none)."""
    store = PriceStore(f"sqlite:///{tmp_path / f'jobs-{source}.sqlite'}")
    try:
        store.ingest(pd.DataFrame([offer("us-east-1a", 1.0, NOW - timedelta(hours=1))]))
        if source is not None:
            store.availability.record(EAST, "preempted", at=NOW - timedelta(minutes=30),
                                      detail="instance i-1", source=source)
        path = tmp_path / "km.yaml"
        path.write_text(yaml.safe_dump(SPEC))
        result = plan(store, path, at=NOW)
        best = str(result.jobs[0].choices["offering"].iloc[0])
        rate = float(result.jobs[0].choices["preemptions_per_hour"].iloc[0])
        return [" ".join(line.split()) for line in result.explain(best)], rate
    finally:
        store.dispose()


def test_a_local_preemption_is_said_not_counted_where_the_rate_is_explained(
        tmp_path: Path) -> None:
    lines, rate = explained(tmp_path, "local")
    text = "\n".join(lines)
    assert ("1 preemption on the local launcher, not counted: a local run is a simulation"
            in text), text  # was: only 'nothing observed'
    assert "zone: nothing observed; theta" not in text, text
    assert "zone: nothing observed on a cloud; theta stays 1" in text, text
    assert "nothing published or observed on a cloud for this offering" in text, text
    lines, alone = explained(tmp_path, None)
    assert rate == alone  # not counted: the rate is the default's


def test_an_offering_with_no_local_preemption_reads_as_before(tmp_path: Path) -> None:
    text = "\n".join(explained(tmp_path, None)[0])
    assert "on the local launcher, not counted" not in text, text
    assert "zone: nothing observed; theta" in text, text
