"""A cloud that fails a call for another reason than capacity or quota (`CloudError`, made
here by `launchers.cloud_errors` from the SDKs' own exceptions): a transient failure tries
the next offering, a permission skips every offering of that cloud and fails the job with
the fix when none is left, a create whose answer was lost is looked for by its attempt tag
(adopted; never a second instance), and a move whose cloud cannot be asked waits for its
next step, said once in the job's log. Through one move and through a batch of moves."""

from __future__ import annotations

from dataclasses import replace

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, ReadTimeoutError

from costsched.migration.launcher import CloudError, Instance, LaunchSpec
from costsched.migration.machine import WAIT_NOTE, candidate, run_many
from costsched.model import Offering
from costsched.store import PriceStore
from launchers.cloud_errors import cloud_error
from tests.costsched.migration.test_edges import T0, FakeLauncher, mover, new_job


def spot(region: str, zone: str, cloud: str = "aws") -> Offering:
    return Offering(cloud, region, zone, "p3.2xlarge", "spot", "V100", 1)


EAST_A, EAST_B, WEST = (spot("us-east-1", "us-east-1a"), spot("us-east-1", "us-east-1b"),
                        spot("us-west-2", "us-west-2a"))
GCP = Offering("gcp", "us-central1", "us-central1-a", "n1-standard-8+1xnvidia-tesla-v100",
               "spot", "V100", 1)


def client_error(code: str, status: int = 400) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": f"{code} said\nby EC2"},
                        "ResponseMetadata": {"HTTPStatusCode": status}}, "RunInstances")


def aws(exc: Exception) -> CloudError:
    found = cloud_error("aws", "us-east-1a: launch p3.2xlarge", exc)
    assert found is not None
    return found


UNREACHABLE = aws(EndpointConnectionError(endpoint_url="https://ec2.us-east-1.amazonaws.com/"))
THROTTLED = aws(client_error("RequestLimitExceeded", 503))
DENIED = aws(client_error("UnauthorizedOperation", 403))
LOST = aws(ReadTimeoutError(endpoint_url="https://ec2.us-east-1.amazonaws.com/"))


class FailingCloud(FakeLauncher):
    """The fake launcher, whose launches in `failing` zones raise the given CloudError (once
    each when `once`); with `creates`, the failed launch made its instance first (its
    answer was lost), listed at once unless `lagging` (until the next launch). `pending`:
    instances start pending. `blind`: the calls to `instances` (by their order, from 0)
    that fail as unreachable."""

    def __init__(self, failing: dict[str, CloudError], once: bool = False,
                 creates: bool = False, lagging: bool = False, pending: bool = False
                 ) -> None:
        super().__init__()
        self.failing, self.once, self.creates = dict(failing), once, creates
        self.lagging, self.pending = lagging, pending
        self.hidden: set[str] = set()
        self.blind: set[int] = set()
        self.looks = 0

    def launch(self, spec: LaunchSpec) -> Instance:
        self.hidden.clear()  # what an earlier call made is listed by now
        error = self.failing.get(spec.offering.zone)
        if error is None:
            made = super().launch(spec)
        elif self.creates:
            made = super().launch(spec)  # made, its answer lost
            if self.lagging:
                self.hidden.add(made.id)
        else:
            self.calls.append(("launch", spec.offering.zone))
        if error is not None:
            if self.once:
                del self.failing[spec.offering.zone]
            raise error
        if self.pending:
            self.set(made.id, "pending")
        return self.states[made.id]

    def instances(self, job_id: int | None = None) -> list[Instance]:
        self.looks += 1
        if self.looks - 1 in self.blind:
            raise UNREACHABLE
        return [i for i in super().instances(job_id) if i.id not in self.hidden]


def launches(launcher: FakeLauncher) -> list[str]:
    return [zone for kind, zone in launcher.calls if kind == "launch"]


def test_a_transient_failure_tries_the_next_offering(store: PriceStore) -> None:
    launcher = FailingCloud({"us-east-1a": THROTTLED})
    job = new_job(store)
    move = store.moves.create(job, "launch", [candidate(o, 1.0) for o in (EAST_A, EAST_B,
                                                                          WEST)], at=T0)
    done = mover(store, launcher, job).run(move)
    # Throttling is the region's (EC2 counts requests per region): us-east-1b is skipped.
    assert (done.state, done.tried) == ("done", 2)
    assert launches(launcher) == ["us-east-1a", "us-west-2a"]
    assert store.jobs.get(job).state == "running"
    [said] = [d for d in store.jobs.events(job)["detail"] if "throttled" in d]
    assert said == ("move 1 (launch): cannot launch: aws us-east-1a: launch p3.2xlarge "
                    "(RunInstances): throttled by the cloud's API (RequestLimitExceeded: "
                    "RequestLimitExceeded said by EC2)")
    # Not the offering's capacity: nothing is recorded against it.
    assert store.availability.since()["event"].tolist() == ["launched"]


def test_a_permission_skips_the_clouds_offerings_and_fails_the_job_with_the_fix(
        store: PriceStore) -> None:
    launcher = FailingCloud({"us-east-1a": DENIED})
    job = new_job(store)
    move = store.moves.create(job, "launch", [candidate(o, 1.0) for o in (EAST_A, WEST, GCP)],
                              at=T0)
    done = mover(store, launcher, job).run(move)
    assert (done.state, done.tried) == ("done", 2)  # another cloud's offering starts
    assert launches(launcher) == ["us-east-1a", "us-central1-a"]

    launcher = FailingCloud({"us-east-1a": DENIED})
    job = store.jobs.create("j2", {}, 1000.0, at=T0)
    move = store.moves.create(job, "launch", [candidate(o, 1.0) for o in (EAST_A, WEST)],
                              at=T0)
    done = mover(store, launcher, job).run(move)
    assert (done.state, done.tried) == ("failed", 2) and launches(launcher) == ["us-east-1a"]
    record = store.jobs.get(job)
    assert record.state == "failed"
    events = store.jobs.events(job)
    [why] = events.loc[(events["kind"] == "state") & (events["to_state"] == "failed"),
                       "detail"]
    assert why == ("no offering could be launched; aws us-east-1a: launch p3.2xlarge "
                   "(RunInstances): not allowed (UnauthorizedOperation: UnauthorizedOperation "
                   "said by EC2); allow it to the AWS identity costsched uses (its IAM "
                   "policy); `costsched check` says what each cloud can do from here")
    assert store.jobs.placements(job).empty


def test_a_create_whose_answer_was_lost_is_found_by_its_tag_not_made_again(
        store: PriceStore) -> None:
    launcher = FailingCloud({"us-east-1a": LOST}, creates=True)
    job = new_job(store)
    move = store.moves.create(job, "launch", [candidate(o, 1.0) for o in (EAST_A, WEST)],
                              at=T0)
    done = mover(store, launcher, job).run(move)
    assert (done.state, done.tried) == ("done", 0)  # adopted where it was made
    assert launches(launcher) == ["us-east-1a"] and len(launcher.states) == 1
    assert store.jobs.placements(job)["zone"].tolist() == ["us-east-1a"]


def test_a_lost_create_the_cloud_cannot_be_asked_about_waits_then_is_found(
        store: PriceStore) -> None:
    launcher = FailingCloud({"us-east-1a": LOST}, once=True, creates=True)
    launcher.blind = {1}  # the look before the launch sees; the one after it cannot
    job = new_job(store)
    move = store.moves.create(job, "launch", [candidate(o, 1.0) for o in (EAST_A, WEST)],
                              at=T0)
    waiting = mover(store, launcher, job).run(move)
    assert (waiting.state, waiting.tried, waiting.target_instance) == (
        "checkpoint_verified", 0, "")
    assert store.jobs.get(job).state == "launching" and store.jobs.placements(job).empty
    note = store.jobs.last_details([job], WAIT_NOTE)[job]
    assert note.startswith("cannot launch: aws us-east-1a: launch p3.2xlarge: no answer in "
                           "time or the connection dropped, the request may have been "
                           "carried out (ReadTimeoutError: ")
    assert note.endswith("cannot tell whether it started an instance (cannot reach the "
                         "cloud's API (EndpointConnectionError: Could not connect to the "
                         "endpoint URL: \"https://ec2.us-east-1.amazonaws.com/\")): asked "
                         "again at the next pass")
    # The next pass sees the instance the lost answer made: adopted, not made again.
    done = mover(store, launcher, job).run(store.moves.get(move.id))
    assert (done.state, done.tried) == ("done", 0)
    assert len(launcher.states) == 1 and launches(launcher) == ["us-east-1a"]


def test_a_move_the_cloud_cannot_answer_about_waits_and_says_so_once(
        store: PriceStore) -> None:
    launcher = FailingCloud({})
    job = new_job(store)
    move = store.moves.create(job, "launch", [candidate(EAST_A, 1.0)], at=T0)
    launcher.states["i-pending"] = Instance("i-pending", job, move.attempt, EAST_A.key,
                                            "pending")
    moved = mover(store, launcher, job).run(move)
    assert moved.state == "target_launched" and moved.target_instance == "i-pending"
    original = launcher.status

    def status(instance_id: str) -> Instance:
        raise THROTTLED

    launcher.status = status  # type: ignore[method-assign]
    for _ in range(3):  # three passes: the move waits, said once
        assert mover(store, launcher, job).run(store.moves.get(move.id)).state == \
            "target_launched"
    events = store.jobs.events(job)
    assert (events["kind"] == WAIT_NOTE).sum() == 1
    launcher.status = original  # type: ignore[method-assign]
    launcher.set("i-pending", "running")
    assert mover(store, launcher, job).run(store.moves.get(move.id)).state == "done"


def test_a_migration_whose_source_cannot_be_asked_to_stop_is_given_up(
        store: PriceStore) -> None:
    launcher = FailingCloud({})
    job = new_job(store)
    first = store.moves.create(job, "launch", [candidate(EAST_A, 1.0)], at=T0)
    source = mover(store, launcher, job).run(first).target_instance

    def request_stop(instance_id: str) -> None:
        raise replace_kind(DENIED, "us-east-1: stop request")

    launcher.request_stop = request_stop  # type: ignore[method-assign]
    move = store.moves.create(job, "migration", [candidate(WEST, 1.0), candidate(EAST_A, 1.0)],
                              at=T0, source_instance=source)
    done = mover(store, launcher, job).run(move)
    assert done.state == "cancelled"
    assert store.jobs.events(job)["detail"].iloc[-1] == (
        "move 2 (migration): cannot ask the source to stop: aws us-east-1: stop request: not "
        "allowed (UnauthorizedOperation: UnauthorizedOperation said by EC2); allow it to the "
        "AWS identity costsched uses (its IAM policy); `costsched check` says what each "
        "cloud can do from here")
    assert store.jobs.get(job).state == "running"
    assert launcher.states[source].state == "running"
    assert store.jobs.placements(job)["instance"].tolist() == [source]


def replace_kind(error: CloudError, call: str) -> CloudError:
    return CloudError(error.cloud, call, error.cause, kind=error.kind, scope=error.scope,
                      fix=error.fix)


def test_an_earlier_candidates_late_instance_is_ended_when_the_move_lands(
        store: PriceStore) -> None:
    """A create that timed out where the look after it did not see it yet (the cloud's
    reads lag its writes): the move fails over, and the late instance is ended when the
    target runs."""
    launcher = FailingCloud({"us-east-1a": LOST}, creates=True, lagging=True)
    job = new_job(store)
    move = store.moves.create(job, "launch", [candidate(o, 1.0) for o in (EAST_A, WEST)],
                              at=T0)
    done = mover(store, launcher, job).run(move)
    assert (done.state, done.tried) == ("done", 1)
    late, target = launcher.states["i-0"], launcher.states["i-1"]
    assert late.state == "terminated" and target.state == "running"
    assert store.jobs.placements(job)["instance"].tolist() == ["i-1"]


@pytest.mark.parametrize("error", [THROTTLED, DENIED, UNREACHABLE],
                         ids=["throttled", "denied", "unreachable"])
def test_a_batch_of_moves_acts_on_cloud_failures_alike(store: PriceStore,
                                                       error: CloudError) -> None:
    launcher = FailingCloud({"us-east-1a": error})
    jobs = [store.jobs.create(f"j{i}", {}, 1000.0, at=T0) for i in range(3)]
    moves = [store.moves.create(j, "launch", [candidate(o, 1.0) for o in (EAST_A, EAST_B, GCP)],
                                at=T0) for j in jobs]
    done = run_many(store, [(mover(store, launcher, j), m)
                            for j, m in zip(jobs, moves, strict=True)])
    # Each skips what the error refuses too: the region's (its endpoint, its rate limit),
    # the cloud's (a permission).
    assert [(m.state, m.tried) for m in done] == [("done", 2)] * 3
    assert "us-east-1b" not in launches(launcher)
    assert {store.jobs.placements(j)["zone"].iloc[-1] for j in jobs} == {"us-central1-a"}


def test_a_waiting_move_in_a_batch_leaves_the_others_be(store: PriceStore) -> None:
    """One job's cloud cannot be asked about its instance: its move waits, the batch's
    other moves carry on."""
    launcher = FailingCloud({}, pending=True)
    jobs = [store.jobs.create(f"j{i}", {}, 1000.0, at=T0) for i in range(2)]
    moves = [store.moves.create(j, "launch", [candidate(o, 1.0)], at=T0)
             for j, o in zip(jobs, (EAST_A, WEST), strict=True)]
    original = launcher.status

    def status(instance_id: str) -> Instance:
        if launcher.states[instance_id].offering_key[2] == "us-east-1a":
            raise UNREACHABLE
        return replace(original(instance_id), state="running")

    launcher.status = status  # type: ignore[method-assign]
    done = run_many(store, [(mover(store, launcher, j), m)
                            for j, m in zip(jobs, moves, strict=True)])
    assert [m.state for m in done] == ["target_launched", "done"]
    notes = store.jobs.last_details(jobs, WAIT_NOTE)
    assert list(notes) == [jobs[0]]
    assert notes[jobs[0]].startswith("aws us-east-1a: launch p3.2xlarge: cannot reach")
    assert notes[jobs[0]].endswith("; asked again at the next pass")
