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
from launchers import containers
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


# Runs as the here-document's Python: decodes the job, reads its secrets, writes what the
# agent's supervisor needs (launchers.agent_supervisor) to a file its owner alone reads, and
# starts the supervisor under systemd, or prints the file's path for the shell's own loop.
_BOOT = """\
import base64, json, os, shutil, subprocess, sys, urllib.request
job = json.loads(base64.b64decode("{payload}").decode("utf-8"))
os.makedirs(job["workdir"], exist_ok=True)
env = dict(os.environ)
env.update(job["envs"])
refs = job.get("secret_refs") or {{}}
node = job.get("gang")
if refs and job.get("secret_store") == "gsm":  # Secret Manager, as the service account
    host = os.environ.get("GCE_METADATA_HOST") or "metadata.google.internal"
    ask = urllib.request.Request(
        f"http://{{host}}/computeMetadata/v1/instance/service-accounts/default/token",
        headers={{"Metadata-Flavor": "Google"}})
    with urllib.request.urlopen(ask, timeout=30) as answer:
        auth = {{"Authorization": "Bearer " + json.loads(answer.read())["access_token"]}}
    for name, ref in refs.items():
        ask = urllib.request.Request(f"{{job['secret_api']}}/v1/{{ref}}/versions/latest:access",
                                     headers=auth)
        with urllib.request.urlopen(ask, timeout=30) as answer:
            data = json.loads(answer.read())["payload"]["data"]
        env[name] = base64.b64decode(data).decode("utf-8")
elif refs and job.get("secret_store") == "akv":  # Key Vault, as the VM's managed identity
    from launchers.azure_secrets import read_on_vm
    env.update(read_on_vm(job["secret_api"], refs))
elif refs:  # SSM parameters, with the instance's own role (never in this script)
    import boto3
    ssm = boto3.client("ssm", region_name=job["region"])
    for name, ref in refs.items():
        env[name] = ssm.get_parameter(Name=ref, WithDecryption=True)["Parameter"]["Value"]
if node:  # a node of a gang: wait for every node's address (launchers.cloud_gang)
    from launchers import cloud_gang
    node_envs = cloud_gang.boot_node(job)
else:  # one node: rank 0 of 1, as SkyPilot tells every task
    from launchers.gang import node_envs as one_node
    node_envs = one_node(0, 1, job.get("gpus", 0))
env.update(node_envs)
argv = [sys.executable, "-m", "launchers.agent", "--job-id", str(job["job_id"]),
        "--checkpoint-uri", job["checkpoint_uri"], "--workdir", job["workdir"],
        "--notice-url", job["notice_url"], "--attempt", job["attempt"]]
if node and node["rank"]:  # rank 0 alone publishes checkpoints and heartbeats
    argv += ["--no-publish"]
else:
    argv += ["--heartbeat-seconds", "60"]
if node:  # its job runs in rounds: a lost node replaced, the others follow the next one
    argv += ["--gang-doc", node["digest"], "--rank", str(node["rank"]),
             "--gang-exit-wait", "0"]
code = job.get("code")
if code:
    argv += ["--code-uri", code["uri"], "--code-sha256", code["sha256"],
             "--code-size", str(code["size"])]
if job.get("setup"):
    argv += ["--setup", job["setup"]]
for name in [*refs, *job.get("mask_envs", [])]:  # their values: masked in the job's log
    argv += ["--mask-env", name]
if job.get("mounts"):
    argv += ["--mounts", json.dumps(job["mounts"])]
if job.get("checkpoint_at"):  # the task's checkpoint mount path: the checkpoint directory
    argv += ["--checkpoint-at", job["checkpoint_at"]]
if (job.get("mounts") or job.get("checkpoint_at")) and job.get("mount_root"):
    argv += ["--mount-root", job["mount_root"]]
image = job.get("image")
if image:  # setup and run in a Docker image, with the job's envs and secrets by name
    names = sorted({{*image["envs"], *refs, *node_envs}})
    argv += ["--image", json.dumps({{**image, "envs": names}}, sort_keys=True)]
argv += ["--", job["command"]]
systemd = (os.geteuid() == 0 and os.path.isdir("/run/systemd/system")
           and shutil.which("systemctl"))
root = os.environ.pop("COSTSCHED_BOOT_ROOT")  # the script's own $root
env.pop("COSTSCHED_BOOT_ROOT", None)
run = "/run/costsched" if systemd else root + "/run"  # /run: memory, not disk
os.makedirs(run, mode=0o700, exist_ok=True)
os.chmod(run, 0o700)
launch = run + "/job-" + str(job["job_id"]) + ".json"
fd = os.open(launch + ".new", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
with os.fdopen(fd, "w") as out:
    json.dump({{"argv": argv, "env": env, "workdir": job["workdir"], "stop": job.get("stop"),
               "checkpoint_uri": job["checkpoint_uri"], "publish": not (node and node["rank"])}},
              out)
os.replace(launch + ".new", launch)
# Kept in the launch file: the cloud's copy is deleted now (Key Vault's by the launcher:
# the VM's identity reads only).
if refs and not node and job.get("secret_store") != "akv":
    try:
        if job.get("secret_store") == "gsm":
            for ref in refs.values():
                urllib.request.urlopen(urllib.request.Request(
                    f"{{job['secret_api']}}/v1/{{ref}}", headers=auth, method="DELETE"),
                    timeout=30).close()
        else:
            ssm.delete_parameters(Names=sorted(refs.values()))
    except Exception as exc:  # the launcher deletes them when the instance ends
        print(f"costsched: the job's secrets stay in the cloud until its instance ends "
              f"({{type(exc).__name__}})", file=sys.stderr)
if systemd:
    unit = "costsched-job-" + str(job["job_id"]) + ".service"
    with open("/etc/systemd/system/" + unit, "w") as out:
        out.write(job["unit"].replace("@ROOT@", root).replace("@LAUNCH@", launch))
    subprocess.run(["systemctl", "daemon-reload"], check=True)
    subprocess.run(["systemctl", "start", "--no-block", unit], check=True)
else:
    print(launch)
"""

SUPERVISOR_TRIES = 3  # supervisor runs the shell's loop makes where systemd is absent
GAVE_UP = 75  # the supervisor's exit code once its agent died too often (agent_supervisor)


def systemd_unit(job_id: int, restart_seconds: int = 10) -> str:
    """The unit that runs the agent's supervisor under systemd: started again when it fails
    (Restart=on-failure); @ROOT@ is the script's costsched folder and @LAUNCH@ the launch
    file it wrote. No job field
    or secret is in it; KillMode=process leaves a dead supervisor's agent and job to the
    supervisor started after it (which waits for that agent, then recovers its job)."""
    return "\n".join([
        "[Unit]",
        f"Description=costsched job {int(job_id)}: the agent's supervisor",
        "After=network-online.target",
        "StartLimitIntervalSec=3600",
        "StartLimitBurst=5",
        "[Service]",
        "Type=simple",
        "ExecStart=@ROOT@/bin/python -m launchers.agent_supervisor @LAUNCH@",
        "Restart=on-failure",
        f"RestartPreventExitStatus={GAVE_UP}",
        f"RestartSec={int(restart_seconds)}",
        "KillMode=process",
        "TimeoutStopSec=180",
        "StandardOutput=journal+console",
        "StandardError=journal+console",
        "",
    ])


def payload(spec: LaunchSpec, notice_url: str, root: str = DEFAULT_ROOT,
            stop: StopFlag | None = None, mount_root: str = "",
            secret_refs: Mapping[str, str] | None = None,
            node: Mapping[str, Any] | None = None, secret_api: str = "",
            secret_store: str = "") -> dict[str, Any]:
    """The job's fields as the instance receives them. A task's file mounts go where the
    task says (under `mount_root` when one is given); a local path cannot reach a cloud
    instance and is refused. `secret_refs`: where the instance reads each of the job's
    secrets (an SSM parameter name; with `secret_api`, the Secret Manager endpoint, a
    secret's resource name; with `secret_store` "akv", `secret_api` is a Key Vault's URL
    and each a secret's name there), which then are not in the payload. `node`: the instance's
    place in a gang (`launchers.cloud_gang.node_payload`), None for a job of one node."""
    if isinstance(spec.job_id, bool) or not isinstance(spec.job_id, int):
        raise InvalidInput(f"job id {spec.job_id!r}: expected a whole number")
    leaked = sorted(set(spec.envs) & clouds.credential_envs())
    if leaked:
        raise InvalidInput(f"env {leaked[0]}: credentials are not sent to instances; "
                           "the instance uses its own role (instance profile, service account)")
    unplaced = [n for n in spec.secret_names if n not in (secret_refs or {})]
    if unplaced:  # a secret's value never travels in the script
        raise InvalidInput(f"secret {unplaced[0]}: no secret store to carry it to the "
                           "instance; it is not put in the startup script")
    mounts = [dict(m) for m in spec.task.get("mounts") or []]
    for m in mounts:
        if "://" not in m["source"]:
            raise InvalidInput(f"file mount {m['path']}: {m['source']!r} is a local path: "
                               "it travels to the local launcher's instances only for now; "
                               "put it in the workdir or a bucket")
    return {"job_id": spec.job_id, "job_name": spec.job_name, "command": spec.command,
            "checkpoint_uri": spec.checkpoint_uri, "attempt": spec.attempt,
            "envs": {str(k): str(v) for k, v in spec.envs.items()
                     if str(k) not in (secret_refs or {}) and k not in spec.secret_names},
            "secret_refs": dict(secret_refs or {}), "region": spec.offering.region,
            "mask_envs": [n for n in spec.masked_names if n not in (secret_refs or {})],
            "secret_store": secret_store or ("gsm" if secret_api else "ssm"),
            "secret_api": secret_api,
            "unit": systemd_unit(spec.job_id),
            "notice_url": notice_url, "workdir": f"{root}/work/job-{spec.job_id}",
            "code": None if not spec.code_uri else {
                "uri": spec.code_uri, "sha256": spec.code_sha256, "size": spec.code_size},
            "setup": spec.setup, "mounts": mounts, "mount_root": mount_root,
            "checkpoint_at": str(spec.task.get("checkpoint_mount") or ""),
            "stop": None if stop is None else {"url": stop.url, "headers": dict(stop.headers),
                                               "every": stop.every_seconds},
            "gang": None if node is None else dict(node), "gpus": spec.offering.gpu_count,
            "image": None if not containers.image_of(spec.task) else containers.image_spec(
                spec.task, spec.envs, gpus=spec.offering.gpu_count > 0)}


def startup_script(spec: LaunchSpec, *, install: str, notice_url: str,
                   root: str = DEFAULT_ROOT, stop: StopFlag | None = None,
                   mount_root: str = "", secret_refs: Mapping[str, str] | None = None,
                   node: Mapping[str, Any] | None = None, secret_api: str = "",
                   secret_store: str = "") -> str:
    """A bash script that makes a virtual environment under `root` (seeing the image's own
    packages: CUDA, frameworks), runs `install` in it, and starts the agent under its
    supervisor (`launchers.agent_supervisor`: a systemd unit where the instance has systemd,
    else a loop of this script's), which starts a dead agent again; with `stop`, the
    supervisor sends the agent SIGTERM once the stop flag reads TRUE; with `node`, the
    instance is that node of a gang (it waits for the gang's addresses first).

    `install` and `root` are the operator's settings, not job fields: `install` is shell
    text by design; `root` must be a plain absolute path."""
    for name, value in (("root", root), ("mount root", mount_root or "/")):
        if not _ROOT_RE.match(value):
            raise InvalidInput(f"{name} {value!r}: expected an absolute path of letters, "
                               "digits, '.', '_', '-' and '/'")
    if "\n" in install:
        raise InvalidInput("install command: expected one line")
    encoded = base64.b64encode(
        json.dumps(payload(spec, notice_url, root, stop, mount_root, secret_refs, node,
                           secret_api, secret_store),
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
        "launch=\"$(COSTSCHED_BOOT_ROOT=\"$root\" \"$root/bin/python\" - <<'COSTSCHED_BOOT'",
        _BOOT.format(payload=encoded) + "COSTSCHED_BOOT",
        ')"',
        'launch="${launch##*$\'\\n\'}"  # the launch file (empty: systemd runs the job)',
        '[ -n "$launch" ] || exit 0',
        "tries=0",
        "while :; do  # the supervisor again if it died (not when it gave up: GAVE_UP)",
        '  code=0; "$root/bin/python" -m launchers.agent_supervisor "$launch" || code=$?',
        f'  [ "$code" -ne 0 ] && [ "$code" -ne {GAVE_UP} ] || exit "$code"',
        f'  tries=$((tries + 1)); [ "$tries" -lt {SUPERVISOR_TRIES} ] || exit "$code"',
        "  sleep 5",
        "done",
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
