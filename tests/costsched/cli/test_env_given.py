"""What `costsched launch --env` is given is checked as `--secret` is: a name close to one
of the task's secrets (not one of its envs) is refused as its misspelling, in one line
naming the secret, before anything else. Exit 2, nothing launched."""

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
CLOSE_SECRET = ("sky3.yaml: field secrets: 'WANDB_APIKEY' is given by --env but the task has "
                "no such env, only a secret close to it; did you mean 'WANDB_API_KEY'? (a "
                "secret's value is given with --secret, never stored; for a new env, write "
                "it under envs in the task)")


@pytest.mark.parametrize("given", [["WANDB_APIKEY=abcdefgh"],
                                   ["WANDB_APIKEY=x", "KM_STEPS=10"]])
def test_an_env_close_to_a_secrets_name_is_refused_as_its_misspelling(
        cli, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
        given: list[str]) -> None:
    (tmp_path / "sky3.yaml").write_text(SKY)
    monkeypatch.chdir(tmp_path)
    argv = [a for item in given for a in ("--env", item)]
    refused = cli("launch", "sky3.yaml", *argv, "--secret", "WANDB_API_KEY=abcdefgh",
                  "--launcher", "local", "--wait", "0")
    assert refused.exit_code == 2
    assert refused.output == f"error: {CLOSE_SECRET}\n"
    store = PriceStore(str(db_path))
    try:
        assert len(store.jobs.list()) == 0
    finally:
        store.dispose()


def test_the_task_refuses_it_and_adds_a_new_env_far_from_every_name() -> None:
    """A new env far from every name is added, as `sky launch --env` adds it."""
    doc = yaml.safe_load(SKY)
    with pytest.raises(InvalidInput, match="only a secret close to it"):
        parse_task(doc, "sky3.yaml", given_envs={"WANDB_APIKEY": "abcdefgh"})
    spec = parse_task(doc, "sky3.yaml", given_envs={"SEED": "3"})
    assert spec.envs["SEED"] == "3"
