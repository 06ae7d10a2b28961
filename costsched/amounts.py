"""How money and hours are written, everywhere: the command line, the reports (text and
HTML), the dashboard and every message.

- One amount alone (`usd`): dollars and cents ('$1,234.50'), or two significant digits
  under a cent ('$0.0049') so that a small amount never reads as $0.00.
- Amounts read together (`usd_all`: a sentence that itemises, a row or a table whose
  figures add up): one precision for them all, so that they visibly add up: the decimals
  the smallest of them needs by the rule above, between 2 and MAX_DECIMALS. An amount
  below the last decimal then reads '<$0.0001' ('-<$0.0001' below zero), never '$0.0000'.
- A price per hour (`per_hour`): MAX_DECIMALS decimals ('$0.9180'), as the clouds quote
  spot prices.
- Hours (`hours`, `hours_all`): the same rule as money, without the sign ('0.03',
  '1.04', '1,234.50'; '0.0049' for a few seconds), so that 0.03 h never reads as 0.0.

'-' stands for an amount that does not apply (None, NaN, infinite).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

MAX_DECIMALS = 4  # amounts read together, and prices per hour
SINGLE_DECIMALS = 6  # one amount alone: below a millionth of a dollar it is 0
NOISE = 10 ** -SINGLE_DECIMALS  # a sum's rounding error, no amount
SIGNIFICANT = 2  # digits an amount under a cent keeps


def _known(value: float | None) -> bool:
    return value is not None and isinstance(value, (int, float)) and math.isfinite(value)


def decimals(values: Iterable[float | None], most: int = MAX_DECIMALS) -> int:
    """The decimals that show each of `values` with at least two significant digits under
    a cent (or hour), between 2 and `most`."""
    need = 2
    for value in values:
        if not _known(value) or abs(float(value)) < NOISE:
            continue
        size = float(f"{abs(float(value)):.{SIGNIFICANT}g}")  # as it will read
        if size < 0.01:
            need = max(need, -math.floor(math.log10(size)) + SIGNIFICANT - 1)
    return min(need, most)


def _figure(value: float, places: int, unit: str = "") -> str:
    size = abs(float(value)) if abs(float(value)) >= NOISE else 0.0
    if size and round(size, places) == 0:  # smaller than the last decimal shown
        sign = "-" if value < 0 else ""  # a tiny loss is no saving: '-<$0.0001'
        return f"{sign}<{unit}{10 ** -places:.{places}f}"
    text = f"{size:,.{places}f}"
    sign = "-" if value < 0 and float(text.replace(",", "")) else ""
    return f"{sign}{unit}{text}"


def usd(value: float | None, places: int | None = None) -> str:
    """One amount: '$1,234.50', '$0.0049' (`places`: decimals to use instead)."""
    if not _known(value):
        return "-"
    if places is None:
        places = decimals([value], SINGLE_DECIMALS)
    return _figure(float(value), places, "$")  # type: ignore[arg-type]


def usd_all(*values: float | None) -> list[str]:
    """Amounts read together, at one precision (see the module)."""
    places = decimals(values)
    return [usd(v, places) for v in values]


def per_hour(value: float | None) -> str:
    """A price per hour: '$0.9180' (the '/h' is the caller's)."""
    return usd(value, MAX_DECIMALS)


def hours(value: float | None, places: int | None = None) -> str:
    """Hours: '1.04', '0.03', '0.0049' (the unit is the caller's)."""
    if not _known(value):
        return "-"
    return _figure(float(value), decimals([value]) if places is None else places)  # type: ignore[arg-type]


def hours_all(*values: float | None) -> list[str]:
    """Hours read together, at one precision."""
    places = decimals(values)
    return [hours(v, places) for v in values]
