"""What `costsched launch` is given for a SkyPilot task's envs and secrets (`--env`,
`--secret`): NAME=VALUE, or NAME alone for the value of NAME in the caller's environment."""

from __future__ import annotations

import os

from costsched.model import InvalidInput


def given(envs: list[str] | None, secrets: list[str] | None) -> tuple[dict[str, str],
                                                                     dict[str, str]]:
    """(envs, secrets) by name; InvalidInput naming a malformed item, else every NAME given
    alone that the environment does not set, in one line."""
    unset: list[str] = []
    out = (_items("--env", envs, unset), _items("--secret", secrets, unset))
    if unset:  # worded with no ':' or '=' after a name (a secret's would be masked)
        raise InvalidInput("not set in your environment: " + ", ".join(unset)
                           + f"; give {'it' if len(unset) == 1 else 'each'} as NAME=VALUE, "
                           "or set it before launching")
    return out


def _items(option: str, items: list[str] | None, unset: list[str]) -> dict[str, str]:
    """NAME=VALUE items of `option`; NAME alone takes the value from the environment (an
    unset NAME is added to `unset`, with its option)."""
    out: dict[str, str] = {}
    for item in items or []:
        name, eq, value = item.partition("=")
        if not name or not name.replace("_", "a").isalnum():
            raise InvalidInput(f"{option} {name!r}: expected NAME=VALUE or NAME (letters, "
                               "digits and _)")
        if not eq:
            if name not in os.environ:
                unset.append(f"{option} {name}")
                continue
            value = os.environ[name]
        out[name] = value
    return out
