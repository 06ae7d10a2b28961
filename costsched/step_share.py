"""A share of a job's steps as every view writes it: `status`, the dashboard, the report's
'done' column and its 'ended short' verdict. One rule: rounded down, never up to a step
not reached; short of all of them it never reads 100% (past 99% it keeps a decimal:
'99.6%' at 2,492 of 2,500 steps). The JSON documents keep the share itself."""

from __future__ import annotations

import math


def percent_down(share: float) -> str:
    """`share` (of a job's steps) as a percentage rounded down: whole ('14%' at 0.14875),
    or with one decimal past 99% short of all (the last decimal that reads it short of
    100%); '100%' at all of them."""
    if share >= 1:
        return "100%"
    tenths = math.floor(round(share * 1000, 6))  # (0.29 * 1000 is 289.99999999999997)
    if tenths >= 990:
        return f"{tenths // 10}.{tenths % 10}%"
    return f"{max(tenths // 10, 0)}%"
