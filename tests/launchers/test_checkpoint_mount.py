"""A task written for SkyPilot writes its checkpoints where it mounts its checkpoint
bucket (`/checkpoint`): the agent makes that path its checkpoint directory, so they are
published as $CHECKPOINT_DIR's are."""

from __future__ import annotations

from pathlib import Path

from launchers import mounts
from launchers.checkpoints import open_store
from tests.launchers.test_agent import finish, start_agent


def test_the_tasks_checkpoint_path_is_the_checkpoint_directory(tmp_path: Path) -> None:
    root = tmp_path / "mnt"  # the mount root the local launcher gives (/ on a cloud)
    status, out = finish(start_agent(
        tmp_path, f'echo step-9 > "{root}/checkpoint/model.txt"', "--checkpoint-at",
        "/checkpoint", "--mount-root", str(root)), tmp_path)
    assert status["state"] == "succeeded", (status, out)
    store = open_store(str(tmp_path / "store"))
    [published] = [c.part("model.txt") for c in store.list() if c.part("model.txt")]
    assert store.fetch(published, tmp_path / "got").read_text() == "step-9\n"
    assert "checkpoint directory (published to the checkpoint bucket)" in out


def test_a_path_in_use_is_left_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "checkpoint").mkdir()
    (tmp_path / "checkpoint" / "old.pt").write_text("x")
    said = mounts.link_checkpoints("/checkpoint", tmp_path / "work" / "checkpoints",
                                   str(tmp_path))
    assert "exists: left as it is" in said and not (tmp_path / "checkpoint").is_symlink()
    assert mounts.agent_args({"checkpoint_mount": "/ckpt"}, "/r") == [
        "--checkpoint-at", "/ckpt", "--mount-root", "/r"]


def test_a_mount_that_cannot_be_made_fails_the_attempt_before_setup(tmp_path: Path) -> None:
    """A local path gone since the launch: the attempt fails in phase file_mounts, in the
    mount's own words (no Python class name), and the job's command never runs."""
    import json

    gone = tmp_path / "gone"
    status, out = finish(start_agent(
        tmp_path, f'touch "{tmp_path}/ran"', "--mounts",
        json.dumps([{"path": "/cfg", "source": str(gone), "mode": "COPY"}]),
        "--mount-root", str(tmp_path / "mnt")), tmp_path)
    assert status["state"] == "failed" and status["phase"] == "file_mounts", (status, out)
    assert status["detail"] == f"local path {gone}: no such file or folder on this machine"
    assert not (tmp_path / "ran").exists()
