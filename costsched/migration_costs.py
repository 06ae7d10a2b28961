"""What moving a checkpointed training job to another instance costs.

A migration stops the job on its instance, copies the checkpoint to the new location and
restarts there. It costs
- time on the new instance that makes no progress: boot and set-up (`restart_minutes`),
  warm-up to full speed (`warmup_minutes`), work since the last checkpoint done again
  (`lost_work_minutes`), and the checkpoint copy (`checkpoint_gb` at `transfer_gbps`);
- time on the old instance while it writes the checkpoint (`overlap_minutes`);
- egress: the checkpoint lives in the old region's object store; reading it from another
  region of the same cloud is billed at that cloud's inter-region rate, from another cloud
  at its internet egress rate; within the region it is free.

The defaults are stated assumptions, not measurements; change them per run
(`costsched backtest --restart-minutes ...`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd


@dataclass(frozen=True, slots=True)
class EgressPrice:
    internet_usd_per_gb: float  # to another cloud
    inter_region_usd_per_gb: float  # to another region of the same cloud
    source: str


# Public list prices, first paid volume tier (the first 100 GB a month are free on AWS and
# Azure; a backtest charges every GB, i.e. assumes that allowance is used elsewhere).
EGRESS: dict[str, EgressPrice] = {
    "aws": EgressPrice(
        0.09, 0.02,
        "aws.amazon.com/ec2/pricing/on-demand 'Data Transfer': out to internet $0.09/GB "
        "(up to 10 TB/month), to another AWS region $0.02/GB, S3 to EC2 in the same region "
        "free; figures as listed in 2026 (summarized at wring.co/blog/aws-data-transfer-"
        "pricing-guide, 'AWS Data Transfer Pricing, 2026')",
    ),
    "azure": EgressPrice(
        0.087, 0.02,
        "azure.microsoft.com/pricing/details/bandwidth: internet egress from North America "
        "$0.087/GB (first 10 TB/month), between regions within North America $0.02/GB, "
        "within a region free; figures as listed in 2026 (summarized at lucidity.cloud/feeds/"
        "blog/azure-storage-egress-cost)",
    ),
    "gcp": EgressPrice(
        0.12, 0.02,
        "cloud.google.com/vpc/network-pricing: premium tier internet egress $0.12/GB "
        "(0-1 TiB/month), between regions within North America $0.02/GB; not re-checked "
        "here (no GCP prices in the recorded traces)",
    ),
}


@dataclass(frozen=True, slots=True)
class MigrationCosts:
    restart_minutes: float = 10.0
    warmup_minutes: float = 5.0
    lost_work_minutes: float = 15.0  # half of a 30-minute checkpoint interval
    overlap_minutes: float = 0.0
    checkpoint_gb: float = 1.0
    transfer_gbps: float = 1.0

    @classmethod
    def free(cls) -> MigrationCosts:
        """Migrations cost nothing: the assumption of the published trace analysis."""
        return cls(0.0, 0.0, 0.0, 0.0, 0.0, 1.0)

    def with_checkpoint(self, gb: float | None) -> MigrationCosts:
        return self if gb is None or gb <= 0 else replace(self, checkpoint_gb=gb)

    @property
    def idle_hours(self) -> float:
        """Hours billed on the new instance without progress."""
        copy_hours = self.checkpoint_gb * 8 / self.transfer_gbps / 3600
        return (self.restart_minutes + self.warmup_minutes + self.lost_work_minutes) / 60 + (
            copy_hours
        )

    @property
    def overlap_hours(self) -> float:
        return self.overlap_minutes / 60

    def egress_matrix(self, offerings: pd.DataFrame) -> np.ndarray:
        """USD of moving the checkpoint from each offering (rows) to each (columns)."""
        cloud = offerings["cloud"].to_numpy()
        region = offerings["region"].to_numpy()
        same_cloud = cloud[:, None] == cloud[None, :]
        same_region = same_cloud & (region[:, None] == region[None, :])
        internet = np.array([_egress(c).internet_usd_per_gb for c in cloud])
        inter = np.array([_egress(c).inter_region_usd_per_gb for c in cloud])
        per_gb = np.where(same_region, 0.0,
                          np.where(same_cloud, inter[:, None], internet[:, None]))
        return per_gb * self.checkpoint_gb


def _egress(cloud: str) -> EgressPrice:
    # An unknown cloud is charged like the dearest known one rather than for free.
    return EGRESS.get(cloud, max(EGRESS.values(), key=lambda e: e.internet_usd_per_gb))
