"""The local launcher's dealings with its agents' processes: signals, reaping, and finding
an agent whose pid was never recorded."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from pathlib import Path

from launchers.procfs import has_proc


def signal_pid(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signum)


def signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signum)


def reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):  # not ours: its parent reaps it
        os.waitpid(pid, os.WNOHANG)


def reap_when_ended(child: subprocess.Popen) -> None:
    """Collect `child` as soon as it ends, whoever ends it: an agent started by a
    long-lived process (the supervisor replaces a node, recovers a job) and then killed by
    another (a preemption) is otherwise left a zombie until a later look at its instance,
    or for good when none comes (the launcher that started it, made for one pass, is gone)."""
    threading.Thread(target=child.wait, name=f"reap-{child.pid}", daemon=True).start()


def find_agent(folder: Path) -> int | None:
    """The pid of an agent running for `folder`, from the process table."""
    if not has_proc():
        return None
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue
        if b"launchers.agent" in argv and str(folder).encode() in argv:
            return int(entry.name)
    return None

