"""open_store: which store a URI names, and the one-line error for one it does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.model import InvalidInput
from launchers.checkpoints import ACCEPTED, open_store
from launchers.checkpoints.gcs import GcsStore
from launchers.checkpoints.local import LocalStore
from launchers.checkpoints.s3 import S3Store
from tests.launchers.checkpoints.conftest import gcs_client


def test_local_paths_and_file_uris(tmp_path: Path) -> None:
    for uri in (str(tmp_path / "ck"), (tmp_path / "ck").as_uri(), "relative/dir", "job:7"):
        store = open_store(uri)
        assert isinstance(store, LocalStore)
    assert open_store((tmp_path / "a b").as_uri()).root == tmp_path / "a b"
    assert open_store("file://localhost/srv/ck").root == Path("/srv/ck")


def test_s3_uris(s3) -> None:  # noqa: ANN001 - the moto client fixture
    store = open_store("s3://ckpt-bucket/jobs/7/")
    assert isinstance(store, S3Store)
    assert (store.bucket, store.prefix, store.uri) == ("ckpt-bucket", "jobs/7",
                                                       "s3://ckpt-bucket/jobs/7")
    assert open_store("s3://ckpt-bucket").prefix == ""


def test_gs_uris(fake_gcs) -> None:  # noqa: ANN001 - the fake fixture
    store = open_store("gs://ckpt-bucket/a/b", client=gcs_client(fake_gcs))
    assert isinstance(store, GcsStore)
    assert (store.bucket.name, store.prefix, store.uri) == ("ckpt-bucket", "a/b",
                                                            "gs://ckpt-bucket/a/b")


@pytest.mark.parametrize("uri", ["s3://", "gs://", "s3:///prefix", "ftp://x/y", "s3:/bucket",
                                 "file://remote-host/x", "file:relative", "s3://Bad_Bucket/x",
                                 "s3://bucket/x/../y", "gs://bucket/a//b", "s3://bucket/p?x=1", "",
                                 "   "])
def test_a_bad_uri_is_one_line_naming_it(uri: str) -> None:
    with pytest.raises(InvalidInput) as err:
        open_store(uri)
    message = str(err.value)
    assert message.startswith(f"checkpoint location {uri!r}: expected {ACCEPTED}")
    assert "\n" not in message
