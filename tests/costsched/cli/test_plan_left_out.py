"""`plan` says what its tables leave out: the booked markets a job asks for beside spot and
on-demand that were not weighed, none being known that fits it (with the `collect` that
gets them, as a "no plan" of booked capacity alone says it), and a launcher that cannot
launch now, or that launches other clouds than #1's (its reason and fix as `launch`
refuses; where launch goes instead). The bundled prices of an empty store; no cloud is
asked (the launcher is a stand-in)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pytest

import launchers
from costsched.model import InvalidInput
from costsched.store import PriceStore

BOOKED = ("name: w2v-book\nrun: 'true'\nthroughputs: {L4: 30}\nsteps: 2500\n"
          "constraints:\n  gpu_models: [L4]\n"
          "  markets: [spot, on-demand, flex-start, reservation]\n")
NO_BOTO = "aws: boto3 is not installed: pip install 'costsched[aws]'"


def _notes(result) -> list[str]:  # noqa: ANN001
    return [" ".join(line.split()) for line in ("\n" + result.stderr).split("\nnote: ")[1:]]


def _plan(cli, tmp_path: Path, text: str, *more: str):  # noqa: ANN001, ANN202
    path = tmp_path / "booked.yaml"
    path.write_text(text)
    planned = cli("plan", path, *more)
    assert planned.exit_code == 0, planned.output
    return planned, path


@pytest.fixture
def local(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "local")


def test_booked_markets_not_weighed_are_named_with_the_collect_that_gets_them(
        cli, tmp_path: Path, local: None) -> None:  # noqa: ANN001
    planned, path = _plan(cli, tmp_path, BOOKED)
    said = [n for n in _notes(planned) if "not weighed" in n]
    assert said == [f"{path}: flex-start and reservation not weighed: none known fits job "
                    "w2v-book; `costsched collect --cloud aws --cloud gcp --booked --gpu L4` "
                    "collects GCP's prices (flex-start's among them) and the reservations "
                    "held"], planned.stderr
    # the same job with no booked market: nothing said
    plain, _ = _plan(cli, tmp_path, BOOKED.replace(", flex-start, reservation", ""))
    assert "not weighed" not in plain.stderr


def test_a_booked_market_weighed_is_not_named(cli, tmp_path: Path, db_path: Path,
                                               local: None) -> None:  # noqa: ANN001
    at = datetime.now(timezone.utc).replace(microsecond=0)
    store = PriceStore(str(db_path))
    store.ingest(pd.DataFrame([dict(
        cloud="gcp", region="us-east5", zone="us-east5-a", instance_type="g2-standard-4",
        market="flex_start", os="linux", gpu_model="L4", gpu_count=1, vcpus=4,
        memory_gb=16.0, usd_per_hour=0.3, effective_at=at, source="test")]))
    store.dispose()
    planned, path = _plan(cli, tmp_path, BOOKED)
    assert "flex-start" in planned.stdout  # its plans are weighed and shown
    said = [n for n in _notes(planned) if "not weighed" in n]
    assert said == [f"{path}: reservation not weighed: none known fits job w2v-book; "
                    "`costsched collect --cloud aws --cloud gcp --booked --gpu L4` collects "
                    "the reservations held"], planned.stderr


def _launcher_refused(monkeypatch: pytest.MonkeyPatch, why: str | None) -> list[str]:
    """A stand-in for the aws launcher: refused with `why`, or made and ready."""
    asked: list[str] = []

    class Ready:
        def check_ready(self) -> None:
            return

    def made(name: str, **_: object) -> Ready:
        asked.append(name)
        if why is not None:
            raise InvalidInput(why)
        return Ready()

    monkeypatch.setattr(launchers, "make_launcher", made)
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "aws")
    return asked


def _top(row: int) -> str:
    """What the note adds of a row below the table's ten."""
    return f"; `--top {row}` shows it" if row > 10 else ""


def _rows(cli, path: Path) -> list[str]:  # noqa: ANN001
    doc = json.loads(cli("plan", path, "--json", "--top", "100").stdout)
    return [r["offering"] for r in doc["rankings"][0]["ranking"]]


def test_a_launcher_that_cannot_launch_is_said_with_its_fix_and_where_launch_goes(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    asked = _launcher_refused(monkeypatch, NO_BOTO)
    text = BOOKED.replace(", flex-start, reservation", "")
    planned, path = _plan(cli, tmp_path, text)
    rows = _rows(cli, path)
    assert rows[0].startswith("gcp ")
    aws = next(i for i, r in enumerate(rows, start=1) if r.startswith("aws "))
    [note] = [n for n in _notes(planned) if "launch.launcher" in n]
    assert note == ("launch cannot launch now: your launcher (launch.launcher) is aws, and "
                    "boto3 is not installed: pip install 'costsched[aws]'; it launches aws "
                    f"offerings only: #1 of job w2v-book ({rows[0]}) is not one of them, "
                    f"#{aws} ({rows[aws - 1]}{_top(aws)}) is where launch goes"), planned.stderr
    assert asked and set(asked) == {"aws"}
    # the launch refuses in the note's words, naming where the launcher came from
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    refused = cli("launch", path, "--wait", "0")
    assert refused.exit_code == 2 and " ".join(refused.output.split()) == (
        f"error: the configuration's launch.launcher {NO_BOTO}")


def test_a_ready_launcher_of_another_cloud_says_where_launch_goes(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    _launcher_refused(monkeypatch, None)
    planned, path = _plan(cli, tmp_path, BOOKED.replace(", flex-start, reservation", ""))
    rows = _rows(cli, path)
    aws = next(i for i, r in enumerate(rows, start=1) if r.startswith("aws "))
    [note] = [n for n in _notes(planned) if "launch.launcher" in n]
    assert note == ("your launcher (launch.launcher) is aws: it launches aws offerings only:"
                    f" #1 of job w2v-book ({rows[0]}) is not one of them, #{aws} "
                    f"({rows[aws - 1]}{_top(aws)}) is where launch goes"), planned.stderr


def test_the_local_launcher_and_a_first_row_it_launches_say_nothing(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local: None) -> None:  # noqa: ANN001
    planned, _ = _plan(cli, tmp_path, BOOKED)
    assert "your launcher (launch.launcher)" not in planned.stderr
    _launcher_refused(monkeypatch, None)
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "gcp")
    planned, _ = _plan(cli, tmp_path, BOOKED)
    assert "your launcher (launch.launcher)" not in planned.stderr


def test_a_sweep_is_said_once_by_its_jobs(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    _launcher_refused(monkeypatch, NO_BOTO)
    text = BOOKED.replace(", flex-start", "") + "sweep: {LR: [1, 2, 3]}\n"
    planned, path = _plan(cli, tmp_path, text)
    notes = _notes(planned)
    assert [n for n in notes if "not weighed" in n] == [
        f"{path}: reservation not weighed: none known fits jobs w2v-book-1 ... w2v-book-3; "
        "`costsched collect --cloud aws --cloud gcp --booked --gpu L4` collects the "
        "reservations held"], planned.stderr
    [note] = [n for n in notes if "launch.launcher" in n]
    assert note.count("#1 of ") == 1 and "#1 of jobs w2v-book-1 ... w2v-book-3 (" in note
