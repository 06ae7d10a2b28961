"""What `migrate` says of each job, in dollars and in short lines: a deadline job that stays
says what staying and its best alternative cost; a move not made says why first, on its
own line, and a `--to` target without capacity exits 75 (the job runs where it was); a
job whose work is given as hours is priced as all of them, marked `*` as assumed. The CLI
over an in-memory launcher, SQLite store."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
import yaml

from costsched.cli import jobs as cli_jobs
from costsched.service import jobs as service
from costsched.service.jobs.runs import _open_placement
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices
from tests.costsched.service.test_start_secrets import launch_two

TO = "aws us-east-1b p3.2xlarge spot"


def _spec(tmp_path: Path, name: str, **fields: object) -> Path:
    spec = {"name": name, "run": "true",
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
            "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}, **fields}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


@pytest.fixture()
def priced(cli, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN001
    """The CLI's store with V100 spot at $1/h in us-east-1a and $2/h in us-east-1b, and a
    fake launcher the CLI uses."""
    store = PriceStore(str(db_path))
    set_prices(store, {"us-east-1a": 1.0, "us-east-1b": 2.0},
               datetime.now(timezone.utc) - timedelta(hours=1))
    launcher = FakeLauncher()
    monkeypatch.setattr(cli_jobs, "job_launcher", lambda store, job: launcher)
    yield cli, store, launcher
    store.dispose()


def test_a_deadline_job_that_stays_says_its_cost_and_its_best_alternative(
        priced, tmp_path: Path) -> None:
    cli, store, launcher = priced
    path = _spec(tmp_path, "due", throughputs={"V100": 0.01}, steps=1500, constraints={
        "regions": ["us-east-1"], "gpu_models": ["V100"], "deadline": "500h"})
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    assert job.policy == "spot-hedge"
    said = cli("migrate", "--dry-run")
    assert said.exit_code == 0, said.output
    first, second = said.stdout.splitlines()[:2]
    assert re.fullmatch(r"job \d+ \(due\): staying: spot-hedge \(deadline .+ UTC\): stay on "
                        r"aws us-east-1a p3\.2xlarge spot: \$[\d.]+ to finish here", first), first
    assert re.fullmatch(r"  \$[\d.]+ on aws us-east-1b p3\.2xlarge spot, the best "
                        r"alternative, including the move of \$[\d.]+ \(egress \$[\d.]+, "
                        r"restart \$[\d.]+, lost work \$[\d.]+, overlap \$[\d.]+\)",
                        second), second


def test_a_job_the_price_policy_keeps_says_its_cost_and_its_best_alternative(
        priced, tmp_path: Path) -> None:
    cli, store, launcher = priced
    [job] = service.launch(store, _spec(tmp_path, "plain", throughputs={"V100": 0.5},
                                        steps=3600),
                           launcher=launcher, checkpoint_root=str(tmp_path / "ckpt"))
    _publish(store.jobs.get(job.id).checkpoint_location, tmp_path)  # its step not known
    said = cli("migrate", "--dry-run")
    assert said.exit_code == 0, said.output
    assert said.stdout.splitlines()[:3] == [
        f"job {job.id} (plain): staying: $2.09 to finish here",
        # (its restart copies the checkpoint published, a few bytes, not the 1 GB declared)
        f"  $5.17 on {TO}, the best alternative, including the move of $1.00 (egress "
        "$0.00, restart $0.50, lost work $0.50, overlap $0.00)",
        "  no move saves more than 5% of the next day's cost here"]


def _publish(where: str, tmp_path: Path) -> None:
    """A checkpoint published to the job's store, whose step is not known: a move is
    priced with the assumed lost work (with none, a move would lose all the job did)."""
    from launchers.checkpoints import open_store

    state = tmp_path / "state.bin"
    state.write_bytes(b"weights at an unknown step")
    open_store(where).publish(state)


def test_a_move_to_an_offering_without_capacity_says_so_first_and_exits_75(
        priced, tmp_path: Path) -> None:
    """The move's one fallback is where the job ran: it runs there again. Not made: a
    script can tell (75: the same command may work later)."""
    cli, store, launcher = priced
    [job] = service.launch(store, _spec(tmp_path, "plain", throughputs={"V100": 0.5},
                                        steps=3600),
                           launcher=launcher, checkpoint_root=str(tmp_path / "ckpt"))
    launcher.full.add("us-east-1b")
    said = cli("migrate", "plain", "--to", TO, "--wait", "0")
    assert said.exit_code == 75, said.output
    first, second = said.stdout.splitlines()[:2]
    assert first == (f"job {job.id} (plain): not moved: cannot launch {TO}: "
                     "InsufficientInstanceCapacity; it runs on aws us-east-1a p3.2xlarge "
                     "spot again")
    assert second.startswith(f"  would move to {TO} as asked: $")
    assert str(_open_placement(store, job.id)["zone"]) == "us-east-1a"
    doc = cli("migrate", "plain", "--to", TO, "--wait", "0", "--json")
    assert doc.exit_code == 75, doc.output
    [advice] = json.loads(doc.stdout)
    assert (advice["started"], advice["held_back"]) == (False, "capacity")
    launcher.full.clear()
    made = cli("migrate", "plain", "--to", TO, "--wait", "0")
    assert made.exit_code == 0, made.output
    assert str(_open_placement(store, job.id)["zone"]) == "us-east-1b"


def test_a_move_held_for_a_secret_says_why_first(
        cli, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    store = PriceStore(str(db_path))
    launcher, sec, _ = launch_two(store, tmp_path, monkeypatch,
                                  {"us-east-1a": 1.0, "us-east-1b": 2.0})
    monkeypatch.setattr(cli_jobs, "job_launcher", lambda store, job: launcher)
    held = cli("migrate", "sec", "--to", TO, "--wait", "0")
    store.dispose()
    assert held.exit_code == 2, held.output
    lines = held.stdout.splitlines()
    assert lines[0] == (f"job {sec} (sec): not moved: this shell has no value for secret "
                        "KM_TOKEN; set KM_TOKEN in your environment, or give each with "
                        "--secret NAME=VALUE, and ask again")
    assert lines[1].startswith(f"  would move to {TO} as asked: $")
    assert all(len(line) < 250 for line in lines)


def test_a_job_whose_work_is_hours_is_priced_as_all_of_them_marked_assumed(
        priced, tmp_path: Path) -> None:
    """Its steps are its own, no share of its hours: once it reports one, the rest is
    priced as all of its hours, and so marked; a job whose work is not given cannot be
    compared at all, and says so."""
    cli, store, launcher = priced
    [job] = service.launch(store, _spec(tmp_path, "hours", hours=2, reference_gpu="V100"),
                           launcher=launcher, checkpoint_root=str(tmp_path / "ckpt"))
    store.jobs.record_steps({job.id: 325}, at=datetime.now(timezone.utc))
    said = cli("migrate", "hours", "--to", TO, "--dry-run")
    assert said.exit_code == 0, said.output
    lines = said.stdout.splitlines()
    assert re.fullmatch(rf"job {job.id} \(hours\): would move to {re.escape(TO)} as asked: "
                        r"\$[\d.]+\* to finish here, \$[\d.]+\* there including the move of "
                        r"\$[\d.]+ \(.+\) \(\$[\d.]+\* dearer\)", lines[0]), lines[0]
    assert lines[1].startswith("  * assumed: step 325: its work is given as 2 h of work")
    assert "  its rest is priced as all of its hours" in lines
    [advice] = json.loads(cli("migrate", "hours", "--to", TO, "--dry-run", "--json").stdout)
    assert advice["stay_usd"] > 0 and advice["move_usd"] > advice["stay_usd"]
    # The policy's own decision says its dollars alike; no move is made on an assumed rest.
    stays = cli("migrate", "hours", "--dry-run").stdout.splitlines()
    assert re.fullmatch(rf"job {job.id} \(hours\): staying: \$[\d.]+\* to finish here",
                        stays[0]), stays
    assert re.match(rf"  \$[\d.]+\* on {re.escape(TO)}, the best alternative, including "
                    r"the move of \$", stays[1]), stays
    assert stays[3].startswith("  * assumed: step 325: ")
    launcher.full.clear()
    set_prices(store, {"us-east-1b": 0.01}, datetime.now(timezone.utc) - timedelta(minutes=5))
    [kept] = service.migrate(store, launcher, job.id)
    assert not kept.decision.moves and kept.started is None
    assert "; not moved there: no move is made on an assumed rest; * assumed: " in kept.reason


def test_a_move_asked_of_a_job_whose_rest_is_not_known_cannot_be_compared() -> None:
    """No dashes where the money would be: the move's price, and why the rest cannot be
    compared."""
    from costsched.decide.price import Decision
    from costsched.optimize.decision import MovePrice
    from costsched.service.jobs.reasons import asked_unpriced

    here = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
    move = MovePrice(egress_usd=0.0, restart_usd=0.5, lost_work_usd=0.25, overlap_usd=0.0)
    asked = Decision(datetime(2026, 1, 1, tzinfo=timezone.utc), "asked", here,
                     (*here[:2], "us-east-1b", *here[3:]), None, 2.0, float("nan"),
                     float("nan"), move=move)
    said = asked_unpriced(asked, "its work is not given; the rest cannot be priced")
    assert said == (f"move to {TO} as asked, the move of $0.75 (egress $0.00, restart "
                    "$0.50, lost work $0.25, overlap $0.00); cannot compare the rest here "
                    "and there: its work is not given; the rest cannot be priced")


def test_a_move_to_a_gpu_whose_speed_is_estimated_marks_the_figures_there(
        priced, tmp_path: Path) -> None:
    """Its file gives a V100 speed only: the cost on an A10G rests on an estimated speed,
    marked `*` as `plan` marks one, and said how it is estimated; the cost here is not."""
    cli, store, launcher = priced
    at = datetime.now(timezone.utc) - timedelta(hours=1)
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1c", instance_type="g5.xlarge",
        market="spot", os="linux", gpu_model="A10G", gpu_count=1, vcpus=4, memory_gb=16.0,
        usd_per_hour=3.0, effective_at=at, source="test")]))
    [job] = service.launch(store, _spec(tmp_path, "plain", throughputs={"V100": 0.5},
                                        steps=3600),
                           launcher=launcher, checkpoint_root=str(tmp_path / "ckpt"))
    to = "aws us-east-1c g5.xlarge spot"
    said = cli("migrate", "plain", "--to", to, "--dry-run")
    assert said.exit_code == 0, said.output
    lines = said.stdout.splitlines()
    assert re.fullmatch(rf"job {job.id} \(plain\): would move to {re.escape(to)} as asked: "
                        r"\$[\d.]+ to finish here, \$[\d.]+\* there including the move of "
                        r"\$[\d.]+ \(.+\) \(\$[\d.]+\* dearer\)", lines[0]), lines[0]
    assert re.fullmatch(r"  \* at an estimated [\d.]+ steps/s on 1xA10G, not measured "
                        r"\(estimate: A10G from V100 .+\)", lines[1]), lines
    # Where the speed there is the one given, nothing is marked.
    plain = cli("migrate", "plain", "--to", TO, "--dry-run").stdout
    assert "*" not in plain, plain
