"""A planned move of a running job is priced with the work it really loses: none when the
job was seen to checkpoint when stopped, else the steps since its newest checkpoint at the
speed the rest of it runs at; the decision model's assumption (half its checkpoint
interval) only where the store knows neither."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from costsched.amounts import usd
from costsched.model import RECOVERY_NOTE
from costsched.optimize.decision import Overheads
from costsched.service import jobs as service
from costsched.service.jobs.lost_work import lost_works
from costsched.store import PriceStore
from tests.costsched.service.test_move_shown_alike import NOW, OVERHEADS, running  # noqa: F401
from tests.costsched.service.test_status_scale import Instances

STEPS_PER_SECOND = 0.01  # the spec's speed on a V100, its plan's
MEASURED_STEPS_PER_SECOND = 0.05
WEST_USD_PER_HOUR = 1.0  # where the move goes (`running`)


def _advice(store: PriceStore, launcher: Instances, job_id: int):  # noqa: ANN202
    [advice] = service.migrate(store, launcher, job_id, dry_run=True, at=NOW,
                               overheads=OVERHEADS)
    assert advice.decision.moves and advice.decision.move is not None
    assert advice.decision.choice[1] == "us-west-2"
    return advice


def test_a_move_loses_the_steps_since_the_job_s_checkpoint_at_its_measured_speed(
        running: tuple[PriceStore, Instances, int]) -> None:  # noqa: F811
    store, launcher, job_id = running
    # Its newest checkpoint is at step 600; it stands at step 720, reached 4 h into the
    # run it is on (placed 6 h before NOW): measured at 720 / 4 h = 0.05 steps/s.
    store.jobs.record_progress(job_id, 720, at=NOW - timedelta(hours=2), checkpoint_step=600)
    advice = _advice(store, launcher, job_id)
    hours = 120 / MEASURED_STEPS_PER_SECOND / 3600
    assert advice.decision.move.lost_work_usd == pytest.approx(hours * WEST_USD_PER_HOUR)
    assert advice.reason.endswith("; lost work: 120 steps since its checkpoint at step 600: "
                                  "40 min at 0.05 steps/s")
    # The figure the line shows is the one priced.
    assert f"lost work {usd(hours * WEST_USD_PER_HOUR)}" in advice.reason


def test_at_its_plan_s_speed_where_none_is_measured_it_says_so(
        running: tuple[PriceStore, Instances, int]) -> None:  # noqa: F811
    store, _, job_id = running
    store.jobs.record_progress(job_id, 720, at=NOW - timedelta(hours=2), checkpoint_step=600)
    [lost] = lost_works(store, [(job_id, _resolved(store, job_id), None)])
    assert lost is not None
    assert lost.hours == pytest.approx(120 / STEPS_PER_SECOND / 3600)
    assert lost.line() == ("lost work: 120 steps since its checkpoint at step 600: 3.3 h at "
                           "its plan's 0.01 steps/s")


def test_a_job_seen_to_checkpoint_when_stopped_loses_nothing(
        running: tuple[PriceStore, Instances, int]) -> None:  # noqa: F811
    store, launcher, job_id = running
    # Stopped at step 720 with its checkpoint at step 720, then started again.
    store.jobs.record_progress(job_id, 720, at=NOW - timedelta(hours=8), checkpoint_step=720)
    store.jobs.record_steps({job_id: 900}, at=NOW - timedelta(hours=1))
    advice = _advice(store, launcher, job_id)
    assert advice.decision.move.lost_work_usd == 0
    assert "lost work: none, the job checkpoints when stopped" in advice.reason
    assert "lost work $0" in advice.reason


def test_a_notice_that_lost_no_step_counts_as_a_checkpoint_when_stopped(
        running: tuple[PriceStore, Instances, int]) -> None:  # noqa: F811
    store, launcher, job_id = running
    store.jobs.note(job_id, RECOVERY_NOTE, "instance m-0: resumes from step 600 (its "
                    "checkpoint's): no step lost", at=NOW - timedelta(hours=7))
    [lost] = lost_works(store, [(job_id, _resolved(store, job_id), None)])
    assert lost is not None and lost.hours == 0
    # A later stop that lost steps says otherwise: the newest word counts.
    store.jobs.record_progress(job_id, 720, at=NOW - timedelta(hours=2), checkpoint_step=600)
    [lost] = lost_works(store, [(job_id, _resolved(store, job_id), None)])
    assert lost is not None and lost.hours == pytest.approx(120 / STEPS_PER_SECOND / 3600)


def test_a_preemption_without_notice_that_lost_steps_leaves_a_notice_s_word(
        running: tuple[PriceStore, Instances, int]) -> None:  # noqa: F811
    store, launcher, job_id = running
    # Its first preemption came with a notice and lost nothing (it saved on SIGTERM); a
    # later one took it away at once (no SIGTERM: nothing asked it to save) and lost the
    # steps since its checkpoint, as it would have for any job: no word on a stop.
    store.jobs.note(job_id, RECOVERY_NOTE, "instance m-0: resumes from step 191 (its "
                    "checkpoint's): no step lost", at=NOW - timedelta(hours=7))
    store.jobs.note(job_id, RECOVERY_NOTE, "instance m-1: resumes from step 1,400 (its "
                    "checkpoint's): 145 steps lost", at=NOW - timedelta(hours=5))
    _reporting(launcher, job_id, 1994, 1800)
    advice = _advice(store, launcher, job_id)
    assert advice.decision.move.lost_work_usd == 0
    assert advice.reason.endswith("; lost work: none, the job checkpoints when stopped")


def test_without_a_known_checkpoint_the_model_s_assumption_stands(
        running: tuple[PriceStore, Instances, int]) -> None:  # noqa: F811
    store, launcher, job_id = running
    assert lost_works(store, [(job_id, _resolved(store, job_id), None)]) == [None]
    advice = _advice(store, launcher, job_id)
    assumed = Overheads().lost_work_hours(0.5) * WEST_USD_PER_HOUR
    assert advice.decision.move.lost_work_usd == pytest.approx(assumed)
    assert "lost work:" not in advice.reason


def test_a_checkpoint_published_since_the_stored_one_leaves_the_assumption(
        running: tuple[PriceStore, Instances, int], tmp_path: Path) -> None:  # noqa: F811
    from launchers.checkpoints import open_store

    store, _, job_id = running
    where = tmp_path / "ckpt"
    store.jobs.record_progress(job_id, 720, at=NOW - timedelta(hours=8), checkpoint_step=600,
                               checkpoint_location=str(where))
    # Published during the run it is on now (placed 6 h before NOW): its step not stored.
    state = tmp_path / "state.npz"
    state.write_bytes(b"weights")
    open_store(str(where)).publish(state)
    assert lost_works(store, [(job_id, _resolved(store, job_id), None)]) == [None]


def _resolved(store: PriceStore, job_id: int):  # noqa: ANN202
    from costsched.jobspec import parse, resolve
    from costsched.throughput import ThroughputTable

    spec = store.jobs.get(job_id).spec["spec"]
    return resolve(parse(spec, "big.yaml"), ThroughputTable(), NOW)


def test_a_move_asked_for_is_priced_with_the_same_lost_work(
        running: tuple[PriceStore, Instances, int]) -> None:  # noqa: F811
    store, launcher, job_id = running
    store.jobs.record_progress(job_id, 720, at=NOW - timedelta(hours=8), checkpoint_step=720)
    [advice] = service.migrate(store, launcher, job_id, dry_run=True, at=NOW,
                               overheads=OVERHEADS, to="aws us-west-2a p3.2xlarge spot")
    assert advice.decision.move is not None and advice.decision.move.lost_work_usd == 0
    assert advice.reason.endswith("; lost work: none, the job checkpoints when stopped")


# --- what the pass sees of its instance ------------------------------------------------------


def _reporting(launcher: Instances, job_id: int, step: int, saved: int | None) -> None:
    """Its instance reports `step` and its newest checkpoint's step (`saved`)."""
    from dataclasses import replace

    name = f"m-{job_id}"
    launcher.states[name] = replace(launcher.states[name], step=step, checkpoint_step=saved)


def test_a_job_never_stopped_loses_the_steps_since_the_checkpoint_its_instance_reports(
        running: tuple[PriceStore, Instances, int]) -> None:  # noqa: F811
    store, launcher, job_id = running
    # It stands at step 720, reached 4 h into the run it is on (measured at 0.05 steps/s),
    # its agent's newest checkpoint at step 708: never stopped, nothing stored of it.
    store.jobs.record_progress(job_id, 720, at=NOW - timedelta(hours=2))
    _reporting(launcher, job_id, 720, 708)
    advice = _advice(store, launcher, job_id)
    hours = 12 / MEASURED_STEPS_PER_SECOND / 3600
    assert advice.decision.move.lost_work_usd == pytest.approx(hours * WEST_USD_PER_HOUR)
    assert advice.reason.endswith("; lost work: up to 12 steps since its checkpoint at step 708 "
                                  "(none if the job checkpoints when stopped): "
                                  "4 min at 0.05 steps/s")
    assert "lost work $0.0667," in advice.reason  # at the line's one precision
    # Far below the assumption (half the 30-min interval) it replaces.
    assumed = Overheads().lost_work_hours(0.5) * WEST_USD_PER_HOUR
    assert advice.decision.move.lost_work_usd < assumed / 3


def test_the_instance_s_checkpoint_at_its_step_loses_nothing(
        running: tuple[PriceStore, Instances, int]) -> None:  # noqa: F811
    store, launcher, job_id = running
    _reporting(launcher, job_id, 600, 600)
    advice = _advice(store, launcher, job_id)
    assert advice.decision.move.lost_work_usd == 0
    assert advice.reason.endswith("; lost work: none since its checkpoint at step 600")


def test_a_log_that_shows_a_checkpoint_when_stopped_still_says_none(
        running: tuple[PriceStore, Instances, int]) -> None:  # noqa: F811
    store, launcher, job_id = running
    store.jobs.record_progress(job_id, 720, at=NOW - timedelta(hours=8), checkpoint_step=720)
    _reporting(launcher, job_id, 900, 750)
    advice = _advice(store, launcher, job_id)
    assert advice.decision.move.lost_work_usd == 0
    assert advice.reason.endswith("; lost work: none, the job checkpoints when stopped")


def test_the_instance_s_figures_come_before_the_checkpoint_stored_at_a_stop(
        running: tuple[PriceStore, Instances, int]) -> None:  # noqa: F811
    store, launcher, job_id = running
    store.jobs.record_progress(job_id, 720, at=NOW - timedelta(hours=2), checkpoint_step=600)
    _reporting(launcher, job_id, 720, 700)
    advice = _advice(store, launcher, job_id)
    assert "; lost work: 20 steps since its checkpoint at step 700: " in advice.reason


def test_an_instance_that_reports_no_checkpoint_step_keeps_the_assumption(
        running: tuple[PriceStore, Instances, int]) -> None:  # noqa: F811
    store, launcher, job_id = running
    _reporting(launcher, job_id, 612, None)
    advice = _advice(store, launcher, job_id)
    assumed = Overheads().lost_work_hours(0.5) * WEST_USD_PER_HOUR
    assert advice.decision.move.lost_work_usd == pytest.approx(assumed)
    assert "lost work:" not in advice.reason


def test_an_instance_that_cannot_be_read_keeps_the_assumption(
        running: tuple[PriceStore, Instances, int]) -> None:  # noqa: F811
    store, launcher, job_id = running

    def unreadable(instance_id: str):  # noqa: ANN202
        raise ConnectionError("the cloud does not answer")

    launcher.status = unreadable  # type: ignore[method-assign]
    advice = _advice(store, launcher, job_id)
    assumed = Overheads().lost_work_hours(0.5) * WEST_USD_PER_HOUR
    assert advice.decision.move.lost_work_usd == pytest.approx(assumed)


def test_a_move_asked_for_reads_the_instance_too(
        running: tuple[PriceStore, Instances, int]) -> None:  # noqa: F811
    store, launcher, job_id = running
    _reporting(launcher, job_id, 600, 600)
    [advice] = service.migrate(store, launcher, job_id, dry_run=True, at=NOW,
                               overheads=OVERHEADS, to="aws us-west-2a p3.2xlarge spot")
    assert advice.decision.move is not None and advice.decision.move.lost_work_usd == 0
    assert advice.reason.endswith("; lost work: none since its checkpoint at step 600")


def test_a_move_at_a_budget_s_cap_is_decided_with_what_the_instance_reports(
        running: tuple[PriceStore, Instances, int],  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    from costsched.service.jobs.cap_move import move_at_cap
    from costsched.service.jobs.checkpoint_seen import Reported
    from costsched.service.jobs.decider import BudgetDecider
    from costsched.service.jobs.runs import _runs

    store, launcher, job_id = running
    _reporting(launcher, job_id, 720, 708)
    seen, real = [], BudgetDecider.decide
    monkeypatch.setattr(BudgetDecider, "decide", lambda self, job, market, now: (
        seen.append(job.reported) or real(self, job, market, now)))
    why = move_at_cap(store, launcher, _runs(store, [job_id])[job_id], "its own budget",
                      "its forecast passes it", 0.01, NOW, OVERHEADS)
    assert seen == [Reported(720.0, 708.0)]
    assert isinstance(why, str)  # nothing finishes it within $0.01: not moved


def test_the_step_its_instance_reports_is_the_one_the_figures_and_the_note_stand_on(
        running: tuple[PriceStore, Instances, int]) -> None:  # noqa: F811
    """Its instance reports step 600 before any pass stored a step of it (a job that began
    reporting a moment ago): the rest is priced from that step, as its lost work is, and
    `migrate` does not say it has reported no step."""
    from costsched.service import views

    store, launcher, job_id = running
    _reporting(launcher, job_id, 600, 600)
    advice = _advice(store, launcher, job_id)
    assert advice.reason.endswith("; lost work: none since its checkpoint at step 600")
    assert views.unreported_totals(store, [advice]) == {}
    assert store.jobs.get(job_id).steps_done == 600  # stored, as a pass stores it
    # Priced as a store that had the step already prices it: 3,400 steps left, not 4,000.
    store.jobs.record_steps({job_id: 600}, at=NOW)
    assert _advice(store, launcher, job_id).stay_usd == pytest.approx(advice.stay_usd)
