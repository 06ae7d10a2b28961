"""What `plan` says of a task whose GPUs, places or markets leave something out, on the
bundled catalog: within the task's own clouds and market, once per accelerator, with what
exists instead; a `throughputs:` entry for a GPU the job does not ask for; a file that is
not a job file; and what `launch` will refuse (a budget name no budget has)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

OTHER_CLOUDS = re.compile(r"\b(us-south1|asia-east1|asia-southeast1|centralus|eastus|"
                          r"us-central1|europe-west\d)\b")


def _task(tmp_path: Path, text: str, name: str = "task.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _notes(cli, path: Path) -> list[str]:  # noqa: ANN001
    result = cli("plan", path, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["jobs"][0]["notes"]


def test_a_region_without_the_shape_names_the_regions_of_its_cloud_that_have_it(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = _task(tmp_path, "name: np2\nresources:\n  infra: aws/ap-south-1\n"
                 "  accelerators: A10G:1\n  use_spot: true\nrun: 'true'\n")
    result = cli("plan", path)
    assert result.exit_code == 1, result.output
    said = " ".join(result.stderr.split())
    assert re.search(r"has region ap-south-1; A10G:1 spot on aws is priced in "
                     r"[a-z]+-[a-z]+-\d(, [a-z]+-[a-z]+-\d)*", said), said
    for region in ("us-east-1", "us-west-2", "eu-west-1"):
        assert region in said
    assert not OTHER_CLOUDS.search(said), said
    assert "did you mean" not in said  # ap-south-1 is an aws region, no typo


def test_a_gpu_a_task_s_cloud_lacks_is_noted_once(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = _task(tmp_path, "name: np3\nresources:\n  infra: gcp\n"
                 "  accelerators: {L4: 1, A10G: 1}\n  use_spot: true\nrun: 'true'\n")
    notes = [n for n in _notes(cli, path) if "A10G" in n]
    assert notes == ["resources.accelerators: A10G:1 dropped: no instance type of the "
                     "catalog on gcp has it (A10G:1 is offered on aws)"]


def test_prices_elsewhere_say_their_market(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = _task(tmp_path, "name: np4\nresources:\n  infra: aws/eu-west-1\n"
                 "  accelerators: {L4: 1, A10G: 1}\n  use_spot: true\nrun: 'true'\n")
    [note] = [n for n in _notes(cli, path) if n.startswith("L4:1 left out")]
    assert re.match(r"L4:1 left out: no spot price known as of \S+ for L4:1 in aws, "
                    r"eu-west-1; on-demand elsewhere: aws \S+ g6\.xlarge \$", note), note
    assert "priced elsewhere" not in note


def test_a_gpu_count_a_cloud_lacks_names_the_counts_and_clouds_that_have_it(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = _task(tmp_path, "name: np5\nresources:\n  infra: aws\n  accelerators: A100:1\n"
                 "run: 'true'\n")
    result = cli("plan", path)
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert "on aws A100 comes as 8 GPUs (p4d.24xlarge)" in said, said
    assert "A100:1 is offered on gcp (a2-highgpu-1g)" in said, said
    # On any cloud, the counts each has it at.
    path.write_text("name: np5\nresources:\n  accelerators: A100:3\nrun: 'true'\n")
    said = " ".join(cli("plan", path).output.split())
    assert "on aws A100 comes as 8 GPUs (p4d.24xlarge); on gcp A100 comes as 1, 2, 4, 8 or " \
           "16 GPUs;" in said, said


SECTION = ("name: np6\nresources:\n  accelerators: {L4: 1, A10G: 1}\n  use_spot: true\n"
           "run: 'true'\ncostsched:\n  model: my-model\n  steps: 10000\n"
           "  throughputs: {L4: 40, %s: 45}\n")


def test_a_throughput_of_a_gpu_the_task_does_not_ask_for_is_noted(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    notes = _notes(cli, _task(tmp_path, SECTION % "A10"))
    # A10 is a GPU of its own, not a slip for A10G: the note, with no "did you mean".
    assert ("costsched.throughputs: A10 is not one of the task's accelerators (A10G, L4): "
            "its figure only helps estimate them") in notes, notes
    assert "did you mean" not in " ".join(notes), notes
    # A GPU the user measured that reads like one the task asks for (T4, L4): no rename
    # offered, which would give L4 the T4's speed.
    notes = _notes(cli, _task(tmp_path, SECTION.replace("L4: 40, %s: 45", "T4: 20")))
    assert [n for n in notes if "throughputs" in n] == [
        "costsched.throughputs: T4 is not one of the task's accelerators (A10G, L4): its "
        "figure only helps estimate them"], notes
    # Every accelerator with a figure of its own: nothing to say.
    assert not [n for n in _notes(cli, _task(tmp_path, SECTION.replace(
        "L4: 40, %s: 45", "L4: 40, A10G: 30, A10: 45"))) if "throughputs" in n]


def test_a_job_file_s_throughputs_are_checked_against_its_gpu_models(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = _task(tmp_path, "name: j\nrun: 'true'\nmodel: my-model\nsteps: 1000\n"
                 "throughputs: {V100: 5, T4: 2}\nconstraints: {gpu_models: [A100, V100]}\n")
    notes = _notes(cli, path)
    assert ("throughputs: T4 is not one of the job's GPU models (constraints.gpu_models: "
            "A100, V100): its figure only helps estimate them") in notes, notes


@pytest.mark.parametrize("name", ["train.py", "notes.txt"])
def test_a_file_that_is_not_a_job_file_is_said_to_be_so(cli, tmp_path: Path,  # noqa: ANN001
                                                         name: str) -> None:
    path = _task(tmp_path, "import os\n\ndef main():\n    x: int = 1\n    print(x)\n", name)
    result = cli("plan", path)
    assert result.exit_code == 2, result.output
    suffix = Path(name).suffix
    said = " ".join(result.output.split())
    if suffix == ".py":  # a script: the job that runs it (tests/costsched/test_smallest_job.py)
        assert f"{path}: not a job file (a .py file): a job is a YAML file (a costsched job " \
               "or a SkyPilot task), not a script; " in said, said
    else:
        assert f"{path}: not a job file (a {suffix} file): expected a costsched job file or " \
               "a SkyPilot task (YAML); see examples/" in said, said


def test_a_budget_name_no_budget_has_is_said_as_launch_will_refuse_it(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    config = tmp_path / "config.toml"
    config.write_text('[budgets.named.team]\nusd = 500\nperiod = "month"\n')
    monkeypatch.setenv("COSTSCHED_CONFIG", str(config))
    path = _task(tmp_path, "name: j\nrun: 'true'\nmodel: ResNet-50 (batch size 64)\n"
                 "steps: 1000\nconstraints: {budget_name: taem}\n")
    notes = _notes(cli, path)
    assert [n for n in notes if n.startswith("launch will refuse: ")] == [
        "launch will refuse: field constraints.budget_name 'taem': no budget of that name "
        "in the configuration: expected one of team (budgets.named); did you mean 'team'?"]
    # launch refuses with the same words
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    launched = cli("launch", path, "--wait", "0")
    assert launched.exit_code == 2
    assert "field constraints.budget_name 'taem': no budget of that name in the " \
           "configuration" in " ".join(launched.output.split())


def test_a_config_section_in_a_note_or_help_is_shown_as_written(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """`[budgets.named.NAME]` reads as it is written, not taken for a style by Rich: in
    plan's note of a budget no configuration has (the section it tells to add) and in
    `status --help`."""
    path = _task(tmp_path, "name: j\nrun: 'true'\nmodel: ResNet-50 (batch size 64)\n"
                 "steps: 1000\nconstraints: {budget_name: visoin}\n")
    result = cli("plan", path, "--top", "1")
    assert result.exit_code == 0, result.output
    said = " ".join(result.stdout.split())
    assert "no budget is configured: add [budgets.named.visoin] with usd and period to " \
           "the configuration" in said, said
    monkeypatch.setenv("COLUMNS", "250")
    helped = cli("status", "--help")
    assert "or a named budget's labels ([budgets.named.NAME])." in helped.stdout
