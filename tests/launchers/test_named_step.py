"""A save named by its step (`checkpoint-600/`, `ckpt-000600.npz`) gives its version that
step where the job had reached it just before the save, even when the next step's report
lands within REPORTED_WITH_NS of the save's newest file (which the timing rule alone would
take for the checkpoint's). A number below the step the job had reported seconds before
the save, or beyond the one it had reported by then (an epoch, a version) is not taken.
The marker's step still wins. Both with the publisher driven by the test, and with a real
local-launcher job preempted without notice."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from costsched.service import jobs as service
from launchers.checkpoints.local import LocalStore
from launchers.progress_readings import (
    NAMED_WITHIN_NS,
    REPORTED_WITH_NS,
    ProgressReadings,
    named_step,
)
from launchers.publisher import Publisher
from tests.costsched.service.job_scripts import PREAMBLE
from tests.real_jobs import instance_of, preempt, saved_then_on, wait_for

S = 1_000_000_000  # ns
MS = 1_000_000


@pytest.mark.parametrize(("names", "step"), [
    (["checkpoint-600/model.npz", "checkpoint-600/optimizer.npz",
      "checkpoint-600/trainer_state.json"], 600),
    (["ckpt-000600.npz"], 600),
    (["output/checkpoint-600/model-00001-of-00002.safetensors",
      "output/checkpoint-600/trainer_state.json"], 600),
    (["checkpoints/ckpt-000600.npz"], 600),
    (["checkpoints/latest/state.json"], None),
    (["epoch=3-step=600.ckpt"], 600),
    (["step_600.pt", "step_500.pt"], 600),
    (["weights.npy", "optim.npy"], None),
    (["model.v2.npz"], 2),
    ([], None),
])
def test_the_step_a_save_is_named_by(names: list[str], step: int | None) -> None:
    assert named_step(names) == step


def readings_around_a_save(tmp_path: Path, steps: range, save_at_ns: int,
                           step_ns: int) -> ProgressReadings:
    """A job that reports every step, one each `step_ns`, the last before `save_at_ns`
    1 ms before it, and the next 5 ms after it (within REPORTED_WITH_NS)."""
    progress = tmp_path / "progress"
    readings = ProgressReadings(progress)
    readings.begin(0)
    last = steps[-1]
    for step in steps:
        at = save_at_ns - MS - (last - step) * step_ns
        progress.write_text(f"{step}\n")
        os.utime(progress, ns=(at, at))
        readings.sample()
    progress.write_text(f"{last + 1}\n")
    os.utime(progress, ns=(save_at_ns + 5 * MS, save_at_ns + 5 * MS))
    readings.sample()
    return readings


def test_the_named_step_over_the_next_steps_quick_report(tmp_path: Path) -> None:
    assert 5 * MS < REPORTED_WITH_NS  # timing alone says 601
    readings = readings_around_a_save(tmp_path, range(1, 601), 100 * S, 40 * MS)
    assert readings.step_at(100 * S) == 601
    assert readings.step_at(100 * S, named=600) == 600
    assert readings.step_at(100 * S, said=598, named=600) == 598  # the marker wins


def test_a_number_that_is_no_step_just_reported_is_not_taken(tmp_path: Path) -> None:
    readings = readings_around_a_save(tmp_path, range(1, 101), 100 * S, 40 * MS)
    assert NAMED_WITHIN_NS < 99 * 40 * MS  # step 1 was reported long before the save
    assert readings.step_at(100 * S, named=1) == 101  # `epoch-1`: not step 1
    assert readings.step_at(100 * S, named=700) == 101  # a step not reached yet
    assert readings.step_at(100 * S, named=95) == 95  # reported 0.2 s before the save


def test_a_published_folder_per_save_gives_its_step(tmp_path: Path) -> None:
    folder = tmp_path / "checkpoints"
    saved = folder / "checkpoint-600"
    saved.mkdir(parents=True)
    for name in ("model.npz", "optimizer.npz", "trainer_state.json"):
        (saved / name).write_text(name)
        os.utime(saved / name, ns=(100 * S, 100 * S))
    readings = readings_around_a_save(tmp_path, range(1, 601), 100 * S, 40 * MS)
    publisher = Publisher(LocalStore(tmp_path / "store"), folder, settle=0)
    assert publisher.publish_changed(final=True) == 1
    assert publisher.named_step == 600
    assert readings.step_at(publisher.written_ns, publisher.said_step,
                            publisher.named_step) == 600


# A real job, saved as a Trainer does: a folder per save written under a temporary name and
# renamed into place, no marker; step 300 reported, saved, and step 301 reported at once.
# Once `go` exists it reports step 394 (no checkpoint of it). Started again, it says the
# folder it resumed from and reports nothing more.
JOB = PREAMBLE + """\
found = sorted(saved.glob("checkpoint-*"))
if found:
    print("resumed from", found[-1].name, flush=True)
else:
    report(300)
    temp = saved / "tmp-checkpoint-300"
    temp.mkdir()
    (temp / "model.npz").write_text("weights 300")
    (temp / "trainer_state.json").write_text('{"global_step": 300}')
    os.replace(temp, saved / "checkpoint-300")
    report(301)
    while not Path(sys.argv[1]).exists():
        time.sleep(0.05)
    report(394)
while True:
    time.sleep(0.1)
"""


def test_a_recovery_resumes_from_the_step_its_folder_is_named_by(world) -> None:  # noqa: F811
    store, launcher, tmp = world
    job, instance = saved_then_on(world, JOB, saved=300, step=394)
    preempt(launcher, instance)
    lines = service.reconcile(store, launcher)
    assert any("resumes from step 300 (its checkpoint's): 94 steps lost" in line
               for line in lines), lines
    now = instance_of(store, job.id)
    wait_for(lambda: "resumed from checkpoint-300" in launcher.logs(now, tail=5))


def test_a_save_named_by_the_step_it_reports_only_after_it_is_that_step(tmp_path: Path) -> None:
    """`checkpoint-750/` saved at step 750, whose report of 750 comes well after the save
    (its last report before it said 749; the agent read the next one at its look, a second
    and a half later): 750, known, where the timing rule says about 749."""
    progress = tmp_path / "progress"
    readings = ProgressReadings(progress)
    readings.begin(0)
    for step, at in ((700, 98 * S), (749, 100 * S - 300 * MS), (812, 100 * S + 1500 * MS)):
        progress.write_text(f"{step}\n")
        os.utime(progress, ns=(at, at))
        readings.sample()
    assert readings.saved_at(100 * S) == (749, True)  # read off the time: about 749
    assert readings.saved_at(100 * S, named=750) == (750, False)
    assert readings.saved_at(100 * S, named=900) == (749, True)  # not reached by its next
    assert readings.saved_at(100 * S, named=3) == (749, True)  # an epoch's number
