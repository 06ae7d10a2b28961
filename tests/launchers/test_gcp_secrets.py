"""A job's secrets on Compute Engine: Secret Manager over its REST API, against a fake that
keeps every request. The launcher makes one secret of the attempt (create + add version);
the instance insert request, its labels and metadata carry no value; the startup script,
run for real under bash with a stand-in agent, reads the secret with the token of a
loopback metadata server, hands it to the agent, and deletes it; ending an instance that
never booted deletes its secret; leftovers of a crashed launch are swept."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import http.server
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

pytest.importorskip("google.cloud.compute_v1")

from launchers import cloud_secrets  # noqa: E402
from launchers.base import TAG_JOB  # noqa: E402
from launchers.gcp import GcpLauncher  # noqa: E402
from launchers.gcp_secrets import SecretManager, secret_id  # noqa: E402
from launchers.userdata import read_payload  # noqa: E402
from tests.launchers.test_gcp import FakeInstances, spec  # noqa: E402

VALUE = "hf_gcp-s3cr3t-7c1d0e"
TOKEN = "ya29.instance-token"
REAL = Path(__file__).resolve().parents[2] / "launchers"


class Answer:
    def __init__(self, status: int, body: dict | None = None) -> None:
        self.status_code = status
        self.content = json.dumps(body).encode() if body is not None else b""

    def json(self) -> Any:
        return json.loads(self.content)


class FakeSecretManager:
    """Secret Manager v1 as the launcher and the instance use it; every request kept as
    (method, path, query, body, authorization)."""

    def __init__(self) -> None:
        self.secrets: dict[str, dict] = {}
        self.requests: list[tuple[str, str, dict, Any, str]] = []

    def request(self, method: str, url: str, json: Any = None, params: Any = None,
                timeout: float | None = None, auth: str = "launcher") -> Answer:
        parts = urlsplit(url)
        query = {**{k: v[0] for k, v in parse_qs(parts.query).items()}, **(params or {})}
        path = parts.path.removeprefix("/v1/")
        self.requests.append((method, path, query, json, auth))
        if method == "POST" and path == "projects/proj/secrets":
            name = f"projects/proj/secrets/{query['secretId']}"
            if name in self.secrets:
                return Answer(409, {"error": {"message": "exists"}})
            self.secrets[name] = {"name": name, "labels": json["labels"], "versions": [],
                                  "createTime": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                              time.gmtime())}
            return Answer(200, {"name": name})
        if method == "POST" and path.endswith(":addVersion"):
            self.secrets[path.removesuffix(":addVersion")]["versions"].append(
                json["payload"]["data"])
            return Answer(200, {})
        if method == "GET" and path == "projects/proj/secrets":
            field, _, wanted = query["filter"].partition("=")
            label = field.removeprefix("labels.").removesuffix(":*")
            found = [{k: v for k, v in s.items() if k != "versions"}
                     for s in self.secrets.values()
                     if label in s["labels"] and (not wanted or s["labels"][label] == wanted)]
            return Answer(200, {"secrets": found} if found else {})
        if method == "GET" and path.endswith("/versions/latest:access"):
            secret = self.secrets.get(path.removesuffix("/versions/latest:access"))
            if secret is None:
                return Answer(404, {"error": {"message": "not found"}})
            return Answer(200, {"payload": {"data": secret["versions"][-1]}})
        if method == "DELETE":
            return Answer(200, {}) if self.secrets.pop(path, None) else Answer(404, {})
        return Answer(400, {"error": {"message": f"unexpected {method} {path}"}})


class Loopback:
    """The instance's side: its metadata server (the service account's token) and Secret
    Manager's endpoint, on one loopback port, over the fake's state."""

    def __init__(self, fake: FakeSecretManager) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self) -> None:
                if self.path.startswith("/computeMetadata/"):
                    ok = self.headers.get("Metadata-Flavor") == "Google" and self.path == (
                        "/computeMetadata/v1/instance/service-accounts/default/token")
                    answer = Answer(200 if ok else 403, {"access_token": TOKEN})
                else:
                    answer = fake.request(self.command, self.path,
                                          auth=self.headers.get("Authorization", ""))
                self.send_response(answer.status_code)
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            do_GET = do_DELETE = _answer  # noqa: N815 - http.server's names

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def secret_spec(attempt: str = "launch-1", job_id: int = 7):
    job = spec(attempt=attempt, job_id=job_id)
    return dataclasses.replace(job, envs={**job.envs, "HF_TOKEN": VALUE},
                               secret_names=("HF_TOKEN",))


@pytest.fixture
def manager() -> FakeSecretManager:
    return FakeSecretManager()


@pytest.fixture
def instances() -> FakeInstances:
    return FakeInstances()


def make_launcher(instances: FakeInstances, manager: FakeSecretManager,
                  api: str = "https://secretmanager.googleapis.com", root: str = "/opt/c"
                  ) -> GcpLauncher:
    return GcpLauncher(project="proj", instances_client=instances, root=root, install="true",
                       secrets=SecretManager("proj", session=manager, api=api))


def test_launch_makes_the_secret_and_the_instance_carries_no_value(
        instances: FakeInstances, manager: FakeSecretManager) -> None:
    launcher = make_launcher(instances, manager)
    launcher.launch(secret_spec())
    sid = secret_id(7, "launch-1", "HF_TOKEN")
    key = cloud_secrets.key(7, "launch-1")
    data = base64.b64encode(VALUE.encode()).decode()
    assert manager.requests == [
        ("GET", "projects/proj/secrets", {"filter": f"labels.{cloud_secrets.TAG_KEY}:*"},
         None, "launcher"),  # the sweep of leftovers: none
        ("POST", "projects/proj/secrets", {"secretId": sid},
         {"replication": {"automatic": {}}, "labels": {TAG_JOB: "7",
                                                       cloud_secrets.TAG_KEY: key}},
         "launcher"),
        ("POST", f"projects/proj/secrets/{sid}:addVersion", {},
         {"payload": {"data": data}}, "launcher")]
    [insert] = instances.inserted
    resource = insert.instance_resource
    sent = str(type(insert).to_json(insert))
    assert VALUE not in sent and data not in sent
    assert all(VALUE not in v for v in resource.labels.values())
    items = {i.key: i.value for i in resource.metadata.items}
    job = read_payload(items["startup-script"])
    assert job["secret_refs"] == {"HF_TOKEN": f"projects/proj/secrets/{sid}"}
    assert job["secret_store"] == "gsm" and "HF_TOKEN" not in job["envs"]
    assert VALUE not in json.dumps(job) and data not in json.dumps(job)


def test_a_launch_without_secrets_asks_secret_manager_nothing(
        instances: FakeInstances, manager: FakeSecretManager) -> None:
    make_launcher(instances, manager).launch(spec())
    assert manager.requests == []


def test_boot_reads_then_deletes_the_secret_and_says_it_nowhere(
        tmp_path: Path, instances: FakeInstances, manager: FakeSecretManager) -> None:
    loopback = Loopback(manager)
    root = tmp_path / "root"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "python").symlink_to(sys.executable)  # stands for the made venv
    fake = tmp_path / "fake" / "launchers"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(f"__path__.append({str(REAL)!r})\n")
    seen = tmp_path / "seen"
    # a stand-in agent: the secret's digest (never itself), and the launch file's modes
    (fake / "agent.py").write_text(
        "import hashlib, json, os, stat, sys\n"
        "STATUS, CHECKPOINTS = 'status.json', 'checkpoints'\n"
        "if __name__ == '__main__':\n"
        f"    run = {str(root / 'run')!r}\n"
        "    [launch] = os.listdir(run)\n"
        "    modes = [stat.S_IMODE(os.stat(p).st_mode) for p in (run, f'{run}/{launch}')]\n"
        "    kept = json.load(open(f'{run}/{launch}'))['env']['HF_TOKEN'] == "
        "os.environ['HF_TOKEN']\n"
        f"    open({str(seen)!r}, 'w').write(json.dumps(["
        "hashlib.sha256(os.environ['HF_TOKEN'].encode()).hexdigest(), modes, kept]))\n")
    launcher = make_launcher(instances, manager, api=loopback.url, root=str(root))
    try:
        launcher.launch(secret_spec())
        [made] = instances.store.values()
        script = next(i.value for i in made.metadata.items if i.key == "startup-script")
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path),
               "GCE_METADATA_HOST": loopback.url.removeprefix("http://"),
               "PYTHONPATH": os.pathsep.join([str(fake.parent), str(REAL.parent)])}
        done = subprocess.run(["bash", "-c", script], env=env, capture_output=True,
                              text=True, timeout=60, cwd=tmp_path)
    finally:
        loopback.close()
    assert done.returncode == 0, done.stderr
    digest, modes, kept = json.loads(seen.read_text())
    assert digest == hashlib.sha256(VALUE.encode()).hexdigest()
    assert modes == [0o700, 0o600] and kept  # for the agent's restarts, its owner's alone
    sid = secret_id(7, "launch-1", "HF_TOKEN")
    assert [(m, p, a) for m, p, _, _, a in manager.requests[3:]] == [
        ("GET", f"projects/proj/secrets/{sid}/versions/latest:access", f"Bearer {TOKEN}"),
        ("DELETE", f"projects/proj/secrets/{sid}", f"Bearer {TOKEN}")]
    assert manager.secrets == {}
    assert VALUE not in done.stdout + done.stderr
    assert list((root / "run").iterdir()) == []  # the job ended: deleted
    launcher.terminate(made_id := f"us-central1-a/{made.name}")  # none left: no error
    assert launcher.status(made_id).state == "terminated"


def test_terminate_before_boot_deletes_the_attempts_secret_only(
        instances: FakeInstances, manager: FakeSecretManager) -> None:
    launcher = make_launcher(instances, manager)
    first = launcher.launch(secret_spec(attempt="launch-1"))
    launcher.launch(secret_spec(attempt="move-2"))  # a move's target: kept
    launcher.terminate(first.id)
    assert list(manager.secrets) == [
        f"projects/proj/secrets/{secret_id(7, 'move-2', 'HF_TOKEN')}"]
    method, path, query, _, _ = manager.requests[-1]
    assert (method, path) == ("DELETE", f"projects/proj/secrets/"
                                        f"{secret_id(7, 'launch-1', 'HF_TOKEN')}")


def test_sweep_deletes_a_crashed_launchs_secret_once_old(
        instances: FakeInstances, manager: FakeSecretManager) -> None:
    launcher = make_launcher(instances, manager)
    live = launcher.launch(secret_spec(attempt="launch-1"))
    instances.store[tuple(live.id.split("/"))].status = "RUNNING"
    launcher.secrets.put(secret_spec(attempt="crashed-1", job_id=8))  # no instance asked
    crashed = f"projects/proj/secrets/{secret_id(8, 'crashed-1', 'HF_TOKEN')}"
    assert launcher.secrets.sweep(launcher.instances()) == []  # may be under way
    later = time.time() + cloud_secrets.SWEEP_AFTER_SECONDS + 60
    assert launcher.secrets.sweep(launcher.instances(), now=later) == [crashed]
    assert crashed not in manager.secrets and len(manager.secrets) == 1
