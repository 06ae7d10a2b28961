"""A gang whose node was preempted and replaced in place says, once it resumed, the step it
resumed from and the steps it lost, as a single job's recovery says them ('resumes from
step 300 (its checkpoint's): no step lost'), on the one line `status` gives that recovery
(not a second one), and in `status --json`'s recoveries. The local launcher's real gang:
two nodes, rank 0 checkpoints the step it was on when the gang pauses."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from costsched.cli import app
from costsched.cli.status_lines import lost_lines, node_notices
from costsched.service import jobs as service
from tests.costsched.service.test_gang import finish, preempted_gang, world  # noqa: F401


def test_a_gangs_recovery_says_the_step_it_resumed_from_and_the_steps_lost(world) -> None:  # noqa: F811
    store, launcher, tmp = world
    job_id, first, _, counter = preempted_gang(store, launcher, tmp)
    finish(store, launcher, job_id)
    counter.stopped = True
    assert store.jobs.get(job_id).state == "succeeded", store.jobs.events(job_id)
    log = launcher.logs(first, node=0)
    resumed = int(log.split("rank 0 of 2: from step ")[2].split()[0])
    assert resumed > 0

    [shown] = service.status(store, launcher, job_id, reconcile_first=False)
    assert shown.recoveries == 1
    [line] = node_notices(shown)
    words = f"resumes from step {resumed:,} (its checkpoint's): no step lost"
    assert line.startswith("recovered at ") and line.endswith(f"; {words}"), line
    assert f"instance {first}: node 1 was preempted: replaced in us-east-1a" in line
    assert "the gang resumed" in line and line.count("resumes from step") == 1
    assert lost_lines(shown) == []  # one recovery, one line
    db = ["--db", str(tmp / "store.sqlite")]
    text = CliRunner().invoke(app, ["status", str(job_id), *db], env={"COLUMNS": "400"})
    assert text.exit_code == 0, text.output
    said = " ".join(text.output.split())
    assert said.count(words) == 1 and said.count("recovered at") == 1
    doc = CliRunner().invoke(app, ["status", str(job_id), "--json", *db])
    [job] = json.loads(doc.output)["jobs"]
    assert [r["said"] for r in job["recovered"]] == [
        f"instance {first}: node 1: {words}"]
    details = [str(d) for d in store.jobs.events(job_id)["detail"]]
    assert any(d.endswith("the gang resumes from its newest checkpoint (round 2)")
               for d in details)
    assert not any("(round 2), at step" in d for d in details)  # the step kept once
