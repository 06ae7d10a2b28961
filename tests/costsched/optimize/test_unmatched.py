"""`optimize.unmatched` on a small price frame written out here: each class of "no offering"
in the order it is looked for, the past that `collect` cannot fill, the shapes of a set,
and the planner's reason when the offerings that pass have no speed."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

from costsched.model import Constraints, Job
from costsched.optimize.job import Workload
from costsched.optimize.planner import plan_jobs, prepare
from costsched.optimize.unmatched import shapes, unmatched
from costsched.throughput import ThroughputTable

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
ROWS = [  # cloud, region, instance type, market, GPU model, count, $/h
    ("gcp", "us-central1", "a2-highgpu-1g", "on_demand", "A100", 1, 3.67),
    ("gcp", "us-east1", "a2-highgpu-1g", "on_demand", "A100", 1, 3.67),
    ("aws", "us-east-1", "p4d.24xlarge", "spot", "A100", 8, 6.79),
    ("aws", "us-east-1", "p4d.24xlarge", "on_demand", "A100", 8, 32.77),
    ("aws", "us-east-1", "p3.2xlarge", "spot", "V100", 1, 0.92),
    ("aws", "us-east-1", "p3.2xlarge", "on_demand", "V100", 1, 3.06),
]


def market() -> pd.DataFrame:
    frame = pd.DataFrame(ROWS, columns=["cloud", "region", "instance_type", "market",
                                        "gpu_model", "gpu_count", "usd_per_hour"])
    return frame.assign(zone="", os="linux", effective_at=pd.Timestamp(NOW),
                        on_demand_usd_per_hour=float("nan"))


def job(**constraints: object) -> Workload:
    return Workload(Job("j", "run", "ResNet-50 (batch size 64)", 20_000.0,
                        constraints=Constraints(**constraints)), ThroughputTable(), 0.5, 0.2)


def why(at: datetime = NOW, **constraints: object) -> str:
    found = unmatched(job(**constraints), market(), at, now=NOW)
    return "" if found is None else found.line("j")


def test_a_value_nothing_has_is_named_with_those_that_exist() -> None:
    assert why(gpu_models=("H100",)) == ("job j: no offering priced as of 2026-06-01T00:00Z "
                                         "has GPU model H100; priced: A100, V100; "
                                         "`costsched collect --cloud aws --cloud azure "
                                         "--cloud gcp --gpu H100` fetches today's prices, "
                                         "spot and on-demand; change constraints.gpu_models")
    assert "priced: us-central1, us-east-1, us-east1; did you mean 'us-east-1'" in why(
        regions=("us-east-l",))
    # A GPU costsched knows, with no price here, is not taken for a typo; a misspelt is.
    assert why(gpu_models=("A10O",)).endswith("did you mean 'A100'?; change "
                                              "constraints.gpu_models")


def test_a_type_its_cloud_retired_is_named_as_retired_with_the_shape_elsewhere() -> None:
    # A task's V100:1 on azure reads as Standard_NC6s_v3, which Azure retired on 2025-09-30.
    retired = dict(clouds=("azure",), gpu_models=("V100",), gpu_counts=(1,),
                   instance_types=("Standard_NC6s_v3",), markets=("spot",))
    assert why(**retired) == (
        "job j: Standard_NC6s_v3 retired by azure on 2025-09-30: not rented as of "
        "2026-06-01T00:00Z; spot V100:1 on other types: aws us-east-1 p3.2xlarge $0.9200/h; "
        "change constraints.instance_types")
    # Before its retirement, what has no price is said as before, not a retirement.
    assert why(at=datetime(2025, 6, 1, tzinfo=timezone.utc), **retired) == (
        "job j: no offering priced as of 2025-06-01T00:00Z has cloud azure; priced: aws, gcp; "
        "change constraints.clouds")
    # A type the catalog does not know is a typo, as before.
    assert "did you mean" in why(instance_types=("p3.2xlarg",))


def test_a_shape_nothing_has() -> None:
    assert why(gpu_models=("V100",), gpu_counts=(8,)) == (
        "job j: no instance type priced as of 2026-06-01T00:00Z is V100:8; V100 is priced "
        "at 1 GPU; change constraints.gpu_counts")


def test_a_shape_priced_elsewhere_only() -> None:
    assert why(clouds=("aws",), gpu_models=("A100",), gpu_counts=(1,)) == (
        "job j: no price known as of 2026-06-01T00:00Z for A100:1 in aws; on-demand elsewhere: "
        "gcp us-central1 a2-highgpu-1g $3.6700/h, gcp us-east1 a2-highgpu-1g $3.6700/h; "
        "not there because its file keeps it in cloud aws; change constraints.clouds")


def test_a_market_with_no_price_for_the_shape_says_what_exists_and_how_to_get_it() -> None:
    assert why(markets=("spot",), gpu_models=("A100",), gpu_counts=(1,)) == (
        "job j: no spot price known as of 2026-06-01T00:00Z for A100:1; on-demand: gcp "
        "us-central1 a2-highgpu-1g $3.6700/h, gcp us-east1 a2-highgpu-1g $3.6700/h; spot at "
        "other counts: A100:8 from $6.7900/h (aws us-east-1 p4d.24xlarge); `costsched collect "
        "--cloud gcp --gpu A100` fetches today's prices, spot and on-demand; change "
        "constraints.markets")
    # A region asked is collected alone.
    assert why(markets=("spot",), regions=("us-east1",), gpu_models=("A100",),
               gpu_counts=(1,)).endswith(
        "`costsched collect --cloud gcp --region us-east1 --gpu A100` fetches today's "
        "prices, spot and on-demand; change constraints.markets")


def test_a_plan_of_the_past_gets_no_collect_line() -> None:
    past = NOW - timedelta(days=30)
    assert "collect" not in why(past, markets=("spot",), gpu_models=("A100",),
                                gpu_counts=(1,))


def test_the_price_cap_comes_last() -> None:
    assert why(gpu_models=("V100",), max_price_per_hour=0.5) == (
        "job j: no offering that its filters allow costs at most $0.5000/h as of "
        "2026-06-01T00:00Z; the cheapest, aws us-east-1 p3.2xlarge spot, costs $0.9200/h; "
        "raise constraints.max_price")
    assert why(gpu_models=("V100",), markets=("spot",)) == ""


@pytest.mark.parametrize(("text", "key"), [
    ("name: j\nmodel: ResNet-50 (batch size 64)\nsteps: 20000\n"
     "constraints: {gpu_models: [A100], max_price: 1}\n", "constraints.max_price"),
    ("name: j\nresources: {accelerators: A100:1}\nrun: 'true'\n"
     "costsched: {max_price: 1, hours: 2}\n", "costsched.max_price")])
def test_the_price_cap_names_the_cheapest_offering_and_its_files_key(
        tmp_path, text: str, key: str) -> None:  # noqa: ANN001
    """The cap's refusal names the offering that costs least over it and the key of the
    job's file that lifts the cap, as the file writes it (a SkyPilot task's `costsched:`)."""
    from costsched.jobspec import resolve
    from costsched.taskfile import load

    path = tmp_path / "job.yaml"
    path.write_text(text)
    [spec] = load(path)
    resolved = resolve(spec, ThroughputTable(), NOW, source=str(path))
    found = unmatched(resolved, market(), NOW, now=NOW)
    assert found is not None
    assert found.line("j").endswith(
        "the cheapest, gcp us-central1 a2-highgpu-1g on-demand, costs $3.6700/h; "
        f"raise {key} in {path}"), found.line("j")


def test_the_shapes_of_a_set_and_the_one_left_out() -> None:
    asked = job(markets=("spot",), gpu_models=("A100", "V100"), gpu_counts=(1,),
                instance_types=("a2-highgpu-1g", "p3.2xlarge"))
    named = [name for name, _ in shapes(asked, market())]
    assert named == ["A100:1", "V100:1"]
    offerings = prepare(market())
    [plan] = plan_jobs([asked], offerings,
                       explain=lambda j: unmatched(j, market(), NOW, now=NOW))
    assert plan.reason == "" and set(plan.choices["gpu_model"]) == {"V100"}
    assert plan.notes == (
        "A100:1 left out: no spot price known as of 2026-06-01T00:00Z for A100:1; on-demand: "
        "gcp us-central1 a2-highgpu-1g $3.6700/h, gcp us-east1 a2-highgpu-1g $3.6700/h; spot at "
        "other counts: A100:8 from $6.7900/h (aws us-east-1 p4d.24xlarge); `costsched collect "
        "--cloud gcp --gpu A100` fetches today's prices, spot and on-demand",)
    assert shapes(job(gpu_models=("V100",), gpu_counts=(1,)), market()) == []


def test_a_shape_left_out_names_its_own_alternative_s_place() -> None:
    """Alternatives V100:1 on aws/us-east-1 and A100:1 on gcp/us-central1, planned as one
    scope: the A100:1 left out is said of gcp and us-central1, not of the scope."""
    asked = job(markets=("spot",), gpu_models=("A100", "V100"), gpu_counts=(1,),
                clouds=("aws", "gcp"), regions=("us-central1", "us-east-1"),
                instance_types=("a2-highgpu-1g", "p3.2xlarge"))
    [plan] = plan_jobs([asked], prepare(market()),
                       explain=lambda j: unmatched(j, market(), NOW, now=NOW))
    [note] = plan.notes
    assert note.startswith("A100:1 left out: no spot price known as of 2026-06-01T00:00Z for "
                           "A100:1 in gcp, us-central1; on-demand: gcp us-central1 "), note
    assert "`costsched collect --cloud gcp --region us-central1 --gpu A100`" in note


def test_offerings_that_pass_but_have_no_speed_are_said_to() -> None:
    """A GPU costsched has no data sheet of (one a store discovered) gets no estimate."""
    frame = market()
    frame.loc[frame["gpu_model"] == "V100", "gpu_model"] = "X9"
    asked = replace(job(gpu_models=("X9",)), table=ThroughputTable())
    [plan] = plan_jobs([asked], prepare(frame),
                       explain=lambda j: unmatched(j, frame, NOW, now=NOW))
    # (`throughputs:` refuses a GPU without a data sheet: the hint is the filter's key)
    assert plan.reason == (
        "job j: no speed of ResNet-50 (batch size 64) is known on X9:1, the GPUs its filters "
        "allow (X9: no published figure, no data sheet to estimate one from, and "
        "`throughputs` takes no figure for it; allow other GPUs in constraints.gpu_models)")


def test_a_missed_deadline_reads_above_the_deadline_it_misses() -> None:
    from costsched.optimize.unmatched import deadline_missed

    assert deadline_missed("j", 2, "aws us-east-1a p3.2xlarge spot", 2.413) == (
        "job j cannot meet its deadline of 2 h on any allowed offering: the fastest, "
        "aws us-east-1a p3.2xlarge spot, needs 2.413 h; it would meet a deadline at least "
        "2.413 h from now")  # (2.41 h would still miss it, and 2.42 h is not what it needs)
    assert deadline_missed("j", 1, "x", 1.0000401).endswith(  # not 1.00
        "needs 1.00005 h; it would meet a deadline at least 1.00005 h from now")
    assert deadline_missed("j", 0.5, "x", 0.514).endswith("deadline of 0.5 h on any "
                                                          "allowed offering: the fastest, x, "
                                                          "needs 0.514 h; it would meet a "
                                                          "deadline at least 0.514 h from now")


@pytest.mark.parametrize(("deadline", "said"), [
    (5 / 60, "5 min"), (80 / 60, "80 min"), (0.5, "0.5 h"), (2, "2 h"), (1.25, "1.25 h"),
    (36, "36 h"), (2.712345, "2.71 h")])
def test_a_missed_deadline_reads_as_a_user_writes_it(deadline: float, said: str) -> None:
    from costsched.optimize.unmatched import deadline_missed

    line = deadline_missed("j", deadline, "x", deadline + 1.234)
    assert f"cannot meet its deadline of {said} on any" in line, line


@pytest.mark.parametrize("run", [0.0235, 0.0277778, 0.02349, 1.96, 2.1634999, 0.0049, 41.2])
@pytest.mark.parametrize("start", [0.0, 0.25, 0.2513])
def test_a_missed_deadline_says_one_figure_for_its_need(run: float, start: float) -> None:
    """What the fastest offering needs and the deadline it would meet are one figure, at
    or above the need and above the deadline, and its parts add up to it as they read."""
    import re

    from costsched.optimize.unmatched import deadline_missed

    deadline = (run + start) * 0.97
    line = deadline_missed("j", deadline, "x", run, start)
    needs = re.search(r"needs ([\d.,]+) h", line)[1]
    met = re.search(r"at least ([\d.,]+) h from now", line)[1]
    assert needs == met, line
    assert run + start - 1e-6 <= float(needs.replace(",", "")) > deadline, line
    if start:
        ran, began = re.search(r"\(([\d.,]+) h to run and ([\d.,]+) h to start\)", line).groups()
        places = len(needs.partition(".")[2])
        assert round(float(ran) + float(began), places) == float(needs), line


def test_a_missed_deadline_names_the_cheapest_faster_offering_its_filters_leave_out() -> None:
    from costsched.optimize.unmatched import deadline_missed, faster_left_out

    ranked = pd.DataFrame({
        "offering": ["a 1", "b 8", "c 4", "d spot", "e region"],
        "excluded": ["misses deadline", "gpu_count not allowed", "gpu_count not allowed",
                     "market not allowed", "region not allowed"],
        "expected_hours": [9.0, 1.0, 1.9, 1.5, 0.5], "expected_cost": [9.0, 8.0, 7.6, 9.5, 1.0],
        "gpu_count": [1, 8, 4, 1, 1], "gpu_model": ["V100"] * 5,
        "market": ["on_demand", "on_demand", "on_demand", "on_demand", "on_demand"]})
    said = faster_left_out(ranked, 2.0)
    # the cheapest that meets it
    assert said.said(2) == "this one with 4 GPUs allowed (c 4 needs 1.90 h)"
    # none meets 0.9 h: the fastest left out, which is sooner than the fastest allowed (a
    # region is not a GPU or a market: its 0.5 h is not said)
    assert faster_left_out(ranked, 0.9).said(2) == ("one at least 1.00 h from now with 8 GPUs "
                                                    "allowed (b 8 needs 1.00 h)")
    ranked.loc[3, "expected_cost"] = 1.0
    assert faster_left_out(ranked, 2.0).said(2) == ("this one with on-demand allowed (d spot "
                                                    "needs 1.50 h)")
    assert deadline_missed("j", 2, "a 1", 9.0, left_out=said).endswith(
        "needs 9.00 h; it would meet a deadline at least 9.00 h from now, or this one with "
        "4 GPUs allowed (c 4 needs 1.90 h)")
    # where the need takes three decimals to read above the deadline, so does the rest
    assert deadline_missed("j", 2, "a 1", 2.004, left_out=said).endswith(
        "needs 2.004 h; it would meet a deadline at least 2.004 h from now, or this one with "
        "4 GPUs allowed (c 4 needs 1.900 h)")


def test_a_set_with_no_plan_names_the_cause_of_each_of_its_gpus() -> None:
    """A task's [V100:1, A100:1] spot on aws reads as aws's V100:1 type alone (aws has no
    A100:1): the reason names the spot price V100:1 lacks and the type A100:1 lacks, and
    collects only what aws has of the set."""
    def priced(*dropped: tuple[str, str]) -> pd.DataFrame:  # less aws's (GPU, market)s
        frame = market()
        for gpu, kind in dropped:
            frame = frame[~((frame["gpu_model"] == gpu) & (frame["market"] == kind)
                            & (frame["cloud"] == "aws"))]
        return frame

    asked = job(clouds=("aws",), markets=("spot",), gpu_models=("V100", "A100"),
                gpu_counts=(1,), instance_types=("p3.2xlarge",))
    found = unmatched(asked, priced(("V100", "spot")), NOW, now=NOW)
    assert found is not None and found.line("j") == (
        "job j: no spot price known as of 2026-06-01T00:00Z for V100:1 in aws; on-demand: "
        "aws us-east-1 p3.2xlarge $3.0600/h; spot at other counts: A100:8 from $6.7900/h "
        "(aws us-east-1 p4d.24xlarge); A100:1: no instance type on aws has it; `costsched "
        "collect --cloud aws --gpu V100` fetches today's prices, spot and on-demand; change "
        "constraints.markets")
    # Where aws has no on-demand A100 at any count, the counts it has A100 at are said.
    on_demand = replace(asked.job.constraints, markets=("on_demand",))
    found = unmatched(replace(asked, job=replace(asked.job, constraints=on_demand)),
                      priced(("V100", "on_demand"), ("A100", "on_demand")), NOW, now=NOW)
    assert found is not None and found.line("j") == (
        "job j: no on-demand price known as of 2026-06-01T00:00Z for V100:1 in aws; spot: "
        "aws us-east-1 p3.2xlarge $0.9200/h; A100:1: no instance type on aws has it (A100 is "
        "priced there at 8 GPUs); `costsched collect --cloud aws --gpu V100` fetches today's "
        "prices, spot and on-demand; change constraints.markets")
    # A GPU of the set whose named type has no price says so.
    typed = replace(asked, job=replace(asked.job, constraints=replace(
        on_demand, instance_types=("p3.2xlarge", "p4d.24xlarge"))))
    found = unmatched(typed, priced(("V100", "on_demand"), ("A100", "spot"),
                                    ("A100", "on_demand")), NOW, now=NOW)
    assert found is not None and "; A100:1: its instance types have no price as of " \
        "2026-06-01T00:00Z;" in found.line("j")
