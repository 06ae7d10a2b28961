"""A job's secrets, given at launch: held by the process that was given them, never stored.

A SkyPilot task names its secrets (`secrets: {HF_TOKEN: }`); their values come with the
launch (`costsched launch --secret HF_TOKEN=...` or `--secret HF_TOKEN` from the caller's
environment) and live only in this process's memory, masked in everything costsched prints
or logs (costsched.redact). The job process receives them as environment variables. A
supervisor this process starts gets them in its environment; one started before gets them
from the launch over a private socket, into its memory (costsched.daemon.handoff). Any
other process that starts one of the job's instances (a recovery, a move, `costsched
start`, a daemon) takes each value from its own environment under the secret's name. It
asks (`missing`) before it changes anything: `start` refuses, saying how to give the value;
a daemon leaves the job waiting, saying so once (`waits_line`); any other process leaves the
job to one that holds the value, and says what its own shell lacks.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from costsched import redact
from costsched.model import InvalidInput
from costsched.vocabulary import did_you_mean
from launchers.log_masking import MIN_MASKED

_GIVEN: dict[int, dict[str, str]] = {}  # job id -> name -> value, this process only
# Who carries jobs on in this thread and how to give it a secret, as the line for one it
# lacks says ("the supervisor"): set by a daemon's passes (`carried_by`); None elsewhere
# (`status`, `migrate`), which leave a job they cannot carry on to a process that can.
# One per thread: a daemon's watch and its scheduled passes run in threads of their own,
# and neither may say another's words (or leave them behind when it ends).
_LACKED_BY: ContextVar[tuple[str, str] | None] = ContextVar("lacked_by", default=None)


class SecretMissing(InvalidInput):
    """A job's instance cannot be started here: this process has no value for `names`."""

    def __init__(self, job: str, names: Sequence[str]) -> None:
        self.job, self.names = job, list(names)
        super().__init__(f"job {job}: secret {names[0]} has no value in this process: set "
                         f"{names[0]} in its environment to start the job's instance")


def check(names: Sequence[str], given: Mapping[str, str], where: str,
          envs: Sequence[str] = ()) -> dict[str, str]:
    """The values of the job's secrets `names` from `given`; InvalidInput for a value given
    for a secret the job does not name, else one line naming every env (`envs`: the task's
    envs still without a value) and secret not given, with the options that give them,
    else naming the first secret given empty."""
    extra = sorted(set(given) - set(names))
    if extra:
        if not names:
            raise InvalidInput(f"{where}: field secrets: {extra[0]!r} is given at launch but "
                               "the task names no secrets: name it under `secrets:` in the "
                               "task, or give its value as an env (--env NAME=VALUE)")
        raise InvalidInput(f"{where}: field secrets: {extra[0]!r} is given at launch but "
                           "the task names no such secret; expected one of "
                           + ", ".join(names) + did_you_mean(extra[0], names))
    missing = [n for n in names if n not in given]
    if missing or envs:
        raise InvalidInput(not_given(where, envs, missing))
    empty = [n for n in names if not given[n]]
    if empty:  # `--secret NAME=` or an unset variable's expansion: never a real secret
        raise InvalidInput(f"{where}: field secrets.{empty[0]} is given empty: give its value "
                           f"(--secret NAME=VALUE), or set {empty[0]} in your environment "
                           f"and give --secret {empty[0]}")
    refuse_short(where, {n: given[n] for n in names}, launching=True)
    redact.remember(given.values())
    return {n: given[n] for n in names}


def check_given(where: str, names: Sequence[str], given: Mapping[str, str | None]) -> None:
    """InvalidInput for a secret given to a command (`--secret`) that `where` ("job NAME")
    does not name (a close name first), given alone but not set here (None), or given
    empty. Worded with no ':' or '=' after a name (a secret's would be masked)."""
    extra = sorted(set(given) - set(names))
    if extra:
        if not names:
            raise InvalidInput(f"{where} has no secrets (its task names none under "
                               f"`secrets:`), so --secret {extra[0]} gives it nothing: give "
                               "the command without --secret")
        raise InvalidInput(f"--secret {extra[0]} is not a secret of {where}; expected one of "
                           f"{', '.join(names)}" + did_you_mean(extra[0], names))
    unset = [f"--secret {n}" for n, v in given.items() if v is None]
    if unset:  # given alone, and not in this process's environment
        raise InvalidInput(not_set(unset))
    refuse_given({n: v for n, v in given.items() if v is not None})


def refuse_given(given: Mapping[str, str], launching: bool = False) -> None:
    """InvalidInput naming the first secret given to a command (`--secret`, by name: its
    value, or its environment's) empty, else the first given a value too short to be
    masked (`refuse_short`): said of the option, where the value came from; `launching`:
    by `launch`, whose --env may give a value that need not be secret."""
    empty = sorted(n for n, v in given.items() if not v)
    if empty:
        raise InvalidInput(f"--secret {empty[0]} is given empty; give its value "
                           "(--secret NAME=VALUE), or set it in your environment")
    short = _short(given)
    if short:
        raise InvalidInput(f"--secret {short} {_SHORT}" + (_OR_ENV if launching else ""))


def refuse_short(where: str, values: Mapping[str, str], launching: bool = False) -> None:
    """InvalidInput for the first of a job's secrets (`values`, by name) shorter than
    MIN_MASKED: the job's output is masked of values from that length only (a shorter one
    would mask ordinary words), so the job's log could show it. `launching`: said by
    `launch`, whose --env may give the value instead (`start` and `migrate` take none)."""
    short = _short(values)
    if short:
        raise InvalidInput(f"{where}: field secrets.{short} {_SHORT}"
                           + (_OR_ENV if launching else ""))


def refuse_short_in_env(where: str, values: Mapping[str, str]) -> None:
    """InvalidInput for the first of a job's secrets (`values`, by name) that this
    process's environment gives a value shorter than MIN_MASKED (`refuse_short`), said of
    the environment it came from (`start` reads a secret there when --secret does not give
    it), never of the job's file."""
    short = _short(values)
    if short:
        raise InvalidInput(f"{where}: secret {short} has a value in your environment shorter "
                           f"than {MIN_MASKED} characters; {_MASKED}: set the real secret in "
                           "your environment, or give it with --secret NAME=VALUE")


_MASKED = (f"a job's output is masked of secrets from {MIN_MASKED} characters (a shorter one "
           "would mask ordinary words), so its log could show this one")
_SHORT = (f"is given a value shorter than {MIN_MASKED} characters; {_MASKED}: give the real "
          "secret")
_OR_ENV = ", or give the value with --env if it need not be secret"


def _short(values: Mapping[str, str]) -> str:
    """The first name of `values` whose value is shorter than MIN_MASKED ('' if none)."""
    return next((n for n, v in values.items() if len(v) < MIN_MASKED), "")


def not_given(where: str, envs: Sequence[str], secrets: Sequence[str]) -> str:
    """One line naming every env and secret a launch was not given, and the options that
    give them all at once: '--env EPOCHS=VALUE --secret HF_TOKEN'."""
    fields = [f"envs.{n}" for n in envs] + [f"secrets.{n}" for n in secrets]
    options = [env_option(n) for n in envs] + [f"--secret {n}" for n in secrets]
    one = len(fields) == 1
    instead = as_secret(envs)
    return (f"{where}: field{'' if one else 's'} {', '.join(fields)} "
            f"{'is' if one else 'are'} not given: give {'it' if one else 'them'} at launch "
            f"with {' '.join(options)} (NAME=VALUE gives a value, NAME alone takes it from "
            "your environment)" + (f"; or {instead}" if instead else ""))


def as_secret(names: Sequence[str]) -> str:
    """What every command says of a task's envs `names` that read like a secret's (the
    one rule of what costsched masks: `redact.is_secret_name`), '' when none does: two
    steps, in the task then at launch ('move HF_TOKEN from envs: to secrets: in the task,
    then pass its value with --secret HF_TOKEN ...'); both are needed, as --secret is
    refused for a name the task lists under envs:."""
    like = [n for n in names if redact.is_secret_name(n)]
    if not like:
        return ""
    one = len(like) == 1
    return (f"move {listed(like)} from envs: to secrets: in the task, then pass "
            f"{'its value' if one else 'their values'} with "
            f"{' '.join(f'--secret {n}' for n in like)} (named like "
            f"{'a secret' if one else 'secrets'}; an env's value is stored with the job, a "
            "secret's never is)")


def launch_hint(envs: Sequence[str], secrets: Sequence[str]) -> str:
    """What a plan says a launch of its task is to be given: 'at launch, give --env EPOCHS,
    --secret HF_TOKEN', an env named like a secret steered to --secret (`as_secret`); ''
    when nothing."""
    plain = [f"--env {n}" for n in envs if not redact.is_secret_name(n)]
    given = ", ".join([*plain, *(f"--secret {n}" for n in secrets)])
    said = [part for part in (f"at launch, give {given}" if given else "", as_secret(envs))
            if part]
    return "; ".join(said)


def env_option(name: str) -> str:
    """How to give the env `name` at launch: '--env EPOCHS=VALUE', or '--env WANDB_KEY' (from
    your environment) for a name a secret goes by, whose '=VALUE' every printed line masks
    (costsched.redact): a hint that read '--env WANDB_KEY=***' would give the value '***'."""
    return f"--env {name}" if redact.is_secret_name(name) else f"--env {name}=VALUE"


def not_set(options: Sequence[str]) -> str:
    """The line for names given alone ('--secret HF_TOKEN') that the caller's environment
    does not set. Worded with no ':' or '=' after a name (a secret's would be masked)."""
    return ("not set in your environment: " + ", ".join(options)
            + f"; give {'it' if len(options) == 1 else 'each'} as NAME=VALUE, or set it "
            "before launching")


def keep(job_id: int, values: Mapping[str, str]) -> None:
    """Hold a launched job's secrets for the instances this process starts for it."""
    if values:
        _GIVEN[job_id] = dict(values)


def held_for(job_id: int) -> dict[str, str]:
    """The values this process holds for the job's secrets, by name (given at launch or
    start here, or handed to this supervisor)."""
    return dict(_GIVEN.get(job_id, {}))


def keep_only(job_ids: Collection[int]) -> None:
    """Drop what this process holds for any job but `job_ids` (those still running)."""
    for job_id in [j for j in list(_GIVEN) if j not in job_ids]:
        _GIVEN.pop(job_id, None)


def values(job_id: int, names: Sequence[str], job: str) -> dict[str, str]:
    """The job's secrets for an instance: as given at launch in this process, else from
    this process's environment; InvalidInput naming the first that neither has."""
    lacking = missing(job_id, names)
    if lacking:
        raise SecretMissing(job, lacking)
    held = _GIVEN.get(job_id, {})
    out = {name: held.get(name, os.environ.get(name, "")) for name in names}
    redact.remember(v for v in out.values() if v)
    return out


def names_of(stored: Mapping) -> list[str]:
    """The names of the secrets of a job as stored (`JobRecord.spec`: names only)."""
    return list(((stored.get("spec") or {}).get("task") or {}).get("secrets", []))


def missing(job_id: int, names: Sequence[str]) -> list[str]:
    """Those of the job's secrets `names` this process has no value for (neither given at
    launch or start here, nor in its environment)."""
    held = _GIVEN.get(job_id, {})
    return [n for n in names if n not in held and n not in os.environ]


def start_refusal(job: str, names: Sequence[str], command: str | None = None) -> str:
    """Why `costsched start` refuses a job whose secrets `names` it has no value for, and
    how to give them (the job is left as it was: stopped, or ended short of its steps).
    `command`: the start as typed, with the options that decide its outcome
    (`start_typed`; None: `costsched start JOB`), repeated as it was. Worded so that no
    word follows a secret's name after '=' or ':' (the one rule for secrets,
    costsched.redact, would mask it)."""
    return (f"job {job} is not started: its {_secrets(names)} "
            f"{'has' if len(names) == 1 else 'have'} no value in this shell; set "
            f"{' and '.join(names)} in your environment and run "
            f"`{command or start_typed(job)}` again (or give each with --secret NAME=VALUE)")


def start_typed(job: str, budget: float | None = None, repack: bool = False) -> str:
    """A `costsched start` as typed, with the options that decide its outcome: 'costsched
    start capped --budget 0.014 --repack' (the budget at every digit it was given with;
    secrets never: their values are not repeated, and `--wait` changes nothing it does)."""
    amount = "" if budget is None else f" --budget {repr(float(budget)).removesuffix('.0')}"
    return f"costsched start {job}{amount}{' --repack' if repack else ''}"


def start_needs(job_id: int, stored: Mapping) -> str:
    """What a hint naming `costsched start` of a job leaves unsaid where this shell lacks
    one of the job's secrets (`stored`: its record's spec; their values are never kept):
    where the start takes them from ('' when this shell has them all, or it has none).
    Worded as `start_refusal` is (no word after a secret's name and ':' or '=')."""
    lacking = missing(job_id, names_of(stored))
    if not lacking:
        return ""
    return (f"a start takes its {_secrets(lacking)} from your shell, which has no value for "
            f"{'it' if len(lacking) == 1 else 'them'}: set {' and '.join(lacking)} first, or "
            "add --secret NAME=VALUE for each to the command")


def listed(names: Sequence[str]) -> str:
    """'A', 'A and B', 'A, B and C'."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _secrets(names: Sequence[str]) -> str:
    return f"secret{'s' if len(names) > 1 else ''} {', '.join(names)}"


def _them(names: Sequence[str]) -> str:
    return "it" if len(names) == 1 else "them"


@contextmanager
def carried_by(who: str, fix: str) -> Iterator[None]:
    """While in the block, this process carries jobs on as `who` ("the supervisor"), and
    `fix` says how to give it a secret it lacks ('{names}' and '{it}' filled in): a job it
    cannot carry on for want of one is said to wait (`waits_line`)."""
    token = _LACKED_BY.set((who, fix))
    try:
        yield
    finally:
        _LACKED_BY.reset(token)


def carrying() -> bool:
    """Whether this thread carries jobs on as a daemon now (`carried_by`)."""
    return _LACKED_BY.get() is not None


# How a process that is no daemon (`status`) says a job waits for a secret its shell lacks
# (never stored): a supervisor started from such a shell would lack it as well.
_SHELL = ("this shell",
          "set {names} in your environment and run `costsched status` again, or "
          "`costsched daemon start` from such a shell")


def waits_line(kind: str, names: Sequence[str], ahead: bool = False) -> str | None:
    """What a job whose `kind` of move (a recovery, a start) waits for (`ahead`: would
    wait for, when it comes), said by a daemon that lacks its secrets `names`, and how to
    give them (`carried_by`), or by another process whose shell lacks them (not `ahead`:
    only a daemon says what would wait; None)."""
    lacked_by = _LACKED_BY.get()
    if lacked_by is None and ahead:
        return None
    where, fix = (f"{lacked_by[0]}'s environment", lacked_by[1]) if lacked_by else _SHELL
    waits = f"a {kind} would wait" if ahead else f"{kind} waits"
    return (f"{waits} for {_secrets(names)} ({where} lacks {_them(names)}): "
            + fix.format(names=" and ".join(names), it=_them(names)))


def held() -> dict[str, str]:
    """Every secret this process holds for its jobs, by name, for a process it starts to
    look after them (the supervisor gets them in its environment, as `values` reads them);
    a name held with two different values is left out (each job's own is then needed)."""
    out: dict[str, str] = {}
    clash: set[str] = set()
    for given in _GIVEN.values():
        for name, value in given.items():
            if out.get(name, value) != value:
                clash.add(name)
            out[name] = value
    return {k: v for k, v in out.items() if k not in clash}
