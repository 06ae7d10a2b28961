"""Why offerings are left out of a job's ranking, in the words of the job's own file: the
keys it wrote and their values ('183 other market than spot (resources.use_spot)', '7 below
resources.cpus 8+ or resources.memory 32+'), never the price frame's columns that
`rank.allowed_offerings` records them by ('market not allowed').

Pure: a job and reasons in, words out."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from costsched.default_hosts import OTHER_HOST
from costsched.optimize.no_plan_keys import FIELD_OF, SIZES, key, sizes
from costsched.spec_errors import as_written
from costsched.vocabulary import word

if TYPE_CHECKING:
    from costsched.optimize.job import Workload

_NOT_ALLOWED = " not allowed"
# What each filter of the price frame's columns is of, as a user names it.
_NOUNS = {
    "cloud": "cloud",
    "region": "region",
    "zone": "zone",
    "market": "market",
    "gpu_model": "GPU",
    "gpu_count": "GPU count",
    "instance_type": "instance type",
}
_SHOWN = 3  # values named; more are left to the key


def reason_words(job: Workload, reason: str) -> str:
    """`reason` (a value of a ranking's `excluded`) in the job's words; a reason already in
    plain words ('misses deadline', 'over budget') as it is."""
    if reason == "no throughput":
        return "no speed known on its GPU"
    if reason == OTHER_HOST:  # (a task's cpus or memory list the host sizes that fit)
        named = ("resources.instance_type, resources.cpus or resources.memory"
                 if getattr(job, "sky", False) else "constraints.instance_types")
        return f"{reason} ({named} picks one)"
    if reason == "over max_price":
        return f"over {as_written('constraints.max_price', bool(getattr(job, 'sky', False)))}"
    column = reason.removesuffix(_NOT_ALLOWED)
    if column == reason or column not in _NOUNS:
        return reason
    if column == "instance_type":
        sized = _sized(job)
        if sized:
            return sized
    field = FIELD_OF[column]
    values = [word(str(v)) for v in getattr(job.job.constraints, field, ()) or ()]
    than = f" than {_or(values)}" if values and len(values) <= _SHOWN else ""
    written = key(job, field)
    if (
        column == "instance_type"
        and getattr(job, "sky", False)
        and "instance_types" not in getattr(job, "filter_keys", {})
    ):
        written = key(job, "gpu_models")  # the types its GPUs come on
        than = ""
    return f"other {_NOUNS[column]}{than} ({_short(written)})"


def no_speed_words(job: Workload, gpus: list[str]) -> str:
    """Why no speed of the job is known on `gpus` (GPU models costsched has no data sheet
    of: a store or a catalog refresh found them) and what the job can do, in its file's
    words: 'RTX6000: no published figure, no data sheet to estimate one from, and
    `costsched.throughputs` takes no figure for it; `sky launch` runs it' (a task's), or
    '...; allow other GPUs in constraints.gpu_models' (a job file's)."""
    sky = bool(getattr(job, "sky", False))
    it = "it" if len(gpus) == 1 else "them"
    said = (f"{_or(gpus)}: no published figure, no data sheet to estimate one from, and "
            f"`{as_written('throughputs', sky)}` takes no figure for {it}")
    return said + (f"; `sky launch` runs {it}" if sky else
                   f"; allow other GPUs in {_short(key(job, 'gpu_models'))}")


def counted_reasons(job: Workload, reasons: Iterable[str]) -> dict[str, int]:
    """How many offerings each reason leaves out, by its words (most first; reasons worded
    alike are counted together); '' (not left out) is not counted."""
    out: dict[str, int] = {}
    for reason in reasons:
        if reason:
            said = reason_words(job, str(reason))
            out[said] = out.get(said, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def _sized(job: Workload) -> str:
    """'below resources.cpus 8+ or resources.memory 32+': the sizes a SkyPilot task writes
    (which narrow its instance types) where it names no instance type; '' otherwise."""
    keys = getattr(job, "filter_keys", {})
    if "instance_types" in keys:
        return ""
    written = sizes(job)
    if not written:
        return _sized_apart(keys)
    said = [f"{field} {amount:g}{how}" for field, amount, how in written.values()]
    at_least = all(how == "+" for _, _, how in written.values())
    return f"{'below' if at_least else 'outside'} {' or '.join(said)}"


_ENTRY = re.compile(r"^(.*)\.(any_of|ordered)\[\d+\]\.(.+)$")


def _sized_apart(keys: dict[str, str]) -> str:
    """'other instance type (accelerators, cpus or memory in resources.any_of)': the keys
    of a task's alternatives that narrow their instance types, where they write sizes,
    each its own (`sizes` says none of them); '' where they write none."""
    fields: dict[str, None] = {}
    bases: dict[str, None] = {}
    for column in SIZES:
        for written in filter(None, keys.get(column, "").split(" or ")):
            found = _ENTRY.match(written.rpartition(" ")[0] or written)
            if found:
                bases[f"{found[1]}.{found[2]}"] = None
                fields[found[3]] = None
    if not fields or len(bases) != 1:
        return ""
    named = ["accelerators", *fields]
    return (f"other instance type ({', '.join(named[:-1])} or {named[-1]} in "
            f"{next(iter(bases))})")


def _short(written: str) -> str:
    """'accelerators in resources.any_of' for a key each alternative writes alike
    ('resources.any_of[0].accelerators or resources.any_of[1].accelerators'); else as it
    is."""
    parts = [_ENTRY.match(k) for k in written.split(" or ")]
    if len(parts) < 2 or not all(parts):
        return written
    shapes = {(m[1], m[2], m[3]) for m in parts if m}
    if len(shapes) != 1:
        return written
    ((base, kind, field),) = shapes
    return f"{field} in {base}.{kind}"


def _or(values: list[str]) -> str:
    return values[0] if len(values) == 1 else f"{', '.join(values[:-1])} or {values[-1]}"
