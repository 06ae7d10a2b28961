"""`costsched plan` with capacity booked ahead: capacity block offerings imported from a
DescribeCapacityBlockOfferings body, compared with spot with on-demand fallback and
on-demand alone, in the table and the JSON."""

from __future__ import annotations

import json
import os
from pathlib import Path

from costsched.store import PriceStore
from tests.costsched.service.booked_world import (
    FIXTURES,
    NOW,
    job_spec,
    store_prices,
    store_scarce_spot,
)

AT = NOW.strftime("%Y-%m-%dT%H:%MZ")


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
    # The chosen plan, its parts and their dollars.
    assert "capacity block p5.48xlarge us-east-1a 12-02 11:30 for 48 h, $2,361.40 " \
        "expected" in out
    for part in ("spot │ 12-01 08:00 │ 12-02 11:30", "on-demand │ 12-01 08:00",
                 "capacity-block │ 12-02 11:30 │ 12-04 10:00"):
        assert part in out
    assert "$1,887.84 upfront" in out and "before the capacity block starts" in out
    assert "saves $" in out and "launch --book" in out
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
