"""The port to the launchers: the interface every backend (`launchers/`) implements, in the
spirit of a node provider:
launch an offering with a job, read an instance's state, ask the job to checkpoint and
stop, terminate, and list costsched's instances.

An instance runs the job under the agent (`launchers.agent`), which restores the job's
newest verified checkpoint, starts its command with the job contract's environment,
publishes every checkpoint the job writes to the checkpoint store, and turns a stop
request or a cloud's preemption notice into SIGTERM for the job.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar

from costsched.model import BookedOffering, InvalidInput, Offering
from costsched.redact import redact
from costsched.vocabulary import offering_label

if TYPE_CHECKING:
    from costsched.restored import Restored

# pending: asked for, not running the job yet; running: the job runs; stopped: the job
# checkpointed and exited after a stop request (the instance is still up, and billed, until
# terminated); succeeded / failed: the job exited by itself with 0 / non-zero; preempted:
# taken away by the cloud (or killed without notice); terminated: by costsched.
INSTANCE_STATES = ("pending", "running", "stopped", "succeeded", "failed", "preempted",
                   "terminated")
LIVE_STATES = ("pending", "running", "stopped")  # billed: count towards a job's instances
TAG_JOB = "costsched-job"  # tag (or label) naming the job id on every instance
TAG_ATTEMPT = "costsched-attempt"  # the launch attempt: finds an instance again after a crash
CLOCK_SKEW = timedelta(minutes=5)  # between a cloud's clock and the store's


@dataclass(frozen=True)
class LaunchSpec:
    """What to start where. `attempt` is unique per launch (a migration's or recovery's
    id), tagged on the instance, so that a costsched that crashed right after asking for an
    instance finds it again instead of launching a second one."""

    job_id: int
    job_name: str
    command: str  # the job's shell command (run by bash -c on the instance, else /bin/sh -c)
    offering: Offering
    checkpoint_uri: str  # the job's checkpoint store: a directory, s3://b/p or gs://b/p
    attempt: str
    envs: dict[str, str] = field(default_factory=dict)  # the job's own (sweep values...)
    # The job's code (launchers.codepack): the archive the agent fetches, verifies and
    # unpacks into the instance's working directory ('' when the job has no workdir), and
    # the setup commands run there once before the command.
    code_uri: str = ""
    code_sha256: str = ""
    code_size: int = 0
    setup: str = ""
    # What a SkyPilot task says beyond placement (costsched.jobspec.TaskSpec as stored:
    # ports, disk_size, disk_tier, image_id, labels, network_tier, mounts...).
    task: Mapping[str, Any] = field(default_factory=dict)
    secret_names: tuple[str, ...] = ()  # envs that are secrets: passed, never logged
    # The job's constraints.max_price: a spot request's own cap where the cloud takes one
    # (Azure's maxPrice); None: none.
    max_usd_per_hour: float | None = None
    # The capacity reservation booked capacity (a capacity block, a reservation held) is
    # launched into ('' for spot and on-demand).
    reservation: str = ""
    # The zones the job's file keeps it to (its zones, its alternatives'), in its order.
    zones: tuple[str, ...] = ()

    def zone(self, known: Sequence[str] = ()) -> str:
        """The zone its offering is started in: the first of `kept_zones`; '' where it
        keeps to none (the launcher's own choice)."""
        return next(iter(self.kept_zones(known)), "")

    def kept_zones(self, known: Sequence[str] = ()) -> list[str]:
        """The zones its offering may start in, in order: the offering's own; for one
        priced for a whole region, the zones the job keeps to there, those `known` to
        offer it (where the launcher knows some) first; [] where it keeps to none there."""
        from costsched.clouds import zones_of_region

        if self.offering.zone:
            return [self.offering.zone]
        kept = zones_of_region(self.zones, self.offering.cloud, self.offering.region)
        return [z for z in kept if z in known] + [z for z in kept if z not in known]

    @property
    def masked_names(self) -> tuple[str, ...]:
        """The variables whose values the job's log masks: its secrets, and its envs named
        like a secret (`redact.is_secret_name`) that hold a value: stored with the job in
        plain text, as `plan` and `launch` warn, but never written to a log."""
        from costsched.redact import is_secret_name

        named = [n for n, v in self.envs.items() if v and is_secret_name(str(n))]
        return tuple(dict.fromkeys([*self.secret_names, *named]))


@dataclass(frozen=True)
class Instance:
    id: str  # the backend's handle
    job_id: int
    attempt: str
    offering_key: tuple[str, str, str, str, str, str]
    state: str  # one of INSTANCE_STATES
    exit_code: int | None = None
    detail: str = ""
    step: int | None = None  # the step the job reported (its progress file); None: none
    # When the job wrote `step` (the agent reads its progress file's time); None: not said,
    # its reading is then timed when it is read.
    step_at: datetime | None = None
    phase: str = ""  # where a job that failed before running stopped (e.g. "setup")
    checkpoint_error: str = ""  # why publishing its checkpoints fails now ('' when fine)
    # Why the agent no longer looks after the job while it runs ('' when it does): its
    # process is gone, or its heartbeat stopped. Nothing publishes the job's checkpoints.
    agent: str = ""
    # A gang's nodes taken away while rank 0 runs: the others wait for their replacement
    # (`Launcher.repair_nodes`); and its nodes replaced, the gang waiting for them to be
    # set up (`repair_nodes` looks again).
    lost_nodes: tuple[int, ...] = ()
    replacing: tuple[int, ...] = ()
    # When the cloud says it began running (a gang: the mean of its nodes' starts, so that
    # its N nodes times the hours since are what they were billed); None: it does not say.
    started_at: datetime | None = None
    # A gang's nodes that run: (rank, when its cloud says it began running; None: it does
    # not say). Each node is billed from its own start (`JobStore.track_nodes`): a node
    # still waiting for capacity, or whose replacement is, is not. () for one instance.
    running_nodes: tuple[tuple[int, datetime | None], ...] = ()
    # When the cloud made it (its create was carried out; a gang: its rank 0's); None: it
    # does not say. What proves an instance is this store's launch (the sweep).
    created_at: datetime | None = None
    # The step the job had reported when its newest checkpoint here was published: where a
    # start resumes (None: the backend does not say, or nothing was published yet).
    checkpoint_step: int | None = None
    # The version of that checkpoint (None: the backend does not say): a version published
    # as the instance was lost may be newer than the one whose step it last said.
    checkpoint_version: int | None = None
    # That step read off the time its checkpoint was saved (neither its commit marker nor
    # its files' names say it): a floor of the step saved, said as "about".
    checkpoint_step_inferred: bool = False
    # When an instance that is gone (preempted, or stopped or terminated behind costsched's
    # back) was lost, where the backend knows it: its placement is charged until then, not
    # until the pass that saw it gone. None: it does not say.
    lost_at: datetime | None = None
    # When its job's command ended on it by itself (succeeded, failed), where the backend
    # knows the instance was billed no longer from then: a local instance is its agent's
    # process, over once the agent wrote its end. None: it does not say (a cloud's
    # instance runs, billed, until costsched terminates it).
    ended_at: datetime | None = None
    # Whether the job's command began running on it (False: lost in its setup); None: the
    # backend does not say.
    ran: bool | None = None
    # While it runs the job's setup (its command not begun yet), when that setup began, as
    # the instance reports it; None: not in setup, or the backend does not say.
    setup_since: datetime | None = None
    # How long its setup took, once it ended (0 for a job without one), as the instance
    # reports it; None: not ended yet, or the backend does not say.
    setup_seconds: float | None = None
    # While the job runs: how long its command has run past its setup without reporting
    # a step (its progress file), once the agent says so (`launchers.unseen`); None: it
    # reports one, has not run that long, or the backend does not say.
    no_step_after: float | None = None
    # What its agent restored when it began: the version and its step, and the newer
    # versions it skipped (damaged); None: the backend does not say (`costsched.restored`).
    # Where the job really resumed from: a recovery's or start's words are corrected by it.
    restored: Restored | None = None

    @property
    def live(self) -> bool:
        return self.state in LIVE_STATES

    def made_between(self, start: datetime, end: datetime) -> bool:
        """Whether its cloud says it was made (else started) from `start` to `end`, give
        or take CLOCK_SKEW; False when the cloud says neither. What proves an instance
        tagged as a launch of this store's is that launch's: a tag of the old form does
        not name the store (another store counts jobs and moves from 1 too), and a store
        copied whole carries its id along (`costsched.store.scope`)."""
        made = self.created_at if self.created_at is not None else self.started_at
        return made is not None and start - CLOCK_SKEW <= made <= end + CLOCK_SKEW


@dataclass(frozen=True)
class Purchased:
    """Booked capacity bought: the cloud's reservation the job is launched into, its
    confirmed start and end, and its state as the cloud says it."""

    reservation_id: str
    start: datetime
    end: datetime
    state: str = ""


class CapacityError(RuntimeError):
    """The offering cannot be had now (no capacity, spot price too low, quota): try the next
    one. str() is one line naming the offering and the provider's reason."""

    def __init__(self, offering: Offering, reason: str) -> None:
        self.offering = offering
        self.reason = reason
        where = offering_label(offering.cloud, offering.region, offering.zone,
                               offering.instance_type, offering.market)
        super().__init__(f"{where}: {reason}")


class QuotaError(CapacityError):
    """The account's quota does not hold the offering: no other offering under the same
    quota will start either. `quota`: the quota's code where the cloud's answer names it
    ('' where it does not: `costsched.clouds.quotas` says which the offering draws on);
    `instances`: how many of the offering's instances were asked for."""

    def __init__(self, offering: Offering, reason: str, quota: str = "",
                 instances: int = 1) -> None:
        super().__init__(offering, reason)
        self.quota = quota
        self.instances = instances


class CloudError(RuntimeError):
    """A cloud's API failed a call for a reason other than capacity, quota or bad input
    (`launchers.cloud_errors` tells which from the SDK's exception). `kind`:

    - "transient": the network, a timeout, throttling, a 5xx: the same call may work later;
    - "denied": a permission, or credentials refused or expired: the user acts (`fix`);
    - "refused": another answer of the cloud, or an SDK's unexpected failure.

    `scope`: the offerings the same error would refuse too: "cloud" (every one of the
    cloud: its credentials, a permission, an endpoint of the whole cloud), "region" (the
    region's: its endpoint, its rate limit) or "offering". `sent`: the request may have
    been carried out although its answer was lost (a timeout or a dropped connection after
    it was sent, a 5xx): what a create may have made is looked for by its tags before
    anything else is tried. str() is one line: the cloud, the call, the cause and the fix,
    never a secret."""

    KINDS = ("transient", "denied", "refused")
    SCOPES = ("cloud", "region", "offering")

    def __init__(self, cloud: str, call: str, cause: str, *, kind: str,
                 scope: str = "offering", sent: bool = False, fix: str = "") -> None:
        if kind not in self.KINDS or scope not in self.SCOPES:
            raise ValueError(f"cloud error kind {kind!r} / scope {scope!r}")
        self.cloud, self.call, self.kind, self.scope, self.sent = cloud, call, kind, scope, sent
        self.cause = redact(" ".join(cause.split()))
        self.fix = redact(" ".join(fix.split()))
        super().__init__(f"{cloud} {call}: {self.cause}" + (f"; {self.fix}" if self.fix else ""))

    @property
    def transient(self) -> bool:
        return self.kind == "transient"

    def after_create(self) -> CloudError:
        """This error, raised after a create call that succeeded (the create was carried
        out: `sent`)."""
        return CloudError(self.cloud, self.call, self.cause, kind=self.kind, scope=self.scope,
                          sent=True, fix=self.fix)

    def refuses(self, failed: Offering, other: Offering) -> bool:
        """Whether this error, met launching `failed`, would refuse `other` too."""
        if self.scope == "offering" or other.cloud != failed.cloud:
            return other == failed
        return self.scope == "cloud" or other.region == failed.region


class CarryError(RuntimeError):
    """The job's checkpoint (or code) could not be copied into the store of the cloud an
    offering is on: try the next offering; the job's checkpoints stay where they were.
    str() is one line saying what and why."""


# The launcher that buys each market of booked capacity (`Launcher.purchase`).
BUYERS = {"capacity_block": "aws"}


def booked_by(offering: Offering) -> str:
    """The launcher that buys booked capacity `offering` or launches into it, whose
    restarts its plan is priced for: `BUYERS`' for a market bought ahead (a capacity
    block: aws), else its cloud's (a flex-start VM: gcp; a reservation held: its cloud)."""
    return BUYERS.get(offering.market, offering.cloud)


class Launcher(ABC):
    name: ClassVar[str]
    # Whether `status` says by itself when an instance's agent is gone (it sees the agent's
    # process); else the agent's heartbeat beside the checkpoints says it.
    sees_agents: ClassVar[bool] = False

    def check_ready(self) -> None:
        """InvalidInput (one line: what to set up) when this backend cannot be used at all
        on this machine (no credentials): asked before a launch stores anything."""
        return  # every backend can be used unless it says otherwise

    def not_ready(self) -> list[str]:
        """The clouds this backend found it cannot launch on from this machine (their
        offerings left out by `can_launch`, each said once with why); none by default."""
        return []

    @abstractmethod
    def can_launch(self, offering: Offering) -> bool:
        """Whether this backend can start `offering` (its cloud's, or any for `local`)."""

    @abstractmethod
    def launch(self, spec: LaunchSpec) -> Instance:
        """Start the job on the offering; CapacityError when the offering cannot be had."""

    def purchase(self, booked: BookedOffering, token: str, job_id: int | None) -> Purchased:
        """Buy booked capacity (a capacity block) tagged with `token`; CapacityError when it
        is no longer for sale. Backends that cannot buy any say so (InvalidInput)."""
        what = f"{booked.offering.market.replace('_', ' ')}s"
        buyer = BUYERS.get(booked.offering.market)
        raise InvalidInput(f"the {self.name} launcher cannot buy {what}: " + (
            f"the {buyer} launcher buys them (`--launcher {buyer}`), or " if buyer else "")
            + "launch it without --book")

    def purchased(self, booked: BookedOffering, token: str) -> Purchased | None:
        """What was bought under `token` already (None: nothing): asked before buying, so
        that a purchase a crash left unrecorded is found instead of made again."""
        return None

    def cannot_run(self, task: Mapping[str, Any]) -> str:
        """Why this backend cannot run a job whose task (a TaskSpec's fields) asks for
        what it lacks, in one line naming the field ('' when it can). Asked before the job
        is stored."""
        return ""

    @abstractmethod
    def status(self, instance_id: str) -> Instance:
        """The instance's state now (InvalidInput for an unknown id)."""

    @abstractmethod
    def request_stop(self, instance_id: str) -> None:
        """Ask the job to checkpoint and exit (SIGTERM through the agent); returns at once."""

    @abstractmethod
    def terminate(self, instance_id: str) -> None:
        """Stop billing: end the instance (idempotent)."""

    @abstractmethod
    def instances(self, job_id: int | None = None) -> list[Instance]:
        """costsched's instances (all jobs, or one job's), found by their tags."""

    def tagged(self, places: Collection[tuple[str, str]] = ()) -> list[Instance]:
        """costsched's instances of every job, for the sweep of those no job owns
        (`costsched.service.jobs.sweep`): `places`, the (cloud, region) pairs launches were
        tried in, are looked at besides wherever this backend looks already."""
        return self.instances()

    def statuses(self, instance_ids: Sequence[str]) -> dict[str, Instance]:
        """The state now of each of `instance_ids` (those the backend knows; an unknown id
        is left out). Backends answer in as few calls as they can; this default asks one
        at a time."""
        found = {}
        for instance_id in instance_ids:
            try:
                found[instance_id] = self.status(instance_id)
            except InvalidInput:
                continue
        return found

    def recover_agent(self, instance_id: str) -> bool:
        """For an instance whose `agent` says it is gone: publish what the job checkpointed
        since, have the job checkpoint and stop, and leave the instance "stopped", to be
        relaunched from its newest checkpoint (`launchers.agent_recovery`). False when this
        backend cannot reach inside its instances to do so (the job is then left running,
        and its status says the agent is gone)."""
        return False

    def repair_nodes(self, instance_id: str, spec: LaunchSpec) -> str:
        """For a gang whose `lost_nodes` are gone while rank 0 runs: pause it (rank 0
        checkpoints), replace each lost node where it ran (`spec`: the job as launched
        there), and resume it on N nodes once they are set up (`replacing` until then:
        called again, it looks again), keeping the nodes still running; what was done, in
        one line ('' when nothing was). CapacityError when a replacement cannot start
        there: the gang is then ended, and reads as preempted (the job moves)."""
        return ""

    def logs(self, instance_id: str, tail: int = 200) -> str:
        """The last `tail` lines of the job's output, where the backend keeps them."""
        return ""

    def environment(self) -> dict[str, str]:
        """What another process needs in its environment to make this launcher again by
        its name and see the same instances (the daemon a launch starts in the background)."""
        return {}
