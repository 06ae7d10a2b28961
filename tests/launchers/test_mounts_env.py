"""A task's file mounts as the job reaches them (launchers.mounts): on the local launcher
they go under the instance's folder, which the job has as $COSTSCHED_MOUNTS, so that
"$COSTSCHED_MOUNTS/data/ratings" is the mount at /data/ratings (a real agent); where the
mounts are at their own paths it is '', and the same line reads /data/ratings."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from launchers import mounts
from launchers.local import LocalLauncher
from tests.launchers.test_local import spec, wait_state

READ = 'cat "$COSTSCHED_MOUNTS/data/ratings/part.csv" > out.txt; echo "[$COSTSCHED_MOUNTS]"'


@pytest.fixture
def launcher(tmp_path: Path) -> LocalLauncher:
    return LocalLauncher(tmp_path / "instances", grace_seconds=5, poll_seconds=0.1)


def test_a_local_jobs_mount_is_at_costsched_mounts(tmp_path: Path,
                                                   launcher: LocalLauncher) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "part.csv").write_text("user,item\n1,2\n")
    task = {"mounts": [{"path": "/data/ratings", "source": str(data), "mode": "COPY"}]}
    instance = launcher.launch(dataclasses.replace(spec(tmp_path, "a1", command=READ),
                                                   task=task))
    state = wait_state(launcher, instance.id, "succeeded", "failed")
    log = launcher.logs(instance.id)
    assert state == "succeeded", log
    [folder] = (tmp_path / "instances").glob("*/code")
    assert (folder / "out.txt").read_text() == "user,item\n1,2\n"
    assert f"[{folder.parent / 'mounts'}]" in log
    # the job's log names the variable where it says the mounts moved
    assert f"which the job has as $COSTSCHED_MOUNTS (their paths made relative to it: " \
        f"/data/ratings is {folder.parent / 'mounts' / 'data' / 'ratings'}, " \
        "$COSTSCHED_MOUNTS/data/ratings;" in log


def test_a_job_without_mounts_has_no_mounts_variable(tmp_path: Path,
                                                     launcher: LocalLauncher) -> None:
    command = 'echo "[${COSTSCHED_MOUNTS-unset}]"'
    instance = launcher.launch(spec(tmp_path, "a1", command=command))
    assert wait_state(launcher, instance.id, "succeeded", "failed") == "succeeded"
    assert "[unset]" in launcher.logs(instance.id)


def test_the_path_a_job_reads_a_mount_at() -> None:
    assert mounts.as_the_job_reads("/data/ratings") == "$COSTSCHED_MOUNTS/data/ratings"
    assert mounts.as_the_job_reads("/data/") == "$COSTSCHED_MOUNTS/data"
