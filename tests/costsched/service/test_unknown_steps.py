"""A job that reports no step (no progress file) is never told a step or a loss costsched
does not know: a recovery after a checkpoint names its version, not a step 0 'no checkpoint
yet: no step lost'; one with no checkpoint says what it did is lost, by how much not known;
its progress reads 'no step yet' after the recovery as before it, never '0%'; one that
publishes nothing is told so while it runs. Real local-launcher jobs, preempted without
notice."""

from __future__ import annotations

import sys

import yaml

from costsched.cli import jobs as cli_jobs
from costsched.cli.status_lines import problems
from costsched.service import jobs as service
from costsched.service.jobs.steps import _newest_checkpoint
from costsched.service.views import status_document
from tests.costsched.service.job_scripts import PREAMBLE
from tests.costsched.service.test_jobs import wait_for, world, write_spec  # noqa: F401

# Saves `epoch_1.npz` (a name whose number is an epoch, not a step) with an empty commit
# marker, reports no step, and trains on; run again, says what it resumed from.
SAVES = PREAMBLE + """\
if (saved / "epoch_1.npz").exists():
    print("resumed from epoch 1", flush=True)
else:
    (saved / "epoch_1.npz.tmp").write_bytes(b"weights")
    os.replace(saved / "epoch_1.npz.tmp", saved / "epoch_1.npz")
    (saved / "COSTSCHED_COMMIT").touch()
while True:
    time.sleep(0.1)
"""
# Reports no step and writes no checkpoint (it saves elsewhere, as a task written for
# another tool may): it runs until it is lost.
ELSEWHERE = PREAMBLE + """\
print("training", flush=True)
while True:
    time.sleep(0.1)
"""


def _launch(store, launcher, tmp, script):  # noqa: ANN001, ANN202
    [job] = service.launch(store, write_spec(tmp, run=f"{sys.executable} {script}"),
                           launcher=launcher, wait_seconds=20,
                           checkpoint_root=str(tmp / "checkpoints"))
    return job, str(store.jobs.placements(job.id)["instance"].iloc[-1])


def _progress(store, launcher, job_id: int) -> str:  # noqa: ANN001
    [s] = service.status(store, launcher, job_id, reconcile_first=False)
    return cli_jobs._progress(s)


def test_a_recovery_of_a_job_that_reports_no_step_names_its_checkpoint(world) -> None:  # noqa: F811
    store, launcher, tmp = world
    script = tmp / "saves.py"
    script.write_text(SAVES)
    job, first = _launch(store, launcher, tmp, script)
    uri = store.jobs.get(job.id).checkpoint_location
    wait_for(lambda: _newest_checkpoint(uri) == 1)
    wait_for(lambda: launcher.status(first).state == "running")
    assert launcher.status(first).checkpoint_step is None  # not the step it started from
    assert _progress(store, launcher, job.id) == "no step yet"
    launcher.preempt(first)
    wait_for(lambda: launcher.status(first).state == "preempted")
    lines = service.reconcile(store, launcher)
    said = ("resumes from its newest checkpoint (version 1; its step is not known: the job "
            "reports no step, see docs/checkpoints.md#a-job-that-reports-no-step)")
    assert any(line.endswith(said) for line in lines), lines
    assert not any("no step lost" in line or "no checkpoint yet" in line for line in lines)
    [after] = service.status(store, launcher, job.id, reconcile_first=False)
    [doc] = status_document([after])
    assert [r["said"] for r in doc["recovered"]] == [
        f"instance {first} was preempted; the job {said}"], doc
    # as before, never '0%' (in setup while its new instance has not begun its command)
    assert _progress(store, launcher, job.id) in ("no step yet", "in setup")
    second = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    wait_for(lambda: "resumed from epoch 1" in launcher.logs(second, tail=5))
    wait_for(lambda: launcher.status(second).ran)  # its instance says its command runs
    assert _progress(store, launcher, job.id) == "no step yet"


def test_a_job_that_reports_no_step_and_saves_elsewhere_is_told_its_work_is_lost(
        world) -> None:  # noqa: F811
    store, launcher, tmp = world
    script = tmp / "elsewhere.py"
    script.write_text(ELSEWHERE)
    job, first = _launch(store, launcher, tmp, script)
    wait_for(lambda: "training" in launcher.logs(first, tail=5))
    wait_for(lambda: getattr(launcher.status(first), "ran", True))  # its command runs
    launcher.preempt(first)
    wait_for(lambda: launcher.status(first).state == "preempted")
    lines = service.reconcile(store, launcher)
    said = ("resumes from step 0 (no checkpoint yet): what it did since it started is lost; "
            "how much is not known (it reports no step)")
    assert any(line.endswith(said) for line in lines), lines
    assert _progress(store, launcher, job.id) in ("no step yet", "in setup")  # never '0%'


def test_a_job_that_publishes_nothing_is_told_so_while_it_runs(world) -> None:  # noqa: F811
    """Its status says, once its command ran three of its checkpoint intervals (or a
    minute), that nothing was published and where its checkpoints must go, and that it
    reports no step; not before."""
    store, launcher, tmp = world
    script = tmp / "elsewhere.py"
    script.write_text(ELSEWHERE)
    spec = write_spec(tmp, run=f"{sys.executable} {script}")
    doc = yaml.safe_load(spec.read_text())
    doc["envs"] = {"COSTSCHED_CHECKPOINT_MINUTES": "0.05"}  # 3 s: said after 9 s
    spec.write_text(yaml.safe_dump(doc))
    [job] = service.launch(store, spec, launcher=launcher, wait_seconds=20,
                           checkpoint_root=str(tmp / "checkpoints"))
    first = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    wait_for(lambda: "training" in launcher.logs(first, tail=5))
    [s] = service.status(store, launcher, job.id, reconcile_first=False)
    assert not any("nothing published" in line for line in problems(s))
    # (both: the agent reads its clock for each, moments apart)
    wait_for(lambda: launcher.status(first).checkpoint_error and
             launcher.status(first).no_step_after, seconds=120)
    [s] = service.status(store, launcher, job.id, reconcile_first=False)
    assert problems(s) == [
        "checkpoints not published: nothing published from $CHECKPOINT_DIR in the first 9 s "
        "of its run: a recovery now starts it over from step 0; write its checkpoints under "
        "$CHECKPOINT_DIR (what it writes anywhere else is not kept; see "
        "docs/checkpoints.md#nothing-published)",
        # it writes no step either: said at the same time, under the same rule
        "no step reported in 9 s of its run: write the step to $COSTSCHED_PROGRESS_FILE "
        "(docs/job-contract.md); until then its forecast and moves assume none of its "
        "1,500 steps done"]
