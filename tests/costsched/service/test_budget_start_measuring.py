"""A start after a stop at a job's own budget prices the rest by the one rule of a measured
speed (local launcher, real subprocesses, a real SQLite store): a job stopped before it
trained long enough to be judged (`measured.MEASURING`) has its steps left priced at its
plan's speed, never at the pace of its first second or two, which its boot and setup
weigh on."""

from __future__ import annotations

import re
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

from costsched.config import BudgetsConfig
from costsched.measured import MEASURING
from costsched.service import jobs as service
from costsched.service.jobs import caps
from tests.cleanup import stop_unless_ended
from tests.costsched.service.test_budget_caps import USD_PER_HOUR, local  # noqa: F401
from tests.costsched.service.test_jobs import TRAIN, wait_for

STEPS = 100_000  # at 0.01 s a step: far longer than the test lets it run
SPEED = 100.0  # as it runs, and as it declares
BUDGET = 19.4  # its plan (1,000 s at $36/h and a start of 15 min, $19.34) and no more
# What the start is given: under what its rest and its start need, so that it is refused
# however little the job spent before its stop (a second or two, as the machine allows).
SHORT = 5.0  # (its rest alone, 1,000 s at $36/h, is $10)


def test_a_start_prices_the_rest_of_a_job_not_judged_yet_at_its_plans_speed(
        tmp_path: Path, local, cli, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    store, launcher = local
    spec = {"name": "early", "steps": STEPS, "throughputs": {"V100": SPEED},
            "run": f"{sys.executable} {TRAIN} --steps {STEPS} --step-seconds 0.01 "
                   "--checkpoint-every 0.2",
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"], "budget": BUDGET},
            "checkpoint": {"interval_minutes": 30, "size_gb": 0.01}}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(spec))
    monkeypatch.chdir(tmp_path)
    [job] = service.launch(store, ["job.yaml"], launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    try:
        def stepped() -> bool:  # its first steps seen: seconds of training, not 10
            service.reconcile(store, launcher, budgets=BudgetsConfig(), watch_seconds=0.01)
            return store.jobs.get(job.id).steps_done > 0

        wait_for(stepped, seconds=60, poll=0.2)
        # a check that charges the whole budget ahead stops it at once
        caps.enforce(store, launcher, BudgetsConfig(), datetime.now(timezone.utc),
                     interval_seconds=2 * BUDGET * 3600 / USD_PER_HOUR)
        assert store.jobs.get(job.id).state == "stopped"
    finally:
        stop_unless_ended(store, launcher, job.id)

    plain = cli("start", str(job.id), "--wait", "0", "--budget", str(SHORT))
    assert plain.exit_code == 2, plain.output
    line = " ".join(plain.output.split())
    assert "at its own" not in line, line  # no pace of its first second
    found = re.search(r"\+ \$([0-9.,]+)\* expected for its ([0-9,]+) steps left \+", line)
    assert found, line
    rest, left = (float(found.group(i).replace(",", "")) for i in (1, 2))
    # at its plan's 100 steps/s (with the preemptions its plan expects on spot)
    assert rest == pytest.approx(left / SPEED * USD_PER_HOUR / 3600, rel=0.1)
    assert f"*: at its plan's speed, as {MEASURING}" in line, line
