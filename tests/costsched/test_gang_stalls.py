"""A gang's measured speed leaves out its whole stall while a node is replaced: from when
it last trained (the last step it reported before the loss, as its NODE_RECOVERY line
says it) to its resume, not only from the pass that saw the loss. A 2-node gang that
trains 14 steps/s, last reports step 392 at 29 s, its loss seen at 32 s and its gang
resumed from that step at 67 s, measures 14 steps/s (it read 12.8 when the 3 s before the
loss was seen counted as training)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from costsched.gang_stalls import last_step_words, stalls, trained_readings
from costsched.model import NODE_RECOVERY
from costsched.report import build
from costsched.store import PriceStore

T0 = datetime(2026, 11, 29, 9, tzinfo=timezone.utc)
KEY = ("aws", "us-west-2", "us-west-2a", "g5.xlarge", "spot", "linux")
SPS = 14.0
LAST, SEEN, RESUMED = 29.0, 32.0, 67.0  # its last step before the loss; seen; resumed


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
    step = int((LAST - 1) * SPS)  # 392, its last before the loss (and its checkpoint's)
    store.jobs.note(job, NODE_RECOVERY, "instance g: node 1 was preempted: replaced in "
                    "us-west-2a, the other nodes kept; the gang resumes once the new node "
                    "is set up" + last_step_words(step, _at(LAST), _at(SEEN)), at=_at(SEEN))
    store.jobs.note(job, "gang", "instance g: node 1 was preempted: replaced in us-west-2a, "
                    "the other nodes kept; the gang resumes from its newest checkpoint "
                    "(round 2)", at=_at(RESUMED))
    for t in (70, 73):
        store.jobs.record_step(job, step + int((t - RESUMED) * SPS), at=_at(t))
    store.jobs.end_placement(job, _at(74))
    store.jobs.transition(job, "succeeded", at=_at(74))
    return job


def test_the_last_step_before_the_loss_is_said_in_words() -> None:
    assert last_step_words(392, _at(LAST), _at(SEEN)) == (
        "; it last reported step 392 at 2026-11-29 09:00:29 UTC")
    assert last_step_words(None, _at(LAST), _at(SEEN)) == ""
    assert last_step_words(392, _at(SEEN + 1), _at(SEEN)) == ""  # not before the pass


def test_the_whole_stall_is_left_out_of_the_measured_speed(tmp_path) -> None:  # noqa: ANN001
    store = PriceStore(str(tmp_path / "store.sqlite"))
    job = _repaired_gang(store)
    [placement] = store.jobs.placement_rows([job])
    events = store.jobs.event_rows([job], kinds=[NODE_RECOVERY, "gang"])
    assert stalls(events, [placement]) == {placement.id: [(_at(LAST).timestamp(),
                                                           _at(RESUMED).timestamp())]}
    [(_, _, first, first_ts, last, last_ts)] = trained_readings(store, [job])
    assert (last - first) / (last_ts - first_ts) == pytest.approx(SPS)  # was: 12.8
    [row] = build(store, now=_at(80)).speeds.to_dict("records")  # the report's speed table
    assert row["measured_sps"] == pytest.approx(SPS)
    store.dispose()
