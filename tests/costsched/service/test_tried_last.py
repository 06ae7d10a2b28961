"""An offering where the local launcher's instances met no capacity lately is tried after
the others by a launch on it: the launch says which it passed over and why, in one line;
its budget check prices the offering it places the job on, not the plan's first; a
budget too small for any is short of where the launch would go; and `plan` on that
launcher says the same under its table. Real SQLite store, the local launcher."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched.config import BudgetsConfig
from costsched.model import Offering
from costsched.service import jobs as service
from costsched.service.jobs.budget_launch import launch_fits
from costsched.service.jobs.launches import PASSED_OVER
from costsched.store import PriceStore
from launchers.local import LocalLauncher
from tests.real_jobs import set_prices

FULL = Offering("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "V100", 1)
# (the price of #1, us-east-1a, and of #2, us-east-1b, where the launch goes instead)
PASSED = re.compile(r"placed on aws us-east-1b p3\.2xlarge spot at \$2\.0000/h, not on aws "
                    r"us-east-1a p3\.2xlarge spot at \$1\.0000/h \(the plan's first choice\): "
                    r"no capacity met 4 min ago on this machine \(local launcher\): tried "
                    r"after the others until \d\d:\d\d UTC$")


def _priced(store: PriceStore, now: datetime, full: bool = True) -> None:
    set_prices(store, {"us-east-1a": 1.0, "us-east-1b": 2.0, "us-east-1c": 2.5},
               now - timedelta(hours=1))
    if full:  # the local launcher's own instance met none there 4 min ago
        store.availability.record(FULL, "capacity", at=now - timedelta(minutes=4),
                                  source="local")


def _job(tmp_path: Path, budget: float = 1000.0) -> Path:
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump({
        "name": "train", "run": "true", "throughputs": {"V100": 1}, "steps": 3600,
        "checkpoint": {"size_gb": 1, "interval_minutes": 60},
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"], "budget": budget}}))
    return path


@pytest.mark.parametrize("full", [True, False])
def test_the_budget_check_prices_where_the_launch_places_it(
        tmp_path: Path, store: PriceStore, full: bool) -> None:
    now = datetime.now(timezone.utc)
    _priced(store, now, full)
    launcher = LocalLauncher(tmp_path / "instances")
    [fit] = launch_fits(store, [_job(tmp_path)], BudgetsConfig(), now, launcher=launcher,
                        checkpoint_root=str(tmp_path / "ckpt"))
    if full:
        assert PASSED.fullmatch(fit.placed.removeprefix("job train: ")), fit.placed
        assert "at $2.0000/h" in fit.line() and "$1.0000/h" not in fit.line(), fit.line()
    else:
        assert fit.placed == "" and "at $1.0000/h" in fit.line(), fit.line()
    # an hour of work and a little for preemptions, at the price of where it runs
    assert (2.0 if full else 1.0) <= fit.expected_usd < (2.2 if full else 1.1)


def test_a_budget_too_small_is_short_of_where_the_launch_would_go(
        tmp_path: Path, store: PriceStore) -> None:
    now = datetime.now(timezone.utc)
    _priced(store, now)
    [fit] = launch_fits(store, [_job(tmp_path, budget=0.5)], BudgetsConfig(), now,
                        launcher=LocalLauncher(tmp_path / "instances"),
                        checkpoint_root=str(tmp_path / "ckpt"))
    assert not fit.fits and fit.expected_usd >= 2.0, fit.line()  # us-east-1b's, not 1a's


def test_launch_says_which_offering_it_passed_over_and_why(tmp_path: Path,
                                                           store: PriceStore) -> None:
    now = datetime.now(timezone.utc)
    _priced(store, now)
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=5)
    try:
        [job] = service.launch(store, _job(tmp_path), launcher=launcher,
                               checkpoint_root=str(tmp_path / "ckpt"))
        assert store.jobs.placements(job.id)["zone"].iloc[-1] == "us-east-1b"
        [line] = job.spec[PASSED_OVER]
        assert PASSED.fullmatch(line), line
    finally:
        for instance in launcher.instances():
            launcher.terminate(instance.id)


def test_plan_on_the_local_launcher_says_it_under_its_table(
        cli, store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("COLUMNS", "300")
    now = datetime.now(timezone.utc)
    _priced(store, now)
    shown = cli("plan", str(_job(tmp_path)))
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.stdout.split())
    assert re.search(r"launch passes over #1 \(aws us-east-1a p3\.2xlarge spot\): no capacity "
                     r"met 4 min ago on this machine \(local launcher\): tried after the "
                     r"others until \d\d:\d\d UTC", text), text
    [job] = json.loads(cli("plan", str(_job(tmp_path)), "--json").stdout)["jobs"]
    [last] = job["tried_last"]
    assert last["rank"] == 1 and last["offering"] == "aws us-east-1a p3.2xlarge spot"


@pytest.mark.usefixtures("cloud_launcher")
def test_a_start_short_of_its_budget_is_priced_where_it_would_start(
        tmp_path: Path, store: PriceStore) -> None:
    from costsched.model import InvalidInput
    from tests.costsched.migration.test_edges import FakeLauncher

    now = datetime.now(timezone.utc)
    _priced(store, now, full=False)
    launcher = FakeLauncher()  # a cloud's launcher: the cloud's own capacity errors count
    [job] = service.launch(store, _job(tmp_path), launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    service.stop(store, launcher, job.id)
    store.availability.record(FULL, "capacity", at=datetime.now(timezone.utc)
                              - timedelta(minutes=4))
    with pytest.raises(InvalidInput) as refused:
        service.start(store, launcher, job.id, budget=1.1)
    said = str(refused.value)
    assert "give it enough" in said and "at $2.0000/h" in said, said  # us-east-1b's price
    assert "$1.0000/h" not in said, said
