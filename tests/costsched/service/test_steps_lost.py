"""The steps a recovery says were lost are the job's last step less its checkpoint's. A
cloud's preempted instance is gone, so the last step read before it went is a floor: the
words say "at least". The local launcher's instance leaves its progress file behind: its
step there is the job's last, and the count is exact."""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace

from costsched.service.jobs.steps import resume_from
from costsched.store import PriceStore
from tests.costsched.service.test_jobs import STEPS, wait_for, world, write_spec  # noqa: F401
from tests.costsched.service.test_stop_after_end import JOB

NOW = datetime(2026, 11, 30, 16, 12, 50, tzinfo=timezone.utc)


def _read_at(store: PriceStore, step: float, launcher: str) -> SimpleNamespace:
    job = store.jobs.create("bigram", {"spec": {"name": "bigram", "run": "x", "steps": 2400},
                                       "launcher": launcher}, 2400, at=NOW)
    store.jobs.record_steps({job: step}, at=NOW)
    return SimpleNamespace(record=store.jobs.get(job), launcher=launcher,
                           checkpoint_uri="file:///nowhere")


def test_a_cloud_instance_gone_counts_the_steps_lost_as_a_floor(tmp_path: Path) -> None:
    store = PriceStore(str(tmp_path / "store.sqlite"))
    run = _read_at(store, 493, "aws")
    assert resume_from(store, run, 400, NOW) == (  # type: ignore[arg-type]
        "resumes from step 400 (its checkpoint's): at least 93 steps lost (since its last "
        "reading at step 493)")
    store.dispose()


def test_the_local_launchers_count_is_exact(tmp_path: Path) -> None:
    store = PriceStore(str(tmp_path / "store.sqlite"))
    run = _read_at(store, 511, "local")
    assert resume_from(store, run, 400, NOW) == (  # type: ignore[arg-type]
        "resumes from step 400 (its checkpoint's): 111 steps lost")
    store.dispose()


def test_a_checkpoint_at_the_last_step_says_no_step_lost(tmp_path: Path) -> None:
    """A notice's checkpoint (SIGTERM, then a checkpoint at the step it stood at): the
    recovery still says where it resumes, and that it lost nothing."""
    store = PriceStore(str(tmp_path / "store.sqlite"))
    run = _read_at(store, 497, "local")
    assert resume_from(store, run, 497, NOW) == (  # type: ignore[arg-type]
        "resumes from step 497 (its checkpoint's): no step lost")
    store.dispose()


def test_a_local_instance_taken_away_says_the_step_its_progress_file_last_had(
        world) -> None:  # noqa: ANN001, F811
    """The agent publishes the job's step at its polls: a step written after its last poll
    and before the instance was taken away is read off the progress file left behind."""
    store, launcher, tmp = world
    script, go = tmp / "job.py", tmp / "go"
    script.write_text(JOB)
    run = f"{sys.executable} {script} {go} on {STEPS}"
    [job] = store_launch(store, launcher, tmp, run)
    instance = str(store.jobs.placements(job)["instance"].iloc[-1])
    wait_for(lambda: launcher.status(instance).step == 200)
    launcher.preempt(instance)
    wait_for(lambda: launcher.status(instance).state == "preempted")
    (launcher.base_dir / instance / "progress").write_text("311")  # after its last poll
    assert launcher.status(instance).step == 311


def store_launch(store: PriceStore, launcher, tmp: Path, run: str) -> list[int]:  # noqa: ANN001
    from costsched.service import jobs as service

    return [j.id for j in service.launch(store, write_spec(tmp, run=run), launcher=launcher,
                                         wait_seconds=20,
                                         checkpoint_root=str(tmp / "checkpoints"))]
