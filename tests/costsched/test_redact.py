"""A webhook's URL is its credential: its token may be short and sit in the path (Slack's
/services/T.../B.../XXXX), so it is masked by where it is, not by how random it looks, in
`config show`, in logs and in errors; ordinary paths are left readable."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched import config as config_module
from costsched.cli import app
from costsched.config import Config
from costsched.notify import notify
from costsched.redact import redact, redact_url, webhook_secrets

# Tokens short and plain enough that no randomness rule would catch them.
HOOKS = {
    "https://hooks.slack.com/services/T0A1/B0C2/Xq7pW3": ["T0A1", "B0C2", "Xq7pW3"],
    "https://discord.com/api/webhooks/4471/tok-en_part": ["4471", "tok-en_part"],
    "https://outlook.office.com/webhook/ab12@cd34/IncomingWebhook/ef56/gh78":
        ["ab12@cd34", "ef56", "gh78"],
    "https://chat.example.org/hooks/kq83hd": ["kq83hd"],
    "https://hooks.zapier.example/hooks/catch/123/abcd/": ["123", "abcd"],
}


@pytest.mark.parametrize("url", sorted(HOOKS))
def test_a_hook_path_is_masked_in_any_text(url: str) -> None:
    for part in HOOKS[url]:
        assert part not in redact_url(url)
        assert part not in redact(f"POST {url} failed: HTTP 404 Not Found")
    assert redact_url(url).split("://")[1].split("/")[0] == url.split("://")[1].split("/")[0]


def test_ordinary_paths_stay_readable() -> None:
    for url in ("s3://bucket/jobs/resnet50-imagenet-epoch10/ckpt",
                "https://example.com/docs/page", "https://hooks.example.com/costsched"):
        assert redact_url(url) == url
    assert webhook_secrets("https://hooks.example.com/costsched") == []  # a plain word


@pytest.mark.parametrize("url", [*sorted(HOOKS), "https://example.com/notify/s3cr3tv4lue"])
def test_config_show_masks_the_webhook(tmp_path: Path, url: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(f'[notify]\nwebhook = "{url}"\n')
    parts = HOOKS.get(url, ["s3cr3tv4lue"])
    runner = CliRunner()
    for argv in (["config", "show", "--config", str(path)],
                 ["config", "show", "--config", str(path), "--json"]):
        shown = runner.invoke(app, argv)
        assert shown.exit_code == 0, shown.output
        for part in parts:
            assert part not in shown.stdout, (part, shown.stdout)
    data = json.loads(runner.invoke(app, ["config", "show", "--config", str(path),
                                          "--json"]).stdout)
    assert "***" in json.dumps(data)


def test_a_failing_webhook_is_logged_without_its_path(tmp_path: Path,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    url = "http://127.0.0.1:1/notify/plainsecret99"  # nothing listens: refused
    config = Config.model_validate({"notify": {"webhook": url, "timeout_seconds": 2}})
    with caplog.at_level(logging.WARNING):
        assert notify(config, "failure", detail="x").webhook is False
    assert "failed for event failure" in caplog.text
    assert "plainsecret99" not in caplog.text and "127.0.0.1:1" in caplog.text
    # Once configured, the path is masked in any message quoting it.
    (tmp_path / "c.toml").write_text('[notify]\nwebhook = "https://x.example/a/zz9top"\n')
    config_module.load(tmp_path / "c.toml")
    assert redact("the server said: unknown hook a/zz9top") == \
        "the server said: unknown hook ***"


def test_a_jobs_given_secrets_are_masked_in_its_output_by_their_names() -> None:
    """The values the environment gives a job's --secret names (4 characters or more) are
    masked in its output; its other words are left as they are."""
    from costsched.redact import remember_given, remembered_masked

    remember_given(["HF_TOKEN", "SHORT", "UNSET"],
                   {"HF_TOKEN": "hf_abcdefgh123456", "SHORT": "abc", "OTHER": "zzzzzz"})
    assert remembered_masked("token hf_abcdefgh123456 used; abc; zzzzzz; pass: 3") == \
        "token *** used; abc; zzzzzz; pass: 3"


def test_a_store_url_that_does_not_parse_is_one_line_with_its_password_masked(
        tmp_path: Path) -> None:
    """'u:pw@[bad/db' is no URL (an unclosed IPv6 bracket): the store's one line says so,
    never a traceback, and the password is still masked."""
    import subprocess
    import sys

    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "XDG_DATA_HOME": str(tmp_path / "d"), "XDG_CONFIG_HOME": str(tmp_path / "c"),
           "XDG_CACHE_HOME": str(tmp_path / "k"),
           "COSTSCHED_DB": "postgresql+psycopg://u:pw1234@[bad/db"}
    out = subprocess.run([sys.executable, "-m", "costsched.cli", "status"], env=env,
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    said = (out.stdout + out.stderr).strip()
    assert out.returncode == 2, said
    assert said.startswith("error: $COSTSCHED_DB postgresql+psycopg://u:***@[bad/db"), said
    assert "\n" not in said and "Traceback" not in said and "pw1234" not in said
