"""On a machine without the clouds' SDKs, every `costsched collect`, `quotas --refresh` and
`catalog refresh` a command prints as a hint names the install it needs first: run as
printed, none fails for an SDK it did not name. And a collect that could read no cloud
for want of their SDKs ends in one line saying so, and what to install."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import price_collectors.discovery
import price_collectors.quotas_aws
import price_collectors.quotas_azure
import price_collectors.quotas_gcp
from costsched.cli import app
from tests.costsched.clouds.test_hints import without

# The clouds' readers as they are (taken before the suite's fixture stubs them so that no
# test reads a cloud): with the SDKs blocked, each stops at its SDK's import, before any
# call, as it would on a machine without them.
READERS = [(price_collectors.discovery, "_aws_clients"), (price_collectors.discovery,
                                                          "_gcp_client"),
           (price_collectors.discovery, "_azure_session"),
           (price_collectors.quotas_aws, "_default_session"),
           (price_collectors.quotas_gcp.GcpQuotaReader, "_default_clients"),
           (price_collectors.quotas_azure, "_default_clients")]
ORIGINAL = [(owner, name, getattr(owner, name)) for owner, name in READERS]

TASK = """\
name: mf
resources:
  accelerators: {L4: 1, A10G: 1}
  use_spot: true
run: python train.py
costsched:
  throughputs: {L4: 35, A10G: 40}
  steps: 4000
"""
HINT = re.compile(r"(?:`pip install '(costsched\[[a-z,]+\])'`, then )?"
                  r"`(costsched (?:collect|quotas --refresh|catalog refresh)[^`]*)`")
MISSING = re.compile(r"pip install '(costsched\[[a-z,]+\])'")


def _run(*argv: str) -> str:
    result = CliRunner().invoke(app, list(argv), catch_exceptions=False)
    return " ".join(result.output.split())


def _extras(installed: str) -> set[str]:
    return set(installed.removeprefix("costsched[").removesuffix("]").split(",")) \
        if installed else set()


def _hints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, set[str]]:
    """Every hint the everyday commands print: command -> the extras installed first."""
    task = tmp_path / "sky.yaml"
    task.write_text(TASK)
    monkeypatch.setenv("COSTSCHED_DB", str(tmp_path / "none-yet.sqlite"))
    printed = [_run("gpus"), _run("gpus", "L40"), _run("check"), _run("quotas"),
               _run("plan", str(task))]
    found: dict[str, set[str]] = {}
    for text in printed:
        assert "pip install 'costsched'" not in text, text  # (an extra lost to markup)
        for installed, command in HINT.findall(text):
            found.setdefault(command, set()).update(_extras(installed))
    return found


def test_each_hint_run_as_printed_misses_no_sdk_it_did_not_install(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    without(monkeypatch)
    found = _hints(tmp_path, monkeypatch)
    commands = {c.split(" --")[0] for c in found}
    assert {"costsched collect", "costsched quotas", "costsched catalog refresh"} <= commands, \
        found
    for owner, name, reader in ORIGINAL:
        monkeypatch.setattr(owner, name, reader)
    for command, installed in found.items():
        said = _run(*shlex.split(command)[1:], "--db", str(tmp_path / "store.sqlite"),
                    "--new-store") \
            if command.startswith("costsched collect") else _run(*shlex.split(command)[1:])
        needed = set().union(*map(_extras, MISSING.findall(said))) if MISSING.search(said) \
            else set()
        assert needed, (command, said)  # (the SDKs are missing: each cloud says so)
        assert needed <= installed, (command, installed, said)


def test_a_collect_of_no_cloud_with_its_sdk_ends_in_what_to_install(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    without(monkeypatch)
    db = str(tmp_path / "store.sqlite")
    result = CliRunner().invoke(app, ["collect", "--new-store", "--db", db])
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines()[-1] == (
        "error: nothing collected: no SDK of aws, gcp or azure is installed here; `pip "
        "install 'costsched[aws,azure,gcp]'`, then `costsched collect` collects")
    one = CliRunner().invoke(app, ["collect", "--cloud", "aws", "--gpu", "H100", "--db", db,
                                   "--new-store"])
    assert one.exit_code == 1, one.output
    assert one.stderr.splitlines()[-1] == (
        "error: nothing collected: no SDK of aws is installed here; `pip install "
        "'costsched[aws]'`, then `costsched collect --cloud aws --gpu H100` collects")


def test_a_collect_that_failed_otherwise_adds_no_such_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No credentials is not a missing SDK: the cloud's own line says why, alone."""
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY", raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    if "boto3" not in sys.modules:
        pytest.importorskip("boto3")
    result = CliRunner().invoke(app, ["collect", "--cloud", "aws", "--new-store", "--db",
                                      str(tmp_path / "store.sqlite")])
    assert result.exit_code == 1, result.output
    assert "nothing collected" not in result.output
