"""After a user's start, `status` says where the job resumed from, as it says it of a
recovery: 'started again at ... UTC: resumes from step N ...' (a start is no recovery:
it is counted in neither), and `logs --all` heads its instance's output so. A real
local job that checkpoints, stopped after its first checkpoint and started again."""

from __future__ import annotations

import re

from costsched.cli.status_gangs import lost_lines
from costsched.service import jobs as service
from tests.costsched.service.test_jobs import STEPS, wait_for, world, write_spec  # noqa: F401


def test_a_start_says_the_step_it_resumed_from(world) -> None:  # noqa: F811
    store, launcher, tmp = world
    [job] = service.launch(store, write_spec(tmp), launcher=launcher, wait_seconds=20,
                           checkpoint_root=str(tmp / "checkpoints"))
    instance = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    wait_for(lambda: (launcher.status(instance).checkpoint_step or 0) > 0)
    service.stop(store, launcher, job.id)
    saved = launcher.status(instance).checkpoint_step
    service.start(store, launcher, job.id)
    [s] = service.status(store, launcher, job.id, reconcile_first=False)
    [line] = [x for x in lost_lines(s) if x.startswith("started again at ")]
    found = re.search(r"UTC: resumes from step ([0-9,]+)", line)
    assert found is not None, line
    assert float(found.group(1).replace(",", "")) == saved, (line, saved)
    assert s.record.steps_total == STEPS and sum(m.kind == "recovery" for m in s.moves) == 0
    # ... and `logs --all` heads the started instance's output with it, after how it came.
    heads = [x for x in service.every_log(store, launcher, job.id).splitlines()
             if x.startswith("--- instance ")]
    assert re.search(r"\(started again [0-9-]+ [0-9:]+Z, resumes from step "
                     + found.group(1) + r"\b[^;]*; running\)$", heads[-1]), heads
    service.stop(store, launcher, job.id)
