"""A file larger than any real one of its kind is refused before it is parsed, in one line
naming the file, its size, the limit and the configuration key that sets it: a task file
(50 MB of YAML once took 81 s and 627 MB to refuse), the config file, the files `prices
import`, `risk import` and `throughput import` read. The files are made over a lowered
limit, so each test stays small; a file that is also malformed shows the size is checked
first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costsched import file_limits

NOT_YAML = "name: [unclosed\n" + "# padding\n" * 300  # about 3 KB, and invalid YAML


def one_error(result) -> str:  # noqa: ANN001
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.output
    return lines[0]


def test_a_task_file_over_the_limit_is_refused_before_it_is_parsed(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("COSTSCHED_FILES_TASK_MB", "0.002")
    path = tmp_path / "job.yaml"
    path.write_text(NOT_YAML)
    result = cli("plan", path)
    assert result.exit_code == 2
    size = path.stat().st_size
    assert one_error(result) == (f"error: {path}: {size:,} bytes, over the 0.002 MB limit of "
                                 "a task file (config key files.task_mb)")
    monkeypatch.setenv("COSTSCHED_FILES_TASK_MB", "1")  # the default: the parser answers
    assert "invalid YAML" in one_error(cli("plan", path))


def test_the_config_file_has_a_fixed_limit(cli, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    path = tmp_path / "config.toml"
    path.write_text("[collect]\n" + "#" * int(file_limits.CONFIG.default_mb * file_limits.MB))
    result = cli("config", "show", "--config", path)
    assert result.exit_code == 2
    assert one_error(result) == f"error: {path}: 1.0 MB, over the 1 MB limit of a config file"


def test_each_imported_price_file_is_bounded_and_the_others_still_import(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("COSTSCHED_FILES_IMPORT_MB", "0.001")
    small = tmp_path / "small.json"
    small.write_text(json.dumps({"SpotPriceHistory": [{
        "AvailabilityZone": "us-east-1a", "InstanceType": "p3.2xlarge",
        "ProductDescription": "Linux/UNIX", "SpotPrice": "0.92",
        "Timestamp": "2024-01-01T00:00:00Z"}]}))
    large = tmp_path / "large.json"
    large.write_text("{" + " " * 2000)  # not even JSON: refused for its size first
    trace = tmp_path / "availability" / "aws-02-15-2023" / "us-east-1a_v100_1.json"
    trace.parent.mkdir(parents=True)
    trace.write_text('{"metadata": {"gap_seconds": 195}, "data": [' + "1, " * 700 + "1]}")
    result = cli("prices", "import", tmp_path)
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    limit = ("over the 0.001 MB limit of an imported price or availability file (config key "
             "files.import_mb)")
    assert sorted(errors) == [f"error: {path}: {path.stat().st_size:,} bytes, {limit}"
                              for path in (trace, large)]
    assert "1 new row," in result.stdout


def test_signal_and_throughput_files_are_bounded(cli, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("COSTSCHED_FILES_SIGNALS_MB", "0.001")
    monkeypatch.setenv("COSTSCHED_FILES_THROUGHPUTS_MB", "0.001")
    signals = tmp_path / "advisor.json"
    signals.write_text("[" * 2000)
    result = cli("risk", "import", signals, "--kind", "advisor")
    assert result.exit_code == 2
    assert one_error(result).endswith("over the 0.001 MB limit of a risk signal document "
                                      "(config key files.signals_mb)")
    table = tmp_path / "speeds.csv"
    table.write_text("model,gpu_model,gpu_count,steps_per_second\n" + "m,V100,1,1\n" * 200)
    result = cli("throughput", "import", table)
    assert result.exit_code == 2
    assert one_error(result).endswith("over the 0.001 MB limit of a throughput table "
                                      "(config key files.throughputs_mb)")


def test_a_limit_must_be_a_positive_number(cli, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("COSTSCHED_FILES_TASK_MB", "0")
    result = cli("config", "show")
    assert result.exit_code == 2 and "files.task_mb" in result.output
