"""`stop` while another costsched process is moving the job (real processes, the local
launcher, a SQLite store): the move is in the middle of its target's launch when the user
stops the job. The stop wins: the job ends stopped, no instance of it is left running,
no placement is left open, and the moving process ends without an error."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import datetime, timezone
from pathlib import Path

import pytest

from costsched.service import jobs as service
from costsched.service.jobs.stopping import stop_job
from launchers.checkpoints import open_store
from tests.costsched.service.test_jobs import (
    set_prices,
    wait_for,
    world,  # noqa: F401 - the fixture
    write_spec,
)

# Migrates the job in a process of its own whose launcher's launch call takes a while
# (a cloud's can): it says when the call starts, so that the test stops the job then.
SLOW_MIGRATION = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from costsched.service import jobs as service
    from costsched.store import PriceStore
    from launchers.local import LocalLauncher

    db, base, job_id, flag = sys.argv[1:]
    original = LocalLauncher.launch

    def slow_launch(self, spec):
        Path(flag).write_text(spec.attempt)
        time.sleep(3)
        return original(self, spec)

    LocalLauncher.launch = slow_launch
    store = PriceStore(db)
    launcher = LocalLauncher(Path(base), grace_seconds=5)
    service.migrate(store, launcher, int(job_id), force=True)
    service.settle(store, launcher, 30)
    print("moved")
""")


@pytest.mark.parametrize("wait", [30.0, 0.0], ids=["stop-waits-for-the-lease",
                                                   "stop-does-not-wait"])
def test_a_stop_during_a_moves_launch_wins(world, wait: float) -> None:  # noqa: F811
    store, launcher, tmp = world
    [job] = service.launch(store, write_spec(tmp), launcher=launcher, wait_seconds=20,
                           checkpoint_root=str(tmp / "checkpoints"))
    checkpoints = open_store(store.jobs.get(job.id).checkpoint_location)
    wait_for(checkpoints.newest_verified)
    set_prices(store, {"us-east-1a": 3.0, "us-east-1b": 0.5}, datetime.now(timezone.utc))
    flag = tmp / "launching"
    mover = subprocess.Popen([sys.executable, "-c", SLOW_MIGRATION, str(tmp / "store.sqlite"),
                              str(tmp / "instances"), str(job.id), str(flag)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(flag.exists, seconds=120)
        assert store.jobs.get(job.id).state == "migrating"
        stopped = stop_job(store, launcher, job.id, datetime.now(timezone.utc),
                           wait_seconds=wait)
        assert stopped.state == "stopped"
        out, err = mover.communicate(timeout=120)
    finally:
        mover.kill()
    assert mover.returncode == 0, err
    assert "Traceback" not in err
    assert store.jobs.get(job.id).state == "stopped"
    instances = launcher.instances(job.id)
    assert len(instances) == 2  # the source, and the target its launch call started
    assert [i.state for i in instances if i.live] == []
    assert store.jobs.placements(job.id)["end_at"].notna().all()
    assert [m.state for m in store.moves.of_job(job.id)] == ["done", "cancelled"]
    # Nothing runs on: every process of both instances has gone.
    for instance in instances:
        folder = Path(tmp / "instances" / instance.id)
        assert instance.state == "terminated", (instance, (folder / "agent.log").read_text())
    # Stopping again says it is stopped already.
    with pytest.raises(Exception, match="is stopped already"):
        service.stop(store, launcher, job.id)
