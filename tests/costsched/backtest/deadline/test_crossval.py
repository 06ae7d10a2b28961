"""Leave-one-set-out: constants chosen on the other recordings only, judged on the held-out
one; the scores of small synthetic sets against the optimum and uniform progress."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from costsched.backtest.deadline import DeadlineJob, optimum, simulate
from costsched.backtest.deadline.crossval import (
    Case,
    Scorer,
    TraceSet,
    leave_one_set_out,
    score_sets,
    set_metrics,
)
from costsched.model import InvalidInput
from costsched.policies.deadline import Greedy, SpotAnywhere, UniformProgress
from tests.costsched.backtest.deadline.traces import trace

ZONES = ["us-east-1a", "us-west-2a"]


def scores(table: dict[tuple[str, str], dict[str, float]]) -> pd.DataFrame:
    """(set, recording) -> {candidate: vs_optimum} as `score_sets` rows."""
    rows = []
    for (name, recording), by_candidate in table.items():
        for candidate, gap in by_candidate.items():
            rows.append({"set": name, "recording": recording, "candidate": candidate,
                         "vs_optimum": gap, "worst_vs_optimum": gap, "vs_uniform": -gap,
                         "worst_vs_uniform": -gap, "misses": 0, "region_moves": 0.0,
                         "egress_usd": 0.0, "runs": 1})
    return pd.DataFrame(rows)


def test_each_fold_chooses_on_the_other_recordings_only() -> None:
    # On its own set each candidate "a" and "b" would be chosen where it is best; the
    # folds must pick by the other recordings: the held-out set's own scores never count.
    table = scores({
        ("A1", "rec-A"): {"a": 0.50, "b": 0.10},  # b best here...
        ("A2", "rec-A"): {"a": 0.50, "b": 0.10},  # ...and on A's other set
        ("B", "rec-B"): {"a": 0.10, "b": 0.30},
        ("C", "rec-C"): {"a": 0.12, "b": 0.30},
    })
    folds = leave_one_set_out(table).set_index("set")
    # Holding out A (both its sets at once): a is best on B and C.
    assert folds.loc["A1", "chosen"] == folds.loc["A2", "chosen"] == "a"
    assert folds.loc["A1", "vs_optimum"] == 0.50  # judged on A: the choice's own score
    assert folds.loc["A1", "train_vs_optimum"] == pytest.approx((0.10 + 0.12) / 2)
    # Holding out B: on A1, A2 and C, b averages (0.1 + 0.1 + 0.3) / 3 < a's 0.373.
    assert folds.loc["B", "chosen"] == "b" and folds.loc["B", "vs_optimum"] == 0.30
    assert folds.loc["C", "chosen"] == "b"
    assert set(folds["recording"]) == {"rec-A", "rec-B", "rec-C"}


def test_ties_go_to_the_first_candidate_and_one_recording_is_refused() -> None:
    table = scores({("A", "a"): {"x": 0.2, "y": 0.2}, ("B", "b"): {"x": 0.1, "y": 0.1}})
    assert leave_one_set_out(table)["chosen"].tolist() == ["x", "x"]
    with pytest.raises(InvalidInput, match="at least two recordings"):
        leave_one_set_out(scores({("A", "a"): {"x": 0.2}, ("B", "a"): {"x": 0.1}}))


def small_sets() -> list[TraceSet]:
    rng = np.random.default_rng(3)
    sets = []
    for name, p in (("steady", 0.9), ("scarce", 0.5)):
        t = trace(np.repeat(rng.random((2, 40)) < p, 6, axis=1), ZONES, 60)
        sets.append(TraceSet(name, name, (Case.spread(
            f"{name} case", t, 3, job_hours=2.0, deadlines=(2.5, 3.0), restarts=(3.0,),
            checkpoint_minutes=10.0, optimum_states=None),)))
    return sets


def test_scores_compare_each_run_with_its_optimum_and_uniform_progress() -> None:
    sets, scorer = small_sets(), Scorer()
    case = sets[0].cases[0]
    runs = scorer.runs(case, SpotAnywhere())
    assert len(runs) == len(case.starts) * len(ZONES) * 2  # starts x homes x deadlines
    # The same runs replayed alone: the engine's costs, the exact optimum of each start
    # and uniform progress from the same home.
    job = DeadlineJob(2.0, 2.5, 3.0, 10.0)
    starts = np.repeat(case.starts, 2)
    homes = np.tile([0, 1], len(case.starts))
    first = runs[runs["deadline_hours"] == 2.5]
    alone = simulate(case.trace, SpotAnywhere(), job, starts, homes, history="none")
    assert first["cost_usd"].tolist() == pytest.approx(alone["cost_usd"].tolist())
    assert first["optimum_usd"].tolist() == pytest.approx(
        np.repeat(optimum(case.trace, job, list(case.starts)), 2).tolist())
    uniform = simulate(case.trace, UniformProgress(), job, starts, homes)
    assert first["uniform_usd"].tolist() == pytest.approx(uniform["cost_usd"].tolist())
    assert (runs["cost_usd"] >= runs["optimum_usd"] - 1e-9).all()  # the exact optimum

    table = score_sets(sets, {"spot-anywhere": SpotAnywhere, "greedy": Greedy}, scorer)
    assert list(table.columns[:3]) == ["set", "recording", "candidate"] and len(table) == 4
    assert (table["worst_vs_optimum"] >= table["vs_optimum"]).all()
    assert (table["vs_optimum"] >= 0).all() and (table["misses"] == 0).all()
    one = table.set_index(["set", "candidate"]).loc[("steady", "spot-anywhere")]
    metrics = set_metrics(scorer.runs(case, SpotAnywhere()).assign(case=case.name))
    assert one["vs_optimum"] == pytest.approx(metrics["vs_optimum"])
    # Greedy stays in its home zone: never cheaper than spot-anywhere over both zones.
    by = table.set_index(["set", "candidate"])["vs_optimum"]
    assert by[("steady", "greedy")] >= by[("steady", "spot-anywhere")]


def test_a_case_starts_only_where_its_deadline_fits() -> None:
    t = trace(["1" * 100] * 2, ZONES, 60)
    case = Case.spread("c", t, 5, job_hours=1.0, deadlines=(1.5,), restarts=(3.0,),
                       checkpoint_minutes=10.0)
    assert case.starts[0] == 0 and case.starts[-1] == 100 - 90 and len(case.starts) == 5
    with pytest.raises(InvalidInput, match="no period of the trace holds the deadline"):
        Case.spread("c", t, 5, job_hours=1.0, deadlines=(2.0,), restarts=(3.0,),
                    checkpoint_minutes=10.0)
    with pytest.raises(InvalidInput, match="outlasts the trace"):
        Case("c", t, 1.0, (1.5,), (3.0,), 10.0, starts=(50,))
