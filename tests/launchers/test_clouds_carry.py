"""A job moved between clouds (`--launcher clouds`) has its checkpoint and code carried into
the target cloud's store through the migration machine, and its new instance restores them
from there with its own cloud's identity only: AWS (moto S3) to Azure (the loopback Blob)
and GCS (the loopback GCS) to S3. The copied version is its manifest's, a costsched that
stops between the copy and the launch does not copy again, the egress is charged once (as
the decider priced it), a copy that fails leaves the job on its own cloud, and a cloud that
could not read the job's checkpoints is left out, said once."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from costsched import clouds
from costsched.costs import job_cost
from costsched.model import InvalidInput, Offering
from costsched.service import jobs as service
from costsched.store import PriceStore
from launchers import codepack
from launchers.base import Instance, Launcher, LaunchSpec
from launchers.checkpoints import open_store
from launchers.clouds import CloudsLauncher
from tests.conftest import hermetic_aws_env
from tests.job_folders import folder_of
from tests.launchers.checkpoints.gcs_fake import FakeGcs

moto = pytest.importorskip("moto")
SIZE = 3_000_000  # bytes of each checkpoint the job writes
NOW = datetime.now(timezone.utc).replace(microsecond=0)
PLACES = {"aws": ("us-east-1", "us-east-1a", "p3.2xlarge"),
          "azure": ("eastus", "", "Standard_NC6s_v3"),
          "gcp": ("us-central1", "us-central1-a", "n1-standard-8-v100")}


class Crash(BaseException):
    """costsched killed where it is (nothing catches it)."""


class CloudFake(Launcher):
    """One cloud's instances, played in process as an instance boots with the cloud's own
    identity: it reads the job's checkpoint store and code archive only when they are in
    its cloud's storage (a VM of one cloud has no identity in another's), restores the
    newest checkpoint and fetches the code as the agent does, or fails saying why. A stop
    request publishes a checkpoint (the job's answer to SIGTERM) and leaves it stopped."""

    name = "fake"

    def __init__(self, cloud: str, folder: Path) -> None:
        self.cloud, self.folder = cloud, folder
        self.made: dict[str, Instance] = {}
        self.specs: dict[str, LaunchSpec] = {}
        self.restored: dict[str, str] = {}  # instance -> SHA-256 of the checkpoint restored
        self.crash_once = False  # the next launch kills costsched instead
        self.ids = itertools.count(1)

    def can_launch(self, offering: Offering) -> bool:
        return offering.cloud == self.cloud

    def launch(self, spec: LaunchSpec) -> Instance:
        if self.crash_once:
            self.crash_once = False
            raise Crash
        n = next(self.ids)
        region, zone, _ = PLACES[self.cloud]
        handle = {"aws": f"{region}/i-{n:017x}", "gcp": f"{zone}/costsched-{spec.job_id}-{n}",
                  "azure": f"{region}/costsched/costsched-{spec.job_id}-{n}"}[self.cloud]
        self.specs[handle] = spec
        state, detail = self._boot(handle, spec)
        self.made[handle] = Instance(handle, spec.job_id, spec.attempt, spec.offering.key,
                                     state, detail=detail)
        return self.made[handle]

    def _boot(self, handle: str, spec: LaunchSpec) -> tuple[str, str]:
        for uri in (spec.checkpoint_uri, spec.code_uri):
            if uri and clouds.storage_cloud(uri) != self.cloud:
                return "failed", f"no identity of {self.cloud} can read {uri}"
        work = self.folder / handle.replace("/", "_")
        if spec.code_uri:
            codepack.fetch(spec.code_uri, spec.code_sha256, spec.code_size,
                           work.with_suffix(".tar.gz"))
        restored = open_store(spec.checkpoint_uri).restore(work)
        if restored is not None:
            self.restored[handle] = hashlib.sha256(
                (work / restored.name).read_bytes()).hexdigest()
        return "running", ""

    def status(self, instance_id: str) -> Instance:
        if instance_id not in self.made:
            raise InvalidInput(f"instance {instance_id}: unknown")
        return self.made[instance_id]

    def request_stop(self, instance_id: str) -> None:
        spec = self.specs[instance_id]
        checkpoint(spec.checkpoint_uri, self.folder, b"at the stop")
        self.made[instance_id] = replace(self.made[instance_id], state="stopped")

    def terminate(self, instance_id: str) -> None:
        if instance_id in self.made:
            self.made[instance_id] = replace(self.made[instance_id], state="terminated")

    def instances(self, job_id: int | None = None) -> list[Instance]:
        return [i for i in self.made.values() if job_id is None or i.job_id == job_id]


def checkpoint(uri: str, folder: Path, tag: bytes) -> str:
    """Publish a checkpoint of SIZE bytes into `uri` as the job would; its SHA-256."""
    data = (tag + b"-") * (SIZE // (len(tag) + 1)) + b"x" * (SIZE % (len(tag) + 1))
    path = folder / "checkpoint.npz"
    path.write_bytes(data)
    open_store(uri).publish(path)
    return hashlib.sha256(data).hexdigest()


def price(cloud: str, usd: float, at: datetime) -> dict:
    region, zone, size = PLACES[cloud]
    return dict(cloud=cloud, region=region, zone=zone, instance_type=size, market="spot",
                os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
                usd_per_hour=usd, effective_at=at, source="test")


def job_file(tmp_path: Path, name: str = "carried", clouds_allowed: list[str] | None = None
             ) -> Path:
    code = tmp_path / f"{name}-code"
    code.mkdir()
    (code / "train.py").write_text("print('training')\n")
    constraints: dict[str, Any] = {"markets": ["spot"]}
    if clouds_allowed:
        constraints["clouds"] = clouds_allowed
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({
        "name": name, "run": "python train.py", "workdir": str(code), "steps": 1_000_000,
        "throughputs": {"V100": 10.0}, "checkpoint": {"size_gb": SIZE / 1e9,
                                                      "interval_minutes": 30},
        "constraints": constraints}))
    return path


class OneClient:
    """A boto3 session whose S3 client is made once (making one takes half a second)."""

    def __init__(self, s3: Any) -> None:
        self.s3 = s3

    def client(self, *_: Any, **__: Any) -> Any:
        return self.s3


@pytest.fixture()
def aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Any]:
    """moto's S3 in process, with the buckets made; every S3 store shares one client."""
    hermetic_aws_env(monkeypatch, tmp_path, ("AWS_ENDPOINT_URL_S3",))
    with moto.mock_aws():
        import boto3

        s3 = boto3.client("s3", region_name="us-east-1")
        for bucket in ("ckpt-bucket", "s3-bucket"):
            s3.create_bucket(Bucket=bucket)
        monkeypatch.setattr("launchers.checkpoints.s3.new_session", lambda: OneClient(s3))
        yield s3


@pytest.fixture()
def gcs(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGcs]:
    with FakeGcs("ckpt-bucket") as fake:
        monkeypatch.setenv("STORAGE_EMULATOR_HOST", fake.url)
        yield fake


def settle(store: PriceStore, launcher: Launcher, rounds: int = 4) -> None:
    for _ in range(rounds):
        service.reconcile(store, launcher)


def setup(tmp_path: Path, cheap: str, dear: str, *fakes: str, root: str, **launched: Any
          ) -> tuple[PriceStore, CloudsLauncher, dict[str, CloudFake], Any]:
    """A store priced so that `cheap` wins, the fakes of `fakes`, one job launched."""
    backends = {c: CloudFake(c, tmp_path) for c in fakes}
    launcher = CloudsLauncher(backends)  # type: ignore[arg-type]
    store = PriceStore(f"sqlite:///{tmp_path / 'store.sqlite'}")
    start = NOW - timedelta(hours=3)
    store.ingest(pd.DataFrame([price(cheap, 0.90, start), price(dear, 1.60, start)]))
    [job] = service.launch(store, [launched.pop("path", None) or job_file(tmp_path)],
                           launcher=launcher, checkpoint_root=root, at=start)
    return store, launcher, backends, job


def move_to(store: PriceStore, launcher: CloudsLauncher, job: Any, cloud: str) -> Any:
    """`cloud`'s price falls: the move pays and starts."""
    store.ingest(pd.DataFrame([price(cloud, 0.20, NOW - timedelta(hours=1))]))
    [advice] = service.migrate(store, launcher, job.id, force=True)
    assert advice.started is not None, advice.reason
    return advice


def test_aws_to_azure_carries_the_checkpoint_once_across_a_crash_and_charges_egress_once(
        aws: Any, azure: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_LAUNCH_CHECKPOINT_ROOTS", "azure=az://ckpt/jobs")
    store, launcher, fakes, job = setup(tmp_path, "aws", "azure", "aws", "azure",
                                        root="s3://ckpt-bucket/jobs")
    home = f"s3://ckpt-bucket/jobs/{folder_of(store, job.id)}"
    [first] = fakes["aws"].made
    assert fakes["aws"].made[first].state == "running"  # it reads its own S3
    checkpoint(home, tmp_path, b"step 100")

    fakes["azure"].crash_once = True  # costsched dies right after the copy, at the launch
    with pytest.raises(Crash):
        move_to(store, launcher, job, "azure")
    [move] = store.moves.of_job(job.id)[-1:]
    assert move.state == "checkpoint_verified"
    there = f"az://ckpt/jobs/{folder_of(store, job.id)}"
    assert store.jobs.get(job.id).checkpoint_location == there  # carried before the launch
    [stopped] = open_store(home).list()[-1:]  # what the source wrote when asked to stop
    [copied] = open_store(there).list()
    assert (copied.version, copied.sha256, copied.size) == (1, stopped.sha256, SIZE)

    settle(store, launcher)  # a costsched started again carries on: no second copy
    assert open_store(there).list() == [copied]
    moved = store.moves.get(move.id)
    assert moved.state == "done"
    [target] = fakes["azure"].made
    assert fakes["azure"].made[target].state == "running"
    assert fakes["azure"].specs[target].checkpoint_uri == there
    assert fakes["azure"].specs[target].code_uri.startswith(f"{there}/code/")
    assert fakes["azure"].restored[target] == stopped.sha256  # restored from Blob
    assert fakes["aws"].made[first].state == "terminated"
    assert [c.sha256 for c in open_store(home).list()][-1] == stopped.sha256  # kept at home

    # The egress: priced once by the decider, charged once by the meter, the same dollars.
    egress = clouds.get("aws").egress.internet_usd_per_gb * SIZE / 1e9
    assert moved.candidates[0]["move"]["egress_usd"] == pytest.approx(egress)
    cost = job_cost(store, job.id, now=NOW, checkpoint_gb=SIZE / 1e9)
    assert len(cost.moves) == 1 and cost.egress_usd == pytest.approx(egress)
    events = store.jobs.events(job.id)
    carried = [e for e in events.itertuples() if e.kind == "checkpoints"]
    assert len(carried) == 1 and "copied checkpoint version 2" in carried[0].detail


def test_gcs_to_s3_carries_the_newest_checkpoint_and_the_new_instance_restores_it(
        aws: Any, gcs: FakeGcs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_LAUNCH_CHECKPOINT_ROOTS", "aws=s3://s3-bucket/jobs")
    store, launcher, fakes, job = setup(tmp_path, "gcp", "aws", "gcp", "aws",
                                        root="gs://ckpt-bucket/jobs")
    home = f"gs://ckpt-bucket/jobs/{folder_of(store, job.id)}"
    checkpoint(home, tmp_path, b"step 100")

    advice = move_to(store, launcher, job, "aws")
    settle(store, launcher)

    there = f"s3://s3-bucket/jobs/{folder_of(store, job.id)}"
    newest = open_store(home).list()[-1]
    [copied] = open_store(there).list()
    assert (copied.sha256, copied.name) == (newest.sha256, newest.name)
    assert open_store(there).verify(copied)
    [target] = fakes["aws"].made
    assert fakes["aws"].restored[target] == newest.sha256
    assert store.moves.get(advice.started.id).state == "done"
    cost = job_cost(store, job.id, now=NOW, checkpoint_gb=SIZE / 1e9)
    assert cost.egress_usd == pytest.approx(
        clouds.get("gcp").egress.internet_usd_per_gb * SIZE / 1e9)
    assert cost.egress_usd == pytest.approx(advice.decision.move.egress_usd)


def test_a_recovery_sent_to_another_cloud_carries_the_checkpoint_there(
        aws: Any, azure: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_LAUNCH_CHECKPOINT_ROOTS", "azure=az://ckpt/jobs")
    store, launcher, fakes, job = setup(tmp_path, "aws", "azure", "aws", "azure",
                                        root="s3://ckpt-bucket/jobs")
    home = f"s3://ckpt-bucket/jobs/{folder_of(store, job.id)}"
    written = checkpoint(home, tmp_path, b"before the preemption")
    [first] = fakes["aws"].made
    fakes["aws"].made[first] = replace(fakes["aws"].made[first], state="preempted")
    store.ingest(pd.DataFrame([price("azure", 0.20, NOW - timedelta(hours=1))]))

    settle(store, launcher)  # recovered where the decider says: Azure is the cheaper now

    [target] = fakes["azure"].made
    assert fakes["azure"].restored[target] == written
    there = f"az://ckpt/jobs/{folder_of(store, job.id)}"
    assert store.jobs.get(job.id).checkpoint_location == there
    [recovery] = [m for m in store.moves.of_job(job.id) if m.kind == "recovery"]
    assert recovery.state == "done"


def test_a_copy_that_fails_leaves_the_job_on_its_cloud_saying_why(
        aws: Any, azure: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_LAUNCH_CHECKPOINT_ROOTS", "azure=az://nosuch/jobs")
    store, launcher, fakes, job = setup(tmp_path, "aws", "azure", "aws", "azure",
                                        root="s3://ckpt-bucket/jobs")
    home = f"s3://ckpt-bucket/jobs/{folder_of(store, job.id)}"
    checkpoint(home, tmp_path, b"step 100")

    advice = move_to(store, launcher, job, "azure")
    settle(store, launcher)

    assert fakes["azure"].made == {}  # nothing started where it could not restore
    assert store.jobs.get(job.id).checkpoint_location == home
    assert store.jobs.get(job.id).state == "running"
    now_on = [i for i in fakes["aws"].made.values() if i.state == "running"]
    assert len(now_on) == 1 and fakes["aws"].restored[now_on[0].id] == \
        open_store(home).list()[-1].sha256  # relaunched at home, from its newest
    details = [e.detail for e in store.jobs.events(job.id).itertuples()
               if "cannot copy" in str(e.detail)]
    assert len(details) == 1 and "\n" not in details[0]
    there = f"az://nosuch/jobs/{folder_of(store, job.id)}"
    assert f"cannot copy the checkpoints of {home} to {there}" in \
        details[0] and "container nosuch does not exist" in details[0]
    assert store.moves.get(advice.started.id).state == "done"


def test_a_cloud_that_cannot_read_the_store_is_left_out_and_said_once(
        aws: Any, azure: Any, tmp_path: Path, cli: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    store, launcher, _, job = setup(tmp_path, "aws", "azure", "aws", "azure",
                                    root="s3://ckpt-bucket/jobs")
    service.launch(store, [job_file(tmp_path, "other")], launcher=launcher,
                   checkpoint_root="s3://ckpt-bucket/jobs", at=NOW - timedelta(hours=3))
    store.ingest(pd.DataFrame([price("azure", 0.05, NOW - timedelta(hours=1))]))
    monkeypatch.setattr("costsched.cli.jobs.job_launcher", lambda *_: launcher)

    shown = cli("migrate", "--dry-run", "--force", "--db", store.url)
    advice = json.loads(cli("migrate", "--dry-run", "--force", "--db", store.url,
                            "--json").stdout)

    assert shown.exit_code == 0, shown.output
    line = ("azure is left out: its instances cannot read checkpoints in aws's storage; set "
            "launch.checkpoint_roots.azure to have them carried there")
    assert shown.stdout.count("note: azure is left out") == 1  # two jobs, said once
    assert line in " ".join(shown.stdout.split())
    assert [a["moves"] for a in advice] == [False, False]  # though Azure is far cheaper
    assert [a["left_out"] for a in advice] == [[line], [line]]
    assert all(a["choice"][0] == "aws" for a in advice)
    with pytest.raises(InvalidInput, match="no cloud it allows can read its checkpoints "
                       r"\(s3://ckpt-bucket/jobs/job-0\): azure is left out"):
        service.launch(store, [job_file(tmp_path, "azure-only", ["azure"])],
                       launcher=launcher, checkpoint_root="s3://ckpt-bucket/jobs")
    assert job.id == 1
