"""The checkpoint store contract, run against every store on its real backend."""

from __future__ import annotations

import hashlib
import json
import threading
from datetime import datetime
from pathlib import Path

import pytest

from costsched.model import InvalidInput
from launchers.checkpoints import CorruptCheckpoint
from tests.launchers.checkpoints.conftest import Backend


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def publish_all(backend: Backend, tmp_path: Path, *payloads: bytes) -> list:
    return [backend.store.publish(write(tmp_path / "job" / "checkpoint.npz", data))
            for data in payloads]


def test_publish_lays_out_data_then_manifest(backend: Backend, tmp_path: Path) -> None:
    first, second = publish_all(backend, tmp_path, b"step 10" * 100, b"step 20")

    assert (first.version, second.version) == (1, 2)
    assert second.name == "checkpoint.npz"
    assert second.size == len(b"step 20")
    assert second.sha256 == hashlib.sha256(b"step 20").hexdigest()
    assert backend.listing() == {"v00000001/checkpoint.npz", "v00000001.json",
                              "v00000002/checkpoint.npz", "v00000002.json"}
    manifest = json.loads(backend.get("v00000002.json"))
    assert manifest == {"version": 2, "name": "checkpoint.npz", "size": second.size,
                        "sha256": second.sha256,
                        "published_at": second.published_at.isoformat()}
    assert datetime.fromisoformat(manifest["published_at"]).tzinfo is not None
    assert backend.get("v00000001/checkpoint.npz") == b"step 10" * 100
    assert backend.store.list() == [first, second]


def test_restore_brings_back_the_newest(backend: Backend, tmp_path: Path) -> None:
    publish_all(backend, tmp_path, b"old", b"newest bytes")
    dest = tmp_path / "resume"

    restored = backend.store.restore(dest)

    assert restored is not None and restored.version == 2
    assert (dest / "checkpoint.npz").read_bytes() == b"newest bytes"
    assert [p.name for p in dest.iterdir()] == ["checkpoint.npz"]  # no temp file left


def test_publish_under_another_name(backend: Backend, tmp_path: Path) -> None:
    checkpoint = backend.store.publish(write(tmp_path / "a.bin", b"x"), name="model.pt")
    assert checkpoint.name == "model.pt"
    assert "v00000001/model.pt" in backend.listing()


@pytest.mark.parametrize("name", ["../escape", "/abs", "a//b", "a/../b", "..", "", "bad\nname"])
def test_a_name_that_is_not_a_path_below_the_directory_is_refused(
        backend: Backend, tmp_path: Path, name: str) -> None:
    with pytest.raises(InvalidInput, match="checkpoint name"):
        backend.store.publish(write(tmp_path / "a.bin", b"x"), name=name)
    assert backend.listing() == set()


def test_publishing_a_missing_file_names_it(backend: Backend, tmp_path: Path) -> None:
    missing = tmp_path / "nope.npz"
    with pytest.raises(InvalidInput, match=f"checkpoint file {missing}: not found"):
        backend.store.publish(missing)
    with pytest.raises(InvalidInput, match="not a regular file"):
        backend.store.publish(tmp_path)
    assert backend.listing() == set()


@pytest.mark.parametrize("damage", ["same size", "truncated", "grown"])
def test_corrupt_data_is_never_restored(backend: Backend, tmp_path: Path, damage: str) -> None:
    good, bad = publish_all(backend, tmp_path, b"good state", b"later state")
    stored = backend.get("v00000002/checkpoint.npz")
    broken = {"same size": b"X" + stored[1:], "truncated": stored[:4],
              "grown": stored + b"!"}[damage]
    backend.put("v00000002/checkpoint.npz", broken)
    dest = write(tmp_path / "resume" / "checkpoint.npz", b"what the job has now")

    assert backend.store.verify(good) and not backend.store.verify(bad)
    with pytest.raises(CorruptCheckpoint, match="version 2 .*manifest says"):
        backend.store.fetch(bad, dest.parent)
    assert [p.name for p in dest.parent.iterdir()] == ["checkpoint.npz"]
    assert dest.read_bytes() == b"what the job has now"  # untouched by the failed fetch
    assert backend.store.newest_verified() == good
    assert backend.store.restore(dest.parent) == good
    assert dest.read_bytes() == b"good state"


def test_a_manifest_without_data(backend: Backend, tmp_path: Path) -> None:
    good, orphan = publish_all(backend, tmp_path, b"one", b"two")
    backend.remove("v00000002/checkpoint.npz")

    assert backend.store.list() == [good, orphan]  # committed, but its data is gone
    assert not backend.store.verify(orphan)
    with pytest.raises(CorruptCheckpoint, match="version 2 .*data missing"):
        backend.store.fetch(orphan, tmp_path / "resume")
    assert list((tmp_path / "resume").iterdir()) == []
    assert backend.store.newest_verified() == good


def test_a_crash_between_data_and_manifest(backend: Backend, tmp_path: Path) -> None:
    (first,) = publish_all(backend, tmp_path, b"one")
    backend.put("v00000002/checkpoint.npz", b"half of an upl")  # no manifest followed

    assert backend.store.list() == [first]
    assert backend.store.newest_verified() == first
    (after,) = publish_all(backend, tmp_path, b"three")
    assert after.version == 3  # the unfinished version's number is not reused
    assert backend.get("v00000002/checkpoint.npz") == b"half of an upl"


@pytest.mark.parametrize("manifest", [
    b"{not json", b"[]",
    json.dumps({"version": 9, "name": "c", "size": 1, "sha256": "0" * 64,
                "published_at": "2024-01-01T00:00:00+00:00"}).encode(),
    json.dumps({"version": 2, "name": "../../etc/passwd", "size": 1, "sha256": "0" * 64,
                "published_at": "2024-01-01T00:00:00+00:00"}).encode(),
    json.dumps({"version": 2, "name": "c", "size": -1, "sha256": "0" * 64,
                "published_at": "2024-01-01T00:00:00+00:00"}).encode(),
    json.dumps({"version": 2, "name": "c", "size": 1, "sha256": "xyz",
                "published_at": "2024-01-01T00:00:00+00:00"}).encode(),
    json.dumps({"version": 2, "name": "c", "size": 1, "sha256": "0" * 64,
                "published_at": "yesterday"}).encode(),
])
def test_a_malformed_manifest_is_not_listed(backend: Backend, tmp_path: Path,
                                            manifest: bytes) -> None:
    (first,) = publish_all(backend, tmp_path, b"one")
    backend.put("v00000002.json", manifest)
    assert backend.store.list() == [first]


def test_prune_keeps_the_last_n(backend: Backend, tmp_path: Path) -> None:
    versions = publish_all(backend, tmp_path, b"1", b"2", b"3", b"4", b"5")

    deleted = backend.store.prune(keep=2)

    assert deleted == versions[:3]
    assert backend.store.list() == versions[3:]
    assert backend.listing() == {"v00000004/checkpoint.npz", "v00000004.json",
                              "v00000005/checkpoint.npz", "v00000005.json"}


def test_prune_never_deletes_the_newest_verified(backend: Backend, tmp_path: Path) -> None:
    versions = publish_all(backend, tmp_path, b"1", b"2", b"3", b"4", b"5")
    backend.put("v00000004/checkpoint.npz", b"garbage")
    backend.remove("v00000005/checkpoint.npz")

    deleted = backend.store.prune(keep=1)

    assert deleted == versions[:2] + [versions[3]]
    assert backend.store.list() == [versions[2], versions[4]]
    assert backend.store.newest_verified() == versions[2]
    with pytest.raises(InvalidInput, match="checkpoints to keep 0: expected an integer >= 1"):
        backend.store.prune(keep=0)


def test_delete_removes_manifest_and_data(backend: Backend, tmp_path: Path) -> None:
    first, second = publish_all(backend, tmp_path, b"1", b"2")
    backend.store.delete(first)
    assert backend.store.list() == [second]
    assert backend.listing() == {"v00000002/checkpoint.npz", "v00000002.json"}


def test_an_empty_store(backend: Backend, tmp_path: Path) -> None:
    assert backend.store.list() == []
    assert backend.store.newest_verified() is None
    assert backend.store.restore(tmp_path / "resume") is None
    assert not (tmp_path / "resume").exists()
    assert backend.store.prune(keep=1) == []


def test_concurrent_publishers_get_distinct_versions(backend: Backend, tmp_path: Path) -> None:
    sources = [write(tmp_path / f"w{i}" / "checkpoint.npz", f"writer {i}".encode())
               for i in range(6)]
    results: list = []
    errors: list = []
    start = threading.Barrier(len(sources))

    def publish(src: Path) -> None:
        start.wait()
        try:
            results.append(backend.store.publish(src))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=publish, args=(s,)) for s in sources]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert sorted(c.version for c in results) == sorted({c.version for c in results})
    assert len(results) == len(sources)
    listed = backend.store.list()
    assert sorted(listed, key=lambda c: c.version) == sorted(results, key=lambda c: c.version)
    assert all(backend.store.verify(c) for c in listed)
