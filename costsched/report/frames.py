"""The report's tables as frames, built from its rows (`Report.rows`): for the Python API,
notebooks and the HTML file's charts. The text and JSON never need them."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from costsched.report.columns import (
    BUDGET_COLUMNS,
    CLOUD_COLUMNS,
    DAY_COLUMNS,
    EGRESS_COLUMNS,
    JOB_COLUMNS,
)
from costsched.report.estimates import CALIBRATION_COLUMNS, ESTIMATE_COLUMNS
from costsched.report.moves import MOVE_COLUMNS, PRICED
from costsched.report.speeds import SPEED_COLUMNS

COLUMNS = {"jobs": JOB_COLUMNS, "clouds": CLOUD_COLUMNS, "days": DAY_COLUMNS,
           "egress": EGRESS_COLUMNS, "moves": MOVE_COLUMNS, "budgets": BUDGET_COLUMNS,
           "speeds": SPEED_COLUMNS, "estimates": ESTIMATE_COLUMNS,
           "calibration": CALIBRATION_COLUMNS}
TIMES = {"days": ["day"], "egress": ["at"], "moves": ["at"]}
TYPES: dict[str, dict[str, type]] = {
    "jobs": {"job_id": int, "nodes": int, **dict.fromkeys(JOB_COLUMNS[4:], float)},
    "clouds": dict.fromkeys(CLOUD_COLUMNS[1:], float),
    "days": {"job_id": int, **dict.fromkeys(DAY_COLUMNS[4:], float)},
    "egress": {"job_id": int, "gb": float, "usd_per_gb": float, "usd": float},
    "moves": dict.fromkeys(["idle_usd", "egress_usd", "usd", "lost_steps", "lost_work_usd",
                            *PRICED], float),
    "budgets": {"budget_usd": float, "spent_usd": float, "used": float},
}


def table_frame(name: str, rows: Sequence[dict]) -> pd.DataFrame:
    """The report's table `name` (a `report.tables` name) of `rows`, as a frame."""
    frame = pd.DataFrame(list(rows), columns=COLUMNS[name])
    for column in TIMES.get(name, []):
        frame[column] = pd.to_datetime(frame[column], utc=True)
    return frame.astype(TYPES[name]) if name in TYPES and len(frame) else frame
