"""Crash safety of the job-move state machine: costsched is killed (SIGKILL) right after it
enters a state of a migration, then started again; the job finishes with the result of an
uninterrupted run, no verified checkpoint is lost, and a job never has more than two
instances alive at once (recorded by polling the launcher, and asserted). The check of one
state (`check_crash_resumed`), run by test_machine.py (the first states) and
test_machine_late.py (the others): two files, so that their cases (each a real
job, its move crashed and resumed) run on two workers at once."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from datetime import datetime, timezone

import numpy as np

from costsched.service import jobs as service
from costsched.store import PriceStore
from launchers.checkpoints import open_store
from launchers.local import LocalLauncher
from tests.costsched.service.test_jobs import (
    PACED,
    STEPS,
    TRAIN,
    LiveCounter,
    set_prices,
    wait_for,
    write_spec,
)
from tests.real_jobs import SETTLE, World

# train.py's steps (its result is `uninterrupted`'s), slow enough that the job is still
# training when the crashing costsched has started, even on a busy machine; once costsched
# is started again, every instance but the source runs at full speed (paced.py): the
# moved job finishes in a moment instead of sleeping through its remaining steps.
TRAIN_ARGS = f"--steps {STEPS} --step-seconds 0.03 --checkpoint-every 0.1"
POLL = 0.2  # the agents' publishing interval: a move sees an instance's state soon

STATES = ("planned", "checkpointing", "checkpoint_verified", "target_launched",
          "target_running", "source_terminated")

# Runs a migration in a process of its own that kills itself right after the move's state
# is stored as CRASH_AT: as if costsched crashed there. It is started early and loads
# costsched while the job launches; it migrates the job whose id it is sent on stdin.
CRASHING_MIGRATION = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from costsched.service import jobs as service
    from costsched.store import PriceStore
    from costsched.store.batch import Batch
    from costsched.store.moves import MoveRecord, MoveStore
    from launchers.local import LocalLauncher

    db, base, crash_at = sys.argv[1:]
    job_id = sys.stdin.readline().strip()

    def crash_at_state(moves):
        if any(m.kind == "migration" and m.state == crash_at for m in moves):
            os.kill(os.getpid(), signal.SIGKILL)

    def crash_after(method):
        def wrapped(self, *args, **kwargs):
            move = method(self, *args, **kwargs)
            crash_at_state([move])
            return move
        return wrapped

    def crash_after_all(method):
        def wrapped(self, *args, **kwargs):
            made = method(self, *args, **kwargs)
            crash_at_state([m for m in made if isinstance(m, MoveRecord)])
            return made
        return wrapped

    def crash_after_commit(method):  # the moves stepped together: stored at the commit
        def wrapped(self):
            dropped = method(self)
            crash_at_state(store.moves.of_job(int(job_id)))
            return dropped
        return wrapped

    MoveStore.create = crash_after(MoveStore.create)
    MoveStore.create_many = crash_after_all(MoveStore.create_many)
    MoveStore.advance = crash_after(MoveStore.advance)
    Batch.commit = crash_after_commit(Batch.commit)
    store = PriceStore(db)
    launcher = LocalLauncher(Path(base), grace_seconds=5, poll_seconds=%(poll)s)
    service.migrate(store, launcher, int(job_id), force=True)
    service.settle(store, launcher, 150)  # it dies long before, on a loaded machine too
""") % {"poll": POLL}


def check_crash_resumed(world: World, expected: bytes, crash_at: str) -> None:
    """A job's migration killed right after it stored `crash_at`, resumed by a new costsched:
    the job ends as it would have uninterrupted (`expected`: its final weights)."""
    store, _, tmp = world
    crashing = subprocess.Popen(
        [sys.executable, "-c", CRASHING_MIGRATION, str(tmp / "store.sqlite"),
         str(tmp / "instances"), crash_at], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    launcher = LocalLauncher(tmp / "instances", grace_seconds=5, poll_seconds=POLL)
    pace = tmp / "pace"
    run = f"{sys.executable} {PACED} {pace} {TRAIN} {TRAIN_ARGS}"
    [job] = service.launch(store, write_spec(tmp, run=run), launcher=launcher,
                           wait_seconds=SETTLE, checkpoint_root=str(tmp / "checkpoints"))
    counter = LiveCounter(launcher, job.id)
    counter.start()
    checkpoints = open_store(store.jobs.get(job.id).checkpoint_location)
    before = wait_for(checkpoints.newest_verified).version
    set_prices(store, {"us-east-1a": 3.0, "us-east-1b": 0.5}, datetime.now(timezone.utc))

    try:
        _, stderr = crashing.communicate(f"{job.id}\n", timeout=180)
    finally:
        if crashing.poll() is None:
            crashing.kill()
    assert crashing.returncode == -signal.SIGKILL, stderr
    [move] = store.moves.of_job(job.id)[1:]
    assert move.kind == "migration" and move.state == crash_at

    # costsched starts again: a new store and launcher object, the same files.
    pace.write_text(move.source_instance)  # the source keeps its pace; the rest run at once
    store = PriceStore(str(tmp / "store.sqlite"))
    launcher = LocalLauncher(tmp / "instances", grace_seconds=5, poll_seconds=POLL)
    assert checkpoints.newest_verified().version >= before  # nothing verified was lost

    def finished() -> bool:
        service.reconcile(store, launcher)
        return store.jobs.get(job.id).final

    wait_for(finished, seconds=SETTLE, poll=0.3)
    counter.stopped = True
    assert store.jobs.get(job.id).state == "succeeded"
    assert store.moves.get(move.id).state == "done"
    assert zone_of_last(store, job.id) == "us-east-1b"
    assert counter.most <= 2
    final = checkpoints.fetch(checkpoints.newest_verified(), tmp / "final")
    assert np.load(final / "checkpoint.npz")["w"].tobytes() == expected
    store.dispose()


def zone_of_last(store: PriceStore, job_id: int) -> str:
    return str(store.jobs.placements(job_id)["zone"].iloc[-1])

