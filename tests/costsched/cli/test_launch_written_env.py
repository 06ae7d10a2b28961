"""A SkyPilot task writes its secrets under envs as often as under secrets (`envs:
{WANDB_API_KEY: sk-...}`). Launched through the CLI on the local launcher from its folder
(`workdir: .`), the job's process gets the value in its environment, while every copy of
the task file in the job's code (the instance's, the packed archive's) has it as null: the
file launched, a task file beside it, and the task files beside a job whose own file
writes no env at all."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest

from tests.costsched.cli.test_launch_written_secret import _holds, _state

VALUE = "sk-SUPERSECRET-4242abcd"
TASK = f"""\
name: km-env
workdir: .
resources:
  accelerators: V100:1
envs:
  KM_SLEEP: "0"
  WANDB_API_KEY: {VALUE}   # from the W&B page
run: python check.py
"""
SIBLING_VALUE = "hf_sibling-Zq81x"
SIBLING = f"name: km-other\nworkdir: .\nenvs: {{HF_TOKEN: {SIBLING_VALUE}}}\nrun: x\n"
PLAIN = "name: km-plain\nworkdir: .\nthroughputs: {V100: 5}\nsteps: 10\nrun: python check.py\n"
# The job writes the digest of the value its environment holds.
CHECK = """import hashlib, os, pathlib
value = os.environ.get("WANDB_API_KEY", "")
pathlib.Path("seen.txt").write_text(hashlib.sha256(value.encode()).hexdigest())
"""


def _run(cli, file: str) -> dict:  # noqa: ANN001
    launched = cli("launch", file, "--launcher", "local", "--wait", "0", "--json")
    assert launched.exit_code == 0, launched.output
    [job] = json.loads(launched.stdout)
    deadline = time.monotonic() + 90  # a stop for a job that never ends, not a bound
    while (state := _state(cli, job["id"])) not in ("succeeded", "failed") \
            and time.monotonic() < deadline:
        time.sleep(0.3)
    assert state == "succeeded", cli("logs", str(job["id"])).output
    return job


@pytest.mark.parametrize("launched", ["task.yaml", "plain.yaml"])
def test_an_env_named_like_a_secret_reaches_the_job_and_no_packed_copy(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, launched: str  # noqa: ANN001
        ) -> None:
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    project = tmp_path / "proj"
    project.mkdir()
    (project / "check.py").write_text(CHECK)
    for name, text in (("task.yaml", TASK), ("sky-other.yaml", SIBLING),
                       ("plain.yaml", PLAIN)):
        (project / name).write_text(text)
    monkeypatch.chdir(project)

    _run(cli, launched)

    [seen] = list(tmp_path.rglob("seen.txt"))
    # The task's own job has the value in its environment; the other job has none.
    wanted = VALUE if launched == "task.yaml" else ""
    assert seen.read_text() == hashlib.sha256(wanted.encode()).hexdigest()
    code = seen.parent
    assert (code / "task.yaml").read_text() == TASK.replace(VALUE, "null")
    assert (code / "sky-other.yaml").read_text() == SIBLING.replace(SIBLING_VALUE, "null")
    assert (code / "plain.yaml").read_text() == PLAIN
    # Neither value is in the job's code: the instance's copy, the archive in the
    # checkpoint store and in the cache (the store keeps the launched job's envs).
    for secret in (VALUE.encode(), SIBLING_VALUE.encode()):
        found = [hit for f in sorted(tmp_path.rglob("*"))
                 if f.is_file() and f.parent != project and "sqlite" not in f.name
                 for hit in _holds(f.read_bytes(), secret, str(f.relative_to(tmp_path)))]
        assert found == [], secret
    assert any(p.name.endswith(".tar.gz") for p in tmp_path.rglob("code/*"))  # looked in it
