"""Recovery for the jobs a launch or a start just began: a daemon watching their store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from costsched.config import Config
from costsched.store import PriceStore


def arm(store: PriceStore, config: Config, backend: Any, records: Sequence[Any] = (),
        command: str = "launch") -> str | None:
    """Recovery for the jobs just started (`records`) by `command`: a daemon watching the
    store (a supervisor started in the background when none does, unless daemon.autostart
    is off); the line that says so. A supervisor started before is given the values of the
    jobs' secrets (costsched.daemon.handoff); a daemon that cannot be given them recovers
    the jobs with the values of its own environment: said, with how to change that."""
    from costsched import launch_secrets
    from costsched.daemon.autostart import ensure
    from costsched.daemon.handoff import give, given_line
    from costsched.service.glance import secret_names

    arming = ensure(store, config, env=getattr(backend, "environment", dict)())
    line = arming.line()
    named = [r for r in records if secret_names(r.spec)]
    if not line or not named or arming.watcher is None or arming.started:
        return line  # (a supervisor this command started has them in its environment)
    held = give(store, arming.watcher, {r.id: launch_secrets.held_for(r.id) for r in named})
    names = sorted({n for r in named for n in secret_names(r.spec)})
    left = [r for r in named if r.id not in held]
    if left:  # said of the jobs it could not be given theirs
        names = sorted({n for r in left for n in secret_names(r.spec)})
    return line + "\n" + given_line(arming.watcher, names, len(left or named), not left,
                                    command)
