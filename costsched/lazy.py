"""Heavy libraries loaded on first use. `from costsched.lazy import pandas as pd` binds a
stand-in that imports pandas the first time one of its attributes is read (`pd.DataFrame`),
so that a module can name pandas at its top and still be imported by a command that never
touches a frame: refusing a bad job file, `status`, `gpus` from the bundled prices start
without paying pandas's import (about a third of a second of CPU).

Each attribute read is then kept on the stand-in: later reads cost what a module's do.
Type annotations naming `pd.DataFrame` are strings (`from __future__ import annotations`)
and load nothing."""

from __future__ import annotations

import sys
from importlib import import_module
from typing import Any


class LazyModule:
    """The module `name`, imported when one of its attributes is first read."""

    def __init__(self, name: str) -> None:
        self._lazy_name = name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__"):  # copy, pickle, inspect probe these
            raise AttributeError(attr)
        value = getattr(import_module(self._lazy_name), attr)
        setattr(self, attr, value)
        return value

    def __repr__(self) -> str:
        return f"<module {self._lazy_name!r}, loaded on first use>"


pandas = LazyModule("pandas")
numpy = LazyModule("numpy")
scipy_sparse = LazyModule("scipy.sparse")


class ArrowlessPandas:
    """A finder on sys.meta_path: while pandas itself is being imported, pyarrow reads as
    not installed. pandas then keeps its strings in Python objects instead of Arrow
    arrays, and its import does not load pyarrow and pyarrow.compute (about a fifth of
    pandas's import). The frames hold the same values and compare, sort and group alike.
    Once pandas is loaded, pyarrow imports as usual, for the Parquet files read and
    written (pandas converts their strings).

    Installed by the `costsched` command (`costsched.cli`, `arrowless_pandas`), not by
    the Python API: a notebook's pandas stays as the user has it. A process that
    imported pandas or pyarrow before keeps them as they are. (A finder needs only find_spec:
    importlib.abc's base class would cost an import of its own.)"""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "pyarrow" and _loading("pandas"):
            raise ModuleNotFoundError("pyarrow is not used for pandas's strings", name=name)
        return None


def _loading(name: str) -> bool:
    """Whether the module `name` is being imported (its body still running)."""
    module = sys.modules.get(name)
    spec = getattr(module, "__spec__", None)
    return bool(getattr(spec, "_initializing", False))


def arrowless_pandas() -> None:
    """Install `ArrowlessPandas` (once), unless pandas or pyarrow is loaded already."""
    if ("pandas" in sys.modules or "pyarrow" in sys.modules
            or any(isinstance(f, ArrowlessPandas) for f in sys.meta_path)):
        return
    sys.meta_path.insert(0, ArrowlessPandas())
