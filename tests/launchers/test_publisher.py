"""Publishing checkpoints to a store that is full or failing: no empty version directory is
left behind, the store is pruned so that publishing recovers, and the failure is visible in
the instance's status (and so in `costsched status`) until a publish succeeds."""

from __future__ import annotations

import errno
import sys
from pathlib import Path

import pytest

from costsched.model import Offering
from launchers.base import LaunchSpec
from launchers.checkpoints.local import LocalStore
from launchers.local import LocalLauncher
from launchers.publisher import Publisher
from tests.launchers.test_local import wait_for
from tests.real_jobs import replace_folder_with_a_file

TRAIN = Path(__file__).resolve().parents[2] / "examples" / "train.py"


@pytest.fixture()
def room_for(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    """room_for(n): the local store's disk holds n versions; writing one more fails with
    ENOSPC half-way through the copy (after its version directory was made)."""
    real = LocalStore._put_part

    def make(n: int) -> None:
        def put_part(self: LocalStore, version: int, part: object, content: object) -> bool:
            used = [p for p in self.root.iterdir() if p.is_dir() and any(p.iterdir())]
            if len(used) >= n:
                folder = self.root / f"v{version:08d}"
                (folder / ".partial").write_bytes(b"x" * 10)
                raise OSError(errno.ENOSPC, "No space left on device")
            return real(self, version, part, content)  # type: ignore[arg-type]

        monkeypatch.setattr(LocalStore, "_put_part", put_part)

    return make


def version_dirs(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.is_dir())


def test_a_failed_publish_leaves_no_version_directory(tmp_path: Path, room_for) -> None:
    store = LocalStore(tmp_path / "store")
    source = tmp_path / "ckpt.bin"
    source.write_bytes(b"weights")
    store.publish(source)
    room_for(1)
    for _ in range(3):
        with pytest.raises(OSError, match="No space left"):
            store.publish(source)
    assert len(version_dirs(tmp_path / "store")) == 1
    assert [c.version for c in store.list()] == [1]


def test_a_full_store_is_pruned_so_publishing_recovers(tmp_path: Path, room_for) -> None:
    store = LocalStore(tmp_path / "store")
    work = tmp_path / "work" / "checkpoints"
    work.mkdir(parents=True)
    publisher = Publisher(store, work, keep=3, settle=0)  # (each look: what is there)
    room_for(2)
    for step in range(4):
        (work / "model.pt").write_bytes(f"step {step}".encode() * 100)
        assert publisher.publish_changed() == 1, publisher.error
        assert publisher.error == ""
    # Room for two: each publish past the second made room by pruning to the newest.
    versions = store.list()
    assert versions[-1].version == publisher.version
    assert len(versions) <= 2 and store.verify(versions[-1])
    assert len(version_dirs(tmp_path / "store")) == len(versions)
    room_for(0)  # nothing fits any more: the failure is kept for status
    (work / "model.pt").write_bytes(b"step 5")
    assert publisher.publish_changed() == 0
    assert "No space left on device" in publisher.error
    assert store.newest_verified() is not None  # the newest verified one is never pruned


def test_a_failing_store_shows_in_the_instance_status(tmp_path: Path) -> None:
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=5, poll_seconds=0.1)
    root = tmp_path / "store"
    offering = Offering("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "V100", 1)
    command = (f"{sys.executable} {TRAIN} --steps 100000 --step-seconds 0.01 "
               "--checkpoint-every 0.1")
    instance = launcher.launch(LaunchSpec(job_id=9, job_name="t", command=command,
                                          offering=offering, checkpoint_uri=str(root),
                                          attempt="a0"))
    try:
        wait_for(lambda: LocalStore(root).list())
        replace_folder_with_a_file(root, tmp_path / "moved-away")  # every publish fails now
        wait_for(lambda: launcher.status(instance.id).checkpoint_error)
        seen = launcher.status(instance.id)
        assert seen.state == "running" and "checkpoint" in seen.checkpoint_error
        # and the job's step is reported as it trains on
        wait_for(lambda: (launcher.status(instance.id).step or 0) > 0)
    finally:
        launcher.terminate(instance.id)


def test_a_restore_bounded_by_a_version_takes_none_newer(tmp_path: Path) -> None:
    """A gang's other nodes restore the version rank 0 left a round with: a checkpoint
    rank 0 published later, in the new round, is not theirs to start from."""
    from launchers.publisher import restore

    store = LocalStore(tmp_path / "store")
    for step in (1, 2, 3):
        (tmp_path / "state.txt").write_text(f"step {step}")
        store.publish(tmp_path / "state.txt")
    versions = [c.version for c in store.list()]
    assert restore(store, tmp_path / "newest").version == versions[-1]
    assert (tmp_path / "newest" / "state.txt").read_text() == "step 3"
    assert restore(store, tmp_path / "bounded", at_most=versions[1]).version == versions[1]
    assert (tmp_path / "bounded" / "state.txt").read_text() == "step 2"
