"""A COSTSCHED_* variable that is none of costsched's (a misspelt override, of a section or
of a key) is refused in one line with the close name, rather than ignored; costsched's own
variables never are."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched import config
from costsched.cli import app
from costsched.model import InvalidInput

ROOT = Path(__file__).resolve().parents[3]




def _show(**env: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["config", "show"], env=env)
    return result.exit_code, result.output


@pytest.mark.parametrize(("name", "close"), [
    ("COSTSCHED_MIGRATON_RESTART_MINUTES", "COSTSCHED_MIGRATION_RESTART_MINUTES"),  # section
    ("COSTSCHED_DEAMON_WATCH_SECONDS", "COSTSCHED_DAEMON_WATCH_SECONDS"),
    ("COSTSCHED_POLCY_MARGIN", "COSTSCHED_POLICY_MARGIN"),
    ("COSTSCHED_POLICY_MARGN", "COSTSCHED_POLICY_MARGIN"),  # key
    ("COSTSCHED_INSTANCE", "COSTSCHED_INSTANCES"),  # one of costsched's own
])
def test_a_misspelt_name_is_refused_with_the_close_one(name: str, close: str) -> None:
    code, out = _show(**{name: "5"})
    assert code == 2, out
    assert out.strip() == f"error: env {name}: not a costsched setting; did you mean {close!r}?"


def test_a_name_close_to_none_is_refused_with_how_settings_are_named() -> None:
    code, out = _show(COSTSCHED_XYZZY="1")
    assert code == 2, out
    assert out.strip() == ("error: env COSTSCHED_XYZZY: not a costsched setting: settings are "
                           "COSTSCHED_<SECTION>_<KEY>, as `costsched config show` lists them "
                           "(unset it)")
    code, out = _show(COSTSCHED_DAEMON_QUUX="1")  # a section's unknown key: its keys
    assert code == 2, out
    assert out.strip().startswith("error: env COSTSCHED_DAEMON_QUUX: not a setting of [daemon]: "
                                  "expected one of COSTSCHED_DAEMON_WATCH_SECONDS, ")
    code, out = _show(COSTSCHED_DAEMN_QUUX="1")  # a misspelt section's unknown key: alike
    assert code == 2, out
    assert out.strip().startswith("error: env COSTSCHED_DAEMN_QUUX: not a setting of [daemon]: ")


def test_costscheds_own_variables_are_not_refused() -> None:
    assert _show(COSTSCHED_INSTANCES="/tmp/x", COSTSCHED_JOB_ID="3", COSTSCHED_CONFIG="",
                 COSTSCHED_POLICY_MARGIN="0.1", COSTSCHED_AZURE_PRICES_URL="http://x")[0] == 0


def test_every_variable_costsched_reads_is_known() -> None:
    """Each COSTSCHED_ name the code, the tests, the docs and the examples use is a setting
    or one of costsched's own variables: none of them is ever refused."""
    used = set()
    for folder in ("costsched", "launchers", "price_collectors", "scripts", "bench",
                   "notebooks", "docs", "examples", "tests"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".md", ".ipynb", ".toml", ".yaml", ".sh", ".html") \
                    and path.name != Path(__file__).name:
                used |= set(re.findall(r"COSTSCHED_[A-Z0-9_]*[A-Z0-9]", path.read_text()))
    used -= MISSPELT
    refused = {}
    for name in sorted(used):
        try:
            config.check_env_names({name: "1"})
        except InvalidInput as exc:
            refused[name] = str(exc)
    assert refused == {}


# The docs' and the tests' examples of misspelt names, and a pattern's prefix
# (COSTSCHED_AZURE_* settings).
MISSPELT = {"COSTSCHED_DEAMON_WATCH_SECONDS", "COSTSCHED_DAEMON_WATCH_SECOND",
            "COSTSCHED_AZURE"}
