"""Concurrent writers on SQLite and PostgreSQL: three `costsched prices import` processes
of overlapping recorded files, released at once into a brand-new store, all succeed and
store exactly what one process importing everything stores; four processes opening a
brand-new store at once all get the schema, round after round."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from costsched import service
from costsched.store import OFFERING_ATTRS, OFFERING_KEY, PriceStore, database
from tests.reliability.conftest import BACKENDS, ROOT, together

# Each pair of importers shares a source, so all three create the same new offerings.
SOURCES = [("eu-central-1", "eu-west-1"), ("eu-west-1", "azure"), ("azure", "eu-central-1")]
ROUNDS = 4


def source_paths(dispa: Path, names: tuple[str, ...]) -> list[str]:
    return [str(dispa / "azure" if n == "azure" else dispa / "aws" / "cost" / n) for n in names]


def stored(url: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The store's offerings and its observations, in a canonical order."""
    store = PriceStore(url, migrate=False)
    try:
        offerings = store.offerings().drop(columns="id")
        rows = store.observations()
    finally:
        store.dispose()
    offerings = offerings.sort_values(OFFERING_KEY).reset_index(drop=True)
    rows = rows.sort_values([*OFFERING_KEY, "effective_at"]).reset_index(drop=True)
    return offerings, rows


@pytest.mark.parametrize("backend", BACKENDS)
def test_three_importers_of_overlapping_files(backend: str, fresh_url, dispa: Path,
                                              tmp_path: Path) -> None:
    url = fresh_url(backend)
    runs = together(tmp_path, [["prices", "import", *source_paths(dispa, names), "--db", url,
                                "--new-store", "--json"] for names in SOURCES])
    for run in runs:
        assert run.returncode == 0, run.stderr
        assert "Traceback" not in run.stderr
    results = [json.loads(run.stdout) for run in runs]

    alone = fresh_url(backend)
    every = sorted({name for names in SOURCES for name in names})
    single = service.import_prices(alone, source_paths(dispa, tuple(every)))
    assert not single.errors and single.inserted > 0

    offerings, rows = stored(url)
    expected_offerings, expected_rows = stored(alone)
    # No duplicate offering or price row, none lost: the same as one writer stores.
    assert not offerings.duplicated(OFFERING_KEY).any()
    assert not rows.duplicated([*OFFERING_KEY, "effective_at"]).any()
    pd.testing.assert_frame_equal(offerings[OFFERING_KEY + OFFERING_ATTRS],
                                  expected_offerings[OFFERING_KEY + OFFERING_ATTRS])
    pd.testing.assert_frame_equal(rows, expected_rows)
    # Each row was counted as new by exactly one of the importers.
    assert sum(r["inserted"] for r in results) == len(rows) == single.inserted
    assert sum(r["read"] for r in results) > len(rows)  # the files really overlapped


# A child that opens ROUNDS brand-new stores, each when its go file appears.
_OPENER = """
import sys, time
from pathlib import Path
from costsched.store import PriceStore
from costsched.model import InvalidInput
ready, urls = Path(sys.argv[1]), sys.argv[2:]
ready.touch()
for i, url in enumerate(urls):
    go = ready.with_name(f"go-{i}")
    while not go.exists():
        time.sleep(0.002)
    try:
        PriceStore(url).dispose()
        print("ok", flush=True)
    except Exception as exc:
        print(f"failed: {type(exc).__name__}: {exc}", flush=True)
    ready.with_name(f"{ready.name}-done-{i}").touch()
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_four_processes_open_a_new_store_at_once(backend: str, fresh_url,
                                                 tmp_path: Path) -> None:
    urls = [fresh_url(backend) for _ in range(ROUNDS)]
    procs = [subprocess.Popen([sys.executable, "-c", _OPENER, str(tmp_path / f"ready-{i}"),
                               *urls], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(4)]
    deadline = time.monotonic() + 600
    while not all((tmp_path / f"ready-{i}").exists() for i in range(4)):
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs)
        time.sleep(0.01)
    for i in range(ROUNDS):
        (tmp_path / f"go-{i}").touch()
        while not all((tmp_path / f"ready-{n}-done-{i}").exists() for n in range(4)):
            assert time.monotonic() < deadline, "a process hung opening the store"
            time.sleep(0.01)
    outcomes = [p.communicate(timeout=600) for p in procs]
    for out, err in outcomes:
        assert out.split("\n")[:ROUNDS] == ["ok"] * ROUNDS, (out, err)
    for url in urls:
        store = PriceStore(url, migrate=False)
        assert store.revision() == database.head()
        store.dispose()
