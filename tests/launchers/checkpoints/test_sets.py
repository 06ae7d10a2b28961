"""A checkpoint is the directory's complete set of files: a version names every file, a
file that did not change is named (not uploaded again), retention never deletes bytes a
kept version names, and a restore or a copy brings back every file. Against every store."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from launchers.checkpoints.local import LocalStore
from tests.launchers.checkpoints.conftest import Backend

BLOB = bytes(range(256)) * 4096  # 1 MiB written once
TS = "2024-01-01T00:00:00+00:00"


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def saves(backend: Backend, tmp_path: Path, count: int) -> list:
    """blob.bin published once, then lm.npz at every save, each version naming both."""
    job = tmp_path / "job"
    first = backend.store.publish_files({"blob.bin": write(job / "blob.bin", BLOB),
                                         "lm.npz": write(job / "lm.npz", b"step 0")})
    versions = [first]
    for step in range(1, count):
        versions.append(backend.store.publish_files(
            {"lm.npz": write(job / "lm.npz", f"step {step}".encode())},
            carried=versions[-1].parts))
    return versions


def test_a_version_names_every_file_and_uploads_only_what_changed(
        backend: Backend, tmp_path: Path) -> None:
    first, second = saves(backend, tmp_path, 2)

    assert [(p.name, p.version) for p in second.parts] == [("blob.bin", 1), ("lm.npz", 2)]
    assert second.size == len(BLOB) + len(b"step 1")
    assert backend.listing() == {"v00000001/blob.bin", "v00000001/lm.npz", "v00000001.json",
                                 "v00000002/lm.npz", "v00000002.json"}
    manifest = json.loads(backend.get("v00000002.json"))
    assert manifest["files"] == [
        {"name": "blob.bin", "size": len(BLOB), "sha256": hashlib.sha256(BLOB).hexdigest(),
         "version": 1},
        {"name": "lm.npz", "size": 6, "sha256": hashlib.sha256(b"step 1").hexdigest(),
         "version": 2}]
    assert backend.store.list() == [first, second]
    assert backend.store.verify(second)


def test_after_more_saves_than_kept_a_restore_brings_back_every_file(
        backend: Backend, tmp_path: Path) -> None:
    versions = saves(backend, tmp_path, 6)

    deleted = backend.store.prune(keep=3)

    assert deleted == versions[:3]
    assert backend.store.list() == versions[3:]
    # the blob's bytes stay where version 1 put them: versions 4-6 name them
    assert "v00000001/blob.bin" in backend.listing()
    assert "v00000001/lm.npz" not in backend.listing()
    assert {"v00000001.json", "v00000002/lm.npz", "v00000003.json"}.isdisjoint(
        backend.listing())
    dest = tmp_path / "resume"
    restored = backend.store.restore(dest)
    assert restored == versions[-1]
    assert sorted(p.name for p in dest.iterdir()) == ["blob.bin", "lm.npz"]
    assert (dest / "blob.bin").read_bytes() == BLOB
    assert (dest / "lm.npz").read_bytes() == b"step 5"


def test_bytes_go_once_no_kept_version_names_them(backend: Backend, tmp_path: Path) -> None:
    versions = saves(backend, tmp_path, 3)
    job = tmp_path / "job"
    newer = backend.store.publish_files({"blob.bin": write(job / "blob.bin", b"new blob")},
                                        carried=versions[-1].parts)
    backend.store.prune(keep=1)

    assert backend.store.list() == [newer]
    assert backend.listing() == {"v00000003/lm.npz", "v00000004/blob.bin", "v00000004.json"}
    assert backend.store.verify(newer)


def test_a_version_whose_carried_file_is_gone_does_not_verify(
        backend: Backend, tmp_path: Path) -> None:
    versions = saves(backend, tmp_path, 3)
    backend.remove("v00000001/blob.bin")

    assert not backend.store.verify(versions[-1])
    assert backend.store.newest_verified() is None


def test_a_store_of_the_old_layout_restores(backend: Backend, tmp_path: Path) -> None:
    """Versions of one file each, as stores were written before versions were sets."""
    for version, (name, data) in enumerate([("blob.bin", b"blob"), ("lm.npz", b"s1"),
                                            ("lm.npz", b"s2")], start=1):
        backend.put(f"v{version:08d}/{name}", data)
        backend.put(f"v{version:08d}.json", json.dumps(
            {"version": version, "name": name, "size": len(data),
             "sha256": hashlib.sha256(data).hexdigest(), "published_at": TS}).encode())

    listed = backend.store.list()
    assert [(c.version, c.name, [p.name for p in c.parts]) for c in listed] == [
        (1, "blob.bin", ["blob.bin"]), (2, "lm.npz", ["lm.npz"]), (3, "lm.npz", ["lm.npz"])]
    dest = tmp_path / "resume"
    assert backend.store.restore(dest).version == 3
    assert (dest / "lm.npz").read_bytes() == b"s2"
    # the next version builds on it
    after = backend.store.publish_files({"extra.txt": write(tmp_path / "extra.txt", b"x")},
                                        carried=listed[-1].parts)
    assert [(p.name, p.version) for p in after.parts] == [("extra.txt", 4), ("lm.npz", 3)]
    assert backend.store.verify(after)


def test_a_copy_brings_every_file_into_another_store(backend: Backend, tmp_path: Path) -> None:
    versions = saves(backend, tmp_path, 4)
    backend.store.prune(keep=2)
    there = LocalStore(tmp_path / "there")

    copy = there.copy_in(backend.store, versions[-1])

    assert copy.version == 1 and copy.sha256 == versions[-1].sha256
    assert [(p.name, p.version) for p in copy.parts] == [("blob.bin", 1), ("lm.npz", 1)]
    dest = tmp_path / "moved"
    assert there.restore(dest) == copy
    assert (dest / "blob.bin").read_bytes() == BLOB
    assert (dest / "lm.npz").read_bytes() == b"step 3"


def test_a_copy_from_a_local_store_into_each_store(backend: Backend, tmp_path: Path) -> None:
    here = LocalStore(tmp_path / "here")
    job = tmp_path / "job"
    first = here.publish_files({"blob.bin": write(job / "blob.bin", BLOB),
                                "lm.npz": write(job / "lm.npz", b"a")})
    second = here.publish_files({"lm.npz": write(job / "lm.npz", b"b")}, carried=first.parts)

    copy = backend.store.copy_in(here, second)

    assert backend.listing() == {"v00000001/blob.bin", "v00000001/lm.npz", "v00000001.json"}
    dest = tmp_path / "moved"
    assert backend.store.restore(dest) == copy
    assert (dest / "blob.bin").read_bytes() == BLOB and (dest / "lm.npz").read_bytes() == b"b"
