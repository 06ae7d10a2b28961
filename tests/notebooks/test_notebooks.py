"""The analysis notebooks: committed without outputs, and executed against the recorded prices.

Each notebook runs in a fresh kernel of this Python (a kernelspec installed into a temporary
prefix, never the user's home) against a SQLite store of dispa2020; any cell error fails the
test, and every figure must be a PNG that decodes and is not blank.
"""

from __future__ import annotations

import base64
import io
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest
from matplotlib import image

from costsched.store import PriceStore

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
KERNEL = "costsched-tests"
# The environment variables each notebook's parameters cell reads.
PARAMETERS = {
    "price_analysis.ipynb": ["COSTSCHED_NB_DB", "COSTSCHED_NB_START", "COSTSCHED_NB_END"],
    "savings.ipynb": ["COSTSCHED_NB_DB", "COSTSCHED_NB_START", "COSTSCHED_NB_END",
                      "COSTSCHED_NB_MODELS"],
}
MODELS = ["A3C", "CycleGAN"]
# What each notebook's tables must name, given the recorded prices and MODELS.
SHOWN = {
    "price_analysis.ipynb": ["us-east-1d", "eastus", "V100", "K80", "asia-southeast1"],
    "savings.ipynb": [*MODELS, "dynamic-aware", "oracle"],
}


def test_both_notebooks_are_there() -> None:
    assert sorted(p.name for p in NOTEBOOKS) == sorted(PARAMETERS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_without_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code
    for cell in code:
        assert cell.outputs == [], f"{path.name} cell {cell.id} has outputs"
        assert cell.execution_count is None, f"{path.name} cell {cell.id} has a count"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_parameters_come_first(path: Path) -> None:
    first = next(c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
    assert "parameters" in first.metadata.get("tags", [])
    for name in PARAMETERS[path.name]:
        assert name in first.source, f"{path.name}: {name} is not a parameter"


@pytest.fixture(scope="session")
def kernel_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A jupyter data directory holding a kernelspec that runs this interpreter."""
    prefix = tmp_path_factory.mktemp("kernel")
    subprocess.run([sys.executable, "-m", "ipykernel", "install", "--prefix", str(prefix),
                    "--name", KERNEL], check=True, capture_output=True)
    return prefix / "share" / "jupyter"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_executes_with_figures(path: Path, recorded_store: PriceStore, kernel_dir: Path,
                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nbclient import NotebookClient

    # The kernel inherits this environment: the notebook's parameters, and Jupyter and
    # IPython state kept out of the user's home.
    monkeypatch.setenv("COSTSCHED_NB_DB", recorded_store.url)
    monkeypatch.setenv("COSTSCHED_NB_START", "2020-02-24")
    monkeypatch.setenv("COSTSCHED_NB_END", "2020-03-05")
    monkeypatch.setenv("COSTSCHED_NB_MODELS", ",".join(MODELS))
    monkeypatch.setenv("JUPYTER_PATH", str(kernel_dir))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("MPLBACKEND", "Agg")  # the notebooks choose the inline backend
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, kernel_name=KERNEL, timeout=300,
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError on any cell error

    figures = [cell.source.count("plt.show()") for cell in nb.cells if cell.cell_type == "code"]
    images = [out.data["image/png"] for cell in nb.cells if cell.cell_type == "code"
              for out in cell.outputs if "image/png" in out.get("data", {})]
    assert len(images) == sum(figures) > 0
    for data in images:
        pixels = image.imread(io.BytesIO(base64.b64decode(data)), format="png")
        assert pixels.ndim == 3 and min(pixels.shape[:2]) > 100
        assert np.var(pixels) > 0, "a blank figure"
        rgb = pixels[..., :3]
        # Axes and text are grey; data is drawn in colour.
        assert (np.ptp(rgb, axis=-1) > 0.2).any(), "a figure without data"
    outputs = [out for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs]
    printed = "".join(out.get("text", "") for out in outputs if out.output_type == "stream")
    assert recorded_store.url in printed  # it read the store it was pointed at
    tables = "".join(out.get("data", {}).get("text/plain", "") for out in outputs)
    for text in SHOWN[path.name]:
        assert text in tables, f"{path.name} shows no {text!r}"
