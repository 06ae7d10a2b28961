"""The steps a job reported, each with the time its progress file was written: what gives a
checkpoint version its step. The agent publishes a version at its next poll, seconds after
the job wrote its files, and the job has trained on meanwhile; the version's step is the
one the job wrote into its commit marker when it saved (`saved_step`), else the step its
new files are named by (`checkpoint-600/`, `ckpt-000600.npz`) where the job reported that
step just before, else the one it had reported by the time its newest file was written (the
files' modification time and the progress file's are read off one clock, the file
system's). A log among them (`launchers.state_logs.is_log`: `events.csv`, appended to
after a save) gives no step: a version whose only new bytes are a log's keeps the step of
the state it holds. A step read off a report made before the save, not with it, is inferred
(`ProgressReadings.saved_at`): a floor of the step saved, which costsched says as 'about'."""

from __future__ import annotations

import math
import os
import re
import time
from collections import deque
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path

# A report written this soon after the checkpoint's newest file counts as its step: a job
# that checkpoints and then reports the step (as on its stop) writes both at once. Two
# file-system clock ticks (a tick is up to 10 ms). A job whose next step's report may land
# this soon after a save writes the step it saved into its commit marker (`saved_step`).
REPORTED_WITH_NS = 20_000_000
_KEPT = 20_000  # readings kept: minutes of a job that reports every step
_DIGITS = 20  # the longest step a commit marker may hold (more: not a step)
_MARKER_BYTES = 64  # a longer marker holds no step
# A step a save's name gives is its step where it lies between the step the job had
# reported this long before the save's newest file and the one it had reported by then: a
# name's number that is an epoch, a version or a date lies far below, or beyond.
NAMED_WITHIN_NS = 2_000_000_000
_LAST_NUMBER = re.compile(r"(\d{1,20})(?!.*\d)")


def named_step(names: Iterable[str]) -> int | None:
    """The step a save's new files are named by: the last number in the name of each one's
    topmost folder or file under the checkpoint directory that holds one, a file's suffix
    left out (`checkpoint-600/model-00001-of-00002.safetensors`, `output/checkpoint-600/`,
    `ckpt-000600.npz`, `checkpoints/epoch=3-step=600.ckpt`: 600), the largest of them;
    None where no name holds a number."""
    found = []
    for name in names:
        *folders, file = name.split("/")
        for part in [*folders, file.rsplit(".", 1)[0]]:
            if match := _LAST_NUMBER.search(part):
                found.append(int(match[1]))
                break
    return max(found) if found else None


def read_progress(path: Path) -> int | None:
    """The step the job last wrote to its progress file (a whole number >= 0), or None."""
    try:
        text = path.read_text(errors="replace").strip()[:32]
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def saved_step(marker: Path) -> int | None:
    """The step a job wrote into its commit marker when it saved (a whole number >= 0 of
    at most _DIGITS digits, blanks around it allowed, in at most _MARKER_BYTES), or None:
    no marker, an empty one (a touch), or anything else (then the step is read off the
    reports' times)."""
    try:
        with marker.open("rb") as handle:
            raw = handle.read(_MARKER_BYTES + 1)
    except OSError:
        return None
    if len(raw) > _MARKER_BYTES:
        return None
    text = raw.decode("ascii", errors="replace").strip()
    return int(text) if len(text) <= _DIGITS and text.isascii() and text.isdigit() else None


def _reading(path: Path) -> tuple[int, int] | None:
    """(modification time in ns, step) of the progress file, or None. Read, then timed, on
    one open file: a write in between pairs the step with a later time, never an earlier
    one (a step read as reported later than it was: never one that overstates)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        text = os.read(fd, 64).decode(errors="replace").strip()[:32]
        written = os.fstat(fd).st_mtime_ns
    except OSError:
        return None
    finally:
        os.close(fd)
    return (written, int(text)) if text.isdigit() else None


class ProgressReadings:
    """The (time written, step) readings of a job's progress file during one run of it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.readings: deque[tuple[int, int]] = deque(maxlen=_KEPT)
        self._before = -1  # the time of the progress file left by an earlier run (or -1)
        self.start: int | None = 0  # the step the run started from (None: not known)
        self.began: float | None = None  # when the run began (monotonic seconds)

    def begin(self, start: int | None) -> None:
        """A run of the job begins from step `start` (0 with no checkpoint; None: from a
        checkpoint whose step is not known): what its progress file says now is an earlier
        run's."""
        self.readings.clear()
        self.start, self.began = start, time.monotonic()
        first = _reading(self.path)
        self._before = first[0] if first is not None else -1

    def sample(self) -> None:
        """Note the step the progress file says, when it was written again."""
        reading = _reading(self.path)
        if reading is None or reading[0] <= self._before:
            return
        if not self.readings or reading != self.readings[-1]:
            self.readings.append(reading)

    def written_at(self, step: int | None) -> float | None:
        """When the job first wrote `step` (Unix seconds), where it is the newest step read
        in this run; else None. A step is measured with the time it was reported, never
        the later time it is read (which paces the steps before it in less time than they
        took)."""
        first = None
        for written, read in reversed(self.readings):
            if read != step:
                break
            first = written
        return None if first is None else first / 1e9

    def step_at(self, written_ns: int, said: int | None = None,
                named: int | None = None) -> int | None:
        """A checkpoint version's step (`saved_at`'s)."""
        return self.saved_at(written_ns, said, named)[0]

    def saved_at(self, written_ns: int, said: int | None = None,
                 named: int | None = None) -> tuple[int | None, bool]:
        """A checkpoint version's step: `said`, the step the job wrote into its commit
        marker, when it did (`saved_step`); else `named`, the step its new files are named
        by (`named_step`), where it lies between the step the job had reported
        NAMED_WITHIN_NS before the newest file was written at `written_ns` and the one it
        had reported by then (the agent's readings are seconds apart: a step reported just
        before the save may be read by none); else the step it had reported
        by then: its last reading written by then (or just after: REPORTED_WITH_NS, for a
        job that saves, then reports the step it saved); with none (its files were written
        before the run's first report), the step the run started from (`begin`); None
        where the run has reported no step at all (a job that writes none: the step it
        saved is not known, never the step it started from). With it,
        whether that step is inferred: neither the marker's nor its files' names', nor one
        reported with the save (within REPORTED_WITH_NS of its newest file, as a job that
        saves, then reports the step it saved, does) but one reported earlier, read off the
        time its files were written: a floor of the step saved (the job may have trained
        on, unreported, before it saved)."""
        if said is not None:
            return said, False
        written, timed = self._reading_by(written_ns + REPORTED_WITH_NS)
        if named is not None and timed is not None:
            before = self._reported_by(written_ns - NAMED_WITHIN_NS)
            # up to the step it reported next: a job saves `checkpoint-750/` at step 750,
            # then reports 750 (its report by the save said 749)
            after = next((step for written, step in self.readings if written > written_ns),
                         timed)
            if (before or 0) <= named <= max(timed, after):
                return named, False
        if not self.readings:  # the run reported no step: its start says nothing of it
            return None, False
        with_save = written is not None and abs(written - written_ns) <= REPORTED_WITH_NS
        return timed, timed is not None and not with_save

    def _reported_by(self, at_ns: int) -> int | None:
        """The step of the run's last reading written by `at_ns` (the step it started from
        before its first)."""
        return self._reading_by(at_ns)[1]

    def _reading_by(self, at_ns: int) -> tuple[int | None, int | None]:
        """(when, step) of the run's last reading written by `at_ns`; (None, the step it
        started from) before its first."""
        for written, step in reversed(self.readings):
            if written <= at_ns:
                return written, step
        return None, self.start


# A status file's (and a heartbeat's) word that its "checkpoint_step" was read off the time
# the checkpoint was saved (`ProgressReadings.saved_at`): a floor of the step saved.
INFERRED = "checkpoint_step_inferred"


def checkpoint_step(status: dict) -> int | None:
    """A status file's "checkpoint_step": the step of the version published (or restored),
    None where it says none or nothing that is a step."""
    saved = status.get("checkpoint_step")
    return saved if isinstance(saved, int) and not isinstance(saved, bool) and saved >= 0 \
        else None


def checkpoint_version(status: dict) -> int | None:
    """A status file's "checkpoint_version": the version whose step "checkpoint_step" is,
    None where it says none or nothing that is a version."""
    version = status.get("checkpoint_version")
    return version if isinstance(version, int) and not isinstance(version, bool) \
        and version >= 0 else None


def inferred(status: dict) -> bool:
    """Whether a status file's (or a heartbeat's) checkpoint step is inferred (`INFERRED`);
    False where it says no step, or nothing of it (an older agent's)."""
    return status.get("checkpoint_step") is not None and status.get(INFERRED) is True


def step_time(value: object) -> datetime | None:
    """A status file's "step_at" (Unix seconds) as a UTC time; None when not a time."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value <= 0:
        return None
    try:
        return datetime.fromtimestamp(value, timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None
