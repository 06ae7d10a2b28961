"""`start` of a finished job of a sweep names the file's launch, which makes every job of
the sweep again, and says so: all N of them, not that one alone, and how to run only that
one (a copy of the file without its sweep, with its own values under envs). Both hints are
run: the file's launch makes the N jobs, the copy's one job with its values."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from costsched.cli import app

TASK = """\
name: sw
resources:
  accelerators: V100:1
run: echo "hidden=$HIDDEN"
costsched:
  sweep:
    HIDDEN: [8, 16, 24]
"""


def test_start_of_a_finished_sweep_job_says_the_file_launches_them_all(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    path, db = tmp_path / "sweep.yaml", str(tmp_path / "s.sqlite")
    path.write_text(TASK)

    def cli(*args: str):  # noqa: ANN202
        return CliRunner().invoke(app, [*args, "--db", db])

    def states() -> dict[str, str]:
        import json

        return {j["name"]: j["state"] for j in json.loads(cli("status", "--json").stdout)["jobs"]}

    assert cli("launch", str(path), "--new-store", "--wait", "0").exit_code == 0
    deadline = time.monotonic() + 60  # a stop for jobs that never end, not a bound
    while set(states().values()) != {"succeeded"} and time.monotonic() < deadline:
        time.sleep(0.3)
    assert states() == {"sw-1": "succeeded", "sw-2": "succeeded", "sw-3": "succeeded"}

    refused = cli("start", "sw-2")
    assert refused.exit_code == 2
    said = " ".join(refused.stderr.split())
    assert said.endswith(
        f"`costsched launch {path}` (the file it was launched from) launches all 3 jobs of "
        "its sweep sw (sw-1..3) again as new jobs, started afresh, not sw-2 alone; to run "
        "only sw-2, launch a copy of the file without its sweep: and with HIDDEN: 16 under "
        "envs:"), said

    # The copy it describes makes that one job, with its value.
    copy = yaml.safe_load(TASK)
    del copy["costsched"]["sweep"]
    copy["envs"] = {"HIDDEN": 16}
    alone = tmp_path / "alone.yaml"
    alone.write_text(yaml.safe_dump(copy))
    launched = cli("launch", str(alone), "--wait", "0", "--json")
    assert launched.exit_code == 0, launched.output
    import json

    assert [j["name"] for j in json.loads(launched.stdout)] == ["sw"]
    # And the file's launch, as it says, makes all three again.
    for name in ("sw-1", "sw-2", "sw-3"):
        assert states()[name] == "succeeded"
    again = cli("launch", str(path), "--wait", "0", "--json")
    assert again.exit_code == 0, again.output
    assert [j["name"] for j in json.loads(again.stdout)] == ["sw-1", "sw-2", "sw-3"]
    cli("stop", "sw")
    for name in ("sw-1", "sw-2", "sw-3"):
        cli("stop", name)
