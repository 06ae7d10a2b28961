"""What `costsched launch --env` is given is checked as `--secret` is: a likely misspelling
of one of the task's secrets left without a value is refused as its misspelling, in one
line naming the secret, before anything else (exit 2, nothing launched); beside a secret
given its value, the env is added, as `sky launch` adds it, with a note naming the
secret."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from costsched.model import InvalidInput
from costsched.skypilot import parse_task
from costsched.store import PriceStore

SKY = """\
name: kmeans3
resources: {accelerators: V100:1}
envs:
  KM_STEPS: 2000
secrets:
  WANDB_API_KEY:
run: python kmeans.py
"""
CLOSE_SECRET = ("sky3.yaml: field secrets.WANDB_API_KEY is given no value, and --env gives "
                "'WANDB_APIKEY', which the task has not; did you mean 'WANDB_API_KEY'? "
                "(--secret WANDB_API_KEY gives it)")


@pytest.mark.parametrize("given", [["WANDB_APIKEY=abcdefgh"],
                                   ["WANDB_APIKEY=x", "KM_STEPS=10"]])
def test_an_env_close_to_a_secret_left_without_a_value_is_refused_as_its_misspelling(
        cli, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
        given: list[str]) -> None:
    (tmp_path / "sky3.yaml").write_text(SKY)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    argv = [a for item in given for a in ("--env", item)]
    refused = cli("launch", "sky3.yaml", *argv, "--launcher", "local", "--wait", "0")
    assert refused.exit_code == 2
    assert refused.output == f"error: {CLOSE_SECRET}\n"
    store = PriceStore(str(db_path))
    try:
        assert len(store.jobs.list()) == 0
    finally:
        store.dispose()


def test_the_task_adds_a_new_env_and_one_close_to_a_secret_given_its_value() -> None:
    """A new env far from every name is added, as `sky launch --env` adds it; one close to
    a secret that --secret gives is added too, with a note naming that secret."""
    doc = yaml.safe_load(SKY)
    with pytest.raises(InvalidInput, match="did you mean 'WANDB_API_KEY'"):
        parse_task(doc, "sky3.yaml", given_envs={"WANDB_APIKEY": "abcdefgh"})
    spec = parse_task(doc, "sky3.yaml", given_envs={"SEED": "3"})
    assert spec.envs["SEED"] == "3"
    assert not [n for n in spec.task.notes if "SEED" in n]
    spec = parse_task(doc, "sky3.yaml", given_envs={"WANDB_APIKEY": "abcdefgh"},
                      given_secrets=["WANDB_API_KEY"])
    assert spec.envs["WANDB_APIKEY"] == "abcdefgh"
    # The secret's value comes from --secret in the same launch: said so, not 'its own'.
    assert ("--env WANDB_APIKEY adds an env the task has not, beside its secret "
            "WANDB_API_KEY, which --secret WANDB_API_KEY gives too" in spec.task.notes)


def test_the_note_beside_a_close_env_says_where_its_value_comes_from() -> None:
    """A close env the same launch gives with --env is said to be given so (it does not
    keep the file's value); one it does not give keeps the file's, and the note says how
    to give it."""
    doc = yaml.safe_load(SKY)
    both = parse_task(doc, "sky3.yaml", given_envs={"KM_STEP": "100", "KM_STEPS": "120"},
                      given_secrets=["WANDB_API_KEY"])
    assert both.envs["KM_STEPS"] == "120" and both.envs["KM_STEP"] == "100"
    assert [n for n in both.task.notes if n.startswith("--env KM_STEP ")] == [
        "--env KM_STEP adds an env the task has not, beside its env KM_STEPS, which --env "
        "KM_STEPS gives too"]
    alone = parse_task(doc, "sky3.yaml", given_envs={"KM_STEP": "100"},
                       given_secrets=["WANDB_API_KEY"])
    assert alone.envs["KM_STEPS"] == "2000"
    assert [n for n in alone.task.notes if n.startswith("--env KM_STEP ")] == [
        "--env KM_STEP adds an env the task has not, beside its env KM_STEPS, which keeps "
        "its own value (--env KM_STEPS=VALUE gives that one)"]
