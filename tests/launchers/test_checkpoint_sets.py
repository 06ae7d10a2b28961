"""A job whose checkpoint is two files, one written once (weights, a vocabulary) and one at
every save, run by the local launcher: after more saves than the store keeps, a recovery
starts with both files, byte for byte, and the store still holds every byte its kept
versions name."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from launchers.checkpoints import open_store
from launchers.local import LocalLauncher
from launchers.publisher import ENV_SETTLE, KEEP
from tests.launchers.test_local import OFFERING, spec, wait_for

BLOB_BYTES = 3 << 20

JOB = """
import hashlib, os, pathlib, time
here = pathlib.Path(os.environ["COSTSCHED_CHECKPOINT_DIR"])
found = sorted(p.name for p in here.iterdir() if not p.name.startswith("."))
print("start files:", found, flush=True)
blob = here / "blob.bin"
if blob.exists():
    print("blob sha256", hashlib.sha256(blob.read_bytes()).hexdigest(), flush=True)
else:
    (here / "blob.bin.tmp").write_bytes(bytes(range(256)) * (BLOB_BYTES // 256))
    os.replace(here / "blob.bin.tmp", blob)
step = int((here / "lm.txt").read_text()) if (here / "lm.txt").exists() else 0
print("resumed from step", step, flush=True)
while True:
    step += 1
    (here / "lm.txt.tmp").write_text(str(step))
    os.replace(here / "lm.txt.tmp", here / "lm.txt")
    time.sleep(0.05)
""".replace("BLOB_BYTES", str(BLOB_BYTES))


def test_a_recovery_after_many_saves_starts_with_every_file(tmp_path: Path) -> None:
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=5, poll_seconds=0.1)
    (tmp_path / "job.py").write_text(JOB)
    command = f"{sys.executable} {tmp_path / 'job.py'}"
    store = open_store(str(tmp_path / "store"))
    # each save changes lm.txt alone (the blob is written once): no settle wait needed
    envs = {ENV_SETTLE: "0"}
    first = launcher.launch(spec(tmp_path, "a1", command, offering=OFFERING, envs=envs))
    try:
        wait_for(lambda: (store.list() or [None])[-1] is not None
                 and store.list()[-1].version > KEEP + 2)
    finally:
        launcher.preempt(first.id)

    kept = store.list()
    assert KEEP <= len(kept) <= KEEP + 1, kept  # a kill may come between publish and prune
    assert all(store.verify(c) for c in kept)
    assert all([p.name for p in c.parts] == ["blob.bin", "lm.txt"] for c in kept)
    assert kept[-1].parts[0].version == 1  # the blob's bytes went up once
    stored = {p.relative_to(tmp_path / "store").as_posix()
              for p in (tmp_path / "store").rglob("*") if p.is_file()}
    assert [s for s in stored if s.endswith("blob.bin")] == ["v00000001/blob.bin"]

    second = launcher.launch(spec(tmp_path, "a2", command, offering=OFFERING, envs=envs))
    try:
        wait_for(lambda: "resumed from step" in launcher.logs(second.id))
        log = launcher.logs(second.id)
    finally:
        launcher.terminate(second.id)
    blob = bytes(range(256)) * (BLOB_BYTES // 256)
    assert "start files: ['blob.bin', 'lm.txt']" in log
    assert f"blob sha256 {hashlib.sha256(blob).hexdigest()}" in log
    assert "resumed from step 0" not in log


def test_a_move_carries_every_file_of_the_newest_version(tmp_path: Path) -> None:
    from launchers.carry import carry
    from launchers.publisher import Publisher, restore

    work = tmp_path / "work" / "checkpoints"
    work.mkdir(parents=True)
    source = open_store(str(tmp_path / "here"))
    publisher = Publisher(source, work, settle=0)  # each save is whole
    (work / "vocab.json").write_text('{"a": 1}')
    for step in range(6):
        (work / "state.npz").write_bytes(f"step {step}".encode())
        assert publisher.publish_changed() == 1, publisher.error

    said = carry(str(tmp_path / "here"), str(tmp_path / "there"))

    assert "copied checkpoint version 6" in said
    assert restore(open_store(str(tmp_path / "there")), tmp_path / "moved").version == 1
    assert sorted(p.name for p in (tmp_path / "moved").iterdir()) == ["state.npz",
                                                                       "vocab.json"]
    assert (tmp_path / "moved" / "vocab.json").read_text() == '{"a": 1}'
    assert (tmp_path / "moved" / "state.npz").read_bytes() == b"step 5"
