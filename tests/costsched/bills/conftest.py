"""Hermetic AWS for moto, and the loopback HTTP server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import hermetic_aws_env
from tests.price_collectors.conftest import loopback  # noqa: F401 - a fixture by name


@pytest.fixture(autouse=True)
def _hermetic_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    hermetic_aws_env(monkeypatch, tmp_path, ("AWS_ENDPOINT_URL_S3",))


@pytest.fixture()
def s3():  # noqa: ANN201 - a boto3 S3 client on moto
    import boto3
    from moto import mock_aws

    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket="cur-bucket")
        yield client
