"""The boot path, executed: costsched launches a job with the AWS launcher against moto in
server mode (real HTTP: EC2, S3, SSM on 127.0.0.1), and the test plays the instance. It
reads the user data EC2 holds, runs it under bash in a sandbox, with a loopback metadata
server (IMDSv2 token, spot/instance-action) for the notice. The script makes its virtual
environment and installs nothing from the network (its install step points at this
checkout's environment); the agent fetches and verifies the code archive from moto's S3,
runs setup and the job, publishes checkpoints to S3, and on the notice checkpoints and
stops. The recovery starts another instance that resumes from the same code and checkpoint
and finishes with the bytes of an uninterrupted run."""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

pytest.importorskip("flask", reason="moto's server mode needs moto[server]")

from costsched.service import jobs as service  # noqa: E402
from costsched.store import PriceStore  # noqa: E402
from launchers.aws import AwsLauncher  # noqa: E402
from launchers.checkpoints import open_store  # noqa: E402
from launchers.userdata import checkout_install  # noqa: E402
from tests.conftest import hermetic_aws_env, moto_regions  # noqa: E402
from tests.job_folders import folder_of
from tests.launchers.moto_images import IMAGE

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "examples" / "tinyproject"
BUCKET = "boot-bucket"
TOKEN = "imds-token-7"
AT = pd.Timestamp("2026-01-01T00:00:00Z").to_pydatetime()
STEPS = "300"  # the played job's: 3 s at 0.01 s a step, stopped after its first checkpoint


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Metadata:
    """The instance metadata servers, as much as the agent reads: EC2's IMDSv2 token, then
    spot/instance-action (404 until a notice is set, then its JSON); Compute Engine's
    instance/preempted (FALSE, then TRUE)."""

    def __init__(self) -> None:
        self.notice = False
        self.asked = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_PUT(self) -> None:  # noqa: N802 - http.server's name
                ok = self.path == "/latest/api/token" and self.headers.get(
                    "X-aws-ec2-metadata-token-ttl-seconds")
                self._send(200 if ok else 400, TOKEN if ok else "")

            def do_GET(self) -> None:  # noqa: N802
                if self.path.startswith("/computeMetadata/v1/"):
                    return self._google()
                if self.headers.get("X-aws-ec2-metadata-token") != TOKEN:
                    return self._send(401, "")
                if self.path != "/latest/meta-data/spot/instance-action":
                    return self._send(404, "")
                owner.asked += 1
                if not owner.notice:
                    return self._send(404, "")
                self._send(200, json.dumps({"action": "terminate",
                                            "time": "2026-01-01T00:02:00Z"}))

            def _google(self) -> None:
                if self.headers.get("Metadata-Flavor") != "Google":
                    return self._send(403, "")
                if self.path != "/computeMetadata/v1/instance/preempted":
                    return self._send(404, "")
                owner.asked += 1
                self._send(200, "TRUE" if owner.notice else "FALSE")

            def _send(self, code: int, body: str) -> None:
                data = body.encode()
                self.send_response(code)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def moto_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[str]:
    """moto in server mode on loopback, from an empty account and left empty: its backends
    are this process's, shared with every other moto of the worker (an earlier test's
    instance of job 1 would be found again by a launch of job 1)."""
    from moto.moto_api._internal.models import moto_api_backend
    from moto.server import ThreadedMotoServer

    moto_api_backend.reset()
    hermetic_aws_env(monkeypatch, tmp_path, ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL_EC2"))
    monkeypatch.delenv("AWS_EC2_METADATA_DISABLED")
    moto_regions(monkeypatch)
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    try:
        yield endpoint
    finally:
        server.stop()
        moto_api_backend.reset()


@pytest.fixture()
def metadata() -> Iterator[Metadata]:
    server = Metadata()
    yield server
    server.close()


def write_job(tmp_path: Path) -> Path:
    project = tmp_path / "tinyproject"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns("checkpoints", "__pycache__"))
    spec = yaml.safe_load((project / "costsched.yaml").read_text())
    spec["run"] = (f"python train.py --steps {STEPS} --step-seconds 0.01 "
                   "--checkpoint-every 0.3")
    # pip's own offline install of the requirements runs in tests/examples/test_tinyproject
    spec["setup"] = "test -f requirements.txt && echo set up > ../setup-ran"
    path = project / "boot.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


class Instance:
    """One instance played on this machine: its startup script under bash, in a sandbox,
    with the cloud's endpoints on loopback."""

    def __init__(self, script: str, sandbox: Path, env: dict[str, str], *,
                 image_has_env: bool = False) -> None:
        """With `image_has_env`, the machine image carries costsched's virtual environment
        at the script's root (the sandbox's `root`) already: the script does not make one
        (`[ -x "$root/bin/python" ] ||`; making it installs pip in it, seconds of CPU) and
        runs its install step in that one. Each cloud's boot test here makes it; the tests
        of what follows a boot (an agent started again, a gang's rounds, a container, a
        recovery's second instance) boot from such an image."""
        self.script, self.sandbox = script, sandbox
        sandbox.mkdir(parents=True)
        if image_has_env:
            root = sandbox / "root"
            assert f'root="{root}"' in script, "the script's root is not the sandbox's"
            subprocess.run([sys.executable, "-m", "venv", "--without-pip",
                            "--system-site-packages", str(root)], check=True)
        env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(sandbox),
               "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "", "PIP_CONFIG_FILE": os.devnull,
               "COSTSCHED_AGENT_POLL": "0.2", **env,
               # the code under test, where it is not the environment's installed checkout
               **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}}
        self.out = (sandbox / "console.log").open("wb")
        self.proc = subprocess.Popen(["bash", "-c", self.script], cwd=sandbox, env=env,
                                     stdout=self.out, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    @property
    def workdir(self) -> Path:
        return self.sandbox / "root" / "work" / "job-1"

    def wait(self, timeout: float = 120) -> dict:
        try:
            self.proc.wait(timeout=timeout)
        finally:
            self.out.close()
        console = (self.sandbox / "console.log").read_text(errors="replace")
        assert (self.workdir / "status.json").exists(), console
        return json.loads((self.workdir / "status.json").read_text())

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()
        self.out.close()


def ec2_instance(ec2: Any, instance_id: str, sandbox: Path, endpoint: str,
                 metadata: Metadata, image_has_env: bool = False) -> Instance:
    """An EC2 instance: the user data EC2 holds for it (`Instance` for `image_has_env`)."""
    answer = ec2.describe_instance_attribute(InstanceId=instance_id.split("/")[1],
                                            Attribute="userData")
    script = base64.b64decode(answer["UserData"]["Value"]).decode()
    return Instance(script, sandbox, {
        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": endpoint,
        "AWS_EC2_METADATA_SERVICE_ENDPOINT": metadata.url,
        "AWS_CONFIG_FILE": str(sandbox / "none"),
        "AWS_SHARED_CREDENTIALS_FILE": str(sandbox / "none")}, image_has_env=image_has_env)


def wait_for(predicate: Any, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


@pytest.mark.results
def test_launch_boot_notice_recover_on_moto_server(tmp_path: Path, moto_server: str,
                                                   metadata: Metadata) -> None:
    import boto3
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.ec2.models import ec2_backends
    from moto.ec2.models.instances import StateReason

    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket=BUCKET)
    ec2 = boto3.client("ec2", region_name="us-east-1")
    image = IMAGE
    site = sysconfig.get_paths()["purelib"]  # this checkout's environment
    launcher = AwsLauncher(image_id=image, install=checkout_install(site),
                           root=str(tmp_path / "i1" / "root"))
    store = PriceStore(f"sqlite:///{tmp_path / 'store.sqlite'}")
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone=zone, instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=price, effective_at=AT, source="test") for zone, price in
        (("us-east-1a", 0.9), ("us-east-1b", 1.0))]))

    [job] = service.launch(store, [write_job(tmp_path)], launcher=launcher,
                           checkpoint_root=f"s3://{BUCKET}/jobs")
    first_id = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    stored = store.jobs.get(job.id).spec["code"]
    code_key = f"jobs/{folder_of(store, job.id)}/code/{stored['sha256']}.tar.gz"
    assert s3.head_object(Bucket=BUCKET, Key=code_key)["ContentLength"] == stored["size"]

    first = ec2_instance(ec2, first_id, tmp_path / "i1", moto_server, metadata)
    checkpoints = open_store(f"s3://{BUCKET}/jobs/{folder_of(store, job.id)}")
    try:
        wait_for(lambda: any(c.part("state.npz") for c in checkpoints.list()))
        metadata.notice = True  # the two-minute warning
        status = first.wait()
    finally:
        first.kill()
    assert status["state"] == "stopped" and status["detail"] == "preemption notice", status
    first_log = (first.workdir / "job.log").read_text()
    assert "stopped at step" in first_log and "done at step" not in first_log
    stopped_at = int(first_log.split("stopped at step")[1].split()[0])
    assert (first.sandbox / "root" / "work" / "job-1" / "setup-ran").exists()

    # EC2 takes the instance; costsched sees it and recovers the job on another instance
    backend = ec2_backends[DEFAULT_ACCOUNT_ID]["us-east-1"]
    ec2_id = first_id.split("/")[1]
    backend.terminate_instances([ec2_id])
    backend.get_instance(ec2_id).state_reason = StateReason(
        "Server.SpotInstanceTermination: Spot instance termination",
        "Server.SpotInstanceTermination")
    metadata.notice = False
    launcher.root = str(tmp_path / "i2" / "root")
    done = service.reconcile(store, launcher)
    assert any("preempted; recovery" in line for line in done), done
    second_id = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    assert second_id != first_id

    second = ec2_instance(ec2, second_id, tmp_path / "i2", moto_server, metadata,
                          image_has_env=True)
    try:
        status = second.wait()
    finally:
        second.kill()
    assert status["state"] == "succeeded", status
    second_log = (second.workdir / "job.log").read_text()
    assert f"resumed at step {stopped_at}" in second_log, second_log
    assert (second.workdir / "setup-ran").exists()
    assert (second.workdir / "code" / "tiny" / "model.py").is_file()
    assert not (second.workdir / "code" / "notes").exists()

    reference = tmp_path / "reference"
    subprocess.run([sys.executable, "train.py", "--steps", STEPS], cwd=PROJECT, check=True,
                   env={**os.environ, "CHECKPOINT_DIR": str(reference)},
                   capture_output=True)
    result = [c.part("result.npy") for c in checkpoints.list() if c.part("result.npy")][-1]
    got = checkpoints.fetch(result, tmp_path / "got")
    assert got.read_bytes() == (reference / "result.npy").read_bytes()


@pytest.mark.results
def test_gcp_startup_script_boot_notice_recover_with_loopback_gcs(
        tmp_path: Path, metadata: Metadata, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same on Compute Engine's side: the startup script of the instance costsched asked
    for (a fake InstancesClient keeps it), GCS on the loopback fake, the preempted notice
    from a loopback metadata server."""
    pytest.importorskip("google.cloud.compute_v1")
    from launchers.gcp import GcpLauncher
    from tests.launchers.checkpoints.gcs_fake import FakeGcs
    from tests.launchers.test_gcp import FakeInstances

    with FakeGcs(BUCKET) as gcs:
        monkeypatch.setenv("STORAGE_EMULATOR_HOST", gcs.url)
        instances = FakeInstances()
        site = sysconfig.get_paths()["purelib"]
        launcher = GcpLauncher(project="proj", instances_client=instances,
                               install=checkout_install(site), root=str(tmp_path / "i1" / "root"))
        store = PriceStore(f"sqlite:///{tmp_path / 'store.sqlite'}")
        store.ingest(pd.DataFrame([dict(
            cloud="gcp", region="us-central1", zone="us-central1-a",
            instance_type="n1-standard-8+1xnvidia-tesla-v100", market="spot", os="linux",
            gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=30.0, usd_per_hour=0.8,
            effective_at=AT, source="test")]))
        path = write_job(tmp_path)
        spec = yaml.safe_load(path.read_text())
        spec["constraints"]["regions"] = ["us-central1"]
        # The stored V100 price, not the bundled 2026 readings of other GCP machines there.
        spec["constraints"]["gpu_models"] = ["V100"]
        path.write_text(yaml.safe_dump(spec))

        def boot(sandbox: Path, image_has_env: bool = False) -> Instance:
            """Compute Engine starts the newest instance: RUNNING, its startup script run."""
            (zone, name), made = list(instances.store.items())[-1]
            made.status = "RUNNING"
            service.reconcile(store, launcher)
            script = next(i.value for i in made.metadata.items if i.key == "startup-script")
            return Instance(script, sandbox, {"STORAGE_EMULATOR_HOST": gcs.url,
                                              "GCE_METADATA_HOST": metadata.url[7:-1]},
                            image_has_env=image_has_env)

        [job] = service.launch(store, [path], launcher=launcher,
                               checkpoint_root=f"gs://{BUCKET}/jobs")
        code = store.jobs.get(job.id).spec["code"]
        assert f"jobs/{folder_of(store, job.id)}/code/{code['sha256']}.tar.gz" in gcs.objects
        checkpoints = open_store(f"gs://{BUCKET}/jobs/{folder_of(store, job.id)}")
        first = boot(tmp_path / "i1")
        try:
            wait_for(lambda: any(c.part("state.npz") for c in checkpoints.list()))
            metadata.notice = True
            status = first.wait()
        finally:
            first.kill()
        assert status["state"] == "stopped" and status["detail"] == "preemption notice", status
        stopped_at = int((first.workdir / "job.log").read_text()
                         .split("stopped at step")[1].split()[0])

        instances.store.clear()  # a preempted spot VM is deleted
        metadata.notice = False
        launcher.root = str(tmp_path / "i2" / "root")
        done = service.reconcile(store, launcher)
        assert any("preempted; recovery" in line for line in done), done
        second = boot(tmp_path / "i2", image_has_env=True)
        try:
            status = second.wait()
        finally:
            second.kill()
        assert status["state"] == "succeeded", status
        assert f"resumed at step {stopped_at}" in (second.workdir / "job.log").read_text()
        reference = tmp_path / "reference"
        subprocess.run([sys.executable, "train.py", "--steps", STEPS], cwd=PROJECT,
                       check=True, env={**os.environ, "CHECKPOINT_DIR": str(reference)},
                       capture_output=True)
        result = [c.part("result.npy") for c in checkpoints.list() if c.part("result.npy")][-1]
        got = checkpoints.fetch(result, tmp_path / "got")
        assert got.read_bytes() == (reference / "result.npy").read_bytes()
