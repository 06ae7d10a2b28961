"""Where a plan's checkpoint interval comes from: the job's file (`checkpoint:
{interval_minutes: M}`, in a SkyPilot task `costsched: {checkpoint: {interval_minutes:
M}}`; `auto`: costsched chooses it), or costsched's default when the file sets none. A
preemption loses the work since the last checkpoint, so a spot plan's figures rest on
it: `plan --explain`, the table's notes and `plan --json` say when it is assumed, and the
key that sets it."""

from __future__ import annotations

from dataclasses import dataclass

from costsched.jobspec import JobSpec
from costsched.optimize.checkpoint_interval import AUTO
from costsched.optimize.decision import DEFAULT_CHECKPOINT_HOURS


@dataclass(frozen=True)
class Interval:
    """A job's checkpoint interval as its plan reads it (and whether its file gives the
    checkpoint's size, which a move's egress is priced on)."""

    hours: float
    given: bool  # the job's file sets it (minutes, or auto)
    auto: bool = False  # costsched chose it (`interval_minutes: auto`)
    sky: bool = False  # a SkyPilot task: the key is under `costsched:`
    source: str = ""
    size_given: bool = True  # the job's file sets checkpoint.size_gb

    @property
    def assumed(self) -> bool:
        return not self.given

    def _where(self) -> str:
        return self.source if self.source and not self.source.startswith("<") else ""

    def key(self) -> str:
        """The key of the job's file that sets it, as YAML, with the file."""
        written = ("`costsched: {checkpoint: {interval_minutes: M}}`" if self.sky
                   else "`checkpoint: {interval_minutes: M}`")
        where = self._where()
        return written + (f" in {where}" if where else "")

    def size_key(self) -> str:
        """The key of the job's file that gives the checkpoint's size, as YAML, with the
        file."""
        written = ("`costsched: {checkpoint: {size_gb: G}}`" if self.sky
                   else "`checkpoint: {size_gb: G}`")
        where = self._where()
        return written + (f" in {where}" if where else "")

    def dotted(self) -> str:
        return interval_key(self.sky)

    def said(self, shown: str) -> str:
        """`plan --explain`'s line of tau (`shown`: as the expected hours' line writes it)."""
        head = f"tau {shown} h: the checkpoint interval, "
        where = self._where() or "the job's file"
        if self.assumed:
            return (head + f"costsched's default of {DEFAULT_CHECKPOINT_HOURS * 60:g} min, "
                    f"assumed: nothing in {where} sets it; {self.key()} gives the job's own "
                    f"(`{AUTO}`: costsched chooses it)")
        if self.auto:
            return (head + f"{self.hours * 60:.4g} min, chosen by costsched ({self.dotted()}: "
                    f"{AUTO} in {where}) for the checkpoint's size and the clouds' rates")
        return head + f"{self.hours * 60:.4g} min as {self.dotted()} in {where} gives it"

    def note(self) -> str:
        """The table's note of a spot plan whose interval is assumed ('' when given)."""
        if not self.assumed:
            return ""
        where = self._where() or "the job's file"
        return (f"checkpoint interval assumed: costsched's default of "
                f"{DEFAULT_CHECKPOINT_HOURS * 60:g} min, nothing in {where} sets it; a "
                f"preemption loses the work since the last checkpoint: {self.key()} gives "
                "the job's own")


def interval_key(sky: bool) -> str:
    """The dotted key of a job's checkpoint interval (under `costsched:` in a SkyPilot
    task)."""
    return ("costsched." if sky else "") + "checkpoint.interval_minutes"


def interval_of(spec: JobSpec, hours: float, source: str) -> Interval:
    """The interval of job `spec` (`hours`: as it was resolved) and where it comes from."""
    checkpoint = spec.checkpoint
    return Interval(hours, "interval_minutes" in checkpoint.model_fields_set,
                    checkpoint.interval_minutes == AUTO, spec.task.sky, source,
                    "size_gb" in checkpoint.model_fields_set)
