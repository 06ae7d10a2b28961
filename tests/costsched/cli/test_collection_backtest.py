"""Rendering of the collection backtest and of plans on shared instances."""

from __future__ import annotations

import json
import re
from decimal import Decimal

from rich.console import Console

from costsched.backtest.collection import CollectionConfig, run_collection_backtest, summarize
from costsched.cli.collection_backtest import collection_backtest_json, print_collection_backtest
from costsched.cli.packing import instances_json, instances_table
from costsched.optimize.collection import packing
from costsched.service.collection_backtest import CollectionBacktestResult
from tests.costsched.backtest.handmade import T0, V100_A, V100X4_A, trace
from tests.costsched.backtest.test_collection import START, jobs
from tests.costsched.optimize.collection.test_packing import make


def result() -> CollectionBacktestResult:
    js = jobs(4, 0.5)
    runs, instances = run_collection_backtest(trace([(V100_A, 3.0, 0), (V100X4_A, 8.0, 0)]),
                                              js, [START])
    window = {"first_start": T0, "last_start": T0, "starts": 1, "every_hours": 24.0,
              "replan_hours": 24.0, "trace_end": T0}
    return CollectionBacktestResult(runs, instances, summarize(runs), [j.name for j in js],
                                    window, CollectionConfig())


def test_the_backtest_prints_cost_per_approach_and_the_shared_instances() -> None:
    r = result()
    console = Console(record=True, width=200)
    print_collection_backtest(r, console)
    text = console.export_text()
    for approach in ("collection", "alone-daily", "cheapest-hourly"):
        assert approach in text
    collection = r.summary.set_index("approach").loc["collection"]
    assert f"${collection['cost_usd']:,.2f}" in text
    assert f"{collection['vs_cheapest_hourly']:.2f}x" in text
    assert "Instances the collection shared" in text and "p3.8xlarge" in text


def test_the_backtest_json_round_trips() -> None:
    payload = json.loads(json.dumps(collection_backtest_json(result()), default=str))
    assert {r["approach"] for r in payload["summary"]} >= {"collection", "cheapest-hourly"}
    assert payload["share_instances"] is True
    assert any(r["gpus_used"] == 4 for r in payload["instances"])


def test_a_shared_plan_renders_its_instances_and_jobs() -> None:
    plan = packing.solve(make([3600.0] * 8, [[1.0, 6.0]] * 8, [[1.0, 1.0]] * 8, [3.0, 20.0],
                              [1, 8]))
    console = Console(record=True, width=250)
    console.print(instances_table(plan))
    text = console.export_text()
    assert "1 to rent, 1 shared, total $20.00" in text and "8/8" in text
    assert "j0, j1" in text
    records = instances_json(plan)
    assert records[0]["jobs"] == [f"j{i}" for i in range(8)] and records[0]["gpus_idle"] == 0


def test_the_instances_heading_adds_up_its_rows_at_their_decimals() -> None:
    """Three short jobs alone on instances of $0.00994 each ($0.0099 as they read: $0.0298
    together, but $0.0297 as read): the heading's total is the sum of the rows as they
    read, its makespan the longest row as it reads."""
    plan = packing.solve(make([97.48] * 3, [[1.0]] * 3, [[1.0]] * 3, [0.3671], [1]))
    console = Console(record=True, width=250)
    console.print(instances_table(plan))
    text = console.export_text()
    heading = " ".join(text.split())  # the title may wrap over the table's width
    total, makespan = re.search(r"total \$([\d.]+), makespan ([\d.]+) h", heading).groups()
    rows = re.findall(r"│ +([\d.]+) │ +\$([\d.]+) │", text)
    assert len(rows) == 3, text
    assert Decimal(total) == sum(Decimal(cost) for _, cost in rows), text
    assert len(total.split(".")[1]) == len(rows[0][1].split(".")[1]) > 2, text
    assert makespan == max(rows, key=lambda r: Decimal(r[0]))[0], text
