"""Which file mount of a SkyPilot task holds the checkpoints: one the task writes to (mode
MOUNT or MOUNT_CACHED written, or a bucket made by name), never one copied down read-only
(COPY, or a plain bucket URI) nor a data source whose mode is left out; without one, the
checkpoint root, said with the keys that choose otherwise."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from costsched.model import InvalidInput
from costsched.skypilot import CHECKPOINT_ROOT, checkpoint_note, parse_task


def task(mounts: str, section: str = "") -> Any:
    return parse_task(yaml.safe_load(
        f"resources: {{accelerators: V100:1}}\nfile_mounts:\n{mounts}run: x\n{section}"),
        "task.yaml", "t")


@pytest.mark.parametrize(("mounts", "why"), [
    ("  /data: {source: s3://corpus/v1, mode: COPY}\n",
     "/data is copied down once, read-only (mode COPY)"),
    ("  /data: s3://corpus/v1\n", "/data is copied down once, read-only (mode COPY)"),
    ("  /data: {source: s3://corpus/v1}\n",
     "/data is the task's data (a source without a mode)"),
    ("  /data: {name: corpus, source: ./inputs}\n",
     "/data is the task's data (a source without a mode)"),
])
def test_a_bucket_the_task_does_not_write_to_never_holds_the_checkpoints(
        mounts: str, why: str) -> None:
    spec = task(mounts)
    assert not spec.checkpoint.location and spec.task.checkpoint_mount == ""
    assert [m.path for m in spec.task.mounts] == ["/data"]  # still mounted, as written
    note = checkpoint_note(spec.task.notes, "/ckpts/job-ID (launch.checkpoint_root)")
    assert note == (f"checkpoints go to /ckpts/job-ID (launch.checkpoint_root), not to a "
                    f"bucket of file_mounts: {why}. To keep them in one, mount it with "
                    "mode: MOUNT (or MOUNT_CACHED), or name its path in "
                    "costsched.checkpoint.location")
    assert CHECKPOINT_ROOT in checkpoint_note(spec.task.notes, CHECKPOINT_ROOT)


@pytest.mark.parametrize(("mounts", "location", "mode"), [
    ("  /ckpt: {source: s3://team/ckpt, mode: MOUNT}\n", "s3://team/ckpt", "MOUNT"),
    ("  /ckpt: {source: s3://team/ckpt, mode: MOUNT_CACHED}\n", "s3://team/ckpt",
     "MOUNT_CACHED"),
    ("  /ckpt: {name: team-ckpt}\n", "s3://team-ckpt", "MOUNT"),  # made by name: MOUNT
    ("  /ckpt: {name: team-ckpt, store: s3, mode: mount}\n", "s3://team-ckpt", "MOUNT"),
])
def test_the_one_bucket_the_task_writes_to_holds_the_checkpoints(
        mounts: str, location: str, mode: str) -> None:
    spec = task("  /data: {source: s3://corpus/v1, mode: COPY}\n"
                "  /raw: {source: s3://corpus/raw}\n" + mounts)
    assert spec.checkpoint.location == location and spec.task.checkpoint_mount == "/ckpt"
    assert [m.path for m in spec.task.mounts] == ["/data", "/raw"]
    assert checkpoint_note(spec.task.notes, "unused") == (
        f"checkpoints go to {location} (the one writable bucket mount, /ckpt, mode {mode})")


def test_a_data_source_is_taken_when_the_task_names_its_path() -> None:
    spec = task("  /data: {source: s3://corpus/v1}\n",
                "costsched:\n  checkpoint: {location: /data}\n")
    assert spec.checkpoint.location == "s3://corpus/v1"
    assert spec.task.checkpoint_mount == "/data"


def test_a_copied_bucket_named_for_the_checkpoints_is_refused_in_one_line() -> None:
    with pytest.raises(InvalidInput) as caught:
        task("  /data: {source: s3://corpus/v1, mode: COPY}\n",
             "costsched:\n  checkpoint: {location: /data}\n")
    said = str(caught.value)
    assert "costsched.checkpoint.location" in said and "\n" not in said
    assert "'/data' is a bucket copied down once, read-only (mode COPY)" in said
    assert "mode: MOUNT or MOUNT_CACHED" in said
