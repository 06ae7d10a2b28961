"""`costsched catalog refresh`: discovered types join the catalog listing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costsched import catalog
from price_collectors import discovery
from tests.price_collectors.test_aws import StubbedClients
from tests.price_collectors.test_discovery import NEW_TYPE, stub_region


@pytest.fixture
def discovered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(catalog.ENV_DISCOVERED, str(tmp_path / "discovered.csv"))
    catalog.reload()
    yield tmp_path / "discovered.csv"
    monkeypatch.undo()
    catalog.reload()


def test_refresh_adds_the_new_type_to_the_listing(cli, discovered: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    clients = StubbedClients()
    stub_region(clients, "us-east-1", {NEW_TYPE: ["us-east-1a"]})
    monkeypatch.setattr(discovery, "_aws_clients", lambda: clients)

    result = cli("catalog", "refresh", "--cloud", "aws", "--region", "us-east-1")
    assert result.exit_code == 0, result.output
    assert f"new to the catalog: {NEW_TYPE}" in result.stdout
    assert "aws: left out 1: GPU not in the vocabulary (Radeon Pro V520)" in result.stdout
    clients.assert_all_used()
    assert discovered.exists()

    listed = json.loads(cli("catalog", "--gpu", "h200", "--json").stdout)["instance_types"]
    assert NEW_TYPE in [t["instance_type"] for t in listed]


def test_refresh_of_a_cloud_it_cannot_read_says_so(cli, discovered: Path) -> None:
    result = cli("catalog", "refresh", "--cloud", "gcp,azure")
    assert result.exit_code == 1
    assert "gcp: not refreshed: tests read no cloud" in result.stdout
    assert "azure: not refreshed: tests read no cloud" in result.stdout
    assert not discovered.exists()
