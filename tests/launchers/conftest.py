"""Fixtures shared by the launcher tests: the certificate the loopback Azure is served with;
`world`, for the tests that run a real job on the local launcher (tests/real_jobs.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.real_jobs import world  # noqa: F401 - a fixture by name


@pytest.fixture(scope="session")
def azure_tls(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """(server ssl context, the certificate to trust) for 127.0.0.1, made once."""
    from tests.launchers.azure_fake import tls

    return tls(Path(tmp_path_factory.mktemp("azure-tls")))


@pytest.fixture()
def azure(azure_tls: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The loopback Azure (tests.launchers.azure_fake), its resource group `costsched` made,
    with this process's SDKs pointed at it."""
    from tests.launchers.azure_fake import Azure

    with Azure(tmp_path / "azure", azure_tls) as fake:
        for name, value in fake.env().items():
            monkeypatch.setenv(name, value)
        fake.arm.add_group()
        yield fake
