"""`status` with filters that match no job says so, and that `status` alone lists them all,
never "No jobs. `costsched launch JOB.yaml` starts one." over a store that has jobs."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from costsched.cli import app
from costsched.store import PriceStore
from tests.costsched.cli.test_status_amounts import ran
from tests.costsched.test_costs import EAST_A, observe


def test_filters_that_match_no_job_say_so_and_the_hint_lists_every_job(
        tmp_path: Path) -> None:
    db = str(tmp_path / "store.sqlite")
    store = PriceStore(db)
    observe(store, EAST_A, [(0, 0.36)])
    ran(store, tmp_path, "tiny", [(EAST_A, 0.36, "launch", 60)])
    store.dispose()
    runner = CliRunner()
    for given in (["--state", "stopped"], ["--state", "failed", "--state", "running"]):
        result = runner.invoke(app, ["status", "--db", db, "--no-reconcile", *given],
                               env={"COLUMNS": "200"})
        assert result.exit_code == 0, result.output
        out = " ".join(result.stdout.split())
        assert "No job matches the filters given" in out and "No jobs." not in out, out
        assert "`costsched status` with none lists every job" in out
    hinted = runner.invoke(app, ["status", "--db", db, "--no-reconcile"],
                           env={"COLUMNS": "200"})
    assert hinted.exit_code == 0 and "tiny" in hinted.stdout and "succeeded" in hinted.stdout
