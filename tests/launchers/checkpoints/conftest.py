"""Fixtures of the checkpoint store tests: each store on its real backend (a directory, S3
under moto, GCS against the loopback fake, Azure Blob against the loopback Blob service),
with a `Backend` that reaches under the store to corrupt, drop or plant objects as a crash
or another writer would."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from launchers.checkpoints.base import CheckpointStore
from tests.conftest import atomic_s3_puts, hermetic_aws_env
from tests.launchers.checkpoints.gcs_fake import FakeGcs

BUCKET = "ckpt-bucket"
PREFIX = "jobs/7"


@dataclass
class Backend:
    """A store and raw access to the objects under its prefix (keys relative to it)."""

    store: CheckpointStore
    put: Callable[[str, bytes], None]
    remove: Callable[[str], None]
    listing: Callable[[], set[str]]  # every key under the prefix
    get: Callable[[str], bytes]


@pytest.fixture()
def hermetic_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Fake credentials and no profile, config or endpoint from the machine."""
    hermetic_aws_env(monkeypatch, tmp_path, ("AWS_ENDPOINT_URL_S3",))


@pytest.fixture()
def s3(hermetic_aws: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A boto3 S3 client under moto, with the bucket made; its conditional puts atomic, as
    S3's are (`tests.conftest.atomic_s3_puts`)."""
    from moto import mock_aws

    atomic_s3_puts(monkeypatch)
    with mock_aws():
        import boto3

        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        yield client


@pytest.fixture()
def fake_gcs() -> Iterator[FakeGcs]:
    with FakeGcs(BUCKET) as fake:
        yield fake


def gcs_client(fake: FakeGcs) -> Any:
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    return storage.Client(project="test", credentials=AnonymousCredentials(),
                          client_options={"api_endpoint": fake.url})


def local_backend(root: Path) -> Backend:
    from launchers.checkpoints.local import LocalStore

    def put(key: str, data: bytes) -> None:
        (root / key).parent.mkdir(parents=True, exist_ok=True)
        (root / key).write_bytes(data)

    def keys() -> set[str]:
        return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}

    return Backend(LocalStore(root), put, lambda key: (root / key).unlink(), keys,
                   lambda key: (root / key).read_bytes())


def s3_backend(client: Any) -> Backend:
    from launchers.checkpoints.s3 import S3Store

    def keys() -> set[str]:
        listed = client.list_objects_v2(Bucket=BUCKET, Prefix=PREFIX + "/").get("Contents", [])
        return {item["Key"][len(PREFIX) + 1:] for item in listed}

    return Backend(
        S3Store(BUCKET, PREFIX, client=client),
        lambda key, data: client.put_object(Bucket=BUCKET, Key=f"{PREFIX}/{key}", Body=data),
        lambda key: client.delete_object(Bucket=BUCKET, Key=f"{PREFIX}/{key}"),
        keys,
        lambda key: client.get_object(Bucket=BUCKET, Key=f"{PREFIX}/{key}")["Body"].read())


def gcs_backend(fake: FakeGcs) -> Backend:
    from launchers.checkpoints.gcs import GcsStore

    def keys() -> set[str]:
        return {name[len(PREFIX) + 1:] for name in fake.objects if name.startswith(PREFIX)}

    return Backend(GcsStore(BUCKET, PREFIX, client=gcs_client(fake)),
                   lambda key, data: fake.put(f"{PREFIX}/{key}", data),
                   lambda key: fake.objects.pop(f"{PREFIX}/{key}"),
                   keys,
                   lambda key: fake.objects[f"{PREFIX}/{key}"].data)


@pytest.fixture()
def azure_blob(azure_tls: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
               ) -> Iterator[Any]:
    """The loopback Blob service (tests.launchers.azure_fake), its container `ckpt` made,
    with the store pointed at it."""
    from tests.launchers.azure_fake import Azure

    with Azure(tmp_path / "azure", azure_tls) as azure:
        for name, value in azure.env().items():
            monkeypatch.setenv(name, value)
        yield azure


def azure_backend(azure: Any) -> Backend:
    from launchers.checkpoints.azure import AzureBlobStore
    from tests.launchers.azure_fake import STORAGE_TOKEN, Blob, StaticToken

    blobs = azure.blob.containers["ckpt"]

    def keys() -> set[str]:
        return {name[len(PREFIX) + 1:] for name in blobs if name.startswith(PREFIX + "/")}

    return Backend(AzureBlobStore(f"az://ckpt/{PREFIX}", credential=StaticToken(STORAGE_TOKEN)),
                   lambda key, data: blobs.__setitem__(f"{PREFIX}/{key}",
                                                       Blob(data, "application/octet-stream")),
                   lambda key: blobs.pop(f"{PREFIX}/{key}"),
                   keys,
                   lambda key: blobs[f"{PREFIX}/{key}"].data)


@pytest.fixture(params=["local", "s3", "gcs", "azure"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """Each store in turn, on its real backend."""
    if request.param == "local":
        return local_backend(tmp_path / "store")
    if request.param == "s3":
        return s3_backend(request.getfixturevalue("s3"))
    if request.param == "gcs":
        return gcs_backend(request.getfixturevalue("fake_gcs"))
    return azure_backend(request.getfixturevalue("azure_blob"))
