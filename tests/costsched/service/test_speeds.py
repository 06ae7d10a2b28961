"""A job whose declared throughput is far off what it runs at: its plan is kept at launch,
the reconcile pass says so once (the daemon logs it), `status`, `plan` for the next job of
its model and the report say so with both figures (its file names no model: its measured
speed is not kept as a model's, `test_model_unnamed`). On the local launcher with real
subprocesses."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from costsched.cli import jobs as cli_jobs
from costsched.report import build
from costsched.service import jobs as service
from costsched.service.speeds import plan_notes
from tests.costsched.service.test_jobs import TRAIN, wait_for, world  # noqa: F401
from tests.real_jobs import SETTLE

DECLARED = 3.0  # steps/s; the script makes tens a second (10 ms sleeps)
STEPS = 1500


def spec_file(tmp: Path) -> Path:
    path = tmp / "flagme.yaml"
    path.write_text(yaml.safe_dump({
        "name": "flagme", "throughputs": {"V100": DECLARED}, "steps": STEPS,
        "run": f"{sys.executable} {TRAIN} --steps {STEPS} --step-seconds 0.01 "
               "--checkpoint-every 1",
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
        "checkpoint": {"interval_minutes": 30, "size_gb": 0.1}}))
    return path


def test_a_declared_throughput_far_off_is_flagged_everywhere(world, capsys) -> None:  # noqa: F811
    store, launcher, tmp = world
    [job] = service.launch(store, spec_file(tmp), launcher=launcher, wait_seconds=SETTLE,
                           checkpoint_root=str(tmp / "checkpoints"))
    # What the plan predicted at launch, on the offering it was placed on.
    [plan] = store.jobs.predictions([job.id]).to_dict("records")
    assert (plan["zone"], plan["steps_per_second"]) == ("us-east-1a", DECLARED)
    assert plan["expected_hours"] >= STEPS / DECLARED / 3600
    # Its dollars are its training's, at $1/h: no start (the local launcher boots none).
    assert plan["expected_usd"] == pytest.approx(plan["expected_hours"] * 1.0, rel=0.2)
    assert plan["flagged_at"] is None or str(plan["flagged_at"]) == "NaT"

    # Once it has reported a step, a reconcile pass says so, once.
    said = wait_for(lambda: [line for line in service.reconcile(store, launcher)
                             if "its plan used" in line], seconds=SETTLE)
    assert len(said) == 1 and said[0].startswith(f"job {job.id}: measured ")
    assert f"faster than the {DECLARED:g} its plan used (the job spec's throughputs)" in said[0]
    assert not [line for line in service.reconcile(store, launcher) if "its plan used" in line]
    assert store.jobs.predictions([job.id])["flagged_at"].notna().all()
    # Its file names no model: its name is no model, so its speed is not kept as one.
    assert store.measured_throughputs.rows("flagme").empty

    # status: a line with both figures; --json carries it.
    [shown] = service.status(store, launcher, job.id)
    cli_jobs._print_status([shown], json_out=False)
    text = capsys.readouterr().out
    assert f"job {job.id}: throughput: measured" in text  # the job named once
    cli_jobs._print_status([shown], json_out=True)
    assert "its plan used" in json.loads(capsys.readouterr().out)[0]["throughput_flag"]

    # The next plan of the model hears of it; the declared figure is kept.
    [note] = plan_notes(store, ["flagme"])
    assert note.startswith(f"job {job.id} (flagme): measured ")
    assert "its job file declares is kept: edit its `throughputs:` in " in note

    # Its savings use the speed it measured: it never moved, so its launch choice kept
    # costs what it did (at the declared speed it would have taken STEPS / 3 s).
    wait_for(lambda: (service.reconcile(store, launcher), store.jobs.get(job.id).final)[1],
             seconds=SETTLE)
    report = build(store)
    [row] = report.jobs.to_dict("records")
    assert row["saved_vs_launch_choice_usd"] == pytest.approx(0.0, abs=1e-6)
    assert report.speeds["flagged"].all()
    [estimate] = report.estimates.to_dict("records")
    assert estimate["vs_estimate"] == "under" and estimate["training_hours_ratio"] < 0.67
