"""A share of a job's steps reads by one rule wherever it is shown: rounded down, never
100% short of the last step (`status`, the dashboard, the report's 'done' column and its
'ended short' verdict); the JSON keeps the share itself. A job stopped at step 357 of
2,400 (14.875%) reads 14% in each, never 15% in one of them."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from costsched.cli import app
from costsched.report.cells import format_cell
from costsched.report.data import build
from costsched.report.estimates import verdict
from costsched.service import jobs as service
from costsched.service import views
from costsched.store import PriceStore
from tests.costsched.service.test_jobs import set_prices
from tests.costsched.service.test_stopped_step import Ending

STEPS = 2400


def test_the_reports_share_done_reads_down_as_status_reads_it() -> None:
    for share, said in ((0.14875, "14%"), (0.2999, "29%"), (2492 / 2500, "99.6%"),
                        (1.0, "100%"), (0.0, "0%")):
        assert format_cell("done", share) == said
        assert views.progress_words(share, "reported") == said
    assert verdict(1.0, 1.0, 0.14875) == (
        "ended short (exited 0 at 14% of its declared steps)")


def test_a_job_stopped_at_a_share_reads_it_alike_everywhere(store: PriceStore, db_path: Path,
                                                             tmp_path: Path) -> None:
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    path = tmp_path / "fit.yaml"
    path.write_text(yaml.safe_dump({
        "name": "fit", "throughputs": {"V100": 0.5}, "steps": STEPS, "run": "true",
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
        "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}))
    launcher = Ending()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    start = store.jobs.placements(job.id)["start_at"].iloc[0].to_pydatetime()
    store.jobs.record_step(job.id, 1, at=start + timedelta(minutes=6))
    store.jobs.record_step(job.id, 300, at=start + timedelta(minutes=30))
    launcher.last = (357, 357)
    service.stop(store, launcher, job.id, at=start + timedelta(minutes=36))
    until = start + timedelta(hours=1)

    [shown] = service.status(store, launcher, job.id, at=until, reconcile_first=False)
    assert shown.progress == pytest.approx(357 / STEPS)
    assert views.progress_words(shown.progress, shown.progress_source) == "14%"
    [row] = build(store, until=until, now=until).rows["estimates"]
    assert row["done"] == pytest.approx(357 / STEPS)
    db = ["--db", str(db_path)]
    text = CliRunner().invoke(app, ["report", "--until", until.isoformat(), *db],
                              env={"COLUMNS": "300"})
    assert text.exit_code == 0, text.output
    [line] = [line for line in text.output.splitlines() if "│ fit" in line and "1xV100" in line]
    assert "14%" in line and "15%" not in line, line
    doc = json.loads(CliRunner().invoke(
        app, ["report", "--until", until.isoformat(), "--json", *db]).output)
    [raw] = [r for r in doc["estimates"] if r["name"] == "fit"]
    assert raw["done"] == pytest.approx(357 / STEPS)  # the share itself
