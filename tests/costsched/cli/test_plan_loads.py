"""`plan` of one job loads what its answer needs: not the collection solver's problem nor
its tables (a collection of several jobs loads them), nor the stores of running jobs'
rooms (leases, daemons, decisions). In a fresh interpreter: what a command imports is only
seen there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from costsched.service.prices import import_prices

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
UNUSED = ("costsched.optimize.collection", "costsched.cli.packing", "costsched.cli.booked",
          "costsched.store.leases", "costsched.store.daemons", "costsched.store.decisions")


def loaded_by(argv: list[str], env: dict[str, str]) -> tuple[int, list[str]]:
    probe = ("import json, sys\nfrom costsched.cli import app\ncode = 0\n"
             f"try:\n    app({argv!r})\nexcept SystemExit as exc:\n    code = exc.code or 0\n"
             f"print('PROBE=' + json.dumps([code, [m for m in {UNUSED!r} "
             "if m in sys.modules]]), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env=env, check=True, cwd=env["HOME"])
    code, loaded = json.loads(out.stderr.rpartition("PROBE=")[2])
    return code, loaded


def test_a_plan_of_one_job_loads_no_collection_or_job_rooms(tmp_path: Path) -> None:
    db = str(tmp_path / "store.sqlite")
    import_prices(db, [EXAMPLES / "demo" / "prices-before.csv"], partial=False)
    env = {**os.environ, "HOME": str(tmp_path), "COSTSCHED_DB": db,
           "COSTSCHED_DISCOVERED_TYPES": str(tmp_path / "none.csv"),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    code, loaded = loaded_by(["plan", str(EXAMPLES / "resnet50.yaml")], env)
    assert code == 0 and loaded == []
    code, loaded = loaded_by(["plan", str(EXAMPLES / "resnet50-anywhere.yaml"),
                              str(EXAMPLES / "tinyproject" / "sky.yaml")], env)
    assert code == 0 and "costsched.optimize.collection" in loaded  # the probe sees it
