"""A plan with no offering names every limit that keeps the job from where its shape is
priced, costsched's own (a data bucket's cloud) as well as the file's; and each GPU of an
accelerator set that the plan leaves out gets its own `left out:` line, whatever the cause."""

from __future__ import annotations

from pathlib import Path

from costsched.service import plan
from costsched.store import PriceStore
from costsched.taskfile import load

DATA = "file_mounts:\n  /data: s3://team-data/imagenet\n"
BUCKET = ("the task's s3 bucket /data (s3://team-data/imagenet) keeps it on aws (an instance "
          "reads its own cloud's buckets only; to run elsewhere too, copy the data to a "
          "bucket of that cloud and mount that one)")


def _plan(cli, tmp_path: Path, text: str):  # noqa: ANN001, ANN202
    task = tmp_path / "ft.yaml"
    task.write_text(f"name: ft\n{text}run: python train.py\n")
    return cli("plan", task)


def _said(text: str) -> str:
    return " ".join(text.split())


def test_a_data_buckets_cloud_is_named_where_it_keeps_the_shape_out(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    done = _plan(cli, tmp_path, DATA + "resources: {accelerators: A100-80G:1}\n")
    assert done.exit_code == 1, done.output
    reason = _said(done.stderr)
    assert "for A100-80GB:1 in aws; on-demand elsewhere: azure " in reason, reason
    assert f"; not there because {BUCKET}" in reason, reason


def test_the_limit_reaches_the_plan_as_a_fact_of_the_task_not_as_its_note(
        store: PriceStore, tmp_path: Path) -> None:
    task = tmp_path / "ft.yaml"
    task.write_text(f"name: ft\n{DATA}resources: {{accelerators: A100-80G:1}}\nrun: x\n")
    spec = load(task)[0]
    assert spec.task.limits == {"clouds": BUCKET}  # recorded where the bucket narrowed it
    # The notes worded otherwise (or gone): the plan still says why, from the fact.
    reworded = spec.model_copy(update={"task": spec.task.model_copy(update={
        "notes": [n.replace(" keeps it on ", " holds it to ") for n in spec.task.notes]})})
    result = plan(store, [(str(task), reworded)])
    assert not result.ok
    assert f"; not there because {BUCKET}" in _said(result.jobs[0].reason)
    # A task whose resources name the cloud themselves has no limit of costsched's.
    own = tmp_path / "own.yaml"
    own.write_text(f"name: own\n{DATA}resources: {{accelerators: V100:1, infra: aws}}\n"
                   "run: x\n")
    assert load(own)[0].task.limits == {}


def test_a_region_from_infra_is_named(cli, tmp_path: Path) -> None:  # noqa: ANN001
    done = _plan(cli, tmp_path, "resources: {accelerators: A100-80GB:1, infra: gcp/asia-east1}\n")
    assert done.exit_code == 1, done.output
    reason = _said(done.stderr)
    assert "for A100-80GB:1 in gcp, asia-east1; on-demand elsewhere: gcp " in reason, reason
    assert "not there because its file keeps it in region asia-east1" in reason, reason


def test_a_checkpoint_bucket_keeps_nothing_out(cli, tmp_path: Path) -> None:  # noqa: ANN001
    done = _plan(cli, tmp_path, "file_mounts:\n  /ckpt: {name: my-ckpts, store: s3, mode: "
                 "MOUNT}\nresources: {accelerators: A100-80GB:1}\n")
    assert done.exit_code == 0, done.output  # carried with the job: planned on gcp
    assert "keeps it on" not in _said(done.output)


def test_each_gpu_of_a_set_left_out_gets_its_line(cli, tmp_path: Path) -> None:  # noqa: ANN001
    done = _plan(cli, tmp_path, DATA + "resources: {accelerators: {A100-80GB:1, T4:1}}\n")
    assert done.exit_code == 0, done.output  # the T4s of aws
    said = _said(done.output)
    assert "A100-80GB:1 left out: no price known as of " in said, said  # was: silent
    line = said.split("A100-80GB:1 left out: ", 1)[1]
    assert "for A100-80GB:1 in aws; on-demand elsewhere: azure " in line, line
    assert f"not there because {BUCKET}" in line, line
    assert "T4:1 left out" not in said
