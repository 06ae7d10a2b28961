"""A spot price imported for one zone (a partial update: EC2's DescribeSpotPriceHistory of
us-east-1a) is one more offering beside its region's bundled price, never in its place: a
job that runs on the region's offering keeps the price it is billed at, `plan` lists both,
and the decider weighs the cheaper zone against it. The CLI over an in-memory launcher,
SQLite store."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched.cli import jobs as cli_jobs
from costsched.prices import prices_at
from costsched.service import jobs as service
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher

REGION = ("aws", "us-east-1", "", "g5.xlarge", "spot")
ZONE = ("aws", "us-east-1", "us-east-1a", "g5.xlarge", "spot")
ZONE_USD = 0.1


def _spot_history(tmp_path: Path, at: datetime) -> Path:
    """A DescribeSpotPriceHistory response body as EC2 returns it: one zone's price."""
    body = {"SpotPriceHistory": [{
        "AvailabilityZone": "us-east-1a", "InstanceType": "g5.xlarge",
        "ProductDescription": "Linux/UNIX", "SpotPrice": f"{ZONE_USD:.6f}",
        "Timestamp": at.strftime("%Y-%m-%dT%H:%M:%S+00:00")}]}
    path = tmp_path / "spotnow.json"
    path.write_text(json.dumps(body))
    return path


def _spec(tmp_path: Path, steps: int) -> Path:
    spec = {"name": "pricemove", "run": "true", "throughputs": {"A10G": 40}, "steps": steps,
            "checkpoint": {"interval_minutes": 30, "size_gb": 0.001},
            "constraints": {"markets": ["spot"], "gpu_models": ["A10G"], "clouds": ["aws"],
                            "regions": ["us-east-1"]}}
    path = tmp_path / "pricemove.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def _key(row: object) -> tuple:
    return tuple(getattr(row, c) for c in ("cloud", "region", "zone", "instance_type",
                                           "market"))


@pytest.fixture()
def placed(cli, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN001
    """A long A10G spot job placed on the region's bundled price, then one zone's spot
    price imported (read as a partial update)."""
    store = PriceStore(str(db_path))
    launcher = FakeLauncher()
    monkeypatch.setattr(cli_jobs, "job_launcher", lambda store, job: launcher)
    [job] = service.launch(store, _spec(tmp_path, steps=6_000_000), launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    [placement] = store.jobs.placements(job.id).itertuples()
    assert _key(placement) == REGION
    before = prices_at(store, datetime.now(timezone.utc), markets=["spot"])
    [region_usd] = before[[_key(r) == REGION for r in before.itertuples()]]["usd_per_hour"]
    done = cli("prices", "import",
               _spot_history(tmp_path, datetime.now(timezone.utc) - timedelta(minutes=5)))
    assert done.exit_code == 0, done.output
    assert "partial update" in " ".join(done.output.split())
    yield cli, store, job, region_usd
    store.dispose()


def test_the_region_keeps_its_price_beside_the_imported_zone(placed) -> None:  # noqa: ANN001
    cli, store, job, region_usd = placed
    frame = prices_at(store, datetime.now(timezone.utc), markets=["spot"],
                      instance_types=["g5.xlarge"], regions=["us-east-1"])
    got = {_key(r): (r.usd_per_hour, str(r.source)) for r in frame.itertuples()}
    assert set(got) == {REGION, ZONE}  # one price per offering
    assert got[REGION][0] == pytest.approx(region_usd)  # the bundled one, as billed
    assert got[REGION][1].startswith("catalog")
    assert got[ZONE][0] == pytest.approx(ZONE_USD)
    planned = cli("plan", _spec(Path(store.where).parent, steps=6_000_000), "--json")
    assert planned.exit_code == 0, planned.output
    [ranking] = json.loads(planned.stdout)["rankings"]
    listed = [(r["offering"], r["usd_per_hour"]) for r in ranking["ranking"]
              if r["instance_type"] == "g5.xlarge"]
    assert listed == [("aws us-east-1a g5.xlarge spot", pytest.approx(ZONE_USD)),
                      ("aws us-east-1 g5.xlarge spot", pytest.approx(region_usd))]
    # `gpus`, which reads the store on its own quick path, lists the same two
    gpus = cli("gpus", "A10G", "--json")
    assert gpus.exit_code == 0, gpus.output
    rows = sorted((r["zone"], r["usd_per_hour"]) for r in json.loads(gpus.stdout)["rows"]
                  if (r["region"], r["instance_type"], r["market"]) == (
                      "us-east-1", "g5.xlarge", "spot"))
    assert rows == [("", pytest.approx(region_usd)), ("us-east-1a", pytest.approx(ZONE_USD))]


def test_the_decider_moves_to_the_cheaper_zone_from_the_region_price(placed) -> None:  # noqa: ANN001
    cli, store, job, region_usd = placed
    said = cli("migrate", job.name, "--dry-run")
    assert said.exit_code == 0, said.output
    out = " ".join(said.stdout.split())
    assert "no price is known now" not in out
    assert " - " not in out and "(saves -)" not in out
    amounts = [float(a) for a in re.findall(r"\$(\d+\.\d+) to finish here", out)]
    there = re.search(r"\$(\d+\.\d+) (?:there|on aws us-east-1a g5\.xlarge spot) including "
                      r"the move", out)
    assert amounts and there, out
    # 6,000,000 steps at 40/s: 41.7 h, at the region's price here, the zone's there
    assert amounts[0] == pytest.approx(6_000_000 / 40 / 3600 * region_usd, rel=0.2)
    assert float(there.group(1)) < amounts[0] / 2
    assert re.match(rf"job {job.id} \(pricemove\): would move: \$[\d.]+ to finish here, "
                    r"\$[\d.]+ on aws us-east-1a g5\.xlarge spot including the move of ", out), out
    saves = re.search(r"\(saves \$(\d+\.\d+)\)", out)
    assert saves and float(saves.group(1)) == pytest.approx(amounts[0] - float(there.group(1)))


@pytest.mark.parametrize("asked", [(), ("--to", "aws us-east-1a g5.xlarge spot")])
def test_no_migrate_line_prints_an_unknown_figure_as_a_dash(
        cli, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
        asked: tuple[str, ...]) -> None:
    """The zone's price imported as aws's whole spot market: the region's bundled price is
    no longer offered, and the job placed on it has no price now to weigh a move against."""
    store = PriceStore(str(db_path))
    launcher = FakeLauncher()
    monkeypatch.setattr(cli_jobs, "job_launcher", lambda store, job: launcher)
    [job] = service.launch(store, _spec(tmp_path, steps=6_000_000), launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    done = cli("prices", "import", "--whole",
               _spot_history(tmp_path, datetime.now(timezone.utc) - timedelta(minutes=5)))
    assert done.exit_code == 0, done.output
    said = cli("migrate", job.name, "--dry-run", *asked)
    store.dispose()
    assert said.exit_code == 0, said.output
    lines = said.stdout.splitlines()
    assert lines, said.output
    for line in lines:
        assert "- to finish" not in line and "(saves -)" not in line, line
        assert not re.search(r"(^|[\s(])-( |$|\))", line), line
    out = " ".join(said.stdout.split())
    assert "no price is known now for the offering it runs on" in out
    assert "`costsched collect`" in out or "`costsched prices import`" in out
