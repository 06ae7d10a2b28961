"""The commands hints name that read the clouds come after the `pip install` of the extras
this machine lacks for them (`costsched.clouds.hints`): each works as printed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from costsched.clouds import hints
from costsched.clouds.base import installed

ROOT = Path(__file__).resolve().parents[3]
# Every module the clouds' readers import first (blocked: as on a machine without them).
SDKS = sorted({m for needs in (hints.PRICES_WITH, hints.QUOTAS_WITH)
               for modules in needs.values() for m in modules})


def without(monkeypatch: pytest.MonkeyPatch, *clouds: str) -> None:
    """As on a machine without the SDKs of `clouds` (all by default)."""
    for cloud in clouds or hints.CLOUD_NAMES:
        for needs in (hints.PRICES_WITH, hints.QUOTAS_WITH):
            for module in needs[cloud]:
                monkeypatch.setitem(sys.modules, module, None)


def test_with_every_sdk_the_commands_are_plain() -> None:
    if hints.lacking(hints.CLOUD_NAMES) or hints.lacking(hints.CLOUD_NAMES, hints.QUOTAS_WITH):
        pytest.skip("this machine lacks a cloud's SDK")
    assert hints.collect_hint() == "`costsched collect`"
    assert hints.quotas_hint() == "`costsched quotas --refresh`"
    assert hints.quotas_read_hint() == "`costsched collect` or `costsched quotas --refresh`"
    assert hints.collect_hint(["aws"], ["us-east-1"], ["H100"]) == (
        "`costsched collect --cloud aws --region us-east-1 --gpu H100`")


def test_without_any_sdk_every_extra_is_installed_first(monkeypatch: pytest.MonkeyPatch) -> None:
    without(monkeypatch)
    assert hints.collect_hint() == (
        "`pip install 'costsched[aws,azure,gcp]'`, then `costsched collect`")
    assert hints.quotas_hint(["gcp"]) == (
        "`pip install 'costsched[gcp]'`, then `costsched quotas --refresh --cloud gcp`")
    assert hints.catalog_refresh_hint(["azure"]) == (
        "`pip install 'costsched[azure]'`, then `costsched catalog refresh --cloud azure`")
    # one install, said once, before the refresh alone
    assert hints.quotas_read_hint() == (
        "`pip install 'costsched[aws,azure,gcp]'`, then `costsched quotas --refresh`")
    assert hints.collect_command(["aws"], installed=True) == "costsched collect --cloud aws"


def test_with_some_sdks_a_hint_names_its_own_clouds_never_those_installed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A hint about all clouds reads them all, after the install of those missing; one
    about some names them, whichever SDKs are here."""
    if hints.lacking(["gcp", "azure"]):
        pytest.skip("this machine lacks the SDK of gcp or azure")
    without(monkeypatch, "aws")
    assert hints.collect_hint() == "`pip install 'costsched[aws]'`, then `costsched collect`"
    assert hints.collect_hint(["gcp"]) == "`costsched collect --cloud gcp`"
    assert hints.collect_hint(["aws", "gcp"]) == (
        "`pip install 'costsched[aws]'`, then `costsched collect --cloud aws --cloud gcp`")
    assert hints.quotas_hint(["aws", "aws"]) == (
        "`pip install 'costsched[aws]'`, then `costsched quotas --refresh --cloud aws`")


def test_a_module_is_found_without_importing_it_or_its_package() -> None:
    """A command that only prints a hint loads no SDK, nor its namespace package."""
    assert installed("costsched.clouds.hints") and installed("json")
    assert not installed("costsched.no_such_module")
    assert not installed("no_such_package.module")
    code = ("import sys; from costsched.clouds import hints; "
            "from costsched.clouds.base import installed; "
            "found = [installed(m) for m in hints.PRICES_WITH['gcp']]; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('google', 'boto3')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.strip() == "[]", out.stdout


def test_a_blocked_package_blocks_its_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "azure", None)
    assert not installed("azure.mgmt.compute")
    assert hints.lacking(["azure"], hints.QUOTAS_WITH) == ["azure"]


def test_a_blocked_package_blocks_its_modules_loaded_before(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Loaded by an earlier import, a module under a package blocked since is not there: its
    import would fail at the package."""
    import types

    monkeypatch.setitem(sys.modules, "azure.mgmt.compute", types.ModuleType("azure.mgmt.compute"))
    monkeypatch.setitem(sys.modules, "azure", None)
    assert not installed("azure.mgmt.compute")
