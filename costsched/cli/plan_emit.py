"""`costsched plan --emit sky`: each planned job as a SkyPilot task pinned to its best
offering, as YAML documents, with a header that says what the task rests on and what it
leaves out (SkyPilot has no deadline or budget: a note on stderr names them)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from costsched.amounts import given
from costsched.cli import plan_figures as figures
from costsched.cli.common import console, err_console, printable, user_text
from costsched.model import InvalidInput
from costsched.optimize.unmatched_deadline import deadline_said
from costsched.taskfile import read as read_yaml

if TYPE_CHECKING:
    from costsched.jobspec import JobSpec
    from costsched.optimize.planner import JobPlan
    from costsched.service import PlanResult


def emit_sky(read: list[tuple[str, JobSpec]], result: PlanResult, top: int = 10) -> None:
    """Each planned job (`read`: as read from their files) as a SkyPilot task pinned to
    its best offering, as YAML documents on stdout; on stderr, why a job has none, and
    what of each job its task leaves out. Its cost reads as the plan's table of `top`
    rows writes it (`_as_tabled`)."""
    from costsched.skypilot_emit import checkpoint_names_unset, emit_task, secret_like_envs
    from costsched.skypilot_fields import is_bucket

    specs = {spec.name: (source, spec) for source, spec in read}
    docs = []
    said: set[tuple[str, str]] = set()  # a sweep's jobs alike: each note once for the file
    for index, p in enumerate(result.jobs):
        if p.best is None:
            err_console.print(f"[red]no plan:[/red] {user_text(p.reason)}", highlight=False,
                              soft_wrap=True)
            continue
        b = p.best
        steps_estimated = figures.work_estimated(p.job)
        mark = (figures.ESTIMATED_MARK if steps_estimated or bool(b["throughput_estimated"])
                else "")
        note = (f"Pinned by costsched plan to its best offering as of {result.at:%Y-%m-%dT%H:%MZ}"
                f":\n{b['offering']}, expected "
                + figures.times_line(b["expected_hours"], b["usd_per_hour"],
                                     b["expected_cost"], _as_tabled(result, index, top),
                                     mark=mark)
                + (f" ({mark} from an estimated speed: `costsched plan "
                   f"{shlex.quote(printable(p.job.source))}` says which)" if mark else "")
                + ".")
        if p.job.work is not None and p.job.work.assumed:
            note = note.removesuffix(".") + f" for {p.job.work.describe()}."
        # (the task is written as text, never through markup: nothing escaped for it)
        note += "".join(f"\n{printable(o.line())}." for o in p.passed_over)  # order's skipped
        source, spec = specs[p.job.name]
        if any(not Path(w).expanduser().is_absolute() for w in spec.task.as_written.values()):
            note += (f"\nRelative paths as {source} wrote them: from "
                     f"{Path(source).resolve().parent}.")
        written = _as_written(source)
        sky = isinstance(written, dict) and ("resources" in written or "costsched" in written)
        left_out = _left_out(p, spec, own_work=not sky)
        if spec.task.written_secrets:  # never printed: `sky launch` needs them given
            names = sorted(spec.task.written_secrets)
            note += (f"\n{_values(source, 'secret', names)} left out: give "
                     f"{'it' if len(names) == 1 else 'them'} with "
                     + " ".join(f"`--secret {n}`" for n in names) + " to `sky launch`.")
        hidden = secret_like_envs(spec)
        if hidden:
            note += (f"\n{_values(source, 'env', hidden)} left out (named like a "
                     f"secret's): give {'it' if len(hidden) == 1 else 'them'} with "
                     + " ".join(f"`--secret {n}`" for n in hidden) + " to `sky launch`.")
        unset = checkpoint_names_unset(spec)
        if unset and not is_bucket(spec.checkpoint.location):
            key = "costsched.checkpoint.location" if sky else "checkpoint.location"
            names = _and(['$' + n for n in unset])
            note += (f"\nIts {names} {'is' if len(unset) == 1 else 'are'}"
                     " set by costsched, not by SkyPilot: give it under envs: a folder on a "
                     f"bucket mounted with file_mounts ({key}: BUCKET does both), or a "
                     "recovery starts from nothing.")
            _once(said, source, f" reads {names}: preemption recovery under SkyPilot needs "
                  f"a checkpoint bucket; give it with {key} in {user_text(source)}", p.job.name)
        if isinstance(written, dict) and "costsched" in written:
            note += (f"\nIts costsched: section is left out (SkyPilot refuses keys it does "
                     f"not know); costsched reads it from {source}.")
        if left_out:  # in the task too: saved to a file, the note on stderr goes unread
            one = len(left_out) == 1
            keeps = "does not keep to it" if one else "keeps to none of them"
            note += (f"\nIts {_and(left_out)} {'is' if one else 'are'} left out (SkyPilot "
                     f"has no such fields): `sky launch` of this task {keeps}.")
            _once(said, source, f"'s task leaves out its {_and(left_out)}: SkyPilot has no "
                  f"such fields, and `sky launch` of it {keeps}; `costsched launch "
                  f"{shlex.quote(user_text(source))}` keeps to its file's", p.job.name)
        changed: list[str] = []
        docs.append(emit_task(spec, b, note, bucket_source=_sky_bucket, written=written,
                              changed=changed))
        if changed:  # said beside each field in the task too
            _once(said, source, f"'s task: {'; '.join(changed)}", p.job.name)
    console.print("---\n".join(docs), end="", highlight=False, markup=False, soft_wrap=True)


def _once(said: set[tuple[str, str]], source: str, text: str, job: str) -> None:
    """A note on stderr, of the first job of `source` it is true of: 'note: job NAME',
    then `text`."""
    if (source, text) not in said:
        said.add((source, text))
        err_console.print(f"note: job {user_text(job)}{text}", highlight=False,
                          soft_wrap=True)


def _values(source: str, field: str, names: list[str]) -> str:
    """'The value FILE writes for env X is' / 'The values FILE writes for envs X and Y
    are'."""
    if len(names) == 1:
        return f"The value {source} writes for {field} {names[0]} is"
    return f"The values {source} writes for {field}s {_and(names)} are"


def _as_tabled(result: PlanResult, index: int, top: int) -> tuple[str, str]:
    """(hours, cost) of job `index`'s best offering as the plan's table writes them (its
    `top` rows at one precision down each column; for assumed work, no hours and its
    cost per hour of work, which is the cost of the assumed hour)."""
    from costsched.cli.plan_cells import ranking_cells
    from costsched.service.budget_short import with_budget_risk

    p = result.jobs[index]
    shown = with_budget_risk(p.job, result.ranking(index).head(top))
    cells = ranking_cells(shown, p.job.work, figures.estimated_figures(shown, p.job),
                          p.baseline, figures.work_estimated(p.job)).work[0]
    return ("", cells[0]) if len(cells) == 1 else (cells[0], cells[1])


def _left_out(p: JobPlan, spec: JobSpec, own_work: bool = False) -> list[str]:
    """What of the job (as planned: the command line's --deadline and --budget over its
    file's) a SkyPilot task cannot say: 'deadline (48 h)', 'budget ($50.00)', ...; with
    `own_work` (a job of costsched's own format), its work and speeds too."""
    c = p.job.job.constraints
    out = []
    if own_work and p.job.work is not None and not p.job.work.assumed:
        out.append(f"work ({p.job.work.describe()})")
    if own_work and spec.throughputs:
        out.append("throughputs")
    if c.deadline_hours is not None:
        out.append(f"deadline ({deadline_said(c.deadline_hours)})")
    if c.budget_usd is not None:
        out.append(f"budget ({given(c.budget_usd)})")
    if spec.constraints.budget_name:  # a budget of the configuration it joins
        out.append(f"named budget ({spec.constraints.budget_name})")
    return out


def _and(parts: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def _as_written(source: str) -> dict | None:
    """The task file `source` as it was written (parsed YAML), when it holds one task."""
    try:
        docs = read_yaml(Path(source))
    except InvalidInput:  # not a file (a spec given in code)
        return None
    return docs[0] if len(docs) == 1 and isinstance(docs[0], dict) else None


def _sky_bucket(uri: str) -> str:
    """A bucket as SkyPilot reads it: an az:// container as its account's URL."""
    from launchers.checkpoints.azure import instance_uri

    return instance_uri(uri, what="bucket")
