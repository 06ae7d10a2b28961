"""The analysis notebooks run, cell by cell, in a real kernel against a store filled with the
recorded prices, and every figure they draw has something on it."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import matplotlib.image
import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
# notebook -> (parameters as environment variables, the figures it must draw)
RUNS = {
    "price_analysis.ipynb": ({"COSTSCHED_NB_START": "2020-02-24",
                              "COSTSCHED_NB_END": "2020-03-05"}, 3),
    "savings.ipynb": ({"COSTSCHED_NB_START": "2020-02-24", "COSTSCHED_NB_STARTS": "3",
                       "COSTSCHED_NB_DAYS": "2",
                       "COSTSCHED_NB_MODELS": "A3C,Transformer (batch size 256)"}, 2),
}


def figures(book: nbformat.NotebookNode) -> list:
    """Every PNG the notebook drew, decoded."""
    found = []
    for cell in book.cells:
        for output in cell.get("outputs", []):
            png = output.get("data", {}).get("image/png")
            if png:
                found.append(matplotlib.image.imread(io.BytesIO(base64.b64decode(png)),
                                                     format="png"))
    return found


@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_notebook_runs_and_draws(name: str, recorded_store, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    params, expected = RUNS[name]
    monkeypatch.setenv("COSTSCHED_NB_DB", recorded_store.url)
    for key, value in params.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    book = nbformat.read(NOTEBOOKS / name, as_version=4)
    # Any cell error raises CellExecutionError and fails the test.
    NotebookClient(book, timeout=180, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    drawn = figures(book)
    assert len(drawn) == expected
    for image in drawn:
        assert image.shape[0] > 100 and image.shape[1] > 100
        assert image[..., :3].std() > 0.02  # not a blank canvas


@pytest.mark.parametrize("name", sorted(RUNS))
def test_committed_notebooks_carry_no_outputs(name: str) -> None:
    book = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(book)
    code = [c for c in book.cells if c.cell_type == "code"]
    assert code and all(c.outputs == [] and c.execution_count is None for c in code)
