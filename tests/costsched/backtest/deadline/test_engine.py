"""The replay engine's restart model: a planned stop keeps all progress (the job writes a
checkpoint on SIGTERM), a preemption goes back to the last periodic checkpoint."""

from __future__ import annotations

import numpy as np
import pytest

from costsched.backtest.deadline import DeadlineJob, simulate
from costsched.model import InvalidInput
from costsched.policies.deadline.base import PRIOR_SHARE, PRIOR_SPELL
from costsched.policies.deadline.past import past_spell_mean, past_spot_share
from tests.costsched.backtest.deadline.traces import Scripted, trace

TICK = 60
ZONES = ["us-east-1a", "us-east-1b"]  # one region: moves pay no egress


def finish_minutes(t, script: list[int], job: DeadlineJob) -> float:
    runs = simulate(t, Scripted(np.array([script])), job, np.array([0]), np.array([0]))
    return float(runs["finish_hours"].iloc[0] * 60)


def test_a_planned_move_keeps_the_work_since_the_last_checkpoint() -> None:
    # 10 minutes of work, checkpoints every 4; spot in zone 0 for ticks 0-6, then a move.
    job = DeadlineJob(10 / 60, 1.0, restart_minutes=1, checkpoint_minutes=4)
    t = trace(["1" * 80, "1" * 80], ZONES, TICK)
    moved = finish_minutes(t, [0] * 7 + [1] * 40, job)
    # Two restarts and the work, nothing done twice.
    assert moved == pytest.approx(job.work / 60 + 2 * job.restart_minutes)


def test_a_preemption_loses_the_work_since_the_last_checkpoint() -> None:
    job = DeadlineJob(10 / 60, 1.0, restart_minutes=1, checkpoint_minutes=4)
    t = trace(["1" * 7 + "0" * 73, "1" * 80], ZONES, TICK)
    preempted = finish_minutes(t, [0] * 7 + [1] * 40, job)
    # Six minutes of work done in zone 0 by tick 7; the checkpoint at 4 keeps 4 of them.
    assert preempted == pytest.approx(job.work / 60 + 2 * job.restart_minutes + 2)


def test_past_spell_mean_counts_only_spells_seen_to_end_by_the_tick() -> None:
    t = trace(["1101110"], ["us-east-1a"], TICK)
    mean = past_spell_mean(t.available, t.run_before * float(TICK))[0]
    assert mean[:2].tolist() == [PRIOR_SPELL] * 2  # the first spell ends at tick 2
    assert mean[2:6].tolist() == pytest.approx([(2 * TICK + PRIOR_SPELL) / 2] * 4)
    assert mean[6] == pytest.approx((2 * TICK + 3 * TICK + PRIOR_SPELL) / 3)


def test_past_spot_share_counts_ticks_with_spot_in_any_zone_before_the_tick() -> None:
    t = trace(["1100", "0110"], ZONES, TICK)  # spot somewhere in ticks 0-2, none in 3
    share = past_spot_share(t.available, float(TICK))
    prior = PRIOR_SHARE * PRIOR_SPELL
    seen = [0, 1, 2, 3]  # ticks before each tick; all of them with spot so far
    assert share.tolist() == pytest.approx(
        [(n * TICK + prior) / (n * TICK + PRIOR_SPELL) for n in seen])
    later = past_spot_share(np.array([[True, True, True, False, False]]), float(TICK))
    assert later[4] == pytest.approx((3 * TICK + prior) / (4 * TICK + PRIOR_SPELL))


def test_checkpoint_writes_lengthen_the_work_and_the_interval() -> None:
    job = DeadlineJob(1.0, 2.0, restart_minutes=1, checkpoint_minutes=20,
                      checkpoint_write_seconds=10)
    assert job.checkpoint == 20 * 60 + 10
    assert job.work == 3600 + 2 * 10  # checkpoints after 20 and 40 minutes, not at the end
    assert DeadlineJob(1.0, 2.0, 1, 20).work == 3600


def test_runs_of_several_deadlines_replay_as_each_would_alone() -> None:
    from costsched.policies.deadline import SpotAnywhere, UniformProgress

    rng = np.random.default_rng(5)
    t = trace(rng.random((2, 400)) < 0.7, ZONES, TICK)
    starts, homes = np.array([0, 0, 50, 50]), np.array([0, 1, 0, 1])
    for policy in (SpotAnywhere, UniformProgress):
        alone = [simulate(t, policy(), DeadlineJob(2.0, d, 3, 10), starts, homes)
                 for d in (2.5, 4.0)]
        together = simulate(t, policy(), DeadlineJob(2.0, 4.0, 3, 10), np.tile(starts, 2),
                            np.tile(homes, 2), np.repeat([2.5, 4.0], 4))
        for i, frame in enumerate(alone):
            part = together.iloc[4 * i:4 * i + 4].reset_index(drop=True)
            assert part.equals(frame)


def test_runs_of_several_restarts_and_deadlines_replay_as_each_would_alone() -> None:
    from costsched.policies.deadline import SpotAnywhere, SpotRisk, UniformProgress

    rng = np.random.default_rng(6)
    t = trace(rng.random((2, 400)) < 0.7, ZONES, TICK)
    starts, homes = np.array([0, 0, 50, 50]), np.array([0, 1, 0, 1])
    settings = [(2.5, 3.0), (4.0, 3.0), (2.5, 12.0), (4.0, 12.0)]
    for policy in (SpotAnywhere, SpotRisk, UniformProgress):
        alone = [simulate(t, policy(), DeadlineJob(2.0, d, r, 10), starts, homes)
                 for d, r in settings]
        together = simulate(t, policy(), DeadlineJob(2.0, 4.0, 12, 10), np.tile(starts, 4),
                            np.tile(homes, 4), np.repeat([d for d, _ in settings], 4),
                            np.repeat([r for _, r in settings], 4))
        for i, frame in enumerate(alone):
            part = together.iloc[4 * i:4 * i + 4].reset_index(drop=True)
            assert part.equals(frame), settings[i]


def test_with_no_history_a_run_sees_only_its_own_ticks_from_its_policy_prior() -> None:
    from costsched.policies.deadline import SpotAnywhere
    from costsched.policies.deadline.base import MarketPrior, spell_mean, spot_share


    # Zone a had a 3-tick spell that ended before the run's start (tick 5), b none; in
    # the run a has spot at its ticks 1-2 (ended at tick 3), b throughout.
    t = trace(["11100" + "0110" + "0" * 50, "00000" + "1" * 54], ZONES, TICK)
    prior = MarketPrior(0.8, 1200.0, 600.0, 1800.0)
    seen: dict[str, list] = {}

    class Watched(SpotAnywhere):
        def choose(self, state, market):  # noqa: ANN001, ANN201
            seen.setdefault(self.label, []).append(market)
            return super().choose(state, market)

    job = DeadlineJob(0.5, 1.0, restart_minutes=1, checkpoint_minutes=5)
    for label in ("full", "none"):
        policy = Watched()
        policy.label, policy.prior = label, prior
        runs = simulate(t, policy, job, np.array([5]), np.array([0]), history=label)
        assert runs["met"].all()
    full, none = seen["full"], seen["none"]
    # The first tick: with the trace's past, a's ended spell; with none, the prior alone.
    assert full[0].spell_mean[0, 0] == pytest.approx(spell_mean(3 * TICK, 1, prior.spell))
    assert none[0].spell_mean[0, 0] == prior.spell and none[0].spot_share[0] == prior.share
    assert full[0].spot_share[0] == pytest.approx(spot_share(3 * TICK, 5 * TICK, prior))
    # Three ticks in: the run's own ticks (spot somewhere, in b, in all three; a's spell
    # of its ticks 1 and 2 seen to end).
    assert none[3].spot_share[0] == pytest.approx(spot_share(3 * TICK, 3 * TICK, prior))
    assert none[3].spell_mean[0, 0] == pytest.approx(spell_mean(2 * TICK, 1, prior.spell))
    # Availability, prices and how long spot has held at a tick are the same either way.
    for a, b in zip(full, none, strict=False):
        assert (a.spot_available == b.spot_available).all()
    with pytest.raises(InvalidInput, match="history 'some': expected one of full, none"):
        simulate(t, SpotAnywhere(), job, np.array([5]), np.array([0]), history="some")
