"""One spelling of each name, whatever the user typed: clouds, markets and other fixed
choices match regardless of case and of '-' against '_' ('AWS', 'on-demand'), and a name
that matches nothing is answered with the close ones ("did you mean ...?")."""

from __future__ import annotations

import os
from collections.abc import Iterable
from difflib import SequenceMatcher, get_close_matches


def folded(value: str) -> str:
    """The form names are compared in: lower case, '_' for '-' and spaces."""
    return str(value).strip().lower().replace("-", "_").replace(" ", "_")


def canonical(value: str, accepted: Iterable[str]) -> str | None:
    """The accepted spelling of `value`, or None if it is none of them."""
    return {folded(a): a for a in accepted}.get(folded(value))


def word(name: str) -> str:
    """A fixed choice as users read and type it: 'on-demand' for the stored 'on_demand'
    ('-' where it is stored with '_'; both are accepted, see `folded`)."""
    return str(name).replace("_", "-")


def written(value: object) -> str:
    """A value of a user's file as they wrote it in YAML: true, false and null (not
    Python's True, False and None), text quoted, '3', '[1, 2]'."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return repr(value)


def offering_label(cloud: str, region: str, zone: str | None, instance_type: str,
                   market: str) -> str:
    """An offering as every table and log line writes it: 'aws us-east-1a p3.2xlarge
    on-demand' (its zone, else its region)."""
    return f"{cloud} {zone or region} {instance_type} {word(market)}"


# Words users say for a fixed choice that reads nothing like it ('cheapest' for the
# objective 'cost'): offered where the choice is among those accepted.
SAID_FOR = {
    **dict.fromkeys(("cheap", "cheaper", "cheapest", "price", "lowest_cost", "min_cost",
                     "money", "dollars"), "cost"),
    **dict.fromkeys(("fast", "faster", "fastest", "quick", "quickest", "speed", "makespan",
                     "earliest", "min_time"), "time"),
    **dict.fromkeys(("balanced", "balance", "both", "mixed", "weighted"), "tradeoff"),
    **dict.fromkeys(("value", "efficiency", "per_dollar", "gavel"), "throughput_per_dollar"),
    **dict.fromkeys(("skypilot", "sky_pilot", "sky_task", "sky_yaml"), "sky"),  # plan --emit
}
# Characters typed for digits they look like ('V1OO' for 'V100', 'B2OO' for 'B200').
_LOOK_ALIKE = str.maketrans({"o": "0", "i": "1", "l": "1", "z": "2", "s": "5", "b": "8"})


def did_you_mean(value: str, names: Iterable[str]) -> str:
    """'; did you mean 'x'?' naming the names closest to `value`, or '' if none is close."""
    return meant(closest(value, names))


def meant(close: Iterable[str]) -> str:
    """'; did you mean 'x' or 'y'?' naming `close`, or '' if it names none."""
    close = list(close)
    return "; did you mean " + " or ".join(repr(c) for c in close) + "?" if close else ""


def closest(value: str, names: Iterable[str], cutoff: float | None = None) -> list[str]:
    """The names (up to 3) closest to `value`, closest first; [] when none is close.
    `cutoff`: how alike (0 to 1) names that merely read alike must be (default 0.6, 0.5
    for a name of two characters)."""
    names = list(names)
    key = _letters(value)
    # A name that reads as what was typed once look-alike characters are taken for the
    # digits they resemble ('V1OO'), a name users say it for ('cheapest': 'cost'), a name
    # that holds what was typed ('resnet50' in 'ResNet-50 (batch size 64)'), else the names
    # that read alike.
    shape = key.translate(_LOOK_ALIKE)
    close = [n for n in names if shape and _letters(n).translate(_LOOK_ALIKE) == shape][:3]
    said = SAID_FOR.get(folded(value))
    close = close or [n for n in names if said is not None and folded(n) == said][:1]
    close = close or [n for n in names if key and key in _letters(n)][:3]
    if not close:  # alike in full, or in the name before its parentheses ('Transformer')
        # A two-character name differs by one at most ('T5' for 'T4'): a looser cutoff.
        cutoff = cutoff if cutoff is not None else 0.5 if len(key) <= 2 else 0.6
        by_fold = {folded(n): n for n in names}
        by_base = {_letters(n.split("(")[0]): n for n in reversed(names)}
        close = [by_fold[c] for c in _alike(folded(value), list(by_fold), cutoff)]
        close = close or [by_base[c] for c in _alike(key, list(by_base), cutoff)]
    singular = _singular(value, names)
    if singular is not None:  # a trailing 's' is most likely a plural: the name first
        close = [singular, *(n for n in close if n != singular)][:3]
    return close


def misspelt(value: str, names: Iterable[str]) -> list[str]:
    """Those of `names` (other than `value` itself) that `value` is most likely a misspelling
    of, fewest slips first: the same name in another case or with '-' for '_', or a typing
    slip away (none for a name under 4 characters, two from 8): 'EPOCS' or 'epochs' for
    'EPOCHS', 'WANDB_APIKEY' for 'WANDB_API_KEY'; never 'STEP_SECONDS' for 'STEPS' (a name
    with words of its own is another name, not a slip)."""
    typed = folded(value)
    allowed = 0 if len(typed) < 4 else 1 if len(typed) < 8 else 2
    slips = {n: _slips(typed, folded(n)) for n in names if n != value}
    return sorted((n for n, s in slips.items() if s <= allowed), key=slips.__getitem__)


def _singular(value: str, names: list[str]) -> str | None:
    """The name `value` is the plural of ('L4' for 'L4s', 'A100' for 'a100s'), or None."""
    typed = folded(value)
    if len(typed) < 2 or not typed.endswith("s"):
        return None
    return next((n for n in names if folded(n) == typed[:-1]), None)


def _alike(value: str, names: list[str], cutoff: float) -> list[str]:
    """The 3 of `names` most alike `value`: of those difflib finds as alike, the ones at
    most one typing slip further than the closest, the fewest slips away first
    ('us-east-1' for 'us-esat-1', a swap, before 'us-west-1'), then the most alike,
    then the longest start in common (a slip in a word's first letter is rare:
    'us-east-1' before 'us-west-1' for 'us-est-1')."""
    found = get_close_matches(value, names, n=len(names) or 1, cutoff=cutoff)
    ratio = {n: round(SequenceMatcher(None, value, n).ratio(), 9) for n in found}
    slips = {n: _slips(value, n) for n in found}
    # Only the close ones: a name more than one slip further than the closest is no
    # likely meaning once that one is offered ('running' for 'runing', not 'pending').
    found = [n for n in found if slips[n] <= min(slips.values(), default=0) + 1]
    return sorted(found, key=lambda n: (slips[n], -ratio[n],
                                        -len(os.path.commonprefix([value, n]))))[:3]


def _slips(a: str, b: str) -> int:
    """Typing slips from `a` to `b`: characters added, dropped or changed, or two
    neighbours swapped (each one slip; the optimal string alignment distance)."""
    before, row = None, list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        now = [i]
        for j, y in enumerate(b, 1):
            now.append(min(row[j] + 1, now[j - 1] + 1, row[j - 1] + (x != y)))
            if before is not None and i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                now[j] = min(now[j], before[j - 2] + 1)
        before, row = row, now
    return row[-1]


def _letters(value: str) -> str:
    return "".join(c for c in str(value).lower() if c.isalnum())


def choose(values: Iterable[str], accepted: Iterable[str]) -> tuple[list[str], str | None]:
    """(`values` in their accepted spelling, None), or (..., the error text for the first
    value that is not accepted: "'x': expected one of a, b; did you mean 'a'?")."""
    accepted = tuple(accepted)
    out = []
    for value in values:
        found = canonical(value, accepted)
        if found is None:
            return out, (f"{value!r}: expected one of {', '.join(map(word, accepted))}"
                         f"{did_you_mean(value, [word(a) for a in accepted])}")
        out.append(found)
    return out, None


def prefixed(prefix: str, text: str) -> str:
    """'prefix: text', unless `text` names `prefix` first already ('aws: boto3 is ...' or
    'myclf, 3,000 steps' stays as it is): a message passed up through several hands names
    its subject once."""
    text = str(text)
    if text == prefix or text.startswith((f"{prefix}:", f"{prefix} ", f"{prefix},")):
        return text
    return f"{prefix}: {text}"


def unprefixed(text: str, *prefixes: str) -> str:
    """`text` less every leading 'PREFIX: ' of `prefixes` (repeated, in any order): what a
    message says once the line it goes into names its subject itself ('azure: quotas not
    read: azure: no subscription' under 'azure quotas not read' is 'no subscription')."""
    text = str(text).strip()
    while True:
        for prefix in prefixes:
            if text.startswith(f"{prefix}: "):
                text = text[len(prefix) + 2:].lstrip()
                break
        else:
            return text


# The end of a task's note for an alternative it cannot use, left out of the job when
# others remain (`skypilot_resources`); a plan with none said also names those dropped.
ALTERNATIVE_DROPPED = "alternative dropped"
# The key of an `ordered:` alternative dropped as the task was read, in the job's order
# (`Workload.order`), holding its notes: it keeps its place, and matches no offering.
ORDER_DROPPED = "dropped"

# A restart on error's recovery move (a job restarted from its checkpoint after its own
# failure, `service.jobs.restarts`) has a detail that begins so: not a preemption's.
RESTART_MARK = "restart on error"


def restart_move(kind: str, detail: str | None) -> bool:
    """Whether a move (its `kind` and `detail`) restarts a job after its own error, not a
    recovery after a preemption."""
    return kind == "recovery" and str(detail or "").startswith(RESTART_MARK)


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """'1 new price', '0 new prices', '3 regions': a count and its noun in agreement
    (never 'price(s)'). `plural`: when it is not `singular` + 's'."""
    return f"{count:,} {singular if count == 1 else plural or singular + 's'}"


# A running job whose instance has ended reads, until the next pass over it (`status`, the
# daemon's watcher) records it, what that pass makes of it, never 'running' beside an
# instance that is not: its command exited 0 ('finishing': it succeeds), exited otherwise
# ('failing': it fails), or its instance was lost ('recovering', as the pass that recovers
# it records it at once). The store's states are `costsched.model.JOB_STATES`; the
# states a view shows, these included, `costsched.model.SHOWN_STATES`.
AS_INSTANCE_ENDED = {"succeeded": "finishing", "failed": "failing",
                     "preempted": "recovering", "stopped": "recovering",
                     "terminated": "recovering"}
# A job that exited 0 short of its declared steps (`work.ended_short`) is stored succeeded
# (exit 0 is done, by the job contract) and shown so: its work was not done.
ENDED_SHORT = "ended-short"
SHOWN_ONLY = ("finishing", "failing", ENDED_SHORT)  # shown, never stored


def stored_states(shown: Iterable[str]) -> list[str]:
    """The stored states of the jobs that may be shown in one of the states `shown`: each
    stored one, running for a state a running job whose instance ended reads
    (`AS_INSTANCE_ENDED`), succeeded for ENDED_SHORT."""
    shown = list(shown)
    out = [s for s in shown if s not in SHOWN_ONLY]
    ended = any(s in AS_INSTANCE_ENDED.values() for s in shown)
    out = out + ["running"] if ended and "running" not in out else out
    return out + ["succeeded"] if ENDED_SHORT in shown and "succeeded" not in out else out


def job_state(state: str, instance_state: str | None, short: bool = False) -> str:
    """A job's state as every view shows it beside its instance's (`status`, --json, the
    dashboard): the stored `state`, but for a running job whose instance has ended
    (`AS_INSTANCE_ENDED`) and a succeeded one that ended `short` of its declared steps
    (ENDED_SHORT)."""
    if state == "succeeded" and short:
        return ENDED_SHORT
    if state != "running" or not instance_state:
        return state
    return AS_INSTANCE_ENDED.get(instance_state, state)
