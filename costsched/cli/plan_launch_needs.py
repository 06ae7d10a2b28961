"""What `plan` says of a task that `launch` would refuse on this machine's launcher, in
the words of the very check `launch` makes (`Launcher.cannot_run`; a checkpoint location
on this machine's disk that cannot be made, `checkpoint_dirs`): the local launcher
runs a task's Docker image only where Docker's daemon answers, and copies a bucket mount
down only where the bucket's client library is installed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def unrunnable_lines(read: Sequence[tuple[str, Any]]) -> list[tuple[str, str]]:
    """(source, note) for each task of `read` with a Docker image or a bucket mount that
    `launch` would refuse on the local launcher on this machine (no Docker, or a daemon
    that does not answer; no client library for the bucket), in the words of the check
    `launch` makes (`Launcher.cannot_run`); asked only of such a task (the caller asks
    only for the local launcher: a cloud's instance runs it)."""
    from costsched.checkpoint_dirs import refused_location
    from launchers import containers
    from launchers.mounts import SDKS, scheme_of

    said = list(dict.fromkeys((source, f"launch needs: {refused}") for source, spec in read
                              if (refused := refused_location(spec, source))))
    tasks = [(source, spec.task.model_dump()) for source, spec in read]
    tasks = [(source, task) for source, task in tasks if containers.image_of(task) or any(
        scheme_of(str(m.get("source", ""))) in SDKS for m in task.get("mounts") or [])]
    if not tasks:
        return said
    from costsched.passes import one_pass
    from launchers import make_launcher

    local = make_launcher("local")  # as `launch` makes it
    with one_pass():  # Docker's daemon asked once, for every task (a sweep's jobs)
        for source, task in tasks:
            refused = local.cannot_run(task)
            line = (source, f"launch needs: {source}: {refused}") if refused else None
            if line and line not in said:  # (a sweep's jobs share their file's)
                said.append(line)
    return said
