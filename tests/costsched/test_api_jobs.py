"""The Python API runs jobs as the commands do: `costsched.launch`, `status`, `stop`,
`start` and `cost_report` on a store of the test's own, with the local launcher and a real
job; `dir(costsched)` lists the API, not how the package is written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import costsched
from costsched.model import InvalidInput

JOB = """\
name: nbjob
resources:
  accelerators: V100:1
  use_spot: true
workdir: .
run: {python} -c 'import time; time.sleep(60)'
costsched: {{hours: 1}}
"""


def test_dir_lists_the_api_and_hides_the_package_s_own_names() -> None:
    names = dir(costsched)
    assert {"launch", "status", "stop", "start", "cost_report", "plan"} <= set(names)
    assert not {"Any", "annotations", "import_module", "ModuleType"} & set(names)
    assert set(costsched.__all__) <= set(names)


def test_importing_the_package_loads_no_job_operation() -> None:
    code = ("import sys, costsched; dir(costsched); "
            "print(sorted(m for m in ('pandas', 'costsched.api_jobs', 'costsched.service.jobs')"
            " if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).parents[2]).stdout
    assert out.strip() == "[]"


def test_a_notebook_launches_watches_stops_starts_and_reports_a_job(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    project = tmp_path / "project"
    project.mkdir()
    path = project / "job.yaml"
    path.write_text(JOB.format(python=sys.executable))
    db = str(tmp_path / "jobs.sqlite")

    launched = costsched.launch([path], db=db, launcher="local", wait=5)
    try:
        assert launched[["id", "name"]].values.tolist() == [[1, "nbjob"]]
        assert launched["state"].iloc[0] in {"launching", "running"}
        shown = costsched.status(db=db)  # the rows of `status --json`
        assert shown["id"].tolist() == [1] and "cost_usd" in shown.columns
        assert costsched.status(db=db, states=["stopped"]).empty

        stopped = costsched.stop(1, db=db)
        assert (stopped.id, stopped.state) == (1, "stopped")
        assert costsched.status(1, db=db)["state"].tolist() == ["stopped"]
        with pytest.raises(InvalidInput, match="stopped"):  # as `costsched stop` says it
            costsched.stop(1, db=db)

        started = costsched.start(1, db=db, wait=5)
        assert started["id"].tolist() == [1]
        assert started["state"].iloc[0] in {"launching", "running"}
    finally:
        costsched.stop(1, db=db)
    report = costsched.cost_report(db=db)
    assert report.jobs["job_id"].tolist() == [1]
    assert report.document()["jobs"][0]["name"] == "nbjob"


def test_a_refused_launch_makes_no_store(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(JOB.format(python=sys.executable).replace("hours: 1", "hours: -1"))
    db = tmp_path / "jobs.sqlite"
    with pytest.raises(InvalidInput, match="hours"):
        costsched.launch([path], db=str(db), launcher="local", wait=0)
    assert not db.exists()


def test_the_reading_operations_make_no_store(tmp_path: Path) -> None:
    db = tmp_path / "nope.sqlite"
    for call in (lambda: costsched.status(db=str(db)), lambda: costsched.cost_report(db=str(db)),
                 lambda: costsched.stop(1, db=str(db))):
        with pytest.raises(InvalidInput, match="no such store"):
            call()
    assert not db.exists()
