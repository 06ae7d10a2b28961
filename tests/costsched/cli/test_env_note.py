"""An --env whose name reads like a secret's (…KEY, …TOKEN, …SECRET, …PASSWORD...): its
value is stored with the job, as every env's is (a recovery needs it without the launching
shell), so the launch says so once, and that --secret is the way never to store it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.cli.launch_given import env_note
from costsched.redact import redact
from costsched.store import PriceStore

TASK = """\
name: noted
resources:
  accelerators: V100:1
run: echo done
"""
NOTE = ("note: WANDB_API_KEY is stored with the job like every env; a secret given with "
        "--secret never is (name it under the task's secrets:)")


def launch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *options: str):  # noqa: ANN201
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    path = tmp_path / "task.yaml"
    path.write_text(TASK)
    db = tmp_path / "s.sqlite"
    result = CliRunner().invoke(app, ["launch", str(path), "--db", str(db), "--new-store",
                                      "--wait", "0", *options])
    assert result.exit_code == 0, result.output
    CliRunner().invoke(app, ["stop", "noted", "--db", str(db)])
    return result


def test_an_env_named_like_a_secret_is_said_to_be_stored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = launch(tmp_path, monkeypatch, "--env", "WANDB_API_KEY=wk-9f8e7d6c5b4a",
                    "--env", "EPOCHS=3")
    assert result.stdout.count(NOTE) == 1 and "wk-9f8e7d6c5b4a" not in result.output
    store = PriceStore(str(tmp_path / "s.sqlite"))
    [record] = store.jobs.records()
    store.dispose()
    # As the note says: the env's value is stored with the job.
    assert "wk-9f8e7d6c5b4a" in json.dumps(record.spec)


def test_the_note_goes_to_stderr_beside_json(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    result = launch(tmp_path, monkeypatch, "--env", "HF_TOKEN=hf-0123456789", "--json")
    json.loads(result.stdout)
    assert result.stderr.count("note: HF_TOKEN is stored with the job") == 1


def test_no_note_for_envs_not_named_like_a_secret(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    result = launch(tmp_path, monkeypatch, "--env", "EPOCHS=3")
    assert result.exit_code == 0, result.output
    # (other notes may stand, e.g. on the prices' age: none names the env)
    assert "EPOCHS" not in result.output and "stored with the job" not in result.output


@pytest.mark.parametrize("names, said", [
    (["WANDB_API_KEY"], NOTE),
    (["EPOCHS", "db_password", "Aws_Credentials", "MY_SECRET_DIR", "LR"],
     # (MY_SECRET_DIR names a folder: the redaction's rule, a name ending in the word)
     "note: db_password and Aws_Credentials are stored with the job like every env; a "
     "secret given with --secret never is (name them under the task's secrets:)"),
    (["SMTP_PASSWD", "GH_TOKEN"], "note: SMTP_PASSWD and GH_TOKEN are stored with the job "
     "like every env; a secret given with --secret never is (name them under the task's "
     "secrets:)"),
    (["EPOCHS", "LR"], None),
])
def test_the_note_names_every_env_named_like_a_secret(names: list[str],
                                                      said: str | None) -> None:
    assert env_note(names) == said
    assert said is None or redact(said) == said
