"""`costsched plan` with capacity booked ahead: capacity block offerings imported from a
DescribeCapacityBlockOfferings body, compared with spot with on-demand fallback and
on-demand alone, in the table and the JSON."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from costsched.store import PriceStore
from tests.costsched.service.booked_world import (
    FIXTURES,
    NOW,
    job_spec,
    store_prices,
    store_scarce_spot,
)

AT = NOW.strftime("%Y-%m-%dT%H:%MZ")


@pytest.fixture(autouse=True)
def _aws_launcher(monkeypatch: pytest.MonkeyPatch) -> None:
    """Capacity blocks are bought on aws: its launcher configured, whose instances boot
    (the local launcher boots none, so its spot recoveries cost no restart)."""
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "aws")


def _world(cli, tmp_path: Path, db_path: Path) -> Path:  # noqa: ANN001
    store = PriceStore(str(db_path))
    store_prices(store)
    store_scarce_spot(store)
    store.dispose()
    body = tmp_path / "offerings.json"
    body.write_text((FIXTURES / "describe_capacity_block_offerings.json").read_text())
    seen = NOW.timestamp() - 300  # saved five minutes before the plan: its age
    os.utime(body, (seen, seen))
    result = cli("prices", "import", str(body))
    assert result.exit_code == 0, result.output
    assert "Booked capacity: 1 file, 2 offerings, 2 new" in result.stdout
    return job_spec(tmp_path)


def test_the_plan_table_compares_the_block_with_spot_and_on_demand(
        cli, tmp_path: Path, db_path: Path) -> None:  # noqa: ANN001
    spec = _world(cli, tmp_path, db_path)
    result = cli("plan", str(spec), "--at", AT, "--wide")
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())  # the table's cells wrap: words in order
    assert "with capacity booked ahead" in out
    for name in ("on-demand only", "spot with on-demand fallback",
                 "* capacity block p5.48xlarge us-east-1a", "12-01 11:30 for 72 h"):
        assert name in out, out
    # The chosen plan, its parts and their dollars (its spot part before the block pays its
    # start, as the rankings do).
    assert "capacity block p5.48xlarge us-east-1a 12-02 11:30 for 48 h, $2,369.87 " \
        "expected" in out
    for part in ("spot │ 12-01 08:00 │ 12-02 11:30", "on-demand │ 12-01 08:00",
                 "capacity-block │ 12-02 11:30 │ 12-04 10:00"):
        assert part in out
    assert "$1,887.84 upfront" in out and "before the capacity block starts" in out
    # the launch that buys it, as typed: its file (the configured launcher, aws, buys blocks)
    assert "saves $" in out and f"`costsched launch {spec} --book` buys it " \
        "(asked first)" in out, out
    assert "│ 5 min │" in out  # the offer's age: seen five minutes before


def test_the_plan_json_has_each_part_and_the_comparison(
        cli, tmp_path: Path, db_path: Path) -> None:  # noqa: ANN001
    spec = _world(cli, tmp_path, db_path)
    result = cli("plan", str(spec), "--at", AT, "--json")
    assert result.exit_code == 0, result.output
    (job,) = json.loads(result.stdout)["jobs"]
    booked = job["booked"]
    plans = {p["name"]: p for p in [booked["on_demand"], booked["spot"], *booked["booked"]]}
    best = next(p for p in booked["booked"] if p["name"] == booked["best"])
    assert best["booked"]["offering_id"] == "cb-0123456789abcdef0"
    assert best["booked"]["upfront_usd"] == 1887.84
    assert best["usd"] < min(plans["on-demand only"]["usd"],
                             plans["spot with on-demand fallback"]["usd"])
    assert booked["saves_usd"] > 0 and booked["baseline"] == "spot with on-demand fallback"
    assert [p["kind"] for p in best["parts"]] == ["spot", "on_demand", "capacity_block"]
    assert all(p["why"] for p in best["parts"])
    assert abs(sum(p["usd"] for p in best["parts"]) - best["usd"]) < 1e-6


def test_without_booked_offerings_the_plan_is_as_before(
        cli, tmp_path: Path, db_path: Path) -> None:  # noqa: ANN001
    store = PriceStore(str(db_path))
    store_prices(store)
    store.dispose()
    result = cli("plan", str(job_spec(tmp_path)), "--at", AT, "--json")
    assert json.loads(result.stdout)["jobs"][0]["booked"] is None
    result = cli("plan", str(job_spec(tmp_path)), "--at", AT)
    assert "booked" not in result.stdout


def test_a_job_of_booked_markets_alone_is_told_how_to_get_them_and_the_hint_works(
        cli, tmp_path: Path, db_path: Path) -> None:  # noqa: ANN001
    """Its "no plan" spells the markets as the file does, names the collect and the
    import that get booked offerings, and that they are weighed beside spot or on-demand;
    followed as printed (the saved answer imported, spot and on-demand allowed), the
    plan weighs the blocks."""
    import re
    import shlex

    import yaml

    store = PriceStore(str(db_path))
    store_prices(store)
    store_scarce_spot(store)
    store.dispose()
    spec = job_spec(tmp_path)
    doc = yaml.safe_load(spec.read_text())
    doc["constraints"]["markets"] = ["capacity-block", "reservation"]
    spec.write_text(yaml.safe_dump(doc))
    refused = cli("plan", str(spec))
    assert refused.exit_code == 1, refused.output
    line = " ".join(refused.stderr.split())
    assert "has market capacity-block, reservation; priced: on-demand, spot; " in line, line
    assert ("`costsched collect --cloud aws --region us-east-1 --booked --gpu H100` collects "
            "the capacity blocks on sale and the reservations held") in line, line
    said = re.search(r"`costsched (prices import FILE)` reads a saved `aws ec2 "
                     r"describe-capacity-block-offerings` answer\); plan weighs capacity "
                     r"blocks and reservations beside spot or on-demand, which "
                     r"constraints\.markets leaves out; change constraints\.markets in ", line)
    assert said, line
    body = tmp_path / "offerings.json"
    body.write_text((FIXTURES / "describe_capacity_block_offerings.json").read_text())
    seen = NOW.timestamp() - 300  # saved before the plan's time
    os.utime(body, (seen, seen))
    imported = cli(*shlex.split(said[1].replace("FILE", shlex.quote(str(body)))))
    assert imported.exit_code == 0, imported.output
    doc["constraints"]["markets"] = ["capacity-block", "reservation", "spot", "on-demand"]
    spec.write_text(yaml.safe_dump(doc))
    planned = cli("plan", str(spec), "--at", AT, "--wide")
    assert planned.exit_code == 0, planned.output
    out = " ".join(planned.stdout.split())
    assert "with capacity booked ahead" in out and "* capacity block p5.48xlarge" in out, out


class _Ec2:
    """EC2 of us-east-1 as `collect --booked` asks it: the blocks of the saved answer for
    p5.48xlarge (each of its lengths asked), no reservation held."""

    def describe_capacity_block_offerings(self, **request) -> dict:  # noqa: ANN003
        body = json.loads((FIXTURES / "describe_capacity_block_offerings.json").read_text())
        return {"CapacityBlockOfferings": [
            o for o in body["CapacityBlockOfferings"]
            if o["InstanceType"] == request["InstanceType"]
            and o["CapacityBlockDurationHours"] == request["CapacityDurationHours"]]}

    def describe_capacity_reservations(self, **_request) -> dict:  # noqa: ANN003
        return {"CapacityReservations": []}


def test_the_collect_line_run_as_printed_stores_the_blocks(
        cli, tmp_path: Path, db_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """The booked "no plan"'s collect line, run as printed (EC2 and its price list
    answered here), stores the blocks on sale."""
    import re
    import shlex

    import yaml

    import costsched.service.booked_collect
    import price_collectors.aws
    from tests.price_collectors.aws_fake import FakeAws

    clients = FakeAws(spot={"us-east-1": []}).clients()
    monkeypatch.setattr(price_collectors.aws, "AwsClients", lambda: clients)
    monkeypatch.setattr(costsched.service.booked_collect, "_ec2_clients",
                        lambda: lambda region: _Ec2())
    store = PriceStore(str(db_path))
    store_prices(store)
    store.dispose()
    spec = job_spec(tmp_path)
    doc = yaml.safe_load(spec.read_text())
    doc["constraints"]["markets"] = ["capacity-block"]
    spec.write_text(yaml.safe_dump(doc))
    line = " ".join(cli("plan", str(spec)).stderr.split())
    said = re.search(r"`costsched (collect [^`]+)` collects the capacity blocks on sale", line)
    assert said, line
    assert shlex.split(said[1]) == ["collect", "--cloud", "aws", "--region", "us-east-1",
                                    "--booked", "--gpu", "H100"]
    collected = cli(*shlex.split(said[1]), "--json")
    assert collected.exit_code == 0, collected.output
    assert json.loads(collected.stdout)["booked"]["added"] == 2  # the two blocks on sale


@pytest.mark.parametrize(("configured", "typed"), [
    ("aws", "costsched launch h.yaml --book"),
    ("local", "costsched launch h.yaml --book --launcher aws"),  # local buys no block
    ("gcp", "costsched launch h.yaml --book --launcher aws")])
def test_the_launch_that_buys_a_block_names_the_launcher_that_buys_it(
        configured: str, typed: str) -> None:
    from types import SimpleNamespace

    from costsched.cli.booked import _buying

    block = SimpleNamespace(booked=SimpleNamespace(
        offering=SimpleNamespace(cloud="aws", market="capacity_block")))
    assert _buying(block, "h.yaml", configured) == typed
