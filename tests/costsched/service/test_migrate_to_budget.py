"""A move the user names (`migrate --to`) is held to the job's own budget, as a launch, a
start and the watch's cap are: one whose expected total passes it is refused in one line
that names the figures and what gives the job enough; a dry run says the same."""

from __future__ import annotations

import re
import sys
from datetime import datetime, timedelta, timezone

import pytest
import yaml

from costsched.model import InvalidInput
from costsched.store import PriceStore

NUMBER = re.compile(r"\d[\d,]*\.\d+")
# A job that reports its first step and then waits to be stopped: its rest (one planned
# step, 0.01 steps/s at $2/h, is ~$0.056) stays as it is between the dry run and the real
# refusal; only its spend grows, by the seconds between them.
ONE_STEP = """import os, signal, sys, time
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
target = os.environ["COSTSCHED_PROGRESS_FILE"]
with open(target + ".tmp", "w") as f:
    f.write("1")
os.replace(target + ".tmp", target)
time.sleep(600)
"""


def test_a_move_asked_for_past_the_jobs_budget_is_refused(tmp_path) -> None:
    from costsched.service import jobs as service
    from launchers.local import LocalLauncher
    from tests.costsched.service.test_jobs import set_prices, wait_for, write_spec, zone_of

    store = PriceStore(str(tmp_path / "store.sqlite"))
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=5)
    set_prices(store, {"us-east-1a": 1.0, "us-east-1b": 2.0},
               datetime.now(timezone.utc) - timedelta(hours=1))
    script = tmp_path / "one_step.py"
    script.write_text(ONE_STEP)
    path = write_spec(tmp_path, run=f"{sys.executable} {script}")
    spec = yaml.safe_load(path.read_text())
    spec["constraints"]["budget"] = 60  # its ~40 h at $1/h fits; at $2/h it would not
    path.write_text(yaml.safe_dump(spec))
    try:
        [job] = service.launch(store, path, launcher=launcher, wait_seconds=20,
                               checkpoint_root=str(tmp_path / "checkpoints"))
        assert zone_of(store, job.id) == "us-east-1a"
        wait_for(lambda: [i.step for i in launcher.instances(job.id)] == [1])
        to = "aws us-east-1b p3.2xlarge spot"
        [dry] = service.migrate(store, launcher, job.id, to=to, dry_run=True)
        assert dry.started is None and dry.held_back == "budget"
        said = dry.not_moved
        assert "would pass its budget of $60" in said, said
        assert "expected there, the move included" in said, said
        # the amount that is enough, as a budget is given (rounded up to its cents)
        assert re.search(r"`costsched start train --budget \d+\.\d\d`", said), said
        with pytest.raises(InvalidInput) as err:
            service.migrate(store, launcher, job.id, to=to)
        line = str(err.value)
        assert "\n" not in line and line.startswith(f"job {job.id} (train): not moved to ")
        # the same words, figures and fix: its rest stands still (it reported its step and
        # waits); what it spent grows by the seconds between the two calls, and the amount
        # that is enough, rounded up to its cents, with it
        dry_half, real_half = said.partition(" would pass ")[2], line.partition(" would pass ")[2]
        assert NUMBER.sub("N", dry_half) == NUMBER.sub("N", real_half), (said, line)
        pairs = zip(NUMBER.findall(dry_half), NUMBER.findall(real_half), strict=True)
        assert all(abs(float(a.replace(",", "")) - float(b.replace(",", ""))) <= 0.02
                   for a, b in pairs), (said, line)
        assert [m.kind for m in store.moves.of_job(job.id)] == ["launch"]
        assert zone_of(store, job.id) == "us-east-1a"
    finally:
        for instance in launcher.instances():
            launcher.terminate(instance.id)
        store.dispose()
