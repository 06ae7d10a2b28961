"""On an EC2 instance (moto), `status` says a running job's "no step reported" and
"checkpoints not published" lines in the local launcher's words: its agent's heartbeat
beside the checkpoints carries them (`launchers.heartbeats`), the launcher fills them into
the instance it describes."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("moto")

from costsched.cli.status_lines import problems  # noqa: E402
from costsched.service import jobs as service  # noqa: E402
from launchers import heartbeats, nothing_published  # noqa: E402
from launchers.unseen import AFTER_SECONDS  # noqa: E402
from tests.costsched.service.test_move_lost_work_cloud import (  # noqa: E402
    CHECKPOINTS,
    _running_on_ec2,
    aws,  # noqa: F401 - the fixture
)

NOTE = nothing_published.note(0.0, False, now=AFTER_SECONDS, wait=AFTER_SECONDS)
LINE = ("no step reported in 1 min of its run: write the step to $COSTSCHED_PROGRESS_FILE "
        "(docs/job-contract.md); until then its forecast and moves assume none of its "
        "4,000 steps done")


def _lines(store, launcher, job_id: int) -> list[str]:  # noqa: ANN001
    [s] = service.status(store, launcher, job_id, reconcile_first=False)
    return problems(s)


def test_an_ec2_job_that_reports_no_step_and_publishes_nothing_is_told_so(
        aws, tmp_path: Path) -> None:  # noqa: ANN001, F811
    store, launcher, job_id = _running_on_ec2(tmp_path, aws)
    heartbeats.publish(CHECKPOINTS, "launch-1", heartbeats.document(None, None, None, None))
    quiet = _lines(store, launcher, job_id)
    assert not any("no step reported" in line or "not published" in line for line in quiet)

    heartbeats.publish(CHECKPOINTS, "launch-1", heartbeats.document(
        None, None, None, None, no_step=AFTER_SECONDS, checkpoint_error=NOTE))
    lines = _lines(store, launcher, job_id)
    assert LINE in lines, lines
    assert f"checkpoints not published: {NOTE}" in lines, lines
    assert sum("no step reported" in line for line in lines) == 1  # said once

    # it reports a step and publishes: neither is said any more
    heartbeats.publish(CHECKPOINTS, "launch-1", heartbeats.document(40, None, 40, 1))
    after = _lines(store, launcher, job_id)
    assert not any("no step reported" in line or "not published" in line for line in after)
    store.dispose()
