"""The agent's supervisor on a cloud instance: starts the agent, and when the agent dies
while its job runs (killed by the kernel's out-of-memory killer, a crash of the
interpreter), recovers the job and starts the agent again, which resumes the job from its
newest verified checkpoint.

    python -m launchers.agent_supervisor LAUNCH.json

LAUNCH.json ({"argv", "env", "workdir", "checkpoint_uri", "publish", "grace_seconds",
"restarts"}) is written by the startup script (launchers.userdata) readable by its owner
alone: it holds the job's environment, secrets included, so that an agent started again
has them after the cloud's copy was deleted; it is deleted once the job ended. Under
systemd the supervisor is a unit's service (Restart=on-failure: a supervisor that dies is
started again); elsewhere the startup script runs it in a loop of its own.

The job never runs twice:
- one agent at a time per job on the instance: the supervisor holds an exclusive lock
  (WORKDIR/.agent.lock) that the agent inherits, so a supervisor started again while the
  agent of a dead supervisor lives waits for that agent to end;
- before an agent is started again, what is left of the dead agent's job (its process
  group: the agent led it; and a job in a Docker image, its containers, which outlive
  their docker client) is asked to checkpoint and stop (SIGTERM, SIGKILL after the
  grace period) and every checkpoint file it wrote is published, before and after the
  stop (`launchers.agent_recovery.publish_leftovers`); only then does a new agent restore
  the newest checkpoint and run the job on;
- an agent that ended by itself (an exit code, not a signal) said how the job ended
  (status.json): the job is not run again, whatever its exit code; nor when the
  supervisor was asked to stop.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from launchers.heartbeats import read_local
from launchers.procfs import group_members, has_proc

log = logging.getLogger("costsched.agent_supervisor")

LOCK = ".agent.lock"
DEFAULT_RESTARTS = 5  # agent deaths a supervisor recovers from before it gives up
DEFAULT_GRACE = 60.0  # seconds the dead agent's job has to checkpoint before SIGKILL
CRASHED = 75  # the supervisor's exit code when it gave up (userdata.GAVE_UP: not restarted)
_WAIT = 0.1


def read_status(workdir: Path) -> dict:
    from launchers.status_file import STATUS

    try:
        return json.loads((workdir / STATUS).read_text())
    except (OSError, ValueError):
        return {}


def ended(workdir: Path) -> bool:
    """Whether an agent said how the job ended (status.json says "running" while it runs)."""
    status = read_status(workdir)
    return bool(status) and status.get("state", "running") != "running"


def _group_alive(pgid: int) -> bool:
    if has_proc():
        return bool(group_members(pgid))
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signum)


def end_leftovers(workdir: Path, pgid: int | None, checkpoint_uri: str, publish: bool,
                  grace: float) -> None:
    """The recovery of a dead agent's job (the module's doc): publish what it wrote, stop
    the containers it left and its process group `pgid` (SIGTERM, then SIGKILL after
    `grace` seconds), publish what it wrote on the way out. `publish` False: a node that
    never publishes (a gang's rank > 0)."""
    from launchers.agent_workdir import CHECKPOINTS
    from launchers.containers import Container

    checkpoints = workdir / CHECKPOINTS
    if publish:
        _publish(checkpoint_uri, checkpoints)
    # A job in a Docker image runs in the runtime's care, not in the agent's group: its
    # container is stopped first (the docker client, when it lives, then exits with it).
    stopped = Container("", workdir.resolve()).stop_left(grace)
    if stopped:
        log.info("the agent's containers %s were stopped", ", ".join(stopped))
    outlived = pgid is not None and pgid > 1 and _group_alive(pgid)
    if outlived:
        log.info("the agent's job (process group %d) outlived it: SIGTERM", pgid)
        _signal_group(pgid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while _group_alive(pgid) and time.monotonic() < deadline:
            time.sleep(_WAIT)
        if _group_alive(pgid):
            _signal_group(pgid, signal.SIGKILL)
            while _group_alive(pgid):
                time.sleep(_WAIT)
    if publish and (stopped or outlived):
        _publish(checkpoint_uri, checkpoints)


def _publish(checkpoint_uri: str, checkpoints: Path) -> None:
    """Every checkpoint file the store lacks (`agent_recovery.publish_leftovers`)."""
    if not checkpoints.is_dir():
        return
    from launchers.agent_recovery import publish_leftovers
    from launchers.checkpoints import open_store

    version = publish_leftovers(open_store(checkpoint_uri), checkpoints)
    if version is not None:
        log.info("published the job's checkpoints left unpublished: version %d", version)


_stopping = {"asked": False, "agent": 0}


def _on_sigterm(_signum: int, _frame: object) -> None:
    """Asked to stop (systemd, a shutdown, the stop flag): the agent checkpoints the job."""
    _stopping["asked"] = True
    if _stopping["agent"]:
        _sigterm_when_ready(_stopping["agent"])


def _catches_sigterm(pid: int) -> bool:
    """Whether the process has its SIGTERM handler in place (/proc/PID/status SigCgt)."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return True  # gone, or no /proc: signal it now
    caught = [line.split(":", 1)[1] for line in lines if line.startswith("SigCgt:")]
    return not caught or bool(int(caught[0], 16) >> (signal.SIGTERM - 1) & 1)


def _sigterm_when_ready(pid: int, wait: float = 120.0) -> None:
    """SIGTERM to the agent once it catches it (on a slow start it may not yet)."""
    deadline = time.monotonic() + wait
    while not _catches_sigterm(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)


def _stop_flag(stop: dict) -> bool:
    """Whether the cloud's stop flag (a metadata URL) reads TRUE."""
    import urllib.request

    try:
        ask = urllib.request.Request(stop["url"], headers=stop.get("headers") or {})
        with urllib.request.urlopen(ask, timeout=10) as answer:
            return bool(answer.read().strip().upper() == b"TRUE")
    except Exception:  # noqa: BLE001 - an unreachable flag is no stop
        return False


def _wait(agent: subprocess.Popen, stop: dict | None) -> int:
    """The agent's return code, watching the stop flag (when the cloud has one) meanwhile."""
    _stopping["agent"] = agent.pid
    next_look = time.monotonic() + float((stop or {}).get("every", 5.0))
    try:
        while agent.poll() is None:
            if stop and not _stopping["asked"] and time.monotonic() >= next_look:
                if _stop_flag(stop):
                    log.info("stop flag set: SIGTERM to the agent")
                    _stopping["asked"] = True
                    _sigterm_when_ready(agent.pid)
                next_look = time.monotonic() + float(stop.get("every", 5.0))
            time.sleep(_WAIT)
    finally:
        _stopping["agent"] = 0
    return int(agent.returncode)


def _previous_agent(workdir: Path) -> int | None:
    """The pid of the agent that wrote the heartbeat (the leader of the job's process
    group) when it ran since the machine started: after a reboot that pid names another
    process, if any."""
    beat = read_local(workdir)
    if not beat.get("pid"):
        return None
    try:
        up = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return int(beat["pid"])
    return int(beat["pid"]) if float(beat.get("at", 0)) >= time.time() - up else None


def supervise(launch: dict[str, Any]) -> int:
    """Run the agent of `launch` (the LAUNCH.json document) to its end, recovering and
    starting it again after each death; the supervisor's exit code."""
    workdir = Path(launch["workdir"])
    workdir.mkdir(parents=True, exist_ok=True)
    publish = bool(launch.get("publish", True))
    grace = float(launch.get("grace_seconds", DEFAULT_GRACE))
    restarts = int(launch.get("restarts", DEFAULT_RESTARTS))
    with (workdir / LOCK).open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # an agent left by a dead supervisor ends first
        for started in range(restarts + 1):
            if _stopping["asked"]:  # while it waited for the lock
                return 0
            if ended(workdir):
                log.info("the job ended: %s", read_status(workdir).get("detail", ""))
                return 0
            end_leftovers(workdir, _previous_agent(workdir), launch["checkpoint_uri"],
                          publish, grace)
            if started:
                log.info("starting the agent again (%d of %d)", started, restarts)
            agent = subprocess.Popen(launch["argv"], env=launch["env"],
                                     pass_fds=(lock.fileno(),))
            code = _wait(agent, launch.get("stop"))
            if code >= 0 or _stopping["asked"]:
                return 0  # the agent ended by itself (status.json says how): never again
            log.warning("the agent was killed (signal %d) while the job ran", -code)
            end_leftovers(workdir, agent.pid, launch["checkpoint_uri"], publish, grace)
    log.error("the agent died %d times: giving up", restarts + 1)
    return CRASHED


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s supervisor: %(message)s")
    if len(args) != 1:
        log.error("usage: python -m launchers.agent_supervisor LAUNCH.json")
        return 2
    launch = json.loads(Path(args[0]).read_text())
    os.environ.update(launch["env"])  # the stores' settings (systemd starts us with none)
    signal.signal(signal.SIGTERM, _on_sigterm)
    code = supervise(launch)
    if code == 0:  # the job ended: its environment (secrets included) is kept no longer
        Path(args[0]).unlink(missing_ok=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
