"""Azure's Scheduled Events as the agent reads them: a Preempt event naming this VM is a
notice; other events, other VMs' and an unreachable service are not."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from costsched.clouds.azure import SCHEDULED_EVENTS_URL
from launchers import azure_events
from launchers.notices import metadata_url, notice_present
from tests.launchers.azure_fake import Imds, _request
from tests.price_collectors.conftest import Loopback


@pytest.fixture()
def imds(monkeypatch: pytest.MonkeyPatch) -> Iterator[Imds]:
    fake = Imds(vm="costsched-7-0123456789ab")
    with Loopback() as server:
        server.handler = lambda handler: fake(_request(handler))
        monkeypatch.setenv("AZURE_POD_IDENTITY_AUTHORITY_HOST", server.url)
        monkeypatch.setattr(azure_events, "_name", {})
        yield fake


def test_a_preempt_event_for_this_vm_is_a_notice(imds: Imds) -> None:
    url = metadata_url(SCHEDULED_EVENTS_URL)
    assert url.endswith("/metadata/scheduledevents?api-version=2020-07-01")
    assert not url.startswith("http://169.254.169.254")
    assert notice_present(url) is False
    imds.events.append({"EventId": "1", "EventType": "Reboot", "Resources": [imds.vm]})
    assert notice_present(url) is False  # maintenance is not an eviction
    imds.events.append({"EventId": "2", "EventType": "Preempt", "Resources": ["other-vm"]})
    assert notice_present(url) is False  # another VM's
    imds.preempt()
    assert notice_present(url) is True
    asked = [r for r in imds.requests if r.path == "/metadata/scheduledevents"]
    assert len(asked) == 4 and all(r.headers["metadata"] == "true" for r in asked)
    assert asked[0].query == {"api-version": "2020-07-01"}
    assert sum(r.path == azure_events.NAME_PATH for r in imds.requests) == 1  # read once


def test_an_unreachable_service_is_no_notice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_POD_IDENTITY_AUTHORITY_HOST", "http://127.0.0.1:9")
    assert notice_present(metadata_url(SCHEDULED_EVENTS_URL)) is False
    # The same address is EC2's: its variable does not move Azure's endpoint.
    monkeypatch.delenv("AZURE_POD_IDENTITY_AUTHORITY_HOST")
    monkeypatch.setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:9/")
    assert metadata_url(SCHEDULED_EVENTS_URL) == SCHEDULED_EVENTS_URL
