"""A move's new instance whose command has already failed when the move first looks at it
ran: the move goes on as for one that runs (the watch then closes the job as failed, or
restarts it on errors), and never launches the failing command on the next offering, and
the next (was: 'died before it ran', every candidate tried in turn, and the job failed as
'no offering could be launched'). In-memory launcher, SQLite store."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import yaml

from costsched.migration.launcher import Instance, LaunchSpec
from costsched.service import jobs as service
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices


class FailsOnStart(FakeLauncher):
    """Its instances after the first exit 3 at once, before anyone looks."""

    def launch(self, spec: LaunchSpec) -> Instance:
        instance = super().launch(spec)
        if len(self.states) > 1:
            instance = replace(instance, state="failed", exit_code=3)
            self.states[instance.id] = instance
        return instance


def test_a_start_whose_command_fails_at_once_runs_it_once(store: PriceStore,
                                                          tmp_path: Path) -> None:
    set_prices(store, {"us-east-1a": 1.0, "us-east-1b": 1.1, "us-east-1c": 1.2},
               datetime.now(timezone.utc) - timedelta(hours=1))
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump({
        "name": "bad", "throughputs": {"V100": 0.5}, "steps": 3600, "run": "exit 3",
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
        "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}))
    launcher = FailsOnStart()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    service.stop(store, launcher, job.id)
    service.start(store, launcher, job.id)
    service.reconcile(store, launcher)
    assert [c for c in launcher.calls if c[0] == "launch"] == [("launch", "us-east-1a")] * 2
    assert len(store.jobs.placement_rows([job.id])) == 2
    record = store.jobs.get(job.id)
    assert record.state == "failed", record
    events = store.jobs.events(job.id)
    assert not events["detail"].astype(str).str.contains("no offering could be launched").any()
