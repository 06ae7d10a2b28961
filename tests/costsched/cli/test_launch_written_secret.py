"""A SkyPilot task that writes a secret's value and sits in its own workdir (`workdir: .`,
the usual layout), launched through the CLI on the local launcher: the job gets the value
in its environment, and the value is in no stored byte: not in the packed code (the task
file is packed with the value as null, the rest of it as written), its cached archive, the
checkpoint store, the instance's copy of the code, the store or the logs. Another task file
beside it (sky-prod.yaml beside sky.yaml) is packed with its own value as null too."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
import time
from pathlib import Path

import pytest

VALUE = "inline-SECRET-4242-Vq7"
TASK = f"""\
name: km-inline
workdir: .
resources:
  accelerators: V100:1
secrets:
  KM_TOKEN: {VALUE}   # the file's own value
  OTHER:
envs:
  KM_SLEEP: "0"
run: python check.py
"""
PROD_VALUE = "hf_literalProd-8Kx2"
PROD = f"name: km-prod\nworkdir: .\nsecrets:\n  HF_TOKEN: {PROD_VALUE}\nrun: python check.py\n"
# The job writes the digest of the value its environment holds: the run command and the
# script never hold the value itself.
CHECK = """import hashlib, os, pathlib
value = os.environ.get("KM_TOKEN", "")
pathlib.Path("seen.txt").write_text(hashlib.sha256(value.encode()).hexdigest())
"""


def _state(cli, job_id: int) -> str:  # noqa: ANN001
    shown = json.loads(cli("status", str(job_id), "--json").stdout)
    return (shown["jobs"] if isinstance(shown, dict) else shown)[0]["state"]


def _holds(data: bytes, secret: bytes, name: str) -> list[str]:
    """Where `secret` is in `data` (a file's bytes), looking inside gzip and tar archives."""
    found = [name] if secret in data else []
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError):
            return found
        found += [f"{name} (unzipped)"] if secret in data else []
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for member in tar.getmembers():
                body = tar.extractfile(member) if member.isfile() else None
                if body is not None:
                    found += _holds(body.read(), secret, f"{name}:{member.name}")
    except tarfile.TarError:
        pass
    return found


def test_a_secret_written_in_a_task_file_inside_its_workdir_is_never_stored(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.delenv("KM_TOKEN", raising=False)
    project = tmp_path / "proj"
    project.mkdir()
    (project / "check.py").write_text(CHECK)
    task = project / "task.yaml"
    task.write_text(TASK)
    prod = project / "sky-prod.yaml"  # not launched: its value is never stored either
    prod.write_text(PROD)
    monkeypatch.chdir(project)

    launched = cli("launch", "task.yaml", "--launcher", "local", "--secret", "OTHER=other-7f3",
                   "--wait", "0", "--json")
    assert launched.exit_code == 0, launched.output
    [job] = json.loads(launched.stdout)
    deadline = time.monotonic() + 90  # a stop for a job that never ends, not a bound
    while (state := _state(cli, job["id"])) not in ("succeeded", "failed") \
            and time.monotonic() < deadline:
        time.sleep(0.3)
    logs = cli("logs", str(job["id"]))
    assert state == "succeeded", logs.output

    # The job had the value in its environment.
    [seen] = list(tmp_path.rglob("seen.txt"))
    assert seen.read_text() == hashlib.sha256(VALUE.encode()).hexdigest()
    # Its copy of the task file: the value is null, every other byte as written.
    code = seen.parent
    assert (code / "task.yaml").read_text() == TASK.replace(VALUE, "null")
    assert (code / "check.py").read_text() == CHECK
    assert (code / "sky-prod.yaml").read_text() == PROD.replace(PROD_VALUE, "null")
    # Each value is nowhere but in the user's own task file: not in the packed code (in the
    # checkpoint store and the cache), the instance's files, the store or the logs.
    for secret, own in ((VALUE.encode(), task), (PROD_VALUE.encode(), prod)):
        found = [hit for f in sorted(tmp_path.rglob("*")) if f.is_file() and f != own
                 for hit in _holds(f.read_bytes(), secret, str(f.relative_to(tmp_path)))]
        assert found == [], secret
    assert any(p.name.endswith(".tar.gz") for p in tmp_path.rglob("code/*"))  # looked in it
    for said in (launched.output, logs.output, cli("status").output):
        assert VALUE not in said and PROD_VALUE not in said
