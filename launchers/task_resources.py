"""A SkyPilot task's placement-neutral resources (costsched.jobspec.TaskSpec, as a launch
carries it) in each cloud's terms: the boot disk's size and kind, the image, the ports to
open, the labels and the network tier. One place for the mapping, read by launchers.aws
and launchers.gcp.

Disk tiers: EC2 gp3 with more provisioned IOPS and throughput per tier (io2 for ultra);
Compute Engine's persistent disk kinds. `best` is the highest tier.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# tier -> (EBS volume type, IOPS, throughput MiB/s or None)
EBS_TIERS = {"low": ("gp3", 3000, 125), "medium": ("gp3", 6000, 250),
             "high": ("gp3", 16000, 1000), "ultra": ("io2", 64000, None),
             "best": ("io2", 64000, None)}
PD_TIERS = {"low": "pd-standard", "medium": "pd-balanced", "high": "pd-ssd",
            "ultra": "pd-ssd", "best": "pd-ssd"}
GCP_NETWORK_TIERS = {"standard": "STANDARD", "best": "PREMIUM"}
IO2_IOPS_PER_GB = 500  # io2's limit of provisioned IOPS per GB of volume


def image(task: Mapping[str, Any], region: str, cloud: str = "") -> str:
    """The task's machine image for `region` of `cloud` ('' for the launcher's own): one
    image, or one per region or per cloud. A Docker image (docker:IMAGE) runs on the
    launcher's own machine image (launchers.containers)."""
    value = task.get("image_id")
    if isinstance(value, Mapping):
        return str(value.get(region) or value.get(cloud) or "")
    value = str(value or "")
    return "" if value.startswith("docker:") else value


def ebs(task: Mapping[str, Any], size_gb: int) -> dict[str, Any]:
    """The root volume's Ebs settings of a task with disk_size and/or disk_tier."""
    kind, iops, throughput = EBS_TIERS[task.get("disk_tier") or "medium"]
    out: dict[str, Any] = {"VolumeSize": size_gb, "VolumeType": kind,
                           "DeleteOnTermination": True}
    if kind == "io2":
        out["Iops"] = min(iops, IO2_IOPS_PER_GB * size_gb)
    else:
        out["Iops"] = iops
        out["Throughput"] = throughput
    return out


def port_ranges(task: Mapping[str, Any]) -> list[tuple[int, int]]:
    """(from, to) of each of the task's ports ('8080', '9000-9005')."""
    out = []
    for item in task.get("ports") or []:
        lo, _, hi = str(item).partition("-")
        out.append((int(lo), int(hi or lo)))
    return out


def label_pairs(task: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in (task.get("labels") or {}).items()}


def gcp_label(text: str) -> str:
    """A Compute Engine label key or value: lower case letters, digits, '_' and '-'."""
    return re.sub(r"[^a-z0-9_-]", "-", text.lower())[:63]
