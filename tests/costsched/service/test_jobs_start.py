"""`start` and `logs --follow`: a stopped job starts again from its newest verified
checkpoint with the code it was launched with, from any directory, and its output is
followed across instances until it ends (local launcher, real subprocesses)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.store import PriceStore
from launchers.checkpoints import open_store
from launchers.local import LocalLauncher
from tests.job_folders import folder_of

PROJECT = Path(__file__).resolve().parents[3] / "examples" / "tinyproject"
AT = pd.Timestamp("2026-01-01T00:00:00Z").to_pydatetime()
RUN = "python train.py --steps 500 --step-seconds 0.01 --checkpoint-every 0.2"


@pytest.mark.results
def test_stop_then_start_resumes_with_the_same_code(tmp_path: Path, db_path: Path, cli,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "tinyproject"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns("checkpoints", "__pycache__"))
    spec = yaml.safe_load((project / "costsched.yaml").read_text())
    spec.update(run=RUN, steps=500, setup="echo set up >> ../../setups")  # (its own total)
    (project / "job.yaml").write_text(yaml.safe_dump(spec))
    store = PriceStore(f"sqlite:///{db_path}")
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=0.9, effective_at=AT, source="test")]))
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    launcher = LocalLauncher(tmp_path / "instances", poll_seconds=0.2)
    monkeypatch.chdir(project)
    [job] = service.launch(store, ["job.yaml"], launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    checkpoints = open_store(str(tmp_path / "ckpt" / f"{folder_of(store, job.id)}"))
    deadline = time.monotonic() + 60
    while not checkpoints.list():
        assert time.monotonic() < deadline, "no checkpoint published"
        time.sleep(0.05)
    assert service.stop(store, launcher, job.id).state == "stopped"
    stopped = checkpoints.newest_verified()
    step = int(np.load(checkpoints.fetch(stopped, tmp_path / "stopped"))["step"])
    assert 0 < step < 500

    # The project changes meanwhile; the job keeps the code it was launched with.
    (project / "tiny" / "model.py").write_text("raise SystemExit('edited since launch')\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert service.start(store, launcher, job.id).state in ("launching", "running")
    with pytest.raises(InvalidInput, match=r"is (launching|running): only a stopped or failed job"):
        service.start(store, launcher, job.id)

    shown = "".join(service.follow(store, launcher, job.id, poll=0.1))
    assert store.jobs.get(job.id).state == "succeeded"
    assert shown.startswith("--- instance ")
    assert f"resumed at step {step}" in shown and "done at step 500" in shown
    assert (tmp_path / "instances" / "setups").read_text() == "set up\nset up\n"  # each

    reference = tmp_path / "reference"
    subprocess.run([sys.executable, "train.py", "--steps", "500"], cwd=PROJECT, check=True,
                   env={**os.environ, "CHECKPOINT_DIR": str(reference)}, capture_output=True)
    result = [c.part("result.npy") for c in checkpoints.list() if c.part("result.npy")][-1]
    got = checkpoints.fetch(result, tmp_path / "got")
    assert got.read_bytes() == (reference / "result.npy").read_bytes()

    # the CLI: a finished job's output once, and one line for a job that is not stopped
    followed = cli("logs", str(job.id), "--follow")
    assert followed.exit_code == 0 and "done at step 500" in followed.output
    # --all: each instance's output under its line, the one before the stop first.
    every = cli("logs", str(job.id), "--all")
    heads = [line for line in every.output.splitlines() if line.startswith("--- instance ")]
    assert every.exit_code == 0 and len(heads) == 2, every.output
    before, after = every.output.split(heads[1] + "\n")
    assert before.startswith(heads[0]) and before.strip() != heads[0]
    assert f"resumed at step {step}" not in before and f"resumed at step {step}" in after
    assert after == cli("logs", str(job.id)).stdout  # the last instance's, as without --all
    assert "--all and --follow cannot be given together" in cli("logs", str(job.id), "--all",
                                                     "--follow").output
    refused = cli("start", str(job.id))
    assert refused.exit_code != 0
    assert ("has succeeded: only a stopped or failed job, or one that ended short of its "
            "steps, can be started again") in " ".join(refused.output.split())


def test_a_workdir_above_the_limit_is_refused_before_anything_is_stored(
        tmp_path: Path, db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "train.py").write_text("print(1)\n")
    (project / "data.bin").write_bytes(b"\0" * 300_000)
    (project / "job.yaml").write_text("name: big\nworkdir: .\nrun: python train.py\n"
                                      "throughputs: {V100: 1}\nsteps: 10\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("COSTSCHED_CONFIG", raising=False)
    monkeypatch.setenv("COSTSCHED_LAUNCH_MAX_CODE_MB", "0.25")
    store = PriceStore(f"sqlite:///{db_path}")
    launcher = LocalLauncher(tmp_path / "instances")
    with pytest.raises(InvalidInput) as caught:
        service.launch(store, [project / "job.yaml"], launcher=launcher,
                       checkpoint_root=str(tmp_path / "ckpt"))
    assert str(caught.value) == (
        f"{project / 'job.yaml'}: job 'big': field workdir {project}: 0.3 MB to pack, "
        "above the limit of 0.2 MB (config launch.max_code_mb); largest: data.bin (0.3 MB), "
        f"job.yaml (0.0 MB), train.py (0.0 MB); exclude data and outputs in "
        f"{project / '.costschedignore'} (.gitignore syntax)")
    assert store.jobs.list().empty and not (tmp_path / "ckpt").exists()
    (project / ".costschedignore").write_text("*.bin\n")  # as the message says
    from launchers.codepack import pack_workdir

    assert pack_workdir(str(project), "job.yaml")["files"] == 3
