"""examples/train.py: SIGTERM checkpoints; a resumed run ends where an unbroken one does."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "train.py"


def run(ckpt: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--steps", "2000", "--checkpoint-dir",
                           str(ckpt), *extra], capture_output=True, text=True, timeout=120)


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
