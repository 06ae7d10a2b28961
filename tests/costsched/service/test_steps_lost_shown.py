"""The steps a recovery lost, as its job's log keeps them (`steps.resume_from`'s words, one
place), are said where a user looks: a line under the job in `status` (and --json's
`recovered`) and the recovered instance's line in `logs --all`. A cloud's instance: "at
least" (its last step read is a floor). In-memory launcher, SQLite store."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from costsched.cli.status_lines import print_status
from costsched.service import jobs as service
from costsched.service import views
from costsched.service.jobs.runs import _open_placement
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices
from tests.costsched.service.test_start_secrets import _spec

SAID = ("resumes from step 300 (its checkpoint's): at least 11 steps lost (since its last "
        "reading at step 311)")


class Logged(FakeLauncher):
    def logs(self, instance_id: str, tail: int = 200) -> str:
        return f"output of {instance_id}\n"


def recovered(store: PriceStore, tmp_path: Path) -> tuple[Logged, int, str]:
    """A job preempted at step 311, its checkpoint at step 300, recovered by a pass."""
    set_prices(store, {"us-east-1a": 1.0, "us-east-1b": 2.0},
               datetime.now(timezone.utc) - timedelta(hours=1))
    launcher = Logged()
    [job] = service.launch(store, _spec(tmp_path, "lost", []), launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    instance = str(_open_placement(store, job.id)["instance"])
    store.jobs.record_steps({job.id: 311.0}, at=datetime.now(timezone.utc))
    launcher.states[instance] = replace(launcher.states[instance], state="preempted",
                                        checkpoint_step=300)
    service.reconcile(store, launcher)
    assert len(store.jobs.placements(job.id)) == 2
    return launcher, job.id, instance


def test_status_says_the_steps_a_recovery_lost(store: PriceStore, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    launcher, job, lost = recovered(store, tmp_path)
    [s] = service.status(store, launcher, job, reconcile_first=False)
    print_status([s], json_out=False)
    out = " ".join(capsys.readouterr().out.split())
    assert f": instance {lost} was preempted; the job {SAID}" in out, out  # the job resumes
    line = next(x for x in out.split(f"job {job}: ") if SAID in x)
    assert line.startswith("recovered at ") and " UTC: instance " in line, line
    [doc] = views.status_document([s])
    assert [r["said"] for r in doc["recovered"]] == [
        f"instance {lost} was preempted; the job {SAID}"]


def test_logs_all_says_the_steps_lost_on_the_recovered_instances_line(
        store: PriceStore, tmp_path: Path) -> None:
    launcher, job, lost = recovered(store, tmp_path)
    text = service.every_log(store, launcher, job)
    heads = [line for line in text.splitlines() if line.startswith("--- instance")]
    assert len(heads) == 2, text
    assert lost in heads[0] and SAID not in heads[0], heads
    # Right after how it came, before how it went: never read as the next instance's.
    assert "(recovered here " in heads[1] and f"Z, {SAID}; running)" in heads[1], heads
