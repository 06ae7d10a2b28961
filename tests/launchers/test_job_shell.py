"""The shell a job's commands run in (`launchers.job_shell`): bash, as SkyPilot runs a
task's setup and run, so that a task written for it runs unchanged; /bin/sh where there
is no bash, said in the job's log. On the agent (a real subprocess) and in a container's
first process (its wrapper, run here by /bin/sh as an image's entrypoint would)."""

from __future__ import annotations

import dataclasses
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from launchers import job_shell
from launchers.containers import WRAPPER
from launchers.local import LocalLauncher
from tests.launchers.test_agent import finish, start_agent
from tests.launchers.test_local import spec, wait_for, wait_state

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


def _wrapped(tmp_path: Path, command: str, path: str, first: bool = True
             ) -> subprocess.CompletedProcess:
    """The container wrapper run as an image's entrypoint runs it, with PATH `path`
    (`first`: the instance's first command)."""
    envs = tmp_path / "envs"
    envs.write_text("")
    return subprocess.run(["/bin/sh", "-c", WRAPPER, command, str(envs), "1" if first else ""],
                          cwd=tmp_path, env={"PATH": path}, capture_output=True, text=True,
                          timeout=60)


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
    again = _wrapped(tmp_path, 'echo "plain $((1 + 1))"', str(bin_dir), first=False)
    assert (again.returncode, again.stdout, again.stderr) == (0, "plain 2\n", "")  # said once


# Lines a task written for `sky launch` uses, each an error under dash's /bin/sh.
SKY_RUN = """\
set -o pipefail
source ./env.sh
[[ "$GREETING" == hel* ]]
words=(alpha beta gamma)
echo "${GREETING:0:3} ${words[2]} $FROM_SETUP" > out.txt
"""


@pytest.mark.skipif(shutil.which("bash") is None, reason="this machine has no bash")
def test_a_task_written_for_bash_runs_on_the_local_launcher(tmp_path: Path) -> None:
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=5, poll_seconds=0.1)
    setup = "source /dev/null && [[ -n $GREETING ]] && echo FROM_SETUP=set-up > env.sh"
    instance = launcher.launch(dataclasses.replace(
        spec(tmp_path, "a1", command=SKY_RUN), setup=setup, envs={"GREETING": "hello"}))
    state = wait_state(launcher, instance.id, "succeeded", "failed")
    assert state == "succeeded", launcher.logs(instance.id)
    [code] = (tmp_path / "instances").glob("*/code")
    assert (code / "out.txt").read_text() == "hel gamma set-up\n"


@pytest.mark.skipif(shutil.which("bash") is None, reason="this machine has no bash")
def test_a_stop_spares_bash_which_returns_its_jobs_code(tmp_path: Path) -> None:
    """Two commands: bash forks the first and waits; SIGTERM reaches the job's process
    (its trap writes a checkpoint), not bash, which lives to run the second line."""
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=5, poll_seconds=0.1)
    ready = tmp_path / "ready"
    job = (f"{shlex.quote(sys.executable)} -c \"import signal, sys, time, pathlib; "
           "signal.signal(signal.SIGTERM, lambda *a: (pathlib.Path('done').write_text("
           f"'ckpt'), sys.exit(3))); pathlib.Path('{ready}').touch(); time.sleep(60)\"\n"
           "echo \"exited $?\" > code.txt")
    instance = launcher.launch(spec(tmp_path, "a1", command=job))
    wait_for(ready.exists)
    launcher.request_stop(instance.id)
    wait_for(lambda: launcher.status(instance.id).state not in ("pending", "running"))
    [code] = (tmp_path / "instances").glob("*/code")
    assert (code / "done").read_text() == "ckpt"
    assert (code / "code.txt").read_text() == "exited 3\n"  # bash lived to say it


def test_an_agent_without_bash_says_so_once_before_setup(tmp_path: Path) -> None:
    """An agent on a PATH without bash (a minimal machine): setup and run with /bin/sh,
    the job's log saying so once, before either's output."""
    no_bash = tmp_path / "bin"
    no_bash.mkdir()
    work = tmp_path / "work"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PATH")}
    env.update(PATH=str(no_bash), PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    done = subprocess.run(
        [sys.executable, "-m", "launchers.agent", "--job-id", "7", "--checkpoint-uri",
         str(tmp_path / "store"), "--workdir", str(work), "--poll", "0.1",
         "--setup", "echo set up", "--", 'echo "ran in $0"'],
        env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    log = (work / "job.log").read_text()
    said = job_shell.fallback_said(job_shell.FALLBACK).decode()
    assert log.count(said) == 1, log
    assert log.index(said) < log.index("set up") < log.index("ran in /bin/sh")
