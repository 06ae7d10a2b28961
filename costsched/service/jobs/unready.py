"""Why a placement found nothing its launcher can start: the refusal names every cloud the
job's constraints allow that this machine cannot launch on, not only the clouds of the
offerings its decider shortlisted (a deadline decider falls back on its own instance
type's zones: a job allowed on aws and gcp may be shortlisted on aws alone); and why it
does not start one offering (`unlaunched`), said of a task's `ordered:` alternative that
`plan` and `launch` pass over for it."""

from __future__ import annotations

from collections.abc import Callable

from costsched.jobspec import ResolvedJob
from costsched.lazy import pandas as pd
from costsched.migration.launcher import Launcher
from costsched.model import InvalidInput, Offering
from costsched.optimize.rank import allowed_offerings


def nothing_launchable(name: str, launcher: Launcher, offerings: pd.DataFrame | None = None,
                       resolved: ResolvedJob | None = None) -> InvalidInput:
    """The one-line refusal of job `name`, after asking `launcher` about one offering of
    each cloud of `offerings` the job's constraints allow (`resolved`): a cloud not ready
    says so in its own line, once, and is named here."""
    if offerings is not None and resolved is not None and len(offerings):
        kept = offerings[allowed_offerings(offerings, resolved.job.constraints) == ""]
        for _, row in kept.drop_duplicates("cloud").iterrows():
            launcher.can_launch(_offering(row))  # asks the cloud; its answer is kept
    unready = launcher.not_ready()  # each said with why when found
    return InvalidInput(f"job {name}: no offering that {launcher.name} can launch meets its "
                        "constraints now" + (f" (not ready on this machine: "
                                             f"{', '.join(unready)})" if unready else ""))


def unlaunched(launcher: Launcher) -> Callable[[pd.Series], str]:
    """Why `launcher` does not start an offering (a ranked row): 'launch cannot start it:
    the aws launcher does not launch gcp offerings' (', not ready on this machine' where
    its cloud is not); '' when it does."""
    def why(row: pd.Series) -> str:
        if launcher.can_launch(_offering(row)):
            return ""
        unready = ", not ready on this machine" if row["cloud"] in launcher.not_ready() else ""
        return (f"launch cannot start it: the {launcher.name} launcher does not launch "
                f"{row['cloud']} offerings{unready}")

    return why


def _offering(row: pd.Series) -> Offering:
    return Offering(cloud=row["cloud"], region=row["region"], zone=row["zone"] or "",
                    instance_type=row["instance_type"], market=row["market"],
                    gpu_model=row["gpu_model"] or "", gpu_count=int(row["gpu_count"] or 0),
                    os=row.get("os") or "linux")
