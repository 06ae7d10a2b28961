"""`collect` on a machine whose DNS resolves nothing: the failures of one cause are said in
one line (the units counted), and the last line says once that nothing was collected for
want of the network, naming the host; exit code 1. No call leaves this machine: the host
names fail to resolve in `socket.getaddrinfo`, as they do offline."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.cli.collect import by_cause


def _no_dns(*_args: object, **_kwargs: object) -> None:
    raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")


def test_no_network_is_said_once_with_the_host(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", _no_dns)
    result = CliRunner().invoke(app, ["collect", "--cloud", "azure", "--new-store", "--db",
                                      str(tmp_path / "store.sqlite")])
    assert result.exit_code == 1, result.output
    lines = result.stderr.splitlines()
    failed = [x for x in lines if x.startswith("failed:")]
    assert len(failed) == 1, lines  # one cause, one line (not one per GPU)
    assert failed[0].endswith(" more: no network: prices.azure.com does not resolve (DNS)"), \
        failed
    assert lines[-1] == ("error: nothing collected: no network: prices.azure.com does not "
                         "resolve (DNS); check this machine's network, DNS and proxy "
                         "(HTTPS_PROXY), then collect again"), lines


def test_the_units_of_each_cause_are_named_then_counted() -> None:
    dns, http = "no network: h does not resolve (DNS)", "HTTP 500 from h"
    assert by_cause({"A100": dns, "H100": dns, "K80": http, "L4": dns, "T4": dns,
                     "V100": dns}) == {dns: "A100, H100, L4 and 2 more", http: "K80"}
    assert by_cause({"A100": dns, "H100": dns}) == {dns: "A100 and H100"}
    assert by_cause({"A100": dns, "H100": dns, "L4": dns}) == {dns: "A100, H100 and L4"}
