"""The agent's run loop (`launchers.agent`'s doc): the job's code unpacked and verified,
its newest checkpoint restored, its setup run once per instance, then its command
supervised (published, beaten, reported, stopped when asked) until it exits; what
status.json says all along, and its outcome."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from costsched.restored import Restored
from launchers import log_masking, version_steps
from launchers.agent_workdir import (
    CHECKPOINTS,
    CODE,
    JOB_LOG,
    PROGRESS,
    SETUP_DONE,
    last_line,
    setup_took,
)
from launchers.checkpoints import CheckpointStore
from launchers.containers import Container, ContainerError
from launchers.gang_agent import Rounds
from launchers.heartbeats import StoreBeat, beat
from launchers.job_group import STOP, exit_code_of, forward_sigterm, kill_job, reap
from launchers.job_shell import fallback_said, job_shell
from launchers.local_env import ENV_AGENT_ONLY
from launchers.mounts import MOUNTS_ENV
from launchers.notices import notice_present, redact
from launchers.procfs import group_members, has_proc
from launchers.progress_readings import INFERRED, ProgressReadings, read_progress
from launchers.publisher import Publisher, restore, settle_seconds
from launchers.status_file import NO_STEP, write_status
from launchers.unseen import overdue, wait_seconds

log = logging.getLogger("costsched.agent")

_TICK = 0.05  # seconds between looks at the job and the stop flag
_EXIT_DETAIL = {126: "command not executable", 127: "command not found"}

# --- the job ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Code:
    """The job's code archive as launched: where it is, its SHA-256 and size."""

    uri: str
    sha256: str
    size: int


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
        self.mounts_at: str | None = None  # $COSTSCHED_MOUNTS: the folder its mounts are in
        self.checkpoint_step: int | None = None  # the step its newest version holds...
        self.checkpoint_inferred = False  # ...read off the time it was saved (a floor)
        # What it restored (the version, its step, the newer ones skipped): said in its
        # status and heartbeat, where a recovery's or a start's words are corrected from.
        self.restored: Restored | None = None
        self.progress = ProgressReadings(workdir / PROGRESS)
        self.job_runs = False  # the job's command runs (not its setup, nor after its exit)
        self.setup_since: float | None = None  # when setup began, while it runs (Unix s)
        # The seconds this instance's setup took, once it ended (0 without one); None
        # before, or where an earlier agent ran it and did not keep it.
        self.setup_seconds: float | None = None

    @property
    def stop_reason(self) -> str:
        return STOP["reason"]

    def run(self) -> dict:
        try:
            self._unpack_code()
        except Exception as exc:  # noqa: BLE001 - said in the status, the attempt fails
            log.error("code: %s", exc)
            return {"state": "failed", "phase": "code", "exit_code": None,
                    "checkpoint_version": None, "detail": f"code: {exc}"}
        self.checkpoints.mkdir(parents=True, exist_ok=True)
        self._beat()
        self._restored(restore(self.store, self.checkpoints))
        if self.stop_reason:  # asked to stop before the job started: nothing to run
            return self._status(0)
        env = {**job_environment(), "COSTSCHED_JOB_ID": str(self.job_id),
               # SkyPilot's id of a task's run: the same across recoveries, moves and
               # starts, as a managed job's (a run's key for resuming its logging)
               "SKYPILOT_TASK_ID": f"costsched-job-{self.job_id}",
               "COSTSCHED_CHECKPOINT_DIR": str(self.checkpoints),
               "CHECKPOINT_DIR": str(self.checkpoints),
               "COSTSCHED_PROGRESS_FILE": str(self.workdir / PROGRESS)}
        if self.mounts_at is not None:
            env[MOUNTS_ENV] = self.mounts_at
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
        exit_code = exit_code_of(job.returncode)
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
            self._restored(restore(self.store, self.checkpoints, at_most))

    def _restored(self, restored: Restored) -> None:
        """The version `restored` taken as this node's, its step read, and what it restored
        kept to be said (the steps of the versions skipped, as kept beside them)."""
        self.publisher.version = restored.version
        self.publisher.remember_all()
        self.checkpoint_step, self.checkpoint_inferred = self.publisher.restored_step()
        skipped = tuple(s._replace(step=version_steps.of(self.store.uri, s.version)[0])
                        for s in restored.skipped)
        self.restored = restored._replace(step=self.checkpoint_step, skipped=skipped,
                                          inferred=self.checkpoint_inferred)

    def _start(self, command: str, env: dict[str, str], phase: str = "run"
               ) -> subprocess.Popen:
        shell = job_shell()
        argv = [shell, "-c", command]
        first = phase == "setup" or not self.setup.strip()  # where the shell is said
        if self.container is not None:  # the docker client: its container runs the command
            self._in_container = phase
            argv = self.container.run_argv(command, self.code_dir, env,
                                           self.container.starting(phase),
                                           keep=phase == "setup", first=first)
        said = fallback_said(shell) if self.container is None and first else b""
        if said:
            with (self.workdir / JOB_LOG).open("ab") as out:  # before its first command
                out.write(said)
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
        done = self.workdir / SETUP_DONE
        if not self.setup.strip() or done.exists():
            self.setup_seconds = setup_took(done) if self.setup.strip() else 0.0
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
        exit_code = exit_code_of(setup.returncode)
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
            last = last_line(self.workdir / JOB_LOG)
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
                    STOP["reason"] = "preemption notice"
                next_notice = time.monotonic() + self.poll
            if not forwarded and pause is not None and pause():
                log.info("the gang's round ends: SIGTERM to the job")
                forward_sigterm(job.pid)
                forwarded, kill_at = True, now + self.grace
            if self.stop_reason and not forwarded:
                log.info("%s: SIGTERM to the job", self.stop_reason)
                forward_sigterm(job.pid)
                forwarded = True
            if kill_at is not None and now >= kill_at:  # the round must end: nothing runs on
                log.info("the job did not stop in %g s: killed", self.grace)
                kill_job()
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
                                  said["checkpoint_error"], self._restored_said())

    def _unwritten(self, step: int | None) -> dict:
        """What status.json and the heartbeat beside the checkpoints say of the job's files
        of the contract: {"no_step_after": s} while its command runs and has run that long
        without writing its step (`no_step`), and "checkpoint_error": why its checkpoints
        are not published ('' when they are: `Publisher.trouble`, counting from the start
        of its command while it runs)."""
        began = self.progress.began if self.job_runs else None
        return {**no_step(began, step), "checkpoint_error": self.publisher.trouble(began)}

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
                  INFERRED: self.checkpoint_inferred, "restored": self._restored_said(),
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
                reap()
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
            last = last_line(self.workdir / JOB_LOG)
            if last:
                detail += f" ({last})"
        return {"state": state, "exit_code": exit_code,
                "checkpoint_version": self.publisher.version, "detail": detail,
                "checkpoint_step": self.checkpoint_step,
                INFERRED: self.checkpoint_inferred,
                "step": (step := read_progress(self.workdir / PROGRESS)),
                "step_at": self.progress.written_at(step),
                "checkpoint_error": self.publisher.error, "restored": self._restored_said(),
                **self._setup_said()}

    def _restored_said(self) -> dict | None:
        """What it restored, as its status and heartbeat say it (`costsched.restored`)."""
        return None if self.restored is None else self.restored.document()

    def _setup_said(self) -> dict:
        """{"setup_seconds": how long this instance's setup took} once it ended, else {}."""
        took = self.setup_seconds
        return {} if took is None else {"setup_seconds": round(took, 3)}


def no_step(began: float | None, step: int | None) -> dict:
    """{"no_step_after": seconds} once the command has run that long past its setup
    without writing its step to its progress file (`launchers.unseen`), else {}."""
    wait = wait_seconds()
    return {NO_STEP: wait} if overdue(began, step is not None, wait) else {}


# What the agent's own environment holds only for the agent (`local_env.ENV_AGENT_ONLY`,
# so that it can import costsched and reach its checkpoint store): not passed to the job.
def job_environment() -> dict[str, str]:
    """The agent's environment less what is the agent's alone."""
    private = {n for n in os.environ.get(ENV_AGENT_ONLY, "").split(",") if n}
    return {k: v for k, v in os.environ.items()
            if k not in private and k != ENV_AGENT_ONLY}

