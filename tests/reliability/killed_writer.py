"""A `costsched prices import` killed with SIGKILL at many points of its batch: the store is
always either as it was before or complete, never in between, and importing again completes
it. The check of one backend (`check_killed_imports`), run by test_killed_writer_sqlite.py
and test_killed_writer_postgresql.py: a file per backend, so that the two (each several
subprocess imports) run on two workers at once."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from costsched import service
from tests.reliability.conftest import ROOT
from tests.reliability.test_concurrent_writers import source_paths, stored

BEFORE = ("eu-central-1",)
BATCH = ("eu-central-1", "eu-west-1", "azure")  # overlaps what is stored, and adds to it
# Kill points spread over the batch's statements, from the first to the commit (each one
# a subprocess import: a fresh interpreter and store).
POINTS = {"sqlite": 5, "postgresql": 4}

# A child that kills itself (SIGKILL) before its n-th database statement or commit, and
# writes how many there were when it is not killed.
_KILLED = """
import os, signal, sys
from pathlib import Path
from sqlalchemy import Engine, event
from costsched.cli import app
kill_at, counted = int(sys.argv[1]), Path(sys.argv[2])
seen = [0]
def point(*args, **kwargs):
    seen[0] += 1
    counted.write_text(str(seen[0]))
    if seen[0] == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)
event.listen(Engine, "before_cursor_execute", point)
event.listen(Engine, "commit", point)
app(sys.argv[3:])
"""


def run_import(url: str, dispa: Path, kill_at: int, counted: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _KILLED, str(kill_at), str(counted),
                           "prices", "import", *source_paths(dispa, BATCH), "--db", url],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)


def check_killed_imports(backend: str, fresh_url: Callable[[str], str], dispa: Path,
                         tmp_path: Path) -> None:
    """Kill an import of BATCH into a store holding BEFORE at points spread over its
    statements (POINTS[backend] of them), and import again once."""
    def before_store() -> str:
        url = fresh_url(backend)
        result = service.import_prices(url, source_paths(dispa, BEFORE))
        assert result.inserted > 0 and not result.errors
        return url

    template = before_store()
    before = stored(template)
    complete_url = before_store()
    counted = tmp_path / "points"
    full = run_import(complete_url, dispa, 0, counted)
    assert full.returncode == 0, full.stderr
    complete = stored(complete_url)
    assert len(complete[1]) > len(before[1])
    total = int(counted.read_text())
    assert total >= 3

    # From the first statement to the commit (the last point): spread over them all.
    count = min(total, POINTS[backend])
    points = sorted({max(1, round(total * (k + 1) / count)) for k in range(count)})
    outcomes = []
    for n, kill_at in enumerate(points):
        if backend == "sqlite":
            url = str(tmp_path / f"killed-{kill_at}.sqlite")
            shutil.copyfile(template, url)
        else:
            url = before_store()
        killed = run_import(url, dispa, kill_at, counted)
        assert killed.returncode == -signal.SIGKILL, (kill_at, killed.stderr)
        now = stored(url)
        same_as_before = _same(now, before)
        assert same_as_before or _same(now, complete), f"torn store after kill at {kill_at}"
        outcomes.append("before" if same_as_before else "complete")
        if n == len(points) // 2:  # importing again completes a killed import
            again = run_import(url, dispa, 0, counted)
            assert again.returncode == 0, again.stderr
            assert _same(stored(url), complete)
    # Kills before the batch's commit leave it as before; after it, complete.
    assert outcomes[0] == "before"
    assert outcomes == sorted(outcomes, key=["before", "complete"].index)


def _same(a: tuple[pd.DataFrame, pd.DataFrame], b: tuple[pd.DataFrame, pd.DataFrame]) -> bool:
    return all(x.reset_index(drop=True).equals(y.reset_index(drop=True))
               for x, y in zip(a, b, strict=True))
