"""The hint a start at a job's budget gives (`costsched start JOB --budget USD`) prices the
steps left at the pace the job made once its speed is judged (`measured.MEASURING`: 10 s
of training between its step readings), not at a plan's figure the job has disproved, so
that the amount named finishes the job; where the job made none, or too little to be
judged, the figure is the plan's, marked `*` and said so. A start's hours read as a span,
never a float's exponent. In-memory launcher, SQLite store."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from costsched import own_budget
from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices

HINT = re.compile(r"give it enough: `costsched start fast --budget ([0-9.]+)` \(\$([0-9.]+) "
                  r"spent \+ \$([0-9.]+) expected for its 1,566 steps left at its measured "
                  r"([0-9.]+) steps/s on aws us-east-1a p3\.2xlarge spot \+ ")
RAN = timedelta(seconds=37)  # 434 steps in 37 s: 11.7 steps/s, its plan says 200
FIRST = timedelta(seconds=10)  # its first reading, 100 steps in: 334 steps in 27 s after


def _launched(store: PriceStore, tmp_path: Path, name: str, steps_per_second: float,
              steps: int, budget: float, size_gb: float) -> tuple[FakeLauncher, Any]:
    """The job `name` launched on a fake launcher in us-east-1a's spot at $1/h."""
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({
        "name": name, "throughputs": {"V100": steps_per_second}, "steps": steps,
        "run": "true",
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"], "budget": budget},
        "checkpoint": {"interval_minutes": 30, "size_gb": size_gb}}))
    launcher = FakeLauncher()
    [job] = service.launch(store, [path], launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    return launcher, job


@pytest.fixture()
def stopped(store: PriceStore, tmp_path: Path) -> tuple[FakeLauncher, int, datetime]:
    launcher, job = _launched(store, tmp_path, "fast", 200.0, 2000, 1.0, 0.001)
    began = store.jobs.placement_rows([job.id])[0].start_at
    store.jobs.record_step(job.id, 100, at=began + FIRST)
    store.jobs.record_step(job.id, 434, at=began + RAN)
    service.stop(store, launcher, job.id, at=began + RAN)
    return launcher, job.id, began + RAN + timedelta(seconds=1)


def test_the_hint_prices_the_rest_at_the_jobs_own_pace(store: PriceStore, stopped) -> None:
    launcher, job, at = stopped
    with pytest.raises(InvalidInput) as refused:
        service.start(store, launcher, job, budget=0.03, at=at)
    said = str(refused.value)
    found = HINT.search(said)
    assert found, said
    assert "*" not in said
    amount, spent, rest, pace = (float(found[i]) for i in range(1, 5))
    measured = 334 / (RAN - FIRST).total_seconds()  # between its readings: no setup
    assert pace == pytest.approx(measured, rel=0.02)
    # 1,566 steps at that pace and $1/h: what finishing costs, within the amount named
    # (with the preemptions its plan expects on spot)
    rest_usd = 1566 / measured / 3600 * 1.0
    assert rest == pytest.approx(rest_usd, rel=0.1)
    assert amount >= spent + rest_usd
    assert service.start(store, launcher, job, budget=amount, at=at).state == "running"


def test_a_job_read_once_is_priced_at_its_plan_marked_as_being_measured(
        store: PriceStore, tmp_path: Path) -> None:
    """Its step read once, 2 steps after a second: no pace of its own is judged yet (the
    second or so before its first step was its setup), so not 2 steps/s."""
    from costsched.measured import MEASURING

    launcher, job = _launched(store, tmp_path, "early", 200.0, 1000, 0.5, 0.001)
    began = store.jobs.placement_rows([job.id])[0].start_at
    store.jobs.record_step(job.id, 2, at=began + timedelta(seconds=1))
    service.stop(store, launcher, job.id, at=began + timedelta(seconds=1))
    with pytest.raises(InvalidInput) as refused:
        service.start(store, launcher, job.id, budget=0.01,
                      at=began + timedelta(seconds=2))
    said = str(refused.value)
    assert "at its own" not in said and "steps/s (2 steps in" not in said, said
    assert re.search(r"\+ \$[0-9.]+\* expected for its 998 steps left \+ ", said), said
    assert said.endswith(f"*: at its plan's speed, as {MEASURING}"), said


def test_a_job_that_made_no_step_is_priced_at_its_plan_marked(store: PriceStore,
                                                               tmp_path: Path) -> None:
    launcher, job = _launched(store, tmp_path, "new", 1.0, 3600, 5, 1.0)
    service.stop(store, launcher, job.id)
    with pytest.raises(InvalidInput, match=(
            r"\+ \$[0-9.]+\* expected for its 3,600 steps left \+ .*; \*: at its plan's "
            r"speed, as it has logged no steps of its own yet$")):
        service.start(store, launcher, job.id, budget=0.5)


def test_a_start_reads_as_a_span() -> None:
    assert own_budget.span(2.222e-06) == "0.008 s"
    assert own_budget.span(0.005) == "0.3 min"
    assert own_budget.span(0.2522) == "0.2522 h"
    job = SimpleNamespace(start_hours=2.222e-06, start_said=lambda: (
        "restart 2.222e-06 h: 0 min boot and set-up (checkpoint.restart_minutes in x.yaml)"
        " + 0.008 s to copy the 0.001 GB checkpoint"))
    assert own_budget.start_said(job) == (
        "its start: 0.008 s to get an instance up and the job started = 0 min boot and set-up "
        "(checkpoint.restart_minutes in x.yaml) + 0.008 s to copy the 0.001 GB checkpoint")
