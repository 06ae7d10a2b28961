"""The shell a job's setup and run commands run in: bash, as SkyPilot runs a task's (a
task written for it may use `source`, `[[ ]]`, `${VAR:0:3}`, arrays or `set -o pipefail`,
which /bin/sh does not read where it is dash); /bin/sh on a machine without bash, said
once in the job's log."""

from __future__ import annotations

import shutil

FALLBACK = "/bin/sh"
# The same choice inside a container (an image may lack bash: alpine's): a POSIX sh
# fragment that sets `job_shell` and, where it falls back, says so on stderr when $2 is
# set (the instance's first command: the log says it once, as without an image).
IN_CONTAINER = ('job_shell=$(command -v bash) || { job_shell=/bin/sh; [ -z "$2" ] || echo '
                '"costsched: bash is not in the image: setup and run run with /bin/sh" >&2; }')


def job_shell() -> str:
    """The path of bash on this machine, or /bin/sh."""
    return shutil.which("bash") or FALLBACK


def fallback_said(shell: str) -> bytes:
    """The job log's line where commands run without bash (b'' with bash)."""
    if shell != FALLBACK:
        return b""
    return b"costsched: bash is not installed here: setup and run run with /bin/sh\n"
