"""`status` when one job's instance cannot be read: every job is shown, that one with a
line that says why, never a traceback; the command exits 75 (try again), as when nothing
could be shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.cli import jobs as cli_jobs
from costsched.migration.launcher import Instance
from tests.costsched.cli.test_status_lines import _job, _priced, _under
from tests.costsched.test_costs import EAST_A


class OneBreaks:
    """The local launcher's word on job N's instance "N-1": running, but for job 1's,
    whose read raises."""

    name = "local"
    sees_agents = True

    def status(self, instance: str) -> Instance:
        if instance == "1-1":
            raise PermissionError(13, "Permission denied", "instances/1-1/status.json")
        return Instance(instance, int(instance.split("-")[0]), "a", EAST_A, "running")

    def statuses(self, instances: list[str]) -> dict[str, Instance]:
        return {i: self.status(i) for i in instances}


def test_one_unreadable_instance_is_said_under_its_job_and_the_others_shown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, db = _priced(tmp_path)
    first, second = (_job(store, name, tmp_path, 1.0, 0.36) for name in ("a", "b"))
    store.dispose()
    monkeypatch.setattr(cli_jobs, "job_launcher", lambda *_: OneBreaks())
    shown = CliRunner().invoke(app, ["status", "--db", db, "--no-reconcile"],
                               env={"COLUMNS": "250"})
    assert shown.exit_code == 75, shown.output  # try again: one job was not looked after
    assert shown.stderr == (f"error: job {first}: not looked after in this pass (shown "
                            "with why); `costsched status` again tries again\n")
    out = shown.stdout
    assert "Traceback" not in shown.output
    rows = [line for line in out.splitlines() if "│" in line]
    assert any(f" {second} " in row and "running" in row for row in rows)
    assert _under(out, first)[0].startswith(
        "not looked after in this pass: PermissionError: [Errno 13] Permission denied")
    result = CliRunner().invoke(app, ["status", "--db", db, "--no-reconcile", "--json"])
    assert result.exit_code == 75, result.output
    jobs = {j["id"]: j for j in json.loads(result.stdout)["jobs"]}
    assert jobs[first]["trouble"].startswith("not looked after in this pass")
    assert jobs[second]["trouble"] is None and jobs[second]["instance_state"] == "running"
