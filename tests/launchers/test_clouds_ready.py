"""`--launcher clouds` with a cloud this machine cannot launch on: that cloud's offerings
are left out with one line saying which cloud and why, the job goes to the best offering of
a ready cloud, and a job whose offerings are all on clouds not ready is refused before
anything is stored. A cloud's launcher that cannot even be made (no credentials, no SDK)
counts as not ready, in its own one line."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from costsched.clouds import gcp as gcp_cloud
from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.store import PriceStore
from launchers import clouds as clouds_launcher
from launchers.clouds import CloudsLauncher
from tests.launchers.test_clouds_carry import NOW, CloudFake, aws, gcs, job_file, price

__all__ = ["aws", "gcs"]  # the fixtures this module's tests take
NO_LOGIN = ("gcp: no Google credentials found: run `gcloud auth application-default login` "
            "or set GOOGLE_APPLICATION_CREDENTIALS")


class NotReady(CloudFake):
    """A cloud's launcher whose `check_ready` refuses (as a missing login does) until told."""

    def __init__(self, cloud: str, folder: Path, why: str) -> None:
        super().__init__(cloud, folder)
        self.why, self.asked = why, 0

    def check_ready(self) -> None:
        self.asked += 1
        if self.why:
            raise InvalidInput(self.why)


def priced(tmp_path: Path) -> PriceStore:
    """GCP the cheaper, AWS the dearer."""
    store = PriceStore(f"sqlite:///{tmp_path / 'store.sqlite'}")
    start = NOW - pd.Timedelta(hours=3)
    store.ingest(pd.DataFrame([price("gcp", 0.50, start), price("aws", 0.90, start)]))
    return store


@pytest.fixture()
def roots(monkeypatch: pytest.MonkeyPatch) -> None:
    # A GCP instance would read its checkpoints from GCS: GCP is not left out for them.
    monkeypatch.setenv("COSTSCHED_LAUNCH_CHECKPOINT_ROOTS", "gcp=gs://ckpt-bucket/jobs")


def test_a_cloud_not_ready_is_left_out_in_one_line_and_the_job_runs_on_a_ready_one(
        aws: Any, gcs: Any, roots: None, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    gcp = NotReady("gcp", tmp_path, NO_LOGIN)
    launcher = CloudsLauncher({"aws": CloudFake("aws", tmp_path), "gcp": gcp})
    store = priced(tmp_path)
    with caplog.at_level(logging.WARNING, logger="costsched.clouds"):
        [job] = service.launch(store, [job_file(tmp_path)], launcher=launcher,
                               checkpoint_root="s3://ckpt-bucket/jobs", at=NOW)
    assert gcp.made == {}  # never tried
    [placed] = store.jobs.placements(job.id)["instance"].tolist()
    assert placed.startswith("us-east-1/i-")  # AWS, the dearer but ready
    said = [r.getMessage() for r in caplog.records if r.name == "costsched.clouds"]
    assert said == ["gcp: not ready, its offerings are left out: no Google credentials "
                    "found: run `gcloud auth application-default login` or set "
                    "GOOGLE_APPLICATION_CREDENTIALS"]  # once, however often it is weighed
    assert launcher.not_ready() == ["gcp"] and gcp.asked == 1
    store.dispose()


def test_a_job_only_a_cloud_not_ready_could_run_is_refused_before_anything_is_stored(
        aws: Any, gcs: Any, roots: None, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    gcp = NotReady("gcp", tmp_path, NO_LOGIN)
    aws_fake = NotReady("aws", tmp_path, "")
    launcher = CloudsLauncher({"aws": aws_fake, "gcp": gcp})
    store = priced(tmp_path)
    path = job_file(tmp_path, "gcp-only", clouds_allowed=["gcp"])
    with pytest.raises(InvalidInput, match=r"^job gcp-only: no offering that clouds can "
                                           r"launch meets its constraints now \(not ready "
                                           r"on this machine: gcp\)$"):
        service.launch(store, [path], launcher=launcher,
                       checkpoint_root="s3://ckpt-bucket/jobs", at=NOW)
    assert store.jobs.records() == [] and gcp.made == {}
    assert aws_fake.asked == 0  # a cloud the job cannot use is not asked

    # The login is made since: asked again after READY_RECHECK_SECONDS, the job launches.
    gcp.why = ""
    monkeypatch.setattr(clouds_launcher, "READY_RECHECK_SECONDS", 0.0)
    [job] = service.launch(store, [path], launcher=launcher,
                           checkpoint_root="s3://ckpt-bucket/jobs", at=NOW)
    assert list(gcp.made) and launcher.not_ready() == []
    assert store.jobs.get(job.id).state in ("launching", "running")
    store.dispose()


def test_a_clouds_launcher_it_cannot_make_is_not_ready_with_its_own_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def no_login(project: str | None = None) -> Any:
        raise gcp_cloud.NoCredentials(NO_LOGIN)

    monkeypatch.setattr(gcp_cloud, "credentials_and_project", no_login)
    launcher = CloudsLauncher(clouds=("gcp",))
    assert launcher.why_not_ready("gcp") == NO_LOGIN.removeprefix("gcp: ")

    # Credentials, but google-auth without google-cloud-compute (the storage library alone
    # brings google-auth): one line saying what to install, not an ImportError.
    monkeypatch.setattr(gcp_cloud, "credentials_and_project",
                        lambda project=None: (object(), "proj"))
    monkeypatch.setitem(sys.modules, "google.cloud.compute_v1", None)
    google_cloud = sys.modules.get("google.cloud")
    if google_cloud is not None:  # imported already by another test of this process
        monkeypatch.delattr(google_cloud, "compute_v1", raising=False)
    monkeypatch.setattr(clouds_launcher, "READY_RECHECK_SECONDS", 0.0)
    assert launcher.why_not_ready("gcp") == ("the google-cloud SDK is not installed: "
                                             "pip install 'costsched[gcp]'")
