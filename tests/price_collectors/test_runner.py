"""Collectors made from user options through the registry, without branching on names."""

from __future__ import annotations

import sys

import pytest

from costsched import clouds
from costsched.model import InvalidInput
from price_collectors import runner
from price_collectors.aws import AwsCollector
from price_collectors.azure import MAX_WORKERS, AzureCollector
from price_collectors.gcp import GcpCollector


def test_every_cloud_has_its_collector() -> None:
    assert set(runner.COLLECTORS) == set(clouds.NAMES)
    assert all(cls.cloud == name for name, cls in runner.COLLECTORS.items())


def test_options_reach_each_collector() -> None:
    made = runner.make_collectors({"aws": ["us-east-1"], "gcp": [], "azure": ["eastus"]},
                                  gpus=["v100"], gcp_project="demo-project", workers=20)
    aws, gcp, azure = made
    assert isinstance(aws, AwsCollector) and isinstance(gcp, GcpCollector)
    assert isinstance(azure, AzureCollector)
    assert (aws.regions, aws.gpus, aws.max_workers) == (["us-east-1"], ["V100"], 20)
    assert (gcp.regions, gcp.project) == ([], "demo-project")
    assert (azure.regions, azure.max_workers) == (["eastus"], MAX_WORKERS)
    assert runner.make_collectors({"azure": []}, workers=2)[0].max_workers == 2


def test_an_unknown_cloud_is_one_line_naming_the_known_ones() -> None:
    with pytest.raises(InvalidInput) as caught:
        runner.make_collectors({"aws": [], "oracle": []})
    message = str(caught.value)
    assert "\n" not in message and "'oracle'" in message
    assert all(name in message for name in clouds.NAMES)


@pytest.mark.parametrize(("cloud", "module", "message"), [
    ("aws", "boto3", "aws: boto3 is not installed: pip install 'costsched[aws]'"),
    ("azure", "requests", "azure: requests is not installed: pip install 'costsched[azure]'"),
])
def test_a_cloud_without_its_sdk_is_reported_not_run(monkeypatch, store, cloud, module,
                                                     message) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    summary = runner.run(runner.make_collectors({cloud: []}), store)
    assert summary.clouds[cloud].error == message
    assert not summary.ok and store.count() == 0
