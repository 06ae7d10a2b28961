"""A job whose checkpoints are not published (two files rewritten in place more often than
the settle period): the reconcile passes (a supervisor's log, the job's events) say so
once, not at every pass as the wait goes on; a recovery from the start says why, with the
fix, and the fix followed publishes. On the local launcher with real agents."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from costsched.service import jobs as service
from launchers.checkpoints.local import LocalStore
from tests.job_folders import folder_of
from tests.real_jobs import SETTLE, wait_for, world, write_spec  # noqa: F401

# last.pt, then meta.json, rewritten in place every 0.3 s (a settle period of 1 s never
# passes), the step reported after each save; with "commit", the marker touched after it.
SAVER = """
import os, sys, time
d, progress = os.environ["CHECKPOINT_DIR"], os.environ["COSTSCHED_PROGRESS_FILE"]
for step in range(1, 100000):
    for name in ("last.pt", "meta.json"):
        with open(os.path.join(d, name), "w") as f:
            f.write(f"{name} {step}")
    if sys.argv[1:] == ["commit"]:
        open(os.path.join(os.environ["COSTSCHED_CHECKPOINT_DIR"], "COSTSCHED_COMMIT"),
             "w").close()
    with open(progress + ".tmp", "w") as f:
        f.write(str(step))
    os.replace(progress + ".tmp", progress)
    time.sleep(0.3)
"""
SETTLE_ENV = {"COSTSCHED_CHECKPOINT_SETTLE_SECONDS": "1"}
FIX = "touch $COSTSCHED_CHECKPOINT_DIR/COSTSCHED_COMMIT after each save"


def launch(store, launcher, tmp: Path, name: str, *args: str):  # noqa: ANN001, ANN201
    saver = tmp / "saver.py"
    saver.write_text(SAVER)
    spec = write_spec(tmp, name, run=" ".join([sys.executable, str(saver), *args]),
                      envs=SETTLE_ENV)
    [job] = service.launch(store, spec, launcher=launcher, wait_seconds=20,
                           checkpoint_root=str(tmp / "checkpoints"))
    return job


def unpublished(store, launcher) -> list:  # noqa: ANN001
    return [x for x in service.reconcile(store, launcher) if "checkpoints not published" in x]


def test_checkpoints_not_published_are_said_once_and_a_recovery_says_why(
        world) -> None:  # noqa: F811
    store, launcher, tmp = world
    job = launch(store, launcher, tmp, "inplace")
    said = wait_for(lambda: unpublished(store, launcher), seconds=SETTLE)
    again = []
    for _ in range(8):  # 3 s: the agent looks (every 0.2 s) and rewrites its status
        time.sleep(0.4)
        again += unpublished(store, launcher)
    assert again == [], again
    assert said[0].startswith(f"job {job.id}: checkpoints not published: nothing published "
                              "since "), said
    [s] = service.status(store, launcher, job.id)
    assert s.checkpoint_error == said[0].split("checkpoints not published: ", 1)[1]

    instance = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    launcher.preempt(instance)
    wait_for(lambda: launcher.status(instance).state == "preempted")
    [line] = [x for x in service.reconcile(store, launcher) if "preempted; recovery" in x]
    assert "resumes from step 0 (no checkpoint: from the start): " in line, line
    assert "steps lost; nothing was published: " in line, line
    why = line.split("steps lost; nothing was published: ", 1)[1]
    assert "changed in place at a save, not renamed into place" in why and FIX in why, line
    service.stop(store, launcher, job.id)


def test_the_fix_a_recovery_names_publishes_the_saves(world) -> None:  # noqa: F811
    store, launcher, tmp = world
    job = launch(store, launcher, tmp, "committed", "commit")
    root = tmp / "checkpoints" / f"{folder_of(store, job.id)}"
    wait_for(lambda: len(LocalStore(root).list()) >= 2, seconds=SETTLE)
    assert unpublished(store, launcher) == []
    service.stop(store, launcher, job.id)
