"""Azure: Spot VMs (eviction policy Delete) or Regular-priority ones, of any size the catalog
lists, in one resource group, started with custom data (cloud-init runs it at first boot)
that installs costsched and runs the job under its agent, as on EC2 and Compute Engine.

A VM's handle is "LOCATION/RESOURCE_GROUP/NAME"; its name is derived from (job, attempt)
and it is tagged with both, so that asking again after a crash is the same PUT of the same
VM, and a costsched started again adopts it by its tags. An eviction is seen from inside
through Scheduled Events (the agent: launchers.azure_events) and from outside as the VM
deleted by Azure: a VM gone (or deleting) that this launcher did not delete is reported
preempted. `request_stop` reaches the agent through Run Command, as SSM does on EC2.

A job of N nodes is a gang of N VMs in one proximity placement group, known by one handle
"LOCATION/RESOURCE_GROUP/gang-<job>-<N>-<digest>" (launchers.azure_gang,
launchers.cloud_gang). The SDKs are made in costsched.clouds.azure_sdk, when first used.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from costsched.clouds import azure as azure_cloud
from costsched.model import InvalidInput, Offering
from launchers import azure_gang, azure_vm, cloud_gang, cloud_secrets, task_resources
from launchers.azure_secrets import KeyVault, no_vault
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
from launchers.cloud_steps import tagged, with_steps
from launchers.cloud_times import utc
from launchers.gang import NodeState
from launchers.userdata import DEFAULT_ROOT, startup_script

DEFAULT_INSTALL = "pip install 'costsched[azure]'"
STOP_COMMAND = "pkill -TERM -f 'launchers[.]agent --job-id'"
OPERATION_WAIT = 600.0  # seconds a create or a delete is waited for
VNET_PREFIX, SUBNET_PREFIX = "10.8.0.0/16", "10.8.0.0/20"  # costsched's own VNets
log = logging.getLogger("costsched.azure")


def error_code(exc: Exception) -> str:
    """The Resource Manager error code of an azure-core error ('' when it has none)."""
    return str(getattr(getattr(exc, "error", None), "code", "") or "")


def error_text(exc: Exception) -> str:
    """An azure-core error in one line: its code and message, never a header or a token."""
    error = getattr(exc, "error", None)
    message = getattr(error, "message", None) or getattr(exc, "message", None) or str(exc)
    message = " ".join(str(message).split())[:300]
    code = error_code(exc)
    return f"{code}: {message}" if code and not message.startswith(code) else message


def capacity_reason(exc: Exception) -> str | None:
    """The reason when `exc` says this offering cannot be had now, else None."""
    code = error_code(exc)
    if code in azure_cloud.CAPACITY_ERROR_CODES:
        if code == "OperationNotAllowed" and "quota" not in error_text(exc).lower():
            return None
        return error_text(exc)
    return None


def _power(doc: Mapping[str, Any]) -> tuple[str, str]:
    """(power state, the failed provisioning's message) of a VM's instance view."""
    statuses = (doc.get("properties") or {}).get("instanceView", {}).get("statuses") or []
    power = failure = ""
    for status in statuses:
        code = str(status.get("code", ""))
        if code.startswith("PowerState/"):
            power = code.split("/", 1)[1]
        elif code.startswith("ProvisioningState/failed"):
            failure = str(status.get("message") or code)
    return power, failure


def quota_refused(exc: CapacityError, instances: int = 1) -> QuotaError | None:
    """`exc` as the QuotaError it is when Azure's answer is a quota's (QuotaExceeded, or
    OperationNotAllowed saying quota; its message names the family, the low-priority or
    the regional vCPUs), else None."""
    code = exc.reason.split(":", 1)[0].strip()
    if code not in azure_cloud.QUOTA_ERROR_CODES or "quota" not in exc.reason.lower():
        return None
    return QuotaError(exc.offering, exc.reason, quota=azure_cloud.quota_in_message(exc.reason),
                      instances=instances)


@translated("azure")
class AzureLauncher(Launcher):
    name = "azure"
    runs_gangs: ClassVar[bool] = True  # a multi-node job as N VMs (launchers.azure_gang)

    def __init__(self, clients: Any = None, settings: Any = None,
                 install: str = DEFAULT_INSTALL, root: str = DEFAULT_ROOT,
                 mount_root: str = "", gang_placement: str | None = None,
                 wait_seconds: float = OPERATION_WAIT, secrets: KeyVault | None = None
                 ) -> None:
        """`clients`: the management clients (costsched.clouds.azure_sdk.AzureClients; by
        default those the configuration names, made when first needed); `settings`: the
        [azure] configuration (costsched.config.AzureConfig; by default the effective one's).
        `install` (shell, one line) installs costsched on the VM and `root` is where its
        environment and the jobs' working directories go (launchers.userdata). `gang_placement`:
        "auto" (a proximity placement group for a gang of GPU VMs) or "off"; by default
        config launch.gang_placement. `wait_seconds`: how long a create or delete is waited for
        (a create not done by then is left pending: `status` follows it). `secrets`: where
        a job's secrets wait for its VM (launchers.azure_secrets; by default the vault
        config azure.key_vault names, none without it)."""
        if settings is None:
            from costsched.config import effective

            settings = effective().azure
        self.settings = settings
        self._clients = clients
        self.group = settings.resource_group
        self.install, self.root, self.mount_root = install, root, mount_root
        self.wait_seconds = wait_seconds
        self._placement = (None if gang_placement is None
                           else cloud_gang.check_placement(gang_placement))
        self._deleted: set[str] = set()
        self._subnets: dict[str, str] = dict(settings.subnets)
        self._group_ready = not settings.create_resource_group
        self._ssh_key = ""
        self._secrets = secrets

    @property
    def clients(self) -> Any:  # costsched.clouds.azure_sdk.AzureClients
        if self._clients is None:
            from costsched.clouds.azure_sdk import AzureClients

            self._clients = AzureClients.from_config(self.settings)
        return self._clients

    @property
    def compute(self) -> Any:
        return self.clients.compute

    @property
    def placement(self) -> str:
        """Whether gangs are packed in a proximity placement group: "auto" or "off"."""
        if self._placement is None:
            self._placement = cloud_gang.setting_from_config()
        return self._placement

    @property
    def secrets(self) -> KeyVault | None:
        """The Key Vault a job's secrets travel through; None when none is configured."""
        if self._secrets is None and self.settings.key_vault:
            from costsched.clouds.azure import key_vault_url

            self._secrets = KeyVault(key_vault_url(self.settings.key_vault))
        return self._secrets

    def check_ready(self) -> None:
        # The SDK missing, or no subscription named: one line before a launch stores
        # anything; the SDK first, as `costsched check` says it (and aws and gcp do).
        from costsched.clouds.base import SdkMissing

        if self._clients is None:
            azure_vm.require_sdks()
        try:
            self.clients.compute  # noqa: B018 (made, not called: no request is sent)
        except SdkMissing as exc:
            raise InvalidInput(str(exc)) from None

    def can_launch(self, offering: Offering) -> bool:
        return offering.cloud == "azure"

    def cannot_run(self, task: Mapping[str, Any]) -> str:
        names = list(task.get("secrets") or [])
        return no_vault(names[0]) if names and self.secrets is None else ""

    def errors(self) -> tuple[type[Exception], type[Exception]]:
        """(HttpResponseError, ResourceNotFoundError) of azure-core."""
        from costsched.clouds.azure_sdk import sdk_errors

        return sdk_errors()[:2]

    # -- what a VM needs first ------------------------------------------------------------

    def ensure_group(self) -> None:
        """The resource group, made in config azure.location when create_resource_group
        says so (once per launcher: the PUT is idempotent)."""
        if self._group_ready:
            return
        self.clients.resources.resource_groups.create_or_update(
            self.group, {"location": self.settings.location,
                         "tags": {"costsched": "jobs"}})
        self._group_ready = True

    def subnet(self, location: str) -> str:
        """The subnet a VM in `location` joins: config azure.subnets', else the subnet of
        costsched's own VNet there (made when missing)."""
        if location in self._subnets:
            return self._subnets[location]
        _, missing = self.errors()
        network = self.clients.network
        name = f"{self.settings.vnet}-{location}"
        try:
            vnet = network.virtual_networks.get(self.group, name)
        except missing:
            vnet = network.virtual_networks.begin_create_or_update(self.group, name, {
                "location": location, "tags": {"costsched": "network"},
                "properties": {"addressSpace": {"addressPrefixes": [VNET_PREFIX]},
                               "subnets": [{"name": "default", "properties": {
                                   "addressPrefix": SUBNET_PREFIX}}]}}).result(
                timeout=self.wait_seconds)
        self._subnets[location] = f"{vnet['id']}/subnets/default"
        return self._subnets[location]

    def ports_group(self, spec: LaunchSpec) -> str:
        """A network security group of the job's own letting TCP in on the task's ports
        (from anywhere, as SkyPilot opens them), one per job and location; '' without ports."""
        ranges = task_resources.port_ranges(spec.task)
        if not ranges:
            return ""
        location = spec.offering.region
        rules = [{"name": f"costsched-port-{lo}-{hi}", "properties": {
            "protocol": "Tcp", "direction": "Inbound", "access": "Allow",
            "priority": 1000 + i, "sourceAddressPrefix": "*", "sourcePortRange": "*",
            "destinationAddressPrefix": "*",
            "destinationPortRange": str(lo) if lo == hi else f"{lo}-{hi}"}}
            for i, (lo, hi) in enumerate(ranges)]
        group = self.clients.network.network_security_groups.begin_create_or_update(
            self.group, f"costsched-{spec.job_id}-ports-{location}", {
                "location": location, "tags": {TAG_JOB: str(spec.job_id)},
                "properties": {"securityRules": rules}}).result(timeout=self.wait_seconds)
        return str(group["id"])

    def ssh_key(self) -> str:
        if not self._ssh_key:
            path = self.settings.ssh_public_key
            self._ssh_key = (azure_vm.public_ssh_key(path) if path
                             else azure_vm.ephemeral_ssh_key())
        return self._ssh_key

    # -- launch ---------------------------------------------------------------------------

    def instance_spec(self, spec: LaunchSpec) -> LaunchSpec:
        """`spec` as the VM is given it: its Blob locations (checkpoints, code, file mounts)
        as account URLs, which need no configuration there."""
        from launchers.checkpoints.azure import instance_uri

        task = dict(spec.task)
        if task.get("mounts"):
            task["mounts"] = [{**m, "source": instance_uri(m["source"])}
                              for m in task["mounts"]]
        return replace(spec, checkpoint_uri=instance_uri(spec.checkpoint_uri),
                       code_uri=instance_uri(spec.code_uri) if spec.code_uri else "",
                       task=task)

    def document(self, spec: LaunchSpec, name: str, node: Mapping[str, Any] | None = None,
                 placement_group: str = "", security_group: str = "",
                 secret_refs: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The VM's PUT body (launchers.azure_vm) with its startup script; `secret_refs`:
        where the VM reads the job's secrets (`put_secrets`)."""
        given = self.instance_spec(spec)
        vault = self.secrets.url if secret_refs and self.secrets is not None else ""
        script = startup_script(given, install=self.install, root=self.root,
                                notice_url=azure_cloud.SCHEDULED_EVENTS_URL,
                                mount_root=self.mount_root, node=node,
                                secret_refs=secret_refs, secret_api=vault,
                                secret_store="akv" if vault else "")
        body = azure_vm.document(
            given, name=name, script=script, subnet=self.subnet(spec.offering.region),
            image=self.settings.image, ssh_key=self.ssh_key(),
            identity=self.settings.identity, public_ip=self.settings.public_ip,
            security_group=security_group, placement_group=placement_group, node=node)
        if secret_refs:  # which secrets go when the VM does
            body["tags"][cloud_secrets.TAG_KEY] = cloud_secrets.key(spec.job_id, spec.attempt)
        return body

    # -- secrets --------------------------------------------------------------------------

    def put_secrets(self, spec: LaunchSpec) -> dict[str, str]:
        """The job's secrets in the Key Vault (launchers.azure_secrets), read by the VM with
        its managed identity at boot, never in its custom data; {name: secret name}. The
        vault's leftovers of crashed launches are swept first."""
        if not spec.secret_names:
            return {}
        vault = self.secrets
        if vault is None:
            raise InvalidInput(no_vault(spec.secret_names[0]))
        try:
            vault.sweep(self.instances())
        except Exception as exc:  # noqa: BLE001 - the next launch sweeps again
            log.warning("azure: leftover secrets not swept: %s", type(exc).__name__)
        return vault.put(spec)

    def forget_secrets(self, key: str) -> None:
        """Delete the secrets of a launch attempt (its `cloud_secrets.key`; idempotent, a
        failure is logged: the next launch's sweep deletes them)."""
        if self.secrets is None:
            return
        try:
            self.secrets.delete_key(key)
        except Exception as exc:  # noqa: BLE001 - a terminate never fails for it
            log.warning("azure: secrets not deleted: %s", exc)

    def launch(self, spec: LaunchSpec) -> Instance:
        try:
            return self._launch(spec)
        except CapacityError as exc:  # the subscription's quota, when Azure says so
            refused = quota_refused(exc, cloud_gang.nodes_of(spec))
            if refused is None:
                raise
            raise refused from None

    def _launch(self, spec: LaunchSpec) -> Instance:
        offering = spec.offering
        if not self.can_launch(offering):
            raise InvalidInput(f"cloud {offering.cloud!r}: the azure launcher starts azure "
                               "offerings only")
        http_error, _ = self.errors()
        try:
            self.ensure_group()
            refs = self.put_secrets(spec)  # before any VM that reads them
            try:
                if cloud_gang.nodes_of(spec) > 1:
                    return azure_gang.launch(self, spec, refs)
                name = azure_vm.vm_name(spec.job_id, spec.attempt)
                body = self.document(spec, name, security_group=self.ports_group(spec),
                                     secret_refs=refs)
                self.create(offering, name, body)
            except BaseException:
                if refs:  # no VM will read them
                    self.forget_secrets(cloud_secrets.key(spec.job_id, spec.attempt))
                raise
            try:
                return self.status(self.handle(offering.region, name))
            except CloudError as exc:  # created: what a look after it finds is its VM
                raise exc.after_create() from exc
        except http_error as exc:  # its network, security group or placement group
            raise self.refused(exc, f"{offering.region}: launch {offering.instance_type}"
                               ) from exc

    def refused(self, exc: Exception, where: str) -> Exception:
        """What to raise for an error of Resource Manager (`where`: the call) in one line:
        a missing resource group is the user's to make; else `cloud_errors.translate`."""
        if error_code(exc) == "ResourceGroupNotFound":
            return InvalidInput(f"azure: resource group {self.group} does not exist: `az "
                                f"group create -n {self.group} -l {self.settings.location}`, "
                                "or set azure.create_resource_group = true")
        return translate("azure", where, exc)

    def create(self, offering: Offering, name: str, body: Mapping[str, Any]) -> None:
        """PUT the VM (the same again is the same VM) and wait for it up to wait_seconds;
        CapacityError when Azure has no room for it (the VM it left is deleted)."""
        http_error, _ = self.errors()
        where = f"{offering.region}: create {offering.instance_type}"
        try:
            poller = self.compute.virtual_machines.begin_create_or_update(self.group, name,
                                                                          body)
            poller.wait(self.wait_seconds)
        except http_error as exc:
            reason = capacity_reason(exc)
            if reason is not None:
                self.delete_vm(name, wait=True)  # a VM that failed to allocate, if any
                raise CapacityError(offering, reason) from None
            raise self.refused(exc, where) from exc

    # -- reading --------------------------------------------------------------------------

    def handle(self, location: str, name: str, group: str | None = None) -> str:
        return f"{location}/{group or self.group}/{name}"

    @staticmethod
    def split(instance_id: str) -> tuple[str, str, str]:
        """(location, resource group, VM or gang name) of a handle."""
        parts = instance_id.split("/")
        if len(parts) != 3 or not azure_cloud.AZURE.is_region(parts[0]) or not parts[1] \
                or not (parts[2].startswith("costsched-") or cloud_gang.parse(parts[2])):
            raise InvalidInput(f"instance {instance_id!r}: expected LOCATION/RESOURCE_GROUP/"
                               "NAME, like eastus/costsched/costsched-7-0123456789ab, or "
                               "LOCATION/RESOURCE_GROUP/gang-JOB-NODES-DIGEST")
        return parts[0], parts[1], parts[2]

    def instance(self, group: str, doc: Mapping[str, Any]) -> Instance:
        """costsched's view of a VM document (with its instance view when it has one)."""
        tags = doc.get("tags") or {}
        props = doc.get("properties") or {}
        location, name = str(doc.get("location", "")), str(doc.get("name", ""))
        key = tuple(str(tags.get(azure_vm.TAG_OFFERING, "")).split("|"))
        if len(key) != 6:
            spot = "spot" if props.get("priority") == "Spot" else "on_demand"
            key = ("azure", location, (doc.get("zones") or [""])[0],
                   str((props.get("hardwareProfile") or {}).get("vmSize", "")), spot, "linux")
        job = str(tags.get(TAG_JOB, ""))
        handle = self.handle(location, name, group)
        state, detail = self._state(handle, props)
        return Instance(id=handle, job_id=int(job) if job.isdigit() else -1,
                        attempt=str(tags.get(TAG_ATTEMPT, "")),
                        offering_key=key, state=state, detail=detail,  # type: ignore[arg-type]
                        created_at=utc(props.get("timeCreated")))

    def _state(self, handle: str, props: Mapping[str, Any]) -> tuple[str, str]:
        provisioning = str(props.get("provisioningState", ""))
        power, failure = _power({"properties": props})
        spot = props.get("priority") == "Spot"
        if provisioning == "Deleting" or power in ("deallocating", "deallocated"):
            if handle in self._deleted:
                return "terminated", "deleted by costsched"
            if spot:
                return "preempted", "evicted by Azure (Spot)"
            return "terminated", f"{provisioning or power} outside costsched"
        if power in ("stopping", "stopped"):
            return "terminated", f"{power}: its system was shut down"
        if provisioning == "Failed" and power != "running":
            return "failed", failure or "provisioning failed"
        if power == "running" or (provisioning == "Succeeded" and not power):
            return "running", ""
        return "pending", provisioning or power

    def status(self, instance_id: str) -> Instance:
        location, group, name = self.split(instance_id)
        if cloud_gang.parse(name):
            return azure_gang.status(self, location, group, name)
        _, missing = self.errors()
        try:
            doc = self.compute.virtual_machines.get(group, name, expand="instanceView")
        except missing:
            return self.gone(instance_id)
        return with_steps([self.instance(group, doc)], [tagged(doc.get("tags"))])[0]

    def gone(self, instance_id: str) -> Instance:
        """A VM Azure no longer has: deleted by this launcher, or by Azure (a Spot VM evicted
        with eviction policy Delete), or outside costsched."""
        location, _, name = self.split(instance_id)
        parsed = cloud_gang.parse(name)
        job = parsed[0] if parsed else azure_vm.job_of(name)
        key = ("azure", location, "", "", "", "linux")
        if instance_id in self._deleted:
            return Instance(instance_id, job, "", key, "terminated", detail="deleted by costsched")
        return Instance(instance_id, job, "", key, "preempted",
                        detail="gone: deleted by Azure after an eviction, or outside costsched")

    def listed(self, group: str) -> list[Any]:
        """Every VM of resource group `group` that costsched tagged (paged by the client)."""
        _, missing = self.errors()
        try:
            return [doc for doc in self.compute.virtual_machines.list(group)
                    if TAG_JOB in (doc.get("tags") or {})]
        except missing:  # no such resource group: no VM
            return []

    def statuses(self, instance_ids: Sequence[str]) -> dict[str, Instance]:
        """One list of each resource group's VMs (by provisioning state: a VM stopped
        outside costsched is caught by its heartbeat); an asked VM not listed is gone.
        Malformed ids are left out."""
        wanted: dict[str, list[str]] = {}
        for instance_id in dict.fromkeys(instance_ids):
            try:
                wanted.setdefault(self.split(instance_id)[1], []).append(instance_id)
            except InvalidInput:
                continue
        found: dict[str, Instance] = {}
        for group, ids in wanted.items():
            listed = {i.id: i for i in self.described(group, set(ids))}
            found.update({i: listed.get(i) or self.gone(i) for i in ids})
        return found

    def instances(self, job_id: int | None = None) -> list[Instance]:
        return [i for i in self.described(self.group) if job_id is None or i.job_id == int(job_id)]

    def described(self, group: str, read: set[str] | None = None) -> list[Instance]:
        """Resource group `group`'s VMs (a gang's as one), with the steps their heartbeats
        say (read for `read` alone, when given)."""
        docs = self.listed(group)
        return with_steps(azure_gang.group(self, group, docs),
                          [tagged(d.get("tags")) for d in docs], read)

    # -- acting ---------------------------------------------------------------------------

    def nodes(self, instance_id: str) -> list[NodeState]:
        """The nodes of a gang, rank 0 first; a job of one VM is its only node."""
        location, group, name = self.split(instance_id)
        if cloud_gang.parse(name):
            return azure_gang.nodes(self, location, group, name)
        seen = self.status(instance_id)
        return [NodeState(0, seen.id, seen.state, seen.detail)]

    def repair_nodes(self, instance_id: str, spec: LaunchSpec) -> str:
        """`Launcher.repair_nodes`: a gang's lost nodes replaced where they ran, the others
        kept (`launchers.azure_gang.repair`)."""
        location, group, name = self.split(instance_id)
        if not cloud_gang.parse(name):
            return ""
        return azure_gang.repair(self, location, group, name, spec)

    def request_stop(self, instance_id: str) -> None:
        """SIGTERM to the agent through Run Command (not waited for); the agent checkpoints
        the job. A gang's rank 0 is asked: its checkpoints are the job's."""
        http_error, _ = self.errors()
        location, group, name = self.split(instance_id)
        if cloud_gang.parse(name):
            name = azure_gang.rank0(name)
        try:
            self.compute.virtual_machines.begin_run_command(group, name, {
                "commandId": "RunShellScript", "script": [STOP_COMMAND]})
        except http_error as exc:
            raise translate("azure", f"{location}: signal {name} through Run Command",
                            exc) from exc

    def delete_vm(self, name: str, wait: bool = True, group: str | None = None) -> None:
        """Delete a VM (its disk, network interface and address go with it); gone already
        is fine."""
        _, missing = self.errors()
        try:
            poller = self.compute.virtual_machines.begin_delete(group or self.group, name)
            if wait:
                poller.wait(self.wait_seconds)
        except missing:
            return

    def terminate(self, instance_id: str) -> None:
        """Deletes the VM; a gang's every VM, then its proximity placement group; then the
        secrets its launch put in the Key Vault."""
        location, group, name = self.split(instance_id)
        self._deleted.add(instance_id)
        key = self._secrets_key(group, name)
        if cloud_gang.parse(name):
            azure_gang.terminate(self, location, group, name)
        else:
            self.delete_vm(name, group=group)
        if key:
            self.forget_secrets(key)

    def _secrets_key(self, group: str, name: str) -> str:
        """The attempt key of the secrets a VM (a gang's rank 0) was launched with, from its
        tags ('' without a vault, or a VM gone: the sweep deletes those)."""
        if self.secrets is None:
            return ""
        http_error, missing = self.errors()
        try:
            doc = self.compute.virtual_machines.get(
                group, azure_gang.rank0(name) if cloud_gang.parse(name) else name)
        except (missing, http_error):
            return ""
        return str((doc.get("tags") or {}).get(cloud_secrets.TAG_KEY, ""))

    def recover_agent(self, instance_id: str) -> bool:
        """A VM whose heartbeat is stale: its supervisor starts a dead agent again, so the
        launcher acts only on a wedged VM (no heartbeat for `wedged.WEDGED_SECONDS`): it is
        deleted, to be relaunched from the job's newest checkpoint. False otherwise."""
        from launchers import wedged

        location, group, name = self.split(instance_id)
        if cloud_gang.parse(name):  # rank 0 writes the gang's heartbeat
            name = azure_gang.rank0(name)
        try:
            doc = self.compute.virtual_machines.get(group, name)
        except self.errors()[0] as exc:
            log.warning("azure %s: %s: %s", location, name, error_text(exc))
            return False
        place = tagged(doc.get("tags"))  # where its heartbeat is
        if place is None or not wedged.heartbeat_older(place.checkpoint_uri, place.attempt):
            return False
        self.terminate(instance_id)
        return True

    def logs(self, instance_id: str, tail: int = 200, node: int = 0) -> str:
        """The tail of the VM's serial console (the startup script and the agent log there,
        from boot diagnostics); of a gang's node `node` (0: rank 0). '' when there is none."""
        location, group, name = self.split(instance_id)
        parsed = cloud_gang.parse(name)
        if parsed:
            if not 0 <= node < parsed[1]:
                raise InvalidInput(f"instance {instance_id}: no node {node} (its nodes: 0 "
                                   f"to {parsed[1] - 1})")
            name = azure_vm.node_name(parsed[0], parsed[2], node)
        try:
            found = self.compute.virtual_machines.retrieve_boot_diagnostics_data(
                group, name, sas_uri_expiration_time_in_minutes=5)
            url = found.get("serialConsoleLogBlobUri") or ""
            text = _fetch(url) if url else ""
        except Exception as exc:  # noqa: BLE001 - no log is '' (said in costsched's log)
            log.info("azure %s: the serial log of %s: %s", location, name, type(exc).__name__)
            return ""
        return "\n".join(text.splitlines()[-tail:])


def _fetch(url: str, get: Callable[..., Any] | None = None) -> str:
    """The text at a shared-access URL (never logged: it holds its signature)."""
    import requests

    answer = (get or requests.get)(url, timeout=30)
    answer.raise_for_status()
    return str(answer.text)
