"""`costsched plan` of a job whose best plan is a flex-start VM (GCP's Dynamic Workload
Scheduler), with the local launcher configured: its launch line names the launcher that
runs flex-start VMs, gcp (`booked_by`: a flex-start VM's cloud's), and runs as printed:
the gcp launcher (on Compute Engine fakes) requests the flex-start VM."""

from __future__ import annotations

import re
import shlex
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
import yaml

compute_v1 = pytest.importorskip("google.cloud.compute_v1")

import typer.testing  # noqa: E402

from costsched.cli import jobs as cli_jobs  # noqa: E402
from costsched.store import OBSERVATION_COLUMNS, PriceStore  # noqa: E402
from launchers.gcp import GcpLauncher  # noqa: E402
from tests.launchers.test_gcp import FakeInstances  # noqa: E402

A3 = "a3-highgpu-8g"


class Found(FakeInstances):
    """Compute Engine finding capacity for a flex-start request at once: it runs."""

    def insert(self, request: compute_v1.InsertInstanceRequest):  # noqa: ANN201
        done = super().insert(request)
        self.store[(request.zone, request.instance_resource.name)].status = "RUNNING"
        return done


def _offer(market: str, price: float, at: datetime) -> dict:
    return dict(zip(OBSERVATION_COLUMNS, ["gcp", "us-central1", "us-central1-a", A3, market,
                                          "linux", "H100", 8, 208, 1872.0, price, at,
                                          "test:a3"], strict=True))


def _world(tmp_path: Path, db_path: Path) -> Path:
    """A3 on-demand and flex-start prices an hour old; a 60-hour H100 job due in 96."""
    at = datetime.now(timezone.utc) - timedelta(hours=1)
    store = PriceStore(str(db_path))
    store.ingest(pd.DataFrame([_offer("on_demand", 88.49, at), _offer("flex_start", 47.0, at)]))
    store.dispose()
    path = tmp_path / "a3.yaml"
    path.write_text(yaml.safe_dump({
        "name": "a3", "run": "python train.py", "throughputs": {"H100:8": 1.0},
        "steps": 60 * 3600, "constraints": {"clouds": ["gcp"], "gpu_models": ["H100"],
                                            "gpu_counts": [8], "deadline": "96h"}}))
    return path


def test_a_flex_start_plan_names_gcp_and_its_launch_runs_as_printed(
        cli, tmp_path: Path, db_path: Path,  # noqa: ANN001
        monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _world(tmp_path, db_path)
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "local")
    monkeypatch.setenv("COSTSCHED_LAUNCH_CHECKPOINT_ROOT", str(tmp_path / "ckpts"))
    planned = cli("plan", str(spec))
    assert planned.exit_code == 0, planned.output
    out = " ".join(planned.stdout.split())
    assert "a3: flex-start a3-highgpu-8g us-central1" in out, out
    said = re.search(r"`(costsched launch [^`]+)` buys it", out)
    assert said, out
    words = shlex.split(said[1])
    assert words == ["costsched", "launch", str(spec), "--book", "--launcher", "gcp"], words

    fake = Found()
    made: list[str] = []

    def make_launcher(name: str) -> GcpLauncher:
        made.append(name)
        return GcpLauncher(project="proj", instances_client=fake)

    monkeypatch.setattr(cli_jobs, "make_launcher", make_launcher)
    # Asked first, as at a terminal; the answer is yes.
    monkeypatch.setattr(typer.testing._NamedTextIOWrapper, "isatty", lambda self: True)
    from costsched.cli import app

    launched = typer.testing.CliRunner().invoke(app, words[1:], input="y\n")
    assert launched.exit_code == 0, launched.output
    assert "Buy it?" in launched.stderr or "Use it?" in launched.stderr, launched.stderr
    assert made == ["gcp"]
    (request,) = fake.inserted
    scheduling = request.instance_resource.scheduling
    assert (request.instance_resource.machine_type.endswith(A3),
            scheduling.provisioning_model) == (True, "FLEX_START"), request


@pytest.mark.parametrize(("cloud", "market", "configured", "typed"), [
    ("gcp", "flex_start", "gcp", "costsched launch f.yaml --book"),
    ("gcp", "flex_start", "local", "costsched launch f.yaml --book --launcher gcp"),
    ("gcp", "flex_start", "aws", "costsched launch f.yaml --book --launcher gcp"),
    ("gcp", "reservation", "local", "costsched launch f.yaml --book --launcher gcp"),
    ("aws", "reservation", "gcp", "costsched launch f.yaml --book --launcher aws"),
    ("aws", "capacity_block", "local", "costsched launch f.yaml --book --launcher aws")])
def test_every_booked_market_names_its_launcher(cloud: str, market: str, configured: str,
                                                 typed: str) -> None:
    from types import SimpleNamespace

    from costsched.cli.booked import _buying

    best = SimpleNamespace(booked=SimpleNamespace(
        offering=SimpleNamespace(cloud=cloud, market=market)))
    assert _buying(best, "f.yaml", configured) == typed
