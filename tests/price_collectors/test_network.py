"""A host name that does not resolve reads the same wherever a call failed so (`one_line`
of the error, whatever SDK raised it), with the host: 'no network: HOST does not resolve
(DNS)'; every other failure keeps its own words."""

from __future__ import annotations

import socket

import pytest
import requests
from botocore.exceptions import EndpointConnectionError

from price_collectors.base import one_line
from price_collectors.network import offline, unresolved


def _no_dns(*_args: object, **_kwargs: object) -> None:
    raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")


def test_an_http_call_whose_host_does_not_resolve(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", _no_dns)  # (no call leaves this machine)
    with pytest.raises(requests.ConnectionError) as failed:
        requests.get("https://prices.azure.com/api/retail/prices", timeout=5)
    assert one_line(failed.value) == "no network: prices.azure.com does not resolve (DNS)"
    try:  # as a collector raises it: its own error, from the HTTP one
        raise RuntimeError("cannot connect to prices.azure.com") from failed.value
    except RuntimeError as wrapped:
        assert unresolved(wrapped) == "no network: prices.azure.com does not resolve (DNS)"


def test_an_sdk_endpoint_whose_host_does_not_resolve() -> None:
    error = EndpointConnectionError(endpoint_url="https://pricing.us-east-1.amazonaws.com/",
                                    error=socket.gaierror(-2, "Name or service not known"))
    assert one_line(error) == ("no network: pricing.us-east-1.amazonaws.com does not "
                               "resolve (DNS)")
    grpc = RuntimeError("503 DNS resolution failed for cloudbilling.googleapis.com:443")
    assert one_line(grpc) == "no network: cloudbilling.googleapis.com does not resolve (DNS)"


def test_other_failures_keep_their_words() -> None:
    assert unresolved(ConnectionRefusedError(111, "Connection refused")) is None
    assert one_line(ValueError("bad page")) == "ValueError: bad page"


def test_failures_of_one_cause_are_said_once_with_each_host() -> None:
    one = "no network: prices.azure.com does not resolve (DNS)"
    assert offline([one, one, f"azure: {one}"]) == one
    assert offline([one, "no network: pricing.us-east-1.amazonaws.com does not resolve "
                         "(DNS)"]) == ("no network: prices.azure.com, "
                                       "pricing.us-east-1.amazonaws.com do not resolve (DNS)")
    assert offline([one, "HTTP 500 from prices.azure.com"]) is None
    assert offline([]) is None
