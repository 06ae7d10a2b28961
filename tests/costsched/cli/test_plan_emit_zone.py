"""A task pinned to a zone keeps it: `plan --emit sky` writes `infra: cloud/region/zone`
where its offering is priced for the whole region (on-demand), the emitted task reads back
to the same place and the same plan, and the plan's table names the zone under it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from costsched.taskfile import read_jobs

TASK = """\
name: pinned
resources:
  cloud: gcp
  region: us-central1
  zone: us-central1-a
  instance_type: n1-standard-4
  accelerators: T4:1
run: python train.py
"""


def test_a_pinned_zone_is_kept_by_the_emitted_task(cli, tmp_path: Path,  # noqa: ANN001
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    monkeypatch.chdir(tmp_path)
    Path("task.yaml").write_text(TASK)
    emitted = cli("plan", "task.yaml", "--emit", "sky")
    assert emitted.exit_code == 0, emitted.output
    task = yaml.safe_load(emitted.stdout)
    assert task["resources"]["infra"] == "gcp/us-central1/us-central1-a", task
    # the round trip: the emitted task reads back to the place the user wrote
    Path("emitted.yaml").write_text(emitted.stdout)
    [(_, again)] = read_jobs([Path("emitted.yaml")])
    [(_, first)] = read_jobs([Path("task.yaml")])
    assert again.constraints.zones == first.constraints.zones == ["us-central1-a"]
    assert again.constraints.regions == first.constraints.regions
    twice = cli("plan", "emitted.yaml", "--emit", "sky")
    assert yaml.safe_load(twice.stdout)["resources"] == task["resources"]

    shown = cli("plan", "task.yaml")
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.stdout.split())
    assert ("gcp us-central1 is priced for the whole region; resources.zone in task.yaml "
            "names us-central1-a there, which `costsched plan --emit sky` keeps") in text, text
