"""`plan --emit sky` keeps what the task wrote, or says beside the field (and once on stderr)
what the pinned task writes otherwise: cpus and memory stay beside the pinned type, a market
chosen of several is said, a sweep's numbers stay numbers, nodes written stay written; and
the task written reads back as one planned on the same offering."""

from __future__ import annotations

from pathlib import Path

import yaml

EITHER_MARKET = """\
name: cpu
resources:
  cpus: 8+
  memory: 32+
  disk_size: 100
  any_of:
    - {use_spot: true}
    - {use_spot: false}
num_nodes: 1
envs:
  LR: 0.1
run: python train.py
"""

SWEEP = """\
name: sweep
resources:
  accelerators: V100:1
envs:
  EPOCHS: 3
run: python train.py --lr $LR --bs $BS
costsched:
  steps: 1000
  sweep: {LR: [0.1, 0.01], BS: [32, '64', x]}
"""


def planned(cli, path: Path):  # noqa: ANN001, ANN201
    result = cli("plan", path, "--emit", "sky", "--at", "2026-11-01")
    assert result.exit_code == 0, result.output
    return result


def test_cpus_and_memory_stay_beside_the_pinned_type(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "task.yaml"
    path.write_text(EITHER_MARKET)
    out = yaml.safe_load(planned(cli, path).stdout)
    assert out["resources"]["cpus"] == "8+" and out["resources"]["memory"] == "32+"
    assert "instance_type" in out["resources"]
    assert out["resources"]["disk_size"] == 100 and out["num_nodes"] == 1  # as written
    assert out["envs"] == {"LR": 0.1}


def test_a_market_chosen_of_two_is_said_beside_use_spot_and_on_stderr(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "task.yaml"
    path.write_text(EITHER_MARKET)
    result = planned(cli, path)
    out = yaml.safe_load(result.stdout)
    market = "spot" if out["resources"]["use_spot"] else "on-demand"
    spot = "true" if out["resources"]["use_spot"] else "false"
    lines = result.stdout.splitlines()
    assert (f"  use_spot: {spot}  # pinned to {market}: the job allows spot and on-demand"
            in lines), result.stdout
    assert any(line.startswith("  infra: ") and line.endswith(
        "  # pinned to one of the 2 alternatives of its resources.any_of") for line in lines)
    notes = [line for line in result.stderr.splitlines() if line.startswith("note: job cpu's")]
    assert notes == [f"note: job cpu's task: use_spot: {spot} (pinned to {market}: the job "
                     f"allows spot and on-demand); infra: {out['resources']['infra']} (pinned "
                     "to one of the 2 alternatives of its resources.any_of)"], result.stderr


def test_markets_of_the_costsched_section_pinned_to_one_are_said(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "task.yaml"
    path.write_text("name: m\nresources: {accelerators: V100:1}\nrun: python train.py\n"
                    "costsched: {steps: 1000, markets: [spot, on_demand]}\n")
    result = planned(cli, path)
    assert "# pinned to " in result.stdout and "the job allows spot and on-demand" in \
        result.stderr
    path.write_text("name: m\nresources: {accelerators: V100:1, use_spot: true}\n"
                    "run: python train.py\ncostsched: {steps: 1000}\n")
    result = planned(cli, path)  # the one market written: nothing to say
    assert "pinned" not in result.stdout.split("\nname:", 1)[1]
    assert "note: job m's task" not in result.stderr


def test_an_unchanged_task_gets_no_comments(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "task.yaml"
    path.write_text("name: same\nresources: {accelerators: V100:1, use_spot: false}\n"
                    "num_nodes: 1\nrun: python train.py\n")
    result = planned(cli, path)
    body = result.stdout.split("\nname:", 1)[1]
    assert "#" not in body and "note: job same's task" not in result.stderr
    assert yaml.safe_load(result.stdout)["num_nodes"] == 1


def test_a_sweeps_values_keep_the_types_the_file_wrote(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "task.yaml"
    path.write_text(SWEEP)
    docs = list(yaml.safe_load_all(planned(cli, path).stdout))
    assert [(d["envs"]["LR"], d["envs"]["BS"]) for d in docs] == [
        (0.1, 32), (0.1, "64"), (0.1, "x"), (0.01, 32), (0.01, "64"), (0.01, "x")]
    assert [type(d["envs"]["BS"]) for d in docs[:3]] == [int, str, str]
    assert all(d["envs"]["EPOCHS"] == 3 for d in docs)


def test_a_costsched_job_files_sweep_keeps_its_numbers(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "job.yaml"
    path.write_text("name: own\nmodel: ResNet-50 (batch size 64)\nsteps: 1000\n"
                    "run: python train.py --lr $LR\nsweep: {LR: [0.1, 1e-3, '0.5']}\n")
    docs = list(yaml.safe_load_all(planned(cli, path).stdout))
    # (YAML reads 1e-3 as text: it stays text)
    assert [d["envs"]["LR"] for d in docs] == [0.1, "1e-3", "0.5"]


def test_the_task_written_plans_the_same_offering(cli, tmp_path: Path) -> None:  # noqa: ANN001
    for name, text in (("either", EITHER_MARKET), ("sweep", SWEEP)):
        path = tmp_path / f"{name}.yaml"
        path.write_text(text)
        first = planned(cli, path).stdout
        again = tmp_path / f"{name}-again.yaml"
        again.write_text(first.split("---\n")[0])
        second = planned(cli, again).stdout
        # The same offering (the header's first lines), the same resources and envs.
        assert first.splitlines()[1] == second.splitlines()[1], (first, second)
        out, back = yaml.safe_load(first.split("---\n")[0]), yaml.safe_load(second)
        assert back["resources"] == out["resources"] and back["envs"] == out["envs"]


def test_a_sweeps_notes_on_stderr_are_said_once_for_the_file(cli, tmp_path: Path) -> None:  # noqa: ANN001
    """Six jobs of one sweep leave out the same work: one note says so, not six."""
    path = tmp_path / "sweep.yaml"
    path.write_text(SWEEP.replace("steps: 1000", "steps: 1000\n  deadline: 12h"))
    result = planned(cli, path)
    said = [line for line in result.stderr.splitlines() if "leaves out its" in line]
    assert len(said) == 1, result.stderr
    assert "deadline (12 h)" in said[0], said
    assert len(list(yaml.safe_load_all(result.stdout))) == 6  # every job is still written


def test_a_market_is_said_chosen_only_where_the_pinned_alternative_allowed_both(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    """An on-demand first choice before a spot fallback: the task pinned to the first
    alternative is on-demand as that alternative wrote, no market was chosen."""
    path = tmp_path / "ordered.yaml"
    path.write_text("name: o\nresources:\n  ordered:\n    - {accelerators: V100:1}\n"
                    "    - {accelerators: T4:1, use_spot: true}\nrun: python train.py\n"
                    "costsched: {steps: 1000, throughputs: {V100: 50, T4: 1}}\n")
    result = planned(cli, path)
    emitted = yaml.safe_load(result.stdout)
    assert emitted["resources"]["accelerators"] == "V100:1", emitted
    assert emitted["resources"]["use_spot"] is False
    assert "pinned to on-demand" not in result.stdout + result.stderr, result.stdout
