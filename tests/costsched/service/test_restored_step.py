"""A recovery names the step of the checkpoint version it restores. A preemption can land
between the agent publishing a version and the instance's status saying that version's
step: the instance's last word is then an older version's step. The recovery then says the
step kept with the version restored, or that its step is not known, never the older one's
as if it were the restored one."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace

from costsched.service import jobs as service
from costsched.service.jobs.steps import resume_from
from costsched.store import PriceStore
from launchers import version_steps
from launchers.checkpoints import open_store
from launchers.status_file import STATUS
from tests.costsched.service.job_scripts import PREAMBLE
from tests.real_jobs import (
    World,
    checkpoints_of,
    instance_of,
    launch,
    preempt,
    wait_for,
    world,  # noqa: F401
)

NOW = datetime(2026, 12, 1, 22, 9, tzinfo=timezone.utc)


def _two_versions(tmp_path: Path, kept: dict[int, tuple[int, bool]]) -> str:
    """A checkpoint store holding versions 1 and 2, with the steps `kept` beside them."""
    uri = str(tmp_path / "checkpoints")
    store = open_store(uri)
    for text in ("w50", "w100"):
        (tmp_path / "weights.npy").write_text(text)
        store.publish_files({"weights.npy": tmp_path / "weights.npy"})
    for version, (step, inferred) in kept.items():
        version_steps.keep(uri, version, step, inferred)
    return uri


def _run(store: PriceStore, uri: str, reached: float, launcher: str) -> SimpleNamespace:
    job = store.jobs.create("lm", {"spec": {"name": "lm", "run": "x", "steps": 2400},
                                   "launcher": launcher}, 2400, at=NOW)
    store.jobs.record_steps({job: reached}, at=NOW)
    return SimpleNamespace(record=store.jobs.get(job), launcher=launcher, checkpoint_uri=uri)


def test_a_version_newer_than_the_instance_said_is_named_by_its_kept_step(
        tmp_path: Path) -> None:
    store = PriceStore(str(tmp_path / "store.sqlite"))
    uri = _two_versions(tmp_path, {1: (50, False), 2: (100, False)})
    run = _run(store, uri, 130, "aws")
    said = resume_from(store, run, 50, NOW, version=1)  # type: ignore[arg-type]
    assert said == ("resumes from step 100 (its checkpoint's): at least 30 steps lost (since "
                    "its last reading at step 130)")
    assert store.jobs.get(run.record.id).steps_done == 100
    store.dispose()


def test_a_kept_step_read_off_the_time_is_said_about(tmp_path: Path) -> None:
    store = PriceStore(str(tmp_path / "store.sqlite"))
    uri = _two_versions(tmp_path, {1: (50, False), 2: (98, True)})
    run = _run(store, uri, 130, "local")
    said = resume_from(store, run, 50, NOW, version=1)  # type: ignore[arg-type]
    assert said == ("resumes from about step 98 (its checkpoint's, read off the time it was "
                    "saved): about 32 steps lost")
    store.dispose()


def test_a_version_with_no_step_kept_says_its_step_is_not_known(tmp_path: Path) -> None:
    """Lost before its agent kept the new version's step too: the version is named, the
    older step is said as the instance's last word, and the job's step stays."""
    store = PriceStore(str(tmp_path / "store.sqlite"))
    uri = _two_versions(tmp_path, {1: (50, False)})
    run = _run(store, uri, 130, "aws")
    said = resume_from(store, run, 50, NOW, version=1)  # type: ignore[arg-type]
    assert said == ("resumes from its newest checkpoint (version 2; its step is not known: "
                    "its instance last said version 1's, step 50)")
    assert store.jobs.get(run.record.id).steps_done == 130
    store.dispose()


def test_the_instances_word_on_the_newest_version_stands(tmp_path: Path) -> None:
    store = PriceStore(str(tmp_path / "store.sqlite"))
    uri = _two_versions(tmp_path, {})
    run = _run(store, uri, 130, "local")
    assert resume_from(store, run, 100, NOW, version=2) == (  # type: ignore[arg-type]
        "resumes from step 100 (its checkpoint's): 30 steps lost")
    store.dispose()


# Saves at step 50 (its marker holds the step), reports 50, waits for `go`, saves at step
# 100, reports 130 and trains on; run again, says the step its restored marker holds.
JOB = PREAMBLE + """\
go = Path(sys.argv[1])
marker = saved / "COSTSCHED_COMMIT"
if marker.exists():
    print("resumed from", marker.read_text().strip(), flush=True)
else:
    for step in (50, 100):
        (saved / "weights.npy.tmp").write_text(f"w{step}")
        os.replace(saved / "weights.npy.tmp", saved / "weights.npy")
        marker.write_text(f"{step}\\n")
        report(step)
        while step == 50 and not go.exists():
            time.sleep(0.05)
    report(130)
while True:
    time.sleep(0.1)
"""


def _lost_before_its_status_said_version_2(world: World, keep_2: bool) -> tuple[list, str]:  # noqa: F811
    """The job, preempted once version 2 is published and its step read, its status then
    put back to what it said before version 2 (version 1, step 50): the preemption landing
    between the publish and the status. `keep_2`: the step kept with version 2 stays."""
    store, launcher, tmp = world
    job, instance = launch(world, JOB, tmp / "go")
    wait_for(lambda: launcher.status(instance).checkpoint_step == 50)
    (tmp / "go").touch()
    wait_for(lambda: launcher.status(instance).checkpoint_version == 2
             and launcher.status(instance).step == 130)
    preempt(launcher, instance)
    status = launcher.base_dir / instance / STATUS
    said = json.loads(status.read_text())
    status.write_text(json.dumps({**said, "checkpoint_version": 1, "checkpoint_step": 50}))
    uri = store.jobs.get(job.id).checkpoint_location
    if not keep_2:  # lost before its agent kept version 2's step as well
        _drop_kept(uri, 2)
    assert [c.version for c in checkpoints_of(store, job.id).list()][-1] == 2
    assert (launcher.status(instance).checkpoint_version,
            launcher.status(instance).checkpoint_step) == (1, 50)
    return service.reconcile(store, launcher), instance_of(store, job.id)


def _drop_kept(uri: str, version: int) -> None:
    """The steps kept beside the checkpoints, less `version`'s."""
    from launchers.heartbeats import get_doc, put_doc

    steps = open_store(f"{uri}/{version_steps.FOLDER}")
    doc = get_doc(steps, version_steps.NAME)
    doc.pop(str(version))
    put_doc(steps, version_steps.NAME, doc)
    assert version_steps.of(uri, version) == (None, False)


def test_a_real_recovery_names_the_step_of_the_version_it_restores(world: World) -> None:  # noqa: F811
    store, launcher, _ = world
    lines, second = _lost_before_its_status_said_version_2(world, keep_2=True)
    assert any(line.endswith("resumes from step 100 (its checkpoint's): 30 steps lost")
               for line in lines), lines
    assert not any("step 50" in line for line in lines), lines
    wait_for(lambda: "resumed from 100" in launcher.logs(second, tail=5))


def test_a_real_recovery_with_no_step_kept_names_its_version(world: World) -> None:  # noqa: F811
    store, launcher, _ = world
    lines, second = _lost_before_its_status_said_version_2(world, keep_2=False)
    said = ("resumes from its newest checkpoint (version 2; its step is not known: its "
            "instance last said version 1's, step 50)")
    assert any(line.endswith(said) for line in lines), lines
    wait_for(lambda: "resumed from 100" in launcher.logs(second, tail=5))
