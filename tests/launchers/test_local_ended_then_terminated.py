"""launchers/local.py: an instance whose job ended by itself (exit 0, or an error) and
which costsched then terminates (the clean-up after its end) still reads as it ended,
with its exit code; one terminated while its job runs reads terminated. Real agent
subprocesses."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from launchers.local import LocalLauncher
from tests.launchers.test_local import spec, wait_for, wait_state


@pytest.fixture
def launcher(tmp_path: Path) -> LocalLauncher:
    return LocalLauncher(tmp_path / "instances", grace_seconds=5, poll_seconds=0.1)


@pytest.mark.parametrize(("command", "state", "code"), [("true", "succeeded", 0),
                                                        ("exit 3", "failed", 3)])
def test_an_instance_that_ended_then_was_terminated_reads_as_it_ended(
        tmp_path: Path, launcher: LocalLauncher, command: str, state: str, code: int) -> None:
    instance = launcher.launch(spec(tmp_path, "a1", command=command))
    assert wait_state(launcher, instance.id, "succeeded", "failed") == state
    launcher.terminate(instance.id)  # as a settle's clean-up does
    after = launcher.status(instance.id)
    assert (after.state, after.exit_code) == (state, code), after
    # ... and so in a listing of the job's instances, read again from the index.
    [listed] = [i for i in launcher.instances(7) if i.id == instance.id]
    assert (listed.state, listed.exit_code) == (state, code), listed


def test_an_instance_terminated_while_it_runs_reads_terminated(
        tmp_path: Path, launcher: LocalLauncher) -> None:
    go = tmp_path / "go"
    instance = launcher.launch(dataclasses.replace(
        spec(tmp_path, "a1", command=f"while [ ! -e {go} ]; do sleep 0.1; done")))
    wait_state(launcher, instance.id, "running")
    launcher.terminate(instance.id)
    wait_for(lambda: launcher.status(instance.id).state == "terminated")
    assert launcher.status(instance.id).state == "terminated"
