"""A checkpoint location on this machine's disk that cannot be made is said by `plan` and
refused by `launch` in one line naming the file and field, before any job is stored (the
local launcher makes the job's folder there when it starts it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.store import PriceStore

TASK = """\
name: ckloc
resources:
  accelerators: V100:1
  use_spot: true
run: echo hi
costsched: {{hours: 1, checkpoint: {{location: {location}}}}}
"""
SPEC = """\
name: ckloc
model: ResNet-50 (batch size 64)
steps: 1000
checkpoint: {{location: {location}}}
"""


@pytest.mark.parametrize(("text", "field"), [(TASK, "costsched.checkpoint.location"),
                                             (SPEC, "checkpoint.location")])
def test_a_location_that_cannot_be_made_is_said_by_plan_and_refused_by_launch(
        cli, tmp_path: Path, db_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
        text: str, field: str) -> None:
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    location = f"{blocker}/ckpt"
    path = tmp_path / "ckloc.yaml"
    path.write_text(text.format(location=location))
    said = f"{path}: field {field}: {location}: {blocker} is a file, not a folder; expected "

    planned = cli("plan", path)
    assert planned.exit_code == 0, planned.output
    assert f"launch needs: {said}" in " ".join(planned.output.split())

    launched = cli("launch", path, "--wait", "0")
    assert launched.exit_code == 2
    assert launched.output.strip().startswith(f"error: {said}"), launched.output
    store = PriceStore(str(db_path))
    try:
        assert store.jobs.records() == []  # nothing stored
    finally:
        store.dispose()


def test_a_location_that_can_be_made_is_left_as_it_was(cli, tmp_path: Path) -> None:  # noqa: ANN001
    location = tmp_path / "not" / "yet"
    path = tmp_path / "ckloc.yaml"
    path.write_text(TASK.format(location=location))
    planned = cli("plan", path)
    assert planned.exit_code == 0 and "launch needs" not in planned.output
    assert not (tmp_path / "not").exists()  # the folders made to find out are removed


def test_a_configured_root_that_cannot_be_made_is_refused_before_anything_is_stored(
        cli, tmp_path: Path, db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """A job without a location of its own keeps its checkpoints under launch.checkpoint_root:
    a local root that cannot be made names the setting, and no failed job is stored."""
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("COSTSCHED_LAUNCH_CHECKPOINT_ROOT", f"{blocker}/root")
    path = tmp_path / "job.yaml"
    path.write_text("name: rooted\nmodel: ResNet-50 (batch size 64)\nsteps: 1000\n")
    launched = cli("launch", path, "--wait", "0")
    assert launched.exit_code == 2, launched.output
    said = " ".join(launched.output.split())
    assert said.startswith("error: setting launch.checkpoint_root (the configuration file, or "
                           f"COSTSCHED_LAUNCH_CHECKPOINT_ROOT): {blocker}/root: {blocker} is a "
                           "file, not a folder; expected a folder"), said
    store = PriceStore(str(db_path))
    try:
        assert store.jobs.records() == []  # nothing stored
    finally:
        store.dispose()
