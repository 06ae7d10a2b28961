"""An instance type's size as a SkyPilot task asks for it (`resources.cpus`,
`resources.memory`): exactly (else the nearest amount above that the catalog has), at least
('+') or, for memory, at least that many GB per vCPU ('x'). One decision for the task's
reading (its instance types) and for a plan with none, which names the sizes that leave
out an offering of its GPUs.

    sized(types, "vcpus", 8.0, "+")   # (the types with 8 vCPUs or more, None)
    said(8.0, "+")                    # '8+'
"""

from __future__ import annotations

from costsched.lazy import pandas as pd

# The catalog's column of each size, with the task's field and the unit it is said in.
SIZES = {"vcpus": ("cpus", "vCPUs"), "memory_gb": ("memory", "GB")}
HOWS = ("+", "x")  # at least; GB per vCPU ('' exactly)


def sized(types: pd.DataFrame, column: str, size: float,
          how: str) -> tuple[pd.DataFrame, float | None]:
    """(the types of `types` with `size` of `column` as `how` means it, the amount planned
    instead of an exact one no type has: the nearest above, or None)."""
    if how == "x":
        return types[types[column] >= types["vcpus"] * size], None
    if how == "+":
        return types[types[column] >= size], None
    exact = types[types[column] == size]
    above = types[types[column] > size]
    if exact.empty and not above.empty:
        nearest = float(above[column].min())
        return above[above[column] == nearest], nearest
    return exact, None


def said(size: float, how: str) -> str:
    """'8+', '32', '4x': a size as the task writes it."""
    return f"{size:g}{how}"


def read(text: str) -> tuple[float, str] | None:
    """(size, how) of `said`'s words; None for other text."""
    how = text[-1:] if text[-1:] in HOWS else ""
    try:
        return float(text[:len(text) - len(how)]), how
    except ValueError:
        return None
