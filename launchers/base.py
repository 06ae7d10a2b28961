"""The interface every launcher implements. It is defined in the core, which drives
launchers through it (`costsched.migration.launcher`); backends import it from here."""

from costsched.migration.launcher import (
    INSTANCE_STATES,
    LIVE_STATES,
    TAG_ATTEMPT,
    TAG_JOB,
    CapacityError,
    CarryError,
    CloudError,
    Instance,
    Launcher,
    LaunchSpec,
    Purchased,
    QuotaError,
)

__all__ = ["INSTANCE_STATES", "LIVE_STATES", "TAG_ATTEMPT", "TAG_JOB", "CapacityError",
           "CarryError", "CloudError", "Instance", "LaunchSpec", "Launcher", "Purchased",
           "QuotaError"]
