"""What a move of a running job loses where its checkpoint store holds no checkpoint: it
starts over from step 0 wherever it goes, so every step it made is lost (as its instance
reports them; else at least those of its last reading), or, where it reports no step, at
most all its run did since it was placed. Where what it loses is not known, the move is
priced with the decision model's assumption, and its line says so, with the keys that set
it: in `migrate --dry-run` (the daemon's re-plan and the watch decide alike) and in
`plan --explain`."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from costsched.amounts import usd
from costsched.migration.launcher import Instance
from costsched.optimize.decision import MovePrice, Overheads
from costsched.service import jobs as service
from costsched.store import PriceStore
from tests.costsched.service.test_jobs import offer
from tests.costsched.service.test_move_shown_alike import EAST, NOW, OVERHEADS, SPEC
from tests.costsched.service.test_status_scale import Instances
from tests.real_jobs import world  # noqa: F401 - a fixture by name

WEST_USD_PER_HOUR = 1.0  # the best other offering's price
ASSUMED = ("lost work assumed: 15 min, half the checkpoint interval of 30 min "
           "(checkpoint.interval_minutes; [migration] lost_work_minutes sets another "
           "figure): the step of its newest checkpoint is not known")


@pytest.fixture()
def unsaved(tmp_path: Path):  # noqa: ANN201
    """A job running for 6 h in us-east-1a ($3/h; us-west-2a at $1/h), whose checkpoint
    store (a folder) holds nothing."""
    import pandas as pd

    store = PriceStore(f"sqlite:///{tmp_path / 'jobs.sqlite'}")
    at = NOW - timedelta(hours=1)
    west = dict(offer("us-west-2a", WEST_USD_PER_HOUR, at), region="us-west-2")
    store.ingest(pd.DataFrame([offer("us-east-1a", 3.0, at), west]))
    launcher = Instances()
    start = NOW - timedelta(hours=6)
    where = tmp_path / "ckpt"
    where.mkdir()
    job_id = store.jobs.create("big", {"spec": SPEC, "source": "big.yaml",
                                       "launcher": launcher.name},
                               4000, at=start, policy="dynamic-aware",
                               checkpoint_location=str(where))
    store.jobs.transition(job_id, "running", at=start)
    store.jobs.place(job_id, EAST, gpu_model="V100", gpu_count=1, at=start, usd_per_hour=3.0,
                     reason="launch", instance=f"m-{job_id}")
    launcher.states[f"m-{job_id}"] = Instance(f"m-{job_id}", job_id, "a0", EAST, "running")
    yield store, launcher, job_id, where
    store.dispose()


def _priced(store: PriceStore, launcher: Instances, job_id: int,
            overheads: Overheads = OVERHEADS) -> tuple[str, MovePrice]:
    """`migrate --dry-run`'s reason and the move it prices (its own, or the best other a
    stay weighed)."""
    [advice] = service.migrate(store, launcher, job_id, dry_run=True, at=NOW,
                               overheads=overheads)
    d = advice.decision
    move = d.move if d.move is not None else d.other[2] if d.other is not None else None
    assert move is not None, advice.reason
    return advice.reason, move


def _reporting(launcher: Instances, job_id: int, step: int | None) -> None:
    name = f"m-{job_id}"
    launcher.states[name] = replace(launcher.states[name], step=step, checkpoint_step=None)


def test_a_job_with_no_checkpoint_loses_every_step_its_instance_reports(
        unsaved: tuple[PriceStore, Instances, int, Path]) -> None:
    store, launcher, job_id, _ = unsaved
    _reporting(launcher, job_id, 720)
    reason, move = _priced(store, launcher, job_id)
    hours = 720 / 0.01 / 3600  # all of its steps, at its plan's speed: 20 h
    assert move.lost_work_usd == pytest.approx(hours * WEST_USD_PER_HOUR)
    assert reason.endswith("; lost work: up to all 720 steps it made (no checkpoint "
                           "published; none if the job checkpoints when stopped): "
                           "20 h at its plan's 0.01 steps/s")
    assert f"lost work {usd(hours * WEST_USD_PER_HOUR)}" in reason  # the figure priced
    assert "lost work assumed" not in reason  # (its restart is: a cloud's boot)


def test_where_its_instance_is_not_read_at_least_its_last_reading_is_lost(
        unsaved: tuple[PriceStore, Instances, int, Path]) -> None:
    store, launcher, job_id, _ = unsaved
    store.jobs.record_steps({job_id: 360}, at=NOW - timedelta(hours=1))

    def unreadable(instance_id: str):  # noqa: ANN202
        raise ConnectionError("the cloud does not answer")

    launcher.status = unreadable  # type: ignore[method-assign]
    reason, move = _priced(store, launcher, job_id)
    assert ("; lost work: at least 360 steps, all it made by its last reading (no "
            "checkpoint published), unless the job checkpoints when stopped: ") in reason
    assert move.lost_work_usd > Overheads().lost_work_hours(0.5) * WEST_USD_PER_HOUR


def test_a_job_that_reports_no_step_loses_at_most_its_run_so_far(
        unsaved: tuple[PriceStore, Instances, int, Path]) -> None:
    store, launcher, job_id, _ = unsaved
    reason, move = _priced(store, launcher, job_id)
    assert move.lost_work_usd == pytest.approx(6 * WEST_USD_PER_HOUR)  # placed 6 h ago
    assert reason.endswith("; lost work: at most 6 h, all its run did since it was placed "
                           "at 2026-03-02 06:00 UTC (no checkpoint published, and it "
                           "reports no step)")


def test_a_job_at_step_0_with_no_checkpoint_loses_nothing(
        unsaved: tuple[PriceStore, Instances, int, Path]) -> None:
    store, launcher, job_id, _ = unsaved
    _reporting(launcher, job_id, 0)
    reason, move = _priced(store, launcher, job_id)
    assert move.lost_work_usd == 0
    assert reason.endswith("; lost work: none: no checkpoint published, and it has made no "
                           "step yet")


def test_a_checkpoint_whose_step_is_not_known_keeps_the_assumption_said_as_one(
        unsaved: tuple[PriceStore, Instances, int, Path], tmp_path: Path) -> None:
    from launchers.checkpoints import open_store

    store, launcher, job_id, where = unsaved
    state = tmp_path / "state.npz"
    state.write_bytes(b"weights")
    open_store(str(where)).publish(state)
    _reporting(launcher, job_id, 720)
    reason, move = _priced(store, launcher, job_id)
    assert move.lost_work_usd == pytest.approx(0.25 * WEST_USD_PER_HOUR)
    assert reason.endswith("; " + ASSUMED)


def test_the_assumption_set_in_the_configuration_is_said_with_its_key(
        unsaved: tuple[PriceStore, Instances, int, Path]) -> None:
    store, launcher, job_id, _ = unsaved
    store.jobs.relocate(job_id, "", at=NOW - timedelta(hours=5), detail="no store")
    reason, move = _priced(store, launcher, job_id,
                           Overheads(overlap_minutes=3.0, lost_work_minutes=6.0))
    assert move.lost_work_usd == pytest.approx(0.1 * WEST_USD_PER_HOUR)
    assert reason.endswith("; lost work assumed: 6 min ([migration] lost_work_minutes): the "
                           "step of its newest checkpoint is not known")


def test_plan_explain_says_its_lost_work_is_assumed(cli, tmp_path: Path,  # noqa: ANN001
                                                    unsaved) -> None:  # noqa: ANN001
    store = unsaved[0]
    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump(SPEC))
    out = cli("plan", path, "--at", NOW.isoformat(), "--db", store.url,
              "--explain", "aws us-west-2a p3.2xlarge spot", "--from",
              "aws us-east-1a p3.2xlarge spot", "--json")
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    [line] = [x for x in doc["explain"] if x.startswith("a move here from ")]
    assert f"lost work {usd(doc['move']['lost_work_usd'])}" in line
    assert doc["move"]["lost_work_usd"] == pytest.approx(0.25 * WEST_USD_PER_HOUR)
    assert doc["explain"][doc["explain"].index(line) + 1] == (
        "lost work assumed: 15 min, half the checkpoint interval of 30 min "
        "(checkpoint.interval_minutes; [migration] lost_work_minutes sets another figure): "
        "before it runs, the steps a move loses are not known")


# --- a real job of the local launcher ---------------------------------------------------------

NEVER_SAVES = """\
import os, time
progress = os.environ["COSTSCHED_PROGRESS_FILE"]
with open(progress + ".tmp", "w") as f:
    f.write("30\\n")
os.replace(progress + ".tmp", progress)
time.sleep(300)
"""


def test_a_real_job_that_never_saves_loses_all_it_made(world) -> None:  # noqa: ANN001, F811
    from datetime import datetime, timezone

    from tests.real_jobs import launch, set_prices, wait_for

    store, launcher, _ = world
    job, instance = launch(world, NEVER_SAVES)
    wait_for(lambda: launcher.status(instance).step == 30)
    assert launcher.status(instance).checkpoint_step is None
    set_prices(store, {"us-east-1a": 3.0, "us-east-1b": 0.5}, datetime.now(timezone.utc))
    [advice] = service.migrate(store, launcher, job.id, dry_run=True)
    d = advice.decision
    move = d.move if d.move is not None else d.other[2]
    # Not measured yet: at its plan's 0.01 steps/s, 30 steps are 50 min.
    assert advice.reason.endswith("; lost work: up to all 30 steps it made (no checkpoint "
                                  "published; none if the job checkpoints when stopped): "
                                  "50 min at its plan's 0.01 steps/s")
    assert f"lost work {usd(move.lost_work_usd)}" in advice.reason
