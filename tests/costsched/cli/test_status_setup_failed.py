"""A job whose `setup` fails never ran its command: `status` says its setup failed, names
`setup` in its job file as what to fix, and the command that runs the fixed file (`start`
runs the setup as launched: it never reads the file again); the supervisor's line for the
pass that closed it says `failed in setup`. Real jobs on the local launcher."""

from __future__ import annotations

import json
import re
import shlex
import sys
import time
from pathlib import Path

import pytest
import yaml

from costsched.service import jobs as service
from tests.costsched.cli.test_launch_written_secret import _state
from tests.real_jobs import World, wait_for, world  # noqa: F401 - the fixture

TASK = """\
name: failsetup
workdir: .
resources:
  accelerators: V100:1
setup: {setup}
run: python -c pass
"""


def _ended(cli, job_id: int, state: str) -> None:  # noqa: ANN001
    deadline = time.monotonic() + 120  # a stop for a job that never ends, not a bound
    while _state(cli, job_id) != state and time.monotonic() < deadline:
        time.sleep(0.3)
    assert _state(cli, job_id) == state


def _launched(cli, tmp_path: Path, setup: str) -> int:  # noqa: ANN001
    (tmp_path / "failsetup.yaml").write_text(TASK.format(setup=setup))
    launched = cli("launch", "failsetup.yaml", "--launcher", "local", "--wait", "0", "--json")
    [job] = json.loads(launched.stdout)
    assert launched.exit_code == 0 or (launched.exit_code, job["state"]) == (1, "failed"), \
        launched.output
    _ended(cli, job["id"], "failed")
    return int(job["id"])


@pytest.fixture()
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    return tmp_path


def test_a_setup_not_found_is_sent_to_setup_in_its_file_and_the_launch_that_reads_it(
        cli, here: Path) -> None:  # noqa: ANN001
    job = _launched(cli, here, "pip-nonexistent install foo")
    said = " ".join(cli("status", str(job)).stdout.split())
    assert f"job {job}: failed in setup with exit code 127" in said, said
    assert (f"its setup (the job file's `setup`, as launched) could not run (exit code 127): "
            f"`costsched start {job}` runs the same setup again; fix `setup` in "
            "failsetup.yaml, then `costsched launch failsetup.yaml` (the file it was "
            "launched from) runs it again as a new job, started afresh") in said, said
    assert "`run`" not in said and "its command" not in said, said  # it never ran
    # the file fixed, the command the hint names runs it
    (here / "failsetup.yaml").write_text(TASK.format(setup="echo ready"))
    command = re.search(r"then `(costsched launch [^`]+)`", said).group(1)
    again = cli(*shlex.split(command)[1:], "--launcher", "local", "--wait", "0", "--json")
    assert again.exit_code == 0, again.output
    [second] = json.loads(again.stdout)
    _ended(cli, second["id"], "succeeded")


def test_a_setup_that_fails_says_start_runs_it_as_launched(cli, here: Path) -> None:  # noqa: ANN001
    job = _launched(cli, here, "exit 3")
    said = " ".join(cli("status", str(job)).stdout.split())
    assert f"job {job}: failed in setup with exit code 3" in said, said
    assert (f"`costsched start {job}` starts it again from step 0: it published no "
            f"checkpoint, with the code it ran (`costsched start {job} --repack` packs its "
            "workdir again, as it is now); that runs its setup as launched: after a fix to "
            "`setup` in failsetup.yaml, `costsched launch failsetup.yaml` (the file it was "
            "launched from) runs it again as a new job, started afresh") in said, said


def test_the_pass_that_closes_it_says_it_failed_in_setup(world: World) -> None:  # noqa: F811
    store, launcher, tmp = world
    path = tmp / "failsetup.yaml"
    path.write_text(yaml.safe_dump({
        "name": "failsetup", "throughputs": {"V100": 0.01}, "steps": 10,
        "setup": "pip-nonexistent install foo", "run": f"{sys.executable} -c pass",
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
        "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}))
    # (no wait in the launch: a settle's passes would close it, their lines unread)
    [job] = service.launch(store, path, launcher=launcher, wait_seconds=0,
                           checkpoint_root=str(tmp / "checkpoints"))

    def closed() -> list[str]:
        return [str(e) for e in service.reconcile(store, launcher) if e.job_id == job.id]

    said = wait_for(closed, 120)
    assert said == [f"job {job.id}: failed in setup (exit code 127)"], said
