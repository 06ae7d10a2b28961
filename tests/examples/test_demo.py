"""`make demo-local`'s job tells the truth: the throughput it declares is the pace its
command runs at (within the flagging factor), and the restart it declares is a local
process's, so that its plan, its move and its report's savings count the time it runs."""

from __future__ import annotations

import shlex
from pathlib import Path

import yaml

from costsched.measured import DEFAULT_FACTOR

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo"


def test_the_demo_job_declares_the_speed_it_runs_at() -> None:
    spec = yaml.safe_load((DEMO / "train.yaml").read_text())
    args = shlex.split(spec["run"])
    step_seconds = float(args[args.index("--step-seconds") + 1])
    steps = int(args[args.index("--steps") + 1])
    assert steps == spec["steps"]
    # At most one step per sleep; a loaded machine runs a little slower, not 1.5x slower.
    fastest = 1 / step_seconds
    [declared] = spec["throughputs"].values()
    assert fastest / DEFAULT_FACTOR < declared <= fastest
    # A half-minute job: a restart priced in minutes would make every move a loss.
    assert spec["checkpoint"]["restart_minutes"] * 60 < 10
    assert spec["checkpoint"]["interval_minutes"] * 60 <= float(
        args[args.index("--checkpoint-every") + 1])


def test_the_demo_prices_are_stamped_with_the_time_they_are_imported() -> None:
    makefile = (DEMO.parents[1] / "Makefile").read_text()
    target = makefile[makefile.index("demo-local: install"):makefile.index("demo-recorded:")]
    assert "prices import $(LOCAL)/prices-before.csv" in target
    assert "prices import $(LOCAL)/prices-after.csv" in target
    assert "COSTSCHED_MIGRATION_RESTART_MINUTES" in makefile
