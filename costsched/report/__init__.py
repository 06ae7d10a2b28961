"""Cost reports: what the stored placements and moves cost, as frames (`data`) and as one
self-contained HTML file (`html`)."""

from costsched.report.data import Report, build

__all__ = ["Report", "build"]
