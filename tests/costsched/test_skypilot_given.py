"""The names a launch gives a SkyPilot task against the names its file lists: a new name is
added, as `sky launch` adds it, even one that starts as a task's name does (STEP_SECONDS
beside STEPS); a name given with the other field's option is refused naming the option
typed, the file's field there is and the fix, never a field the file does not have."""

from __future__ import annotations

import pytest

from costsched.model import InvalidInput
from costsched.redact import redact
from costsched.skypilot import parse_task

TASK = {"name": "mfrec", "run": "python train.py", "resources": {"accelerators": "L4:1"}}


def _refusal(doc: dict, **given: object) -> str:
    with pytest.raises(InvalidInput) as caught:
        parse_task({**TASK, **doc}, "sky.yaml", **given)
    return str(caught.value)


def test_an_env_that_starts_as_a_tasks_env_does_is_added_with_no_note() -> None:
    spec = parse_task({**TASK, "envs": {"STEPS": 4000, "DATA_DIR": "/data"}}, "sky.yaml",
                      given_envs={"STEP_SECONDS": "0.12"})
    assert spec.envs == {"STEPS": "4000", "DATA_DIR": "/data", "STEP_SECONDS": "0.12"}
    assert not [n for n in spec.task.notes if "STEP_SECONDS" in n]


@pytest.mark.parametrize(("typed", "names", "meant"), [
    ("STEP_SECONDS", ["STEPS"], []), ("KM_DELAY", ["KM_STEPS"], []),
    ("EPOCS", ["EPOCHS"], ["EPOCHS"]), ("epochs", ["EPOCHS"], ["EPOCHS"]),
    ("WANDB_APIKEY", ["WANDB_API_KEY"], ["WANDB_API_KEY"]), ("LR", ["LB"], []),
])
def test_a_likely_misspelling_is_a_slip_away_not_a_name_with_words_of_its_own(
        typed: str, names: list[str], meant: list[str]) -> None:
    from costsched.vocabulary import misspelt

    assert misspelt(typed, names) == meant


def test_a_secret_given_for_an_env_with_a_value_names_the_option_and_the_env() -> None:
    """The trial's task: envs.WANDB_API_KEY written, no secrets: field."""
    line = _refusal({"envs": {"WANDB_API_KEY": "wandbsk-T48"}},
                    given_secrets=["WANDB_API_KEY"])
    assert line == ("sky.yaml: --secret WANDB_API_KEY names an env of the task: "
                    "envs.WANDB_API_KEY there gives it a value, stored with the job in plain "
                    "text; remove envs.WANDB_API_KEY from sky.yaml for --secret to give it "
                    "(never stored)")
    assert "field secrets" not in line and redact(line) == line


def test_a_secret_given_for_an_env_given_at_launch_says_the_two_steps() -> None:
    line = _refusal({"envs": {"HF_TOKEN": None}}, given_secrets=["HF_TOKEN"])
    assert line.startswith("sky.yaml: --secret HF_TOKEN names an env of the task, given at "
                           "launch with --env (envs.HF_TOKEN); move HF_TOKEN from envs: to "
                           "secrets: in the task")
    assert redact(line) == line
    plain = _refusal({"envs": {"SEED": None}}, given_secrets=["SEED"])
    assert plain.endswith("move SEED from envs: to secrets: in the task for --secret to give "
                          "it (never stored)")


def test_an_env_given_for_a_secret_names_the_option_and_the_secret() -> None:
    line = _refusal({"secrets": {"WANDB_API_KEY": None}},
                    given_envs={"WANDB_API_KEY": "wandbsk-T48"})
    assert line == ("sky.yaml: --env WANDB_API_KEY names a secret of the task: "
                    "secrets.WANDB_API_KEY there; give it with --secret WANDB_API_KEY (never "
                    "stored), or move it from secrets: to envs: in sky.yaml for --env to give "
                    "it (stored with the job)")
    assert redact(line) == line


def test_one_name_given_with_both_options_is_refused_naming_both() -> None:
    line = _refusal({}, given_envs={"SEED": "3"}, given_secrets=["SEED"])
    assert line == ("sky.yaml: --env SEED and --secret SEED give one variable twice: give it "
                    "with one of the two (a secret is never stored, an env is stored with "
                    "the job)")


def test_a_name_under_both_fields_of_the_file_is_said_of_the_file() -> None:
    line = _refusal({"envs": {"TOKEN": None}, "secrets": {"TOKEN": None}})
    assert line == ("sky.yaml: field secrets: 'TOKEN' is also in envs; give each name in one "
                    "of the two")


def test_the_registry_password_in_envs_form_is_a_secret_to_give_with_secret() -> None:
    """SkyPilot's envs form of SKYPILOT_DOCKER_PASSWORD is a secret here: --secret gives
    it, no clash."""
    spec = parse_task({**TASK, "envs": {"SKYPILOT_DOCKER_PASSWORD": None}}, "sky.yaml",
                      given_secrets=["SKYPILOT_DOCKER_PASSWORD"])
    assert spec.task.secrets == ["SKYPILOT_DOCKER_PASSWORD"]
