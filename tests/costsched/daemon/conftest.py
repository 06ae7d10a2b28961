"""A store to walk away from: spot prices in us-east-1, local instances of its own, and
daemon.autostart on with a one-second watch (the suite turns it off elsewhere). Whatever
daemon a test starts for the store, and every instance, is ended after the test."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched.store import PriceStore
from costsched.store.leases import process_gone
from launchers.local import LocalLauncher
from tests.costsched.service.test_jobs import TRAIN, set_prices

CHEAP = {"us-east-1a": 1.0, "us-east-1b": 2.0, "us-east-1c": 2.5}


@dataclass
class World:
    store: PriceStore
    db: Path
    tmp: Path
    launcher: LocalLauncher

    def spec(self, name: str, run: str, steps: int = 3000) -> Path:
        """A spot job in us-east-1 running `run`, checkpointing often."""
        path = self.tmp / f"{name}.yaml"
        path.write_text(yaml.safe_dump({
            "name": name, "run": run, "steps": steps, "throughputs": {"V100": 0.01},
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
            "checkpoint": {"interval_minutes": 0.01, "size_gb": 0.1}}))
        return path

    def trainer(self, name: str = "walk") -> Path:
        """examples/train.py for about a minute, a checkpoint every 0.3 s."""
        return self.spec(name, f"{sys.executable} {TRAIN} --steps 3000 --step-seconds 0.02 "
                               "--checkpoint-every 0.3")

    def sleeper(self, name: str) -> Path:
        return self.spec(name, f"{sys.executable} -c 'import time; time.sleep(120)'")


@pytest.fixture()
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    db = tmp_path / "store.sqlite"
    store = PriceStore(str(db))
    set_prices(store, CHEAP, datetime.now(timezone.utc) - timedelta(hours=1))
    instances = tmp_path / "instances"
    for name, value in {"COSTSCHED_DB": str(db), "COSTSCHED_INSTANCES": str(instances),
                        "COSTSCHED_DAEMON_AUTOSTART": "true",
                        "COSTSCHED_DAEMON_WATCH_SECONDS": "1",
                        "COSTSCHED_DAEMON_IDLE_SECONDS": "1",
                        # No scheduled collection reads a cloud during a test.
                        "COSTSCHED_SCHEDULE_COLLECT": "0 0 1 1 *",
                        "COSTSCHED_SCHEDULE_CATALOG": "0 0 1 1 *"}.items():
        monkeypatch.setenv(name, value)
    launcher = LocalLauncher(instances, grace_seconds=5)
    yield World(store, db, tmp_path, launcher)
    end_daemons(store.url)
    for instance in launcher.instances():
        launcher.terminate(instance.id)
    store.dispose()


def daemons_of(url: str) -> list[int]:
    """The costsched daemons of this machine whose environment names the store `url`."""
    found = []
    wanted = f"COSTSCHED_DB={url}".encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"daemon" in argv and wanted in environ and not process_gone(int(proc.name)):
            found.append(int(proc.name))
    return found


def end_daemons(url: str) -> None:
    """SIGTERM, then SIGKILL, every daemon of the store still running."""
    pids = daemons_of(url)
    for pid in pids:
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 15
    while any(not process_gone(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in pids:
        if not process_gone(pid):
            os.kill(pid, signal.SIGKILL)
