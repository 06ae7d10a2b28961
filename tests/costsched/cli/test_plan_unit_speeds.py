"""A task's speeds against the GPU costsched chose as its unit (its slowest) are one
estimate, whether its hours are given or assumed; hours on a reference_gpu written are a
speed someone saw, which the other GPUs' estimates are cut from to the slow side."""

from __future__ import annotations

import json
from pathlib import Path

from tests.costsched.cli.test_plan_assumed_work_hints import TASK  # (the trial's task)


def _speeds(cli, folder: Path, section: str, name: str) -> dict[str, float]:  # noqa: ANN001
    path = folder / name
    path.write_text(TASK.format(section=section))
    result = cli("plan", path, "--json", "--top", "50")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rankings"][0]["ranking"]
    out: dict[str, float] = {}
    for r in rows:
        out.setdefault(r["gpu_model"], r.get("speed_vs_reference") or r["steps_per_second"])
    return out


def test_hours_on_the_chosen_unit_keep_the_speeds_of_the_plan_without_work(
    cli, tmp_path: Path
) -> None:  # noqa: ANN001
    assumed = _speeds(cli, tmp_path, "", "none.yaml")
    given = _speeds(cli, tmp_path, "costsched: {hours: 2}\n", "hours.yaml")
    assert set(assumed) == {"L4", "A10G"}
    assert given["A10G"] / given["L4"] == assumed["A10G"] / assumed["L4"] > 1


def test_hours_on_a_reference_gpu_written_cut_the_others_to_the_slow_side(
    cli, tmp_path: Path
) -> None:  # noqa: ANN001
    chosen = _speeds(cli, tmp_path, "costsched: {hours: 2}\n", "hours.yaml")
    seen = _speeds(cli, tmp_path, "costsched: {hours: 2, reference_gpu: L4}\n", "ref.yaml")
    assert seen["A10G"] / seen["L4"] < chosen["A10G"] / chosen["L4"]
