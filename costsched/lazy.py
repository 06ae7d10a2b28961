"""Heavy libraries loaded on first use. `from costsched.lazy import pandas as pd` binds a
stand-in that imports pandas the first time one of its attributes is read (`pd.DataFrame`),
so that a module can name pandas at its top and still be imported by a command that never
touches a frame: refusing a bad job file, `status`, `gpus` from the bundled prices start
without paying pandas's import (about a third of a second of CPU).

Each attribute read is then kept on the stand-in: later reads cost what a module's do.
Type annotations naming `pd.DataFrame` are strings (`from __future__ import annotations`)
and load nothing."""

from __future__ import annotations

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
