"""`costsched launch` of a job whose checkpoint store cannot be used (an S3 bucket without
AWS credentials) says so in one line and exits 2, before anything is stored: never a
traceback, never a pending job."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def test_an_s3_store_without_credentials_is_one_line_and_a_failed_job(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    cli("prices", "import", ROOT / "examples" / "demo" / "prices-before.csv")
    launched = cli("launch", ROOT / "examples" / "resnet50.yaml", "--wait", "0")
    assert launched.exit_code == 2, launched.output
    assert launched.output.strip().splitlines() == [
        "error: checkpoint store s3://my-bucket/checkpoints/resnet50: no AWS credentials "
        "found: run `aws configure`, set AWS_PROFILE, or set AWS_ACCESS_KEY_ID and "
        "AWS_SECRET_ACCESS_KEY (`costsched check` says more)"]
    assert json.loads(cli("status", "--json", "--no-reconcile").stdout)["jobs"] == []
    assert not (tmp_path / "instances").exists() or not any((tmp_path / "instances").iterdir())
