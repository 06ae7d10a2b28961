"""A launch missing several of a task's envs and secrets names them all in one refusal,
each with the option that gives it as the CLI spells it; names given alone (the value from
the caller's environment) that the environment does not set are named all at once too."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app

TASK = """\
name: needs-values
resources:
  accelerators: V100:1
envs:
  EPOCHS:
  DATA_DIR:
  SEED: 7
secrets:
  HF_TOKEN:
run: echo done
"""


def launch(tmp_path: Path, *options: str) -> tuple[int, list[str]]:
    path = tmp_path / "task.yaml"
    path.write_text(TASK)
    result = CliRunner().invoke(app, ["launch", str(path), "--db", str(tmp_path / "s.sqlite"),
                                      "--new-store", "--wait", "0", *options])
    return result.exit_code, result.stderr.splitlines()


def test_every_missing_env_and_secret_is_named_in_one_refusal_with_its_option(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, lines = launch(tmp_path)
    assert code == 2
    assert lines == [
        f"error: {tmp_path / 'task.yaml'}: fields envs.EPOCHS, envs.DATA_DIR, "
        "secrets.HF_TOKEN are not given: give them at launch with --env EPOCHS=VALUE --env "
        "DATA_DIR=VALUE --secret HF_TOKEN (NAME=VALUE gives a value, NAME alone takes it "
        "from your environment)"]
    # What remains missing after one try is named alone, in the same words.
    code, lines = launch(tmp_path, "--env", "EPOCHS=3", "--secret", "HF_TOKEN=hf-x-0001")
    assert code == 2
    assert lines == [
        f"error: {tmp_path / 'task.yaml'}: field envs.DATA_DIR is not given: give it at "
        "launch with --env DATA_DIR=VALUE (NAME=VALUE gives a value, NAME alone takes it "
        "from your environment)"]
    made = sorted(p.name for p in tmp_path.iterdir() if p.name != "user-dirs")  # caches aside
    assert made == ["task.yaml"]  # no store made


def test_the_options_the_refusal_names_are_taken_by_launch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hint works: given as it says (NAME alone from the environment), nothing is
    missing any more and the job is launched. A mount not there is said first, as the file
    is read (`plan` says it alike)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_TOKEN", "hf-from-env-0002")
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    path = tmp_path / "task.yaml"
    path.write_text(TASK + "file_mounts:\n  /data: ./data\n")
    options = ["--env", "EPOCHS=3", "--env", "DATA_DIR=/d", "--secret", "HF_TOKEN"]
    for given, said in (([], "field file_mounts./data: local path './data': no such file"),
                        ([], "are not given"), (options, "")):
        if said == "are not given":
            (tmp_path / "data").mkdir()
        result = CliRunner().invoke(app, ["launch", str(path), "--launcher", "local",
                                          "--db", str(tmp_path / "s.sqlite"), "--new-store",
                                          "--wait", "0", *given])
        if not said:
            assert result.exit_code == 0 and "are not given" not in result.output, result.output
            break
        assert result.exit_code == 2, (said, result.output)
        [line] = result.stderr.splitlines()
        assert said in line, line


def test_names_given_alone_and_unset_are_named_all_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("EPOCHS", "DATA_DIR", "HF_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    code, lines = launch(tmp_path, "--env", "EPOCHS", "--env", "DATA_DIR",
                         "--secret", "HF_TOKEN")
    assert code == 2
    assert lines == [
        "error: not set in your environment: --env EPOCHS, --env DATA_DIR, --secret "
        "HF_TOKEN; give each as NAME=VALUE, or set it before launching"]


def test_a_mistyped_name_given_alone_gets_the_close_name_before_not_set(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--secret HF_TOKN` or `--env EPOCH` alone, unset in the environment, misspell the
    task's HF_TOKEN and EPOCHS: the close name is said, not that the typo is unset."""
    monkeypatch.chdir(tmp_path)
    for name in ("HF_TOKN", "EPOCH"):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "task.yaml"
    for option, typed, close, noun, fix in (
            ("--secret", "HF_TOKN", "HF_TOKEN", "secret", "HF_TOKEN"),
            ("--env", "EPOCH", "EPOCHS", "env", "EPOCHS=VALUE")):
        code, lines = launch(tmp_path, option, typed)
        assert code == 2
        assert lines == [
            f"error: {path}: field {noun}s.{close} is given no value, and {option} gives "
            f"{typed!r}, which the task has not; did you mean {close!r}? ({option} {fix} "
            "gives it)"]
    made = sorted(p.name for p in tmp_path.iterdir() if p.name != "user-dirs")  # caches aside
    assert made == ["task.yaml"]  # no store made



def test_an_env_named_like_a_secret_is_hinted_by_its_name_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every printed '=VALUE' after such a name is masked: a hint '--env WANDB_KEY=***',
    followed as written, would give the value '***'. It is hinted as the name alone (its
    value from the environment), which works."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WANDB_KEY", raising=False)
    (tmp_path / "task.yaml").write_text("name: w\nresources:\n  accelerators: V100:1\n"
                                        "envs:\n  WANDB_KEY:\nrun: echo done\n")
    result = CliRunner().invoke(app, ["launch", "task.yaml", "--db", "s.sqlite", "--new-store",
                                      "--wait", "0"])
    assert result.exit_code == 2
    assert "give it at launch with --env WANDB_KEY (NAME=VALUE" in result.stderr, result.stderr
    assert "***" not in result.stderr
    monkeypatch.setenv("WANDB_KEY", "wk-0123456789abcdef")
    followed = CliRunner().invoke(app, ["launch", "task.yaml", "--db", "s.sqlite", "--new-store",
                                        "--wait", "0", "--env", "WANDB_KEY"])
    assert "envs.WANDB_KEY" not in followed.stderr, followed.stderr  # given: not asked again
