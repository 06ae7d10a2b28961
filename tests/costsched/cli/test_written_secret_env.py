"""An env written in a task file with a value under a name that reads like a secret's
(`redact.is_secret_name`, the one rule, as `--env`'s note reads it): `plan` and `launch`
warn in one line that names the file and the env and says to move it under `secrets:`,
never printing the value (which the job's store keeps, as every env's)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.cli.launch_given import env_note
from costsched.redact import redact
from costsched.store import PriceStore

TOKEN = "0123456789abcdef0123456789abcdef01234567"
SKY = f"""\
name: noted
resources:
  accelerators: V100:1
envs:
  WANDB_API_KEY: {TOKEN}
  EPOCHS: 3
  HF_TOKEN:
run: echo done
"""
OWN = f"""\
name: noted
model: A3C
steps: 100
envs:
  WANDB_API_KEY: {TOKEN}
  EPOCHS: 3
run: echo done
"""


def _warning(path: Path) -> str:
    return (f"warning: {path}: envs.WANDB_API_KEY is named like a secret, and its value "
            "is stored with the job in plain text; move it under secrets: (given at launch "
            "with --secret, never stored)")


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, *argv: str):  # noqa: ANN202
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    path = tmp_path / "task.yaml"
    path.write_text(text)
    db = str(tmp_path / "s.sqlite")
    PriceStore(db).dispose()  # (plan reads a store that exists)
    result = CliRunner().invoke(app, [argv[0], str(path), "--db", db, *argv[1:]])
    if argv[0] == "launch":
        CliRunner().invoke(app, ["stop", "noted", "--db", db])
    return path, result


@pytest.mark.parametrize("text", [SKY, OWN])
@pytest.mark.parametrize("argv", [("plan",), ("plan", "--json"),
                                  ("launch", "--wait", "0", "--env", "HF_TOKEN=hf-x1")])
def test_a_secret_written_as_an_env_is_warned_of_once_without_its_value(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str,
        argv: tuple[str, ...]) -> None:
    if text is OWN and "--env" in argv:
        argv = argv[:3]  # a job file's envs are its own: none is given at launch
    path, result = _run(tmp_path, monkeypatch, text, *argv)
    assert result.exit_code == 0, result.output
    assert " ".join(result.stderr.split()).count(_warning(path)) == 1
    assert TOKEN not in result.output
    assert redact(_warning(path)) == _warning(path)  # said whole wherever it is logged


def test_an_env_given_at_launch_keeps_its_own_note(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """HF_TOKEN given by --env is said by the --env note, not the file's warning."""
    _, result = _run(tmp_path, monkeypatch, SKY, "launch", "--wait", "0", "--env",
                     "HF_TOKEN=hf-x1")
    assert "envs.HF_TOKEN" not in result.output
    assert "note: HF_TOKEN is stored with the job" in result.output


def test_no_warning_for_envs_not_named_like_a_secret(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _, result = _run(tmp_path, monkeypatch, SKY.replace("WANDB_API_KEY", "WANDB_PROJECT"),
                     "plan")
    assert result.exit_code == 0, result.output
    assert "warning:" not in result.output


def test_one_rule_names_a_secret_for_the_file_and_for_env() -> None:
    """The redaction's rule: a name ending in a secret's word, not one that holds it."""
    assert env_note(["MY_SECRET_DIR", "KEYBOARD_LAYOUT", "DB_PASSWORD"]) == (
        "note: DB_PASSWORD is stored with the job like every env; a secret given with "
        "--secret never is (name it under the task's secrets:)")
