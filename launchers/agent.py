"""The agent: runs on an instance around the job's command, costsched's side of the job
contract.

    python -m launchers.agent --job-id 7 --checkpoint-uri s3://bucket/jobs/7 \\
        --workdir /var/lib/costsched [--poll 5] [--notice-url URL] \\
        [--code-uri URI --code-sha256 SHA --code-size BYTES] [--setup CMD] -- 'python train.py'

It fetches the job's code archive, verifies it (size, SHA-256, every entry inside) and
unpacks it into WORKDIR/code, once per instance; restores the newest verified checkpoint
into WORKDIR/checkpoints; runs the setup commands once per instance in WORKDIR/code (a
failing setup fails the attempt: status.json says "phase": "setup" and its exit code);
then starts the command there (/bin/sh -c, output, setup's included, to WORKDIR/job.log,
the values of its --mask-env variables, its secrets, masked: launchers.log_masking)
with COSTSCHED_JOB_ID, COSTSCHED_CHECKPOINT_DIR, CHECKPOINT_DIR and
COSTSCHED_PROGRESS_FILE added to its environment, and every poll interval publishes the
checkpoint directory once a set is whole (`launchers.publisher`; sooner when the publisher
asks for a look, a set of files replaced together being quiet by then), checks the cloud's
preemption notice, and reads the step the job wrote to its progress file. SIGTERM to the
agent, or a notice, becomes SIGTERM for the job. WORKDIR/status.json (written atomically)
says {"state": "running", "step", "step_at", "checkpoint_version", "checkpoint_step",
"checkpoint_step_inferred", "checkpoint_error"} while the job runs (with "no_step_after":
60 once its command has run that many seconds without writing its step, `launchers.unseen`),
and once it has exited
(after a last publish) {"state": "stopped" | "succeeded" | "failed", "exit_code",
"checkpoint_version", "checkpoint_step", "checkpoint_step_inferred", "detail", "step",
"step_at", "checkpoint_error"}; "step_at" is when the job wrote that step (Unix seconds;
None when not read in this run). While setup runs, it says {"state": "running",
"setup_since": when setup began (Unix seconds), "checkpoint_version", "checkpoint_step",
"checkpoint_step_inferred", "checkpoint_error"}, with no "step": the job's command has not
begun; it is rewritten without "setup_since" as soon as setup ends, and from then on
(its end's too) says "setup_seconds", how long this instance's setup took (0 without a
setup; kept in WORKDIR/.setup-done for an agent started again). "checkpoint_step" is
the step of the newest version this instance published or restored (where a start from
it resumes; None when not known): its commit marker's, else its new files' names', else
the one the job had reported when they were written ("checkpoint_step_inferred": true;
`launchers.progress_readings`); a restored version's as the agent that published it kept
it (`launchers.version_steps`).

The job runs in the agent's process group (which the agent leads), so that a signal to the
group reaches every process of the job, and killing the group is killing the instance.

WORKDIR/heartbeat ({"pid", "at": Unix seconds}, written atomically) is the agent's sign of
life: rewritten at start and every poll interval while it restores, runs setup and watches
the job (`launchers.heartbeats`; with --attempt and --heartbeat-seconds, also beside the
checkpoints, with the job's step and its newest checkpoint's, and its status file's
"no_step_after" and "checkpoint_error" while the job runs, which the cloud launchers
read). A launcher that finds the agent gone (its process, or its heartbeat stale) while
the job runs knows nothing publishes the job's checkpoints any more
(`launchers.agent_recovery`).

With --image, setup and the command run in containers of a Docker image
(`launchers.containers`): the image is pulled before setup ("phase": "image" when it cannot
be), and SIGTERM to the agent reaches the container's processes as it reaches a job's.

With --gang-file, the agent is one node of a gang (--rank): it runs the job in rounds,
paused and resumed by the launcher (`launchers.gang_agent`). Publishing is
`launchers.publisher`'s, the preemption notice `launchers.notices`'.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from launchers import log_masking
from launchers.checkpoints import CheckpointStore, open_store
from launchers.containers import Container, ContainerError
from launchers.gang_agent import GangFile, Rounds
from launchers.heartbeats import StoreBeat, beat
from launchers.local_env import ENV_AGENT_ONLY
from launchers.notices import metadata_url, notice_present, redact
from launchers.procfs import group_members, has_proc
from launchers.progress_readings import INFERRED, ProgressReadings, read_progress
from launchers.publisher import Publisher, restore, settle_seconds
from launchers.status_file import NO_STEP, write_status
from launchers.unseen import AFTER_SECONDS, overdue

log = logging.getLogger("costsched.agent")

PROGRESS = "progress"  # the job writes its step here ($COSTSCHED_PROGRESS_FILE)
JOB_LOG = "job.log"
CHECKPOINTS = "checkpoints"
CODE = "code"  # the unpacked code archive: where setup and the command run
# Beside the code: setup ran to success on this instance; it holds the seconds it took.
_SETUP_DONE = ".setup-done"
ENV_POLL = "COSTSCHED_AGENT_POLL"  # the default --poll (seconds)
_TICK = 0.05  # seconds between looks at the job and the stop flag
_EXIT_DETAIL = {126: "command not executable", 127: "command not found"}


# --- the job ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Code:
    """The job's code archive as launched: where it is, its SHA-256 and size."""

    uri: str
    sha256: str
    size: int


class MountFailed(RuntimeError):
    """A task's file mount that could not be made: the attempt fails before setup."""


class SetupFailed(RuntimeError):
    def __init__(self, exit_code: int, detail: str) -> None:
        super().__init__(detail)
        self.exit_code = exit_code


class Agent:
    def __init__(self, job_id: int, store: CheckpointStore, workdir: Path, command: str,
                 poll: float, notice_url: str | None = None, code: Code | None = None,
                 setup: str = "", attempt: str = "", heartbeat_seconds: float = 0.0) -> None:
        self.job_id, self.store, self.command = job_id, store, command
        self.workdir, self.poll, self.notice_url = workdir, poll, notice_url
        self.code, self.setup = code, setup
        # The heartbeat beside the checkpoints (launchers.heartbeats), for launchers that
        # cannot see the agent's process: every `heartbeat_seconds` (0: not written).
        self.store_beat = StoreBeat(store.uri, attempt, heartbeat_seconds)
        self.checkpoints = workdir / CHECKPOINTS
        self.code_dir = workdir / CODE
        self.publisher = Publisher(store, self.checkpoints, settle=settle_seconds())
        self._reported: dict = {}
        self.rounds: Rounds | None = None  # a gang's node: its rounds (launchers.gang_agent)
        self.grace = 10.0  # seconds a gang's paused job has to stop before it is killed
        self.container: Container | None = None  # setup and run in a Docker image
        self._in_container = ""  # the phase whose container the job's process is client of
        self.masked: tuple[str, ...] = ()  # the job's secrets: their values kept off its log
        self.checkpoint_step: int | None = None  # the step its newest version holds...
        self.checkpoint_inferred = False  # ...read off the time it was saved (a floor)
        self.progress = ProgressReadings(workdir / PROGRESS)
        self.job_runs = False  # the job's command runs (not its setup, nor after its exit)
        self.setup_since: float | None = None  # when setup began, while it runs (Unix s)
        # The seconds this instance's setup took, once it ended (0 without one); None
        # before, or where an earlier agent ran it and did not keep it.
        self.setup_seconds: float | None = None

    @property
    def stop_reason(self) -> str:
        return _stop["reason"]

    def run(self) -> dict:
        try:
            self._unpack_code()
        except Exception as exc:  # noqa: BLE001 - said in the status, the attempt fails
            log.error("code: %s", exc)
            return {"state": "failed", "phase": "code", "exit_code": None,
                    "checkpoint_version": None, "detail": f"code: {exc}"}
        self.checkpoints.mkdir(parents=True, exist_ok=True)
        self._beat()
        self.publisher.version = restore(self.store, self.checkpoints)
        self.publisher.remember_all()
        self.checkpoint_step, self.checkpoint_inferred = self.publisher.restored_step()
        if self.stop_reason:  # asked to stop before the job started: nothing to run
            return self._status(0)
        env = {**job_environment(), "COSTSCHED_JOB_ID": str(self.job_id),
               "COSTSCHED_CHECKPOINT_DIR": str(self.checkpoints),
               "CHECKPOINT_DIR": str(self.checkpoints),
               "COSTSCHED_PROGRESS_FILE": str(self.workdir / PROGRESS)}
        if self.container is not None:
            try:
                log.info("%s", self.container.pull(env))
            except ContainerError as exc:
                return {"state": "failed", "phase": "image", "exit_code": None,
                        "checkpoint_version": self.publisher.version, "detail": str(exc)}
        try:
            self._run_setup(env)
        except SetupFailed as exc:
            return {"state": "failed", "phase": "setup", "exit_code": exc.exit_code,
                    "checkpoint_version": self.publisher.version, "detail": str(exc)}
        if self.stop_reason:
            return self._status(0)
        if self.rounds is not None:  # a gang's node: the job runs round after round
            return self.rounds.run(self, env)
        return self._status(self.run_job(env))

    def run_job(self, env: dict[str, str], pause: Callable[[], bool] | None = None) -> int:
        """The command, until it exits (stopped when asked to, or when `pause` says so);
        its exit code, once what it checkpointed is published."""
        self.progress.begin(0 if self.publisher.version is None else self.checkpoint_step)
        job = self._start(self.command, env)
        self.job_runs = True
        try:
            self._supervise(job, pause)
        finally:
            self.job_runs = False
        exit_code = _exit_code(job.returncode)
        self._wait_for_group(job)
        self._publish(final=True)  # it has exited: its directory is whole, no settle wait
        self._beat()  # its last version said beside the checkpoints, where a recovery reads it
        return exit_code

    def _publish(self, final: bool = False) -> None:
        """Publish what changed (`final`: the job has exited); a new version's step
        (`ProgressReadings.saved_at`) kept beside the checkpoints for the agent restoring it."""
        self.progress.sample()
        p = self.publisher
        published = p.publish_changed(final)
        # a version published before the run's first report has its step once one comes:
        # the readings then say whether its files were written before it
        late = self.checkpoint_step is None and p.written_ns and self.progress.readings
        if published or late:
            self.checkpoint_step, self.checkpoint_inferred = self.progress.saved_at(
                p.written_ns, p.said_step, p.named_step)
            p.keep_step(self.checkpoint_step, self.checkpoint_inferred)

    # --- what a gang's rounds use (launchers.gang_agent) ---------------------------------

    def outcome(self, exit_code: int) -> dict:
        return self._status(exit_code)

    def report(self, status: dict) -> None:
        write_status(self.workdir, status)
        self._reported = status

    def heartbeat(self) -> None:
        self._beat()

    @property
    def checkpoint_version(self) -> int | None:
        """The version of the checkpoint this node holds (published or restored)."""
        return self.publisher.version

    def restore_newest(self, at_most: int | None = None) -> None:
        """The newest verified checkpoint (at most version `at_most`), when it is not the
        one this node holds."""
        newest = self.store.newest_verified() if at_most is None else None
        wanted = at_most if newest is None else newest.version
        if wanted is not None and wanted != self.publisher.version:
            self.publisher.version = restore(self.store, self.checkpoints, at_most)
            self.publisher.remember_all()
            self.checkpoint_step, self.checkpoint_inferred = self.publisher.restored_step()

    def _start(self, command: str, env: dict[str, str], phase: str = "run"
               ) -> subprocess.Popen:
        argv = ["/bin/sh", "-c", command]
        if self.container is not None:  # the docker client: its container runs the command
            self._in_container = phase
            argv = self.container.run_argv(command, self.code_dir, env,
                                           self.container.starting(phase),
                                           keep=phase == "setup")
        masked = log_masking.values_of(self.masked, env)
        if masked:
            return log_masking.start(argv, env, self.code_dir, self.workdir / JOB_LOG, masked)
        with (self.workdir / JOB_LOG).open("ab") as out:
            return subprocess.Popen(argv, env=env, cwd=self.code_dir,
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=out)

    def _unpack_code(self) -> None:
        """The code archive into WORKDIR/code, fetched and verified once per instance (an
        empty directory for a job without code)."""
        if self.code_dir.is_dir():
            return  # this instance has it already (the agent started again)
        if self.code is None:
            self.code_dir.mkdir(parents=True)
            return
        from launchers import codepack

        archive = self.workdir / ".code.tar.gz"
        codepack.fetch(self.code.uri, self.code.sha256, self.code.size, archive)
        try:
            files = codepack.unpack(archive, self.code_dir, self.code.sha256, self.code.size)
        finally:
            archive.unlink(missing_ok=True)
        log.info("code %s: %d files (sha256 %s)", redact(self.code.uri), files,
                 self.code.sha256[:12])

    def _run_setup(self, env: dict[str, str]) -> None:
        """The setup commands, once per instance, in the code directory (output to the job's
        log); SetupFailed with their exit code when they fail."""
        done = self.workdir / _SETUP_DONE
        if not self.setup.strip() or done.exists():
            self.setup_seconds = _setup_took(done) if self.setup.strip() else 0.0
            if self.container is not None:
                self.container.set_up_already(bool(self.setup.strip()))
            return
        with (self.workdir / JOB_LOG).open("ab") as out:
            out.write(b"costsched: setup\n")
        self.setup_since = time.time()
        began = time.monotonic()
        self._report_running()  # in setup from now on, as the launcher reads it
        setup = self._start(self.setup, env, phase="setup")
        try:
            self._supervise(setup)
        finally:
            self.setup_since = None
        took = time.monotonic() - began
        exit_code = _exit_code(setup.returncode)
        done_now = exit_code == 0 and not self.stop_reason
        self._wait_for_group(setup, keep_container=done_now)
        if self.container is not None and done_now:
            try:  # what setup installed in the image, for the job's container
                self.container.keep_setup(self.container.name("setup"))
            except ContainerError as exc:
                raise SetupFailed(1, str(exc)) from None
        if self.stop_reason and exit_code in (0, 128 + signal.SIGTERM):
            return  # stopped during setup: run() sees the stop
        if exit_code != 0:
            last = _last_line(self.workdir / JOB_LOG)
            raise SetupFailed(exit_code, f"setup failed: exit code {exit_code}"
                              + (f" ({last})" if last else ""))
        done.write_text(f"{took:.3f}")
        self.setup_seconds = took
        with (self.workdir / JOB_LOG).open("ab") as out:
            out.write(b"costsched: setup done\n")
        self._report_running()  # no longer in setup: said at once, not a poll later

    def _supervise(self, job: subprocess.Popen, pause: Callable[[], bool] | None = None
                   ) -> None:
        """Until `job` exits: publish, beat, report, and forward a stop (or `pause`: a
        gang's round that ends, whose job is killed after `grace` seconds) as SIGTERM."""
        forwarded = False
        kill_at: float | None = None
        next_publish = next_notice = time.monotonic()
        next_publish += self.poll
        self._beat()
        while job.poll() is None:
            now = time.monotonic()
            self.progress.sample()
            if self.notice_url and not self.stop_reason and now >= next_notice:
                if notice_present(self.notice_url):
                    _stop["reason"] = "preemption notice"
                next_notice = time.monotonic() + self.poll
            if not forwarded and pause is not None and pause():
                log.info("the gang's round ends: SIGTERM to the job")
                _forward_sigterm(job.pid)
                forwarded, kill_at = True, now + self.grace
            if self.stop_reason and not forwarded:
                log.info("%s: SIGTERM to the job", self.stop_reason)
                _forward_sigterm(job.pid)
                forwarded = True
            if kill_at is not None and now >= kill_at:  # the round must end: nothing runs on
                log.info("the job did not stop in %g s: killed", self.grace)
                _kill_job()
                kill_at = None
            if now >= next_publish:
                self._publish()
                self._beat()  # a version just published is said at once
                self._report_running()
                next_publish = time.monotonic() + self.poll
                if self.publisher.again_at is not None:  # a set a look then may publish
                    next_publish = min(next_publish, max(self.publisher.again_at, now + _TICK))
            time.sleep(_TICK)

    def _beat(self) -> None:
        """WORKDIR/heartbeat; and, when due (`heartbeats.StoreBeat`), the heartbeat beside
        the checkpoints, with the job's step (timed as it was written), its newest
        checkpoint's, and when its setup began while it runs."""
        beat(self.workdir)
        if not self.store_beat.on:
            return
        self.progress.sample()
        step = read_progress(self.workdir / PROGRESS)
        said = self._unwritten(step)
        if self.store_beat.due(self.publisher.version, self.setup_since is not None,
                               said.get(NO_STEP), said["checkpoint_error"]):
            self.store_beat.write(step, self.progress.written_at(step), self.checkpoint_step,
                                  self.publisher.version, self.checkpoint_inferred,
                                  self.setup_since, said.get(NO_STEP),
                                  said["checkpoint_error"])

    def _unwritten(self, step: int | None) -> dict:
        """What status.json and the heartbeat beside the checkpoints say of the job's files
        of the contract: {"no_step_after": s} while its command runs and has run that long
        without writing its step (`_no_step`), and "checkpoint_error": why its checkpoints
        are not published ('' when they are: `Publisher.trouble`, counting from the start
        of its command while it runs)."""
        began = self.progress.began if self.job_runs else None
        return {**_no_step(began, step), "checkpoint_error": self.publisher.trouble(began)}

    def _report_running(self) -> None:
        """status.json while the job runs: its reported step (or, while setup runs, when
        setup began, and no step) and any publish failure (rewritten only when they
        change)."""
        if self.setup_since is not None:
            said: dict = {"setup_since": self.setup_since}
        else:
            self.progress.sample()  # the step read next is then known with its time
            step = read_progress(self.workdir / PROGRESS)
            said = {"step": step, "step_at": self.progress.written_at(step),
                    **self._setup_said()}
        report = {"state": "running", **said,
                  "checkpoint_version": self.publisher.version,
                  "checkpoint_step": self.checkpoint_step,
                  INFERRED: self.checkpoint_inferred,
                  **self._unwritten(said.get("step"))}
        if report != self._reported:
            write_status(self.workdir, report)
            self._reported = report

    def _wait_for_group(self, client: subprocess.Popen | None = None,
                        keep_container: bool = False) -> None:
        """Until the job's other processes (a shell's children) have exited too; the job's
        container (if any) is ended, unless it is to be kept (setup's, committed next)."""
        if self._in_container and client is not None:
            self.container.ended(self._in_container,  # type: ignore[union-attr]
                                 client.returncode, keep_container)
        self._in_container = ""
        if has_proc():
            me = os.getpid()
            while set(group_members(os.getpgrp())) - {me}:
                _reap()
                time.sleep(_TICK)
        if client is not None:  # the rest of its output in the log before it is read
            log_masking.finish(client)

    def _status(self, exit_code: int) -> dict:
        if self.stop_reason and exit_code in (0, 128 + signal.SIGTERM):
            state, detail = "stopped", self.stop_reason
        elif exit_code == 0:
            state, detail = "succeeded", "exit code 0"
        else:
            state = "failed"
            detail = f"exit code {exit_code}"
            if exit_code in _EXIT_DETAIL:
                detail += f": {_EXIT_DETAIL[exit_code]}"
            elif exit_code > 128:
                detail += f": killed by {signal.Signals(exit_code - 128).name}"
            last = _last_line(self.workdir / JOB_LOG)
            if last:
                detail += f" ({last})"
        return {"state": state, "exit_code": exit_code,
                "checkpoint_version": self.publisher.version, "detail": detail,
                "checkpoint_step": self.checkpoint_step,
                INFERRED: self.checkpoint_inferred,
                "step": (step := read_progress(self.workdir / PROGRESS)),
                "step_at": self.progress.written_at(step),
                "checkpoint_error": self.publisher.error, **self._setup_said()}

    def _setup_said(self) -> dict:
        """{"setup_seconds": how long this instance's setup took} once it ended, else {}."""
        took = self.setup_seconds
        return {} if took is None else {"setup_seconds": round(took, 3)}


def _no_step(began: float | None, step: int | None) -> dict:
    """{"no_step_after": seconds} once the command has run that long past its setup
    without writing its step to its progress file (`launchers.unseen`), else {}."""
    return {NO_STEP: AFTER_SECONDS} if overdue(began, step is not None) else {}


# What the agent's own environment holds only for the agent (`local_env.ENV_AGENT_ONLY`,
# so that it can import costsched and reach its checkpoint store): not passed to the job.


def _setup_took(done: Path) -> float | None:
    """The seconds an earlier agent's setup on this instance took, as its `_SETUP_DONE`
    file keeps them; None where it does not (written before it kept them)."""
    try:
        took = float(done.read_text().strip())
    except (OSError, ValueError):
        return None
    return took if took >= 0 else None


def job_environment() -> dict[str, str]:
    """The agent's environment less what is the agent's alone."""
    private = {n for n in os.environ.get(ENV_AGENT_ONLY, "").split(",") if n}
    return {k: v for k, v in os.environ.items()
            if k not in private and k != ENV_AGENT_ONLY}


def _forward_sigterm(shell_pid: int) -> None:
    """SIGTERM to the job's processes. The shell that runs the command is spared while it
    waits for them, so that it lives to return their exit code (dash forks even a lone
    command); a job that is the shell alone (builtins, or a shell that exec'd) gets it."""
    if not has_proc():
        os.killpg(os.getpgrp(), signal.SIGTERM)  # the agent ignores its own copy
        return
    targets = set(group_members(os.getpgrp())) - {os.getpid()}
    if len(targets) > 1 and _is_shell(shell_pid):
        targets.discard(shell_pid)
    for pid in targets:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)


def _kill_job() -> None:
    """SIGKILL to every process of the group but the agent."""
    if not has_proc():
        return
    for pid in set(group_members(os.getpgrp())) - {os.getpid()}:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _is_shell(pid: int) -> bool:
    try:
        return os.path.realpath(f"/proc/{pid}/exe") == os.path.realpath("/bin/sh")
    except OSError:
        return False


_stop = {"reason": ""}  # set once a stop is asked for (SIGTERM or a notice)


def _on_sigterm(_signum: int, _frame: object) -> None:
    if not _stop["reason"]:
        _stop["reason"] = "stop requested"


def _exit_code(returncode: int) -> int:
    """The shell's convention: 128 + n for a process killed by signal n."""
    return 128 - returncode if returncode < 0 else returncode


def _reap() -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def _last_line(path: Path, limit: int = 200) -> str:
    try:
        with path.open("rb") as handle:
            handle.seek(max(0, path.stat().st_size - 4096))
            lines = handle.read().decode(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1].strip()[:limit] if lines else ""


def _become_group_leader() -> None:
    """Lead a process group of our own, so that forwarding SIGTERM to the group reaches the
    job and nothing that started the agent."""
    if os.getpgrp() != os.getpid():
        os.setpgid(0, 0)
    try:  # orphans of the job (a shell's children) come back to us to be reaped
        import ctypes

        ctypes.CDLL(None).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m launchers.agent",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--job-id", type=int, required=True)
    parser.add_argument("--checkpoint-uri", required=True)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--poll", type=float, default=float(os.environ.get(ENV_POLL) or 5.0),
                        help="seconds between checkpoint publishes and notice checks")
    parser.add_argument("--notice-url", help="a cloud's preemption-notice metadata URL")
    parser.add_argument("--code-uri", default="", help="the job's code archive")
    parser.add_argument("--code-sha256", default="", help="its SHA-256, checked on fetch")
    parser.add_argument("--code-size", type=int, default=0, help="its size in bytes")
    parser.add_argument("--setup", default="", help="shell commands run once per instance "
                        "in the unpacked code, before the command")
    parser.add_argument("--attempt", default="", help="the launch attempt of this instance: "
                        "names its heartbeat beside the checkpoints")
    parser.add_argument("--heartbeat-seconds", type=float, default=0.0,
                        help="write the heartbeat beside the checkpoints this often "
                        "(0: never; for launchers that cannot see the agent's process)")
    parser.add_argument("--mounts", default="", help="the task's file mounts (JSON; "
                        "launchers.mounts)")
    parser.add_argument("--mount-root", default="", help="the folder the mounts go under")
    parser.add_argument("--checkpoint-at", default="", help="where the task mounts its "
                        "checkpoint bucket: a link to the checkpoint directory")
    parser.add_argument("--image", default="", help="setup and the command run in this "
                        "Docker image (JSON: launchers.containers.agent_args)")
    parser.add_argument("--no-publish", action="store_true",
                        help="restore the checkpoints but never publish them (a gang's "
                        "nodes other than rank 0: rank 0 publishes)")
    parser.add_argument("--gang-file", type=Path, default=None,
                        help="a gang's node: the gang's rounds (launchers.gang_agent)")
    parser.add_argument("--rank", type=int, default=0, help="a gang's node: its rank")
    parser.add_argument("--gang-doc", default="", help="a cloud gang's node: its digest; "
                        "the rounds come from the gang's document beside the checkpoints "
                        "(launchers.cloud_gang)")
    parser.add_argument("--gang-exit-wait", type=float, default=None,
                        help="a gang's node: seconds to wait for a new round after its job "
                        "exited by itself (default: --gang-wait)")
    parser.add_argument("--gang-wait", type=float, default=3600.0,
                        help="a gang's node: seconds to wait for the launcher's word after "
                        "its round ended")
    parser.add_argument("--grace", type=float, default=10.0,
                        help="a gang's node: seconds a paused job has to stop")
    parser.add_argument("--mask-env", action="append", default=[], metavar="NAME",
                        help="a secret's variable: its value is masked in the job's log")
    parser.add_argument("command", nargs="+", help="after --: one shell string")
    args = parser.parse_args(argv)
    if args.poll <= 0:
        parser.error(f"poll {args.poll}: expected seconds > 0")
    # one string is a shell command; several words are quoted as they are
    args.command = args.command[0] if len(args.command) == 1 else shlex.join(args.command)
    return args


def _container(args: argparse.Namespace, workdir: Path) -> Container:
    """The job's image: its file mounts at the task's paths (placed under --mount-root on
    the instance)."""
    from launchers.mounts import place

    tasks = json.loads(args.mounts) if args.mounts else []
    return Container.from_args(args.image, workdir, [
        (str(place(m["path"], args.mount_root)), str(Path(m["path"]).expanduser()))
        for m in tasks])


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _on_sigterm)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s agent: %(message)s")
    logging.getLogger("launchers.checkpoints").setLevel(logging.WARNING)  # we say it once
    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    _become_group_leader()
    try:
        store = open_store(args.checkpoint_uri)
    except ValueError as exc:  # InvalidInput
        log.error("%s", exc)
        write_status(workdir, {"state": "failed", "exit_code": None, "checkpoint_version": None,
                               "detail": str(exc)})
        return 2
    code = Code(args.code_uri, args.code_sha256, args.code_size) if args.code_uri else None
    notice_url = metadata_url(args.notice_url) if args.notice_url else None
    agent = Agent(args.job_id, store, workdir, args.command, args.poll, notice_url, code,
                  args.setup, args.attempt, args.heartbeat_seconds)
    agent.publisher.enabled = not args.no_publish
    agent.grace = args.grace
    agent.masked = tuple(args.mask_env)
    if args.image:
        agent.container = _container(args, workdir)
    if args.gang_file is not None:
        agent.rounds = Rounds(GangFile(args.gang_file), args.rank, args.gang_wait,
                              args.gang_exit_wait)
    elif args.gang_doc:
        from launchers.cloud_gang import StoreGangFile

        agent.rounds = Rounds(StoreGangFile(args.checkpoint_uri, args.gang_doc, args.rank,
                                            every=args.poll),
                              args.rank, args.gang_wait, args.gang_exit_wait)
    log.info("job %d, checkpoints %s", args.job_id, redact(store.uri))
    try:
        if args.mounts or args.checkpoint_at:  # the task's file mounts, before its setup
            from launchers import mounts

            try:
                for line in mounts.prepare(json.loads(args.mounts or "[]"), args.mount_root):
                    log.info("mount: %s", redact(line))
            except (ValueError, OSError) as exc:  # our own words, or the system's: one line
                raise MountFailed(str(exc)) from None
            if args.checkpoint_at and agent.container is None:  # a container binds it
                log.info("mount: %s", mounts.link_checkpoints(
                    args.checkpoint_at, agent.checkpoints, args.mount_root))
        status = agent.run()
    except MountFailed as exc:
        log.error("file mounts: %s", exc)
        status = {"state": "failed", "phase": "file_mounts", "exit_code": None,
                  "checkpoint_version": agent.publisher.version, "detail": str(exc)}
    except Exception as exc:
        log.exception("agent failed")
        status = {"state": "failed", "exit_code": None,
                  "checkpoint_version": agent.publisher.version,
                  "detail": f"agent: {type(exc).__name__}: {exc}"}
    write_status(workdir, {"checkpoint_step": agent.checkpoint_step,  # (a restored one's)
                           INFERRED: agent.checkpoint_inferred, **status})
    log.info("%s: %s", status["state"], status["detail"])
    return status["exit_code"] if status["exit_code"] is not None else 1


if __name__ == "__main__":
    sys.exit(main())
