"""The daemon's line for a gang that failed because one of its nodes did names that node
and its exit code, as `status` does (`failure.node`): in its log and in the notice it
sends. A real two-node job on the local launcher, its node 1's setup failing."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import yaml

from costsched import notify
from costsched.config import Config
from costsched.daemon import Daemon
from costsched.service import jobs as service
from tests.costsched.service.test_gang import (  # noqa: F401 - `world`: the fixture
    free_port,
    task,
    wait_for,
    world,
)
from tests.real_jobs import SETTLE


def test_the_daemon_names_the_node_that_failed_the_gang_and_its_exit_code(
        world, caplog: pytest.LogCaptureFixture,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    store, launcher, tmp = world
    caplog.set_level(logging.INFO, logger="costsched.daemon")
    sent: list[tuple[str, dict]] = []
    monkeypatch.setattr(notify, "notify", lambda _config, event, **details:
                        sent.append((event, details)))
    path: Path = task(tmp, free_port(), 0.02)
    doc = yaml.safe_load(path.read_text())
    doc["setup"] = 'if [ "$SKYPILOT_NODE_RANK" = 1 ]; then echo "no such wheel"; exit 3; fi'
    doc["run"] = "sleep 60"
    path.write_text(yaml.safe_dump(doc))
    [job] = service.launch(store, path, launcher=launcher, wait_seconds=SETTLE,
                           checkpoint_root=str(tmp / "checkpoints"))
    daemon = Daemon(store, Config(), tasks=("replan",), launchers=lambda _: launcher,
                    settle_seconds=5)

    def ended() -> bool:
        daemon.watch()
        return store.jobs.get(job.id).final

    wait_for(ended, seconds=120, poll=0.3)
    said = f"job {job.id}: failed: node 1 failed in setup (exit code 3)"
    [line] = [r.getMessage() for r in caplog.records if "event=reconciled" in r.getMessage()
              and f"job {job.id}: failed" in r.getMessage()]
    assert f'detail="{said}"' in line, line
    assert ("failure", {"job": job.id, "detail": said}) in sent, sent
    [row] = service.status(store, launcher, job.id, reconcile_first=False)
    assert row.failure is not None and (row.failure.node, row.failure.exit_code) == (1, 3)
