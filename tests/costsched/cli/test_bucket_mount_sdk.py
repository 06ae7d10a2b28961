"""A task whose bucket mount the local launcher cannot copy down on this machine, for want
of the bucket's client library, is refused by `launch` in one line naming the field, the
library and the extra that installs it, before anything is stored or charged; `plan` says
the same as a note. The library is made unimportable in this process (never uninstalled)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

TASK = ("name: houses\nresources: {{accelerators: T4:1}}\nfile_mounts: {{/data: {source}}}\n"
        "run: python -c 'print(1)'\ncostsched: {{model: ResNet-50 (batch size 64), "
        "steps: 100}}\n")
CASES = [("s3://my-house-data/prices", "boto3", "aws"),
         ("gs://my-house-data/prices", "google.cloud.storage", "gcp"),
         ("az://account/container", "azure.storage.blob", "azure")]


def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize(("source", "module", "extra"), CASES)
def test_a_bucket_mount_without_its_client_is_refused_before_anything_is_stored(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, module: str,
        extra: str) -> None:  # noqa: ANN001
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "local")
    monkeypatch.setenv("COSTSCHED_DAEMON_AUTOSTART", "false")
    monkeypatch.setitem(sys.modules, module, None)  # not installed, as far as imports go
    path = tmp_path / "houses.yaml"
    path.write_text(TASK.format(source=source))
    said = (f"{path}: field file_mounts./data: {source}: the local launcher copies it onto "
            f"this machine with {module}, which is not installed: pip install "
            f"'costsched[{extra}]'")
    launched = cli("launch", path, "--wait", "0")
    assert launched.exit_code == 2, launched.output
    assert _words(launched.output) == f"error: {said}"
    assert json.loads(cli("status", "--json").output)["jobs"] == []  # nothing stored
    assert not (tmp_path / "instances").exists() or not any((tmp_path / "instances").iterdir())
    planned = cli("plan", path)
    assert planned.exit_code == 0, planned.output
    notes = [_words(line) for line in planned.stderr.splitlines()
             if line.startswith("note: launch needs")]
    assert notes == [f"note: launch needs: {said}"], planned.stderr


def test_a_bucket_mount_whose_client_is_installed_is_not_refused(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    pytest.importorskip("boto3")
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "local")
    path = tmp_path / "houses.yaml"
    path.write_text(TASK.format(source="s3://my-house-data/prices"))
    planned = cli("plan", path)
    assert planned.exit_code == 0, planned.output
    assert "launch needs" not in planned.stderr
