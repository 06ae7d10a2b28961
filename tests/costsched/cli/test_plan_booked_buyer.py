"""`costsched plan` with the local launcher configured (the default) compares a capacity
block with spot and on-demand as on aws, the launcher that buys it: the same figures as
with aws configured, and one line that says for whom they are priced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costsched.store import PriceStore
from tests.costsched.service.booked_world import NOW, job_spec, world

AT = NOW.strftime("%Y-%m-%dT%H:%MZ")
SAID = ("priced as on aws, the launcher that buys the capacity blocks: restart 0.3611 h: "
        "10 min boot and set-up ([migration] restart_minutes) + 5 min warm-up ([migration] "
        "warmup_minutes) + 6.667 min to copy the 50 GB checkpoint at 1 Gbit/s ([migration] "
        "transfer_gbps)")


def _plan(cli, db_path: Path, spec: Path, launcher: str,  # noqa: ANN001
          monkeypatch: pytest.MonkeyPatch, *options: str) -> str:
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", launcher)
    result = cli("plan", str(spec), "--at", AT, *options)
    assert result.exit_code == 0, result.output
    return result.stdout


def _spec(tmp_path: Path, db_path: Path) -> Path:
    world(PriceStore(str(db_path))).dispose()
    return job_spec(tmp_path)


def test_the_comparison_on_the_local_launcher_is_the_one_on_aws(
        cli, tmp_path: Path, db_path: Path,  # noqa: ANN001
        monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _spec(tmp_path, db_path)
    on_aws, on_local = (json.loads(_plan(cli, db_path, spec, launcher, monkeypatch,
                                         "--json"))["jobs"][0]["booked"]
                        for launcher in ("aws", "local"))
    assert on_aws["priced_as"] is None and on_local["priced_as"] == SAID

    def figures(booked: dict) -> dict:
        return {p["name"]: p["usd"] for p in [booked["on_demand"], booked["spot"],
                                              *booked["booked"]]}

    assert figures(on_local) == figures(on_aws)
    assert on_local["best"] == on_aws["best"] and on_local["best"].startswith("capacity block")
    assert on_local["saves_usd"] == on_aws["saves_usd"]


def test_the_plan_table_says_for_whom_it_is_priced(
        cli, tmp_path: Path, db_path: Path,  # noqa: ANN001
        monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _spec(tmp_path, db_path)
    out = " ".join(_plan(cli, db_path, spec, "local", monkeypatch, "--wide").split())
    assert SAID in out, out
    # the figures aws has (tests/costsched/cli/test_plan_booked.py), and the launch that
    # buys the block on aws
    assert "capacity block p5.48xlarge us-east-1a 12-02 11:30 for 48 h, $2,369.87 " \
        "expected" in out, out
    assert f"`costsched launch {spec} --book --launcher aws` buys it" in out, out
    on_aws = " ".join(_plan(cli, db_path, spec, "aws", monkeypatch, "--wide").split())
    assert "priced as on" not in on_aws and "$2,369.87 expected" in on_aws, on_aws
