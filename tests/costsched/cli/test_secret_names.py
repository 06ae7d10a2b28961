"""A secret's name, as an env's, is set in the job's environment: `plan` refuses one that
no shell could set (or `--secret` give) in one line naming the file, the field as written
and the accepted form, exit 2, for a SkyPilot task and a costsched job alike."""

from __future__ import annotations

from pathlib import Path

import pytest

ACCEPTED = ("expected an environment variable name (letters, digits and _, not starting "
            "with a digit)")


@pytest.mark.parametrize(("lines", "said"), [
    ('secrets: {"BAD TOKEN": null}', "field secrets: 'BAD TOKEN'"),
    ('secrets: {"1TOKEN": written-value, OK: null}', "field secrets: '1TOKEN'"),
    ('envs: {"BAD NAME": null}', "field envs: 'BAD NAME'"),  # given at launch: the same
])
def test_a_task_with_a_name_no_shell_can_set_is_refused_at_plan(
        cli, tmp_path: Path, lines: str, said: str) -> None:  # noqa: ANN001
    path = tmp_path / "sec1.yaml"
    path.write_text(f"resources: {{accelerators: V100:1}}\n{lines}\nrun: python x.py\n")
    planned = cli("plan", path)
    assert planned.exit_code == 2
    assert planned.output == f"error: {path}: job 'sec1': {said}: {ACCEPTED}\n"


def test_a_costsched_job_with_such_a_secret_is_refused_too(cli, tmp_path: Path  # noqa: ANN001
                                                           ) -> None:
    path = tmp_path / "own.yaml"
    path.write_text("name: own\nthroughputs: {V100: 5}\nsteps: 10\nrun: x\n"
                    'task: {secrets: ["BAD TOKEN"], written_secrets: {"BAD TOKEN": v-1234}}\n')
    planned = cli("plan", path)
    assert planned.exit_code == 2
    assert planned.output == f"error: {path}: job 'own': field task.secrets: 'BAD TOKEN': " \
        f"{ACCEPTED}\n"


def test_good_names_are_planned(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "ok.yaml"
    path.write_text("resources: {accelerators: V100:1}\nsecrets: {HF_TOKEN: null, _B2: null}\n"
                    "run: python x.py\n")
    planned = cli("plan", path)
    assert planned.exit_code == 0, planned.output
    assert "at launch, give --secret HF_TOKEN, --secret _B2" in planned.output


@pytest.mark.parametrize(("option", "item", "name"), [
    ("--secret", "BAD TOKEN=v4lue-1", "BAD TOKEN"), ("--secret", "1TOKEN=v4lue-1", "1TOKEN"),
    ("--env", "1X=3", "1X")])
def test_launch_refuses_such_a_name_given_as_an_option_by_the_same_rule(
        cli, tmp_path: Path, option: str, item: str, name: str) -> None:  # noqa: ANN001
    """The name is shown (never masked as a value) with the form accepted."""
    path = tmp_path / "ok.yaml"
    path.write_text("resources: {accelerators: V100:1}\nsecrets: {HF_TOKEN: null}\n"
                    "run: python x.py\n")
    launched = cli("launch", path, option, item, "--wait", "0")
    assert launched.exit_code == 2
    assert launched.output == (f"error: {option} NAME=VALUE: {name!r} is not an environment "
                               "variable name (letters, digits and _, not starting with a "
                               "digit); expected NAME=VALUE or NAME\n")
