"""Cost reports: what the stored placements and moves cost, as tables of plain rows and as
frames built from them (`data`), and as one self-contained HTML file (`html`).

`Report` and `build` are read from `data` on first use: a command that needs one of the
package's small modules (`status` reads `settled`) does not import the whole report."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from costsched.report.data import Report, build

__all__ = ["Report", "build"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from costsched.report import data

        return getattr(data, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
