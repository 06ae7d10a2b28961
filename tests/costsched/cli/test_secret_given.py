"""What `costsched launch --secret` is given is checked as `--env` is: a name close to one
of the task's envs or secrets is refused as its misspelling before anything else, and a
value too short to be masked is said to come from the command line (`--secret NAME`),
never from the file. One line, exit 2, nothing launched."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.store import PriceStore

SKY2 = """\
name: kmeans2
resources: {accelerators: V100:1}
envs:
  KM_STEPS: 2000
  WANDB_API_KEY: sk-SUPERSECRET-4242abcd
secrets:
  HF_TOKEN:
run: python kmeans.py
"""
SHORT = ("is given a value shorter than 4 characters; a job's output is masked of secrets "
         "from 4 characters (a shorter one would mask ordinary words), so its log could show "
         "this one: give the real secret, or give the value with --env if it need not be "
         "secret")
CLOSE_ENV = ("field envs: 'WANDB_APIKEY' is given by --secret but the task has no such "
             "secret, only an env close to it; did you mean 'WANDB_API_KEY'? (an env's value "
             "is given with --env; to give it with --secret, move it from envs: to secrets: "
             "in the task; for a new secret, write it under secrets in the task)")


@pytest.mark.parametrize(("given", "line"), [
    # Misspelt: the env's close name, before the value's length.
    (["WANDB_APIKEY=x"], f"sky2.yaml: {CLOSE_ENV}"),
    (["WANDB_APIKEY=abcdefgh", "HF_TOKEN=hf-12345"], f"sky2.yaml: {CLOSE_ENV}"),
    # A secret's close name, as before.
    (["HF_TOKN=hf-12345"], "sky2.yaml: field secrets: 'HF_TOKN' is given by --secret but "
     "the task has no such secret; did you mean 'HF_TOKEN'? (for a new secret, write it "
     "under secrets in the task)"),
    # Too short, from the command line: said of the option, not of the file.
    (["HF_TOKEN=x"], f"--secret HF_TOKEN {SHORT}"),
    (["HF_TOKEN=hf-12345", "NEWTOK=ab"], f"--secret NEWTOK {SHORT}"),
    (["HF_TOKEN="], "--secret HF_TOKEN is given empty; give its value (--secret "
     "NAME=VALUE), or set it in your environment"),
])
def test_a_bad_secret_given_at_launch_is_one_line(
        cli, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
        given: list[str], line: str) -> None:
    (tmp_path / "sky2.yaml").write_text(SKY2)
    monkeypatch.chdir(tmp_path)
    argv = [a for item in given for a in ("--secret", item)]
    refused = cli("launch", "sky2.yaml", *argv, "--launcher", "local", "--wait", "0")
    assert refused.exit_code == 2
    assert refused.output == f"error: {line}\n"
    store = PriceStore(str(db_path))
    try:
        assert len(store.jobs.list()) == 0
    finally:
        store.dispose()


def test_the_same_name_as_an_env_is_still_refused_as_in_both(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    (tmp_path / "sky2.yaml").write_text(SKY2)
    monkeypatch.chdir(tmp_path)
    refused = cli("launch", "sky2.yaml", "--secret", "WANDB_API_KEY=abcdefgh",
                  "--launcher", "local", "--wait", "0")
    assert refused.exit_code == 2
    # (its name quoted, no word after it and a colon: none is masked as its value)
    assert refused.output == ("error: sky2.yaml: field secrets: 'WANDB_API_KEY' is also in "
                              "envs; give each name in one of the two\n")
