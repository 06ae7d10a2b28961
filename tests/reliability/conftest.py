"""Shared by the reliability suite: PostgreSQL schemas of their own, and CLI processes
started together (each has imported costsched before any begins its command)."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from urllib.parse import quote

import pytest
from sqlalchemy import create_engine, text

from tests.conftest import _pg_url

ROOT = Path(__file__).resolve().parents[2]
BACKENDS = ["sqlite", "postgresql"]

# A child: import the CLI, say it is ready, wait for the go file, run the command.
_CHILD = """
import sys, time
from pathlib import Path
from costsched.cli import app
ready, go = Path(sys.argv[1]), Path(sys.argv[2])
ready.touch()
while not go.exists():
    time.sleep(0.005)
app(sys.argv[3:])
"""


@pytest.fixture()
def pg_url() -> str:
    url = _pg_url()
    if not url:
        pytest.skip("no PostgreSQL server: set COSTSCHED_TEST_PG_URL (scripts/start-postgres.sh)")
    return url


@pytest.fixture()
def fresh_url(tmp_path: Path) -> Iterator[Callable[[str], str]]:
    """fresh_url("sqlite" | "postgresql"): the URL of a new, empty database each call."""
    schemas: list[str] = []
    admin_url = _pg_url()

    def make(backend: str) -> str:
        if backend == "sqlite":
            return str(tmp_path / f"store-{uuid.uuid4().hex[:8]}.sqlite")
        if not admin_url:
            pytest.skip("no PostgreSQL server: set COSTSCHED_TEST_PG_URL "
                        "(scripts/start-postgres.sh)")
        schema = f"r_{uuid.uuid4().hex[:12]}"
        with create_engine(admin_url).begin() as conn:
            conn.execute(text(f"CREATE SCHEMA {schema}"))
        schemas.append(schema)
        sep = "&" if "?" in admin_url else "?"
        return f"{admin_url}{sep}options={quote(f'-csearch_path={schema}')}"

    yield make
    if schemas:
        engine = create_engine(admin_url)
        with engine.begin() as conn:
            for schema in schemas:
                conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        engine.dispose()


def together(workdir: Path, commands: Sequence[Sequence[str]],
             timeout: float = 900) -> list[subprocess.CompletedProcess]:
    """Run `costsched <command>` for each command in a process of its own, all released
    at once; their completed processes, in order."""
    tag = uuid.uuid4().hex[:8]
    go = workdir / f"go-{tag}"
    ready = [workdir / f"ready-{tag}-{i}" for i in range(len(commands))]
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD, str(r), str(go), *map(str, c)],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
             for r, c in zip(ready, commands, strict=True)]
    deadline = time.monotonic() + timeout
    while not all(r.exists() for r in ready):
        if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
            break
        time.sleep(0.01)
    go.touch()
    done = []
    for proc, command in zip(procs, commands, strict=True):
        out, err = proc.communicate(timeout=max(deadline - time.monotonic(), 1))
        done.append(subprocess.CompletedProcess(command, proc.returncode, out, err))
    return done
