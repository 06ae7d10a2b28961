"""What a job file says that planning takes as it is but the user should hear of, said by
`plan` as notes of the job (`TaskSpec.notes`): a `throughputs:` figure of a GPU the job
does not ask for (used only to estimate the ones it does), and a budget name that `launch`
refuses (the same words as its refusal).

Pure: a spec (and the configured budgets' names) in, words out.
"""

from __future__ import annotations

from collections.abc import Collection

from costsched.jobspec import JobSpec
from costsched.spec_errors import as_written
from costsched.vocabulary import did_you_mean

REFUSED = "launch will refuse: "


def unknown_budget(name: str | None, known: Collection[str], sky: bool = False) -> str | None:
    """Why a job naming budget `name` is refused when the configuration's named budgets are
    `known` ('field constraints.budget_name 'taem': no budget of that name ...; did you
    mean 'team'?', the field as the file wrote it: `sky`, a SkyPilot task's
    costsched.budget_name); None when it names none or one that exists."""
    if name is None or name in known:
        return None
    names = sorted(known)
    accepted = (f"expected one of {', '.join(names)} (budgets.named)" if names else
                "no budget is configured: add [budgets.named." + name + "] with usd and "
                "period to the configuration (`costsched config show` names its file)")
    field = as_written("constraints.budget_name", sky)
    return (f"field {field} {name!r}: no budget of that name in the configuration: "
            f"{accepted}{did_you_mean(name, names)}")


def throughput_notes(spec: JobSpec) -> list[str]:
    """A note for each GPU model of the spec's `throughputs:` that is not one the job asks
    for (a task's accelerators, a job's constraints.gpu_models) while some it asks for has
    no figure of its own: its figure then only helps estimate those (A10's for A10G),
    which may not be what was meant. None when the job asks for any GPU or every GPU it
    asks for has its figure (another figure is then unused: harmless).

    No 'did you mean': every name here is a GPU costsched knows (the spec refuses any
    other, with its own suggestion), so it is one the user measured, not a slip for a
    GPU the job asks for (T4 is not a misspelt L4)."""
    asked = list(spec.constraints.gpu_models or ())
    given = list(dict.fromkeys(key.split(":")[0] for key in spec.throughputs or {}))
    unmeasured = [g for g in asked if g not in given]
    if not asked or not unmeasured:
        return []
    sky = spec.task.sky
    key = as_written("throughputs", sky)
    whose = (f"the task's accelerators ({', '.join(asked)})" if sky else
             f"the job's GPU models (constraints.gpu_models: {', '.join(asked)})")
    return [f"{key}: {g} is not one of {whose}: its figure only helps estimate them"
            for g in given if g not in asked]
