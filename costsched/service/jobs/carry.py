"""Where a job's checkpoints are on each cloud, and carrying them there when its next
instance starts on another cloud than its checkpoint store's.

The rule (docs/moves.md): on a cloud, a job's checkpoints are in its store now when that is
the cloud's own storage; else in its store as launched (`home_store`) when that is; else
under the cloud's `launch.checkpoint_roots` entry, ROOT/job-ID-STORE (`job_folder`). A cloud
with none of these cannot read a job whose store is in another cloud's storage (its
instances have no identity there): the deciders leave it out (`unreadable`). A store in a
directory is kept (it is read from this machine); a launcher that runs its instances here
never carries.

Carrying (`carrier`, called by the migration machine before it launches an offering, under
the job's lease) copies the job's code and newest verified checkpoint into the target store
(`launchers.carry`: streamed, verified, once), then records the target as the job's store:
the new instance reads and writes it with its own cloud's identity. The egress of that copy
is the move's, priced by the decision model and charged once per move by the cost meter.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import platformdirs

from costsched import clouds
from costsched.config import effective
from costsched.migration.launcher import CarryError, Launcher
from costsched.model import InvalidInput, Offering
from costsched.passes import memo
from costsched.service.jobs.runs import STEP_LEASE_SECONDS, RunningJob
from costsched.store import PriceStore

if TYPE_CHECKING:
    from costsched.jobspec import ResolvedJob
    from costsched.migration.machine import JobLaunch

RENEW_SECONDS = 60.0  # a long copy renews the job's lease this often
CHECKPOINT_SCOPE = "checkpoint_scope"  # the stored job's key: its store's scope at launch


def job_folder(job_id: int | str, scope: str = "") -> str:
    """The folder of a job's checkpoints under a root: job-ID-STORE, STORE being the scope
    of the store that launched it (`costsched.store.scope`): two stores count jobs from 1,
    and their job 1s must never share a folder (a job would resume from the other's
    checkpoint). Jobs launched before the scope was part of it keep job-ID."""
    return f"job-{job_id}-{scope}" if scope else f"job-{job_id}"


def home_store(location: str | None, job_id: int | str, root: str | None,
               scope: str = "") -> str:
    """A job's checkpoint store as launched: its spec's location, else the launch root (the
    user data directory's by default), with its folder (`job_folder`)."""
    base = location or root or str(Path(platformdirs.user_data_dir("costsched")) / "checkpoints")
    if ":" not in base and not Path(base).expanduser().is_absolute():
        base = str(Path(base).expanduser().resolve())  # the same from any directory later
    return f"{base.rstrip('/')}/{job_folder(job_id, scope)}"


def root_said(root: str | None, job_id: int | str = "ID", scope: str = "STORE") -> str:
    """Where the checkpoints of a job without a location of its own go, as `plan` (before
    the job has an ID) and `launch` say it, with the key that sets it."""
    return (f"{home_store(None, job_id, root, scope)} (launch.checkpoint_root"
            + ("" if root else " is not set: the user data directory's") + ")")


@dataclass(frozen=True)
class JobStores:
    """A job's checkpoint store on each cloud (`on`): from its store now (`current`), its
    store as launched (`home`) and the configured roots; `here`: its launcher runs its
    instances on this machine (every store is read from here)."""

    job_id: int
    current: str
    home: str
    roots: Mapping[str, str]
    here: bool = False
    scope: str = ""  # of the store that launched it (`job_folder`)

    def on(self, cloud: str) -> str | None:
        """Where the job's checkpoints are on `cloud`; None: nowhere its instances can read."""
        where = clouds.storage_cloud(self.current)
        if self.here or where == cloud:
            return self.current
        if clouds.storage_cloud(self.home) == cloud:
            return self.home
        if cloud in self.roots:
            return f"{self.roots[cloud]}/{job_folder(self.job_id, self.scope)}"
        return None if where else self.current

    def unreadable(self, names: Iterable[str] = clouds.NAMES) -> dict[str, str]:
        """The clouds among `names` whose instances could not read the job's checkpoints,
        each with the line that says why."""
        where = clouds.storage_cloud(self.current)
        return {cloud: f"{cloud} is left out: its instances cannot read checkpoints in "
                       f"{where}'s storage; set launch.checkpoint_roots.{cloud} to have them "
                       "carried there" for cloud in names if self.on(cloud) is None}


def roots() -> dict[str, str]:
    """`launch.checkpoint_roots` of the configuration in effect (read once per pass)."""
    return memo(("checkpoint-roots",), lambda: dict(effective().launch.checkpoint_roots),
                shared=True)


def stores_of(run: RunningJob, current: str | None = None) -> JobStores:
    """`run`'s stores, its store now being `current` (default: as its record says, else
    as launched)."""
    from launchers import runs_here

    scope = run.record.spec.get(CHECKPOINT_SCOPE) or ""
    home = home_store(run.resolved.job.checkpoint or None, run.record.id,
                      run.record.spec.get("checkpoint_root"), scope)
    return JobStores(run.record.id, current or run.checkpoint_uri or home, home, roots(),
                     runs_here(run.launcher), scope)


def launch_stores(location: str | None, root: str | None, launcher: str) -> JobStores:
    """The stores of a job about to be launched by `launcher` (before it has an id: the
    clouds they are in are what a launch decides by)."""
    from launchers import runs_here

    home = home_store(location, 0, root)
    return JobStores(0, home, home, roots(), runs_here(launcher))


def readable(resolved: ResolvedJob, stores: JobStores, name: str,
             running_on: str | None = None) -> ResolvedJob:
    """`resolved` kept to the clouds whose instances can read its checkpoints (`stores`;
    the cloud it runs on, `running_on`, is kept whatever it says). InvalidInput naming why
    when none it allows is left."""
    left_out = stores.unreadable()
    left_out.pop(running_on or "", None)
    if not left_out:
        return resolved
    job = resolved.job
    allowed = job.constraints.clouds or clouds.NAMES
    kept = tuple(c for c in allowed if c not in left_out)
    if not kept:
        raise InvalidInput(f"job {name}: no cloud it allows can read its checkpoints "
                           f"({stores.current}): " + "; ".join(left_out[c] for c in allowed))
    return replace(resolved, job=replace(job, constraints=replace(job.constraints,
                                                                  clouds=kept)))


def carrier(store: PriceStore, launcher: Launcher, run: RunningJob
            ) -> Callable[[JobLaunch, Offering], JobLaunch] | None:
    """What the migration machine calls before it launches the job on an offering (None
    for a launcher that runs its instances here): the job as launched there, its
    checkpoints and code carried into that cloud's store first when they are elsewhere.
    CarryError when they cannot be (the same copy that failed is not tried again for the
    next offering of the pass)."""
    from costsched.migration.machine import utcnow  # a move's: `status` loads it not
    from launchers import runs_here

    if runs_here(launcher.name):
        return None
    code = run.record.spec.get("code") or {}
    failed: dict[tuple[str, str], str] = {}

    def carry(job: JobLaunch, offering: Offering) -> JobLaunch:
        current = store.jobs.get(job.job_id).checkpoint_location or job.checkpoint_uri
        target = stores_of(run, current).on(offering.cloud) or current
        if target != current:
            if (current, target) in failed:
                raise CarryError(failed[current, target])
            try:
                done = _copy(store, job.job_id, current, target, code)
            except CarryError as exc:
                failed[current, target] = str(exc)
                raise
            store.jobs.relocate(job.job_id, target, at=utcnow(),
                                detail=f"checkpoints carried to {target} for "
                                       f"{offering.cloud}: {done}")
        if target == job.checkpoint_uri:
            return job
        return replace(job, checkpoint_uri=target, code_uri=_code_uri(target, code))

    return carry


def _copy(store: PriceStore, job_id: int, source: str, target: str, code: dict) -> str:
    """`launchers.carry.carry` under the job's lease, renewed while the copy goes on (a
    lease lost meanwhile stops it: whoever took it carries on)."""
    from costsched.migration.machine import utcnow
    from launchers.carry import carry

    name = f"steps:{job_id}"
    holder = next((lease.holder for lease in store.leases.held(utcnow())
                   if lease.name == name), None)
    renewed = [time.monotonic()]

    def tick(_: int) -> None:
        if holder is None or time.monotonic() - renewed[0] < RENEW_SECONDS:
            return
        if not store.leases.renew(name, holder, STEP_LEASE_SECONDS, utcnow()):
            raise CarryError(f"job {job_id}: its lease was taken while its checkpoint was "
                             "copied; whoever took it carries on")
        renewed[0] = time.monotonic()

    sized = (code["sha256"], int(code["size"])) if code.get("sha256") else None
    return carry(source, target, code=sized, tick=tick)


def _code_uri(checkpoint_uri: str, code: dict) -> str:
    if not code:
        return ""
    from launchers.codepack import archive_uri

    return archive_uri(checkpoint_uri, code["sha256"])
