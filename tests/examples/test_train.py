"""examples/train.py: SIGTERM checkpoints; a resumed run ends where an unbroken one does."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "train.py"


def run(ckpt: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--steps", "2000", "--checkpoint-dir",
                           str(ckpt), *extra], capture_output=True, text=True, timeout=120)


@pytest.mark.results
def test_sigterm_then_resume_matches_an_unbroken_run(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    proc = subprocess.Popen([sys.executable, str(SCRIPT), "--steps", "2000", "--checkpoint-dir",
                             str(broken), "--step-seconds", "0.002"],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "started"
    time.sleep(0.5)  # a few hundred of the 2,000 steps (2 ms each)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert "SIGTERM: checkpointed at step" in out
    stopped_at = int(np.load(broken / "checkpoint.npz")["step"])
    assert 0 < stopped_at < 2000
    resumed = run(broken)
    assert f"resumed at step {stopped_at}" in resumed.stdout
    unbroken = tmp_path / "unbroken"
    assert run(unbroken).returncode == 0
    a, b = np.load(broken / "checkpoint.npz"), np.load(unbroken / "checkpoint.npz")
    assert int(a["step"]) == int(b["step"]) == 2000
    np.testing.assert_array_equal(a["w"], b["w"])


def stop_after(ckpt: Path, seconds: float) -> int:
    """Run until SIGTERM after `seconds`; the step it checkpointed at."""
    proc = subprocess.Popen([sys.executable, str(SCRIPT), "--steps", "2000", "--checkpoint-dir",
                             str(ckpt), "--step-seconds", "0.002"],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    proc.stdout.readline()  # "started" or "resumed at step n": the handler is installed
    time.sleep(seconds)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
    return int(np.load(ckpt / "checkpoint.npz")["step"])


@pytest.mark.results
def test_stopped_twice_and_moved_gives_the_same_bytes(tmp_path: Path) -> None:
    first, second, third = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    at1 = stop_after(first, 0.3)
    shutil.copytree(first, second)  # moved: the checkpoint copied to another directory
    at2 = stop_after(second, 0.3)
    assert 0 < at1 < at2 < 2000
    shutil.copytree(second, third)
    moved = run(third, "--result", str(tmp_path / "moved.npy"))
    assert f"resumed at step {at2}" in moved.stdout
    unbroken = run(tmp_path / "unbroken", "--result", str(tmp_path / "unbroken.npy"))
    assert moved.returncode == unbroken.returncode == 0
    assert (tmp_path / "moved.npy").read_bytes() == (tmp_path / "unbroken.npy").read_bytes()
    digest = hashlib.sha256((tmp_path / "unbroken.npy").read_bytes()).hexdigest()
    assert f"weights sha256 {digest}" in moved.stdout.splitlines()[-1]
    assert f"weights sha256 {digest}" in unbroken.stdout.splitlines()[-1]


def test_checkpoint_dir_from_the_job_contract_environment(tmp_path: Path) -> None:
    def run_with(env: dict[str, str]) -> None:
        subprocess.run([sys.executable, str(SCRIPT), "--steps", "5"], cwd=tmp_path, check=True,
                       env={**os.environ, **env}, capture_output=True, timeout=60)

    run_with({"COSTSCHED_CHECKPOINT_DIR": str(tmp_path / "cs"),
              "CHECKPOINT_DIR": str(tmp_path / "plain")})
    assert (tmp_path / "cs" / "checkpoint.npz").is_file()
    assert not (tmp_path / "plain").exists()
    env = {k: v for k, v in os.environ.items() if k != "COSTSCHED_CHECKPOINT_DIR"}
    subprocess.run([sys.executable, str(SCRIPT), "--steps", "5"], cwd=tmp_path, check=True,
                   env={**env, "CHECKPOINT_DIR": str(tmp_path / "plain")},
                   capture_output=True, timeout=60)
    assert (tmp_path / "plain" / "checkpoint.npz").is_file()


def test_an_unreadable_checkpoint_is_refused_and_kept(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "checkpoint.npz").write_bytes(b"PK\x03\x04 truncated")
    result = run(ckpt)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "checkpoint" in result.stderr
    assert (ckpt / "checkpoint.npz").read_bytes() == b"PK\x03\x04 truncated"


def test_every_save_writes_its_step_into_the_commit_marker(tmp_path: Path) -> None:
    """The job contract's marker, written after each save, holds the step saved: the step
    costsched gives the checkpoint, whatever the job reported around it."""
    ckpt = tmp_path / "ckpt"
    at = stop_after(ckpt, 0.3)
    assert (ckpt / "COSTSCHED_COMMIT").read_text() == f"{at}\n"
    assert (ckpt / "COSTSCHED_COMMIT").stat().st_mtime_ns >= \
        (ckpt / "checkpoint.npz").stat().st_mtime_ns  # newest of all: the save is whole
    assert run(ckpt, "--checkpoint-every", "0.05").returncode == 0
    assert (ckpt / "COSTSCHED_COMMIT").read_text() == "2000\n"
