"""The startup script a cloud instance runs at boot: install costsched, then start the job
under its agent (`python -m launchers.agent`), which fetches and verifies the job's code,
runs its setup, then the job.

No job field is ever written into the shell text. The job's fields travel as one JSON
document, base64-encoded (an alphabet the shell gives no meaning to) inside a quoted
here-document, and Python on the instance decodes it and execs the agent with an argument
vector: a hostile job name or command stays one inert string. The script carries no
credentials either: the instance uses its own role (an instance profile, a service account).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from costsched import clouds
from costsched.model import InvalidInput
from launchers.base import LaunchSpec

DEFAULT_ROOT = "/opt/costsched"  # the virtual environment and the jobs' working directories
_PAYLOAD_RE = re.compile(r'b64decode\("([A-Za-z0-9+/=]*)"\)')
_ROOT_RE = re.compile(r"^/[A-Za-z0-9._/-]*$")


@dataclass(frozen=True)
class StopFlag:
    """A URL inside the instance (its metadata server) whose answer turns TRUE when
    costsched asks the job to stop, for clouds with no way to signal a process directly."""

    url: str
    headers: dict[str, str] = field(default_factory=dict)
    every_seconds: float = 5.0


# Runs as the here-document's Python: decodes the job and replaces itself with the agent.
_BOOT = """\
import base64, json, os, sys, time, urllib.request
job = json.loads(base64.b64decode("{payload}").decode("utf-8"))
os.makedirs(job["workdir"], exist_ok=True)
stop = job.get("stop")
if stop and os.fork() == 0:  # a watcher: SIGTERM to the agent once the stop flag reads TRUE
    os.setsid()  # never one of the job's processes, which the agent waits for
    agent = os.getppid()
    while os.getppid() == agent:
        time.sleep(stop["every"])  # first: the agent sets up its SIGTERM handler
        try:
            ask = urllib.request.Request(stop["url"], headers=stop["headers"])
            with urllib.request.urlopen(ask, timeout=10) as answer:
                if answer.read().strip().upper() == b"TRUE":
                    for _ in range(600):  # the agent's SIGTERM handler first (on a slow boot)
                        with open(f"/proc/{{agent}}/status") as status:
                            caught = [v for k, v in (x.split(":", 1) for x in status)
                                      if k == "SigCgt"]
                        if caught and int(caught[0], 16) >> 14 & 1:
                            break
                        time.sleep(0.2)
                    os.kill(agent, 15)
                    break
        except Exception:
            pass
    os._exit(0)
env = dict(os.environ)
env.update(job["envs"])
refs = job.get("secret_refs") or {{}}
if refs:  # the job's secrets, read with the instance's own role (never in this script)
    import boto3
    ssm = boto3.client("ssm", region_name=job["region"])
    for name, ref in refs.items():
        env[name] = ssm.get_parameter(Name=ref, WithDecryption=True)["Parameter"]["Value"]
node = job.get("gang")
if node:  # a node of a gang: wait for every node's address (launchers.cloud_gang)
    from launchers import cloud_gang
    env.update(cloud_gang.boot_node(job))
argv = [sys.executable, "-m", "launchers.agent", "--job-id", str(job["job_id"]),
        "--checkpoint-uri", job["checkpoint_uri"], "--workdir", job["workdir"],
        "--notice-url", job["notice_url"], "--attempt", job["attempt"]]
if node and node["rank"]:  # rank 0 alone publishes checkpoints and heartbeats
    argv += ["--no-publish"]
else:
    argv += ["--heartbeat-seconds", "60"]
code = job.get("code")
if code:
    argv += ["--code-uri", code["uri"], "--code-sha256", code["sha256"],
             "--code-size", str(code["size"])]
if job.get("setup"):
    argv += ["--setup", job["setup"]]
if job.get("mounts"):
    argv += ["--mounts", json.dumps(job["mounts"])]
    if job.get("mount_root"):
        argv += ["--mount-root", job["mount_root"]]
argv += ["--", job["command"]]
os.execve(sys.executable, argv, env)
"""


def payload(spec: LaunchSpec, notice_url: str, root: str = DEFAULT_ROOT,
            stop: StopFlag | None = None, mount_root: str = "",
            secret_refs: Mapping[str, str] | None = None,
            node: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The job's fields as the instance receives them. A task's file mounts go where the
    task says (under `mount_root` when one is given); a local path cannot reach a cloud
    instance and is refused. `secret_refs`: where the instance reads each of the job's
    secrets (an SSM parameter), which then are not in the payload. `node`: the instance's
    place in a gang (`launchers.cloud_gang.node_payload`), None for a job of one node."""
    if isinstance(spec.job_id, bool) or not isinstance(spec.job_id, int):
        raise InvalidInput(f"job id {spec.job_id!r}: expected a whole number")
    leaked = sorted(set(spec.envs) & clouds.credential_envs())
    if leaked:
        raise InvalidInput(f"env {leaked[0]}: credentials are not sent to instances; "
                           "the instance uses its own role (instance profile, service account)")
    mounts = [dict(m) for m in spec.task.get("mounts") or []]
    for m in mounts:
        if "://" not in m["source"]:
            raise InvalidInput(f"file mount {m['path']}: {m['source']!r} is a local path: "
                               "it travels to the local launcher's instances only for now; "
                               "put it in the workdir or a bucket")
    return {"job_id": spec.job_id, "job_name": spec.job_name, "command": spec.command,
            "checkpoint_uri": spec.checkpoint_uri, "attempt": spec.attempt,
            "envs": {str(k): str(v) for k, v in spec.envs.items()
                     if str(k) not in (secret_refs or {})},
            "secret_refs": dict(secret_refs or {}), "region": spec.offering.region,
            "notice_url": notice_url, "workdir": f"{root}/work/job-{spec.job_id}",
            "code": None if not spec.code_uri else {
                "uri": spec.code_uri, "sha256": spec.code_sha256, "size": spec.code_size},
            "setup": spec.setup, "mounts": mounts, "mount_root": mount_root,
            "stop": None if stop is None else {"url": stop.url, "headers": dict(stop.headers),
                                               "every": stop.every_seconds},
            "gang": None if node is None else dict(node)}


def startup_script(spec: LaunchSpec, *, install: str, notice_url: str,
                   root: str = DEFAULT_ROOT, stop: StopFlag | None = None,
                   mount_root: str = "", secret_refs: Mapping[str, str] | None = None,
                   node: Mapping[str, Any] | None = None) -> str:
    """A bash script that makes a virtual environment under `root` (seeing the image's own
    packages: CUDA, frameworks), runs `install` in it, and starts the agent; with `stop`, a
    watcher beside the agent sends it SIGTERM once the stop flag reads TRUE; with `node`,
    the instance is that node of a gang (it waits for the gang's addresses first).

    `install` and `root` are the operator's settings, not job fields: `install` is shell
    text by design; `root` must be a plain absolute path."""
    for name, value in (("root", root), ("mount root", mount_root or "/")):
        if not _ROOT_RE.match(value):
            raise InvalidInput(f"{name} {value!r}: expected an absolute path of letters, "
                               "digits, '.', '_', '-' and '/'")
    if "\n" in install:
        raise InvalidInput("install command: expected one line")
    encoded = base64.b64encode(
        json.dumps(payload(spec, notice_url, root, stop, mount_root, secret_refs, node),
                   sort_keys=True).encode("utf-8")
    ).decode("ascii")
    return "\n".join([
        "#!/bin/bash",
        "# costsched: install costsched, then start the job under its agent.",
        "set -euo pipefail",
        f'root="{root}"',
        'mkdir -p "$root"',
        '[ -x "$root/bin/python" ] || python3 -m venv --system-site-packages "$root"',
        'export PATH="$root/bin:$PATH"',
        install,
        "exec \"$root/bin/python\" - <<'COSTSCHED_BOOT'",
        _BOOT.format(payload=encoded) + "COSTSCHED_BOOT",
        "",
    ])


def checkout_install(site_packages: str) -> str:
    """An install step that installs nothing: the instance's environment sees an existing
    installation's packages (`site_packages`, e.g. an image's own, or a checkout's virtual
    environment in tests) through a .pth file. For images that carry costsched already and
    instances without access to a package index."""
    if not _ROOT_RE.match(site_packages):
        raise InvalidInput(f"site-packages {site_packages!r}: expected an absolute path of "
                           "letters, digits, '.', '_', '-' and '/'")
    purelib = ('"$("$root/bin/python" -c '
               '\'import sysconfig; print(sysconfig.get_paths()["purelib"])\')"')
    # a .pth line that imports: site.addsitedir also reads that directory's own .pth files
    # (an editable install's)
    return (f"printf 'import site; site.addsitedir(\"%s\")\\n' {site_packages} "
            f"> {purelib}/costsched-installed.pth")


def read_payload(script: str) -> dict[str, Any]:
    """The job's fields carried by a script from `startup_script` (for checks and debugging)."""
    found = _PAYLOAD_RE.search(script)
    if found:
        return json.loads(base64.b64decode(found.group(1), validate=True).decode("utf-8"))
    raise InvalidInput("startup script: no costsched job payload found")
