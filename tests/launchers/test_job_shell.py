"""The shell a job's commands run in (`launchers.job_shell`): bash, as SkyPilot runs a
task's setup and run, so that a task written for it runs unchanged; /bin/sh where there
is no bash, said in the job's log. On the agent (a real subprocess) and in a container's
first process (its wrapper, run here by /bin/sh as an image's entrypoint would)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from launchers import job_shell
from launchers.containers import WRAPPER
from tests.launchers.test_agent import finish, start_agent

# What a SkyPilot task's commands may use and /bin/sh (dash) refuses: a substring
# expansion, `source`, `[[ ]]`, an array, pipefail.
BASHISMS = ('set -o pipefail; key=abcdef; arr=(x y); source /dev/null; '
            '[[ ${key:0:3} == abc ]] && echo "ok ${arr[1]} ${key:0:3}"')


@pytest.mark.skipif(shutil.which("bash") is None, reason="this machine has no bash")
def test_setup_and_run_read_bash_as_skypilot_runs_them(tmp_path: Path) -> None:
    status, _ = finish(start_agent(tmp_path, BASHISMS + " > ran.txt", "--setup",
                                   BASHISMS + " > set-up.txt"), tmp_path)
    assert status["state"] == "succeeded", status
    code = tmp_path / "work" / "code"
    assert (code / "set-up.txt").read_text() == "ok y abc\n"
    assert (code / "ran.txt").read_text() == "ok y abc\n"
    assert "bash is not installed" not in (tmp_path / "work" / "job.log").read_text()


def test_without_bash_the_commands_run_in_sh_and_the_log_says_so(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert job_shell.job_shell() == "/bin/sh"
    said = job_shell.fallback_said(job_shell.job_shell()).decode()
    assert said == "costsched: bash is not installed here: setup and run run with /bin/sh\n"
    assert job_shell.fallback_said(sys.executable) == b""


def _wrapped(tmp_path: Path, command: str, path: str) -> subprocess.CompletedProcess:
    """The container wrapper run as an image's entrypoint runs it, with PATH `path`."""
    envs = tmp_path / "envs"
    envs.write_text("")
    return subprocess.run(["/bin/sh", "-c", WRAPPER, command, str(envs)], cwd=tmp_path,
                          env={"PATH": path}, capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(shutil.which("bash") is None, reason="this machine has no bash")
def test_a_containers_commands_read_bash_where_the_image_has_it(tmp_path: Path) -> None:
    ran = _wrapped(tmp_path, BASHISMS, os.environ.get("PATH", "/usr/bin:/bin"))
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "ok y abc\n", "")


def test_an_image_without_bash_runs_them_in_sh_and_says_so(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"  # a PATH with a shell's tools but no bash
    bin_dir.mkdir()
    for tool in ("cat", "echo"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    ran = _wrapped(tmp_path, 'echo "plain $((1 + 1))"', str(bin_dir))
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "plain 2\n"
    assert ran.stderr == "costsched: bash is not in the image: setup and run run with /bin/sh\n"
