"""Jobs that run in a Docker image (a SkyPilot task's `image_id: docker:IMAGE`), on any
launcher whose instances have a container runtime: the agent pulls the image once per
instance (logging in to a private registry first), runs the task's setup in a container of
it and keeps what setup installed (`docker commit`), then runs the job in a container of
that image.

Each container sees the job as the agent's own processes do: the agent's working
directory (the code, the checkpoint directory, the progress file, the log) at the same
path, the task's file mounts at the task's paths, the checkpoint directory also at the
task's checkpoint mount path, the job's envs and secrets, the instance's network and GPUs.
The envs reach the container in a file only its owner reads, in memory (/dev/shm), that the
container's first process reads; never on a command line and never in the container's
configuration, which docker keeps on disk and `docker commit` copies into the image. The
agent runs `docker run` attached: a SIGTERM to it (a stop, a preemption notice) reaches the
container's first process, `WRAPPER`, which forwards it to the job's processes and waits
for them, as the agent does on the instance.

Private registries: ECR images with the instance's role, Artifact Registry and Container
Registry images with the instance's service account, any other with the task's
SKYPILOT_DOCKER_USERNAME, SKYPILOT_DOCKER_SERVER and the secret SKYPILOT_DOCKER_PASSWORD
(given at launch). The password goes to `docker login` on its standard input, into a
configuration folder of the agent's own that is deleted once the image is pulled.

`Container` is what the agent uses; `agent_args` is what a launcher passes the agent.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import logging
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from launchers.job_shell import IN_CONTAINER

DOCKER = "docker"  # the container runtime's client, found on PATH
DOCKER_PREFIX = "docker:"  # image_id: docker:IMAGE
LOGIN_ENVS = ("SKYPILOT_DOCKER_USERNAME", "SKYPILOT_DOCKER_PASSWORD", "SKYPILOT_DOCKER_SERVER")
PULL_TIMEOUT = 3600.0  # seconds: a large image over a slow link
_ECR = re.compile(r"^(\d{12})\.dkr\.ecr(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$")
_GOOGLE = re.compile(r"^(?:[a-z0-9-]+-docker\.pkg\.dev|(?:[a-z]+\.)?gcr\.io)$")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # an env a shell can assign
MARK = ".container-"  # WORKDIR/.container-PHASE: the phase's container may run
log = logging.getLogger("costsched.agent")

# The container's first process (POSIX sh; $0 is the job's command, $1 the file of its
# envs, $2 non-empty for the instance's first command). It runs the command in a shell of
# its own (bash, or /bin/sh in an image without it: `launchers.job_shell`) and, on
# SIGTERM, sends SIGTERM to that shell's descendants (found in /proc by their parents) but
# not to the shell, which lives to return their exit code; a command that is the shell
# alone gets it itself. It exits with the command's code: a wait that the trap cut short
# (over 128, `t` set) is waited again, and that second wait gives the code even when the
# shell ended meanwhile.
WRAPPER = r"""if [ -n "$1" ]; then set -a; . "$1"; set +a; fi
term() {
  t=1; kids=" $c "; grew=1
  while [ "$grew" = 1 ]; do
    grew=0
    for d in /proc/[0-9]*; do
      p=${d#/proc/}
      case "$kids" in *" $p "*) continue;; esac
      read -r line 2>/dev/null < "$d/stat" || continue
      set -- ${line##*") "}
      case "$kids" in *" $2 "*) kids="$kids$p "; grew=1;; esac
    done
  done
  set -- $kids
  if [ "$#" -gt 1 ]; then shift; kill -TERM "$@" 2>/dev/null; else kill -TERM "$c" 2>/dev/null; fi
}
trap term TERM
""" + IN_CONTAINER + r"""
"$job_shell" -c "$0" & c=$!
while :; do
  t=0; wait "$c"; s=$?
  [ "$t" = 1 ] && [ "$s" -gt 128 ] || break
done
exit "$s"
"""


class ContainerError(RuntimeError):
    """The image cannot be had or run (one line, no secret in it)."""


def image_of(task: Mapping[str, Any]) -> str:
    """The Docker image of a task (its image_id `docker:IMAGE`), or ''."""
    value = task.get("image_id")
    if isinstance(value, str) and value.startswith(DOCKER_PREFIX):
        return value[len(DOCKER_PREFIX):]
    return ""


def agent_args(task: Mapping[str, Any], env_names: Iterable[str], gpus: bool) -> list[str]:
    """The agent's arguments for a task's image ([] for a task without one): the image,
    the job's env names the container gets, whether it gets the instance's GPUs, and where
    the task mounts its checkpoints."""
    image = image_of(task)
    if not image:
        return []
    return ["--image", json.dumps(image_spec(task, env_names, gpus), sort_keys=True)]


def image_spec(task: Mapping[str, Any], env_names: Iterable[str], gpus: bool
               ) -> dict[str, Any]:
    """The agent's `--image` document (agent_args)."""
    return {"ref": image_of(task), "envs": sorted(set(env_names)), "gpus": bool(gpus),
            "checkpoints_at": str(task.get("checkpoint_mount") or "")}


# Seconds `docker version` may take before the daemon counts as down: a running daemon
# answers it at once (it asks only for the daemon's version, where `docker info` gathers
# every container, image and plugin), and `plan` and `launch` wait this long for a broken one.
DAEMON_TIMEOUT = 3.0
_VERSION = ["version", "--format", "{{.Server.Version}}"]  # the daemon's; the client fails


def runtime_missing(docker: str = DOCKER) -> str:
    """'' when this machine can run containers (docker on PATH, its daemon answering
    within `DAEMON_TIMEOUT`), else why not and what fixes it, e.g. "...no container runtime
    ('docker' is not on PATH); install Docker". Asked once in a pass (`costsched.passes`:
    a sweep's jobs, one command's checks)."""
    found = shutil.which(docker)
    if not found:
        return f"no container runtime ({docker!r} is not on PATH); install Docker"
    from costsched.passes import memo

    return memo(("container runtime", found), lambda: _daemon_missing(found))


def _daemon_missing(docker: str) -> str:
    """`runtime_missing` of a client found on PATH: its daemon asked, in a session of its
    own, which is killed (the client and whatever it started) when it does not answer."""
    try:
        asked = subprocess.Popen([docker, *_VERSION], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 text=True, errors="replace", start_new_session=True)
    except OSError as exc:
        return f"Docker, which cannot be run ({exc.strerror}); reinstall Docker"
    try:
        _, err = asked.communicate(timeout=DAEMON_TIMEOUT)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(asked.pid, signal.SIGKILL)  # (not reaped yet: the group is its own)
        asked.wait()
        if asked.stderr is not None:
            asked.stderr.close()
        return (f"Docker, whose daemon did not answer `docker version` in "
                f"{DAEMON_TIMEOUT:g} s; start Docker (sudo systemctl start docker)")
    if asked.returncode == 0:
        return ""
    said = next((line.strip() for line in err.splitlines() if line.strip()),
                f"`docker version` exited with {asked.returncode}")
    if "permission denied" in said.lower():
        fix = "give your user access to Docker (sudo usermod -aG docker $USER, then log in again)"
    else:
        fix = "start Docker (sudo systemctl start docker)"
    return f"Docker, whose daemon does not answer ({said}); {fix}"


@dataclass
class Container:
    """One job's image on one instance, as its agent runs it."""

    ref: str
    workdir: Path  # the agent's working directory: bound at the same path
    env_names: tuple[str, ...] = ()
    gpus: bool = False
    mounts: tuple[tuple[str, str], ...] = ()  # (path on the instance, path in the container)
    checkpoints_at: str = ""  # the task's checkpoint mount path, bound to CHECKPOINT_DIR
    user: str = field(default_factory=lambda: "" if os.geteuid() == 0
                      else f"{os.geteuid()}:{os.getegid()}")
    docker: str = DOCKER
    run_image: str = ""  # the image the job runs in: `ref`, or ref with setup's changes

    @classmethod
    def from_args(cls, document: str, workdir: Path,
                  mounts: Iterable[tuple[str, str]] = ()) -> Container:
        """The container of the agent's `--image` document."""
        spec = json.loads(document)
        return cls(ref=str(spec["ref"]), workdir=workdir,
                   env_names=tuple(spec.get("envs") or ()), gpus=bool(spec.get("gpus")),
                   mounts=tuple(mounts), checkpoints_at=str(spec.get("checkpoints_at") or ""))

    @property
    def _key(self) -> str:
        """Names this instance's containers apart from another agent's on one machine."""
        return hashlib.sha256(str(self.workdir).encode()).hexdigest()[:10]

    def name(self, phase: str) -> str:
        return f"costsched-{self._key}-{phase}"

    @property
    def setup_image(self) -> str:
        return f"costsched-{self._key}:setup"

    # --- the image ----------------------------------------------------------------------

    def pull(self, env: Mapping[str, str]) -> str:
        """Log in to the image's registry when it needs it, pull the image; what was done
        (one line). ContainerError when it cannot be had."""
        config = Path(tempfile.mkdtemp(prefix=".docker-", dir=self.workdir))
        os.chmod(config, 0o700)
        try:
            said = ""
            login = registry_login(self.ref, env)
            if login is not None:
                server, user, password = login
                self._docker(["--config", str(config), "login", "--username", user,
                              "--password-stdin", server], stdin=password, what="login to "
                             + server)
                said = f", logged in to {server}"
            self._docker(["--config", str(config), "pull", self.ref], what="pull",
                         timeout=PULL_TIMEOUT)
            return f"image {self.ref} pulled{said}"
        finally:
            shutil.rmtree(config, ignore_errors=True)

    def keep_setup(self, setup_name: str) -> None:
        """What setup installed, kept as the image the job runs in; its container gone."""
        try:
            self._docker(["commit", setup_name, self.setup_image], what="commit of setup",
                         timeout=PULL_TIMEOUT)
        finally:
            self.remove(setup_name)
        self.run_image = self.setup_image

    def set_up_already(self, has_setup: bool) -> None:
        """The image the job runs in when setup ran on this instance before (an agent
        started again)."""
        self.run_image = self.setup_image if has_setup else self.ref

    # --- a container ---------------------------------------------------------------------

    def run_argv(self, command: str, cwd: Path, env: Mapping[str, str], name: str,
                 image: str = "", keep: bool = False, first: bool = False) -> list[str]:
        """`docker run` of `command` in the image (attached: its exit code is the job's);
        `first`: the instance's first command, which says the shell where it is not bash."""
        envs = self.env_file(env)
        argv = [self.docker, "run", *([] if keep else ["--rm"]), "--name", name,
                "--network", "host", "--ipc", "host",
                "-v", f"{self.workdir}:{self.workdir}", "-v", f"{envs}:{envs}:ro"]
        for host, inside in self.mounts:
            argv += ["-v", f"{host}:{inside}"]
        if self.checkpoints_at:
            argv += ["-v", f"{env.get('CHECKPOINT_DIR') or self.workdir}:{self.checkpoints_at}"]
        argv += ["-w", str(cwd)]
        if self.gpus:
            argv += ["--gpus", "all"]
        if self.user:
            argv += ["--user", self.user]
        return [*argv, "--entrypoint", "/bin/sh", image or self.run_image or self.ref,
                "-c", WRAPPER, command, str(envs), "1" if first else ""]

    def env_file(self, env: Mapping[str, str]) -> Path:
        """The job's envs (its own, its secrets, the agent's) as a file of assignments the
        wrapper reads: its owner alone reads it, in memory where the machine has /dev/shm."""
        names = sorted(n for n in set(self.env_names) | set(self.added_envs(env)) if n in env)
        lines = [f"{n}={shlex.quote(env[n])}\n" for n in names if _NAME.fullmatch(n)]
        if len(lines) < len(names):
            log.warning("envs %s: not shell variable names, not passed to the container",
                        ", ".join(n for n in names if not _NAME.fullmatch(n)))
        shm = Path("/dev/shm")
        folder = (shm if shm.is_dir() and os.access(shm, os.W_OK) else self.workdir) / \
            f"costsched-{self._key}"
        folder.mkdir(mode=0o700, exist_ok=True)
        path = folder / "env"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.writelines(lines)
        return path

    def forget_envs(self) -> None:
        """Delete the envs' file (the job's containers have ended)."""
        for folder in (Path("/dev/shm"), self.workdir):
            shutil.rmtree(folder / f"costsched-{self._key}", ignore_errors=True)

    def starting(self, phase: str) -> str:
        """The name of the phase's container about to start, a dead agent's container of
        that name ended first (a mark in the working directory says one may be left)."""
        mark = self.workdir / f"{MARK}{phase}"
        if mark.exists():
            self.remove(self.name(phase))
        mark.touch()
        return self.name(phase)

    def ended(self, phase: str, client_code: int | None, keep: bool = False) -> None:
        """After the phase's docker client exited: its container is ended too when the
        client was killed (the container may run on), unless it is kept (setup's)."""
        if client_code is not None and client_code < 0 and not keep:
            self.remove(self.name(phase))
        (self.workdir / f"{MARK}{phase}").unlink(missing_ok=True)
        self.forget_envs()

    def stop_left(self, grace: float) -> list[str]:
        """The containers a dead agent left (its marks in the working directory), each
        stopped as a stop ends a job: SIGTERM to the container's first process (which
        forwards it to the job, which checkpoints), SIGKILL after `grace` seconds (`docker
        stop`), and their envs' file deleted; the names of those asked. Their docker client
        may have died with the agent (a unit's whole cgroup killed): a container, in the
        runtime's care, runs on."""
        names = [self.name(m.name[len(MARK):]) for m in sorted(self.workdir.glob(MARK + "*"))]
        for name in names:
            try:
                subprocess.run([self.docker, "stop", "-t", str(max(0, round(grace))), name],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=grace + 120, check=False)
            except (OSError, subprocess.TimeoutExpired) as exc:  # the agent's rm -f is next
                log.warning("container %s left by the agent: docker stop: %s", name,
                            type(exc).__name__)
        if names:  # the envs' file (secrets included) the dead agent left
            self.forget_envs()
        return names

    def added_envs(self, env: Mapping[str, str]) -> list[str]:
        """The names in `env` the agent set for the job (COSTSCHED_*, CHECKPOINT_DIR, a
        gang's round...): those its own environment lacks or holds otherwise."""
        return [k for k, v in env.items() if os.environ.get(k) != v]

    def remove(self, name: str) -> None:
        """End and delete a container (none of that name: nothing done)."""
        subprocess.run([self.docker, "rm", "-f", name], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120,
                       check=False)

    def _docker(self, args: list[str], what: str, stdin: str | None = None,
                timeout: float = 300.0) -> None:
        try:
            done = subprocess.run([self.docker, *args], input=stdin, capture_output=True,
                                  text=True, timeout=timeout, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ContainerError(f"image {self.ref}: {what}: {type(exc).__name__}: "
                                 f"{exc}") from None
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["exit code "
                                                         f"{done.returncode}"])[-1]
            raise ContainerError(f"image {self.ref}: {what} failed: {last[:300]}")


# --- registries ----------------------------------------------------------------------------

def registry_of(ref: str) -> str:
    """The registry an image reference names (docker.io when it names none)."""
    first, _, rest = ref.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return first
    return "docker.io"


def registry_login(ref: str, env: Mapping[str, str]) -> tuple[str, str, str] | None:
    """(server, user, password) to log in with before pulling `ref`, or None for a public
    image: the task's SKYPILOT_DOCKER_* when it gives them, else the instance's own
    credentials for ECR (its role) and Google's registries (its service account)."""
    host = registry_of(ref)
    if env.get("SKYPILOT_DOCKER_PASSWORD"):
        return (env.get("SKYPILOT_DOCKER_SERVER") or host,
                env.get("SKYPILOT_DOCKER_USERNAME") or "", env["SKYPILOT_DOCKER_PASSWORD"])
    ecr = _ECR.match(host)
    if ecr:
        return (host, *_ecr_login(ecr.group(1), ecr.group(2)))
    if _GOOGLE.match(host):
        return (host, "oauth2accesstoken", _google_token())
    return None


def _ecr_login(account: str, region: str) -> tuple[str, str]:
    """ECR's (user, password), with the instance's role."""
    import boto3

    answer = boto3.client("ecr", region_name=region).get_authorization_token(
        registryIds=[account])
    token = answer["authorizationData"][0]["authorizationToken"]
    user, _, password = base64.b64decode(token).decode().partition(":")
    return user, password


def _google_token() -> str:
    """An access token of the instance's service account (its metadata server)."""
    import urllib.request  # on an instance only: not imported by the commands that plan

    host = os.environ.get("GCE_METADATA_HOST") or "metadata.google.internal"
    ask = urllib.request.Request(
        f"http://{host}/computeMetadata/v1/instance/service-accounts/default/token",
        headers={"Metadata-Flavor": "Google"})
    with urllib.request.urlopen(ask, timeout=30) as answer:
        return str(json.loads(answer.read())["access_token"])
