"""A value given at launch with `--env NAME=VALUE`, NAME named like a secret (the rule by
which costsched masks what it prints, `redact.is_secret_name`), is a secret costsched
knows for the launch: a file of the job's workdir that holds it is left out of the packed
code, with one line that names the file and never the value. The job still gets the value
in its environment; the value is in no copy of the code (the instance's, the archive in
the checkpoint store and in the cache) and in nothing the commands print. (The store keeps
it with the job, as every env's value, as the launch's note says.)"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest

from tests.costsched.cli.test_launch_written_secret import _holds, _state

VALUE = "wb-GIVEN-9931-kq7Zx"
TASK = """\
name: km-given
workdir: .
resources:
  accelerators: V100:1
envs:
  WANDB_API_KEY:
run: python check.py
"""
CHECK = """import hashlib, os, pathlib
value = os.environ.get("WANDB_API_KEY", "")
pathlib.Path("seen.txt").write_text(hashlib.sha256(value.encode()).hexdigest())
"""


def test_a_workdir_file_holding_a_secret_named_env_given_at_launch_is_left_out(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    project = tmp_path / "proj"
    project.mkdir()
    (project / "check.py").write_text(CHECK)
    (project / "task.yaml").write_text(TASK)
    notes = project / "notes.txt"  # the user's own note of the key
    notes.write_text(f"wandb key: {VALUE}\n")
    monkeypatch.chdir(project)

    launched = cli("launch", "task.yaml", "--launcher", "local", "--env",
                   f"WANDB_API_KEY={VALUE}", "--wait", "0", "--json")
    assert launched.exit_code == 0, launched.output
    # (the warning reaches stderr through logging: here the records it would print)
    said = [r.getMessage() for r in caplog.records if "notes.txt" in r.getMessage()]
    assert said == [f"workdir {project}: notes.txt left out of the job's code: it holds a "
                    "secret's value, which would be stored with the code"], caplog.text
    assert VALUE not in caplog.text
    [job] = json.loads(launched.stdout)
    deadline = time.monotonic() + 90  # a stop for a job that never ends, not a bound
    while (state := _state(cli, job["id"])) not in ("succeeded", "failed") \
            and time.monotonic() < deadline:
        time.sleep(0.3)
    logs = cli("logs", str(job["id"]))
    assert state == "succeeded", logs.output

    [seen] = list(tmp_path.rglob("seen.txt"))  # the job had the value
    assert seen.read_text() == hashlib.sha256(VALUE.encode()).hexdigest()
    assert not (seen.parent / "notes.txt").exists()
    assert (seen.parent / "check.py").read_text() == CHECK
    # Nowhere but in the user's own file and the store (which keeps every env's value).
    found = [hit for f in sorted(tmp_path.rglob("*"))
             if f.is_file() and f != notes and "sqlite" not in f.name
             for hit in _holds(f.read_bytes(), VALUE.encode(), str(f.relative_to(tmp_path)))]
    assert found == []
    assert any(p.name.endswith(".tar.gz") for p in tmp_path.rglob("code/*"))  # looked in it
    for shown in (launched.output, logs.output, cli("status").output,
                  cli("status", str(job["id"])).output):
        assert VALUE not in shown
