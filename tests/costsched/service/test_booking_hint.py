"""`launch --book` of a job no stored booked capacity fits says what is missing (a capacity
block or reservation for its GPUs where it would run) and the command that collects it;
that command, run as printed (EC2 answering as documented, on no network), stores the
blocks on sale, and the next `launch --book` plans with them."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.booked_world import (
    FIXTURES,
    NOW,
    job_spec,
    store_prices,
    store_scarce_spot,
)


class _Ec2:
    """EC2 as `collect --booked` asks it: the fixture's blocks of the length asked for,
    no reservation held."""

    def __init__(self) -> None:
        self.blocks = json.loads((FIXTURES / "describe_capacity_block_offerings.json")
                                 .read_text())["CapacityBlockOfferings"]

    def describe_capacity_block_offerings(self, **asked: Any) -> dict:
        return {"CapacityBlockOfferings": [
            b for b in self.blocks if b["InstanceType"] == asked["InstanceType"]
            and b["CapacityBlockDurationHours"] == asked["CapacityDurationHours"]]}

    def describe_capacity_reservations(self, **_: Any) -> dict:
        return {"CapacityReservations": []}


def _collect_as_printed(command: str, db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from costsched.cli import app
    from costsched.cli import collect as cli_collect
    from costsched.service import booked_collect, values
    from price_collectors.runner import CloudSummary, RunSummary

    def prices(store: Any, request: Any, **_: Any) -> RunSummary:  # the prices: none new
        return RunSummary({c: CloudSummary(c) for c in request.clouds})

    ec2 = _Ec2()
    asked_at = values.as_time
    monkeypatch.setattr(cli_collect, "run_collection", prices)
    monkeypatch.setattr(booked_collect, "_ec2_clients", lambda: lambda region: ec2)
    monkeypatch.setattr(values, "as_time", lambda v=None, *a, **k: NOW if v is None
                        else asked_at(v, *a, **k))
    argv = shlex.split(command)
    assert argv[0] == "costsched", command
    ran = CliRunner().invoke(app, [*argv[1:], "--db", db], catch_exceptions=False)
    assert ran.exit_code == 0, ran.output
    assert "Booked capacity: 2 offerings found" in ran.output, ran.output


def test_the_refusals_collect_line_works_as_printed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = str(tmp_path / "s.sqlite")
    store = PriceStore(db)
    store_prices(store)
    store_scarce_spot(store)
    spec = job_spec(tmp_path)
    with pytest.raises(InvalidInput) as refused:
        service.launch(store, spec, launcher=FakeLauncher(), at=NOW, book=lambda plans: True,
                       checkpoint_root=str(tmp_path / "ckpt"))
    said = str(refused.value)
    assert "no capacity block or reservation known for H100:8 in aws us-east-1" in said, said
    found = re.search(r"`(costsched collect [^`]+)`", said)
    assert found is not None, said
    _collect_as_printed(found.group(1), db, monkeypatch)

    asked = []
    with pytest.raises(InvalidInput, match="not booked: nothing bought, nothing launched"):
        service.launch(store, spec, launcher=FakeLauncher(), at=NOW,
                       book=lambda plans: asked.append(plans) and False,
                       checkpoint_root=str(tmp_path / "ckpt"))
    store.dispose()
    assert asked and asked[0].best.booked is not None  # planned with a block, asked first


def test_a_job_of_booked_markets_alone_with_none_known_is_refused_with_plans_cause(
        tmp_path: Path) -> None:
    """Its markets are booked capacity alone and none is stored: the refusal says what
    `plan` says (no offering priced has those markets, and the collect that gets them),
    never that the job may run on no cloud that sells it."""
    store = PriceStore(str(tmp_path / "s.sqlite"))
    store_prices(store)
    path = job_spec(tmp_path)
    spec = yaml.safe_load(path.read_text())
    spec["constraints"]["markets"] = ["capacity-block", "reservation"]
    path.write_text(yaml.safe_dump(spec))
    try:
        with pytest.raises(InvalidInput) as refused:
            service.launch(store, path, launcher=FakeLauncher(), at=NOW,
                           book=lambda plans: True, checkpoint_root=str(tmp_path / "ckpt"))
    finally:
        store.dispose()
    said = str(refused.value)
    assert "no cloud that sells it" not in said, said
    assert "has market capacity-block, reservation" in said, said
    assert "`costsched collect --cloud aws --region us-east-1 --booked --gpu H100" in said, said
    assert said.count("job h100-train") + said.count("job 'h100-train'") == 1, said
