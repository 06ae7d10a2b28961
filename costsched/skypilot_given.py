"""The names a launch gives a SkyPilot task (`--env`, `--secret`) against the names its file
lists under `envs` and `secrets`.

A name the task has not is added to it, as `sky launch` adds it (`--env KM_DELAY=0.1`).
One that is a likely misspelling of a name of the task (`vocabulary.misspelt`: 'EPOCS' for
'EPOCHS') is refused only where that name is then left without a value, which the launch
would refuse anyway; beside a name that has its value, it is added, with a note naming the
close name (`NOTE_HEADS` starts each note). A name given with the option of the other field
(`--secret` for one of the task's envs, `--env` for one of its secrets), or with both
options, is refused naming the option typed, the file's field and the fix.

Every line is worded so that no word follows a name after ':' or '=' (the one rule for
secrets, `costsched.redact`, would take that word for its value)."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from costsched.launch_secrets import as_secret as steps_to_secret
from costsched.launch_secrets import env_option
from costsched.model import InvalidInput
from costsched.vocabulary import misspelt

NOTE_HEADS = ("--env ", "--secret ")  # how each note on a name given at launch starts


def given_names(source: str, envs: Mapping[str, bool], secrets: Mapping[str, bool],
                given_envs: Collection[str], given_secrets: Collection[str]) -> list[str]:
    """The notes on the names given at launch (`given_envs`, `given_secrets`) that the task
    has not and that are close to one it has; InvalidInput for a name given both ways or
    with the other field's option (`_refuse_crossed`), or misspelling one then left
    without a value. `envs`, `secrets`: the file's names, each with whether the file
    writes its value."""
    _refuse_crossed(source, envs, given_envs, given_secrets)
    if set(given_envs) & set(secrets):
        name = sorted(set(given_envs) & set(secrets))[0]
        raise InvalidInput(f"{source}: --env {name} names a secret of the task: "
                           f"secrets.{name} there; give it with --secret {name} (never "
                           f"stored), or move it from secrets: to envs: in {source} for "
                           "--env to give it (stored with the job)")
    listed = {**{f"envs.{n}": n for n in envs}, **{f"secrets.{n}": n for n in secrets}}
    # Left without a value at launch: the file writes none and no option gives one.
    unvalued = {f"envs.{n}" for n, written in envs.items() if not written
                and n not in given_envs} | {f"secrets.{n}" for n, written in secrets.items()
                                            if not written and n not in given_secrets}
    notes = []
    for option, kind, given, own in (("--env", "an env", given_envs, envs),
                                     ("--secret", "a secret", given_secrets, secrets)):
        for name in sorted(set(given) - set(own)):
            close = [f for meant in misspelt(name, listed.values()) for f in listed
                     if listed[f] == meant]
            left = next((f for f in close if f in unvalued), None)
            if left is not None:
                raise InvalidInput(f"{source}: field {left} is given no value, and {option} "
                                   f"gives {name!r}, which the task has not; did you mean "
                                   f"{listed[left]!r}? ({_gives(left)} gives it)")
            if close:  # (a name close to none is new: added, as `sky launch` adds it)
                notes.append(f"{option} {name} adds {kind} the task has not, beside its "
                             f"{_field(close[0])} {listed[close[0]]}, "
                             + _its_value(close[0], given_envs, given_secrets))
    return notes


def _its_value(field: str, given_envs: Collection[str], given_secrets: Collection[str]
               ) -> str:
    """Where the close name's value comes from, as the same launch gives it: the option
    that gives it too, else the file's value it keeps."""
    kind, _, name = field.partition(".")
    if name in (given_envs if kind == "envs" else given_secrets):
        return f"which {'--env' if kind == 'envs' else '--secret'} {name} gives too"
    return f"which keeps its own value ({_gives(field)} gives that one)"


def _refuse_crossed(source: str, envs: Mapping[str, bool], given_envs: Collection[str],
                    given_secrets: Collection[str]) -> None:
    """InvalidInput for one name given with both options, or with --secret for one of the
    task's `envs` (its value written in the file, stored with the job; or given at launch,
    which the steps to a secret fix)."""
    both = sorted(set(given_envs) & set(given_secrets))
    if both:
        raise InvalidInput(f"{source}: --env {both[0]} and --secret {both[0]} give one "
                           "variable twice: give it with one of the two (a secret is never "
                           "stored, an env is stored with the job)")
    crossed = sorted(set(given_secrets) & set(envs))
    if not crossed:
        return
    name = crossed[0]
    if envs[name]:
        raise InvalidInput(f"{source}: --secret {name} names an env of the task: envs.{name} "
                           "there gives it a value, stored with the job in plain text; "
                           f"remove envs.{name} from {source} for --secret to give it (never "
                           "stored)")
    # (the steps `plan` says for an env named like a secret, where they apply)
    raise InvalidInput(f"{source}: --secret {name} names an env of the task, given at launch "
                       f"with --env (envs.{name}); " + (
                           steps_to_secret([name]) or f"move {name} from envs: to secrets: "
                           "in the task for --secret to give it (never stored)"))


def _field(field: str) -> str:
    """'env' for 'envs.X', 'secret' for 'secrets.X'."""
    return field.split(".", 1)[0].removesuffix("s")


def _gives(field: str) -> str:
    """The option that gives the task's `field` ('envs.EPOCHS': '--env EPOCHS=VALUE')."""
    kind, _, name = field.partition(".")
    return env_option(name) if kind == "envs" else f"--secret {name}"


def refuse_both(source: str, envs: Collection[str], secrets: Collection[str]) -> None:
    """InvalidInput for a name the file lists under both `envs` and `secrets`."""
    both = sorted(set(envs) & set(secrets))
    if both:
        raise InvalidInput(f"{source}: field secrets: {both[0]!r} is also in envs; give "
                           "each name in one of the two")
