"""`prices import`: a call whose every file is refused for bad input exits 2 (1 when some
imported), a bad row names each of its bad fields at once, and an import that re-prices
jobs already run says so in one line: how many, and by how much their cost changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.store import OBSERVATION_COLUMNS, PriceStore
from tests.costsched.report.scenario import EAST, GPU, WEST, at, observe

HEADER = ",".join(OBSERVATION_COLUMNS) + "\n"
GOOD = "aws,us-east-1,,g4dn.xlarge,spot,linux,T4,1,4,16,0.1500,2024-06-01T11:00:00Z,quote\n"
BAD = "aws,us-east-1,,g4dn.xlarge,spott,linux,T4,1,4,16,0.15/h,2024-06-01T11:00:00Z,quote\n"


def _import(db: Path, *paths: Path, json_out: bool = False):
    args = ["prices", "import", "--partial", *map(str, paths), "--new-store", "--db", str(db)]
    return CliRunner().invoke(app, [*args, *(["--json"] if json_out else [])],
                              env={"COLUMNS": "250"})


def test_a_call_whose_every_file_is_bad_input_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(HEADER + BAD)
    done = _import(tmp_path / "s.sqlite", bad)
    assert done.exit_code == 2, done.output
    [line] = [x for x in done.output.splitlines() if x.startswith("error:")]
    # every bad field of the row, in one line
    assert "row 2:" in line and "market 'spott'" in line and "did you mean 'spot'" in line
    assert "usd_per_hour '0.15/h'" in line


def test_a_call_that_imports_some_files_exits_1(tmp_path: Path) -> None:
    bad, good = tmp_path / "bad.csv", tmp_path / "good.csv"
    bad.write_text(HEADER + BAD)
    good.write_text(HEADER + GOOD)
    done = _import(tmp_path / "s.sqlite", bad, good)
    assert done.exit_code == 1, done.output
    assert "1 file rejected" in done.output


def _store_with_two_jobs(db: Path, keep_open: bool = False) -> tuple[int, int]:
    """'moved' on EAST at $1.00/h from hour 0 to 2, 'steady' on WEST at $0.50/h."""
    store = PriceStore(str(db))
    observe(store, EAST, [(-10, 1.0)])
    observe(store, WEST, [(-10, 0.5)])
    ids = []
    for name, key, price in (("moved", EAST, 1.0), ("steady", WEST, 0.5)):
        spec = {"spec": {"name": name, "throughputs": {"V100": 2.0}, "steps": 1e6}}
        job = store.jobs.create(name, spec, 1e6, at=at(-1))
        store.jobs.place(job, key, gpu_model=GPU[key[3]], gpu_count=1, at=at(0),
                         usd_per_hour=price, reason="launch", instance=f"{name}-1")
        if not (keep_open and name == "moved"):
            store.jobs.end_placement(job, at(2))
        ids.append(job)
    store.dispose()
    return ids[0], ids[1]


def _quote(tmp_path: Path, usd: float, hour: float = 1) -> Path:
    path = tmp_path / "quote.csv"
    path.write_text(HEADER + f"aws,us-east-1,us-east-1a,p3.2xlarge,spot,linux,V100,1,8,61.0,"
                    f"{usd},{at(hour):%Y-%m-%dT%H:%M:%SZ},mine\n")
    return path


def test_an_import_that_reprices_jobs_already_run_says_how_much(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    _store_with_two_jobs(db)
    # EAST at $2.00/h from hour 1: 'moved' costs $1.00 + $2.00, not $2.00
    done = _import(db, _quote(tmp_path, 2.0))
    assert done.exit_code == 0, done.output
    assert "re-prices 1 job already run: its cost changes by +$1.00" in done.output
    doc = json.loads(_import(db, _quote(tmp_path, 1.5, hour=1.5), json_out=True).output)
    assert doc["repriced_jobs"] == 1 and doc["repriced_usd"] == pytest.approx(-0.25)


def test_a_running_job_it_reprices_is_said_running(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    _store_with_two_jobs(db, keep_open=True)
    done = _import(db, _quote(tmp_path, 2.0))
    assert done.exit_code == 0, done.output
    assert "re-prices 1 job already run (running): its cost changes by +$" in done.output


def test_an_import_that_reprices_nothing_says_nothing_of_it(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    _store_with_two_jobs(db)
    done = _import(db, _quote(tmp_path, 2.0, hour=3))  # after both ended
    assert done.exit_code == 0, done.output
    assert "re-price" not in done.output


def test_a_store_without_jobs_prices_no_job(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import costsched.costs

    def never(*_a: object, **_k: object) -> None:
        raise AssertionError("no job to re-price: nothing to charge")

    monkeypatch.setattr(costsched.costs, "charge", never)
    done = _import(tmp_path / "s.sqlite", _quote(tmp_path, 2.0))
    assert done.exit_code == 0, done.output
    assert "re-price" not in done.output
