"""A job that exits 0 having reported no step (its run never writes
$COSTSCHED_PROGRESS_FILE) did a share of its declared steps nobody knows: `status` (its
table, its line, --json), the dashboard and `report` never show it 100% done, never say a
step was "reported", and say why, in the same words. Beside it, the same job writing its
last step reads 100%. Real jobs on the local launcher, launched and read through the CLI.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from costsched.dashboard.app import create_app
from costsched.report.estimates import NOT_REPORTED
from costsched.store import PriceStore
from costsched.work import not_reported_words
from tests.costsched.cli.test_launch_written_secret import _state

STEPS = 300
TASK = """\
name: {name}
workdir: .
resources:
  accelerators: V100:1
run: {run}
costsched:
  steps: {steps}
  throughputs: {{V100: 40}}
"""
SILENT = "python -c 'import time; time.sleep(1)'"
TELLS = (f"python -c 'import os; open(os.environ[\"COSTSCHED_PROGRESS_FILE\"], \"w\")"
         f".write(\"{STEPS}\")'")
SAID = not_reported_words(STEPS)


def _ended(cli, job_id: int, state: str) -> None:  # noqa: ANN001
    deadline = time.monotonic() + 120  # a stop for a job that never ends, not a bound
    while _state(cli, job_id) != state and time.monotonic() < deadline:
        time.sleep(0.3)
    assert _state(cli, job_id) == state


def _launched(cli, folder: Path, name: str, run: str) -> int:  # noqa: ANN001
    (folder / f"{name}.yaml").write_text(TASK.format(name=name, run=run, steps=STEPS))
    launched = cli("launch", f"{name}.yaml", "--launcher", "local", "--wait", "0", "--json")
    assert launched.exit_code in (0, 1), launched.output  # 1: seen ended by the launch
    [job] = json.loads(launched.stdout)
    _ended(cli, int(job["id"]), "succeeded")
    return int(job["id"])


def _doc(cli, job_id: int) -> dict:  # noqa: ANN001
    shown = json.loads(cli("status", str(job_id), "--json").stdout)
    return (shown["jobs"] if isinstance(shown, dict) else shown)[0]


def _row(text: str, job_id: int) -> list[str]:
    """The cells of the job's row of `status`'s table."""
    [row] = [line for line in text.splitlines() if line.startswith(f"│ {job_id:>2} │")]
    return [cell.strip() for cell in row.strip("│").split("│")]


def test_a_job_that_reports_no_step_is_never_shown_done(
        cli, tmp_path: Path, db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    silent = _launched(cli, tmp_path, "nostep", SILENT)
    tells = _launched(cli, tmp_path, "tells", TELLS)

    text = cli("status").stdout
    assert _row(text, silent)[2:6:3] == ["succeeded", "-"], text  # state, progress
    assert _row(text, tells)[2:6:3] == ["succeeded", "100%"], text
    said = " ".join(text.split())
    assert f"job {silent}: {SAID}" in said, said
    assert (f"exited 0 having reported no step: how many of its {STEPS} declared "
                    "steps it did is not known (a job reports its step in "
                    "$COSTSCHED_PROGRESS_FILE)") == SAID
    assert f"job {tells}: exited 0 having" not in said

    doc = _doc(cli, silent)
    assert (doc["state"], doc["progress"], doc["progress_source"], doc["reported_step"],
            doc["steps_left"], doc["steps_not_reported"]) == (
        "succeeded", None, None, None, None, SAID), doc
    told = _doc(cli, tells)
    assert (told["progress"], told["progress_source"], told["reported_step"],
            told["steps_left"], told["steps_not_reported"]) == (
        1.0, "reported", STEPS, 0, None), told

    store = PriceStore(str(db_path))
    try:
        client = TestClient(create_app(store))
        listed = {j["id"]: j for j in client.get("/api/jobs").json()["jobs"]}
        assert (listed[silent]["progress"], listed[silent]["reported_step"],
                listed[silent]["steps_not_reported"]) == (None, None, SAID)
        page = " ".join(client.get("/").text.split())
        assert SAID in page
        [row] = [r for r in page.split("<tr") if f'data-job="{silent}"' in r]
        assert "100%" not in row and "<progress" not in row, row
        job_page = " ".join(client.get(f"/jobs/{silent}").text.split())
        assert SAID in job_page and "100%" not in job_page, job_page
    finally:
        store.dispose()

    estimates = {e["job_id"]: e for e in json.loads(cli("report", "--json").stdout)[
        "estimates"]}
    assert estimates[silent]["done"] is None and estimates[silent]["vs_estimate"] == \
        NOT_REPORTED, estimates[silent]
    assert estimates[tells]["done"] == 1.0
