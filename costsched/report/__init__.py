"""Cost reports: what the stored placements and moves cost, as tables of plain rows and as
frames built from them (`data`), and as one self-contained HTML file (`html`)."""

from costsched.report.data import Report, build

__all__ = ["Report", "build"]
