"""SkyPilot `any_of` / `ordered` alternatives that differ in several fields (where, which
GPU, which market) are planned as the union of the exact alternatives: an offering is
allowed when one alternative allows it in full. Plan, launch, the decider, a stored job
reloaded and `plan --emit sky` read back all keep to that union; `ordered:` keeps its
order."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
import yaml

from costsched import service
from costsched.jobspec import parse, resolve
from costsched.model import InvalidInput
from costsched.skypilot import parse_task
from costsched.throughput import ThroughputTable

NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)
ORDERED = """\
name: ord
resources:
  ordered:
    - {accelerators: A10G:1, infra: aws/us-east-1, use_spot: true}
    - {accelerators: L4:1, infra: gcp, use_spot: true}
run: python train.py
"""
ANY_OF = """\
name: anyof
resources:
  use_spot: true
  any_of:
    - {accelerators: A10G:1, use_spot: false}
    - {accelerators: L4:1}
run: python train.py
"""


def task(text: str):  # noqa: ANN201
    return parse_task(yaml.safe_load(text), "task.yaml", "t")


def in_ordered(row) -> bool:  # noqa: ANN001
    """The offering is one an alternative of ORDERED allows in full."""
    first = (row["cloud"] == "aws" and row["region"] == "us-east-1"
             and row["gpu_model"] == "A10G" and row["gpu_count"] == 1)
    second = row["cloud"] == "gcp" and row["gpu_model"] == "L4" and row["gpu_count"] == 1
    return (first or second) and row["market"] == "spot"


def in_any_of(row) -> bool:  # noqa: ANN001
    """The offering is one an alternative of ANY_OF allows in full."""
    return int(row["gpu_count"]) == 1 and (
        (row["gpu_model"] == "A10G" and row["market"] == "on_demand")
        or (row["gpu_model"] == "L4" and row["market"] == "spot"))


def test_ordered_alternatives_of_several_fields_plan_their_union_in_order(
        tmp_path: Path) -> None:
    from costsched.optimize.planner import order_cost

    plan = service.plan(str(tmp_path / "empty.sqlite"), task(ORDERED), at=NOW).jobs[0]
    choices = plan.choices
    assert all(in_ordered(r) for _, r in choices.iterrows())
    assert not ((choices["instance_type"] == "g5.16xlarge")
                & (choices["region"] == "ap-northeast-1")).any()
    assert {"aws", "gcp"} == set(choices["cloud"])  # offerings of both alternatives
    assert plan.best["cloud"] == "aws" and plan.best["gpu_model"] == "A10G"  # the first
    assert set(choices["order_rank"]) == {0, 1}
    note = order_cost(plan)
    assert note.startswith("ordered: alternative 1 (aws us-east-1")
    assert "more than the cheapest choice (gcp " in note or "also the cheapest" in note


def test_any_of_alternatives_with_a_market_outside_plan_exactly_their_union(
        tmp_path: Path) -> None:
    plan = service.plan(str(tmp_path / "empty.sqlite"), task(ANY_OF), at=NOW).jobs[0]
    choices = plan.choices
    assert all(in_any_of(r) for _, r in choices.iterrows())
    assert ((choices["gpu_model"] == "A10G") & (choices["market"] == "on_demand")).any()
    assert ((choices["gpu_model"] == "L4") & (choices["market"] == "spot")).any()
    assert not ((choices["gpu_model"] == "L4") & (choices["market"] == "on_demand")).any()
    assert "order_rank" not in choices.columns  # any_of: ranked by the objective
    ranked = plan.ranked
    outside = ranked[(ranked["gpu_model"] == "L4") & (ranked["market"] == "on_demand")
                     & (ranked["gpu_count"] == 1)]
    assert set(outside["excluded"]) == {"in none of its alternatives"}


def test_plan_explain_says_an_offering_outside_the_alternatives_is_left_out(
        tmp_path: Path) -> None:
    result = service.plan(str(tmp_path / "empty.sqlite"), task(ANY_OF), at=NOW)
    ranked = result.jobs[0].ranked
    label = ranked.loc[(ranked["gpu_model"] == "L4") & (ranked["market"] == "on_demand"),
                       "offering"].iloc[0]
    lines = result.explain(label)
    assert lines[-1] == "left out of the plan: in none of its alternatives"
    assert not any("left out of the plan" in line for line in result.explain(
        str(result.jobs[0].best["offering"])))


def test_a_stored_job_reloads_with_the_same_alternatives() -> None:
    spec = task(ANY_OF)
    assert len(spec.constraints.alternatives) == 2
    again = parse(spec.model_dump(mode="json"), "<stored spec>")
    assert again == spec
    job = resolve(again, ThroughputTable.load(), NOW).job
    assert len(job.constraints.alternatives) == 2
    assert {a.markets for a in job.constraints.alternatives} == {("on_demand",), ("spot",)}


def offer(cloud: str, zone: str, instance_type: str, market: str, gpu: str,
          price: float) -> dict:
    return dict(cloud=cloud, region=zone[:-2] if cloud == "gcp" else zone[:-1], zone=zone,
                instance_type=instance_type, market=market, os="linux", gpu_model=gpu,
                gpu_count=1, vcpus=4, memory_gb=16.0, usd_per_hour=price,
                effective_at=NOW - timedelta(hours=1), source="test")


# Stored prices: those outside ORDERED's alternatives are the cheapest, each allowed by
# the product of its fields (A10G in another region, L4 on aws, A10G on-demand).
PRICES = [offer("aws", "us-east-1a", "g5.xlarge", "spot", "A10G", 0.50),
          offer("gcp", "us-central1-a", "g2-standard-4", "spot", "L4", 0.30),
          offer("aws", "ap-northeast-1a", "g5.xlarge", "spot", "A10G", 0.05),
          offer("aws", "us-east-1b", "g6.xlarge", "spot", "L4", 0.06),
          offer("aws", "us-east-1c", "g5.xlarge", "on_demand", "A10G", 0.07)]


def test_a_launch_and_the_decider_keep_to_the_union(tmp_path: Path) -> None:
    from costsched.service import jobs as job_service
    from costsched.service.decide import decide
    from costsched.store import PriceStore
    from tests.costsched.migration.test_edges import FakeLauncher

    store = PriceStore(str(tmp_path / "store.sqlite"))
    store.ingest(pd.DataFrame(PRICES))
    path = tmp_path / "ord.yaml"
    path.write_text(ORDERED)
    launcher = FakeLauncher()
    [job] = job_service.launch(store, path, launcher=launcher, at=NOW,
                               checkpoint_root=str(tmp_path / "ckpt"))
    [instance] = launcher.states.values()
    # The first alternative, though a cheaper offering of the other is priced.
    assert instance.offering_key[:5] == ("aws", "us-east-1", "us-east-1a", "g5.xlarge",
                                         "spot")
    stored = parse(store.jobs.get(job.id).spec["spec"], "<stored spec>")
    assert len(stored.constraints.alternatives) == 2
    resolved = resolve(stored, ThroughputTable.load(), NOW)
    for policy in ("dynamic-aware", "cheapest-hourly"):
        decision = decide(store, resolved.job, home_region="us-east-1", at=NOW,
                          policy=policy, current=instance.offering_key,
                          table=resolved.table)
        assert decision.choice[:5] in {
            ("aws", "us-east-1", "us-east-1a", "g5.xlarge", "spot"),
            ("gcp", "us-central1", "us-central1-a", "g2-standard-4", "spot")}, decision
    store.dispose()


@pytest.mark.parametrize(("text", "field", "meant"), [
    (ORDERED.replace("{accelerators: A10G:1, infra", "{acelerators: A10G:1, infra"),
     "resources.ordered[0].acelerators", "'accelerators'"),
    (ANY_OF.replace("{accelerators: L4:1}", "{accelerators: L4:1, usespot: true}"),
     "resources.any_of[1].usespot", "'use_spot'"),
])
def test_a_misspelt_key_inside_an_alternative_is_one_line_with_the_name_meant(
        text: str, field: str, meant: str) -> None:
    with pytest.raises(InvalidInput) as info:
        task(text)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"task.yaml: field {field}: ")
    assert f"did you mean {meant}?" in message


def test_plan_emit_sky_reads_back_to_the_same_offering_inside_the_union(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    for text in (ORDERED, ANY_OF):
        path = tmp_path / "task.yaml"
        path.write_text(text)
        first = service.plan(str(tmp_path / "empty.sqlite"), task(text), at=NOW).jobs[0]
        emitted = cli("plan", path, "--emit", "sky", "--at", NOW.isoformat())
        assert emitted.exit_code == 0, emitted.output
        doc = yaml.safe_load(emitted.stdout)
        again = service.plan(str(tmp_path / "empty.sqlite"), task(yaml.safe_dump(doc)),
                             at=NOW).jobs[0]
        assert again.best["offering"] == first.best["offering"]


def test_alternatives_still_refused_say_what_costsched_cannot_honour() -> None:
    with pytest.raises(InvalidInput) as info:
        task("resources:\n  any_of:\n    - {accelerators: A10G:1}\n    - {cpus: 8}\n"
             "run: x")
    assert "some alternatives ask for accelerators and others do not" in str(info.value)
    with pytest.raises(InvalidInput) as info:
        task("resources:\n  any_of:\n    - {accelerators: A10G:1, num_nodes: 2}\n"
             "    - {accelerators: L4:1}\nrun: x")
    assert "field resources.any_of[0].num_nodes: " in str(info.value)


def test_no_plan_names_the_alternative_and_what_it_lacks(tmp_path: Path) -> None:
    text = ("name: none\nresources:\n  any_of:\n"
            "    - {accelerators: L4:1, infra: gcp/asia-south1, use_spot: true}\n"
            "    - {accelerators: A10G:1, infra: aws/af-south-1}\nrun: x\n")
    plan = service.plan(str(tmp_path / "empty.sqlite"), task(text), at=NOW).jobs[0]
    assert plan.best is None
    assert plan.reason.startswith("job none: none of its alternatives has an offering: "
                                  "alternative 1 (L4:1 spot in gcp, asia-south1): no "
                                  "offering priced as of 2026-11-01T00:00Z has region "
                                  "asia-south1; L4:1 spot on gcp is priced in ")
    assert "; alternative 2 (A10G:1 on-demand in aws, af-south-1): no offering priced as " \
        "of 2026-11-01T00:00Z has region af-south-1; A10G:1 on-demand on aws is priced " \
        "in us-east-1" in plan.reason


def test_no_plan_numbers_ordered_alternatives_as_the_task_does(tmp_path: Path) -> None:
    # The first alternative is dropped as the task is read (a cloud costsched does not run
    # on): the others keep their numbers in the task, as a plan with a choice names them.
    text = ("name: none\nresources:\n  ordered:\n"
            "    - {accelerators: H100:1, infra: lambda}\n"
            "    - {accelerators: L4:1, infra: gcp/asia-south1, use_spot: true}\n"
            "    - {accelerators: A10G:1, infra: aws/af-south-1}\nrun: x\n")
    plan = service.plan(str(tmp_path / "empty.sqlite"), task(text), at=NOW).jobs[0]
    assert plan.best is None
    assert plan.reason.startswith("job none: none of its alternatives has an offering: "
                                  "alternative 2 (L4:1 spot in gcp, asia-south1): "), plan.reason
    assert "; alternative 3 (A10G:1 on-demand in aws, af-south-1): " in plan.reason
    assert "alternative 1 (" not in plan.reason


def test_an_ordered_alternative_of_one_zone_is_first_in_that_zone_only(
        tmp_path: Path) -> None:
    from costsched.store import PriceStore

    db = tmp_path / "store.sqlite"
    store = PriceStore(str(db))
    store.ingest(pd.DataFrame([offer("aws", "us-east-1a", "g5.xlarge", "spot", "A10G", 0.50),
                               offer("aws", "us-east-1b", "g5.xlarge", "spot", "A10G", 0.20)]))
    store.dispose()
    plan = service.plan(str(db), task(
        "resources:\n  ordered:\n"
        "    - {accelerators: A10G:1, infra: aws/us-east-1/us-east-1a, use_spot: true}\n"
        "    - {accelerators: A10G:1, infra: aws, use_spot: true}\nrun: x"), at=NOW).jobs[0]
    assert plan.best["zone"] in ("us-east-1a", "") and plan.best["region"] == "us-east-1"
    ranked = plan.choices.set_index("offering")["order_rank"]
    assert ranked["aws us-east-1b g5.xlarge spot"] == 1  # the second alternative's


def test_markets_of_the_costsched_section_apply_to_every_alternative(
        tmp_path: Path) -> None:
    spec = task("resources:\n  any_of:\n    - {accelerators: A10G:1, infra: aws/us-east-1}\n"
                "    - {accelerators: L4:1, infra: gcp}\n"
                "costsched: {markets: [spot, on-demand]}\nrun: x")
    assert [a.markets for a in spec.constraints.alternatives] == [["spot", "on_demand"]] * 2
    choices = service.plan(str(tmp_path / "empty.sqlite"), spec, at=NOW).jobs[0].choices
    pairs = set(zip(choices["cloud"], choices["gpu_model"], choices["market"], strict=True))
    assert pairs == {(c, g, m) for c, g in (("aws", "A10G"), ("gcp", "L4"))
                     for m in ("spot", "on_demand")}
    assert set(choices.loc[choices["cloud"] == "aws", "region"]) == {"us-east-1"}


def test_a_gpu_of_an_alternatives_set_left_out_is_said_of_that_alternative(
        tmp_path: Path) -> None:
    plan = service.plan(str(tmp_path / "empty.sqlite"), task(
        "resources:\n  any_of:\n"
        "    - {accelerators: {A10G: 1, H100: 8}, infra: aws/sa-east-1, use_spot: true}\n"
        "    - {accelerators: L4:1, infra: gcp}\nrun: x"), at=NOW).jobs[0]
    assert plan.best is not None and plan.best["gpu_model"] == "L4"
    assert [n.split(": no offering")[0] for n in plan.notes] == [
        "A10G:1 left out: alternative 1 (A10G:1 spot in aws, sa-east-1)",
        "H100:8 left out: alternative 1 (H100:8 spot in aws, sa-east-1)"]


@pytest.mark.parametrize("steps", [1500, 4000, 90_000, 2_000_000])
def test_the_ordered_cost_note_subtracts_as_written(tmp_path: Path, steps: int) -> None:
    """The first choice's cost less the cheapest's reads, as written, as the difference
    the line gives ('$0.20, $0.14 more than ... $0.05' does not subtract)."""
    import re

    from costsched.optimize.planner import order_cost

    text = ("name: ord\nresources: {accelerators: [V100:1, T4:1], use_spot: true}\n"
            f"run: python train.py\ncostsched: {{steps: {steps}, throughputs: "
            "{V100: 12.5, T4: 8}}\n")
    plan = service.plan(str(tmp_path / "empty.sqlite"), task(text), at=NOW).jobs[0]
    note = order_cost(plan)
    found = re.search(r"costs \$([\d,.]+), \$([\d,.]+) more than the cheapest choice "
                      r"\(.*, \$([\d,.]+)\)", note)
    assert found, note
    cost, more, least = (float(g.replace(",", "")) for g in found.groups())
    places = len(found.group(2).split(".")[1])
    assert {len(g.split(".")[1]) for g in found.groups()} == {places}, note
    assert round(cost - least, places) == more, note


def test_an_alternative_naming_only_an_instance_type_keeps_that_types_gpus(
        tmp_path: Path) -> None:
    """`{cloud: aws, instance_type: g4dn.xlarge}` then `{accelerators: V100:1}`: the first
    asks for the type's T4, not for the second's V100 (which would leave it no offering)."""
    text = """\
name: bytype
resources:
  ordered:
    - {cloud: aws, instance_type: g4dn.xlarge}
    - {accelerators: V100:1}
run: python train.py
"""
    plan = service.plan(str(tmp_path / "empty.sqlite"), task(text), at=NOW).jobs[0]
    choices = plan.choices
    assert plan.best["instance_type"] == "g4dn.xlarge" and plan.best["cloud"] == "aws"
    t4 = choices[choices["gpu_model"] == "T4"]
    assert set(t4["instance_type"]) == {"g4dn.xlarge"}  # not the T4 types it did not name
    assert set(choices["gpu_model"]) == {"T4", "V100"}
    assert set(choices["order_rank"]) == {0, 1}
