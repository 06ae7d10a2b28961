"""service.backtest: the baselines, shared instances, sweeps and the documented JSON."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from costsched.model import InvalidInput
from costsched.service.backtest import (
    JSON_SCHEMA,
    RUN_KEYS,
    SUMMARY_KEYS,
    TOP_KEYS,
    backtest,
    json_payload,
)
from costsched.store import PriceStore

WINDOW = {"first_start": "2020-02-24", "starts": 2, "every_hours": 48.0}


def test_both_baselines_are_always_replayed(recorded_store: PriceStore) -> None:
    seen: list[tuple[int, int]] = []
    result = backtest(recorded_store, models=["A3C"], policies=["dynamic"],
                      progress=lambda done, total: seen.append((done, total)), **WINDOW)
    assert list(dict.fromkeys(result.results["policy"])) == ["static", "cheapest-hourly",
                                                             "dynamic"]
    assert seen[-1] == (2 * 3, 2 * 3) == (result.runs, result.runs)
    summary = result.summary.set_index("policy")
    assert summary.loc["cheapest-hourly", "reduction_vs_cheapest_hourly"] == pytest.approx(1)
    assert summary.loc["static", "reduction"] == pytest.approx(1)


def test_shared_instances_only_add_choices(recorded_store: PriceStore) -> None:
    kw = {"models": ["Transformer (batch size 256)"], "policies": ["multi-gpu", "oracle"],
          "regions": ["us-west-2"], **WINDOW}
    whole = backtest(recorded_store, **kw).results.set_index(["start", "policy"])["cost_usd"]
    shared = backtest(recorded_store, share_instances=True, **kw)
    costs = shared.results.set_index(["start", "policy"])["cost_usd"]
    assert shared.share_instances and json_payload(shared)["share_instances"] is True
    # Baselines rent whole instances: unchanged; the others can only get cheaper.
    for policy in ("static", "cheapest-hourly"):
        assert costs.xs(policy, level="policy").tolist() == whole.xs(
            policy, level="policy").tolist()
    for policy in ("multi-gpu", "oracle"):
        assert (costs.xs(policy, level="policy") <= whole.xs(policy, level="policy")
                * (1 + 1e-9)).all()
    assert (costs.xs("multi-gpu", level="policy") < whole.xs("multi-gpu", level="policy")).any()


def test_identical_sweep_jobs_are_replayed_once(recorded_store: PriceStore,
                                                tmp_path: Path) -> None:
    spec = tmp_path / "sweep.yaml"
    spec.write_text("name: s\nmodel: A3C\nhours: 24\nreference_gpu: V100\n"
                    "sweep:\n  LR: [1, 2, 3, 4]\n  SEED: [1, 2, 3]\n"
                    "---\nname: other\nmodel: A3C\nhours: 12\nreference_gpu: V100\n")
    result = backtest(recorded_store, job_files=[spec], policies=["dynamic"], **WINDOW)
    counts = result.results.groupby("job")["jobs"].first().to_dict()
    assert counts == {"s-1": 12, "other": 1}
    assert result.runs == 13 * 2 * 3
    assert result.summary["runs"].tolist() == [13 * 2] * 3


@pytest.mark.parametrize(("kw", "message"), [
    ({"days": float("inf")}, "days inf: expected a finite number"),
    ({"days": float("nan")}, "days nan: expected a finite number"),
    ({"margin": float("inf")}, "margin inf: expected a finite number"),
    ({"every_hours": float("inf")}, "every_hours inf: expected a finite number"),
])
def test_non_finite_values_are_refused(recorded_store: PriceStore, kw: dict,
                                       message: str) -> None:
    with pytest.raises(InvalidInput, match=re.escape(message)):
        backtest(recorded_store, models=["A3C"], **{**WINDOW, **kw})


def test_no_jobs_is_one_line(recorded_store: PriceStore, tmp_path: Path) -> None:
    spec = tmp_path / "empty.yaml"
    spec.write_text("name: s\nmodel: A3C\nsteps: 10\nsweep:\n  LR: []\n")
    with pytest.raises(InvalidInput, match=r"empty\.yaml: job 's': field sweep\.LR: an empty "
                                           r"list: expected at least one value") as excinfo:
        backtest(recorded_store, job_files=[spec], **WINDOW)
    assert "\n" not in str(excinfo.value)


def test_the_json_schema_documents_every_key(recorded_store: PriceStore) -> None:
    payload = json_payload(backtest(recorded_store, models=["A3C"], policies=["static"],
                                    **WINDOW))
    assert tuple(payload) == TOP_KEYS
    assert tuple(payload["summary"][0]) == SUMMARY_KEYS
    assert tuple(payload["runs"][0]) == RUN_KEYS
    for key in (*TOP_KEYS, *SUMMARY_KEYS, *RUN_KEYS):
        assert re.search(rf"\b{key}\b", JSON_SCHEMA), key
    json.dumps(payload, default=str)  # plain data apart from the times
