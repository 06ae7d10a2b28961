"""What an agent restored when its instance began (`checkpoint_dir.restore`): the version
it brought back, with its step, and the newer versions it skipped and why. Its status file
and its heartbeat beside the checkpoints say it, as "restored":

    {"version": 3, "step": 1025, "inferred": false,
     "skipped": [{"version": 4, "step": 1700, "why": "damaged"}]}

"version" null: nothing was restored (none held, or none that verified); a "step" null:
not known. What a recovery or a start said the job resumes from is corrected from it
(`costsched.service.jobs.restored_said`): the step the job really resumed from."""

from __future__ import annotations

from typing import NamedTuple

DAMAGED = "damaged"  # it did not verify, or a file of it did not fetch intact
IN_PROGRESS = "in progress"  # it held only a save in progress


class Skipped(NamedTuple):
    """A version newer than the one restored, passed over: `why` (DAMAGED, IN_PROGRESS),
    its step where known."""

    version: int
    why: str
    step: int | None = None


class Restored(NamedTuple):
    """The version restored (None: none), its step (None: not known) and whether that step
    was read off the time it was saved; the newer versions skipped, newest first."""

    version: int | None
    skipped: tuple[Skipped, ...] = ()
    step: int | None = None
    inferred: bool = False

    def document(self) -> dict:
        """What the status file and the heartbeat say of it."""
        return {"version": self.version, "step": self.step, "inferred": self.inferred,
                "skipped": [s._asdict() for s in self.skipped]}


def read(doc: object) -> Restored | None:
    """The "restored" of a status file or heartbeat (`Restored.document`); None where it
    says none (an older agent's) or says it wrongly."""
    if not isinstance(doc, dict):
        return None
    skipped = doc.get("skipped")
    if not isinstance(skipped, list):
        return None
    passed = []
    for s in skipped:
        if not isinstance(s, dict) or _count(s.get("version")) is None:
            return None
        passed.append(Skipped(int(s["version"]), str(s.get("why") or DAMAGED),
                              _count(s.get("step"))))
    return Restored(_count(doc.get("version")), tuple(passed), _count(doc.get("step")),
                    doc.get("inferred") is True)


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else None
