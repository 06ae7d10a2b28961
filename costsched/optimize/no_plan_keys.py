"""The key of a job's file that gets it a plan, as the file writes it: what every "no plan"
ends with ('change constraints.gpu_counts in job.yaml', 'raise costsched.budget in
task.yaml'). A costsched job writes its filters under `constraints:`; a SkyPilot task its
place, GPUs and market under `resources:`, its limits under `costsched:`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TypeVar

from costsched.instance_sizes import SIZES, read
from costsched.optimize.job import Workload
from costsched.spec_errors import as_written

W = TypeVar("W", bound=Workload)

# Where a SkyPilot task writes a filter costsched reads into `Constraints`, when it wrote
# none (a filter it wrote is named as written: the job's `filter_keys`; its own
# `costsched:` keys are `spec_errors.as_written`'s).
TASK_KEYS = {
    "clouds": "resources.infra", "regions": "resources.infra", "zones": "resources.infra",
    "markets": "resources.use_spot", "gpu_models": "resources.accelerators",
    "gpu_counts": "resources.accelerators", "instance_types": "resources.instance_type",
}
# A filter by the column of the price frame it filters.
FIELD_OF = {"cloud": "clouds", "region": "regions", "zone": "zones", "market": "markets",
            "gpu_model": "gpu_models", "gpu_count": "gpu_counts",
            "instance_type": "instance_types"}


def key(job: Workload, field: str) -> str:
    """The key of `field` of the job's `Constraints` ('gpu_counts', 'budget') as its file
    writes it: 'constraints.gpu_counts', or in a SkyPilot task the field it wrote
    ('resources.region', 'resources.any_of[0].region', 'resources.gpus'), else where
    it would write it ('resources.infra'), and 'costsched.budget'."""
    sky = bool(getattr(job, "sky", False))
    if field in SIZES:  # (a task's only: 'resources.cpus 8+' as its keys keep it)
        return getattr(job, "filter_keys", {}).get(field, "").rpartition(" ")[0]
    if sky and field in TASK_KEYS:
        return getattr(job, "filter_keys", {}).get(field) or TASK_KEYS[field]
    return as_written(f"constraints.{field}", sky)


def no_spot(job: Workload) -> str:
    """'resources.use_spot: false in sky2.yaml': the key of the job's file that keeps it
    off spot, as written ('constraints.markets: [on_demand] in job.yaml'); '' where the job
    may run on spot."""
    markets = job.job.constraints.markets
    if not markets or "spot" in markets:
        return ""
    if getattr(job, "sky", False) and "markets" not in getattr(job, "filter_keys", {}):
        # (a task that writes no use_spot: on-demand, as SkyPilot runs it)
        return f"resources.use_spot (not written{in_file(job)}: false, as in SkyPilot)"
    written = key(job, "markets")
    if " or " not in written:  # (alternatives that each say it: named, not quoted)
        written += (": false" if written.endswith("use_spot")
                    else f": [{', '.join(markets)}]")
    return written + in_file(job)


def sizes(job: Workload) -> dict[str, tuple[str, float, str]]:
    """The sizes a SkyPilot task writes (`resources.cpus`, `resources.memory`), which narrow
    its instance types, by the catalog's column: {'vcpus': ('resources.cpus', 8.0, '+')};
    one written differently in its alternatives is left out (said of none)."""
    out = {}
    for column in SIZES:
        field, _, amount = getattr(job, "filter_keys", {}).get(column, "").rpartition(" ")
        size = read(amount) if field and " or " not in field else None
        if size is not None:
            out[column] = (field, *size)
    return out


def in_file(job: Workload) -> str:
    """' in job.yaml': the file the job came from ('' for a job of no file)."""
    source = getattr(job, "source", "")
    return f" in {source}" if source and source != "<spec>" else ""


def change(job: Workload, fields: Sequence[str], verb: str = "change") -> str:
    """'change constraints.regions or constraints.clouds in job.yaml': the keys of
    `fields` (each once, in order), '' for none."""
    keys = list(dict.fromkeys(key(job, f) for f in fields))
    return f"{verb} {' or '.join(keys)}{in_file(job)}" if keys else ""


_ENTRY = re.compile(r"\.(?:any_of|ordered)\[(\d+)\]\.")


def of_alternative(job: W, i: int) -> W:
    """`job` with the keys of its file narrowed to its alternative `i` (from 0): a filter
    its alternatives each write ('resources.ordered[0].use_spot or
    resources.ordered[1].use_spot') named by that alternative's own key alone, one written
    beside them kept; a filter that alternative does not write, by where it would."""
    keys = getattr(job, "filter_keys", None)
    if not keys:
        return job
    narrowed = {}
    for f, written in keys.items():
        own = [k for k in written.split(" or ")
               if (m := _ENTRY.search(k)) is None or int(m.group(1)) == i]
        if own:
            narrowed[f] = " or ".join(own)
    return replace(job, filter_keys=narrowed)  # type: ignore[type-var]
