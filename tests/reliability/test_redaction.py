"""One redaction rule for everything printed, logged or sent: URL passwords, query values
and token-like path segments, values after names like secrets, configured secrets. And user
text on the terminal is shown literally in every table, the report's included."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched import config as config_module
from costsched.cli import app
from costsched.config import Config
from costsched.daemon import logfmt
from costsched.notify import document, notify
from costsched.redact import redact, redact_argv, redact_url, remember
from costsched.store import PriceStore

SECRETS = ("pa/ss-w0rd", "qsecret-value", "abcdEFGH1234ijklMNOP5678", "btok-1234567",
           "argsecret99", "hooker:pw4hook")
CONFIG = """
db = "postgresql+psycopg://costsched:pa/ss-w0rd@127.0.0.1:1/costsched"
[notify]
webhook = "https://hooker:pw4hook@hooks.example.com/services/T000/B000/abcdEFGH1234ijklMNOP5678?token=qsecret-value"
command = ["curl", "-H", "Authorization: Bearer btok-1234567", "--token", "argsecret99", "https://example.com/x"]
"""


def no_secret(text: str) -> None:
    for secret in (*SECRETS, "pw4hook"):
        assert secret not in text, (secret, text)


@pytest.mark.parametrize(("url", "shown"), [
    ("postgresql+psycopg://me:pa/ss@db.example:5432/prices",
     "postgresql+psycopg://me:***@db.example:5432/prices"),
    ("https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX",
     "https://hooks.slack.com/services/***/***/***"),
    ("https://example.com/hook?token=abc&channel=ops", "https://example.com/hook?token=***&channel=***"),
    ("https://ghp_0123456789abcdefghijABCDEFGHIJ01@github.com/x", "https://***@github.com/x"),
    ("s3://bucket/resnet50-imagenet/ckpt", "s3://bucket/resnet50-imagenet/ckpt"),
    ("http://127.0.0.1:8080/x?to=a@b.c", "http://127.0.0.1:8080/x?to=***"),
])
def test_urls(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert redact(f"failed to reach {url}: refused") == f"failed to reach {shown}: refused"


def test_names_like_secrets_in_text_and_arguments() -> None:
    assert redact("token=abc password: 'two words' author=me monkey=1") == \
        "token=*** password: '***' author=me monkey=1"
    assert redact("Authorization: Bearer eyJhbGciOi.abc") == "Authorization: Bearer ***"
    assert redact_argv(["curl", "--api-key", "k123", "--password=hunter2", "-H",
                        "X-Auth-Token: t0k3n", "plain"]) == \
        ["curl", "--api-key", "***", "--password=***", "-H", "X-Auth-Token: ***", "plain"]


def test_a_configured_secret_is_masked_wherever_it_appears() -> None:
    remember(["wholly-configured-secret"])
    assert redact("the hook said wholly-configured-secret twice") == "the hook said *** twice"


def write_config(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    return path


def test_config_show_text_and_json(tmp_path: Path) -> None:
    path = write_config(tmp_path)
    runner = CliRunner()
    text = runner.invoke(app, ["config", "show", "--config", str(path)])
    assert text.exit_code == 0, text.output
    no_secret(text.stdout)
    assert "costsched:***@127.0.0.1:1/costsched" in text.stdout
    shown = runner.invoke(app, ["config", "show", "--config", str(path), "--json"])
    assert shown.exit_code == 0, shown.output
    no_secret(shown.stdout)
    values = json.loads(shown.stdout)["values"]
    assert values["notify.command"]["value"] == [
        "curl", "-H", "Authorization: Bearer ***", "--token", "***", "https://example.com/x"]
    assert values["notify.webhook"]["value"] == (
        "https://hooker:***@hooks.example.com/services/***/***/***?token=***")


def test_a_store_error_never_shows_a_password_with_a_slash(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["prices", "show", "--db",
                                      "postgresql+psycopg://costsched:pa/ss-w0rd@127.0.0.1:1/x"])
    assert result.exit_code == 75, result.output
    assert result.stderr.startswith("error: --db postgresql+psycopg://costsched:***@127.0.0.1:1")
    no_secret(result.output)


def test_the_daemon_log_masks_secrets() -> None:
    line = logfmt("warning", event="notify_failed", api_token="t0ps3cret",
                  error="POST https://h.example/hook?token=qsecret-value: refused")
    assert "api_token=***" in line and "token=***" in line
    assert "t0ps3cret" not in line and "qsecret-value" not in line


def test_notification_warnings_and_payloads(tmp_path: Path,
                                            caplog: pytest.LogCaptureFixture) -> None:
    url = "http://127.0.0.1:1/services/T000/B000/abcdEFGH1234ijklMNOP5678?token=qsecret-value"
    config = Config.model_validate({"notify": {"webhook": url, "timeout_seconds": 2}})
    assert notify(config, "failure", detail="x").webhook is False
    assert "failed for event failure" in caplog.text
    no_secret(caplog.text)
    body = document(config, "failure", checkpoint="s3://u:pw4hook@bucket/ckpt",
                    password="hunter2-long", headers={"Authorization": "Bearer btok-1234567"})
    no_secret(body.decode())
    assert "hunter2-long" not in body.decode()


def test_a_configured_secret_in_an_error_is_masked(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A token configured for the webhook is masked in any message that quotes it."""
    config_module.load(write_config(tmp_path))
    assert redact("the server said: bad token qsecret-value") == "the server said: bad token ***"


def test_an_unbalanced_quote_in_the_notify_command_is_one_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_NOTIFY_COMMAND", "notify-send 'costsched --token=s3cr3tzz")
    result = CliRunner().invoke(app, ["config", "show"])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines() == [
        "error: env COSTSCHED_NOTIFY_COMMAND \"notify-send 'costsched --token=***\": No closing "
        "quotation: expected a command line quoted like a shell's"]


def test_non_finite_config_numbers_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[migration]\ntransfer_gbps = inf\n")
    result = CliRunner().invoke(app, ["config", "show", "--config", str(path)])
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"error: {path}: migration.transfer_gbps inf: expected a "
                                     "finite number")


# --- control characters in tables ---------------------------------------------------------


def test_report_escapes_a_job_names_control_characters(cli, db_path: Path) -> None:
    from tests.costsched.report.scenario import EAST, at, job, observe, place

    store = PriceStore(str(db_path))
    observe(store, EAST, [(-10, 1.0)])
    evil = job(store, "evil\x1b[2J\u202ename", {"V100": 2.0})
    place(store, evil, EAST, 0, "launch", "e-1")
    store.dispose()
    result = cli("report", "--until", at(2).isoformat())
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout
    assert "evil\\x1b[2J\\u202ename" in result.stdout
    assert re.search(r"Spend per job", result.stdout)


def test_a_logged_warning_is_the_same_rule(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("tests.redaction")
    log.warning(logfmt("error", error="connect to postgresql://u:pa/ss-w0rd@h/db failed"))
    no_secret(caplog.text)
