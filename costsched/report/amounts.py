"""Dollar amounts in words a user reads: cents, or significant digits under a cent."""

from __future__ import annotations

import math

from costsched.lazy import numpy as np

MICRO = 1e-6  # USD: smaller amounts show as $0.00


def usd(value: float | None) -> str:
    """'$1,234.50'; under a cent with two significant digits ('$0.0049') so that a small
    amount never reads as $0.00 (below a millionth of a dollar it does); '-' for an amount
    that does not apply (None or NaN)."""
    if value is None or not math.isfinite(value):
        return "-"
    size = abs(value) if abs(value) >= MICRO else 0.0  # rounding noise is no amount
    sign = "-" if value < 0 and size else ""
    if size == 0 or size >= 0.01:
        return f"{sign}${size:,.2f}"
    digits = np.format_float_positional(size, precision=2, unique=False, fractional=False,
                                        trim="-")
    return f"{sign}${digits}"
