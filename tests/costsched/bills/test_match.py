"""Bill lines matched to placements: by instance, then costsched's tags, then time."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pandas as pd
import pytest

from costsched.bills.imports import import_export, rematch
from costsched.bills.match import resource_name
from costsched.store import PriceStore
from costsched.store.bills import BillStore
from tests.costsched.bills import scenario
from tests.costsched.bills.exports import cur_csv_gz, cur_row

T, H = scenario.T, scenario.H
PREFIX = "s3://cur-bucket/m/"


def _import(s3, store: PriceStore, rows: list[dict]) -> None:  # noqa: ANN001
    s3.put_object(Bucket="cur-bucket", Key="m/a.csv.gz", Body=cur_csv_gz(rows))
    import_export(store, PREFIX, now=scenario.NOW, client=s3)


def _matches(store: PriceStore) -> list[tuple]:
    lines = BillStore(store.engine).lines()
    return [(None if pd.isna(p) else int(p), b) for p, b in
            zip(lines["placement_id"], lines["matched_by"], strict=True)]


@pytest.mark.parametrize(("resource", "name"), [
    ("us-east-1/i-0aaa", "i-0aaa"), ("arn:aws:ec2:us-east-1:1:instance/i-0AAA", "i-0aaa"),
    ("us-central1-a/costsched-2-j2-m2-0", "costsched-2-j2-m2-0"),
    ("/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm1",
     "vm1")])
def test_resource_names(resource: str, name: str) -> None:
    assert resource_name(resource) == name


def test_a_migration_attempt_tag_names_its_own_placement(s3, store: PriceStore) -> None:  # noqa: ANN001
    key = scenario.AWS
    job = store.jobs.create("j", {"spec": {"name": "j"}, "source": "test"}, 1e6, at=T - H)
    first = store.jobs.place(job, key, gpu_model="V100", gpu_count=1, at=T, usd_per_hour=1,
                             reason="launch", instance="us-east-1/i-first")
    move = store.moves.create(job, "migration", [], at=T + H, source_instance="us-east-1/i-first")
    move = store.moves.advance(move, "checkpointing", at=T + H)
    move = store.moves.advance(move, "checkpoint_verified", at=T + H)
    move = store.moves.advance(move, "target_launched", at=T + H,
                               target_instance="us-east-1/i-second")
    second = store.jobs.place(job, key, gpu_model="V100", gpu_count=1, at=T + H,
                              usd_per_hour=1, reason="migration",
                              instance="us-east-1/i-second", keep_open=True)
    store.jobs.end_placement(job, T + 2 * H, instance="us-east-1/i-first")
    tags = {"user_costsched_job": str(job), "user_costsched_attempt": move.attempt}
    rows = [
        # an EBS volume of the second instance, over the hour both ran: its attempt decides
        cur_row(T + H, T + 2 * H, "EBS:VolumeUsage.gp3", 0.01, resource="vol-2", tags=tags),
        # the job's tag alone: the placement it overlapped longest
        cur_row(T + 30 * timedelta(minutes=1), T + H, "EBS:SnapshotUsage", 0.01,
                resource="snap-1", tags={"user_costsched_job": str(job)}),
        cur_row(T, T + H, "SpotUsage:p3.2xlarge", 0.9, resource="i-first"),  # its instance
    ]
    _import(s3, store, rows)
    assert sorted(_matches(store)) == sorted([(second, "tags"), (first, "tags"),
                                              (first, "instance")])


def test_a_line_of_another_stores_launch_is_not_this_stores_job(
        s3, store: PriceStore) -> None:  # noqa: ANN001
    """Another costsched on the same account numbers its jobs from 1 too: its volume's
    line carries job tag 1 but its own store's id in the attempt tag."""
    job = store.jobs.create("j", {"spec": {"name": "j"}, "source": "test"}, 1e6, at=T - H)
    placed = store.jobs.place(job, scenario.AWS, gpu_model="V100", gpu_count=1, at=T,
                              usd_per_hour=1, reason="launch", instance="us-east-1/i-mine")
    move = store.moves.create(job, "launch", [], at=T)
    other = "ffffffffff" if store.moves.scope != "ffffffffff" else "eeeeeeeeee"
    rows = [
        cur_row(T, T + H, "EBS:VolumeUsage.gp3", 0.01, resource="vol-theirs",
                tags={"user_costsched_job": str(job),
                      "user_costsched_attempt": f"{other}-j{job}-m{move.id}-0"}),
        cur_row(T, T + H, "EBS:VolumeUsage.gp3", 0.01, resource="vol-mine",
                tags={"user_costsched_job": str(job), "user_costsched_attempt": move.attempt}),
    ]
    _import(s3, store, rows)
    lines = BillStore(store.engine).lines().set_index("resource_id")
    assert pd.isna(lines.loc["vol-theirs", "placement_id"])
    assert (lines.loc["vol-mine", "placement_id"], lines.loc["vol-mine", "matched_by"]) == (
        placed, "tags")


def test_time_matches_a_usage_line_naming_nothing_only_when_one_job_ran(
        s3, store: PriceStore) -> None:  # noqa: ANN001
    ids = scenario.fill(store)  # one job on AWS (T to T+3h), one on GCP
    # An export without resource ids: the job's instance type, region and hours say whose.
    spot = cur_row(T + H, T + 2 * H, "SpotUsage:p3.2xlarge", 0.918)
    other_type = cur_row(T + H, T + 2 * H, "SpotUsage:g5.xlarge", 0.5)
    other_region = cur_row(T + H, T + 2 * H, "SpotUsage:p3.2xlarge", 0.9, region="us-west-2")
    stranger = cur_row(T, T + H, "SpotUsage:p3.2xlarge", 0.9, resource="i-stranger")
    later = cur_row(T + 5 * H, T + 6 * H, "SpotUsage:p3.2xlarge", 0.9)
    tax = cur_row(T, T + 3 * H, "", 0.28, line_type="Tax", region="", amount=0.0)
    _import(s3, store, [spot, other_type, other_region, stranger, later, tax])
    placed = store.jobs.placements(ids["aws-job"])["id"].iloc[0]
    lines = BillStore(store.engine).lines()
    spot_line = int(np.flatnonzero((lines["usd"] == 0.918).to_numpy())[0])
    found = _matches(store)
    assert found.pop(spot_line) == (int(placed), "time")
    assert found == [(None, "")] * 5  # the account's tax too: report --billed shares it

    # A second job of that type there at the same time: the line is no one job's any more.
    other = store.jobs.create("o", {"spec": {"name": "o"}, "source": "test"}, 1e6, at=T)
    store.jobs.place(other, scenario.AWS, gpu_model="V100", gpu_count=1, at=T + H,
                     usd_per_hour=1, reason="launch", instance="us-east-1/i-o")
    store.jobs.end_placement(other, T + 2 * H)
    rematch(store, now=scenario.NOW)
    assert BillStore(store.engine).count(unmatched=True) == 6


def test_lines_imported_before_their_placement_are_matched_later(s3, store: PriceStore
                                                                  ) -> None:  # noqa: ANN001
    _import(s3, store, scenario.aws_rows())
    assert BillStore(store.engine).count(unmatched=True) == 4  # no placement yet: kept
    scenario.fill(store)
    rematch(store, now=scenario.NOW)
    assert BillStore(store.engine).count(unmatched=True) == 1
