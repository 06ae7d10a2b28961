"""A job's restart is one fact: its file's checkpoint.restart_minutes when given, else the
configuration's [migration] restart_minutes, with the configuration's warm-up and transfer
rate, and a gang's rendezvous (`ResolvedJob.overheads`)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from costsched.jobspec import parse, resolve
from costsched.optimize.decision import Overheads
from costsched.throughput import ThroughputTable

AT = datetime(2025, 6, 1, tzinfo=timezone.utc)
CONFIGURED = Overheads(restart_minutes=4.0, warmup_minutes=2.0, transfer_gbps=2.0)


def resolved(restart: float | None = None, nodes: int = 1):  # noqa: ANN201
    checkpoint = {"size_gb": 0.9, **({} if restart is None else {"restart_minutes": restart})}
    spec = parse({"name": "r", "throughputs": {"L4": 30}, "steps": 2000, "run": "true",
                  "num_nodes": nodes, "checkpoint": checkpoint}, "r.yaml")
    return resolve(spec, ThroughputTable(), AT, source="r.yaml", overheads=CONFIGURED)


def test_the_file_s_restart_minutes_over_the_configuration_s_model() -> None:
    job = resolved(restart=0.1)
    assert job.overheads() == Overheads(restart_minutes=0.1, warmup_minutes=2.0,
                                        transfer_gbps=2.0)
    copy = 0.9 * 8 / 2.0 / 3600
    assert job.restart_hours == pytest.approx((0.1 + 2.0) / 60 + copy)
    # A decider's own configured model keeps the job's restart minutes.
    assert job.overheads(Overheads()).restart_minutes == 0.1
    assert job.overheads(Overheads()).warmup_minutes == Overheads().warmup_minutes


def test_without_restart_minutes_the_configuration_s_is_the_job_s() -> None:
    job = resolved()
    assert job.overheads() == CONFIGURED
    assert job.restart_hours == pytest.approx(CONFIGURED.restart_hours(0.9))
    assert "[migration] restart_minutes" in job.restart_said()


def test_restart_said_names_each_part_and_its_source() -> None:
    job = resolved(restart=0.1)
    said = job.restart_said()
    assert said.startswith(f"restart {job.restart_hours:.4g} h: ")
    assert "0.1 min boot and set-up (checkpoint.restart_minutes in r.yaml)" in said
    assert "2 min warm-up ([migration] warmup_minutes)" in said
    assert "to copy the 0.9 GB checkpoint at 2 Gbit/s" in said
    assert "rendezvous" not in said
    # The parts add up to the hours every price of the job's restarts reads.
    assert sum(job._own(None).restart_parts(0.9, 1).values()) == pytest.approx(
        job.restart_hours)


def test_a_gang_s_restart_includes_its_rendezvous() -> None:
    job = resolved(restart=1.0, nodes=3)
    assert job.overheads().restart_minutes == 1.0 + CONFIGURED.rendezvous_minutes
    assert f"{CONFIGURED.rendezvous_minutes:g} min for the 3 nodes' rendezvous" in \
        job.restart_said()
    # Every other part names its setting; the rendezvous has none, and says so and where.
    assert "rendezvous (a fixed assumption, no setting: docs/multi-node.md)" in \
        job.restart_said()
    assert sum(job._own(None).restart_parts(0.9, 3).values()) == pytest.approx(
        job.restart_hours)


def test_a_stored_spec_keeps_restart_minutes_unset() -> None:
    spec = parse({"name": "r", "throughputs": {"L4": 30}, "steps": 2000, "run": "true"})
    again = parse(spec.model_dump(mode="json"))
    assert again.checkpoint.restart_minutes is None
