"""An Azure offering priced for its whole region: a job that keeps to one of its zones
(`zone: '2'`, Azure's zones being named without their region) gets a VM in that zone."""

from __future__ import annotations

from pathlib import Path

from tests.launchers.azure_fake import Azure
from tests.launchers.test_azure import make, spec


def test_a_regional_offering_gets_the_zone_the_job_keeps_to(azure: Azure,
                                                              tmp_path: Path) -> None:
    launcher = make(azure, tmp_path)
    assert launcher.document(spec(zones=("us-east-1a", "2")), "x")["zones"] == ["2"]
    assert "zones" not in launcher.document(spec(), "x")  # none kept to: Azure's choice
