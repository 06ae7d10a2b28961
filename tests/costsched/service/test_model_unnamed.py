"""A job whose file names no model is its own model in its table (its name keys its
figures), which is no model another job file may name: its measured speed is not kept with
costsched's measurements, a measurement kept so before is not planned on nor offered as a
model, and `plan --json` says it has none. A job that names its model keeps its
measurement as before."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pytest

from costsched.jobspec import parse, resolve
from costsched.model import InvalidInput
from costsched.service.speeds import flag_new
from costsched.service.throughputs import measure_rows, table_with_measured
from costsched.store import PriceStore
from costsched.store.signals import THROUGHPUT_COLUMNS
from tests.costsched.service.test_rest_priced import instances, slow_job, store  # noqa: F401

MODEL = "Transformer (batch size 256)"  # a bundled model


def test_a_job_without_a_model_keeps_its_speed_out_of_the_models(
        store: PriceStore, instances: Path) -> None:  # noqa: F811
    now = datetime.now(timezone.utc).replace(microsecond=0)
    job = slow_job(store, instances, now)  # 'slow', 4x slower than its file declares
    [(flagged, line)] = flag_new(store, now)
    assert flagged == job and "4.00x slower" in line  # said, as before
    assert store.measured_throughputs.rows().empty  # not kept as model 'slow'
    assert measure_rows(store, now) == []  # nor measured from its progress as one
    table = table_with_measured(store)
    assert "slow" not in table.models()
    spec = parse({"name": "next", "model": "slo", "steps": 10}, "next.yaml")
    with pytest.raises(InvalidInput) as refused:
        resolve(spec, table, now, source="next.yaml")
    assert "unknown model 'slo'" in str(refused.value) and "slow" not in str(refused.value)


def test_a_job_that_names_its_model_keeps_its_measured_speed(
        store: PriceStore, instances: Path) -> None:  # noqa: F811
    now = datetime.now(timezone.utc).replace(microsecond=0)
    job = slow_job(store, instances, now, model=MODEL)
    assert [j for j, _ in flag_new(store, now)] == [job]
    kept = store.measured_throughputs.rows()
    assert kept[["model", "gpu_model", "job_id"]].values.tolist() == [[MODEL, "V100", job]]
    assert table_with_measured(store).get(MODEL, "V100").basis.startswith(
        "measured by costsched")


def test_a_measurement_kept_under_a_jobs_name_before_is_not_a_model(
        store: PriceStore, instances: Path) -> None:  # noqa: F811
    """Stored by an older costsched as model 'slow' (the job's name): left out of the
    table plans use; a model's own measurement beside it stays."""
    now = datetime.now(timezone.utc).replace(microsecond=0)
    job = slow_job(store, instances, now)
    modelled = slow_job(store, instances, now, model=MODEL, name="modelled")
    row = dict(zip(THROUGHPUT_COLUMNS, (None, "slow", "V100", 1, "fp32", 1.0, 3600.0,
                                        3600.0, now, f"{job}-1", job, 1), strict=True))
    other = {**row, "model": MODEL, "steps_per_second": 0.7, "instance": f"{modelled}-1",
             "job_id": modelled, "placement_id": 2}
    store.measured_throughputs.add(pd.DataFrame([row, other], columns=THROUGHPUT_COLUMNS))
    table = table_with_measured(store)
    assert "slow" not in table.models() and MODEL in table.models()
    assert table.get(MODEL, "V100").steps_per_second == pytest.approx(0.7)
