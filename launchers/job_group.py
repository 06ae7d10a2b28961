"""The job's process group, which the agent leads (`launchers.agent`'s doc): the stop asked
of the job (SIGTERM to the agent, or a preemption notice), SIGTERM and SIGKILL to the job's
processes, their exit codes, and the orphans reaped."""

from __future__ import annotations

import contextlib
import os
import signal

from launchers.job_shell import job_shell
from launchers.procfs import group_members, has_proc

STOP = {"reason": ""}  # set once a stop is asked for (SIGTERM or a notice)


def on_sigterm(_signum: int, _frame: object) -> None:
    if not STOP["reason"]:
        STOP["reason"] = "stop requested"


def forward_sigterm(shell_pid: int) -> None:
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


def kill_job() -> None:
    """SIGKILL to every process of the group but the agent."""
    if not has_proc():
        return
    for pid in set(group_members(os.getpgrp())) - {os.getpid()}:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _is_shell(pid: int) -> bool:
    try:
        return os.path.realpath(f"/proc/{pid}/exe") == os.path.realpath(job_shell())
    except OSError:
        return False


def exit_code_of(returncode: int) -> int:
    """The shell's convention: 128 + n for a process killed by signal n."""
    return 128 - returncode if returncode < 0 else returncode


def reap() -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def become_group_leader() -> None:
    """Lead a process group of our own, so that forwarding SIGTERM to the group reaches the
    job and nothing that started the agent."""
    if os.getpgrp() != os.getpid():
        os.setpgid(0, 0)
    try:  # orphans of the job (a shell's children) come back to us to be reaped
        import ctypes

        ctypes.CDLL(None).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass
