"""Real jobs on the local launcher, for the tests that run one: a store with prices and a
launcher whose agents look at their job every POLL seconds (the launcher's own setting,
poll_seconds; 2 s unless set), a job script launched on it, its current instance, a
preemption without notice, and waits that return as soon as what they wait for is so.

The agents look often so that a test waits for what it checks, not for the next look: a
job's saves, steps and exit are seen within POLL seconds. A job script that must save
more slowly than the agent looks (the publisher's rules for a set that is whole are about
what two looks saw) keeps its saves several POLLs apart."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import pytest
import yaml

from costsched.service import jobs as service
from costsched.store import PriceStore
from launchers.checkpoints import CheckpointStore, open_store
from launchers.local import LocalLauncher

POLL = 0.2  # seconds between an agent's looks at its job (publish, step, heartbeat)
LOOK = 0.05  # seconds between a test's looks at what it waits for (unless it says)
# The most seconds a launch or a move of a real job, or a job's next report, may take before
# a test gives up on it: generous, for a loaded machine (CPU hogs, other suites); the waits
# return as soon as what they wait for is so, and cost a quiet machine nothing.
SETTLE = 120.0

ROOT = Path(__file__).resolve().parents[1]
TRAIN = ROOT / "examples" / "train.py"
STEPS = 1500
# About 18 s of training: long enough that the moves happen while it trains, even on a
# busy machine.
TRAIN_ARGS = f"--steps {STEPS} --step-seconds 0.012 --checkpoint-every 0.1"
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
# train.py at the pace a test sets, its steps and weights its own (a file naming the instance
# that keeps the pace: the others skip its sleeps)
PACED = ROOT / "tests" / "costsched" / "migration" / "paced.py"


def offer(zone: str, price: float, at: datetime) -> dict:
    return dict(cloud="aws", region="us-east-1", zone=zone, instance_type="p3.2xlarge",
                market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8,
                memory_gb=61.0, usd_per_hour=price, effective_at=at, source="test")


def set_prices(store: PriceStore, prices: dict[str, float], at: datetime) -> None:
    store.ingest(pd.DataFrame([offer(z, p, at) for z, p in prices.items()]))


def write_spec(tmp_path: Path, name: str = "train", run: str | None = None,
               envs: dict[str, str] | None = None) -> Path:
    spec = {
        "name": name,
        # A slow job in the model's eyes (0.01 steps/s: 40 hours), so that a cheaper zone
        # pays for a move; the real script takes seconds.
        "throughputs": {"V100": 0.01},
        "steps": STEPS,
        "run": run or f"{sys.executable} {TRAIN} {TRAIN_ARGS}",
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
        "checkpoint": {"interval_minutes": 30, "size_gb": 1.0},
        **({"envs": envs} if envs else {}),
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


T = TypeVar("T")
World = tuple[PriceStore, LocalLauncher, Path]


@pytest.fixture()
def world(tmp_path: Path) -> Iterator[World]:
    """(a store with us-east-1's three zones priced, a local launcher, the test's folder);
    every instance still there terminated after the test."""
    with a_world(tmp_path) as made:
        yield made


@contextmanager
def a_world(tmp_path: Path, poll_seconds: float = POLL) -> Iterator[World]:
    """`world`, its agents looking every `poll_seconds`."""
    store = PriceStore(str(tmp_path / "store.sqlite"))
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=5, poll_seconds=poll_seconds)
    start = datetime.now(timezone.utc) - timedelta(hours=1)
    set_prices(store, {"us-east-1a": 1.0, "us-east-1b": 2.0, "us-east-1c": 2.5}, start)
    try:
        yield store, launcher, tmp_path
    finally:  # a failing test leaves no job running either
        for instance in launcher.instances():
            launcher.terminate(instance.id)
    store.dispose()


def wait_for(predicate: Callable[[], T], seconds: float = SETTLE, poll: float = LOOK) -> T:
    """What `predicate` returns once it is true, looked at every `poll` seconds (a slow
    predicate: less often); an AssertionError after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {seconds:g} s")
        time.sleep(poll)


def launch(world: World, script: str, *args: object, name: str = "job.py",
           envs: dict[str, str] | None = None) -> tuple[Any, str]:
    """The job that runs `script` (written as `name` in the test's folder) with `args`,
    launched with its checkpoints under the test's folder (and `envs` in its spec): (the
    job, its instance)."""
    store, launcher, tmp = world
    path = tmp / name
    path.write_text(script)
    run = " ".join([sys.executable, str(path), *(str(a) for a in args)])
    [job] = service.launch(store, write_spec(tmp, run=run, envs=envs), launcher=launcher,
                           wait_seconds=SETTLE, checkpoint_root=str(tmp / "checkpoints"))
    return job, instance_of(store, job.id)


def saved_then_on(world: World, script: str, *args: object, step: int,
                  saved: int) -> tuple[Any, str]:
    """The job that runs `script` with `go` (a file in the test's folder: it goes on past
    its first save once that exists) and `args`, launched; once its checkpoint is published
    and its instance says that checkpoint's step (`saved`, asserted), let go on until its
    instance says `step`: (the job, its instance)."""
    store, launcher, tmp = world
    go = tmp / "go"
    job, instance = launch(world, script, go, *args)
    wait_for(checkpoints_of(store, job.id).newest_verified)
    wait_for(lambda: launcher.status(instance).checkpoint_step is not None)
    said = launcher.status(instance).checkpoint_step
    assert said == saved, said
    go.touch()
    wait_for(lambda: launcher.status(instance).step == step)
    return job, instance


def instance_of(store: PriceStore, job_id: int) -> str:
    """The job's newest instance."""
    return str(store.jobs.placements(job_id)["instance"].iloc[-1])


def checkpoints_of(store: PriceStore, job_id: int) -> CheckpointStore:
    """The job's checkpoint store."""
    return open_store(store.jobs.get(job_id).checkpoint_location)


def preempt(launcher: LocalLauncher, instance: str) -> None:
    """Take the instance away without notice, and wait until it says so."""
    launcher.preempt(instance)
    wait_for(lambda: launcher.status(instance).state == "preempted")


def replace_folder_with_a_file(root: Path, away: Path) -> None:
    """Turn the store's folder into a file while its agent may still be writing into it:
    a rename is atomic where removing a tree being written is not."""
    away.mkdir()
    for attempt in range(50):
        if root.is_dir():
            root.rename(away / str(attempt))
        try:
            with open(root, "x") as f:
                f.write("not a directory any more")
            return
        except (FileExistsError, IsADirectoryError):
            continue
    raise AssertionError(f"{root} kept coming back as a folder")
