"""`status NAME` when several jobs have that name: the one shown (the one not ended, else
the newest), the others with their states, and how to see one of them (its id, which
`status` takes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.cli import jobs as cli_jobs
from costsched.migration.launcher import Instance
from tests.costsched.cli.test_status_lines import NOW, _job, _priced, _status
from tests.costsched.test_costs import EAST_A


class Running:
    """The local launcher's word on job N's instance "N-1": running."""

    name = "local"
    sees_agents = True

    def status(self, instance: str) -> Instance:
        return Instance(instance, int(instance.split("-")[0]), "a", EAST_A, "running")

    def statuses(self, instances: list[str]) -> dict[str, Instance]:
        return {i: self.status(i) for i in instances}


@pytest.fixture(autouse=True)
def _running(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_jobs, "job_launcher", lambda *_: Running())


def _three(tmp_path: Path) -> tuple[str, list[int]]:
    """Jobs 1 and 2 named fit ended (succeeded, stopped), job 3 of that name runs; job 4
    is named other."""
    store, db = _priced(tmp_path)
    ids = []
    for name, state in (("fit", "succeeded"), ("fit", "stopped"), ("fit", None),
                        ("other", None)):
        ids.append(_job(store, name, tmp_path, hours=1.0, usd_per_hour=0.36))
        if state is not None:  # ended before the next of its name was launched
            store.jobs.end_placement(ids[-1], NOW)
            store.jobs.transition(ids[-1], state, at=NOW)
    store.dispose()
    return db, ids


def test_status_name_says_there_are_others_and_how_to_see_one(tmp_path: Path) -> None:
    db, (first, second, running, other) = _three(tmp_path)
    out = " ".join(_status(db, "fit").split())
    assert (f"3 jobs are named fit: shown is job {running}, the one not ended; the others: "
            f"job {second} (stopped), job {first} (succeeded). `costsched status {second}` "
            f"shows job {second}") in out
    # The id it names shows that job, and no note: an id names one job.
    by_id = _status(db, str(second))
    assert "stopped" in by_id and "jobs are named" not in by_id
    assert "jobs are named" not in _status(db, "other")  # a name one job has
    assert "jobs are named" not in _status(db)  # every job


def test_status_name_json_keeps_its_document_and_says_the_others_on_stderr(
        tmp_path: Path) -> None:
    db, (_, second, running, _) = _three(tmp_path)
    result = CliRunner().invoke(app, ["status", "fit", "--db", db, "--no-reconcile",
                                      "--json"])
    assert result.exit_code == 0, result.output
    assert [j["id"] for j in json.loads(result.stdout)["jobs"]] == [running]
    assert f"`costsched status {second}`" in result.stderr
