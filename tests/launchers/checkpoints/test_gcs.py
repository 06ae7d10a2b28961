"""The GCS store against the loopback fake: the exact requests google-cloud-storage sends,
and the races and faults only GCS has."""

from __future__ import annotations

import base64
import hashlib
import sys
from pathlib import Path

import pytest

from costsched.clouds.base import SdkMissing
from costsched.model import InvalidInput
from launchers.checkpoints.gcs import GcsStore
from tests.launchers.checkpoints.conftest import BUCKET, PREFIX, gcs_client
from tests.launchers.checkpoints.gcs_fake import FakeGcs, Request

OBJECTS = f"/storage/v1/b/{BUCKET}/o"


def b64md5(data: bytes) -> str:
    return base64.b64encode(hashlib.md5(data).digest()).decode()


def object_requests(fake: FakeGcs) -> list[Request]:
    """The requests about objects (the client may also read the bucket's metadata)."""
    rest = [r for r in fake.requests if r.path != f"/storage/v1/b/{BUCKET}"]
    assert all(r.method == "GET" for r in fake.requests if r not in rest)
    return rest


def summary(request: Request) -> tuple:
    keep = ("prefix", "delimiter", "ifGenerationMatch", "alt", "uploadType", "pageToken")
    return (request.method, request.path, {k: v for k, v in request.query.items() if k in keep},
            request.metadata.get("name"))


def store(fake: FakeGcs) -> GcsStore:
    return GcsStore(BUCKET, PREFIX, client=gcs_client(fake))


def source(tmp_path: Path, data: bytes = b"model weights") -> Path:
    path = tmp_path / "checkpoint.npz"
    path.write_bytes(data)
    return path


def test_publish_sends_create_only_uploads_with_checksums(fake_gcs: FakeGcs,
                                                          tmp_path: Path) -> None:
    checkpoint = store(fake_gcs).publish(source(tmp_path))

    requests = object_requests(fake_gcs)
    assert [summary(r) for r in requests] == [
        ("GET", OBJECTS, {"prefix": f"{PREFIX}/", "delimiter": "/"}, None),
        ("POST", f"/upload{OBJECTS}", {"uploadType": "multipart", "ifGenerationMatch": "0"},
         f"{PREFIX}/v00000001/checkpoint.npz"),
        ("POST", f"/upload{OBJECTS}", {"uploadType": "multipart", "ifGenerationMatch": "0"},
         f"{PREFIX}/v00000001.json"),
    ]
    data, manifest = requests[1], requests[2]
    assert data.media == b"model weights"
    assert data.metadata["md5Hash"] == b64md5(b"model weights")
    assert data.media_type == "application/octet-stream"
    assert manifest.metadata["md5Hash"] == b64md5(manifest.media)
    assert manifest.media_type == "application/json"
    assert checkpoint.sha256 == hashlib.sha256(b"model weights").hexdigest()


def test_verify_fetch_and_delete_requests(fake_gcs: FakeGcs, tmp_path: Path) -> None:
    gcs = store(fake_gcs)
    checkpoint = gcs.publish(source(tmp_path))
    generation = fake_gcs.objects[f"{PREFIX}/v00000001/checkpoint.npz"].generation
    fake_gcs.requests.clear()

    assert gcs.verify(checkpoint)
    gcs.fetch(checkpoint, tmp_path / "out")
    gcs.delete(checkpoint)

    data = f"{PREFIX}/v00000001/checkpoint.npz"
    assert [(r.method, r.path, r.query.get("alt"), r.query.get("generation"))
            for r in object_requests(fake_gcs)] == [
        ("GET", f"{OBJECTS}/{data}", None, None),  # metadata: the size
        ("GET", f"/download{OBJECTS}/{data}", "media", str(generation)),  # that generation
        ("GET", f"/download{OBJECTS}/{data}", "media", None),  # fetch
        ("DELETE", f"{OBJECTS}/{PREFIX}/v00000001.json", None, None),  # manifest first
        ("GET", OBJECTS, None, None),  # the version's folder
        ("DELETE", f"{OBJECTS}/{data}", None, None),
    ]
    assert (tmp_path / "out" / "checkpoint.npz").read_bytes() == b"model weights"
    assert fake_gcs.objects == {}


def test_a_manifest_lost_to_a_concurrent_publisher(fake_gcs: FakeGcs, tmp_path: Path) -> None:
    theirs = b'{"version": 1, "name": "other.npz"}'

    def commit_theirs(request: Request) -> None:
        if request.metadata.get("name") == f"{PREFIX}/v00000001/checkpoint.npz":
            fake_gcs.put(f"{PREFIX}/v00000001.json", theirs)

    fake_gcs.before = commit_theirs
    checkpoint = store(fake_gcs).publish(source(tmp_path))

    assert checkpoint.version == 2
    assert set(fake_gcs.objects) == {f"{PREFIX}/v00000001.json", f"{PREFIX}/v00000002.json",
                                     f"{PREFIX}/v00000002/checkpoint.npz"}
    assert fake_gcs.objects[f"{PREFIX}/v00000001.json"].data == theirs
    refused = [r for r in fake_gcs.requests if r.metadata.get("name") ==
               f"{PREFIX}/v00000001.json"]
    assert len(refused) == 1 and refused[0].query["ifGenerationMatch"] == "0"


def test_a_file_that_changes_while_published_is_refused(fake_gcs: FakeGcs,
                                                        tmp_path: Path) -> None:
    src = source(tmp_path, b"step 100")

    def rewrite(request: Request) -> None:  # after the store hashed it, before the upload
        if request.path == OBJECTS:
            src.write_bytes(b"step 200")

    fake_gcs.before = rewrite
    with pytest.raises(InvalidInput, match=f"checkpoint file {src}: changed while it was "
                                           "published"):
        store(fake_gcs).publish(src)
    assert fake_gcs.objects == {}


def test_a_missing_bucket_is_one_line(fake_gcs: FakeGcs, tmp_path: Path) -> None:
    gcs = GcsStore("no-such-bucket", PREFIX, client=gcs_client(fake_gcs))
    with pytest.raises(InvalidInput, match="checkpoint store gs://no-such-bucket/jobs/7: "
                                           "bucket no-such-bucket does not exist"):
        gcs.publish(source(tmp_path))


def test_without_the_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "google.cloud.storage", None)
    with pytest.raises(SdkMissing, match=r"pip install 'costsched\[gcp\]'") as err:
        GcsStore(BUCKET, PREFIX)
    assert "\n" not in str(err.value)


def test_without_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "none.json"))
    with pytest.raises(InvalidInput, match="checkpoint store gs://ckpt-bucket/jobs/7: no Google "
                                           "Cloud credentials found") as err:
        GcsStore(BUCKET, PREFIX)
    assert "\n" not in str(err.value)
