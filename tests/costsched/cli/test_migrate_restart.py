"""`migrate` says where a move's restart comes from: on a cloud's launcher, the decision
model's assumption, its hours at the offering's price and the settings that give them
(the job's file's or [migration]'s); on the local launcher, which boots no instance, that
it is left out, the move paying none."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from costsched.cli import jobs as cli_jobs
from costsched.service import jobs as service
from costsched.store import PriceStore
from tests.costsched.cli.test_migrate_lines import TO, _spec
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices
from tests.real_jobs import launch, wait_for, world  # noqa: F401 - the fixture

ITEMS = re.compile(r"  \$[\d.]+ on (.+), the best alternative, including the move of "
                   r"\$[\d.]+ \(egress \$[\d.]+, restart \$([\d.]+), lost work \$[\d.]+, "
                   r"overlap \$[\d.]+\)")


def _restart_usd(lines: list[str]) -> tuple[str, str]:
    """(the best alternative, its move's restart in dollars, as the item line says)."""
    [found] = [m for m in map(ITEMS.fullmatch, lines) if m]
    return found.group(1), found.group(2)


@pytest.mark.parametrize("own", [None, 2])
def test_on_a_cloud_launcher_the_restart_is_said_assumed_with_its_settings(
        cli, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
        own: int | None) -> None:
    store = PriceStore(str(db_path))
    set_prices(store, {"us-east-1a": 1.0, "us-east-1b": 2.0},
               datetime.now(timezone.utc) - timedelta(hours=1))
    launcher = FakeLauncher()  # a launcher that boots an instance for each placement
    monkeypatch.setattr(cli_jobs, "job_launcher", lambda store, job: launcher)
    checkpoint = {"interval_minutes": 30, "size_gb": 1.0,
                  **({} if own is None else {"restart_minutes": own})}
    path = _spec(tmp_path, "plain", throughputs={"V100": 0.5}, steps=3600,
                 checkpoint=checkpoint)
    service.launch(store, path, launcher=launcher, checkpoint_root=str(tmp_path / "ckpt"))
    store.dispose()
    said = cli("migrate", "--dry-run")
    assert said.exit_code == 0, said.output
    lines = said.stdout.splitlines()
    where, restart = _restart_usd(lines)
    assert where == TO
    boot = (f"{own} min boot and set-up (checkpoint.restart_minutes in {path})" if own
            else "10 min boot and set-up ([migration] restart_minutes)")
    # (no checkpoint published yet: the copy is of the 1 GB its file declares)
    hours = ((own or 10) + 5) / 60 + 8 / 3600
    assert f"  restart assumed: {hours:.4g} h at $2.0000/h, {boot} + 5 min warm-up " \
           "([migration] warmup_minutes) + 0.1333 min to copy the 1 GB checkpoint at 1 " \
           "Gbit/s ([migration] transfer_gbps)" in lines, said.stdout
    # The item line's figure is those hours at that price, at its precision (within a unit
    # of its last decimal, where the items are written to add up to the total).
    places = len(restart.split(".")[1])
    assert abs(float(restart) - hours * 2.0) <= 10 ** -places, said.stdout
    assert not any("left out" in line for line in lines), said.stdout


def test_on_the_local_launcher_the_restart_is_left_out_and_said_so(
        world, cli, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001, F811
    store, launcher, tmp = world
    job, instance = launch(world, "import time\ntime.sleep(300)\n")
    wait_for(lambda: launcher.status(instance).state == "running")
    monkeypatch.setenv("COSTSCHED_DB", str(tmp / "store.sqlite"))
    monkeypatch.setattr(cli_jobs, "job_launcher", lambda store, job: launcher)
    said = cli("migrate", str(job.id), "--dry-run")
    assert said.exit_code == 0, said.output
    lines = said.stdout.splitlines()
    where, restart = _restart_usd(lines)
    assert where.startswith("aws us-east-1b ") and float(restart) == 0, said.stdout
    assert ("  restart left out: the local launcher boots no instance, and the job's setup "
            "is in its billed hours: a setup runs again where the job moves, billed there but "
            "not in this price") in lines, said.stdout
    assert not any("restart assumed" in line for line in lines), said.stdout
