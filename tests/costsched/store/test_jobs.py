"""The job store on SQLite and PostgreSQL: jobs, state changes, placements, the event log."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest
from sqlalchemy import insert
from sqlalchemy.exc import IntegrityError

from costsched.model import JOB_STATES, InvalidInput
from costsched.store import JobStore, PriceStore, StaleState, job_log, job_placements
from costsched.store import jobs as jobs_module

T0 = datetime(2024, 6, 1, 12, 0, tzinfo=timezone.utc)
SPEC = {"name": "resnet", "model": "ResNet-50", "steps": 1000,
        "constraints": {"markets": ["spot"], "deadline_hours": 12.5}}
V100 = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
A100 = ("gcp", "us-central1", "", "a2-highgpu-1g", "on_demand", "linux")


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


@pytest.fixture()
def jobs(any_store: PriceStore) -> JobStore:
    return any_store.jobs


def new_job(jobs: JobStore, name: str = "resnet", **kwargs) -> int:
    return jobs.create(name, SPEC, 1000.0, at=T0, **kwargs)


def table_sizes(jobs: JobStore) -> tuple[int, int, int]:
    every = jobs.list()
    events = sum(len(jobs.events(i)) for i in every["id"])
    return len(every), len(jobs.placements()), events


def test_jobs_is_one_store_on_the_same_engine(any_store: PriceStore) -> None:
    assert any_store.jobs is any_store.jobs
    assert any_store.jobs.engine is any_store.engine


def test_create_and_get_round_trip(jobs: JobStore) -> None:
    job_id = new_job(jobs, checkpoint_location="s3://bucket/ckpt", policy="dynamic")
    job = jobs.get(job_id)
    assert job.id == job_id
    assert (job.name, job.state, job.policy) == ("resnet", "pending", "dynamic")
    assert job.spec == SPEC
    assert (job.steps_total, job.steps_done, job.checkpoint_step) == (1000.0, 0.0, None)
    assert job.checkpoint_location == "s3://bucket/ckpt"
    assert job.created_at == job.updated_at == T0
    assert job.created_at.tzinfo is not None and not job.final
    events = jobs.events(job_id)
    assert events[["kind", "to_state"]].values.tolist() == [["state", "pending"]]
    assert events["from_state"].isna().all()
    assert events.loc[0, "at"] == pd.Timestamp(T0)


def test_a_name_may_be_launched_again(jobs: JobStore) -> None:
    first = new_job(jobs)
    jobs.transition(first, "stopped", at=T0)
    second = new_job(jobs)  # the name is free once its job ended
    other = new_job(jobs, name="bert")
    assert first != second
    assert [j.id for j in jobs.find("resnet")] == [first, second]
    assert [j.id for j in jobs.find("bert")] == [other]
    assert jobs.find("nobody") == []


def test_unknown_job_and_bad_values_name_the_value(jobs: JobStore) -> None:
    with pytest.raises(InvalidInput, match="job 404: no such job"):
        jobs.get(404)
    with pytest.raises(InvalidInput, match="job 404: no such job"):
        jobs.transition(404, "running", at=T0)
    with pytest.raises(InvalidInput, match="job 404: no such job"):
        jobs.place(404, V100, gpu_model="V100", gpu_count=1, at=T0, usd_per_hour=1.0,
                   reason="launch")
    with pytest.raises(InvalidInput, match="job 404: no such job"):
        jobs.events(404)
    with pytest.raises(InvalidInput, match="steps_total -5: expected a positive"):
        jobs.create("x", {}, -5, at=T0)
    with pytest.raises(InvalidInput, match="spec: expected JSON values"):
        jobs.create("x", {"when": T0}, 5, at=T0)
    with pytest.raises(InvalidInput, match="name '': expected a non-empty text"):
        jobs.create("", {}, 5, at=T0)
    assert jobs.list().empty


def test_transition_moves_and_logs(jobs: JobStore) -> None:
    job_id = new_job(jobs)
    moved = jobs.transition(job_id, "launching", at=at(1), expect="pending", detail="go")
    assert moved.state == "launching" and moved.updated_at == at(1)
    jobs.transition(job_id, "running", at=at(2), expect=("launching", "recovering"))
    done = jobs.transition(job_id, "succeeded", at=at(3))
    assert done.final and jobs.get(job_id).state == "succeeded"
    log = jobs.events(job_id)
    assert log["kind"].tolist() == ["state"] * 4
    assert log["from_state"].fillna("-").tolist() == ["-", "pending", "launching", "running"]
    assert log["to_state"].tolist() == ["pending", "launching", "running", "succeeded"]
    assert log["detail"].tolist()[1] == "go"
    assert log["at"].tolist() == [pd.Timestamp(t) for t in (T0, at(1), at(2), at(3))]


def test_stale_and_unknown_states_write_nothing(jobs: JobStore) -> None:
    job_id = new_job(jobs)
    jobs.transition(job_id, "launching", at=at(1))
    with pytest.raises(StaleState, match="job .* is 'launching': expected pending"):
        jobs.transition(job_id, "running", at=at(2), expect="pending")
    with pytest.raises(InvalidInput, match="state 'flying': expected one of pending,"):
        jobs.transition(job_id, "flying", at=at(2))
    with pytest.raises(InvalidInput, match="expected state 'done': expected one of"):
        jobs.transition(job_id, "running", at=at(2), expect="done")
    assert jobs.get(job_id).state == "launching"
    assert len(jobs.events(job_id)) == 2
    assert issubclass(StaleState, InvalidInput)


def test_a_state_change_holds_the_job_until_it_commits(
    jobs: JobStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer tries to move the job between our read of its state and our write:
    it waits for our commit, then finds the state we wrote (row lock on PostgreSQL, the
    write lock taken at BEGIN on SQLite)."""
    job_id = new_job(jobs)
    rival = PriceStore(str(jobs.engine.url.render_as_string(hide_password=False)),
                       migrate=False)
    real_state = jobs_module._state
    outcome: dict[str, object] = {}
    threads: list[threading.Thread] = []

    def rival_cancels() -> None:
        try:
            rival.jobs.transition(job_id, "stopped", at=at(1), expect="pending")
            outcome["rival"] = "moved"
        except StaleState as exc:
            outcome["rival"] = str(exc)

    def state_then_rival_tries(conn, jid, **kwargs):  # noqa: ANN001, ANN003
        seen = real_state(conn, jid, **kwargs)
        if not threads:
            threads.append(threading.Thread(target=rival_cancels))
            threads[0].start()
            threads[0].join(0.5)  # the rival had every chance to get in first
            outcome["rival_waited"] = threads[0].is_alive()
        return seen

    monkeypatch.setattr(jobs_module, "_state", state_then_rival_tries)
    jobs.transition(job_id, "launching", at=at(1), expect="pending")
    threads[0].join()
    rival.dispose()
    assert outcome["rival_waited"] is True
    assert outcome["rival"] == (f"job {job_id} is 'launching': expected pending to move it"
                                " to 'stopped'")
    assert jobs.get(job_id).state == "launching"
    assert jobs.events(job_id)["to_state"].tolist() == ["pending", "launching"]


def test_concurrent_transitions_one_winner(any_store: PriceStore) -> None:
    job_id = new_job(any_store.jobs)
    stores = [PriceStore(any_store.url, migrate=False) for _ in range(4)]
    results: list[str] = []
    barrier = threading.Barrier(len(stores))

    def attempt(store: PriceStore) -> None:
        barrier.wait()
        try:
            store.jobs.transition(job_id, "launching", at=at(1), expect="pending")
            results.append("won")
        except StaleState:
            results.append("stale")

    threads = [threading.Thread(target=attempt, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in stores:
        s.dispose()
    assert sorted(results) == ["stale"] * 3 + ["won"]
    assert any_store.jobs.events(job_id)["to_state"].tolist() == ["pending", "launching"]


def test_progress_and_checkpoints(jobs: JobStore) -> None:
    job_id = new_job(jobs)
    jobs.record_progress(job_id, 250, at=at(1))
    job = jobs.record_progress(job_id, 400, at=at(2), checkpoint_location="s3://b/ck-400",
                               checkpoint_step=400)
    assert (job.steps_done, job.checkpoint_step, job.checkpoint_location) == (
        400.0, 400.0, "s3://b/ck-400")
    # After a preemption the job resumes from its checkpoint: progress may go back.
    assert jobs.record_progress(job_id, 400, at=at(3)).checkpoint_step == 400.0
    log = jobs.events(job_id)
    assert log["kind"].tolist() == ["state", "progress", "progress", "progress"]
    assert "checkpoint_step=400" in log["detail"].iloc[2]
    with pytest.raises(InvalidInput, match="steps_done nan: expected a finite number >= 0"):
        jobs.record_progress(job_id, float("nan"), at=at(4))
    assert jobs.get(job_id).updated_at == at(3)


def test_placements_open_and_close(jobs: JobStore) -> None:
    job_id, other = new_job(jobs), new_job(jobs, name="bert")
    first = jobs.place(job_id, V100, gpu_model="V100", gpu_count=1, at=at(1),
                       usd_per_hour=0.92, reason="launch", instance="i-0abc")
    jobs.place(other, A100, gpu_model="A100", gpu_count=1, at=at(1), usd_per_hour=3.67,
               reason="launch")
    second = jobs.place(job_id, A100, gpu_model="A100", gpu_count=1, at=at(5),
                        usd_per_hour=3.67, reason="migration")
    assert first != second
    mine = jobs.placements(job_id)
    assert mine["id"].tolist() == [first, second]
    assert mine["end_at"].iloc[0] == pd.Timestamp(at(5))  # closed when the next one opened
    assert pd.isna(mine["end_at"].iloc[1])
    assert mine["start_at"].tolist() == [pd.Timestamp(at(1)), pd.Timestamp(at(5))]
    assert tuple(mine.iloc[0][["cloud", "region", "zone", "instance_type", "market", "os"]]) \
        == V100
    assert (mine["instance"].tolist(), mine["reason"].tolist()) == (
        ["i-0abc", ""], ["launch", "migration"])
    assert mine["usd_per_hour"].tolist() == [0.92, 3.67]
    assert len(jobs.placements()) == 3
    assert jobs.end_placement(job_id, at(8)) == second
    assert jobs.end_placement(job_id, at(9)) is None  # nothing open: nothing written
    assert jobs.placements(job_id)["end_at"].tolist() == [pd.Timestamp(at(5)),
                                                          pd.Timestamp(at(8))]
    assert pd.isna(jobs.placements(other)["end_at"].iloc[0])  # other jobs untouched
    kinds = jobs.events(job_id)["kind"].tolist()
    assert kinds == ["state", "placement", "placement", "placement_end"]
    # The log writes each offering and price as the tables do (the dashboard shows it).
    assert jobs.events(job_id)["detail"].tolist()[1:3] == [
        f"placement {first}: launch on aws us-east-1a p3.2xlarge spot at $0.9200/h",
        f"placement {second}: migration on gcp us-central1 a2-highgpu-1g on-demand at "
        f"$3.6700/h (ended placement {first})"]
    assert jobs.get(job_id).updated_at == at(8)


def test_a_migration_source_stays_placed_until_it_is_ended(jobs: JobStore) -> None:
    job_id = new_job(jobs)
    source = jobs.place(job_id, V100, gpu_model="V100", gpu_count=1, at=at(1),
                        usd_per_hour=0.92, reason="launch", instance="i-source")
    target = jobs.place(job_id, A100, gpu_model="A100", gpu_count=1, at=at(5),
                        usd_per_hour=3.67, reason="migration", instance="i-target",
                        keep_open=True)
    both = jobs.placements(job_id)
    assert both["end_at"].isna().tolist() == [True, True]  # both billed meanwhile
    assert jobs.end_placement(job_id, at(5.1), instance="i-source") == source
    assert jobs.end_placement(job_id, at(6), instance="i-gone") is None
    after = jobs.placements(job_id)
    assert after["end_at"].iloc[0] == pd.Timestamp(at(5.1)) and pd.isna(after["end_at"].iloc[1])
    assert jobs.end_placement(job_id, at(7)) == target


def test_bad_placements_are_refused(jobs: JobStore) -> None:
    job_id = new_job(jobs)
    jobs.place(job_id, V100, gpu_model="V100", gpu_count=1, at=at(2), usd_per_hour=0.9,
               reason="launch")
    args = {"gpu_model": "V100", "gpu_count": 1, "usd_per_hour": 0.9}
    with pytest.raises(InvalidInput, match="reason 'whim': expected one of launch, migration"):
        jobs.place(job_id, V100, at=at(3), reason="whim", **args)
    with pytest.raises(InvalidInput, match="market 'reserved'"):
        jobs.place(job_id, (*V100[:4], "reserved", "linux"), at=at(3), reason="launch", **args)
    with pytest.raises(InvalidInput, match="offering key"):
        jobs.place(job_id, V100[:5], at=at(3), reason="launch", **args)
    with pytest.raises(InvalidInput, match="expected at or after the start of placement"):
        jobs.place(job_id, V100, at=at(1), reason="recovery", **args)
    jobs.transition(job_id, "stopped", at=at(4))
    with pytest.raises(InvalidInput, match="is 'stopped': expected a job that has not"):
        jobs.place(job_id, V100, at=at(5), reason="recovery", **args)
    assert len(jobs.placements(job_id)) == 1
    assert jobs.events(job_id)["kind"].tolist() == ["state", "placement", "state"]


def test_a_failed_write_leaves_nothing_half_written(
    jobs: JobStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    job_id = new_job(jobs)
    jobs.place(job_id, V100, gpu_model="V100", gpu_count=1, at=at(1), usd_per_hour=0.9,
               reason="launch")
    before = (jobs.get(job_id), jobs.placements(), jobs.events(job_id), table_sizes(jobs))

    def power_cut(*_args, **_kwargs) -> None:
        raise RuntimeError("power cut")

    for module in (jobs_module, job_placements, job_log):  # each writer of the job's log
        monkeypatch.setattr(module, "_event", power_cut)  # fails after the main write
    with pytest.raises(RuntimeError, match="power cut"):
        jobs.place(job_id, A100, gpu_model="A100", gpu_count=1, at=at(2), usd_per_hour=3.6,
                   reason="migration")
    with pytest.raises(RuntimeError, match="power cut"):
        jobs.transition(job_id, "launching", at=at(2), expect="pending")
    with pytest.raises(RuntimeError, match="power cut"):
        jobs.record_progress(job_id, 10, at=at(2), checkpoint_step=10)
    with pytest.raises(RuntimeError, match="power cut"):
        jobs.end_placement(job_id, at(2))
    with pytest.raises(RuntimeError, match="power cut"):
        jobs.create("bert", SPEC, 10, at=at(2))
    after = (jobs.get(job_id), jobs.placements(), jobs.events(job_id), table_sizes(jobs))
    assert after[0] == before[0]
    pd.testing.assert_frame_equal(after[1], before[1])
    pd.testing.assert_frame_equal(after[2], before[2])
    assert after[3] == before[3]
    assert jobs.find("bert") == []


def test_list_filters_by_state(jobs: JobStore) -> None:
    ids = [new_job(jobs, name=f"job{i}") for i in range(3)]
    jobs.transition(ids[1], "running", at=at(1))
    jobs.transition(ids[2], "failed", at=at(1))
    every = jobs.list()
    assert every["id"].tolist() == ids
    assert every["spec"].tolist() == [SPEC] * 3
    assert jobs.list(["running", "failed"])["name"].tolist() == ["job1", "job2"]
    assert jobs.list(("pending",))["id"].tolist() == [ids[0]]
    assert jobs.list(["succeeded"]).empty
    with pytest.raises(InvalidInput, match="state 'lost': expected one of"):
        jobs.list(["lost"])
    assert set(JOB_STATES) >= set(every["state"])
    # The ids alone, as the records list them.
    assert jobs.ids() == ids
    assert jobs.ids(["running", "failed"]) == ids[1:]
    assert jobs.ids(["succeeded"]) == []
    with pytest.raises(InvalidInput, match="state 'lost': expected one of"):
        jobs.ids(["lost"])


def test_a_name_has_one_live_job_even_past_the_check(jobs: JobStore) -> None:
    """The store itself refuses a second live job of a name: a writer that inserts
    without looking (as a racing one would, between its check and its insert) fails."""
    first = new_job(jobs)
    with pytest.raises(jobs_module.NameTaken, match=f"job {first} of that name is pending"):
        new_job(jobs)
    row = {"name": "resnet", "spec": "{}", "state": "running", "policy": "",
           "steps_total": 1.0, "steps_done": 0.0, "checkpoint_location": "",
           "created_ts": 0, "updated_ts": 0}
    with pytest.raises(IntegrityError), jobs.engine.begin() as conn:
        conn.execute(insert(jobs_module.jobs).values(row))
    with jobs.engine.begin() as conn:  # an ended one of the same name is fine
        conn.execute(insert(jobs_module.jobs).values({**row, "state": "failed"}))
    assert [j.state for j in jobs.find("resnet")] == ["pending", "failed"]
