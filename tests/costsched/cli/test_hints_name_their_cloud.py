"""A hint about a price or a quota names the cloud it is about, whichever clouds' SDKs this
machine has: with only azure's extra installed, stale gcp prices and unread aws and gcp
quotas are hinted as `pip install 'costsched[gcp]'`, then `costsched collect --cloud gcp`
(and the quotas' refresh of aws and gcp), never as a command that reads azure. Each hint,
run as printed, reads the clouds it names: first asking for the install it put first, then,
once installed, reading those clouds and no other (offline: no credentials, the suite's
stubs for the quota readers)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.store import PriceStore
from tests.costsched.cli.test_hints_work_as_printed import (
    HINT,
    MISSING,
    ORIGINAL,
    TASK,
    _extras,
)
from tests.costsched.cli.test_status_amounts import ran
from tests.costsched.clouds.test_hints import without
from tests.costsched.test_costs import GCP_ZONE_A, at, observe

# A gcp L4 price two months old at the plan's time, an aws A10G one a day old.
PRICES = """\
cloud,region,zone,instance_type,market,os,gpu_model,gpu_count,vcpus,memory_gb,usd_per_hour,\
effective_at,source
gcp,us-central1,us-central1-a,g2-standard-4,spot,linux,L4,1,4,16.0,0.05,2026-01-01T00:00:00Z,t
aws,us-east-1,us-east-1a,g5.xlarge,spot,linux,A10G,1,4,16.0,0.40,2026-03-01T00:00:00Z,t
"""
PLAN_AT = "2026-03-02"
CLOUD = re.compile(r"--cloud (\w+)")


def _run(*argv: str) -> str:
    result = CliRunner().invoke(app, list(argv), env={"COLUMNS": "400"},
                                catch_exceptions=False)
    return " ".join(result.output.split())


def _said(text: str, about: str) -> tuple[str, set[str], set[str]]:
    """The one hint in `text`'s sentence containing `about`: (command, extras installed
    first, clouds named)."""
    [sentence] = [s for s in re.split(r"(?<=\.) |note: ", text) if about in s]
    [(installed, command)] = HINT.findall(sentence)
    return command, _extras(installed), set(CLOUD.findall(command))


@pytest.fixture()
def stale_gcp(tmp_path: Path) -> tuple[str, Path]:
    """A store with the prices above and a job that ran on gcp at a price 120 days old;
    the task file of the plan."""
    db = str(tmp_path / "store.sqlite")
    prices = tmp_path / "prices.csv"
    prices.write_text(PRICES)
    assert CliRunner().invoke(app, ["prices", "import", str(prices), "--new-store", "--db",
                                    db]).exit_code == 0
    store = PriceStore(db)
    observe(store, GCP_ZONE_A, [(1 - 24 * 120, 0.9)])
    ran(store, tmp_path, "moons", [(GCP_ZONE_A, 0.9, "launch", 600)])
    store.dispose()
    task = tmp_path / "sky.yaml"
    task.write_text(TASK)
    return db, task


def _hints(db: str, task: Path) -> dict[str, tuple[str, set[str], set[str]]]:
    """Each hint of a price or quota, by what it is about: (command, installs, clouds)."""
    plan = _run("plan", str(task), "--at", PLAN_AT, "--top", "4", "--db", db)
    explain = _run("plan", str(task), "--at", PLAN_AT, "--explain", "1", "--db", db)
    status = _run("status", "--db", db, "--no-reconcile")
    report = _run("report", "--db", db, "--until", at(3).isoformat())
    spot = _run("prices", "show", "--db", db, "--cloud", "gcp", "--gpu", "L4", "--at",
                PLAN_AT)
    return {"plan's stale prices": _said(plan, "older than 7 days"),
            "plan's quotas": _said(plan, "quotas not known"),
            "plan --explain's cost": _said(explain, "expected cost ="),
            "status's charges": _said(status, "the costs above are estimates"),
            "report's charges": _said(report, "the spend and savings are estimates"),
            "prices show's spot prices": _said(spot, "last observed more than")}


def test_each_hint_names_the_cloud_it_is_about_and_installs_its_sdk(
        stale_gcp: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    db, task = stale_gcp
    with monkeypatch.context() as only_azure:
        without(only_azure, "aws", "gcp")
        hints = _hints(db, task)
    for about, (command, installed, clouds) in hints.items():
        expected = {"aws", "gcp"} if about == "plan's quotas" else {"gcp"}
        assert clouds == expected, (about, command)  # never azure: its SDK is here
        assert installed == expected, (about, command)
    assert hints["plan's quotas"][0] == "costsched quotas --refresh --cloud aws --cloud gcp"
    assert hints["plan's stale prices"][0] == "costsched collect --cloud gcp"


def test_each_hint_run_as_printed_reads_the_clouds_it_names(
        stale_gcp: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the install, each command asks for exactly the one its hint put first; after
    it, each reads its clouds and no other (each says why it could not, by cloud)."""
    db, task = stale_gcp
    with monkeypatch.context() as only_azure:
        without(only_azure, "aws", "gcp")
        hints = _hints(db, task)
        for owner, name, reader in ORIGINAL:  # (as they are: each stops at its SDK)
            only_azure.setattr(owner, name, reader)
        for command, installed, _ in hints.values():
            said = _run(*shlex.split(command)[1:], "--db", db)
            asked = set().union(*map(_extras, MISSING.findall(said)))
            assert asked == installed, (command, said)
    for command, _, clouds in hints.values():  # installed now (and the readers stubbed)
        said = _run(*shlex.split(command)[1:], "--db", db)
        assert set(re.findall(r"\b(aws|gcp|azure)\b", said)) == clouds, (command, said)
