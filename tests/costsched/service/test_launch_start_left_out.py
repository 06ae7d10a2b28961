"""A launch's budget check counts the start the chosen launcher will have: a cloud
instance's boot, set-up and warm-up where the launcher boots one; none on the local
launcher, which boots no instance (the launchers' registry says so), and the line says
which it counted."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from costsched.config import BudgetsConfig
from costsched.service.jobs.budget_launch import launch_fits
from costsched.store import PriceStore
from launchers import make_launcher

AT = datetime(2026, 11, 28, tzinfo=timezone.utc)
TASK = """\
name: kws-budget
resources:
  accelerators: T4:1
  use_spot: true
  cloud: aws
run: python train.py
costsched:
  steps: 2500
  throughputs: {T4: 30}
  budget: 0.02
"""


def test_the_registry_says_which_launchers_start_costs_nothing() -> None:
    from launchers import start_left_out

    assert start_left_out("local").startswith("the local launcher boots no instance")
    assert all(start_left_out(name) == "" for name in ("aws", "gcp", "azure", "clouds"))


@pytest.fixture
def fits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    task = tmp_path / "budget.yaml"
    task.write_text(TASK)
    store = PriceStore(str(tmp_path / "store.sqlite"))

    def checked(launcher: object) -> object:
        [fit] = launch_fits(store, [str(task)], BudgetsConfig(), AT, launcher=launcher)
        return fit

    yield checked
    store.dispose()


def test_on_the_local_launcher_the_start_is_left_out_and_said_so(
        fits, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    # (no launcher: the configured one's start, as `plan` counts it; here a cloud's)
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "gcp")
    counted = fits(None)
    assert counted.start_usd > 0 and " h to start it, each at $0.1809/h; its start: 0.25 h" \
        in counted.line(), counted.line()
    local = fits(make_launcher("local"))
    assert local.start_usd == 0
    # Nor do its recoveries pay a boot: it counts as a cloud's launcher would were its
    # instances up at once (no boot, no warm-up; no checkpoint to copy at its start).
    assert local.expected_usd < counted.expected_usd - counted.start_usd
    monkeypatch.setenv("COSTSCHED_MIGRATION_RESTART_MINUTES", "0")
    monkeypatch.setenv("COSTSCHED_MIGRATION_WARMUP_MINUTES", "0")
    assert fits(None).expected_usd == pytest.approx(local.expected_usd)
    monkeypatch.delenv("COSTSCHED_MIGRATION_RESTART_MINUTES")
    monkeypatch.delenv("COSTSCHED_MIGRATION_WARMUP_MINUTES")
    line = local.line()
    assert ("; its start left out: the local launcher boots no instance, and the job's setup "
            "is in its billed hours)") in line, line
    assert "to start it" not in line and line.endswith("fits"), line
    assert counted.line().endswith("does not fit; raise costsched.budget in "
                                   f"{counted.fix.rsplit(' in ', 1)[1]} to 0.052"), \
        counted.line()
    # With the local launcher configured, a check without one counts as it does (`plan`)
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "local")
    planned = fits(None)
    assert planned.start_usd == 0 and planned.expected_usd == pytest.approx(local.expected_usd)
