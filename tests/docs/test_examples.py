"""The examples of the README and docs/ that need no cloud run as written: every code block
marked `<!-- test -->` is executed (shell blocks with bash -e, Python blocks with this
interpreter) from a checkout-like directory with the recorded data at ../shared/data, on a
store of its own."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.shared_data import shared_data

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
MARKED = re.compile(r"<!-- test -->\n```(sh|python)\n(.*?)```", re.S)


def marked_blocks() -> list[tuple[str, str, str]]:
    return [(f"{page.relative_to(ROOT)}:{i}", lang, code) for page in PAGES
            for i, (lang, code) in enumerate(MARKED.findall(page.read_text()), start=1)]


BLOCKS = marked_blocks()


def test_there_are_examples_to_run() -> None:
    pages = {name.split(":")[0] for name, _, _ in BLOCKS}
    assert len(BLOCKS) >= 4 and "README.md" in pages and "docs/python-api.md" in pages


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    """A directory laid out as a checkout beside ../shared/data, with a virtual environment
    to activate (this interpreter's)."""
    root = tmp_path / "costsched"
    root.mkdir()
    (root / "examples").symlink_to(ROOT / "examples")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(shared_data())
    venv_bin = root / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "activate").write_text(f'PATH="{Path(sys.executable).parent}:$PATH"\n')
    return root


@pytest.mark.parametrize(("name", "lang", "code"), BLOCKS, ids=[b[0] for b in BLOCKS])
def test_example_runs(name: str, lang: str, code: str, checkout: Path,
                      tmp_path: Path) -> None:
    env = {**os.environ, "COSTSCHED_DB": str(tmp_path / "store.sqlite"),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "COLUMNS": "100",
           "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    env.pop("COSTSCHED_CONFIG", None)
    argv = (["bash", "-e", "-c", code] if lang == "sh" else [sys.executable, "-c", code])
    assert shutil.which(argv[0]) or argv[0] == sys.executable
    done = subprocess.run(argv, cwd=checkout, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, f"{name}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
