"""`plan` of jobs that join a named budget of the configuration says what is left of it
against what they are expected to cost, by the rule `launch` checks them by: a plan that
launch would refuse says so, with the key that gives it more, and exits 1."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

SWEEP = ("name: grid\nrun: 'true'\nmodel: ResNet-50 (batch size 64)\nsteps: 20000\n"
         "sweep:\n  LR: [0.1, 0.2, 0.3]\nconstraints: {budget_name: cap, markets: [spot]}\n")


def planned(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, usd: str):  # noqa: ANN001, ANN201
    config = tmp_path / "config.toml"
    config.write_text(f'[budgets.named.cap]\nusd = {usd}\nperiod = "total"\n')
    monkeypatch.setenv("COSTSCHED_CONFIG", str(config))
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    path = tmp_path / "sweep.yaml"
    path.write_text(SWEEP)
    return path, cli("plan", path, "--top", "1")


def test_a_named_budget_too_small_for_each_job_is_said_and_launch_refuses_alike(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    path, result = planned(cli, tmp_path, monkeypatch, "0.004")
    assert result.exit_code == 1, result.output
    said = " ".join(result.stderr.split())
    line = re.search(r"error: budget cap: \$0\.0040 left; the 3 jobs planned in it are "
                     r"expected to cost "
                     r"(\$[\d.]+) \((\$[\d.]+) the most\): launch refuses them; raise "
                     r"budgets\.named\.cap\.usd in the configuration", said)
    assert line is not None, said
    launched = cli("launch", path, "--wait", "0")
    assert launched.exit_code == 2, launched.output
    refused = " ".join(launched.output.split())
    # The plan's figure: both leave the start out, as the local launcher boots no instance.
    expected = re.search(r"job grid-1: expected \$([\d.]+)\*? \([^;]*; its start left out: "
                         r"the local launcher boots no instance", refused)
    assert expected is not None, refused
    assert float(expected.group(1)) == pytest.approx(float(line.group(2).lstrip("$")),
                                                     abs=0.0001), refused
    assert "against $0.0040 left of budget cap: does not fit" in refused, refused
    assert "raise budgets.named.cap.usd in the configuration" in refused, refused


def test_a_named_budget_that_holds_the_jobs_is_said_to_and_the_plan_passes(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    _, result = planned(cli, tmp_path, monkeypatch, "500")
    assert result.exit_code == 0, result.output
    said = " ".join(result.stderr.split())
    assert re.search(r"note: budget cap: \$500\.00 left; the 3 jobs planned in it are "
                     r"expected to cost "
                     r"\$[\d.]+ \(\$[\d.]+ the most\): they fit", said), said
