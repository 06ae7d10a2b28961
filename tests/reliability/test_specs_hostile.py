"""Hostile job specs: each is refused in one line naming the file, the job and the field,
quickly and in little memory, before any job is made."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched import taskfile
from costsched.cli import app
from costsched.model import InvalidInput
from costsched.store import PriceStore

JOB = "name: a\nmodel: A3C\n"
# Nine levels of nine aliases each: 9**9 (387 million) strings once expanded.
LAUGHS = JOB + "steps: 10\nenvs:\n  l0: &l0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 9))


def refused(tmp_path: Path, text: str, **kwargs: int) -> str:
    path = tmp_path / "job.yaml"
    path.write_text(text)
    started = time.monotonic()
    with pytest.raises(InvalidInput) as caught:
        taskfile.load(path, **kwargs)
    assert time.monotonic() - started < 60  # expanded, it would take minutes and gigabytes
    message = str(caught.value)
    assert message.startswith(f"{path}"), message
    assert "\n" not in message
    return message


def test_aliases_are_refused_before_they_expand(tmp_path: Path) -> None:
    message = refused(tmp_path, LAUGHS)
    assert "line 6" in message and "alias *l0 is not accepted" in message


def test_duplicate_keys_are_refused_naming_the_key(tmp_path: Path) -> None:
    assert "duplicate field 'steps'" in refused(tmp_path, JOB + "steps: 10\nsteps: 20\n")
    assert "duplicate field 'LR'" in refused(tmp_path, JOB + "steps: 1\nenvs: {LR: 1, LR: 2}\n")


@pytest.mark.parametrize(("value", "kind"), [("[1, 2]", "a list"), ("{a: 1}", "a mapping"),
                                             ("null", "nothing")])
def test_envs_values_must_be_scalars(tmp_path: Path, value: str, kind: str) -> None:
    message = refused(tmp_path, JOB + f"steps: 10\nenvs:\n  X: {value}\n")
    assert message.endswith(f"job 'a': field envs: 'X': expected a string, number or "
                            f"true/false, got {kind}")


def test_envs_scalars_are_kept_as_text(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(JOB + "steps: 10\nenvs: {A: 1, B: 0.5, C: true, D: text}\n")
    assert taskfile.load(path)[0].envs == {"A": "1", "B": "0.5", "C": "True", "D": "text"}


def test_a_sweep_past_the_cap_is_refused_before_it_is_made(tmp_path: Path) -> None:
    axes = "".join(f"  A{i}: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n" for i in range(8))
    message = refused(tmp_path, JOB + "steps: 10\nsweep:\n" + axes)
    assert message.endswith("job 'a': field sweep: 100,000,000 combinations: expected at most "
                            "10,000 jobs (launch.max_sweep_jobs in the config)")


def test_the_sweep_cap_counts_every_document_and_comes_from_the_config(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = "name: {}\nmodel: A3C\nsteps: 10\nsweep: {{LR: [1, 2, 3]}}\n"
    text = doc.format("a") + "---\n" + doc.format("b")
    monkeypatch.setenv("COSTSCHED_LAUNCH_MAX_SWEEP_JOBS", "5")
    assert "6 combinations: expected at most 5 jobs" in refused(tmp_path, text)
    monkeypatch.setenv("COSTSCHED_LAUNCH_MAX_SWEEP_JOBS", "6")
    path = tmp_path / "job.yaml"
    assert len(taskfile.load(path)) == 6


@pytest.mark.parametrize(("field", "value"), [
    ("steps", "1e308"), ("steps", ".nan"), ("steps", ".inf"), ("steps", "-5"),
    ("hours", "1e300"), ("checkpoint.size_gb", ".inf"), ("checkpoint.size_gb", "-1"),
    ("checkpoint.interval_minutes", ".nan"), ("checkpoint.restart_minutes", ".inf"),
    ("constraints.budget", ".inf"), ("constraints.budget", "1e300"),
    ("constraints.max_price", ".nan"), ("constraints.deadline", ".inf"),
    ("constraints.deadline", "1e12"), ("constraints.gpu_counts", "[100000]"),
    ("throughputs", "{V100: .inf}"),
])
def test_every_number_is_finite_and_in_range(tmp_path: Path, field: str, value: str) -> None:
    work = "" if field in ("steps", "hours") else "steps: 10\n"
    work += "reference_gpu: V100\n" if field == "hours" else ""
    section, _, key = field.partition(".")
    entry = f"{section}: {{{key}: {value}}}\n" if key else f"{field}: {value}\n"
    message = refused(tmp_path, JOB + work + entry)
    assert f"job 'a': field {field}" in message, message
    assert "expected" in message


def test_epochs_times_steps_per_epoch_is_bounded(tmp_path: Path) -> None:
    message = refused(tmp_path, JOB + "epochs: 1e9\nsteps_per_epoch: 1e9\n")
    assert "job 'a': field epochs: epochs x steps_per_epoch: expected at most 1e+12 steps" \
        in message


def test_the_cli_says_one_line_with_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(LAUGHS)
    PriceStore(str(tmp_path / "p.sqlite")).dispose()
    result = CliRunner().invoke(app, ["plan", str(path)],
                                env={"COSTSCHED_DB": str(tmp_path / "p.sqlite")})
    assert result.exit_code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1
    assert "alias *l0 is not accepted" in result.stderr


def test_the_cli_names_a_duplicate_field(tmp_path: Path) -> None:
    # The line printed goes through the redaction rule: the field's name must survive it.
    path = tmp_path / "job.yaml"
    path.write_text(JOB + "hours: 1\nhours: 2\n")
    result = CliRunner().invoke(app, ["plan", str(path)],
                                env={"COSTSCHED_DB": str(tmp_path / "p.sqlite")})
    assert result.exit_code == 2, result.output
    assert "duplicate field 'hours'" in result.stderr
