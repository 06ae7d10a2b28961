"""A launch the account's quota refuses: recorded against that quota (not as a capacity
error), said with the quota's name and the request that lifts it, and the failover goes on
to the next offering that does not draw on the same quota; a migration still keeps its
source's offering as its last resort. Through one move and through a batch of moves."""

from __future__ import annotations

import pandas as pd

from costsched.migration.launcher import Instance, LaunchSpec, QuotaError
from costsched.migration.machine import candidate, run_many
from costsched.model import Offering
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import T0, FakeLauncher, mover, new_job


def spot(region: str, zone: str, instance_type: str = "p3.2xlarge", vcpus: int = 0) -> Offering:
    return Offering("aws", region, zone, instance_type, "spot", "V100", 1, vcpus)


class QuotaLauncher(FakeLauncher):
    """EC2 as an account whose spot P quota is used up where it launches in the `refusing`
    regions or zones."""

    def __init__(self, refusing: set[str], code: str = "MaxSpotInstanceCountExceeded",
                 named: str = "") -> None:
        super().__init__()
        self.refusing, self.code, self.named = refusing, code, named

    def launch(self, spec: LaunchSpec) -> Instance:
        if {spec.offering.region, spec.offering.zone} & self.refusing:
            self.calls.append(("launch", spec.offering.zone))
            raise QuotaError(spec.offering, f"{self.code}: Max spot instance count exceeded",
                             quota=self.named)
        return super().launch(spec)


CANDIDATES = [spot("us-east-1", "us-east-1a"), spot("us-east-1", "us-east-1b"),
              spot("us-west-2", "us-west-2a")]


def test_a_refusal_is_recorded_said_and_skips_the_offerings_under_the_same_quota(
        store: PriceStore) -> None:
    launcher = QuotaLauncher({"us-east-1"})
    job = new_job(store)
    move = store.moves.create(job, "launch", [candidate(o, 1.0) for o in CANDIDATES], at=T0)
    done = mover(store, launcher, job).run(move)
    assert done.state == "done" and done.tried == 2
    # us-east-1b draws on the same quota: not tried.
    assert [z for kind, z in launcher.calls if kind == "launch"] == ["us-east-1a", "us-west-2a"]
    assert store.jobs.placements(job)["zone"].tolist() == ["us-west-2a"]
    [quota] = store.quotas.current().to_dict("records")
    assert (quota["cloud"], quota["scope"], quota["code"], quota["unit"]) == (
        "aws", "us-east-1", "L-7212CCBC", "vCPUs")
    assert quota["refused"] == 8.0 and quota["refused_at"] == pd.Timestamp(
        T0.replace(hour=1))  # the mover's clock
    assert quota["name"] == "All P Spot Instance Requests" and pd.isna(quota["limit"])
    [said] = [d for d in store.jobs.events(job)["detail"] if "quota" in d]
    assert said.startswith("move 1 (launch): cannot launch: aws us-east-1a p3.2xlarge spot: "
                           "quota All P Spot Instance Requests (L-7212CCBC) in us-east-1 "
                           "refused 8 vCPUs "
                           "(MaxSpotInstanceCountExceeded: Max spot instance count exceeded);")
    assert said.endswith("ask for it: aws service-quotas request-service-quota-increase "
                         "--service-code ec2 --quota-code L-7212CCBC --desired-value 8 "
                         "--region us-east-1")
    # A quota is not the cloud's capacity: no capacity observation of us-east-1a.
    assert store.availability.since()["event"].tolist() == ["launched"]


def test_a_migration_keeps_its_source_as_the_last_resort(store: PriceStore) -> None:
    launcher = QuotaLauncher(set())
    job = new_job(store)
    first = store.moves.create(job, "launch", [candidate(CANDIDATES[0], 1.0)], at=T0)
    source = mover(store, launcher, job).run(first).target_instance
    launcher.refusing = {"us-east-1b"}  # the source's vCPUs are freed where it stops
    move = store.moves.create(job, "migration", [candidate(o, 1.0) for o in (
        CANDIDATES[1], CANDIDATES[0])], at=T0, source_instance=source)
    done = mover(store, launcher, job).run(move)
    assert done.state == "done" and done.tried == 1  # its own offering tried, not skipped
    assert [z for kind, z in launcher.calls if kind == "launch"][-2:] == [
        "us-east-1b", "us-east-1a"]


def test_a_quota_the_cloud_names_is_the_one_recorded(store: PriceStore) -> None:
    gpus = [Offering("gcp", "us-central1", "us-central1-a", "n1-standard-8+1xnvidia-tesla-v100",
                     "spot", "V100", 1, 8),
            Offering("gcp", "us-east1", "us-east1-c", "n1-standard-8+1xnvidia-tesla-v100",
                     "spot", "V100", 1, 8)]
    launcher = QuotaLauncher({"us-central1"}, code="QUOTA_EXCEEDED", named="GPUS_ALL_REGIONS")
    job = new_job(store)
    move = store.moves.create(job, "launch", [candidate(o, 1.0) for o in gpus], at=T0)
    done = mover(store, launcher, job).run(move)
    # The project-wide quota holds in every region: nothing is left to try.
    assert done.state == "failed" and done.tried == 2
    [quota] = store.quotas.current().to_dict("records")
    assert (quota["scope"], quota["code"], quota["unit"], quota["refused"]) == (
        "global", "GPUS_ALL_REGIONS", "GPUs", 1.0)
    # The job's failure says which quota, and the request to make.
    events = store.jobs.events(job)
    [failed] = [d for d in events.loc[events["to_state"] == "failed", "detail"]
                if d.startswith("no offering")]
    assert failed.startswith("no offering could be launched; gcp us-central1-a ")
    assert "quota GPUS_ALL_REGIONS across all regions refused 1 GPUs" in failed
    assert failed.endswith("--quota-id=GPUS-ALL-REGIONS-per-project --preferred-value=1 "
                           "--project=PROJECT_ID")


def test_a_batch_of_moves_records_its_refusals_too(store: PriceStore) -> None:
    launcher = QuotaLauncher({"us-east-1"})
    jobs = [store.jobs.create(f"j{i}", {}, 1000.0, at=T0) for i in range(2)]
    moves = [store.moves.create(j, "launch", [candidate(o, 1.0) for o in CANDIDATES], at=T0)
             for j in jobs]
    done = run_many(store, [(mover(store, launcher, j), m) for j, m in zip(jobs, moves,
                                                                         strict=True)])
    assert [m.state for m in done] == ["done", "done"]
    assert [z for kind, z in launcher.calls if kind == "launch"].count("us-east-1b") == 0
    assert store.quotas.current()["code"].tolist() == ["L-7212CCBC"]
