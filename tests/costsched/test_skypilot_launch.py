"""A SkyPilot task with ports, a disk size, an image, a secret given at launch and two
bucket mounts, launched through the CLI on the local launcher against moto's S3 served on
loopback: the job gets its secret and its mounts; the secret is in no byte of the store,
the instance's files and logs, or what `launch`, `status` and `logs` print."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("flask", reason="moto's server mode needs moto[server]")

from tests.launchers.test_boot_path import free_port  # noqa: E402

SECRET = "hf_Zq8cR2vLx9TkEw4mNp7Ys3Ud6Gj1Ab5H"
TASK = """\
name: secret-task
resources:
  infra: aws/us-east-1
  accelerators: V100:1
  ports: [8080, 9000-9005]
  disk_size: 100
  image_id: ami-12c6146b
envs:
  GREETING: hello
  WANDB_PROJECT:
secrets:
  HF_TOKEN:
file_mounts:
  /ckpt:
    name: ckpt-bucket
    store: s3
    mode: MOUNT
  /data:
    source: s3://data-bucket/set
    mode: COPY
run: |
  python - <<'EOF'
  import hashlib, os, pathlib
  token = os.environ["HF_TOKEN"].encode()
  data = pathlib.Path(os.environ["COSTSCHED_MOUNTS"] + "/data/part/hello.txt").read_text()
  pathlib.Path("out.txt").write_text(
      hashlib.sha256(token).hexdigest() + " " + data + " " + os.environ["WANDB_PROJECT"])
  print("job ran with", len(token), "bytes of token")
  print("token is", token.decode())  # a job that prints its secret: never in a log
  EOF
"""


def _one(text: str) -> dict:
    shown = json.loads(text)
    shown = shown["jobs"] if isinstance(shown, dict) else shown
    return shown[0]


@pytest.fixture()
def s3_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[str]:
    from moto.moto_api._internal.models import moto_api_backend
    from moto.server import ThreadedMotoServer

    from tests.conftest import hermetic_aws_env

    moto_api_backend.reset()  # its backends are the process's: no other test's buckets
    hermetic_aws_env(monkeypatch, tmp_path, ("AWS_ENDPOINT_URL_S3",))
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{port}")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()
        moto_api_backend.reset()


def test_a_skypilot_task_with_a_secret_and_two_buckets_runs_on_the_local_launcher(
        cli, db_path: Path, s3_server: str, tmp_path: Path,  # noqa: ANN001
        monkeypatch: pytest.MonkeyPatch) -> None:
    import boto3

    s3 = boto3.client("s3", region_name="us-east-1")
    for bucket in ("ckpt-bucket", "data-bucket"):
        s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket="data-bucket", Key="set/part/hello.txt", Body=b"hello data")
    instances = tmp_path / "instances"
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(instances))
    path = tmp_path / "task.yaml"
    path.write_text(TASK)

    missing = cli("launch", path, "--env", "WANDB_PROJECT=p1", "--wait", "0")
    assert missing.exit_code != 0 and ("field secrets.HF_TOKEN is not given: give it at "
                                       "launch with --secret HF_TOKEN" in missing.output)
    monkeypatch.setenv("HF_TOKEN", SECRET)  # --secret HF_TOKEN: from the caller's environment
    launched = cli("launch", path, "--env", "WANDB_PROJECT=p1", "--secret", "HF_TOKEN",
                   "--wait", "0", "--json")
    assert launched.exit_code == 0, launched.output
    [job] = json.loads(launched.stdout)
    deadline = time.monotonic() + 90
    while True:
        shown = cli("status", str(job["id"]), "--json")
        state = _one(shown.stdout)["state"]
        if state in ("succeeded", "failed") or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    monkeypatch.delenv("HF_TOKEN")  # `logs` knows no value: the log itself holds none
    logs = cli("logs", str(job["id"]))
    [folder] = [p.parent for p in instances.glob("*/instance.json")]
    assert state == "succeeded", (shown.stdout, logs.output,
                                  (folder / "agent.log").read_text())
    out = (folder / "code" / "out.txt").read_text()
    assert out == f"{hashlib.sha256(SECRET.encode()).hexdigest()} hello data p1"
    agent_log = (folder / "agent.log").read_text()
    assert agent_log.startswith("costsched local launcher: ports, disk_size, image_id not "
                                "applied")
    assert "copied s3://data-bucket/set to" in agent_log
    # The job's own log (what `costsched logs` shows) says it too: where the mounts went.
    said = agent_log.splitlines()[0]
    assert (folder / "job.log").read_text().startswith(said + "\n")
    assert f"file mounts placed under {folder / 'mounts'}" in said
    from costsched.store import PriceStore

    store = PriceStore(str(db_path))
    record = store.jobs.get(job["id"])
    store.dispose()
    assert record.checkpoint_location.startswith("s3://ckpt-bucket")  # the MOUNT bucket
    assert record.spec["spec"]["task"]["secrets"] == ["HF_TOKEN"]  # its name only

    # The secret is nowhere but in the job's process.
    secret = SECRET.encode()
    for f in [db_path, *db_path.parent.glob(f"{db_path.name}*"), *instances.rglob("*")]:
        if f.is_file():
            assert secret not in f.read_bytes(), f
    assert "token is ***" in logs.output
    # The dashboard, whose environment holds no value either, shows the output as it was
    # written: masked by the job's agent (no longer withheld for want of the value).
    from starlette.testclient import TestClient

    from costsched.dashboard.app import create_app

    store = PriceStore(str(db_path))
    tail = TestClient(create_app(store)).get(f"/api/jobs/{job['id']}").json()["log_tail"]
    store.dispose()
    assert "token is ***" in tail and "withheld" not in tail and SECRET not in tail
    for text in (launched.output, shown.output, logs.output,
                 cli("status").output, cli("status", "--json").output):
        assert SECRET not in text
    objects = s3.list_objects_v2(Bucket="ckpt-bucket").get("Contents", [])
    for obj in objects:
        body = s3.get_object(Bucket="ckpt-bucket", Key=obj["Key"])["Body"].read()
        assert secret not in body, obj["Key"]
