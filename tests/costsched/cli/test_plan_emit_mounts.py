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


def checkpointing(cli, tmp_path: Path, extra: str = "",  # noqa: ANN001
                  stderr: list[str] | None = None) -> tuple[dict, str]:
    path = tmp_path / "task.yaml"
    path.write_text(yaml.safe_dump({
        "name": "ckpt", "resources": {"accelerators": "V100:1"}, "envs": {"LR": "0.1"},
        "run": 'python train.py --ckpt-dir "$CHECKPOINT_DIR" --lr $LR'}) + extra)
    result = cli("plan", path, "--emit", "sky", "--at", "2026-11-01")
    assert result.exit_code == 0, result.output
    if stderr is not None:
        stderr.extend(line.replace(str(path), "TASK") for line in result.stderr.splitlines())
    return yaml.safe_load(result.stdout), result.stdout


def test_a_run_reading_the_checkpoint_folder_costsched_sets_is_said_where_sky_has_none(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    stderr: list[str] = []
    out, text = checkpointing(cli, tmp_path, stderr=stderr)
    assert out["envs"] == {"LR": "0.1"}  # no invented folder
    header = " ".join(line.lstrip("# ") for line in text.splitlines() if line.startswith("#"))
    assert ("Its $CHECKPOINT_DIR is set by costsched, not by SkyPilot: give it under envs: "
            "a folder on a bucket mounted with file_mounts (costsched.checkpoint.location: "
            "BUCKET does both), or a recovery starts from nothing.") in header, text
    # Said on stderr too, in one line naming the key: a task saved to a file is not read.
    assert ("note: job ckpt reads $CHECKPOINT_DIR: preemption recovery under SkyPilot needs a "
            "checkpoint bucket; give it with costsched.checkpoint.location in TASK") in stderr


def test_the_checkpoint_key_said_is_the_one_of_a_costsched_job_file(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "job.yaml"
    path.write_text("name: own\nmodel: ResNet-50 (batch size 64)\nsteps: 1000\n"
                    "run: python train.py --ckpt $CHECKPOINT_DIR\n")
    result = cli("plan", path, "--emit", "sky", "--at", "2026-11-01")
    assert result.exit_code == 0, result.output
    assert (f"note: job own reads $CHECKPOINT_DIR: preemption recovery under SkyPilot needs a "
            f"checkpoint bucket; give it with checkpoint.location in {path}") in result.stderr
    ok = path.read_text() + "checkpoint: {location: s3://corpus-bucket/ckpts}\n"
    path.write_text(ok)
    result = cli("plan", path, "--emit", "sky", "--at", "2026-11-01")
    assert "preemption recovery" not in result.stderr
    out = yaml.safe_load(result.stdout)
    assert out["envs"]["CHECKPOINT_DIR"] == "/checkpoints"
    assert out["file_mounts"]["/checkpoints"]["source"] == "s3://corpus-bucket/ckpts"


def test_a_checkpoint_bucket_gives_the_run_its_checkpoint_folder_as_the_mount(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    out, text = checkpointing(
        cli, tmp_path, "costsched:\n  checkpoint: {location: s3://corpus-bucket/ckpts}\n")
    assert out["envs"] == {"LR": "0.1", "CHECKPOINT_DIR": "/checkpoints"}
    assert out["file_mounts"] == {
        "/checkpoints": {"source": "s3://corpus-bucket/ckpts", "mode": "MOUNT"}}
    assert "set by costsched, not by SkyPilot" not in text
