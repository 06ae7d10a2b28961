"""A move the user names (`migrate --to`) is held to every budget the job is under: its own
and the named (team) budgets it joins, each by the same rule and in the same one line (the
budget's name, what it spent, its cap, and what gives it more); a dry run says the same.
In-memory launcher, SQLite store."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices

TO = "aws us-east-1b p3.2xlarge spot"


def _launched(store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
              team_usd: float, own_usd: float | None = None) -> tuple[FakeLauncher, int]:
    """A job of about 40 h at $1/h in us-east-1a under budget `team` (a month's
    `team_usd`), and its own budget where `own_usd` gives one; us-east-1b is $2/h."""
    config = tmp_path / "config.toml"
    config.write_text(f"[budgets.named.team]\nusd = {team_usd}\nperiod = \"month\"\n")
    monkeypatch.setenv("COSTSCHED_CONFIG", str(config))
    set_prices(store, {"us-east-1a": 1.0, "us-east-1b": 2.0},
               datetime.now(timezone.utc) - timedelta(hours=1))
    constraints: dict = {"regions": ["us-east-1"], "markets": ["spot"], "budget_name": "team"}
    if own_usd is not None:
        constraints["budget"] = own_usd
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump({
        "name": "train", "throughputs": {"V100": 0.01}, "steps": 1440, "run": "true",
        "constraints": constraints, "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}))
    launcher = FakeLauncher()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    return launcher, job.id


def test_a_move_asked_for_past_a_named_budget_is_refused(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    launcher, job = _launched(store, tmp_path, monkeypatch, team_usd=60)
    [dry] = service.migrate(store, launcher, job, to=TO, dry_run=True)
    assert dry.started is None and dry.held_back == "budget"
    said = dry.not_moved
    assert "expected there, the move included" in said, said
    assert " spent + $" in said and "would pass budget team's $60.0000 a month" in said, said
    assert "raise budgets.named.team.usd in the configuration" in said, said
    with pytest.raises(InvalidInput) as err:
        service.migrate(store, launcher, job, to=TO)
    line = str(err.value)
    assert "\n" not in line and line.startswith(f"job {job} (train): not moved to {TO}: ")
    assert said.partition(" would pass ")[2] in line, (said, line)
    assert [m.kind for m in store.moves.of_job(job)] == ["launch"]


def test_a_move_within_every_budget_is_made(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    launcher, job = _launched(store, tmp_path, monkeypatch, team_usd=500, own_usd=500)
    [dry] = service.migrate(store, launcher, job, to=TO, dry_run=True)
    assert dry.held_back == "", dry.not_moved


def test_its_own_budget_is_said_first(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    launcher, job = _launched(store, tmp_path, monkeypatch, team_usd=60, own_usd=60)
    [dry] = service.migrate(store, launcher, job, to=TO, dry_run=True)
    assert "would pass its budget of $60" in dry.not_moved, dry.not_moved
