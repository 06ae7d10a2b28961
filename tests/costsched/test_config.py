"""The configuration: defaults, the file, environment overrides, sources, one-line errors,
and `costsched config show`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.config import KEYS, load, mask_url
from costsched.model import InvalidInput
from costsched.optimize.decision import Overheads
from costsched.policies import POLICIES

FULL = """\
db = "postgresql+psycopg://costsched:s3cret@db.example:5432/costsched"

[collect]
clouds = ["aws", "gcp"]
regions = ["us-east-1", "us-central1"]
gcp_project = "my-project"

[schedule]
collect = "*/15 * * * *"
replan = "30 7 * * *"

[policy]
name = "dynamic"
margin = 0.1

[migration]
restart_minutes = 4
transfer_gbps = 2.5
lost_work_minutes = 12

[launch]
launcher = "aws"
checkpoint_root = "s3://bucket/ckpt"

[notify]
command = ["notify-send", "costsched event"]
webhook = "https://hook:pa55@hooks.example/costsched"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def bad(path: Path, env: dict[str, str] | None = None) -> str:
    with pytest.raises(InvalidInput) as info:
        load(path, env=env or {})
    message = str(info.value)
    assert "\n" not in message
    return message


def test_defaults_when_the_default_file_is_missing(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("costsched.config.default_path", lambda: tmp_path / "none.toml")
    loaded = load(env={})
    config = loaded.config
    assert loaded.read is False and loaded.path == tmp_path / "none.toml"
    assert config.db is None
    assert (config.schedule.collect, config.schedule.replan, config.schedule.catalog) == (
        "0 * * * *", "30 * * * *", "0 5 * * 1")
    assert (config.policy.name, config.policy.margin) == ("dynamic-aware", 0.05)
    assert config.migration.overheads() == Overheads()
    assert config.launch.launcher == "local"
    assert config.notify.command is None and config.notify.webhook is None
    assert set(loaded.sources) == set(KEYS)
    assert set(loaded.sources.values()) == {"default"}


def test_file_values_and_their_sources(tmp_path: Path) -> None:
    path = write(tmp_path, FULL)
    loaded = load(path, env={})
    config = loaded.config
    assert loaded.read is True
    assert config.collect.clouds == ["aws", "gcp"]
    assert config.collect.regions == ["us-east-1", "us-central1"]
    assert config.schedule.collect == "*/15 * * * *"
    assert config.schedule.catalog == "0 5 * * 1"  # not in the file
    assert (config.policy.name, config.policy.margin) == ("dynamic", 0.1)
    assert config.migration.overheads() == Overheads(
        restart_minutes=4, warmup_minutes=Overheads().warmup_minutes, transfer_gbps=2.5,
        overlap_minutes=Overheads().overlap_minutes, lost_work_minutes=12)
    assert config.launch.launcher == "aws"
    assert config.notify.command == ["notify-send", "costsched event"]
    origin = f"file {path}"
    assert loaded.sources["policy.margin"] == origin
    assert loaded.sources["schedule.replan"] == origin
    assert loaded.sources["schedule.catalog"] == "default"
    assert loaded.sources["migration.warmup_minutes"] == "default"


def test_config_file_from_the_environment(tmp_path: Path) -> None:
    path = write(tmp_path, "[policy]\nmargin = 0.3\n")
    loaded = load(env={"COSTSCHED_CONFIG": str(path)})
    assert loaded.config.policy.margin == 0.3
    assert loaded.sources["policy.margin"] == f"file {path}"


def test_environment_overrides_win_over_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, FULL)
    env = {"COSTSCHED_POLICY_MARGIN": "0.25", "COSTSCHED_SCHEDULE_COLLECT": "*/5 * * * *",
           "COSTSCHED_DB": "/tmp/other.sqlite", "COSTSCHED_COLLECT_CLOUDS": "azure, aws",
           "COSTSCHED_MIGRATION_LOST_WORK_MINUTES": "",
           "COSTSCHED_NOTIFY_COMMAND": "/usr/bin/logger -t 'cost sched'",
           "COSTSCHED_INSTANCES": "/not/a/config/key"}
    loaded = load(path, env=env)
    config = loaded.config
    assert config.policy.margin == 0.25
    assert config.schedule.collect == "*/5 * * * *"
    assert config.db == "/tmp/other.sqlite"
    assert config.collect.clouds == ["azure", "aws"]
    assert config.migration.lost_work_minutes is None
    assert config.notify.command == ["/usr/bin/logger", "-t", "cost sched"]
    assert loaded.sources["policy.margin"] == "env COSTSCHED_POLICY_MARGIN"
    assert loaded.sources["db"] == "env COSTSCHED_DB"
    assert loaded.sources["policy.name"] == f"file {path}"


def test_policy_aliases_become_the_registered_name(tmp_path: Path) -> None:
    loaded = load(write(tmp_path, '[policy]\nname = "+gpu-type"\n'), env={})
    assert loaded.config.policy.name == "gpu-type"


@pytest.mark.parametrize(("text", "key", "accepted"), [
    ("[policy]\nmargn = 0.1\n", "unknown key policy.margn", "expected one of policy.name, "
                                                            "policy.margin"),
    ("[polcy]\nname = 'static'\n", "unknown section [polcy]", "[policy]"),
    ("[daemon]\nautostrat = false\n", "unknown key daemon.autostrat",
     "; did you mean 'autostart'?"),
    ("[daemn]\nwatch_seconds = 5\n", "unknown section [daemn]", "; did you mean [daemon]?"),
    ("[schedule]\ncollect = 'every hour'\n", "schedule.collect 'every hour'",
     "expected a 5-field cron expression"),
    ("[schedule]\nreplan = '0 25 * * *'\n", "schedule.replan '0 25 * * *'",
     "expected a 5-field cron expression"),
    ("[policy]\nname = 'fast'\n", "policy.name 'fast'", f"expected one of {', '.join(POLICIES)}"),
    ("[policy]\nmargin = -0.1\n", "policy.margin -0.1", "expected a fraction from 0 to 1"),
    ("[policy]\nmargin = true\n", "policy.margin True", "expected a number"),
    ("[migration]\nlost_work_minutes = nan\n", "migration.lost_work_minutes nan",
     "expected a finite number"),
    ("[migration]\ntransfer_gbps = inf\n", "migration.transfer_gbps inf",
     "expected a finite number"),
    ("[policy]\nmargin = -inf\n", "policy.margin -inf", "expected a finite number"),
    ("[store]\nbusy_seconds = nan\n", "store.busy_seconds nan", "expected a finite number"),
    ("[store]\nstatement_timeout_seconds = 0\n", "store.statement_timeout_seconds 0",
     "expected a number > 0"),
    ("[launch]\nmax_sweep_jobs = 0\n", "launch.max_sweep_jobs 0", "expected a number >= 1"),
    ("[launch]\nmax_sweep_jobs = 'many'\n", "launch.max_sweep_jobs 'many'",
     "expected a whole number"),  # costsched's words, never "Input should be ..."
    ("[launch]\nlauncher = 'ibm'\n", "launch.launcher 'ibm'", "expected one of local, aws, "
                                                              "gcp, azure, clouds"),
    ("[migration]\ntransfer_gbps = 0\n", "migration.transfer_gbps 0", "expected a number > 0"),
    ("[collect]\nclouds = ['aws', 'ibm']\n", "collect.clouds ['aws', 'ibm']",
     "expected a list of aws, gcp, azure"),
    ("[collect]\nregions = ['us-east-9']\n", "collect.regions ['us-east-9']",
     "region 'us-east-9': not a region of aws: its series has us-east-1, us-east-2, and a "
     "new one would be us-east-3"),
    ("[files]\ntask_mb = 0\n", "files.task_mb 0", "expected a number > 0"),
    ("[notify]\nwebhook = 'ftp://example.com/x'\n", "notify.webhook 'ftp://example.com/x'",
     "expected an http:// or https:// URL"),
    ("policy = 3\n", "policy 3", "expected a table [policy]"),
])
def test_bad_file_is_one_line_naming_file_key_and_accepted(tmp_path: Path, text: str, key: str,
                                                           accepted: str) -> None:
    path = write(tmp_path, text)
    message = bad(path)
    assert message.startswith(f"{path}: {key}")
    assert accepted in message


def test_toml_syntax_error_names_the_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "[policy]\nname = 'static'\nmargin = = 1\n")
    message = bad(path)
    assert message.startswith(f"{path}: line 3")
    assert "invalid TOML" in message


def test_bad_environment_value_names_the_variable(tmp_path: Path) -> None:
    path = write(tmp_path, "[policy]\nmargin = 0.1\n")
    message = bad(path, {"COSTSCHED_POLICY_MARGIN": "lots"})
    assert message == "env COSTSCHED_POLICY_MARGIN: policy.margin 'lots': expected a number"
    message = bad(path, {"COSTSCHED_SCHEDULE_CATALOG": "weekly"})
    assert message.startswith("env COSTSCHED_SCHEDULE_CATALOG: schedule.catalog 'weekly'")


def test_a_named_file_that_is_missing_is_an_error(tmp_path: Path) -> None:
    assert bad(tmp_path / "nope.toml") == (f"{tmp_path / 'nope.toml'}: no such file: "
                                           "expected a TOML config file")


def test_passwords_are_masked_in_errors(tmp_path: Path) -> None:
    path = write(tmp_path, "[notify]\nwebhook = 'ftp://u:hunter2@example.com/x'\n")
    message = bad(path)
    assert "hunter2" not in message and "u:***@example.com" in message


def test_mask_url() -> None:
    assert mask_url("postgresql+psycopg://me:pw@h:5432/db") == "postgresql+psycopg://me:***@h:5432/db"
    assert mask_url("https://token@h/x") == "https://token@h/x"  # no password part
    assert mask_url("/var/lib/costsched/prices.sqlite") == "/var/lib/costsched/prices.sqlite"


# --- costsched config show -------------------------------------------------------------------


def test_config_show_table_with_sources_and_masked_passwords(tmp_path: Path,
                                                              monkeypatch) -> None:
    path = write(tmp_path, FULL)
    monkeypatch.setenv("COSTSCHED_POLICY_MARGIN", "0.5")
    result = CliRunner().invoke(app, ["config", "show", "--config", str(path)])
    assert result.exit_code == 0, result.output
    assert "s3cret" not in result.output and "pa55" not in result.output
    assert "postgresql+psycopg://costsched:***@db.example:5432/costsched" in result.output
    assert "https://hook:***@hooks.example/costsched" in result.output
    margin = next(line for line in result.output.splitlines() if "policy.margin" in line)
    assert "0.5" in margin and "env COSTSCHED_POLICY_MARGIN" in margin
    catalog = next(line for line in result.output.splitlines() if "schedule.catalog" in line)
    assert "0 5 * * 1" in catalog and "default" in catalog


def test_config_show_json(tmp_path: Path, monkeypatch) -> None:
    path = write(tmp_path, FULL)
    monkeypatch.delenv("COSTSCHED_POLICY_MARGIN", raising=False)
    result = CliRunner().invoke(app, ["config", "show", "--config", str(path), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["file"] == str(path) and data["read"] is True
    assert list(data["values"]) == list(KEYS)
    assert data["values"]["policy.name"] == {"value": "dynamic", "from": f"file {path}"}
    assert data["values"]["db"]["value"].startswith("postgresql+psycopg://costsched:***@")
    assert data["values"]["notify.webhook"]["value"] == "https://hook:***@hooks.example/costsched"


def test_config_show_bad_file_is_one_line_exit_2(tmp_path: Path) -> None:
    path = write(tmp_path, "[policy]\nname = 'fast'\n")
    result = CliRunner().invoke(app, ["config", "show", "--config", str(path)])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1
    assert lines[0].startswith(f"error: {path}: policy.name 'fast': expected one of static")


def test_store_and_hook_limits_default_and_override(tmp_path: Path) -> None:
    loaded = load(
        write(tmp_path, "[store]\nbusy_seconds = 2.5\n"),
        env={"COSTSCHED_STORE_STATEMENT_TIMEOUT_SECONDS": "7"})
    store = loaded.config.store
    assert (store.busy_seconds, store.statement_timeout_seconds) == (2.5, 7.0)
    assert loaded.sources["store.statement_timeout_seconds"] == \
        "env COSTSCHED_STORE_STATEMENT_TIMEOUT_SECONDS"
    defaults = load(write(tmp_path, ""), env={}).config
    assert defaults.store.busy_seconds == 10 and defaults.store.statement_timeout_seconds == 60
    assert defaults.notify.timeout_seconds == 10 and defaults.launch.max_sweep_jobs == 10_000
    assert {"store.busy_seconds", "store.statement_timeout_seconds", "notify.timeout_seconds",
            "launch.max_sweep_jobs"} <= set(KEYS)


def test_configured_secrets_are_the_secret_parts_only(tmp_path: Path) -> None:
    config = load(write(tmp_path, (
        'db = "postgresql+psycopg://me:pw/with-slash@db.example/prices"\n'
        '[notify]\nwebhook = "https://h.example/hook?token=tok-123"\n'
        'command = ["notify", "--password", "hunter22", "plain"]\n')), env={}).config
    assert sorted(config.secrets()) == ["hunter22", "pw/with-slash", "tok-123"]
    same = load(write(tmp_path, 'db = "postgresql+psycopg://costsched:costsched@h/db"\n'),
                env={}).config
    assert same.secrets() == []  # shown as the user name anyway: not masked everywhere
    assert mask_url("postgresql+psycopg://me:pw/with-slash@db.example/prices") == \
        "postgresql+psycopg://me:***@db.example/prices"
