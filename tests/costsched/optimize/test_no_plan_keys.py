"""Every "no plan" names the key of the job's file (and the file) that gets it a plan, as
the file writes it: a costsched job's `constraints.*`, a SkyPilot task's `resources.*` or
`costsched.*`; and, where the cause is a count, a market or a place, what exists instead
for what the job allows (the counts priced for its GPU, not for every GPU)."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pytest

from costsched import service
from costsched.jobspec import resolve
from costsched.optimize.unmatched import unmatched
from costsched.taskfile import load
from costsched.throughput import ThroughputTable

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
ROWS = [  # cloud, region, instance type, market, GPU model, count, $/h
    ("gcp", "us-central1", "a2-highgpu-1g", "on_demand", "A100", 1, 3.67),
    ("aws", "us-east-1", "p4d.24xlarge", "spot", "A100", 8, 6.79),
    ("aws", "us-east-1", "p3.2xlarge", "spot", "V100", 1, 0.92),
    ("aws", "us-east-1", "p3.2xlarge", "on_demand", "V100", 1, 3.06),
    ("aws", "us-east-1", "g4dn.xlarge", "on_demand", "T4", 1, 0.526),
    ("aws", "us-east-1", "g4dn.12xlarge", "on_demand", "T4", 4, 3.912),
    ("aws", "us-east-1", "p2.16xlarge", "on_demand", "K80", 16, 14.4),
]


def market() -> pd.DataFrame:
    frame = pd.DataFrame(ROWS, columns=["cloud", "region", "instance_type", "market",
                                        "gpu_model", "gpu_count", "usd_per_hour"])
    return frame.assign(zone="", os="linux", effective_at=pd.Timestamp(NOW),
                        on_demand_usd_per_hour=float("nan"))


def why(tmp_path: Path, text: str) -> tuple[str, str]:
    """The no-plan line of the job file `text` against `market()`, and the file's path."""
    path = tmp_path / "job.yaml"
    path.write_text(text)
    [spec] = load(path)
    found = unmatched(resolve(spec, ThroughputTable(), NOW, source=str(path)), market(), NOW,
                      now=NOW)
    assert found is not None
    return found.line("j"), str(path)


NATIVE = "name: j\nrun: 'true'\nsteps: 2000\nthroughputs: {T4: 20, V100: 20, A100: 20}\n"
TASK = "name: j\nrun: 'true'\ncostsched: {steps: 2000, throughputs: {T4: 20, A100: 20}}\n"


def test_a_count_no_offering_has_lists_the_counts_of_the_job_s_gpu_and_its_key(
        tmp_path: Path) -> None:
    line, path = why(tmp_path, NATIVE + "constraints: {gpu_models: [T4], gpu_counts: [3]}\n")
    assert "has GPU count 3; T4 is priced at 1, 4 GPUs" in line, line
    assert "16" not in line.replace(path, ""), line  # K80's count, not T4's (nor the path's)
    assert line.endswith(f"change constraints.gpu_counts in {path}"), line


def test_a_region_no_offering_has_names_its_key(tmp_path: Path) -> None:
    line, path = why(tmp_path, NATIVE + "constraints: {gpu_models: [T4], "
                                        "regions: [europe-north1]}\n")
    assert line.endswith(f"change constraints.regions in {path}"), line


def test_a_cloud_no_offering_has_names_its_key(tmp_path: Path) -> None:
    line, path = why(tmp_path, NATIVE + "constraints: {clouds: [azure]}\n")
    assert line.endswith(f"change constraints.clouds in {path}"), line


def test_a_zone_no_offering_has_names_its_key(tmp_path: Path) -> None:
    line, path = why(tmp_path, NATIVE + "constraints: {zones: [us-west-2a]}\n")
    assert line.endswith(f"change constraints.zones in {path}"), line


def test_a_gpu_model_no_offering_has_names_its_key(tmp_path: Path) -> None:
    line, path = why(tmp_path, NATIVE + "constraints: {gpu_models: [H100]}\n")
    assert line.endswith(f"change constraints.gpu_models in {path}"), line


def test_a_shape_priced_elsewhere_names_the_place_key_that_keeps_it_out(
        tmp_path: Path) -> None:
    line, path = why(tmp_path, NATIVE + "constraints: {gpu_models: [A100], gpu_counts: [1], "
                                        "clouds: [aws]}\n")
    assert "not there because its file keeps it in cloud aws" in line, line
    assert line.endswith(f"change constraints.clouds in {path}"), line


def test_a_market_with_no_price_names_the_market_key(tmp_path: Path) -> None:
    line, path = why(tmp_path, NATIVE + "constraints: {gpu_models: [T4], markets: [spot]}\n")
    assert "no spot price known" in line, line
    assert line.endswith(f"change constraints.markets in {path}"), line


def test_a_task_s_market_is_its_use_spot(tmp_path: Path) -> None:
    line, path = why(tmp_path, TASK + "resources: {accelerators: T4:1, use_spot: true}\n")
    assert "no spot price known" in line, line
    assert line.endswith(f"change resources.use_spot in {path}"), line


def test_a_task_s_place_is_its_infra(tmp_path: Path) -> None:
    line, path = why(tmp_path, TASK + "resources: {accelerators: A100:1, "
                                      "infra: gcp/us-east1}\n")
    assert line.endswith(f"change resources.infra in {path}"), line


def test_the_price_cap_still_names_its_key(tmp_path: Path) -> None:
    line, path = why(tmp_path, NATIVE + "constraints: {gpu_models: [T4], max_price: 0.1}\n")
    assert line.endswith(f"raise constraints.max_price in {path}"), line


# --- the planner's own causes, from the bundled prices ---------------------------------------

BUDGET = ("name: tiny\nrun: 'true'\nsteps: 2000\nthroughputs: {A10G: 2000}\n"
          "checkpoint: {size_gb: 0.001, interval_minutes: 0.05, restart_minutes: 0}\n"
          "constraints: {gpu_models: [A10G], markets: [on-demand], regions: [us-east-1], "
          "budget: 0.012}\n")


def _reason(tmp_path: Path, text: str) -> tuple[str, str]:
    path = tmp_path / "job.yaml"
    path.write_text(text)
    [plan] = service.plan(str(tmp_path / "empty.sqlite"), [path], at=NOW).jobs
    assert plan.best is None
    return plan.reason, str(path)


def test_a_budget_short_names_its_start_and_the_budget_that_launches_it(
        tmp_path: Path, cloud_launcher: str) -> None:
    reason, path = _reason(tmp_path, BUDGET)
    # its cost itemised (work and start, each at the offering's price), then where the
    # start's hours come from
    found = re.search(r"costs \$(\d+\.\d+) \(\$(\d+\.\d+) for [\d.]+ h of work \+ "
                      r"\$(\d+\.\d+) for [\d.]+ h to start it, each at \$1\.0060/h; first "
                      r"start (\d+\.\d+) h: .*5 min warm-up \(\[migration\] warmup_minutes\)\)",
                      reason)
    assert found is not None, reason
    cost, work, start, start_hours = (float(v) for v in found.groups())
    assert round(work + start, 4) == cost, reason  # the parts add up as written
    assert start < cost and start > cost / 2, reason  # most of it is the start
    # the start multiplies out: its hours at the offering's price
    assert re.search(r"g5\.xlarge on-demand", reason), reason
    assert round(start_hours * 1.006, 4) == start, reason
    # the launch's own rule and words: 'raise constraints.budget in FILE to AMOUNT'
    raised = re.search(rf"raise constraints\.budget in {re.escape(path)} to (\d+\.\d+)$",
                       reason)
    assert raised is not None, reason
    assert float(raised.group(1)) > cost, reason


def test_a_budget_short_s_amount_is_the_launch_s(tmp_path: Path, cloud_launcher: str) -> None:
    """The budget the plan asks for is the one `launch` asks for (`LaunchFit.enough`)."""
    from costsched import own_budget

    reason, _ = _reason(tmp_path, BUDGET)
    amount = float(reason.rsplit(" to ", 1)[1])
    price = 1.006  # aws us-east-1 g5.xlarge on-demand, no preemptions: pessimistic = expected
    cost = float(re.search(r"costs \$(\d+\.\d+)", reason).group(1))  # type: ignore[union-attr]
    need, _ = own_budget.enough_usd(0.0, cost, 0.0, own_budget.ahead_usd(price, 30.0))
    assert amount == pytest.approx(need, abs=0.011), reason


DEADLINE = ("name: dl\nrun: 'true'\nsteps: 2000000\nthroughputs: {T4: 20}\n"
            "constraints: {gpu_models: [T4], gpu_counts: [1], deadline: 2h}\n")


def test_a_missed_deadline_names_the_key_that_admits_a_faster_offering(
        tmp_path: Path, cloud_launcher: str) -> None:
    reason, path = _reason(tmp_path, DEADLINE)
    assert "cannot meet its deadline of 2 h" in reason, reason
    # (at the three decimals the faster one takes to read above the deadline: one precision)
    assert f"at least 28.028 h from now (constraints.deadline in {path})" in reason, reason
    # the fastest offering of its GPU that its count leaves out, by the count's key
    found = re.search(rf", or one at least (\d+\.\d+)\* h from now with (\d+) GPUs allowed by "
                      rf"constraints\.gpu_counts in {re.escape(path)} \(aws \S+ \S+ "
                      rf"on-demand needs (\d+\.\d+)\* h \(\* from an estimated speed on ",
                      reason)
    assert found is not None, reason
    assert found.group(1) == found.group(3) and float(found.group(1)) < 28.028, reason
    assert int(found.group(2)) > 1, reason
    # each filter an offering fails is said, by its key
    both = _reason(tmp_path, DEADLINE.replace("deadline: 2h", "deadline: 2h, "
                                              "markets: [spot]"))[0]
    assert re.search(r"with on-demand and \d+ GPUs allowed by constraints\.markets and "
                     r"constraints\.gpu_counts in ", both), both


def test_a_missed_deadline_with_nothing_faster_left_out_names_no_key(tmp_path: Path) -> None:
    # any count of its GPU: its fastest is its GPU's fastest
    reason, _ = _reason(tmp_path, DEADLINE.replace("gpu_counts: [1], ", ""))
    assert "cannot meet its deadline of 2 h" in reason, reason
    assert "allowed by" not in reason, reason


# --- a task's place, market and GPUs named by the key the task wrote them with --------------

A100_8 = "accelerators: A100:8, use_spot: true"


@pytest.mark.parametrize(("resources", "written"), [
    (f"{{cloud: aws, region: eu-north-1, {A100_8}}}", "resources.region"),
    (f"{{infra: aws/eu-north-1, {A100_8}}}", "resources.infra"),
    (f"{{cloud: aws, zone: eu-north-1a, {A100_8}}}", "resources.zone"),
    (f"{{cloud: aws, any_of: [{{region: eu-north-1}}], {A100_8}}}",
     "resources.any_of[0].region"),
    ("{cloud: aws, ordered: [{region: eu-north-1}, {region: eu-north-1, "
     "use_spot: false}], accelerators: A100:8}",
     "resources.ordered[0].region or resources.ordered[1].region"),
    (f"{{region: eu-north-1, any_of: [{{cloud: aws}}], {A100_8}}}", "resources.region"),
])
def test_a_task_s_region_is_named_as_it_wrote_it(tmp_path: Path, resources: str,
                                                 written: str) -> None:
    line, path = why(tmp_path, TASK + f"resources: {resources}\n")
    assert "has region eu-north-1" in line, line
    assert line.endswith(f"change {written} in {path}"), line


def test_a_task_s_regions_in_two_entries_are_both_named(tmp_path: Path) -> None:
    line, path = why(tmp_path, TASK + "resources: {cloud: aws, any_of: [{region: eu-north-1}, "
                                      f"{{region: ap-south-1}}], {A100_8}}}\n")
    assert line.endswith(f"change resources.any_of[0].region or resources.any_of[1].region "
                         f"in {path}"), line


def test_a_task_s_cloud_is_named_as_it_wrote_it(tmp_path: Path) -> None:
    line, path = why(tmp_path, TASK + "resources: {cloud: azure, accelerators: T4:1}\n")
    assert "has cloud azure" in line, line
    assert line.endswith(f"change resources.cloud in {path}"), line


def test_a_task_s_gpus_are_named_as_it_wrote_them(tmp_path: Path) -> None:
    line, path = why(tmp_path, TASK + "resources: {gpus: A100:2}\n")
    assert "has GPU count 2" in line, line
    assert line.endswith(f"change resources.gpus in {path}"), line


def test_a_task_s_market_in_its_section_is_named_there(tmp_path: Path) -> None:
    line, path = why(tmp_path, "name: j\nrun: 'true'\ncostsched: {steps: 2000, throughputs: "
                               "{T4: 20}, markets: [spot]}\nresources: {accelerators: T4:1}\n")
    assert "no spot price known" in line, line
    assert line.endswith(f"change costsched.markets in {path}"), line
