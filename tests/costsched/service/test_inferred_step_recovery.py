"""A real local-launcher job whose checkpoint's step is read off the time it was saved (one
state file, no commit marker, a name without its step) says that step as 'about' wherever
it is said: the recovery's line, `status`, its --json (`step_inferred`) and the instance
that restores it; a job that names its files by its step keeps the exact words."""

from __future__ import annotations

import json

import pytest

from costsched.cli.status_lines import print_status
from costsched.service import jobs as service
from costsched.service.views import status_document
from tests.costsched.service.job_scripts import PREAMBLE
from tests.real_jobs import instance_of, preempt, saved_then_on, wait_for

# Reports step 398, saves the step it is at (400) as state.pkl half a second before it
# reports 400 (a job that reports every few steps); once `go` exists, reports 585. Started
# again from its checkpoint, it says so and reports nothing more.
JOB = PREAMBLE + """\
state = saved / sys.argv[2]
if state.exists():
    print("resumed from step", state.read_text(), flush=True)
else:
    report(398)
    time.sleep(0.2)
    (saved / "state.tmp").write_text("400")
    os.replace(saved / "state.tmp", state)
    time.sleep(0.5)
    report(400)
    while not Path(sys.argv[1]).exists():
        time.sleep(0.05)
    report(585)
while True:
    time.sleep(0.1)
"""


def _preempted(world, name: str):  # noqa: ANN001, ANN202, F811
    """The job launched, its checkpoint published, at step 585, preempted: (job, what the
    pass that recovers it says)."""
    store, launcher, tmp = world
    job, instance = saved_then_on(world, JOB, name, saved=398, step=585)
    preempt(launcher, instance)
    return job, service.reconcile(store, launcher)


def test_a_step_read_off_the_time_of_its_save_is_said_about_everywhere(
        world, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    store, launcher, tmp = world
    job, lines = _preempted(world, "state.pkl")
    words = ("resumes from about step 398 (its checkpoint's, read off the time it was "
             "saved): about 187 steps lost")
    assert any(words in line for line in lines), lines
    [after] = service.status(store, launcher, job.id)
    assert after.step == 398, after
    [doc] = status_document([after])
    [recovered] = doc["recovered"]
    assert recovered["step_inferred"] is True and words in recovered["said"], recovered
    print_status([after], json_out=False)
    assert words in " ".join(capsys.readouterr().out.split())
    print_status([after], json_out=True)
    assert json.loads(capsys.readouterr().out)[0]["recovered"][0]["step_inferred"] is True
    # the next instance knows the step of the version it restored, and how it is known
    now = instance_of(store, job.id)
    wait_for(lambda: "resumed from step 400" in launcher.logs(now, tail=5))
    wait_for(lambda: launcher.status(now).checkpoint_step == 398)
    assert launcher.status(now).checkpoint_step_inferred


def test_a_step_its_file_is_named_by_keeps_the_exact_words(world) -> None:  # noqa: F811
    store, launcher, tmp = world
    job, lines = _preempted(world, "state-398.pkl")
    # (398 lies between the step reported 2 s before the save and the one reported by
    # then: the name's, a step known)
    assert any("resumes from step 398 (its checkpoint's): 187 steps lost" in line
               for line in lines), lines
    [after] = service.status(store, launcher, job.id)
    [doc] = status_document([after])
    assert doc["recovered"][0]["step_inferred"] is False, doc["recovered"]
