"""A quota an instance draws on (`Need`), named the same way by every cloud's module; what
each cloud's instances need is in that cloud's module, read through `clouds.quotas`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

GLOBAL = "global"  # the scope of a quota of the whole project or account
UNITS = ("vCPUs", "GPUs")


@dataclass(frozen=True, slots=True)
class Need:
    """One quota an instance draws on, and how much of it (`amount`, in `unit`)."""

    cloud: str
    scope: str  # a region, or GLOBAL
    codes: tuple[str, ...]  # the quota's code; several: the first the account has applies
    unit: str  # vCPUs | GPUs
    amount: float
    name: str = ""  # the quota's name where the mapping knows it (else what was read)

    @property
    def code(self) -> str:
        """The code to name when nothing was read of it."""
        return self.codes[0]

    def applies(self, limits: Mapping[str, float]) -> str | None:
        """Which of `codes` holds, from the limits read (code in lower case: limit): the
        first whose limit is above 0, else the first read at all (in lower case); None
        when none was read. Codes match without case (Azure spells families both ways)."""
        read = [c.lower() for c in self.codes if c.lower() in limits]
        granted = [c for c in read if limits[c] > 0]
        return (granted or read or [None])[0]

    def draws_on(self, code: str) -> bool:
        """Whether `code` is one of this need's (without case)."""
        return code.lower() in {c.lower() for c in self.codes}
