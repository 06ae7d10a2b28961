"""The line of a "no price" that gets the job's shape priced (`unmatched`): the
`costsched collect` of its clouds, regions and GPUs; where the catalog has no instance
type of the shape on the job's clouds, the `costsched catalog refresh` that finds the
types those clouds sell now first (a collect prices the catalog's types only).

Frames in, words out; the commands are written by `costsched.clouds.hints`, the `pip install`
of a cloud's extra first where its SDK is not installed here, so that the line works as
written.
"""

from __future__ import annotations

from costsched import clouds as known_clouds
from costsched.clouds.hints import catalog_refresh_hint, collect_command
from costsched.lazy import pandas as pd
from costsched.model import Constraints

FETCHES = "fetches today's prices, spot and on-demand"


def collect_line(found: pd.DataFrame, c: Constraints, cpu: bool, elsewhere: bool = False) -> str:
    """The `costsched collect` line that fetches today's prices of the shape, from the
    clouds whose catalog has it (those that price it in another market: at the place
    asked, or `elsewhere`, where it is collected for the job's clouds and regions); ''
    for CPU work, whose prices are the catalog's (collect fetches GPU prices), or where
    none of the job's clouds has it."""
    if cpu:
        return ""
    clouds = sorted(set(found["cloud"].astype(str)) & set(c.clouds or found["cloud"]))
    if not clouds:
        return ""
    regions = c.regions if elsewhere else sorted(set(found["region"].astype(str)))
    # the GPUs of the shape that is priced there (not a set's other GPUs, which it lacks)
    gpus = sorted(set(c.gpu_models) & set(found["gpu_model"].astype(str)))
    return f"`{collect_command(clouds, regions if c.regions else (), gpus)}` {FETCHES}"


def there_line(types: pd.DataFrame, shaped: pd.Series, c: Constraints, cpu: bool) -> str:
    """How to get a price of a shape priced only outside the job's place, in it: `types`,
    the catalog's GPU instance types, `shaped` marking those of the shape. The collect line
    of the job's clouds (those of its regions, where it names no cloud) whose catalog has
    the shape; where none has any type of its GPU models, the catalog refresh of those
    clouds, then the collect; '' for CPU work, and where the catalog has the GPUs there at
    other counts only (what exists instead is said)."""
    if cpu:
        return ""
    asked = list(c.clouds) or sorted({o for r in c.regions
                                      for o in known_clouds.owners_of_region(r)})
    there = types["cloud"].isin(asked) if asked else True
    if (shaped & there).any() or not asked:
        return collect_line(types[shaped & there], c, cpu, elsewhere=True)
    if not c.gpu_models or (types["gpu_model"].isin(list(c.gpu_models)) & there).any():
        return ""
    # (in the words of `costsched gpus` for a GPU model the catalog lacks on a cloud)
    return (f"costsched's catalog has no instance type with {' or '.join(c.gpu_models)} in "
            f"{', '.join(asked)} ({catalog_refresh_hint(asked)} finds new GPU instance types; "
            f"`{collect_command(asked, c.regions, sorted(c.gpu_models), installed=True)}` "
            "then fetches their "
            "prices)")
