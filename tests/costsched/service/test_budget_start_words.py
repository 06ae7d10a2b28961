"""A start refused at a job's own budget says each figure as it is: the cost of its rest
priced at the speed it measured on that GPU is not marked as an estimate (its plan's
figure there was one), and a budget it has already spent past is said passed by the
amount over it, never as a negative amount left. In-memory launcher, SQLite store."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
import yaml

from costsched.model import InvalidInput
from costsched.own_budget import OwnBudget
from costsched.service import jobs as service
from costsched.service.jobs.decider import BudgetShort
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher


def _ran_on_an_estimated_gpu(store: PriceStore, tmp_path: Path):  # noqa: ANN202
    """A job whose plan's speed on the A10G it ran on is an estimate (its file gives the
    V100's), measured there over 27 s, then stopped."""
    began = datetime.now(timezone.utc) - timedelta(minutes=5)
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="g5.xlarge",
        market="spot", os="linux", gpu_model="A10G", gpu_count=1, vcpus=4, memory_gb=16.0,
        usd_per_hour=1.0, effective_at=began - timedelta(hours=1), source="test")]))
    path = tmp_path / "est.yaml"
    path.write_text(yaml.safe_dump({
        "name": "est", "throughputs": {"V100": 200.0}, "steps": 20000, "run": "true",
        "constraints": {"regions": ["us-east-1"], "gpu_models": ["A10G"], "budget": 5.0},
        "checkpoint": {"interval_minutes": 30, "size_gb": 0.001}}))
    launcher = FakeLauncher()
    [job] = service.launch(store, [path], launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    began = store.jobs.placement_rows([job.id])[0].start_at
    store.jobs.record_step(job.id, 100, at=began + timedelta(seconds=10))
    store.jobs.record_step(job.id, 434, at=began + timedelta(seconds=37))
    service.stop(store, launcher, job.id, at=began + timedelta(seconds=37))
    return launcher, job.id, began


def test_a_start_priced_at_its_measured_speed_marks_no_estimate(
        store: PriceStore, tmp_path: Path) -> None:
    launcher, job_id, began = _ran_on_an_estimated_gpu(store, tmp_path)
    with pytest.raises(InvalidInput) as refused:
        service.start(store, launcher, job_id, budget=0.02, at=began + timedelta(seconds=38))
    said = str(refused.value)
    assert "at its measured" in said, said  # its rest priced at the speed it measured there
    assert "*" not in said and "estimated" not in said, said


def test_a_start_past_the_budget_it_gives_says_it_is_passed_not_a_negative_left(
        store: PriceStore, tmp_path: Path) -> None:
    launcher, job_id, began = _ran_on_an_estimated_gpu(store, tmp_path)
    with pytest.raises(InvalidInput) as refused:  # less than it spent (about a cent)
        service.start(store, launcher, job_id, budget=0.001, at=began + timedelta(seconds=38))
    said = str(refused.value)
    assert "-$" not in said and " left of its budget" not in said, said
    found = re.search(r"its budget of \$(0\.0010) is already passed by \$([\d.]+) "
                      r"\(\$([\d.]+) spent\)", said)
    assert found, said
    budget, over, spent = (float(found[i]) for i in (1, 2, 3))
    assert budget + over == pytest.approx(spent)  # as written


def test_the_words_of_a_budget_spent_past() -> None:
    short = BudgetShort("j", OwnBudget(1.0, 1.15), 500, "aws us-east-1a g5.xlarge spot",
                        0.3, 1.0)
    assert short.why == (
        "its 500 steps left and its start are expected to cost $0.30 on the cheapest "
        "offering it allows, aws us-east-1a g5.xlarge spot, and its budget of $1.00 is "
        "already passed by $0.15 ($1.15 spent)")
    within = BudgetShort("j", OwnBudget(1.0, 0.85), 500, "x", 0.3, 1.0)
    assert "more than the $0.15 left of its budget of $1.00 ($0.85 spent)" in within.why
