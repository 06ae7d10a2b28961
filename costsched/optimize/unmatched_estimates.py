"""What a refusal's figures rest on: the mark a plan's table gives a figure computed from an
estimated speed (`ESTIMATED_MARK`), and the words that say which speed and which key of the
job's file gives the measured one.

A figure rests on an estimate when the offering's speed is costsched's estimate (its row's
`throughput_estimated`), or when the job's steps do: work said as hours on a reference GPU
whose speed for the model costsched estimated (`steps_estimated`). Pure: a job and a row in,
words out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from costsched.optimize.job import Workload
from costsched.work import CPU_REFERENCE

ESTIMATED_MARK = "*"  # a speed costsched estimated, and what is computed from it


def steps_estimated(job: Workload) -> bool:
    """Whether the job's steps rest on an estimated speed: work said as hours on a reference
    GPU whose speed for the model costsched estimated. Every hours and cost figure of its
    plan then rests on that estimate, whatever the speed of the offering."""
    work = getattr(job, "work", None)  # a job spec's ResolvedJob says its work
    if (work is None or work.hours is None or work.relative or work.assumed
            or work.reference == CPU_REFERENCE):
        return False
    count, _, gpu = work.reference.partition("x")
    return bool(job.table.get(job.job.model, gpu, int(count)).estimated)


def estimate_said(job: Workload, row: Mapping[str, Any]) -> tuple[str, str]:
    """(mark, words) for a refusal's figures of the offering `row` (a ranked row): ('', '')
    when they rest on given speeds, else the mark and ' (* from an estimated speed on
    1xA100: `throughputs: {A100: STEPS_PER_S}` in job.yaml, ... gives the measured one)',
    to follow the line."""
    return estimates_said([(job, row)])


def estimates_said(placed: Iterable[tuple[Workload, Mapping[str, Any]]]) -> tuple[str, str]:
    """`estimate_said` of a figure that sums several jobs' figures, each job's on its
    offering's row (a collection's placement): marked when any of them rests on an
    estimate, the words naming each estimate and each key once."""
    why, keys, files, tasks, steps_too = [], [], [], False, False
    for job, row in placed:
        speed = bool(row.get("throughput_estimated"))
        steps = steps_estimated(job)
        if not speed and not steps:
            continue
        if speed:
            gpus = f"{int(row.get('gpu_count') or 1)}x{row.get('gpu_model')}"
            why.append(f"an estimated speed on {gpus}")
            keys.append(_key(str(row.get("gpu_model")), int(row.get("gpu_count") or 1)))
        if steps:
            work = job.work  # type: ignore[attr-defined]
            why.append(f"the steps of {work.describe()} at an estimated speed")
            count, _, gpu = work.reference.partition("x")
            keys.append(_key(gpu, int(count)))
        tasks = tasks or bool(getattr(job, "sky", False))
        # Work not given: a speed alone says no work; the steps go beside it.
        steps_too = steps_too or bool(getattr(getattr(job, "work", None), "assumed", False))
        source = str(getattr(job, "source", "") or "")
        files.append(source if source and not source.startswith("<") else "the job's file")
    if not why:
        return "", ""
    # (one estimate or key said once: a sweep's jobs share theirs, and their file)
    why, keys, files = (list(dict.fromkeys(x)) for x in (why, keys, files))
    given = ", ".join(f"{k}: STEPS_PER_S" for k in keys)
    written = (f"`costsched: {{steps: N, throughputs: {{{given}}}}}` in {' or '.join(files)}"
               if steps_too else f"`throughputs: {{{given}}}` in {' or '.join(files)}"
               + (" (under `costsched:`)" if tasks else ""))
    return ESTIMATED_MARK, (
        f" ({ESTIMATED_MARK} from {' and '.join(why)}: {written} gives the measured "
        f"{'figure' if len(keys) == 1 else 'figures'})")


def _key(gpu: str, count: int) -> str:
    """A GPU as the `throughputs:` key names it: 'A100', 'K80:8' (quoted in YAML)."""
    return gpu if count == 1 else f'"{gpu}:{count}"'
