"""The tiny project follows the job contract's progress rule, so that `status` shows the
README's first local run's steps and speed: the step it is at, written whole to
$COSTSCHED_PROGRESS_FILE; nothing written there where the variable is not set."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2] / "examples" / "tinyproject"


def _train(tmp_path: Path, progress: Path | None) -> None:
    """40 steps of the project in `tmp_path`, its step to `progress` (None: not set)."""
    env = {k: v for k, v in os.environ.items() if k != "COSTSCHED_PROGRESS_FILE"}
    env["CHECKPOINT_DIR"] = str(tmp_path / "ckpt")
    if progress is not None:
        env["COSTSCHED_PROGRESS_FILE"] = str(progress)
    subprocess.run([sys.executable, str(PROJECT / "train.py"), "--steps", "40"], cwd=tmp_path,
                   env=env, check=True, capture_output=True, timeout=120)


def test_the_step_is_written_to_the_progress_file_whole(tmp_path: Path) -> None:
    _train(tmp_path, tmp_path / "progress")
    assert (tmp_path / "progress").read_text() == "40\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt", "progress"]  # no .tmp left


def test_without_the_variable_nothing_is_written_beside_the_checkpoints(tmp_path: Path) -> None:
    _train(tmp_path, None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt"]
