"""examples/tinyproject as a new user runs it: a fresh clone, launched from its folder with
the real CLI and the local launcher, preempted without notice, recovered by `costsched
status` run from another directory, finishing with the bytes of an uninterrupted run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from costsched.service import import_prices
from launchers.checkpoints import open_store

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "examples" / "tinyproject"
PRICES = ROOT / "examples" / "demo" / "prices-before.csv"
COSTSCHED = Path(sys.executable).parent / "costsched"


def fresh_clone(tmp_path: Path) -> Path:
    clone = tmp_path / "clone" / "tinyproject"
    shutil.copytree(PROJECT, clone, ignore=shutil.ignore_patterns("checkpoints", "__pycache__"))
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=clone, check=True)
    subprocess.run([*git, "add", "."], cwd=clone, check=True)
    subprocess.run([*git, "commit", "-qm", "tinyproject"], cwd=clone, check=True)
    (clone / "checkpoints").mkdir()  # a local run's leftovers: ignored, never packed
    (clone / "checkpoints" / "state.npz").write_bytes(b"stale")
    return clone


def cli(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess:
    # The timeout bounds a hang; a busy machine may take minutes where a quiet one takes
    # seconds.
    done = subprocess.run([str(COSTSCHED), *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def uninterrupted(clone: Path, tmp_path: Path) -> bytes:
    env = {**os.environ, "CHECKPOINT_DIR": str(tmp_path / "reference")}
    subprocess.run([sys.executable, "train.py", "--steps", "600"], cwd=clone, env=env,
                   check=True, capture_output=True)
    return (tmp_path / "reference" / "result.npy").read_bytes()


@pytest.mark.results
def test_fresh_clone_launched_preempted_recovered_from_elsewhere(tmp_path: Path) -> None:
    clone = fresh_clone(tmp_path)
    # The job holds after a step, checkpointed, while this file exists: it is taken away
    # then, never after it ended, however slowly the machine runs it or this test.
    hold = tmp_path / "hold"
    hold.touch()
    task = clone / "sky.yaml"
    run = "python train.py --steps 600 --step-seconds 0.01"
    assert run in task.read_text()
    task.write_text(task.read_text().replace(run, f"{run} --hold-while {hold}"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    xdg = tmp_path / "xdg"
    env = {**os.environ, "COSTSCHED_DB": str(tmp_path / "store.sqlite"),
           "COSTSCHED_INSTANCES": str(tmp_path / "instances"),
           "XDG_DATA_HOME": str(xdg / "data"), "XDG_CACHE_HOME": str(xdg / "cache"),
           "XDG_CONFIG_HOME": str(xdg / "config")}
    env.pop("COSTSCHED_CONFIG", None)
    import_prices(str(tmp_path / "store.sqlite"), [PRICES], partial=False)  # as --whole
    cli(env, clone, "launch", "sky.yaml", "--wait", "30")

    [folder] = (xdg / "data" / "costsched" / "checkpoints").glob("job-1-*")  # this store's
    checkpoints = open_store(str(folder))
    deadline = time.monotonic() + 300  # a bound on a hang, not on the machine's speed
    while not any(c.part("state.npz") for c in checkpoints.list()):
        assert time.monotonic() < deadline, "no checkpoint published"
        time.sleep(0.1)
    preempted = subprocess.run(
        [sys.executable, "-m", "launchers.local", "preempt", "1", "--base-dir",
         str(tmp_path / "instances")], cwd=elsewhere, env=env, capture_output=True, text=True)
    assert preempted.returncode == 0, preempted.stdout + preempted.stderr
    hold.unlink()  # the next instance runs to the end

    shown = json.loads(cli(env, elsewhere, "status", "--wait", "600", "--json").stdout)
    job = shown["jobs"][0] if isinstance(shown, dict) else shown[0]
    assert job["state"] == "succeeded", job

    first, second = sorted(p for p in (tmp_path / "instances").iterdir()
                           if not p.name.startswith("."))  # the launcher's own files
    first_log = (first / "job.log").read_text()
    second_log = (second / "job.log").read_text()
    assert "started at step 0" in first_log and "done at step" not in first_log
    resumed = [line for line in second_log.splitlines() if line.startswith("resumed at step")]
    assert resumed and int(resumed[0].split()[-1]) > 0, second_log
    for instance in (first, second):  # each instance unpacked the code and ran setup
        assert (instance / "code" / "tiny" / "model.py").is_file()
        assert not (instance / "code" / "notes").exists()  # .costschedignore
        assert not (instance / "code" / "checkpoints").exists()  # .gitignore
        assert "costsched: setup done" in (instance / "job.log").read_text()

    result = [c.part("result.npy") for c in checkpoints.list() if c.part("result.npy")][-1]
    got = checkpoints.fetch(result, tmp_path / "got")
    assert got.read_bytes() == uninterrupted(clone, tmp_path)
