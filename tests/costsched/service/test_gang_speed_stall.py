"""A gang's measured speed leaves its repair in place out, as a single job's recovery gap
is (at the level of the stored readings and events, on SQLite and PostgreSQL): a 2-node
gang that trains 14 steps/s, whose node 1 is lost at step 442 and whose gang resumes 35 s
later, measures 14 steps/s, is not flagged slower, and the report's speed table says its
2 nodes."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from costsched.model import NODE_RECOVERY
from costsched.report import build
from costsched.service import speeds as speed_service
from costsched.store import PriceStore

T0 = datetime(2026, 11, 29, 9, tzinfo=timezone.utc)
KEY = ("aws", "us-west-2", "us-west-2a", "g5.xlarge", "spot", "linux")
SPS = 14.0
STALL = (32.0, 67.0)  # the repair seen (the gang paused) and the gang resumed, s after T0


def _at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def _repaired_gang(store: PriceStore) -> int:
    spec = {"name": "mf-gang", "num_nodes": 2, "throughputs": {"A10G": SPS}, "steps": 500,
            "run": "python train_mf.py"}
    job = store.jobs.create("mf-gang", {"spec": spec, "source": "gang.yaml"}, 500, at=T0)
    store.jobs.transition(job, "running", at=T0)
    store.jobs.place(job, KEY, gpu_model="A10G", gpu_count=1, usd_per_hour=2.0, at=T0,
                     reason="launch", instance="g")
    for t in range(2, 32, 3):  # read every 3 s: 14 steps/s from its first second
        store.jobs.record_step(job, int((t - 1) * SPS), at=_at(t))
    store.jobs.note(job, NODE_RECOVERY, "instance g: node 1 was preempted: replaced in "
                    "us-west-2a, the other nodes kept; the gang resumes once the new node "
                    "is set up", at=_at(STALL[0]))
    store.jobs.note(job, "gang", "instance g: node 1 was preempted: replaced in us-west-2a, "
                    "the other nodes kept; the gang resumes from its newest checkpoint "
                    "(round 2)", at=_at(STALL[1]))
    resumed = int(30 * SPS)  # its checkpoint's step, reached before the stall
    for t in (70, 73):
        store.jobs.record_step(job, resumed + int((t - STALL[1]) * SPS), at=_at(t))
    store.jobs.end_placement(job, _at(74))
    store.jobs.transition(job, "succeeded", at=_at(74))
    return job


def test_a_gangs_repair_in_place_is_left_out_of_its_measured_speed(
        any_store: PriceStore) -> None:
    store = any_store
    job = _repaired_gang(store)
    [(_, _, first, first_ts, last, last_ts)] = store.jobs.reading_rows([job])
    over_all = (last - first) / (last_ts - first_ts)  # the stall counted as training
    assert over_all < SPS / 1.5  # what the gang read before: flagged slower
    trained = (last - first) / (last_ts - first_ts - (STALL[1] - STALL[0]))
    assert trained == pytest.approx(SPS, rel=0.1)
    [row] = build(store, now=_at(80)).speeds.to_dict("records")  # the report's speed table
    assert row["measured_sps"] == pytest.approx(trained)
    assert not row["flagged"] and row["flag"] == ""
    assert (row["gpu_count"], row.get("nodes")) == (1, 2)  # 2 nodes of 1xA10G each
    # The readings every other measured speed is computed from (status, the daemon's
    # flags, the budgets' and the decider's pace): the same.
    from costsched.gang_stalls import trained_readings

    found = speed_service.checks([store.jobs.get(job)], store.jobs.placement_rows([job]),
                                 readings=trained_readings(store, [job]))
    assert found[job].measured_sps == pytest.approx(trained) and not found[job].flagged
