"""`report` and `report --json` compute and write the report without pandas or numpy (its
tables on plain rows), on stores with a finished job, moves and egress, a gang with node
gaps, and an estimate-versus-actual table (their jobs ended): in a fresh interpreter, so
that the suite's own imports do not hide one."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from costsched.store import PriceStore
from tests.costsched.report.report_stores import STORES

PROBE = """
import json, sys
from costsched.cli import app
loaded = {}
for argv in json.loads(sys.argv[1]):
    try:
        app(argv)
    except SystemExit:
        pass
    loaded[" ".join(argv[2:])] = sorted({"pandas", "numpy"} & set(sys.modules))
print(json.dumps(loaded), file=sys.stderr)
"""


def _loaded(tmp_path: Path, *flags: str) -> dict[str, list[str]]:
    """{store name: the heavy libraries loaded once `report` ran on it} (each store made by
    `report_stores`), all in one fresh interpreter."""
    runs = []
    for name, fill in STORES.items():
        url = str(tmp_path / f"{name}.sqlite")
        store = PriceStore(url)
        fill(store)
        # Every job's last placement ended two hours after it started: a report to now
        # then has the stores' few days, not one row per day since.
        for p in store.jobs.placement_rows(None, open_only=True):
            store.jobs.end_placement(p.job_id, p.start_at + timedelta(hours=2),
                                     instance=p.instance)
        store.engine.dispose()
        runs.append(["report", "--db", url, *flags])
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(runs)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stderr.strip().splitlines()[-1])
    return {Path(k.split()[0]).stem: v for k, v in found.items()}


def test_report_loads_neither_pandas_nor_numpy(tmp_path: Path) -> None:
    assert _loaded(tmp_path) == dict.fromkeys(STORES, [])


def test_report_json_loads_neither_pandas_nor_numpy(tmp_path: Path) -> None:
    assert _loaded(tmp_path, "--json") == dict.fromkeys(STORES, [])
