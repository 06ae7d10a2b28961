"""What `migrate --dry-run` says a move loses for a job whose newest checkpoint version is
at step 0 (files it wrote before its first step: its hyperparameters and a log's header):
it starts over from step 0 wherever it goes, as a recovery does, so every step it made is
lost, said as no checkpoint, never as a checkpoint at step 0."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from costsched.amounts import usd
from costsched.store import PriceStore
from tests.costsched.service.test_move_lost_work_no_checkpoint import (  # noqa: F401 - fixture
    WEST_USD_PER_HOUR,
    _priced,
    unsaved,
)
from tests.costsched.service.test_move_shown_alike import NOW
from tests.costsched.service.test_status_scale import Instances


def _header_published(where: Path, tmp_path: Path) -> None:
    """The job's store holds one version: its hparams.yaml, written before any step."""
    from launchers.checkpoints import open_store

    hparams = tmp_path / "hparams.yaml"
    hparams.write_text("lr: 0.001\n")
    open_store(str(where)).publish(hparams)


def _reporting(launcher: Instances, job_id: int, step: int, checkpoint_step: int) -> None:
    name = f"m-{job_id}"
    launcher.states[name] = replace(launcher.states[name], step=step,
                                    checkpoint_step=checkpoint_step)


def test_a_version_at_step_0_is_no_checkpoint_to_a_move(
        unsaved: tuple[PriceStore, Instances, int, Path], tmp_path: Path) -> None:  # noqa: F811
    store, launcher, job_id, where = unsaved
    _header_published(where, tmp_path)
    _reporting(launcher, job_id, 720, 0)
    reason, move = _priced(store, launcher, job_id)
    hours = 720 / 0.01 / 3600  # all of its steps, at its plan's speed: 20 h
    assert move.lost_work_usd == pytest.approx(hours * WEST_USD_PER_HOUR)
    assert reason.endswith("; lost work: up to all 720 steps it made (no checkpoint: a move "
                           "starts it from step 0; none if the job checkpoints when "
                           "stopped): 20 h at its plan's 0.01 steps/s")
    assert f"lost work {usd(hours * WEST_USD_PER_HOUR)}" in reason
    assert "since its checkpoint" not in reason


def test_a_version_at_step_0_before_any_step_loses_nothing(
        unsaved: tuple[PriceStore, Instances, int, Path], tmp_path: Path) -> None:  # noqa: F811
    store, launcher, job_id, where = unsaved
    _header_published(where, tmp_path)
    _reporting(launcher, job_id, 0, 0)
    reason, move = _priced(store, launcher, job_id)
    assert move.lost_work_usd == 0
    assert reason.endswith("; lost work: none: no checkpoint: a move starts it from step 0, "
                           "and it has made no step yet")


def test_a_stored_checkpoint_step_0_with_an_empty_store_is_no_checkpoint_published(
        unsaved: tuple[PriceStore, Instances, int, Path]) -> None:  # noqa: F811
    store, launcher, job_id, _ = unsaved
    # its newest stop or notice stored step 0 as its checkpoint's; its instance says none
    store.jobs.record_progress(job_id, 360, at=NOW - timedelta(hours=2), checkpoint_step=0)
    name = f"m-{job_id}"
    launcher.states[name] = replace(launcher.states[name], step=720, checkpoint_step=None)
    reason, move = _priced(store, launcher, job_id)
    # The step its instance reports is stored as the move is priced (as a pass stores it):
    # one reading, at NOW, measures no speed, so its plan's prices the 720 steps: 20 h.
    assert move.lost_work_usd == pytest.approx(720 / 0.01 / 3600 * WEST_USD_PER_HOUR)
    assert reason.endswith("; lost work: all 720 steps it made (no checkpoint published): "
                           "20 h at its plan's 0.01 steps/s")
