"""What `costsched launch --secret` is given is checked as `--env` is: a likely misspelling
of one of the task's secrets or envs left without a value is refused as its misspelling
before anything else, a name of the task's envs is refused naming the option typed and the
file's field, and a value too short to be masked is said to come from the command line
(`--secret NAME`), never from the file. One line, exit 2, nothing launched."""

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
MISSPELT = ("sky2.yaml: field secrets.HF_TOKEN is given no value, and --secret gives "
            "'HF_TOKN', which the task has not; did you mean 'HF_TOKEN'? (--secret HF_TOKEN "
            "gives it)")


@pytest.mark.parametrize(("given", "line"), [
    # A secret's misspelling, left without its value: the close name, before the length.
    (["HF_TOKN=hf-12345"], MISSPELT),
    (["HF_TOKN=x"], MISSPELT),
    # Beside an env that has its value, a new secret, as `sky launch` adds it; its value
    # checked as any other's.
    (["WANDB_APIKEY=x", "HF_TOKEN=hf-12345"], f"--secret WANDB_APIKEY {SHORT}"),
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


def test_a_secret_given_for_an_env_the_file_writes_names_the_option_and_the_field(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """The file has no secrets: field: the line names the --secret typed, the env that
    clashes and how to make it a secret; no word follows a name after ':' (none masked)."""
    (tmp_path / "sky2.yaml").write_text(SKY2)
    monkeypatch.chdir(tmp_path)
    refused = cli("launch", "sky2.yaml", "--secret", "WANDB_API_KEY=abcdefgh",
                  "--launcher", "local", "--wait", "0")
    assert refused.exit_code == 2
    assert refused.output == (
        "error: sky2.yaml: --secret WANDB_API_KEY names an env of the task: "
        "envs.WANDB_API_KEY there gives it a value, stored with the job in plain text; "
        "remove envs.WANDB_API_KEY from sky2.yaml for --secret to give it (never stored)\n")
