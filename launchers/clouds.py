"""Every cloud behind one launcher (`--launcher clouds`): a job runs on the cloud of the
offering its decider picks (EC2, Compute Engine or Azure), is recovered on any of them, and
moves between them when the move pays (the decision model prices the checkpoint's egress
from its store's cloud, as the bill charges it).

Each cloud's launcher is made when first needed, with this machine's defaults, and an
instance is handed to the launcher whose handle it has: EC2's REGION/i-... (or
REGION/gang-...), Compute Engine's ZONE/NAME, Azure's LOCATION/RESOURCE_GROUP/NAME. The
clouds' names of regions and zones tell them apart (`costsched.clouds`). `instances` asks
the clouds this process has launched on or asked about (not every region of every cloud):
a launch asked again after a crash is found by the cloud's own launch (the same job and
attempt are the same instance there).

A cloud this machine cannot launch on (no SDK, no credentials: its launcher's
`check_ready`) is left out, not the launch: its offerings are dropped where a launch, a
recovery or a move weighs them, with a line saying which cloud and why, and the job goes to
the best offering of a cloud that is ready. Only a job none of whose offerings is on a
ready cloud is refused, before anything is stored. A cloud is asked when an offering of it
is first weighed (so a job allowed on one cloud never waits on the others), and a cloud
not ready is asked again after READY_RECHECK_SECONDS (a daemon sees a login made since).
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Collection, Mapping, Sequence
from typing import Any, ClassVar

from costsched import clouds as cloud_facts
from costsched.model import InvalidInput, Offering
from launchers.base import CloudError, Instance, Launcher, LaunchSpec

CLOUDS = ("aws", "gcp", "azure")
READY_RECHECK_SECONDS = 600.0
log = logging.getLogger("costsched.clouds")


def owner(instance_id: str) -> str:
    """The cloud whose launcher made the instance `instance_id` (by its handle's shape)."""
    parts = instance_id.split("/")
    first = parts[0]
    if len(parts) == 3 and cloud_facts.get("azure").is_region(first):
        return "azure"
    if len(parts) == 2 and cloud_facts.get("aws").is_region(first):
        return "aws"
    zone = cloud_facts.zone_region(first) if len(parts) == 2 else None
    if zone is not None and zone[0] == "gcp":
        return "gcp"
    raise InvalidInput(f"instance {instance_id!r}: not a handle of an aws (REGION/i-...), "
                       "gcp (ZONE/NAME) or azure (LOCATION/RESOURCE_GROUP/NAME) instance")


class CloudsLauncher(Launcher):
    name = "clouds"
    runs_gangs: ClassVar[bool] = True  # each cloud's launcher runs its gangs

    def __init__(self, backends: Mapping[str, Launcher] | None = None,
                 clouds: Sequence[str] = CLOUDS) -> None:
        """`backends`: the launcher of each cloud (by default each cloud's, made with this
        machine's defaults when first needed); `clouds`: the clouds jobs may run on (those
        of `backends` when given)."""
        self._made: dict[str, Launcher] = dict(backends or {})
        self._used: set[str] = set()  # the clouds launched on or asked about
        self._unready: dict[str, tuple[str, float]] = {}  # cloud -> (why, when found)
        self._ready: set[str] = set()
        self.clouds = tuple(backends) if backends else tuple(clouds)
        unknown = [c for c in self.clouds if c not in CLOUDS]
        if unknown:
            raise InvalidInput(f"cloud {unknown[0]!r}: expected some of {', '.join(CLOUDS)}")

    def backend(self, cloud: str) -> Launcher:
        """The launcher of `cloud` (made now the first time)."""
        if cloud not in self.clouds:
            raise InvalidInput(f"cloud {cloud!r}: this launcher runs jobs on "
                               f"{', '.join(self.clouds)}")
        if cloud not in self._made:
            from launchers import make_launcher

            self._made[cloud] = make_launcher(cloud)
        return self._made[cloud]

    def of(self, instance_id: str) -> Launcher:
        cloud = owner(instance_id)
        self._used.add(cloud)
        return self.backend(cloud)

    def check_ready(self) -> None:
        # Nothing up front: each cloud is asked when an offering of it is weighed
        # (`can_launch`), before a launch stores anything; see the module's docstring.
        return

    def why_not_ready(self, cloud: str) -> str:
        """Why this machine cannot launch on `cloud` now ('' when it can): its launcher's
        `check_ready`. Said in a line when first found, and asked again after
        READY_RECHECK_SECONDS."""
        if cloud in self._ready:
            return ""
        known = self._unready.get(cloud)
        if known is not None and time.monotonic() - known[1] < READY_RECHECK_SECONDS:
            return known[0]
        try:
            self.backend(cloud).check_ready()
        except InvalidInput as exc:
            why = str(exc).removeprefix(f"{cloud}: ")
            self._unready[cloud] = (why, time.monotonic())
            log.warning("%s: not ready, its offerings are left out: %s", cloud, why)
            return why
        self._unready.pop(cloud, None)
        self._ready.add(cloud)
        return ""

    def not_ready(self) -> list[str]:
        return sorted(self._unready)

    def can_launch(self, offering: Offering) -> bool:
        return offering.cloud in self.clouds and not self.why_not_ready(offering.cloud)

    def launch(self, spec: LaunchSpec) -> Instance:
        self._used.add(spec.offering.cloud)
        return self.backend(spec.offering.cloud).launch(spec)

    def status(self, instance_id: str) -> Instance:
        return self.of(instance_id).status(instance_id)

    def statuses(self, instance_ids: Sequence[str]) -> dict[str, Instance]:
        """Each cloud's instances asked together (malformed ids left out)."""
        by_cloud: dict[str, list[str]] = {}
        for instance_id in dict.fromkeys(instance_ids):
            try:
                by_cloud.setdefault(owner(instance_id), []).append(instance_id)
            except InvalidInput:
                continue
        found: dict[str, Instance] = {}
        for cloud, ids in by_cloud.items():
            self._used.add(cloud)
            found.update(self.backend(cloud).statuses(ids))
        return found

    def instances(self, job_id: int | None = None) -> list[Instance]:
        return [i for cloud in sorted(self._used)
                for i in self.backend(cloud).instances(job_id)]

    def tagged(self, places: Collection[tuple[str, str]] = ()) -> list[Instance]:
        """`Launcher.tagged` of each cloud launched on, asked about, or in `places` (those
        this machine can launch on); a cloud whose call fails is said and left out."""
        found: list[Instance] = []
        for cloud in sorted(self._used | {c for c, _ in places if c in self.clouds}):
            if self.why_not_ready(cloud):
                continue
            try:
                found += self.backend(cloud).tagged([p for p in places if p[0] == cloud])
            except CloudError as exc:
                log.warning("%s: instances not swept: %s", cloud, exc)
        return found

    def request_stop(self, instance_id: str) -> None:
        self.of(instance_id).request_stop(instance_id)

    def terminate(self, instance_id: str) -> None:
        self.of(instance_id).terminate(instance_id)

    def recover_agent(self, instance_id: str) -> bool:
        return self.of(instance_id).recover_agent(instance_id)

    def repair_nodes(self, instance_id: str, spec: LaunchSpec) -> str:
        return self.of(instance_id).repair_nodes(instance_id, spec)

    def nodes(self, instance_id: str) -> Any:  # list[launchers.gang.NodeState]
        return self.of(instance_id).nodes(instance_id)  # type: ignore[attr-defined]

    def logs(self, instance_id: str, tail: int = 200, node: int = 0) -> str:
        launcher = self.of(instance_id)
        if "node" in inspect.signature(launcher.logs).parameters:
            return launcher.logs(instance_id, tail=tail, node=node)  # type: ignore[call-arg]
        return launcher.logs(instance_id, tail=tail)
