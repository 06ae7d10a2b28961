"""A deadline that has passed is refused as the job file is read, in one line naming the
file, the job and the field, before the GPU catalog, the throughputs or the prices are
read (a SkyPilot task's accelerators read the catalog as it parses): as soon as any other
field's error. `--deadline` replaces the file's, and `--at` is the planning time."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from costsched.model import InvalidInput

HEAVY = ("pandas", "numpy", "sqlalchemy", "cvxpy")
TASK = ("name: mfrec\nresources:\n  accelerators: {L4: 1, A10G: 1}\n  use_spot: true\n"
        "run: python train.py\ncostsched:\n  throughputs: {L4: 20, A10G: 25}\n"
        "  steps: 2000\n  deadline: 2020-01-01T00:00:00Z\n")
OWN = ("name: mfrec-sweep\nrun: python train.py\nthroughputs: {L4: 20}\nsteps: 2000\n"
       "sweep:\n  LR: [0.01, 0.05]\nconstraints: {deadline: '2020-01-01T00:00Z'}\n")
AT = "2020-03-01T00:00Z"


def _refused_alone(path: Path, *options: str, command: str = "plan") -> tuple[str, list[str]]:
    """`costsched plan PATH` (or `command`) in a fresh interpreter: its output and the
    heavy packages loaded by the time it ended."""
    probe = ("import sys\nfrom costsched.cli import app\n"
             f"try:\n    app([{command!r}, {str(path)!r}, *{list(options)!r}])\n"
             "except SystemExit:\n    pass\n"
             f"print('LOADED', *sorted({{m.split('.')[0] for m in sys.modules}} & "
             f"{set(HEAVY)!r}))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, env={**__import__("os").environ, "COLUMNS": "300"})
    out = done.stdout + done.stderr
    loaded = next(line for line in out.splitlines() if line.startswith("LOADED")).split()[1:]
    return out, loaded


@pytest.mark.parametrize(("text", "field", "name"), [
    (TASK, "costsched.deadline", "mfrec"), (OWN, "constraints.deadline", "mfrec-sweep")])
def test_a_passed_deadline_is_refused_before_anything_heavy(tmp_path: Path, text: str,
                                                            field: str, name: str) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(text)
    out, loaded = _refused_alone(path)
    assert (f"error: {path}: job '{name}': field {field}: 2020-01-01T00:00Z is not after the "
            "planning time ") in out, out
    assert "Traceback" not in out
    assert loaded == [], out


def test_a_launch_refuses_a_passed_deadline_before_anything_heavy(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(TASK)
    out, loaded = _refused_alone(path, command="launch")
    assert (f"error: {path}: job 'mfrec': field costsched.deadline: 2020-01-01T00:00Z is not "
            "after the planning time ") in out, out
    assert loaded == [], out


def test_a_passed_deadline_option_is_refused_before_anything_heavy(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(TASK.replace("  deadline: 2020-01-01T00:00:00Z\n", ""))
    out, loaded = _refused_alone(path, "--deadline", "2020-01-01T00:00Z")
    assert ("error: --deadline 2020-01-01T00:00Z: 2020-01-01T00:00Z is not after the planning "
            "time ") in out, out
    assert loaded == [], out


def test_the_planning_time_is_at_and_deadline_replaces_the_files(cli, recorded_store,  # noqa: ANN001
                                                                  tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(OWN.replace("2020-01-01T00:00Z", "2020-02-01T00:00Z"))
    refused = cli("plan", str(path), "--at", AT, "--db", recorded_store.url)
    assert refused.exit_code == 2
    assert (f"{path}: job 'mfrec-sweep': field constraints.deadline: 2020-02-01T00:00Z is not "
            "after the planning time 2020-03-01T00:00Z") in refused.output
    earlier = cli("plan", str(path), "--at", "2020-01-15T00:00Z", "--db", recorded_store.url)
    assert "not after the planning time" not in earlier.output
    replaced = cli("plan", str(path), "--at", AT, "--deadline", "48h", "--db",
                   recorded_store.url)
    assert "not after the planning time" not in replaced.output, replaced.output


def test_the_service_refuses_it_before_it_opens_the_store(tmp_path: Path) -> None:
    from costsched.service import plan

    path = tmp_path / "job.yaml"
    path.write_text(TASK)

    class Unopened:  # a store that must not be reached
        def __getattr__(self, name: str) -> object:
            raise AssertionError(f"store read: {name}")

    with pytest.raises(InvalidInput, match=r"costsched\.deadline: 2020-01-01T00:00Z is not after"):
        plan(Unopened(), path, at=datetime(2020, 3, 1, tzinfo=timezone.utc))
