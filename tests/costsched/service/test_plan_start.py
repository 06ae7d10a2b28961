"""A plan's expected cost counts the job's first start once: its boot and set-up and its
warm-up (no checkpoint to copy: a launched job's checkpoint store is its own, empty), at
the offering's price; the deadline counts the same start once; the plan's text and JSON
say it; a launch's budget line states that figure and its start, and a `start` after a
stop counts its restart (the checkpoint's copy too) the same way, in the same words."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
import yaml

from costsched.config import BudgetsConfig
from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.service.jobs.budget_launch import launch_fits
from costsched.service.plan import plan
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher

# The launcher these jobs launch on stands in for a cloud's: its instance boots, and a plan
# counts that start as `launch` there does.
pytestmark = pytest.mark.usefixtures("cloud_launcher")

AT = pd.Timestamp("2026-01-01T00:00:00Z").to_pydatetime()
PRICE = 2.0  # $/h, on-demand: no preemptions, so the run is the work alone
WORK_HOURS = 10.0
START_HOURS = 0.25  # 10 min boot and set-up + 5 min warm-up, the defaults
COPY_HOURS = 8 / 3600  # the 1 GB checkpoint at 1 Gbit/s: a restart's, not a first start's
START_WORDS = ("10 min boot and set-up ([migration] restart_minutes) + 5 min warm-up "
               "([migration] warmup_minutes)")


def _store(db_path: Path, at: datetime) -> PriceStore:
    store = PriceStore(f"sqlite:///{db_path}")
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
        market="on_demand", os="linux", gpu_model="V100", gpu_count=1, vcpus=8,
        memory_gb=61.0, usd_per_hour=PRICE, effective_at=at, source="test")]))
    return store


@pytest.fixture
def priced(db_path: Path) -> PriceStore:
    return _store(db_path, AT)


def _job(tmp_path: Path, budget: float | None = None, deadline: float | None = None) -> Path:
    """10 hours of work on a V100, on-demand in us-east-1; a 1 GB checkpoint."""
    constraints: dict = {"regions": ["us-east-1"], "markets": ["on_demand"],
                         "gpu_models": ["V100"], "gpu_counts": [1]}
    if budget is not None:
        constraints["budget"] = budget
    if deadline is not None:
        constraints["deadline"] = deadline
    path = tmp_path / "boot.yaml"
    path.write_text(yaml.safe_dump({
        "name": "boot", "run": "true", "throughputs": {"V100": 1}, "steps": 36_000,
        "checkpoint": {"size_gb": 1, "interval_minutes": 30}, "constraints": constraints}))
    return path


def test_the_plan_s_expected_cost_is_its_work_and_its_first_start_to_the_cent(
        tmp_path: Path, priced: PriceStore) -> None:
    [p] = plan(priced, [_job(tmp_path)], at=AT).jobs
    best = p.best
    assert best is not None
    assert float(best["work_hours"]) == pytest.approx(WORK_HOURS)
    assert float(best["start_hours"]) == pytest.approx(START_HOURS)
    assert float(best["start_cost"]) == pytest.approx(START_HOURS * PRICE)
    assert round(float(best["expected_cost"]), 2) == 20.50  # $20.00 of work + $0.50
    assert float(best["expected_hours"]) == pytest.approx(WORK_HOURS + START_HOURS)
    # The baseline (on-demand V100s, here the same offering) counts the same start.
    assert p.baseline is not None
    assert p.baseline.cost == pytest.approx(float(best["expected_cost"]))


@pytest.mark.parametrize(("deadline", "meets"), [
    (WORK_HOURS + START_HOURS + 0.001, True),  # the start once, without a copy: it fits
    (WORK_HOURS + START_HOURS - 0.001, False),  # the start not counted would fit
])
def test_the_deadline_counts_the_first_start_once(tmp_path: Path, priced: PriceStore,
                                                  deadline: float, meets: bool) -> None:
    [p] = plan(priced, [_job(tmp_path, deadline=deadline)], at=AT).jobs
    assert (p.best is not None) == meets, p.reason
    if not meets:
        assert "needs 10.25 h (10.00 h to run and 0.25 h to start)" in p.reason


def test_the_plan_says_its_start_in_text_and_json(cli, tmp_path: Path,
                                                  priced: PriceStore) -> None:
    job = _job(tmp_path)
    shown = cli("plan", job, "--at", AT.isoformat())
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.output.split())
    assert ("hours and total $ count its start once, at each offering's $/h: 0.25 h to get an "
            f"instance up and the job started = {START_WORDS}") in text
    out = cli("plan", job, "--at", AT.isoformat(), "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    row = data["rankings"][0]["ranking"][0]
    assert row["zone"] == "us-east-1a"
    assert row["start_hours"] == pytest.approx(START_HOURS)
    assert row["start_cost"] == pytest.approx(START_HOURS * PRICE)
    assert row["expected_cost"] == pytest.approx(WORK_HOURS * PRICE + START_HOURS * PRICE)
    [entry] = data["jobs"]
    assert entry["start_hours"] == pytest.approx(START_HOURS)
    assert entry["start"] == f"0.25 h to get an instance up and the job started = {START_WORDS}"


def test_the_launch_line_states_the_plan_s_figure_and_its_start(
        tmp_path: Path, priced: PriceStore) -> None:
    job = _job(tmp_path, budget=100)
    [p] = plan(priced, [job], at=AT).jobs
    [fit] = launch_fits(priced, [job], BudgetsConfig(), AT)
    assert fit.expected_usd == pytest.approx(float(p.best["expected_cost"]))
    assert fit.start_usd == pytest.approx(float(p.best["start_cost"]))
    assert fit.line() == (
        "job boot: expected $20.50 ($20.00 for 10.00 h of work + $0.50 for 0.25 h to start "
        "it, each at $2.0000/h; its start: 0.25 h to get an "
        f"instance up and the job started = {START_WORDS}), pessimistic $20.50 (preemptions at "
        "the 95% quantile) against $100.00 left of its own budget: fits")


HINT = re.compile(r"give it enough: `costsched start boot --budget ([0-9.]+)` \(\$([0-9.]+) "
                  r"spent \+ \$([0-9.]+)\* expected for its [0-9,]+ steps left \+ \$([0-9.]+) "
                  r"to start it \+ \$([0-9.]+) for the next watch interval"
                  r"(?:; their exact sum rounded up to the cent)?\)"
                  r"; its steps left: \$[0-9.]+\* \([^;]*\)"
                  r"(?:; that amount also holds its rest taking about [0-9]+ s longer than "
                  r"priced(?: \([0-9]+ s charged ahead \+ [0-9]+ s its rounding up adds, "
                  r"less [0-9]+ s of the watch's margins\))?)?; its start: "
                  r"0.2522 h to get an instance up and the job going again "
                  r"from its checkpoint = " + re.escape(START_WORDS)
                  + r" \+ [0-9.]+ min to copy the 1 GB checkpoint")


def test_a_start_after_a_stop_counts_its_restart_once_as_the_plan_counts_a_start(
        tmp_path: Path, db_path: Path) -> None:
    now = datetime.now(timezone.utc)
    store = _store(db_path, now - timedelta(hours=1))
    launcher = FakeLauncher()
    job = _job(tmp_path, budget=100)
    [record] = service.launch(store, [job], launcher=launcher,
                              checkpoint_root=str(tmp_path / "ckpt"))
    service.stop(store, launcher, record.id)
    with pytest.raises(InvalidInput) as refused:
        service.start(store, launcher, record.id, budget=1.0)
    found = HINT.search(str(refused.value))
    assert found, str(refused.value)
    rest, start = float(found[3]), float(found[4])
    # Its steps left at the plan's cost of the work alone, and its restart once: the
    # first start's hours and the checkpoint's copy, at the offering's price.
    places = len(found[4].split(".")[1])  # the line's one precision
    assert rest == round(WORK_HOURS * PRICE, places)
    assert start == round((START_HOURS + COPY_HOURS) * PRICE, places)
