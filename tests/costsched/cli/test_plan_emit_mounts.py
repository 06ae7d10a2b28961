"""`plan --emit sky` writes every file mount as the task wrote it, in each form SkyPilot
reads: a local path, a bucket URI (copied), {source, mode}, {name, store, mode,
persistent}, {name, source: a local folder to upload}, with ${VAR} left for SkyPilot to
fill. Only the resources are the plan's."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

MOUNTS = {
    "/data": {"source": "s3://corpus-bucket/v3", "mode": "COPY"},
    "/raw": "s3://corpus-bucket/raw",
    "/streamed": {"source": "s3://corpus-bucket/shards"},
    "/cached": {"source": "s3://corpus-bucket/cache", "mode": "MOUNT_CACHED"},
    "/out": {"name": "${OUT_BUCKET}", "store": "s3", "mode": "MOUNT", "persistent": False},
    "/uploaded": {"name": "uploads-bucket", "source": "./inputs", "store": "s3",
                  "persistent": True},
    "/cfg": "./configs",
    "/one-file": "./configs/train.json",
}


def emitted(cli, tmp_path: Path, mounts: dict, extra: str = "") -> dict:  # noqa: ANN001
    (tmp_path / "configs").mkdir(exist_ok=True)
    (tmp_path / "configs" / "train.json").write_text("{}")
    (tmp_path / "inputs").mkdir(exist_ok=True)
    path = tmp_path / "task.yaml"
    path.write_text(yaml.safe_dump({
        "name": "mounts", "resources": {"accelerators": "V100:1"},
        "envs": {"OUT_BUCKET": "team-outputs"}, "file_mounts": mounts,
        "run": "python train.py"}) + extra)
    result = cli("plan", path, "--emit", "sky", "--at", "2026-11-01")
    assert result.exit_code == 0, result.output
    return yaml.safe_load(result.stdout)


def test_every_form_of_file_mount_is_emitted_as_written(cli, tmp_path: Path) -> None:  # noqa: ANN001
    out = emitted(cli, tmp_path, MOUNTS)
    assert out["file_mounts"] == MOUNTS
    assert out["resources"]["infra"].startswith("aws")  # the plan's: the buckets' cloud


@pytest.mark.parametrize(("path", "given"), [
    (path, given) for path, given in MOUNTS.items() if path not in ("/cfg", "/one-file")])
def test_each_bucket_form_alone_reads_back_the_same(
        cli, tmp_path: Path, path: str, given: object) -> None:  # noqa: ANN001
    # Alone, the mount may be the checkpoint bucket: it is still written as it was.
    out = emitted(cli, tmp_path, {path: given})
    assert out["file_mounts"] == {path: given}
    again = tmp_path / "again.yaml"
    again.write_text(yaml.safe_dump(out))
    assert emitted(cli, tmp_path, out["file_mounts"])["file_mounts"] == {path: given}


def test_a_checkpoint_bucket_the_task_does_not_mount_is_added_once(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    out = emitted(cli, tmp_path, {"/data": MOUNTS["/data"]},
                  "costsched:\n  checkpoint: {location: s3://corpus-bucket/ckpts}\n")
    assert out["file_mounts"] == {
        "/data": MOUNTS["/data"],
        "/checkpoints": {"source": "s3://corpus-bucket/ckpts", "mode": "MOUNT"}}
