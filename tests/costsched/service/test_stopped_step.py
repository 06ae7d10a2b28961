"""A stopped job stands at the step `start` resumes from: its newest checkpoint's, as its
instance said it once ended, not the step of the last look before the stop (the job ran on
and checkpointed on its stop). When the two differ, `status` says both. In-memory
launcher, SQLite store."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched.cli.status_lines import print_status
from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.service.jobs.runs import _running, steps_left
from costsched.service.views import status_document
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices


class Ending(FakeLauncher):
    """Instances that say, once terminated, the step the job reported last and the step
    of the checkpoint published last (`last`); None: the backend cannot say."""

    last: tuple[int | None, int | None] = (None, None)
    forgets = False  # an ended instance it no longer knows

    def terminate(self, instance_id: str) -> None:
        super().terminate(instance_id)
        step, saved = self.last
        self.states[instance_id] = replace(self.states[instance_id], step=step,
                                           checkpoint_step=saved)

    def status(self, instance_id: str):  # noqa: ANN201 - as the base's
        if self.forgets and self.states[instance_id].state == "terminated":
            raise InvalidInput(f"instance {instance_id}: unknown")
        return super().status(instance_id)


@pytest.fixture()
def running(store: PriceStore, tmp_path: Path) -> tuple[PriceStore, Ending, int]:
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    spec = {"name": "fit", "throughputs": {"V100": 0.5}, "steps": 2000, "run": "true",
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
            "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}
    path = tmp_path / "fit.yaml"
    path.write_text(yaml.safe_dump(spec))
    launcher = Ending()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    store.jobs.record_step(job.id, 57, at=datetime.now(timezone.utc))  # the last look
    return store, launcher, job.id


def shown(store: PriceStore, launcher: Ending, job: int) -> service.JobStatus:
    [found] = service.status(store, launcher, job, reconcile_first=False)
    return found


def test_a_stopped_job_stands_at_the_checkpoint_it_made_on_its_stop(running) -> None:
    store, launcher, job = running
    launcher.last = (116, 116)  # it ran on to 116, checkpointed there and exited
    service.stop(store, launcher, job)
    s = shown(store, launcher, job)
    assert (s.step, s.reported_step, s.steps_left) == (116, 116, 2000 - 116)
    assert s.resumes == ""  # one step to say: where it resumes
    assert store.jobs.get(job).checkpoint_step == 116
    assert steps_left(store, _running(store, job), datetime.now(timezone.utc)) == 2000 - 116
    [doc] = status_document([s])
    assert (doc["step"], doc["reported_step"], doc["resumes"]) == (116, 116, None)


def test_a_checkpoint_older_than_the_last_step_is_where_it_resumes_and_both_are_said(
        running, capsys: pytest.CaptureFixture[str]) -> None:
    store, launcher, job = running
    launcher.last = (140, 116)  # killed at 140: its newest checkpoint is at 116
    service.stop(store, launcher, job)
    s = shown(store, launcher, job)
    assert (s.step, s.reported_step, s.steps_left) == (116, 140, 2000 - 116)
    assert s.resumes == ("resumes at step 116, its newest checkpoint's: it last reported "
                         "step 140, so the 24 steps between are done again")
    print_status([s], json_out=False)
    out = " ".join(capsys.readouterr().out.split())
    assert f"job {job}: resumes at step 116, its newest checkpoint's" in out
    [doc] = status_document([s])
    assert (doc["step"], doc["reported_step"]) == (116, 140) and doc["resumes"] == s.resumes


def test_a_backend_that_cannot_say_keeps_the_last_step_read(running) -> None:
    store, launcher, job = running
    launcher.forgets = True
    service.stop(store, launcher, job)
    s = shown(store, launcher, job)
    assert (s.step, s.reported_step, s.resumes) == (57, 57, "")
