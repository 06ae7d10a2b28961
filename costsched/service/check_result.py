"""What `costsched check` says of a cloud (`CloudCheck`, its calls), and the small facts
every cloud's check shares: the extra that installs its SDK, how long one call may take,
whether a module is installed."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from costsched.clouds.base import installed as installed  # (`check`'s, from here)

AWS_EXTRA = "pip install 'costsched[aws]'"
GCP_EXTRA = "pip install 'costsched[gcp]'"
AZURE_EXTRA = "pip install 'costsched[azure]'"


@dataclass
class Call:
    """One authenticated call: what was called, whether it worked, and what it said."""

    name: str
    ok: bool
    detail: str


@dataclass
class CloudCheck:
    cloud: str
    extra_installed: bool
    credentials: list[str] = field(default_factory=list)  # where found, never the values
    calls: list[Call] = field(default_factory=list)
    collect_prices: bool = False
    # Where `collect_prices` rests on what is installed alone, no call having tried it: what
    # was looked for and what was not tried ('': a call tried it, or it is False).
    prices_untried: str = ""
    launch: bool = False
    checkpoints: bool = False
    notes: list[str] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)  # exact lines, in the order to run them
    problem: str | None = None  # what stops this cloud, in one line (None: nothing)
    # Why the account's quotas cannot be read, in one line naming the permission ('':
    # they can, or were not asked): plans then rank its offerings as if they fit.
    quotas: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


def call_seconds() -> float:
    """How long one call may take: config calls.timeout_seconds (its default when the
    configuration cannot be read: `check` is what a user runs first)."""
    from costsched.config import CallsConfig, effective
    from costsched.model import InvalidInput

    try:
        return float(effective().calls.timeout_seconds)
    except InvalidInput:
        return float(CallsConfig().timeout_seconds)
