"""Compute Engine: spot or on-demand GPU instances (guest accelerators on N1, or an
accelerator machine type: a2, a3, g2...), started with a startup script that installs
costsched and runs the job under its agent.

An instance's handle is "ZONE/NAME"; its name is derived from (job, attempt), so inserting
again after a crash finds the same instance instead of making a second one. Preemption is
seen from inside through the metadata `preempted` notice (the agent) and from outside
through the instance's status: a spot instance is deleted when preempted (termination
action DELETE), so a spot instance that is gone and that this launcher did not delete is
reported preempted. `request_stop` sets the metadata flag `costsched-stop`, which a watcher
beside the agent turns into SIGTERM.

A job of N nodes runs as a gang of N instances, known by one handle
"ZONE/gang-<job>-<N>-<digest>" (launchers.gcp_gang, launchers.cloud_gang).

google-cloud-compute is imported only inside this module's methods.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from costsched import catalog
from costsched.clouds import gcp as gcp_cloud
from costsched.clouds import zones_of_region
from costsched.clouds.base import NotSetUp
from costsched.model import InvalidInput, Offering
from launchers import cloud_gang, cloud_secrets, gcp_gang, task_resources, wedged
from launchers.base import (
    TAG_ATTEMPT,
    TAG_JOB,
    CapacityError,
    CloudError,
    Instance,
    Launcher,
    LaunchSpec,
    QuotaError,
)
from launchers.cloud_errors import translate, translated
from launchers.cloud_steps import gce_scripted, with_steps
from launchers.gang import NodeState
from launchers.gcp_secrets import SecretManager
from launchers.userdata import DEFAULT_ROOT, StopFlag, startup_script

DEFAULT_INSTALL = "pip install 'costsched[gcp]'"
META_SPEC = "costsched-spec"  # exact job id, attempt and offering key (labels are lossy)
META_STOP = "costsched-stop"
STOP_FLAG = StopFlag(
    url=f"http://metadata.google.internal/computeMetadata/v1/instance/attributes/{META_STOP}",
    headers={"Metadata-Flavor": "Google"})
SCOPES = [gcp_cloud.CLOUD_PLATFORM]  # the instance's service account's
OPERATION_TIMEOUT = 600.0  # seconds to wait for an insert or a delete
FLEX_START_SECONDS = 7 * 24 * 3600  # a flex-start VM's longest run (maxRunDuration)
FLEX_START_WAIT_SECONDS = int(gcp_cloud.FLEX_START_WAIT_HOURS * 3600)
RESERVATION_KEY = "compute.googleapis.com/reservation-name"
_N1_GPU = re.compile(r"^(?P<machine>[a-z0-9-]+)\+(?P<count>\d+)x(?P<accelerator>[a-z0-9-]+)$")
_NAMESPACE = uuid.UUID("5d0c1f0e-8a47-4c4e-9d1e-6c6f73747363")
log = logging.getLogger("costsched.gcp")


def instance_name(job_id: int, attempt: str) -> str:
    """A Compute Engine name (RFC 1035, 63 characters at most) unique per (job, attempt)."""
    digest = hashlib.sha256(f"costsched:{job_id}:{attempt}".encode()).hexdigest()[:12]
    return f"costsched-{job_id}-{digest}"


def ports_tag(job_id: int) -> str:
    """The network tag (and firewall rule name) that opens a job's ports."""
    return f"costsched-{job_id}-ports"


def label_value(value: str) -> str:
    """A label value: lower case letters, digits, '_' and '-', 63 characters at most."""
    return re.sub(r"[^a-z0-9_-]", "-", value.lower())[:63]


def machine_and_accelerators(instance_type: str) -> tuple[str, str, int]:
    """(machine type, accelerator type or "", count) of a catalog instance type:
    'n1-standard-8+1xnvidia-tesla-v100' -> ('n1-standard-8', 'nvidia-tesla-v100', 1);
    'a2-highgpu-1g' -> ('a2-highgpu-1g', '', 0): its GPUs come with the machine."""
    found = _N1_GPU.match(instance_type)
    if found:
        return found["machine"], found["accelerator"], int(found["count"])
    if instance_type.split("-", 1)[0] in gcp_cloud.ACCELERATOR_MACHINE_FAMILIES:
        return instance_type, "", 0
    known = catalog.lookup("gcp", instance_type)
    if known is not None and int(known["gpu_count"]) == 0:  # a CPU machine type
        return instance_type, "", 0
    raise InvalidInput(f"instance type {instance_type!r}: expected MACHINE+NxACCELERATOR "
                       "(n1-standard-8+1xnvidia-tesla-v100) or an accelerator machine type "
                       f"({', '.join(f + '-...' for f in gcp_cloud.ACCELERATOR_MACHINE_FAMILIES)})")


def _error_codes(exc: Exception) -> list[str]:
    """The codes of an API error's details: compute_v1 Errors of a failed operation (.code)
    or the JSON error items of a failed call ("reason")."""
    codes = []
    for item in getattr(exc, "errors", None) or []:
        if isinstance(item, dict):
            codes.append(str(item.get("code") or item.get("reason") or ""))
        else:
            codes.append(str(getattr(item, "code", "") or getattr(item, "reason", "")))
    return codes


def _capacity_reason(exc: Exception) -> str | None:
    """The provider's reason when `exc` says the offering cannot be had now, else None."""
    message = " ".join(str(getattr(exc, "message", "") or exc).split())
    for code in _error_codes(exc):
        if code in gcp_cloud.CAPACITY_ERROR_CODES:
            return f"{code}: {message}"
    if any(word in message.lower() for word in gcp_cloud.CAPACITY_ERROR_WORDS):
        return message
    return None


def quota_refused(exc: CapacityError, instances: int = 1) -> QuotaError | None:
    """`exc` as the QuotaError it is when Compute Engine's answer is a quota's
    (QUOTA_EXCEEDED; its message names the metric: "Quota 'NVIDIA_V100_GPUS' exceeded"),
    else None."""
    named = gcp_cloud.QUOTA_IN_MESSAGE.search(exc.reason)
    code = exc.reason.split(":", 1)[0].strip()
    if named is None and code not in gcp_cloud.QUOTA_ERROR_CODES:
        return None
    return QuotaError(exc.offering, exc.reason, quota=named["metric"].upper() if named else "",
                      instances=instances)


@translated("gcp")
class GcpLauncher(Launcher):
    name = "gcp"
    runs_gangs: ClassVar[bool] = True  # a multi-node job as N instances (launchers.gcp_gang)

    def __init__(self, project: str | None = None, instances_client: Any = None,
                 image: str = gcp_cloud.GPU_IMAGE, service_account: str | None = None,
                 install: str = DEFAULT_INSTALL,
                 zones: Callable[[Offering], list[str]] | None = None,
                 network: str = "global/networks/default", disk_gb: int = 100,
                 root: str = DEFAULT_ROOT, firewalls_client: Any = None,
                 mount_root: str = "", policies_client: Any = None,
                 gang_placement: str | None = None, secrets: SecretManager | None = None,
                 machine_types_client: Any = None, accelerator_types_client: Any = None
                 ) -> None:
        """`zones` names the zones of a regional offering, in the order they are tried;
        without it, Compute Engine is asked which zones of the region offer its machine
        type and GPUs (`machine_types_client`, `accelerator_types_client`: made when first
        needed). `service_account`: an e-mail, or the project's default.
        `firewalls_client` opens a task's ports (made when first needed); `mount_root`, a
        folder the task's file mounts go under ('' for their own paths).
        `policies_client` makes a gang's compact placement policy (made when first needed);
        `gang_placement`: "auto" (one for a GPU gang whose series takes one) or "off"; by
        default config launch.gang_placement. `secrets`: where the job's secrets travel to
        the instance (launchers.gcp_secrets; by default the project's Secret Manager)."""
        self.credentials: Any = None  # this machine's, when the launcher made its client
        if instances_client is None or project is None:
            self.credentials, project = gcp_cloud.credentials_and_project(project)
            if instances_client is None:
                instances_client = gcp_cloud.instances_client(self.credentials)
        self.project = project
        self.client = instances_client
        self.image = image
        self.service_account = service_account or "default"
        self.install = install
        self.root = root  # the instance's costsched environment and job directories
        self.zones = zones
        self._machine_types = machine_types_client
        self._accelerator_types = accelerator_types_client
        self._offered: dict[tuple[str, str], list[str]] = {}
        self.network = network
        self.disk_gb = disk_gb
        self.firewalls = firewalls_client
        self.mount_root = mount_root
        self._policies = policies_client
        self._placement = (None if gang_placement is None
                           else cloud_gang.check_placement(gang_placement))
        self._deleted: set[str] = set()
        self.secrets = secrets if secrets is not None else SecretManager(project)

    def check_ready(self) -> None:
        # The SDK, credentials and project were found when this was made; a login that
        # expired or was revoked is said here in one line, not by the first insert.
        if self.credentials is not None:
            try:
                gcp_cloud.check_token(self.credentials)
            except NotSetUp as exc:
                raise InvalidInput(str(exc)) from None

    def can_launch(self, offering: Offering) -> bool:
        return offering.cloud == "gcp"

    @property
    def placement(self) -> str:
        """Whether gangs get a compact placement policy: "auto" or "off"."""
        if self._placement is None:
            self._placement = cloud_gang.setting_from_config()
        return self._placement

    def policies(self) -> Any:
        """The ResourcePoliciesClient (made when first needed)."""
        if self._policies is None:
            from google.cloud import compute_v1

            credentials, _ = gcp_cloud.credentials_and_project(self.project)
            self._policies = compute_v1.ResourcePoliciesClient(credentials=credentials)
        return self._policies

    # -- launch ------------------------------------------------------------------------

    def zone(self, spec: LaunchSpec) -> str:
        """The zone `spec` is started in first (`zones_to_try`)."""
        return self.zones_to_try(spec)[0]

    def zones_to_try(self, spec: LaunchSpec) -> list[str]:
        """The zones `spec` may start in, in order: its offering's own; for one priced for
        its whole region, the zones there the job keeps to (those known to offer it
        first), else every zone of the region that offers it."""
        offering = spec.offering
        if offering.zone:
            return [offering.zone]
        known = self.zones(offering) if self.zones is not None else self.offered_in(offering)
        kept = spec.kept_zones(known)
        if kept:
            return kept
        if not known:
            raise InvalidInput(f"gcp region {offering.region}: no zone offers "
                               f"{offering.instance_type} (Compute Engine's machine and "
                               "accelerator types of the region)")
        return list(known)

    def offered_in(self, offering: Offering) -> list[str]:
        """The zones of `offering`'s region whose machine types and accelerator types
        (with enough cards per instance) include its own, as Compute Engine lists them;
        asked once per launcher."""
        key = (offering.region, offering.instance_type)
        if key not in self._offered:
            machine, accelerator, count = machine_and_accelerators(offering.instance_type)
            try:
                zones = set(self._listed_zones("machine_types", machine))
                if accelerator:
                    zones &= set(self._listed_zones("accelerator_types", accelerator, count))
            except Exception as exc:
                raise translate("gcp", f"{offering.region}: list the zones offering "
                                f"{offering.instance_type}", exc) from exc
            self._offered[key] = sorted(zones_of_region(zones, "gcp", offering.region))
        return self._offered[key]

    def _listed_zones(self, kind: str, name: str, cards: int = 0) -> list[str]:
        """The zones where Compute Engine's `kind` ("machine_types" or "accelerator_types")
        has one named `name` (an accelerator type: with at least `cards` per instance)."""
        from google.cloud import compute_v1

        if kind == "machine_types":
            if self._machine_types is None:
                self._machine_types = compute_v1.MachineTypesClient(
                    credentials=self.credentials)
            client, request = self._machine_types, compute_v1.AggregatedListMachineTypesRequest
        else:
            if self._accelerator_types is None:
                self._accelerator_types = compute_v1.AcceleratorTypesClient(
                    credentials=self.credentials)
            client = self._accelerator_types
            request = compute_v1.AggregatedListAcceleratorTypesRequest
        pages = client.aggregated_list(request=request(project=self.project,
                                                       filter=f'name = "{name}"'))
        listed = gcp_cloud.zones_listed(pages, kind).get(name, {})
        return [zone for zone, most in listed.items() if not cards or most >= cards]

    def put_secrets(self, spec: LaunchSpec) -> dict[str, str]:
        """The job's secrets in Secret Manager (launchers.gcp_secrets), read by the
        instance with its service account at boot, never in its metadata; {name: secret}.
        Leftovers of launches that crashed are swept first."""
        if not spec.secret_names:
            return {}
        try:
            self.secrets.sweep(self.instances())
        except Exception as exc:  # noqa: BLE001 - a sweep never fails a launch
            log.warning("gcp: leftover secrets not swept: %s", type(exc).__name__)
        return self.secrets.put(spec)

    def _forget_key(self, key: str) -> None:
        """Delete the secrets of a launch attempt (its `cloud_secrets.key`; idempotent, a
        failure is logged: the next launch's sweep deletes them)."""
        try:
            self.secrets.delete_key(key)
        except Exception as exc:  # noqa: BLE001 - a terminate never fails for it
            log.warning("gcp: secrets not deleted: %s", exc)

    def instance_resource(self, spec: LaunchSpec, zone: str,
                          node: Mapping[str, Any] | None = None, policy: str = "",
                          secret_refs: Mapping[str, str] | None = None) -> Any:
        """The compute_v1.Instance to insert for `spec` in `zone`; `node`: its place in a
        gang (`cloud_gang.node_payload`), `policy` the gang's placement policy ('' none);
        `secret_refs`: where the instance reads the job's secrets (`put_secrets`)."""
        from google.cloud import compute_v1

        offering = spec.offering
        machine, accelerator, count = machine_and_accelerators(offering.instance_type)
        scheduling = compute_v1.Scheduling(on_host_maintenance="TERMINATE")
        if offering.market == "spot":
            scheduling = compute_v1.Scheduling(
                provisioning_model="SPOT", instance_termination_action="DELETE",
                on_host_maintenance="TERMINATE", automatic_restart=False)
        elif offering.market == "flex_start":  # waits for capacity; runs at most 7 days
            scheduling = compute_v1.Scheduling(
                provisioning_model="FLEX_START", instance_termination_action="DELETE",
                on_host_maintenance="TERMINATE", automatic_restart=False,
                max_run_duration=compute_v1.Duration(seconds=FLEX_START_SECONDS))
        params = None
        if offering.market == "flex_start":  # how long the request may wait for capacity
            params = compute_v1.InstanceParams(request_valid_for_duration=compute_v1.Duration(
                seconds=FLEX_START_WAIT_SECONDS))
        affinity = None
        if offering.market == "reservation":  # a reservation the project holds, by name
            if not spec.reservation:
                raise CapacityError(offering, "no reservation to launch into")
            affinity = compute_v1.ReservationAffinity(
                consume_reservation_type="SPECIFIC_RESERVATION", key=RESERVATION_KEY,
                values=[spec.reservation])
        script = startup_script(spec, install=self.install, root=self.root,
                                notice_url=gcp_cloud.PREEMPTION_NOTICE_URL, stop=STOP_FLAG,
                                mount_root=self.mount_root, node=node,
                                secret_refs=secret_refs,
                                secret_api=self.secrets.api if secret_refs else "")
        task = spec.task
        labels = {task_resources.gcp_label(k): task_resources.gcp_label(v)
                  for k, v in task_resources.label_pairs(task).items()}
        ours = {TAG_JOB: str(spec.job_id), TAG_ATTEMPT: label_value(spec.attempt)}
        disk = compute_v1.AttachedDiskInitializeParams(  # labelled: its bill names the job
            source_image=task_resources.image(task, offering.region, "gcp") or self.image,
            disk_size_gb=int(task.get("disk_size") or self.disk_gb), labels=ours)
        if task.get("disk_tier"):
            disk.disk_type = f"zones/{zone}/diskTypes/{task_resources.PD_TIERS[task['disk_tier']]}"
        access = compute_v1.AccessConfig(name="External NAT", type_="ONE_TO_ONE_NAT")
        if task.get("network_tier"):
            access.network_tier = task_resources.GCP_NETWORK_TIERS[task["network_tier"]]
        exact = json.dumps({"job_id": spec.job_id, "attempt": spec.attempt,
                            "offering": list(offering.key)})
        name = instance_name(spec.job_id, spec.attempt)
        if node is not None:
            name = gcp_gang.node_name(spec.job_id, node["digest"], node["rank"])
            labels.update({cloud_gang.TAG_GANG: node["digest"],
                           cloud_gang.TAG_NODE: str(node["rank"]),
                           cloud_gang.TAG_NODES: str(node["nodes"])})
        return compute_v1.Instance(
            name=name,
            resource_policies=[policy] if policy else [],
            machine_type=f"zones/{zone}/machineTypes/{machine}",
            guest_accelerators=[compute_v1.AcceleratorConfig(
                accelerator_count=count,
                accelerator_type=f"zones/{zone}/acceleratorTypes/{accelerator}")]
            if accelerator else [],
            scheduling=scheduling,
            reservation_affinity=affinity,
            params=params,
            labels={**labels, **ours},
            tags=compute_v1.Tags(items=[ports_tag(spec.job_id)]
                                 if task_resources.port_ranges(task) else []),
            metadata=compute_v1.Metadata(items=[
                compute_v1.Items(key="startup-script", value=script),
                compute_v1.Items(key="install-nvidia-driver", value="True"),
                compute_v1.Items(key=META_SPEC, value=exact)]),
            disks=[compute_v1.AttachedDisk(boot=True, auto_delete=True,
                                           initialize_params=disk)],
            network_interfaces=[compute_v1.NetworkInterface(network=self.network,
                                                            access_configs=[access])],
            service_accounts=[compute_v1.ServiceAccount(email=self.service_account,
                                                        scopes=SCOPES)],
        )

    def launch(self, spec: LaunchSpec) -> Instance:
        try:
            return self._launch(spec)
        except CapacityError as exc:  # the project's quota, when the answer says so
            refused = quota_refused(exc, cloud_gang.nodes_of(spec))
            if refused is None:
                raise
            raise refused from None

    def _launch(self, spec: LaunchSpec) -> Instance:
        offering = spec.offering
        if not self.can_launch(offering):
            raise InvalidInput(f"cloud {offering.cloud!r}: the gcp launcher starts gcp "
                               "offerings only")
        if cloud_gang.nodes_of(spec) > 1:
            return gcp_gang.launch(self, spec, _capacity_reason)
        zones = self.zones_to_try(spec)
        refs = self.put_secrets(spec)
        if task_resources.port_ranges(spec.task):
            self._open_ports(spec)
        refused: list[str] = []
        try:
            for zone in zones:
                try:
                    return self._insert(spec, zone, refs, again=bool(refused))
                except CapacityError as exc:  # none in this zone now: the region's next one
                    if quota_refused(exc) is not None:  # the project's, in every zone
                        raise
                    refused.append(f"{zone}: {exc.reason}" if len(zones) > 1 else exc.reason)
        except BaseException:
            self._forget_secrets(spec)
            raise
        self._forget_secrets(spec)
        raise CapacityError(offering, "; ".join(refused))

    def _forget_secrets(self, spec: LaunchSpec) -> None:
        """A launch attempt that started no instance: no instance will read its secrets."""
        if spec.secret_names:
            self._forget_key(cloud_secrets.key(spec.job_id, spec.attempt))

    def _insert(self, spec: LaunchSpec, zone: str, secret_refs: dict[str, str],
                again: bool) -> Instance:
        """The job's instance inserted in `zone` (CapacityError where the zone has none
        now). `again`: another zone of the region refused it first; its request is then
        told apart from that zone's (an insert retried after a crash is the same one)."""
        from google.api_core import exceptions
        from google.cloud import compute_v1

        offering = spec.offering
        resource = self.instance_resource(spec, zone, secret_refs=secret_refs)
        key = f"{spec.job_id}:{spec.attempt}" + (f":{zone}" if again else "")
        request = compute_v1.InsertInstanceRequest(
            project=self.project, zone=zone, instance_resource=resource,
            request_id=str(uuid.uuid5(_NAMESPACE, key)))
        try:
            self.client.insert(request=request).result(timeout=OPERATION_TIMEOUT)
        except exceptions.Conflict:
            pass  # inserted before a crash: the same (job, attempt) names the same instance
        except exceptions.GoogleAPICallError as exc:
            reason = _capacity_reason(exc)
            if reason is not None:
                raise CapacityError(offering, reason) from None
            raise translate("gcp", f"{zone}: insert {offering.instance_type}", exc) from exc
        try:
            return self.status(f"{zone}/{resource.name}")
        except CloudError as exc:  # inserted: what a look after it finds is its instance
            raise exc.after_create() from exc

    def _open_ports(self, spec: LaunchSpec) -> None:
        """A firewall rule of the job's own letting TCP in on the task's ports to its
        instances (their network tag), as SkyPilot opens them; made once per job."""
        from google.api_core import exceptions
        from google.cloud import compute_v1

        if self.firewalls is None:
            credentials, _ = gcp_cloud.credentials_and_project(self.project)
            self.firewalls = compute_v1.FirewallsClient(credentials=credentials)
        ports = [f"{lo}-{hi}" if hi != lo else str(lo)
                 for lo, hi in task_resources.port_ranges(spec.task)]
        rule = compute_v1.Firewall(
            name=ports_tag(spec.job_id), network=self.network, direction="INGRESS",
            allowed=[compute_v1.Allowed(I_p_protocol="tcp", ports=ports)],
            source_ranges=["0.0.0.0/0"], target_tags=[ports_tag(spec.job_id)],
            description=f"costsched job {spec.job_id}: task ports")
        try:
            self.firewalls.insert(project=self.project, firewall_resource=rule).result(
                timeout=OPERATION_TIMEOUT)
        except exceptions.Conflict:
            pass  # made for an earlier instance of the job
        except exceptions.GoogleAPICallError as exc:
            raise translate("gcp", f"open ports {', '.join(ports)}", exc) from exc

    # -- reading -------------------------------------------------------------------------

    @staticmethod
    def _split(instance_id: str, gangs: bool = False) -> tuple[str, str]:
        """(zone, instance name), or with `gangs` (zone, gang name) for a gang."""
        zone, _, name = instance_id.partition("/")
        gang = gangs and cloud_gang.parse(name) is not None
        if not zone or not (name.startswith("costsched-") or gang):
            raise InvalidInput(f"instance {instance_id!r}: expected ZONE/NAME, like "
                               "us-central1-a/costsched-7-0123456789ab"
                               + (", or ZONE/gang-JOB-NODES-DIGEST" if gangs else ""))
        return zone, name

    def _instance(self, zone: str, record: Any) -> Instance:
        items = {i.key: i.value for i in record.metadata.items} if record.metadata else {}
        try:
            exact = json.loads(items.get(META_SPEC, ""))
        except ValueError:
            exact = {}
        job = record.labels.get(TAG_JOB, "")
        job_id = int(exact.get("job_id", job if job.isdigit() else -1))
        key = tuple(exact.get("offering") or ())
        if len(key) != 6:
            machine = record.machine_type.rsplit("/", 1)[-1]
            market = {"SPOT": "spot", "FLEX_START": "flex_start"}.get(
                record.scheduling.provisioning_model, "on_demand")
            key = ("gcp", zone.rsplit("-", 1)[0], zone, machine, market, "linux")
        spot = (record.scheduling.provisioning_model == "SPOT" or
                bool(record.scheduling.preemptible))
        status = record.status
        detail = str(record.status_message or status)
        if status == "RUNNING":
            state = "running"
        elif status in ("PENDING", "PROVISIONING", "STAGING", "REPAIRING"):
            state = "pending"
            if record.scheduling.provisioning_model == "FLEX_START" and status == "PENDING":
                detail = cloud_gang.FLEX_START_WAITING
        elif spot and (status in ("STOPPING", "TERMINATED") or record.last_stop_timestamp):
            state = "preempted"
        else:
            state = "terminated"
        return Instance(id=f"{zone}/{record.name}", job_id=job_id,
                        attempt=str(exact.get("attempt", record.labels.get(TAG_ATTEMPT, ""))),
                        offering_key=key, state=state,  # type: ignore[arg-type]
                        detail=detail, started_at=gcp_gang.started_at(record) if state == "running"
                        else None, created_at=gcp_gang.created_at(record),
                        lost_at=gcp_gang.stopped_at(record) if state == "preempted" else None)

    def status(self, instance_id: str) -> Instance:
        from google.api_core import exceptions

        zone, name = self._split(instance_id, gangs=True)
        if name.startswith("gang-"):
            return gcp_gang.status(self, zone, name)
        try:
            record = self.client.get(project=self.project, zone=zone, instance=name)
        except exceptions.NotFound:
            return self._gone(instance_id)
        return with_steps([self._instance(zone, record)], [gce_scripted(record)])[0]

    def _gone(self, instance_id: str) -> Instance:
        """An instance Compute Engine no longer has: deleted by this launcher, or (spot
        instances are deleted when preempted: termination action DELETE) preempted."""
        zone, name = self._split(instance_id, gangs=True)
        if name.startswith("gang-"):  # none of its nodes is left
            return gcp_gang.gang_instance(self, zone, name, {})
        if instance_id in self._deleted:
            return Instance(id=instance_id, job_id=_job_of(name), attempt="",
                            offering_key=("gcp", "", zone, "", "", "linux"),
                            state="terminated", detail="deleted by costsched")
        return Instance(id=instance_id, job_id=_job_of(name), attempt="",
                        offering_key=("gcp", "", zone, "", "", "linux"),
                        state="preempted", detail="gone: deleted by Compute Engine "
                        "after a preemption, or outside costsched")

    def statuses(self, instance_ids: Sequence[str]) -> dict[str, Instance]:
        """One aggregated list of the project's costsched instances (every zone, paged by
        the client), by label; an asked instance not listed is gone, as in `status`.
        Malformed ids are left out."""
        wanted = []
        for instance_id in dict.fromkeys(instance_ids):
            try:
                self._split(instance_id, gangs=True)
            except InvalidInput:
                continue
            wanted.append(instance_id)
        if not wanted:
            return {}
        listed = {i.id: i for i in self._listed(f"labels.{TAG_JOB}:*", set(wanted))}
        return {i: listed[i] if i in listed else self._gone(i) for i in wanted}

    def instances(self, job_id: int | None = None) -> list[Instance]:
        return self._listed(f'labels.{TAG_JOB}:*' if job_id is None
                            else f'labels.{TAG_JOB} = "{int(job_id)}"')

    def _listed(self, wanted: str, read: set[str] | None = None) -> list[Instance]:
        """The project's instances matching the filter `wanted`, in every zone (the steps
        their heartbeats say read for `read` alone, when given)."""
        from google.cloud import compute_v1

        request = compute_v1.AggregatedListInstancesRequest(project=self.project,
                                                            filter=wanted)
        found = []
        for scope, listed in self.client.aggregated_list(request=request):
            zone = scope.rsplit("/", 1)[-1]
            found.extend((zone, record) for record in listed.instances)
        # a gang's nodes as one; each with the steps its heartbeat says
        return with_steps(gcp_gang.group(self, found), (gce_scripted(r) for _, r in found), read)

    # -- acting --------------------------------------------------------------------------

    def nodes(self, instance_id: str) -> list[NodeState]:
        """The nodes of a gang, rank 0 first (`launchers.gang.ReportsNodes`); a job of one
        instance is its only node."""
        zone, name = self._split(instance_id, gangs=True)
        if name.startswith("gang-"):
            return gcp_gang.nodes(self, zone, name)
        seen = self.status(instance_id)
        return [NodeState(0, seen.id, seen.state, seen.detail)]

    def repair_nodes(self, instance_id: str, spec: LaunchSpec) -> str:
        """`Launcher.repair_nodes` for a gang: its lost nodes replaced where they ran, the
        others kept (`launchers.gcp_gang.repair`)."""
        zone, name = self._split(instance_id, gangs=True)
        if not name.startswith("gang-"):
            return ""
        return gcp_gang.repair(self, zone, name, spec, _capacity_reason)

    def request_stop(self, instance_id: str) -> None:
        """Sets the metadata flag the watcher beside the agent reads (a gang's rank 0's:
        its checkpoints are the job's)."""
        zone, name = self._split(instance_id, gangs=True)
        if name.startswith("gang-"):
            job_id, _, digest = gcp_gang._parse(zone, name)
            name = gcp_gang.node_name(job_id, digest, 0)
        self.set_items(zone, name, {META_STOP: "TRUE"})

    def set_items(self, zone: str, name: str, items: Mapping[str, str]) -> None:
        """Set metadata items of an instance, keeping its others."""
        from google.cloud import compute_v1

        record = self.client.get(project=self.project, zone=zone, instance=name)
        kept = [compute_v1.Items(key=i.key, value=i.value) for i in record.metadata.items
                if i.key not in items]
        kept += [compute_v1.Items(key=k, value=v) for k, v in items.items()]
        self.client.set_metadata(
            project=self.project, zone=zone, instance=name,
            metadata_resource=compute_v1.Metadata(fingerprint=record.metadata.fingerprint,
                                                  items=kept))

    def logs(self, instance_id: str, tail: int = 200, node: int = 0) -> str:
        """The tail of the instance's serial console (the startup script and the agent log
        there); of a gang's node `node` (0: rank 0). '' when Compute Engine has none."""
        from google.api_core import exceptions

        zone, name = self._split(instance_id, gangs=True)
        if name.startswith("gang-"):
            job_id, count, digest = gcp_gang._parse(zone, name)
            if not 0 <= node < count:
                raise InvalidInput(f"instance {instance_id}: no node {node} (its nodes: 0 "
                                   f"to {count - 1})")
            name = gcp_gang.node_name(job_id, digest, node)
        try:
            answer = self.client.get_serial_port_output(project=self.project, zone=zone,
                                                        instance=name)
        except exceptions.GoogleAPICallError:
            return ""
        return "\n".join(str(answer.contents or "").splitlines()[-tail:])

    def terminate(self, instance_id: str) -> None:
        """Deletes the instance; a gang's every node, then its placement policy."""
        from google.api_core import exceptions

        zone, name = self._split(instance_id, gangs=True)
        if name.startswith("gang-"):
            return gcp_gang.terminate(self, zone, name)
        self._deleted.add(instance_id)
        try:
            record = self.client.get(project=self.project, zone=zone, instance=name)
            self.client.delete(project=self.project, zone=zone, instance=name).result(
                timeout=OPERATION_TIMEOUT)
        except exceptions.NotFound:
            return  # gone already (its secrets, if any are left, go in the next sweep)
        seen = self._instance(zone, record)
        self._forget_key(cloud_secrets.key(seen.job_id, seen.attempt))

    def recover_agent(self, instance_id: str) -> bool:
        """An instance whose heartbeat is stale: its supervisor starts a dead agent again
        (launchers.agent_supervisor), so the launcher acts only on a wedged instance, one
        whose heartbeat is older than `wedged.WEDGED_SECONDS`: it is deleted, to be
        relaunched from the job's newest checkpoint. False (left alone) otherwise."""
        from google.api_core import exceptions

        zone, name = self._split(instance_id, gangs=True)
        if name.startswith("gang-"):  # rank 0 writes the gang's heartbeat
            job_id, _, digest = gcp_gang._parse(zone, name)
            name = gcp_gang.node_name(job_id, digest, 0)
        try:
            record = self.client.get(project=self.project, zone=zone, instance=name)
        except exceptions.GoogleAPICallError as exc:
            log.warning("gcp %s: the startup script of %s: %s", zone, name, exc)
            return False
        items = {i.key: i.value for i in record.metadata.items} if record.metadata else {}
        if not wedged.is_wedged(items.get("startup-script", "")):
            return False
        self.terminate(instance_id)
        return True


def _job_of(name: str) -> int:
    part = name.split("-")[1] if name.count("-") >= 2 else ""
    return int(part) if part.isdigit() else -1
