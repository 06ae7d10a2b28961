"""When nothing can be planned, `plan` and `launch` name the same real cause, as a class:
a value no price has, a shape no price has, a shape priced elsewhere only, a market with no
price for the shape (with what exists instead and the `collect` line that fetches it), the
price cap, the deadline. A shape of a task's accelerator set that has no offering is named
in the plan. The `collect` line is run here, against the Billing Catalog API on loopback,
and the plan it was printed for then has its spot offering. With nothing collected: the
bundled list prices and spot snapshot."""

from __future__ import annotations

import copy
import json
import re
import shlex
from datetime import datetime, timezone
from pathlib import Path

import pytest
from google.api_core.client_options import ClientOptions
from google.auth.credentials import AnonymousCredentials

from price_collectors.gcp import GcpCollector
from tests.price_collectors.conftest import loopback  # noqa: F401 - a fixture by name
from tests.price_collectors.test_gcp import GcpApis

SPOT_A100 = "name: bigone\nresources: {accelerators: A100:1, use_spot: true}\nrun: 'true'\n"
CASES = {
    # a value no offering has: named with those that exist
    "region": ("name: j\nmodel: ResNet-50 (batch size 64)\nsteps: 2000\n"
               "constraints: {regions: [af-south-1]}\n",
               r"no offering priced as of \S+ has region af-south-1; priced: [a-z0-9-]+(, "
               r"[a-z0-9-]+)+"),
    # each value exists, not together: the shape, with the counts its GPU comes in
    "shape": ("name: j\nmodel: ResNet-50 (batch size 64)\nsteps: 2000\n"
              "constraints: {gpu_models: [V100], gpu_counts: [16]}\n",
              r"no instance type priced as of \S+ is V100:16; V100 is priced at 1, 2, 4, 8 "),
    # the shape, priced on another cloud only
    "place": ("name: j\nmodel: ResNet-50 (batch size 64)\nsteps: 2000\n"
              "constraints: {clouds: [aws], gpu_models: [A100], gpu_counts: [1]}\n",
              r"no price known as of \S+ for A100:1 in aws; (on-demand|spot) elsewhere: gcp \S+ "
              r"a2-highgpu-1g \$"),
    # CPU work where no CPU instance type is priced
    "cpu": ("name: j\nresources: {cpus: 4+, infra: gcp/asia-northeast1}\nrun: 'true'\n",
            r"no price known as of \S+ for CPU instance types .* in gcp, asia-northeast1; "
            r"(on-demand|spot) elsewhere: gcp "),
    "market": (SPOT_A100, r"no spot price known as of \S+ for A100:1; on-demand: gcp "),
    "price cap": ("name: j\nresources: {accelerators: V100:1}\nrun: 'true'\n"
                  "costsched: {max_price: 0.1, hours: 2}\n",
                  r"no offering that its filters allow costs at most \$0\.1000/h as of \S+; "
                  r"the cheapest, \S+ \S+ \S+ (spot|on-demand), costs \$[\d.]+/h; raise "
                  r"costsched\.max_price in \S+"),
    "deadline": ("name: j\nmodel: ResNet-50 (batch size 64)\nsteps: 2000000\n"
                 "constraints: {deadline: 2h, gpu_models: [V100], gpu_counts: [1]}\n",
                 r"job j cannot meet its deadline of 2 h on any allowed offering: the "
                 r"fastest, .* needs \d+"),
}
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\dZ")


def _line(output: str, prefix: str) -> str:
    """What follows `prefix` on its line, the lines it wraps onto joined (a note's next
    line is indented, its wrapped part is not), its time masked."""
    lines = output.splitlines()
    start = next((i for i, line in enumerate(lines) if prefix in line), None)
    assert start is not None, output
    end = start + 1
    while end < len(lines) and lines[end] and not lines[end].startswith(" "):
        end += 1
    text = " ".join(" ".join(lines[start:end]).split())
    return TIME.sub("TIME", text.split(prefix, 1)[1].strip())


@pytest.mark.parametrize("case", list(CASES))
def test_plan_and_launch_name_the_same_cause(cli, tmp_path: Path, case: str,  # noqa: ANN001
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    text, said = CASES[case]
    path = tmp_path / "job.yaml"
    path.write_text(text)
    planned = cli("plan", path)
    assert planned.exit_code == 1, planned.output
    reason = _line(planned.stderr, "no plan: ")
    assert re.search(said.replace(r"\S+", "TIME", 1), reason), reason
    assert "Traceback" not in planned.output
    launched = cli("launch", path, "--wait", "0")
    assert launched.exit_code == 2, launched.output
    assert _line(launched.output, "error: ") == reason
    assert json.loads(cli("status", "--json").stdout)["jobs"] == []  # nothing stored


def test_a_set_names_the_accelerator_it_has_no_offering_of(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "set.yaml"
    path.write_text("name: setjob\nresources:\n  accelerators: {V100: 1, A100: 1, T4: 1}\n"
                    "  use_spot: true\nrun: 'true'\n")
    result = cli("plan", path, "--wide")
    assert result.exit_code == 0, result.output
    note = _line(result.stdout, "A100:1 left out: ")
    assert note.startswith("no spot price known as of TIME for A100:1; on-demand: gcp ")
    assert "`costsched collect --cloud gcp --gpu A100`" in note
    doc = json.loads(cli("plan", path, "--json").stdout)
    [listed] = [n for n in doc["jobs"][0]["notes"] if n.startswith("A100:1 left out")]
    assert TIME.sub("TIME", listed) == "A100:1 left out: " + note
    offered = {r["gpu_model"] for r in doc["rankings"][0]["ranking"]}
    assert offered == {"V100", "T4"}


@pytest.fixture()
def gcp_catalog(loopback, monkeypatch: pytest.MonkeyPatch) -> GcpApis:  # noqa: ANN001, F811
    """`costsched collect --cloud gcp` against the two APIs on loopback, with a spot price
    for the A100 GPU, stamped now."""
    apis = GcpApis()
    od = next(s for s in apis.skus if s["description"] == "Nvidia Tesla A100 GPU running in "
              "Americas")
    spot = copy.deepcopy(od)
    spot.update(description="Spot Preemptible Nvidia Tesla A100 GPU running in Americas",
                skuId="TEST-A100-SPOT", name=od["name"].replace(od["skuId"], "TEST-A100-SPOT"))
    spot["category"]["usageType"] = "Preemptible"
    apis.skus.append(spot)
    apis.set_price(spot["description"], "1", 100_000_000)
    apis.effective = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    loopback.handler = apis
    from google.cloud import billing_v1, compute_v1

    def clients(self: GcpCollector) -> None:
        options = ClientOptions(api_endpoint=loopback.url)
        self.project = "demo-project"
        self.retry_initial = 0.001
        self._catalog_client = billing_v1.CloudCatalogClient(
            credentials=AnonymousCredentials(), transport="rest", client_options=options)
        self._accelerator_client = compute_v1.AcceleratorTypesClient(
            credentials=AnonymousCredentials(), transport="rest", client_options=options)

    monkeypatch.setattr(GcpCollector, "_default_clients", clients)
    return apis


def test_the_collect_line_fetches_the_missing_spot_price(cli, tmp_path: Path,  # noqa: ANN001
                                                         gcp_catalog: GcpApis) -> None:
    path = tmp_path / "a100.yaml"
    path.write_text(SPOT_A100)
    planned = cli("plan", path)
    assert planned.exit_code == 1
    found = re.search(r"`costsched (collect [^`]+)` fetches today's prices",
                      " ".join(planned.stderr.split()))
    assert found, planned.stderr
    argv = shlex.split(found.group(1))
    assert argv == ["collect", "--cloud", "gcp", "--gpu", "A100"]
    collected = cli(*argv)
    assert collected.exit_code == 0, collected.output
    again = cli("plan", path, "--json")
    assert again.exit_code == 0, again.output
    best = json.loads(again.stdout)["rankings"][0]["ranking"][0]
    assert (best["cloud"], best["instance_type"], best["market"]) == (
        "gcp", "a2-highgpu-1g", "spot")
    assert best["region"] == "us-central1"


def test_a_deadline_job_with_no_spot_in_its_scope_runs_on_demand_as_planned(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """Its deadline policy has no spot to weigh: it is placed where `plan` ranks first."""
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    path = tmp_path / "dl.yaml"
    path.write_text("name: dl\nresources: {accelerators: A100:1}\nrun: 'true'\n"
                    "costsched: {markets: [spot, on_demand], deadline: 24h, hours: 2}\n")
    planned = json.loads(cli("plan", path, "--json").stdout)
    first = planned["rankings"][0]["ranking"][0]
    assert first["market"] == "on_demand"
    launched = cli("launch", path, "--wait", "0", "--json")
    assert launched.exit_code == 0, launched.output
    [job] = json.loads(launched.stdout)
    placed = job["placement"] or job["placements"][0]
    assert (placed["cloud"], placed["instance_type"], placed["market"]) == (
        first["cloud"], first["instance_type"], "on_demand")
