"""`--launcher clouds` refusing a job none of whose clouds is ready names every cloud the
job's constraints allow that is not ready, each said in its own line with why, not only
the cloud of its best offering."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.store import PriceStore
from launchers.clouds import CloudsLauncher
from tests.launchers.test_clouds_carry import NOW, aws, gcs, job_file, price
from tests.launchers.test_clouds_ready import NotReady, roots

__all__ = ["aws", "gcs", "roots"]  # the fixtures this module's tests take
NO_BOTO = "aws: boto3 is not installed: pip install 'costsched[aws]'"
NO_GOOGLE = "gcp: the google-cloud SDK is not installed: pip install 'costsched[gcp]'"


def test_every_allowed_cloud_not_ready_is_said_and_named_in_the_refusal(
        aws: Any, gcs: Any, roots: None, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    store = PriceStore(f"sqlite:///{tmp_path / 'store.sqlite'}")
    start = NOW - pd.Timedelta(hours=3)
    # A deadline decider's choice falls back on its own instance type's zones: AWS's T4
    # fills the launch's candidates, GCP's L4 is not among them.
    t4 = {"instance_type": "g4dn.xlarge", "gpu_model": "T4", "vcpus": 4, "memory_gb": 16.0}
    l4 = {"instance_type": "g2-standard-4", "gpu_model": "L4", "vcpus": 4, "memory_gb": 16.0}
    od = {"market": "on_demand", "zone": ""}
    store.ingest(pd.DataFrame([*(price("aws", 0.20 + i / 100, start) | t4
                                 | {"zone": f"us-east-1{z}"} for i, z in enumerate("abcdef")),
                               price("gcp", 0.30, start) | l4,
                               price("aws", 0.60, start) | t4 | od,
                               price("gcp", 0.70, start) | l4 | od]))
    launcher = CloudsLauncher({"aws": NotReady("aws", tmp_path, NO_BOTO),
                               "gcp": NotReady("gcp", tmp_path, NO_GOOGLE),
                               "azure": NotReady("azure", tmp_path, "")})
    path = job_file(tmp_path, "both", clouds_allowed=["aws", "gcp"])
    spec = yaml.safe_load(path.read_text())  # a deadline: the deadline decider places it
    spec["steps"], spec["throughputs"] = 1000, {"T4": 10.0, "L4": 12.0}
    spec["constraints"]["markets"] = ["spot", "on_demand"]
    spec["constraints"]["deadline"] = (NOW + pd.Timedelta(hours=8)).isoformat()
    path.write_text(yaml.safe_dump(spec))
    with caplog.at_level(logging.WARNING, logger="costsched.clouds"), \
            pytest.raises(InvalidInput) as refused:
        service.launch(store, [path], launcher=launcher,
                       checkpoint_root="s3://ckpt-bucket/jobs", at=NOW)
    assert str(refused.value) == ("job both: no offering that clouds can launch meets its "
                                  "constraints now (not ready on this machine: aws, gcp)")
    said = [r.getMessage() for r in caplog.records if r.name == "costsched.clouds"]
    assert said == [f"aws: not ready, its offerings are left out: {NO_BOTO[5:]}",
                    f"gcp: not ready, its offerings are left out: {NO_GOOGLE[5:]}"]
    assert store.jobs.records() == []
    store.dispose()
