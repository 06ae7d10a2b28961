"""A task whose one bucket is its data, copied down read-only (mode COPY), launched on the
local launcher against moto's S3 on loopback: the data is at its mount path, the
checkpoints go to the configured checkpoint root (never into the data bucket), and the
launch says where they go, as `plan` does."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

pytest.importorskip("flask", reason="moto's server mode needs moto[server]")

from tests.costsched.test_skypilot_launch import s3_server  # noqa: E402, F401

TASK = """\
name: corpus-train
resources:
  infra: aws/us-east-1
  accelerators: V100:1
file_mounts:
  /data:
    source: s3://corpus-bucket/corpus
    mode: COPY
run: |
  python - <<'EOF'
  import os, pathlib
  text = pathlib.Path("../mounts/data/part/words.txt").read_text()
  pathlib.Path(os.environ["CHECKPOINT_DIR"], "step-1.txt").write_text(text)
  EOF
"""


def test_a_copied_data_bucket_keeps_its_data_and_never_holds_the_checkpoints(
        cli, db_path: Path, s3_server: str, tmp_path: Path,  # noqa: ANN001, F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    import boto3

    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket="corpus-bucket")
    s3.put_object(Bucket="corpus-bucket", Key="corpus/part/words.txt", Body=b"some words")
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    root = tmp_path / "my-checkpoints"
    monkeypatch.setenv("COSTSCHED_LAUNCH_CHECKPOINT_ROOT", str(root))
    path = tmp_path / "task.yaml"
    path.write_text(TASK)

    planned = cli("plan", path, "--at", "2026-11-01")
    assert planned.exit_code == 0, planned.output
    launched = cli("launch", path, "--launcher", "local", "--wait", "0")
    assert launched.exit_code == 0, launched.output
    job_id = json.loads(cli("status", "--json").stdout)
    job_id = (job_id["jobs"] if isinstance(job_id, dict) else job_id)[0]["id"]
    deadline = time.monotonic() + 90
    while True:
        shown = json.loads(cli("status", str(job_id), "--json").stdout)
        state = (shown["jobs"] if isinstance(shown, dict) else shown)[0]["state"]
        if state in ("succeeded", "failed") or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    logs = cli("logs", str(job_id))
    assert state == "succeeded", logs.output
    from costsched.store import PriceStore
    from costsched.store.scope import store_scope

    store = PriceStore(str(db_path))
    record = store.jobs.get(job_id)
    scope = store_scope(store.engine)
    store.dispose()
    said = (f"checkpoints go to {root}/job-{{}} (launch.checkpoint_root), not to a bucket "
            "of file_mounts: /data is copied down once, read-only (mode COPY).")
    # The plan says it before the job has an ID, the launch with the job's and its store's:
    # the same line.
    assert said.format("ID-STORE") in " ".join(planned.output.split())
    assert f"job {job_id}: {said.format(f'{job_id}-{scope}')}" in " ".join(
        launched.output.split())
    assert record.checkpoint_location == f"{root}/job-{job_id}-{scope}"
    assert any(p.is_file() for p in (root / f"job-{job_id}-{scope}").rglob("*"))  # there
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket="corpus-bucket").get("Contents", [])]
    assert keys == ["corpus/part/words.txt"]  # nothing written into the data bucket
