"""A hint that quotes a key of the job's file with its value quotes it as the file takes
it: the ended-short hint's `costsched.steps: 2000 in short.yaml` reads back, as YAML, as
the number it names (never `steps: 2,000`, a string in YAML)."""

from __future__ import annotations

import re
from types import SimpleNamespace

import yaml

from costsched.cli.status_next import short_next
from costsched.work import as_in_file, declared_steps


def _went_nowhere(spec: dict, total: float) -> SimpleNamespace:
    return SimpleNamespace(start_went_nowhere=True, step=400.0, own_total=total,
                           record=SimpleNamespace(id=14, spec=spec))


def _quoted(line: str) -> dict:
    """The `KEY: VALUE` the line quotes, read as YAML."""
    found = re.search(r"check its `run` against ([a-z_.]+: [^ )]+)", line)
    assert found, line
    return yaml.safe_load(found[1])


def test_the_ended_short_hint_quotes_the_steps_as_the_file_takes_them() -> None:
    sky = {"source": "short.yaml", "spec": {"task": {"sky": True}}}
    line = short_next(_went_nowhere(sky, 2000.0))
    assert line.endswith("(check its `run` against costsched.steps: 2000 in short.yaml)"), line
    assert _quoted(line) == {"costsched.steps": 2000}
    own = {"source": "job.yaml", "spec": {"name": "x"}}
    assert _quoted(short_next(_went_nowhere(own, 1_500_000.0))) == {"steps": 1_500_000}


def test_a_value_is_quoted_as_yaml_reads_it() -> None:
    for value in (2000, 2000.0, 1_500_000.0, 0.5, 12.25, 1e-7):
        assert yaml.safe_load(f"x: {as_in_file(value)}") == {"x": value}, value
    assert declared_steps({"spec": {}}, 6000.0) == "steps: 6000"  # given inline: no file
