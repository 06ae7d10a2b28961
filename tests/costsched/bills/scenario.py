"""Two jobs whose bills are worked out by hand: one on AWS, one on GCP, and their exports.

T = 2024-06-01 00:00 UTC. aws-job: p3.2xlarge spot in us-east-1a, 0.918 $/h stored, on
instance us-east-1/i-0aaa from T to T+3h: estimated 2.754. gcp-job: a2-highgpu-1g spot in
us-central1-a, 2.0 $/h stored, on instance us-central1-a/costsched-2-j2-m2-0 from T to T+2h:
estimated 4.0. Their exports bill exactly that, hour by hour; `extra` adds a tax line on
the AWS account (naming no resource) and an egress charge on the GCP instance.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pandas as pd

from costsched.store import OBSERVATION_COLUMNS, PriceStore
from tests.costsched.bills.exports import bq_row, cur_row

T = datetime(2024, 6, 1, 0, 0, tzinfo=timezone.utc)
H = timedelta(hours=1)
NOW = T + 10 * H
AWS = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
GCP = ("gcp", "us-central1", "us-central1-a", "a2-highgpu-1g", "spot", "linux")
AWS_INSTANCE = "us-east-1/i-0aaa"
GCP_NAME = "costsched-2-j2-m2-0"
TAX, EGRESS = 0.28, 0.12


def fill(store: PriceStore) -> dict[str, int]:
    rows = [(*AWS, "V100", 1, 8, 61.0, 0.918, pd.Timestamp(T - 24 * H), "test"),
            (*GCP, "A100", 1, 12, 85.0, 2.0, pd.Timestamp(T - 24 * H), "test")]
    store.ingest(pd.DataFrame(rows, columns=OBSERVATION_COLUMNS))
    ids = {}
    for name, key, gpu, hours, instance in (("aws-job", AWS, "V100", 3, AWS_INSTANCE),
                                            ("gcp-job", GCP, "A100", 2,
                                             f"us-central1-a/{GCP_NAME}")):
        job = store.jobs.create(name, {"spec": {"name": name}, "source": "test"}, 1e6,
                                at=T - H)
        store.jobs.place(job, key, gpu_model=gpu, gpu_count=1, at=T, usd_per_hour=9.99,
                         reason="launch", instance=instance)
        store.jobs.end_placement(job, T + hours * H)
        ids[name] = job
    return ids


def aws_rows(extra: bool = False) -> list[dict]:
    tags = {"user_costsched_job": "1"}
    rows = [cur_row(T + h * H, T + (h + 1) * H, "SpotUsage:p3.2xlarge", 0.918,
                    resource="i-0aaa", tags=tags, line_id=f"spot-{h}") for h in range(3)]
    rows.append(cur_row(T, T + H, "BoxUsage:g5.xlarge", 1.006, resource="i-0other",
                        term="OnDemand", line_id="other"))  # not costsched's: unmatched
    if extra:
        rows.append(cur_row(T, T + 3 * H, "", TAX, line_type="Tax", region="",
                            amount=0.0, unit="", line_id="tax"))
    return rows


def gcp_rows(extra: bool = False) -> list[dict]:
    labels = {"costsched-job": "2", "costsched-attempt": "j2-m2-0"}
    rows = [bq_row(T + h * H, T + (h + 1) * H, "Spot Preemptible Nvidia Tesla A100 GPU", 2.0,
                   resource=GCP_NAME, labels=labels) for h in range(2)]
    if extra:
        rows.append(bq_row(T + H, T + 2 * H, "Network Internet Egress from Americas to "
                           "Americas", EGRESS, resource=GCP_NAME, labels=labels,
                           unit="gibibyte"))
    return rows
