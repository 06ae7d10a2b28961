"""What a command says beside its output, built once as one list of lines: each printed on
stderr as 'warning: ...' or 'note: ...' (beside --json too, as every warning is), and the
same lines in its --json document ({"level": "warning", "text": "..."}), so that a script
reads every warning and note a person reads.

`task_file_said` is what `plan` and `launch` say of the task files as read, before anything
runs."""

from __future__ import annotations

import sys
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from costsched.jobspec import JobSpec


@dataclass(frozen=True)
class Said:
    """One line a command says: its `level` ('warning', 'note', 'error', 'throughput')
    is the word it is printed after; `source`: the task file it is said of ('' for none)."""

    level: str
    text: str
    source: str = ""

    def say(self) -> None:
        """The line on stderr, its level first (a warning and an error redacted)."""
        from costsched.cli.common import err_console, say_error, say_warning, user_text

        if self.level == "warning":
            say_warning(self.text)
        elif self.level == "error":
            say_error(self.text)
        else:
            err_console.print(f"{self.level}: {user_text(self.text)}", highlight=False,
                              soft_wrap=True)

    def as_dict(self) -> dict[str, str]:
        """The line in a --json document, masked as it is printed (`costsched.redact`)."""
        from costsched.redact import redact

        return {"level": self.level, "text": redact(self.text)}


def say_all(said: Iterable[Said]) -> None:
    """Each line on stderr, in order."""
    for line in said:
        line.say()


def as_json(said: Iterable[Said]) -> list[dict[str, str]]:
    """The lines as a --json document lists them under "messages"."""
    return [line.as_dict() for line in said]


def noted(line: str | None, source: str = "") -> list[Said]:
    """A line already written 'note: ...' (or None) as the note it says."""
    return [] if not line else [Said("note", line.removeprefix("note: "), source)]


def task_file_said(read: Sequence[tuple[str, JobSpec]], launcher: str,
                   instances: Path | None = None, given: Collection[str] = (),
                   unrunnable: bool = True) -> list[Said]:
    """The warnings and notes said of the task files `read` ((source, spec) pairs), each
    once (a sweep's jobs share their file's): an env's value named like a secret's (stored
    with the job; `given`: the names --env gives, which `launch_given.env_note` says), and
    on the local `launcher` (`instances`: its folder, default $COSTSCHED_INSTANCES or the
    user data directory's) a mount it does not place at its path, a setup that installs
    with pip into costsched's environment, and with `unrunnable` a Docker image or bucket
    mount it cannot run here (`launch` asks its launcher that itself, and refuses); then a
    name given at launch beside a close one of the task's (`skypilot_given`)."""
    from costsched.cli.launch_given import local_mount_warnings, written_env_warnings
    from costsched.skypilot_given import NOTE_HEADS

    files: dict[str, list[tuple[str, JobSpec]]] = {}
    for source, spec in read:
        files.setdefault(source, []).append((source, spec))
    out = [Said("warning", line, source) for source, of_file in files.items()
           for line in written_env_warnings(of_file, given)]
    if launcher == "local":
        from costsched.cli.local_setup import local_setup_notes
        from costsched.cli.plan_launch_needs import unrunnable_lines

        if instances is None:
            from launchers.local_env import default_base_dir

            instances = default_base_dir()
        folder = Path(instances).expanduser()
        out += [Said("warning", line, source) for source, of_file in files.items()
                for line in local_mount_warnings(of_file, folder)]
        out += [s for source, of_file in files.items()
                for line in local_setup_notes(of_file, sys.executable)
                for s in noted(line, source)]
        out += [Said("note", line, source) for source, line in
                (unrunnable_lines(read) if unrunnable else ())]
    out += [Said("note", f"{source}: {note}", source) for source, spec in read
            for note in spec.task.notes if note.startswith(NOTE_HEADS)]
    return list(dict.fromkeys(out))
