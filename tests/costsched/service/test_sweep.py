"""The sweep of instances that run for no job (`costsched.service.jobs.sweep`): a create
whose answer was lost, seen only after every offering failed, is ended once the grace has
passed (a line in the job's log naming it, its cloud and region, why and its cost), never
before; an instance of a live placement, of a move under way, of another store's launch
(made outside its tag's move, or whose cloud does not say when it was made), or without
costsched's tags is never touched. EC2 is moto's (the lost answer as botocore
raises it), Compute Engine the launcher tests' fake InstancesClient, Azure their loopback
Resource Manager; the daemon sweeps at most every SWEEP_SECONDS."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from costsched.config import Config
from costsched.daemon import Daemon
from costsched.migration.launcher import Instance, Launcher, LaunchSpec
from costsched.migration.machine import candidate
from costsched.model import Offering
from costsched.service.jobs import sweep as sweeping
from costsched.store import PriceStore

NOW = datetime.now(timezone.utc).replace(microsecond=0)
LATER = NOW + timedelta(seconds=sweeping.GRACE_SECONDS + 60)


@pytest.fixture(autouse=True)
def clock() -> None:
    """Each test's NOW is the real clock's when it starts: the clouds (moto, the fakes, the
    local launcher) stamp the instances they make with it, and the sweep compares that
    stamp with the store's moves."""
    global NOW, LATER
    NOW = datetime.now(timezone.utc).replace(microsecond=0)
    LATER = NOW + timedelta(seconds=sweeping.GRACE_SECONDS + 60)
EAST = Offering("aws", "us-east-1", "us-east-1b", "p3.2xlarge", "spot", "V100", 1, 8, 61.0)
GCP = Offering("gcp", "us-central1", "us-central1-a", "n1-standard-8+1xnvidia-tesla-v100",
               "spot", "V100", 1)


def a_move(store: PriceStore, offerings: list[Offering], backend: str, *,
           price: float = 0.9, at: datetime | None = None) -> tuple[int, Any]:
    """A job of `launcher` and its launch move over `offerings` (made at NOW by default)."""
    at = at or NOW
    name = f"train-{len(store.jobs.records()) + 1}"
    job = store.jobs.create(name, {"launcher": backend}, 100.0, at=at)
    move = store.moves.create(job, "launch", [candidate(o, price) for o in offerings], at=at)
    return job, move


def launch(backend: Launcher, job: int, attempt: str, offering: Offering) -> Instance:
    checkpoints = (f"{backend.base_dir}/ckpt-{job}"  # type: ignore[attr-defined]
                   if backend.name == "local" else "s3://b/c")
    return backend.launch(LaunchSpec(job_id=job, job_name="train", command="sleep 60",
                                     offering=offering, checkpoint_uri=checkpoints,
                                     attempt=attempt))


def lost(store: PriceStore, backend: Launcher, offering: Offering, name: str,
         at: datetime | None = None) -> tuple[int, Instance]:
    """A launch whose create was carried out but never placed: its move failed over to
    nothing, and the job failed (its move made and ended `at`, NOW by default)."""
    at = at or NOW
    job, move = a_move(store, [offering], name, at=at)
    made = launch(backend, job, move.attempt, offering)
    store.moves.advance(move, "failed", at=at, tried=1, detail="every candidate failed")
    store.jobs.transition(job, "failed", at=at, detail="no offering could be launched")
    return job, made


def placed(store: PriceStore, backend: Launcher, offering: Offering, name: str) -> Instance:
    """A running job on its instance (its move done, its placement open)."""
    job, move = a_move(store, [offering], name)
    made = launch(backend, job, move.attempt, offering)
    store.jobs.place(job, offering.key, gpu_model="V100", gpu_count=1, at=NOW,
                     usd_per_hour=0.9, reason="launch", instance=made.id)
    store.moves.advance(move, "done", at=NOW, target_instance=made.id)
    store.jobs.transition(job, "running", at=NOW)
    return made


def swept_lines(store: PriceStore, job: int) -> list[str]:
    return list(store.jobs.events_of([job], [sweeping.SWEEP_EVENT])["detail"])


# --- EC2 (moto) ----------------------------------------------------------------------------

pytest.importorskip("moto")
from tests.launchers.test_aws import aws, launcher  # noqa: E402, F401 - fixtures


def live_ec2(session: Any) -> dict[str, dict]:
    found = session.client("ec2", region_name="us-east-1").describe_instances()
    return {f"us-east-1/{i['InstanceId']}": i for r in found["Reservations"]
            for i in r["Instances"] if i["State"]["Name"] != "terminated"}


def test_ec2_a_lost_create_is_ended_after_the_grace_and_only_it(
        aws: Any, launcher: Any, store: PriceStore) -> None:  # noqa: F811
    job, stray = lost(store, launcher, EAST, "aws")
    kept = placed(store, launcher, EAST, "aws")
    # A launch under way: its move adopts what it made.
    going, move = a_move(store, [EAST], "aws")
    in_flight = launch(launcher, going, move.attempt, EAST)
    # Another store's launch on the same account: its move is not this store's.
    foreign = launch(launcher, 99, "j99-m99-0", EAST)
    # An instance costsched did not make.
    client = aws.client("ec2", region_name="us-east-1")
    theirs = client.run_instances(ImageId="ami-12c6146b", MinCount=1, MaxCount=1,
                               InstanceType="t3.micro")["Instances"][0]["InstanceId"]

    assert sweeping.sweep(store, launcher, {("aws", "us-east-1")}, at=NOW) == []  # grace
    [event] = sweeping.sweep(store, launcher, {("aws", "us-east-1")}, at=LATER)

    assert set(live_ec2(aws)) == {kept.id, in_flight.id, foreign.id, f"us-east-1/{theirs}"}
    assert (event.job_id, event.kind, event.level) == (job, "sweep", "warning")
    [line] = swept_lines(store, job)
    assert str(event) == f"job {job}: {line}"
    assert re.fullmatch(
        rf"ended instance {re.escape(stray.id)} \(aws us-east-1\), which ran for no "
        rf"placement: launch attempt {store.moves.scope}-j{job}-m\d+-0 was never placed "
        rf"\(move \d+, a launch, "
        rf"failed\) and job {job} has failed; up 0\.\d+ h at \$0\.9000/h \(stored price\): "
        rf"\$0\.\d+", line), line
    assert store.jobs.get(job).state == "failed"  # the job's record is left as it was
    assert sweeping.sweep(store, launcher, {("aws", "us-east-1")}, at=LATER) == []


def test_ec2_an_earlier_candidates_late_instance_of_a_running_job_is_ended(
        aws: Any, launcher: Any, store: PriceStore) -> None:  # noqa: F811
    west = EAST  # the same offering twice: the first candidate's create was lost
    job, move = a_move(store, [EAST, west], "aws")
    late = launch(launcher, job, move.attempt, EAST)  # candidate 0, its answer lost
    move = store.moves.advance(move, "checkpoint_verified", at=NOW, tried=1)
    target = launch(launcher, job, move.attempt, west)  # candidate 1: placed
    store.jobs.place(job, west.key, gpu_model="V100", gpu_count=1, at=NOW,
                     usd_per_hour=0.9, reason="launch", instance=target.id)
    store.moves.advance(move, "done", at=NOW, target_instance=target.id)
    store.jobs.transition(job, "running", at=NOW)

    [event] = sweeping.sweep(store, launcher, at=LATER)

    assert late.id in str(event) and f"and job {job} is running" in str(event)
    assert set(live_ec2(aws)) == {target.id}


def test_ec2_an_instance_whose_placement_ended_is_ended(
        aws: Any, launcher: Any, store: PriceStore) -> None:  # noqa: F811
    """The job finished, its instance was not ended (the terminate was lost)."""
    made = placed(store, launcher, EAST, "aws")
    job = store.jobs.records()[0].id
    store.jobs.end_placement(job, NOW)
    store.jobs.transition(job, "succeeded", at=NOW)
    [event] = sweeping.sweep(store, launcher, at=LATER)
    assert f"its placement had ended and job {job} has succeeded" in str(event)
    assert live_ec2(aws) == {}
    assert made.id in swept_lines(store, job)[0]


@pytest.mark.parametrize("move_at", [timedelta(hours=1), -timedelta(hours=1)])
def test_ec2_an_instance_started_outside_its_tags_move_is_another_stores(
        move_at: timedelta, aws: Any, launcher: Any, store: PriceStore) -> None:  # noqa: F811
    """A move of this store made after the instance started, or ended before it: the same
    tag, another store's launch (both count jobs and moves from 1)."""
    job, move = a_move(store, [EAST], "aws", at=NOW + move_at)
    launch(launcher, job, move.attempt, EAST)
    store.moves.advance(move, "failed", at=NOW + move_at, tried=1)
    assert sweeping.sweep(store, launcher, at=LATER + timedelta(hours=1)) == []
    assert len(live_ec2(aws)) == 1


@pytest.mark.parametrize("created, started, ended", [
    (None, None, False),  # the cloud says neither: never proven this store's
    (None, timedelta(0), True),  # no creation time, a start time within the move
    (timedelta(hours=1), timedelta(0), False),  # made after the move: its start says nothing
    (timedelta(minutes=4), None, True),  # within the clocks' skew of the move's end
    (-timedelta(minutes=6), None, False),  # before the move, beyond the skew
])
def test_only_an_instance_made_while_its_move_was_under_way_is_ended(
        created: timedelta | None, started: timedelta | None, ended: bool,
        store: PriceStore) -> None:
    job, move = a_move(store, [EAST], "aws")
    store.moves.advance(move, "failed", at=NOW, tried=1)
    instance = Instance(
        "us-east-1/i-0", job, move.attempt, EAST.key, "running",
        created_at=None if created is None else NOW + created,
        started_at=None if started is None else NOW + started)
    found = sweeping.strays(store, [instance], LATER)
    assert [s.instance for s in found] == ([instance] if ended else [])


# --- the launch itself: a create whose answer was lost and not yet seen -------------------

from tests.costsched.cli.test_launch_cloud_failures import (  # noqa: E402
    Faults,
    answer_lost,
    ec2,  # noqa: F401 - a fixture
    ec2_said,
    instances_in,
)


def test_a_launch_whose_lost_create_shows_only_later_leaves_nothing_running(
        cli: Any, ec2: Faults, db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """us-east-1's create is carried out but its answer lost, and EC2 does not list the
    instance yet when the launch looks for it; us-west-2 has no capacity: the job fails.
    The instance shows up later, and the daemon's sweep ends it."""
    ec2.after[("RunInstances", "us-east-1")] = answer_lost
    ec2.before[("RunInstances", "us-west-2")] = ec2_said("InsufficientInstanceCapacity", 500)
    hidden = {"on": True}

    def not_listed_yet(parsed: dict, **_: Any) -> None:
        if hidden["on"]:
            parsed["Reservations"] = []

    session = ec2.session

    def hiding() -> Any:
        made = session()
        made.events.register("after-call.ec2.DescribeInstances", not_listed_yet)
        return made

    monkeypatch.setattr("costsched.clouds.aws.new_session", hiding)
    launched = cli("launch", ec2.task, "--launcher", "aws", "--wait", "0", "--json")  # type: ignore[attr-defined]
    assert launched.exit_code == 1, launched.output
    hidden["on"] = False
    [made] = instances_in("us-east-1")
    from launchers import make_launcher

    store = PriceStore(str(db_path))
    try:
        [job] = store.jobs.records()
        assert job.state == "failed"
        places = sweeping.places_to_sweep(store, datetime.now(timezone.utc) - timedelta(1))
        assert places == {"aws": {("aws", "us-east-1"), ("aws", "us-west-2")}}
        aws_launcher = make_launcher("aws")
        assert sweeping.sweep(store, aws_launcher, places["aws"]) == []  # in its grace
        later = datetime.now(timezone.utc) + timedelta(seconds=sweeping.GRACE_SECONDS)
        [event] = sweeping.sweep(store, aws_launcher, places["aws"], at=later)
        assert f"us-east-1/{made['InstanceId']} (aws us-east-1)" in str(event)
        assert "$0.9200/h (stored price)" in str(event)
        assert instances_in("us-east-1") == [] and instances_in("us-west-2") == []
    finally:
        store.dispose()


# --- Compute Engine, Azure, every cloud behind one launcher --------------------------------

compute_v1 = pytest.importorskip("google.cloud.compute_v1")
from tests.launchers.test_gcp import FakeInstances  # noqa: E402


def gcp_launcher(fake: FakeInstances) -> Any:
    from launchers.gcp import GcpLauncher

    return GcpLauncher(project="proj", instances_client=fake,
                       service_account="runner@proj.iam.gserviceaccount.com")


def gce_made(fake: FakeInstances, instance: Instance, when: datetime | None) -> None:
    """Compute Engine says `instance` was made at `when` (None: says nothing)."""
    zone, name = instance.id.split("/")
    fake.store[(zone, name)].creation_timestamp = "" if when is None else when.isoformat()


def test_compute_engine_a_lost_create_is_ended_and_a_placed_one_kept(
        store: PriceStore) -> None:
    fake = FakeInstances()
    gcp = gcp_launcher(fake)
    job, stray = lost(store, gcp, GCP, "gcp")
    kept = placed(store, gcp, GCP, "gcp")
    [event] = sweeping.sweep(store, gcp, at=LATER)
    zone, name = stray.id.split("/")
    assert fake.deleted == [("proj", zone, name)]
    assert {f"{z}/{n}" for z, n in fake.store} == {kept.id}
    assert str(event).endswith(f"job {job} has failed; billed at $0.9000/h (stored price) "
                               "since it started, the cloud does not say when")
    assert "(gcp us-central1)" in str(event)


@pytest.mark.parametrize("made", [timedelta(hours=-1), timedelta(hours=2), None])
def test_compute_engine_an_instance_not_proven_made_by_its_move_is_left_alone(
        made: timedelta | None, store: PriceStore) -> None:
    """The same tag as a lost create of this store's, but Compute Engine made it an hour
    before the move, an hour after it ended, or does not say when: another store's."""
    fake = FakeInstances()
    gcp = gcp_launcher(fake)
    _, instance = lost(store, gcp, GCP, "gcp")
    gce_made(fake, instance, None if made is None else NOW + made)
    assert (gcp.status(instance.id).created_at is None) == (made is None)
    assert sweeping.sweep(store, gcp, at=LATER + timedelta(hours=2)) == []
    assert fake.deleted == [] and len(fake.store) == 1


def test_the_clouds_launcher_asks_the_clouds_the_moves_tried(store: PriceStore) -> None:
    from launchers.clouds import CloudsLauncher

    fake = FakeInstances()
    job, stray = lost(store, gcp_launcher(fake), GCP, "clouds")
    clouds = CloudsLauncher(backends={"gcp": gcp_launcher(fake)})
    assert sweeping.sweep(store, clouds, at=LATER) == []  # no cloud used nor named
    places = sweeping.places_to_sweep(store, NOW - timedelta(hours=1))
    assert places == {"clouds": {("gcp", "us-central1")}}
    [event] = sweeping.sweep(store, clouds, places["clouds"], at=LATER)
    assert event.job_id == job and fake.store == {}


from tests.launchers.conftest import azure, azure_tls  # noqa: E402, F401 - fixtures
from tests.launchers.test_azure import make  # noqa: E402


def test_azure_a_lost_create_is_ended_and_a_placed_one_kept(
        azure: Any, tmp_path: Path, store: PriceStore) -> None:  # noqa: F811
    vm = Offering("azure", "eastus", "", "Standard_NC6s_v3", "spot", "V100", 1, 6, 112.0)
    az = make(azure, tmp_path)
    job, stray = lost(store, az, vm, "azure")
    kept = placed(store, az, vm, "azure")
    [event] = sweeping.sweep(store, az, at=LATER)
    assert stray.id in str(event) and "(azure eastus)" in str(event)
    assert {i.id for i in az.instances() if i.live} == {kept.id}


@pytest.mark.parametrize("made", [timedelta(hours=-1), timedelta(hours=2), None])
def test_azure_a_vm_not_proven_made_by_its_move_is_left_alone(
        made: timedelta | None, azure: Any, tmp_path: Path,  # noqa: F811
        store: PriceStore) -> None:
    """Resource Manager's timeCreated before the move, after it ended, or absent."""
    vm = Offering("azure", "eastus", "", "Standard_NC6s_v3", "spot", "V100", 1, 6, 112.0)
    az = make(azure, tmp_path)
    _, instance = lost(store, az, vm, "azure")
    [doc] = azure.arm.vms()
    if made is None:
        del doc["properties"]["timeCreated"]
    else:
        doc["properties"]["timeCreated"] = (NOW + made).isoformat()
    assert (az.status(instance.id).created_at is None) == (made is None)
    assert sweeping.sweep(store, az, at=LATER + timedelta(hours=2)) == []
    assert [i.id for i in az.instances() if i.live] == [instance.id]


# --- the daemon ----------------------------------------------------------------------------

def test_the_daemons_watch_sweeps_at_most_every_sweep_seconds(
        store: PriceStore, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    fake = FakeInstances()
    gcp = gcp_launcher(fake)
    hour_ago = NOW - timedelta(hours=1)  # past the grace on the daemon's own clock
    first, stray = lost(store, gcp, GCP, "gcp", at=hour_ago)
    gce_made(fake, stray, hour_ago)  # made by its move, an hour ago
    daemon = Daemon(store, Config(), launchers=lambda name: gcp)
    caplog.set_level("INFO", logger="costsched.daemon")
    lines = daemon.watch()
    assert [line.job_id for line in lines] == [first]
    assert fake.store == {}
    [logged] = [r.getMessage() for r in caplog.records if "event=swept" in r.getMessage()]
    assert "level=warning task=watch event=swept launcher=gcp" in logged
    assert f"ended instance {stray.id} (gcp us-central1)" in logged
    second, late = lost(store, gcp, GCP, "gcp", at=hour_ago)
    gce_made(fake, late, hour_ago)
    assert daemon.watch() == []  # not due yet
    assert len(fake.store) == 1
    clock = sweeping.SWEEP_SECONDS + 1
    monkeypatch.setattr("costsched.daemon.watcher.time.monotonic",
                        lambda real=__import__("time").monotonic: real() + clock)
    assert [line.job_id for line in daemon.watch()] == [second]
    [line] = swept_lines(store, second)  # in the job's log
    assert line.startswith("ended instance ")


# --- the local launcher: the same tags, on its instances' records -------------------------

def test_the_local_launcher_a_lost_launch_is_ended_and_a_placed_one_kept(
        store: PriceStore, tmp_path: Path) -> None:
    from launchers.local import LocalLauncher

    local = LocalLauncher(tmp_path / "instances", grace_seconds=1, poll_seconds=0.1)
    here = Offering("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "V100", 1)
    job, stray = lost(store, local, here, "local")
    kept = placed(store, local, here, "local")
    try:
        [event] = sweeping.sweep(store, local, at=LATER)
        assert stray.id in str(event) and "(aws us-east-1)" in str(event)
        assert local.status(stray.id).state == "terminated"
        assert local.status(kept.id).live
    finally:
        for instance in local.instances():
            local.terminate(instance.id)


@pytest.mark.parametrize("move_at", [timedelta(hours=1), -timedelta(hours=1)])
def test_the_local_launcher_an_instance_made_outside_its_tags_move_is_left_alone(
        move_at: timedelta, store: PriceStore, tmp_path: Path) -> None:
    """Every store of a user shares the local launcher's default instances folder: an
    instance launched an hour before this store's move, or an hour after it, with its tag,
    is another store's."""
    from launchers.local import LocalLauncher

    local = LocalLauncher(tmp_path / "instances", grace_seconds=1, poll_seconds=0.1)
    here = Offering("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "V100", 1)
    job, move = a_move(store, [here], "local", at=NOW + move_at)
    theirs = launch(local, job, move.attempt, here)
    store.moves.advance(move, "failed", at=NOW + move_at, tried=1)
    try:
        assert local.status(theirs.id).created_at is not None
        assert sweeping.sweep(store, local, at=LATER + timedelta(hours=2)) == []
        assert local.status(theirs.id).live
    finally:
        local.terminate(theirs.id)


def test_the_places_swept_are_those_of_live_jobs_and_of_recent_moves(
        store: PriceStore) -> None:
    month_ago = NOW - timedelta(days=30)
    old_live, move = a_move(store, [GCP], "gcp", at=month_ago)
    store.moves.advance(move, "done", at=month_ago)
    store.jobs.transition(old_live, "running", at=month_ago)
    old_ended, move = a_move(store, [EAST], "aws", at=month_ago)
    store.moves.advance(move, "failed", at=month_ago, tried=1)
    store.jobs.transition(old_ended, "failed", at=month_ago)
    assert sweeping.places_to_sweep(store, NOW - sweeping.LOOKBACK) == {
        "gcp": {("gcp", "us-central1")}}
    a_move(store, [EAST], "clouds")
    assert sweeping.places_to_sweep(store, NOW - sweeping.LOOKBACK) == {
        "gcp": {("gcp", "us-central1")}, "clouds": {("aws", "us-east-1")}}
