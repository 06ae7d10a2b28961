"""`plan --explain` names the throughput each offering's expected hours used."""

from __future__ import annotations

from datetime import datetime, timezone

from costsched import service
from costsched.jobspec import parse
from costsched.store import PriceStore

AT = datetime(2026, 11, 20, 12, tzinfo=timezone.utc)


def test_explain_says_which_throughput_each_offering_used(store: PriceStore) -> None:
    spec = parse({"name": "r", "model": "ResNet-50 (batch size 64)", "steps": 200_000,
                  "constraints": {"clouds": ["aws"], "regions": ["us-east-1"],
                                  "markets": ["on_demand"]}})
    result = service.plan(store, spec, at=AT)  # an empty store: the bundled prices
    ranked = result.ranking("r").set_index("instance_type")
    v100 = ranked.loc["p3.2xlarge"]
    lines = result.explain(v100["offering"], "r")
    (line,) = [x for x in lines if x.startswith("throughput ")]
    assert line.startswith(f"throughput {v100['steps_per_second']:.4g} steps/s (measured or "
                           "published): Gavel")
    l4 = ranked.loc["g6.xlarge"]
    (line,) = [x for x in result.explain(l4["offering"], "r") if x.startswith("throughput ")]
    assert "(estimated)" in line and "V100" in line  # the rule and what it started from
