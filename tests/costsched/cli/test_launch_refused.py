"""A launch refused for bad input writes nothing: no store file is made (nor its journal),
whether the refusal needs no store (the launcher, a task's fields, a credential in its
envs, a mount that is not there) or is what the launch would find on a new, empty store
(the job's work, an offering that is not priced); the refusal is one line, and says
nothing of a store. A launch that is taken makes its store and says so once: the default
store, or one --db names with --new-store (a --db that does not exist is a typo, named)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app

TASK = """\
name: refused
resources:
  accelerators: V100:1
{extra}run: echo done
"""

REFUSED = {
    "launcher": ("", ["--launcher", "nope"], "launcher 'nope': expected one of"),
    "field": ("  disk_tier: weird\n", [], "field resources.disk_tier: 'weird'"),
    "credential": ("envs:\n  AWS_SECRET_ACCESS_KEY: x\n", [],
                   "field envs.AWS_SECRET_ACCESS_KEY is a cloud credential, which is "
                   "neither stored nor sent to instances"),  # no word masked as its value
    "mount": ("file_mounts:\n  /data: ./not-here\n", [], "field file_mounts./data: local path"),
    "work": ("costsched:\n  model: no-such-model\n  steps: 10\n", [],
             "field costsched.model: unknown model 'no-such-model'"),
    "offering": ("", ["--offering", "aws:us-east-1a:p3.2xlarge:nowhere"],
                 "offering 'aws:us-east-1a:p3.2xlarge:nowhere'"),
}


def task(tmp_path: Path, extra: str) -> Path:
    # `resources:` ends where a top-level field begins.
    text = TASK.format(extra=extra) if extra.startswith(" ") else \
        TASK.replace("{extra}", "") + extra
    path = tmp_path / "task.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_refused_launch_makes_no_store(case: str, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    extra, options, said = REFUSED[case]
    db = tmp_path / "new.sqlite"
    result = CliRunner().invoke(app, ["launch", str(task(tmp_path, extra)), "--db", str(db),
                                      "--new-store", "--wait", "0", *options])
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith("error: ") and said in line, line
    assert "creating the store" not in result.stderr
    # Nothing made beside the task; the test's own user directories (conftest) may hold a
    # cache of the catalog that the refusal read, never a store.
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "user-dirs") == ["task.yaml"]
    assert [p.name for p in tmp_path.rglob("*") if "sqlite" in p.name] == []


def test_a_launch_taken_makes_its_store_and_says_so_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    db = tmp_path / "new.sqlite"
    result = CliRunner().invoke(app, ["launch", str(task(tmp_path, "")), "--db", str(db),
                                      "--new-store", "--wait", "0", "--json"])
    assert result.exit_code == 0, result.output
    assert result.stderr.count(f"creating the store {db}") == 1 and db.exists()
    stopped = CliRunner().invoke(app, ["stop", "refused", "--db", str(db)])
    assert stopped.exit_code in (0, 2), stopped.output  # 2: it had finished already


def test_a_launch_into_a_db_that_does_not_exist_is_refused_unless_told(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A mistyped --db would make a second store, its jobs (one live job a name holds per
    store) and supervisor apart from the user's: one line naming it and the fix."""
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    db = tmp_path / "typo" / "store.sqlite"
    result = CliRunner().invoke(app, ["launch", str(task(tmp_path, "")), "--db", str(db),
                                      "--wait", "0"])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"error: --db {db}: no such store ({db}); add --new-store to make it (unasked, only "
        "the default store is made)"]
    assert not db.parent.exists()


@pytest.mark.parametrize("named", ["env", "config", "--db of the default"])
def test_a_launch_makes_the_default_store_unasked(
        named: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """$COSTSCHED_DB's store, the configuration's db, or the default one named by --db:
    the store every command uses, made by the first launch."""
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    db = tmp_path / "team" / "store.sqlite"
    options = []
    if named == "env":
        monkeypatch.setenv("COSTSCHED_DB", str(db))
    elif named == "config":
        monkeypatch.delenv("COSTSCHED_DB", raising=False)
        config = tmp_path / "config.toml"
        config.write_text(f'db = "{db}"\n')
        monkeypatch.setenv("COSTSCHED_CONFIG", str(config))
    else:
        monkeypatch.setenv("COSTSCHED_DB", str(db))
        options = ["--db", str(db.parent / ".." / "team" / "store.sqlite")]
    result = CliRunner().invoke(app, ["launch", str(task(tmp_path, "")), "--wait", "0",
                                      "--json", *options])
    assert result.exit_code == 0, result.output
    assert db.exists() and "creating the store" in result.stderr
