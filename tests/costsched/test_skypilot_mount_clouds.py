"""A task whose file mounts are buckets runs where its instances can read them: an
instance reads its own cloud's object storage only (mounted data is not carried across
clouds, as a checkpoint is)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
import yaml

from costsched.jobspec import resolve
from costsched.model import InvalidInput
from costsched.optimize.rank import allowed_offerings
from costsched.prices import prices_at
from costsched.skypilot import parse_task
from costsched.throughput import ThroughputTable

NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)


def task(text: str):  # noqa: ANN201
    return parse_task(yaml.safe_load(text), "task.yaml", "t")


def allowed_clouds(spec) -> set[str]:  # noqa: ANN001
    job = resolve(spec, ThroughputTable.load(), NOW).job
    frame = prices_at(None, NOW)
    return set(frame[allowed_offerings(frame, job.constraints) == ""]["cloud"])


def test_data_in_a_bucket_keeps_the_task_on_that_buckets_cloud() -> None:
    anywhere = task("resources: {accelerators: V100}\nrun: x")
    assert len(allowed_clouds(anywhere)) > 1  # V100s are sold by more than one cloud
    spec = task("file_mounts: {/data: gs://team-data/imagenet, /cfg: gs://team-data/cfg}\n"
                "costsched: {checkpoint: {location: s3://team-ckpts/run1}}\n"
                "resources: {accelerators: V100}\nrun: x")
    assert spec.constraints.clouds == ["gcp"]
    assert spec.checkpoint.location == "s3://team-ckpts/run1"  # carried: it narrows nothing
    assert allowed_clouds(spec) == {"gcp"}
    assert ("file_mounts./data: the task's gs bucket /data (gs://team-data/imagenet) keeps it "
            "on gcp (an instance reads its own cloud's buckets only; to run elsewhere too, "
            "copy the data to a bucket of that cloud and mount that one)"
            in spec.task.notes)


def test_a_checkpoint_bucket_does_not_narrow_the_clouds() -> None:
    spec = task("file_mounts: {/ckpt: {name: my-ckpts, store: s3, mode: MOUNT}}\n"
                "resources: {accelerators: V100}\nrun: x")
    assert spec.checkpoint.location == "s3://my-ckpts"  # carried to any cloud with the job
    assert spec.constraints.clouds == []


def test_a_cloud_named_that_cannot_read_the_data_is_refused_in_one_line() -> None:
    with pytest.raises(InvalidInput) as info:
        task("file_mounts: {/data: s3://team-data, /ckpt: {name: c, store: gcs, mode: MOUNT}}"
             "\nresources: {infra: gcp, accelerators: V100}\nrun: x")
    assert str(info.value) == ("task.yaml: field file_mounts./data: a bucket of aws, read by "
                               "aws instances only, and the task's resources allow gcp")
    with pytest.raises(InvalidInput) as info:
        task("file_mounts: {/a: s3://one, /b: gs://two}\n"
             "resources: {accelerators: V100}\nrun: x")
    assert "buckets of aws and gcp" in str(info.value) and "\n" not in str(info.value)
