"""Job specs with random fields, types and values: a valid spec or a one-line error."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st

from costsched import sweeps, taskfile
from tests.reliability.fuzz import FUZZ, one_line_error, values

FIELDS = ["name", "run", "envs", "model", "throughputs", "precision", "steps", "epochs",
          "steps_per_epoch", "hours", "reference_gpu", "checkpoint", "constraints", "sweep"]
NESTED = {
    "checkpoint": ["location", "size_gb", "interval_minutes", "restart_minutes"],
    "constraints": ["deadline", "budget", "clouds", "regions", "markets", "gpu_models",
                    "gpu_counts", "max_price", "max_migrations"],
}
BASE = {"name": "fuzz", "run": "python train.py", "model": "ResNet-50 (batch size 64)",
        "steps": 1000}


def _field(name: str) -> st.SearchStrategy:
    if name in NESTED:
        return st.one_of(values, st.dictionaries(st.sampled_from(NESTED[name]), values,
                                                 max_size=4))
    return values


specs = st.fixed_dictionaries({}, optional={f: _field(f) for f in FIELDS}).map(
    lambda fuzzed: {**BASE, **fuzzed})


def _load(tmp_path: Path, text: str) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(text)
    for spec in taskfile.load(path):
        assert spec.name  # a spec that loads is complete
        sweeps.expand_sweep(spec)


@FUZZ
@given(spec=specs)
def test_fuzzed_fields_load_or_fail_in_one_line(tmp_path: Path, spec: dict) -> None:
    one_line_error(lambda: _load(tmp_path, yaml.safe_dump(spec, allow_unicode=True)))


@FUZZ
@given(document=values)
def test_any_yaml_document_loads_or_fails_in_one_line(tmp_path: Path, document: object) -> None:
    error = one_line_error(lambda: _load(tmp_path, yaml.safe_dump(document)))
    if not isinstance(document, dict | list):
        assert error is not None  # a scalar is never a job


@FUZZ
@given(text=st.text(max_size=80))
def test_arbitrary_text_loads_or_fails_in_one_line(tmp_path: Path, text: str) -> None:
    one_line_error(lambda: _load(tmp_path, text))
