"""What of a job's billed hours was not its training, by the causes costsched knows, each
with its share: the steps its preemptions lost that it trained again (as its recoveries
counted them, `model.steps_lost`, at its measured pace), its setup (where its instances
measured it: the local launcher's agent does, `Instance.setup_seconds`), and the rest,
before its first step and after its last on each instance (a cloud instance's boot, its
restore, the wait until its end was seen; its setup where not measured). A cause costsched
does not know is never named: a preemption whose loss was not counted is said to lie in
that rest, how much not known.

The shares are of its billed hours, rounded down as a job's share done is
(`step_share.percent_down`), and split so that the parts add up to the whole as written
(the largest remainders get the units rounding left over)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from costsched.model import RECOVERY_NOTE, lost_steps_said, steps_lost
from costsched.store.job_rows import EventRow
from costsched.vocabulary import counted

# Where a job's billed hours beyond its training and the causes below go.
REST = "before its first step and after its last"


@dataclass(frozen=True)
class Causes:
    """What costsched knows of a job's hours beyond its training (`causes_of`)."""

    lost_steps: float = 0.0  # the steps its preemptions lost, as counted
    lost_how: str = ""  # '' counted; 'at least ' (a floor); 'about '
    lost_at: int = 0  # the preemptions that lost a counted number of steps
    lost_unknown: int = 0  # those whose loss was not counted
    setup_seconds: float = 0.0  # its setups, where measured
    measured: int = 0  # its instances (placements with step readings) that measured it
    instances: int = 0  # its placements with step readings


def causes_of(notes: Iterable[EventRow], setups: Sequence[float | None]) -> Causes:
    """A job's `Causes` from its RECOVERY_NOTE events (others of `notes` are passed over)
    and the setup seconds of its placements with step readings (`JobStore.setups`; None:
    not measured)."""
    counts = [steps_lost(lost_steps_said(str(e.detail or ""))[1])
              for e in notes if e.kind == RECOVERY_NOTE]
    known = [c for c in counts if c is not None and c[0] > 0]
    hows = {how for _, how in known}
    how = "about " if "about " in hows else "at least " if "at least " in hows else ""
    measured = [s for s in setups if s is not None]
    return Causes(sum(n for n, _ in known), how, len(known),
                  sum(c is None for c in counts), sum(measured), len(measured), len(setups))


def outside_words(billed_hours: float, training_hours: float, seconds_per_step: float,
                  causes: Causes) -> str:
    """'26% of its billed hours outside training: 689 steps lost at a preemption and
    trained again, 20%; its setup, 1%; before its first step and after its last, 5%': the
    share of `billed_hours` beyond `training_hours`, and of it each cause costsched knows
    (`causes`; the steps lost at `seconds_per_step`, never more than that share); '' where
    there is none to speak of (under 1%)."""
    if not (billed_hours > 0 and math.isfinite(training_hours)):
        return ""
    outside = max(billed_hours - training_hours, 0.0) / billed_hours
    if outside < 0.01:
        return ""
    lost = min(causes.lost_steps * seconds_per_step / 3600 / billed_hours, outside) \
        if math.isfinite(seconds_per_step) and seconds_per_step > 0 else 0.0
    setup = min(causes.setup_seconds / 3600 / billed_hours, outside - lost)
    parts = [(_lost_words(causes), lost, causes.lost_how),
             (_setup_words(causes), setup, ""),
             (_rest_words(causes), outside - lost - setup, _rest_how(causes.lost_how))]
    unit, whole = _units(outside)
    shares = split_down(whole, [share * 100 / unit for _, share, _ in parts])
    said = [(words, n, how) for (words, _, how), n in zip(parts, shares, strict=True)
            if words and n > 0]
    head = f"{_percent(whole, unit)} of its billed hours outside training"
    if len(said) == 1 and not said[0][2]:
        return f"{head}: {said[0][0]}"
    return f"{head}: " + "; ".join(f"{words}, {how}{_percent(n, unit)}"
                                   for words, n, how in said)


def split_down(whole: int, exact: Sequence[float]) -> list[int]:
    """`exact` (parts of `whole`, in its units) as whole units that add up to `whole`:
    each rounded down, then the units left over to the largest remainders, first first."""
    down = [max(math.floor(x), 0) for x in exact]
    left = whole - sum(down)
    order = sorted(range(len(exact)), key=lambda i: (-(exact[i] - down[i]), i))
    for i in order[:max(left, 0)]:
        down[i] += 1
    return down


def _units(share: float) -> tuple[float, int]:
    """(the unit `share` is written in, in percent; its whole units rounded down): whole
    percents, tenths past 99% (`step_share.percent_down`'s rule)."""
    tenths = math.floor(round(min(share, 1.0) * 1000, 6))
    return (0.1, tenths) if tenths >= 990 else (1.0, tenths // 10)


def _percent(units: int, unit: float) -> str:
    return f"{units // 10}.{units % 10}%" if unit < 1 else f"{units}%"


def _lost_words(causes: Causes) -> str:
    if not causes.lost_at:
        return ""
    at = "a preemption" if causes.lost_at == 1 else f"{causes.lost_at} preemptions"
    return (f"{causes.lost_how}{counted(round(causes.lost_steps), 'step')} lost at {at} "
            "and trained again")


def _setup_words(causes: Causes) -> str:
    if not causes.measured:
        return ""
    if causes.measured == causes.instances:
        return "its setup"
    return f"its setup, where measured (on {causes.measured} of its {causes.instances} " \
           "instances)"


def _rest_words(causes: Causes) -> str:
    if not causes.lost_unknown:
        return REST
    at = "a preemption" if causes.lost_unknown == 1 else \
        f"{causes.lost_unknown} preemptions"
    return f"{REST}, and the steps lost at {at}, how many not known"


def _rest_how(lost_how: str) -> str:
    """How the rest is known beside steps lost that are a floor ('at most ') or an
    estimate ('about ')."""
    return {"at least ": "at most ", "about ": "about "}.get(lost_how, "")
