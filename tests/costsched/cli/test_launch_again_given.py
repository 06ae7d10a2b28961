"""`start` of a job that has ended names the launch that runs it again, with what its
launch was given beside the file (`--env`, `--secret`): the command works as printed. An
env named like a secret, and a secret, go by name (their values are never printed), with
the shell to set them."""

from __future__ import annotations

import json
import re
import shlex
import time
from pathlib import Path

import pytest

from tests.costsched.cli.test_launch_written_secret import _state

TASK = """\
name: again
workdir: .
resources:
  accelerators: V100:1
envs:
  MODE:
  WANDB_API_TOKEN:
secrets:
  HF_TOKEN:
run: python -c pass
"""


def test_the_launch_again_hint_carries_what_the_launch_was_given(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    for name in ("WANDB_API_TOKEN", "HF_TOKEN", "MODE"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "task.yaml").write_text(TASK)
    monkeypatch.chdir(tmp_path)
    launched = cli("launch", "task.yaml", "--launcher", "local", "--env", "MODE=fast run",
                   "--env", "WANDB_API_TOKEN=tok-4417-abc", "--secret", "HF_TOKEN=hf-9921-x",
                   "--wait", "0", "--json")
    assert launched.exit_code == 0, launched.output
    [job] = json.loads(launched.stdout)
    deadline = time.monotonic() + 90  # a stop for a job that never ends, not a bound
    while _state(cli, job["id"]) != "succeeded" and time.monotonic() < deadline:
        time.sleep(0.3)
    assert _state(cli, job["id"]) == "succeeded"

    started = cli("start", str(job["id"]))
    assert started.exit_code == 2
    said = " ".join(started.stderr.split())
    assert said.endswith(
        "`costsched launch task.yaml --env 'MODE=fast run' --env WANDB_API_TOKEN --secret "
        "HF_TOKEN` (the file it was launched from, and what its launch was given) runs it "
        "again as a new job, started afresh with WANDB_API_TOKEN and HF_TOKEN set in your "
        "shell first (the value of WANDB_API_TOKEN is stored with job 1 but never printed, "
        "as it is named like a secret; that of HF_TOKEN, a secret, is never stored)"), said
    assert "not kept" not in said  # the env's value is kept: its launch said so
    assert "tok-4417" not in started.output and "hf-9921" not in started.output
    command = re.search(r"`(costsched launch [^`]+)`", said).group(1)
    argv = shlex.split(command)[1:]
    plain = cli(*argv[:2], "--wait", "0")  # the file alone: its envs are not given
    assert plain.exit_code == 2 and "WANDB_API_TOKEN" in plain.output
    monkeypatch.setenv("WANDB_API_TOKEN", "tok-4417-abc")
    monkeypatch.setenv("HF_TOKEN", "hf-9921-x")
    again = cli(*argv, "--launcher", "local", "--wait", "0", "--json")
    assert again.exit_code == 0, again.output
    [second] = json.loads(again.stdout)
    assert second["id"] != job["id"]


@pytest.mark.parametrize(("envs", "secrets", "why"), [
    (["HF_TOKEN"], [], "(its value is stored with job 2 but never printed, as it is named "
                       "like a secret)"),
    (["HF_TOKEN", "WANDB_API_KEY"], [], "(their values are stored with job 2 but never "
                                        "printed, as they are named like secrets)"),
    ([], ["HF_TOKEN"], "(a secret's value is never stored)"),
    ([], ["A_KEY", "B_KEY"], "(secrets' values are never stored)"),
])
def test_the_shell_is_told_why_each_kind_is_taken_from_it(envs: list[str], secrets: list[str],
                                                          why: str) -> None:
    """An env given by name is stored with the job (its launch said so): only a secret's
    value is never stored."""
    from costsched.service.jobs.launches import _from_shell

    said = _from_shell(2, envs, secrets)
    assert said.startswith(f" with {' and '.join(envs + secrets)} set in your shell first ")
    assert said.endswith(why), said
