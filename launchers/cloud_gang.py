"""A gang on EC2 and Compute Engine: what both clouds' launchers share (launchers.aws_gang,
launchers.gcp_gang).

A gang of N nodes is N instances of one offering in one zone, each tagged (labelled) with
the job, the attempt, the gang and its rank, each booted with the same startup script but
for its rank. costsched knows it by one handle, `REGION/gang-<job>-<N>-<digest>` on EC2 and
`ZONE/gang-<job>-<N>-<digest>` on Compute Engine, where the digest names the (job, attempt):
a restarted costsched finds the nodes again from the handle alone.

How the nodes learn each other's addresses: every instance has its private address from
the moment the cloud accepts it (EC2's run_instances answer, Compute Engine's instance once
its insert is done), so once the launch has all N, the launcher writes them, rank 0 first,
to one small object beside the job's checkpoints:

    <checkpoint location>/gangs/<digest>.json
        {"nodes": N, "ips": ["10.0.0.5", ...], "round": 1, "paused": false}

Each node's startup script waits for it (reading the store with the instance's own role,
as the agent does for the checkpoints), then starts the agent with the gang's variables
(`launchers.gang.node_envs`: SkyPilot's and costsched's). Rank 0's agent alone publishes
checkpoints and heartbeats; every node restores the newest checkpoint and runs `setup`.
Every agent runs the job in rounds from that document (`StoreGangFile`, the rounds of
`launchers.gang_agent`), so that a lost node is replaced where it ran with the other nodes
kept (`launchers.aws_gang.repair`, `launchers.gcp_gang.repair`): the round paused, rank 0
says it left it (`<digest>.left.json`), a replacement says it is set up
(`<digest>.ready-<rank>.json`), and the next round carries the new node's address.

A gang's state is running when all N run, pending while any is starting; a node lost while
rank 0 runs keeps it running while it is replaced (`repair_view`). A node lost otherwise
(its own instance shut down), or a repair given up, ends it as one: rank 0 is asked to
checkpoint and stop first, and the gang reads as that node's end once rank 0 had
`STOP_GRACE_SECONDS` to do so (`settle`).
"""

from __future__ import annotations

import hashlib
import math
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from launchers import gang, gang_agent
from launchers.base import Instance, LaunchSpec

FOLDER = "gangs"  # beside the checkpoints: one object per gang, its nodes' addresses
TAG_GANG = "costsched-gang"  # the gang's digest, on every node
TAG_NODE = "costsched-node"  # the node's rank
TAG_NODES = "costsched-nodes"  # the gang's size
TAG_LOST = "costsched-gang-lost"  # on rank 0: when rank 0 was asked to stop for a lost node
ADDRESS_WAIT_SECONDS = 1800.0  # how long a node's startup waits for the gang's addresses
STOP_GRACE_SECONDS = 120.0  # rank 0's time to checkpoint once a node is lost
# Placement: "auto" packs a GPU gang close together (an EC2 cluster placement group, a
# Compute Engine compact placement policy) where the instance type supports it; "off" never.
PLACEMENTS = ("auto", "off")
_NAME = re.compile(r"^gang-(?P<job>\d{1,18})-(?P<nodes>\d{1,3})-(?P<digest>[0-9a-f]{12})$")
_LOST_STATES = ("preempted", "terminated", "failed", "stopped", "succeeded")
# A flex-start VM the cloud holds until it finds the capacity (a node's, a gang's detail).
FLEX_START_WAITING = "flex-start: waiting for capacity"


def nodes_of(spec: LaunchSpec) -> int:
    """The job's nodes (1 but for a gang)."""
    return gang.node_count(spec.task)


def digest(job_id: int, attempt: str) -> str:
    """Names a gang (job, attempt) in its handle, tags and objects: 12 hex digits."""
    return hashlib.sha256(f"costsched-gang:{job_id}:{attempt}".encode()).hexdigest()[:12]


def name(job_id: int, nodes: int, attempt: str) -> str:
    """The gang's part of its handle: gang-<job>-<nodes>-<digest>."""
    return f"gang-{job_id}-{nodes}-{digest(job_id, attempt)}"


def parse(gang_name: str) -> tuple[int, int, str] | None:
    """(job id, nodes, digest) of a gang name; None when `gang_name` is not one."""
    found = _NAME.match(gang_name)
    if not found:
        return None
    return int(found["job"]), int(found["nodes"]), found["digest"]


def node_payload(spec: LaunchSpec, rank: int) -> dict[str, Any]:
    """What node `rank`'s startup script is told about its gang (launchers.userdata)."""
    return {"rank": rank, "nodes": nodes_of(spec), "gpus": spec.offering.gpu_count,
            "digest": digest(spec.job_id, spec.attempt)}


# --- the gang's addresses, beside the checkpoints --------------------------------------

def _doc_store(checkpoint_uri: str) -> Any:
    from launchers.checkpoints import open_store

    return open_store(f"{checkpoint_uri.rstrip('/')}/{FOLDER}")


def publish_addresses(checkpoint_uri: str, gang_digest: str, ips: Sequence[str],
                      number: int = 1, paused: bool = False) -> None:
    """Write the gang's addresses, rank 0 first, as its round `number` (replacing any
    written before): a node lost and replaced, the gang runs a new round with the new
    node's address (`launchers.gang_agent`'s rounds; `paused` while it is replaced)."""
    from launchers.heartbeats import put_doc

    put_doc(_doc_store(checkpoint_uri), f"{gang_digest}.json",
            {"nodes": len(ips), "ips": list(ips), "round": number, "paused": paused})


def read_round(checkpoint_uri: str, gang_digest: str) -> dict[str, Any]:
    """The gang's address document as a round (`launchers.gang_agent.GangFile`'s fields):
    {} while none is written; a document written before rounds existed is round 1."""
    from launchers.heartbeats import get_doc

    doc = get_doc(_doc_store(checkpoint_uri), f"{gang_digest}.json")
    ips = doc.get("ips") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or not isinstance(ips, list):
        return {}
    number = doc.get("round", 1)
    return {"round": number if isinstance(number, int) and number > 0 else 1,
            "paused": bool(doc.get("paused")), "nodes": doc.get("nodes", len(ips)),
            "ips": list(ips)}


def read_ready(checkpoint_uri: str, gang_digest: str, rank: int) -> int:
    """The round after which replacement `rank` said it is set up and waits (0: none)."""
    from launchers.heartbeats import get_doc

    doc = get_doc(_doc_store(checkpoint_uri), f"{gang_digest}.ready-{rank}.json")
    number = doc.get("after") if isinstance(doc, dict) else None
    return number if isinstance(number, int) else 0


def read_left(checkpoint_uri: str, gang_digest: str) -> tuple[int, str]:
    """(the last round rank 0 said it left, how: "paused", or "exited" when its command
    ended by itself and its agent with it); (0, '') when none."""
    from launchers.heartbeats import get_doc

    doc = get_doc(_doc_store(checkpoint_uri), f"{gang_digest}.left.json")
    number = doc.get("round") if isinstance(doc, dict) else None
    if not isinstance(number, int):
        return 0, ""
    return number, str(doc.get("phase", ""))  # type: ignore[union-attr]


class StoreGangFile(gang_agent.GangFile):
    """The gang's rounds as a cloud node reads them: the address document beside the
    checkpoints, read again at most every `every` seconds (one small GET)."""

    def __init__(self, checkpoint_uri: str, gang_digest: str, rank: int,
                 every: float = 5.0) -> None:
        super().__init__(Path(f"{gang_digest}.json"))
        self.checkpoint_uri, self.gang_digest, self.every = checkpoint_uri, gang_digest, every
        self.rank = rank
        self._next = 0.0

    def left(self, number: int, phase: str, version: int | None = None) -> None:
        """Rank 0 says it left round `number` (its checkpoint `version` published): the
        launcher starts the next round only then (`read_left`)."""
        if self.rank != 0:
            return
        from launchers.heartbeats import put_doc

        try:
            put_doc(_doc_store(self.checkpoint_uri), f"{self.gang_digest}.left.json",
                    {"round": number, "phase": phase, "at": time.time(),
                     "version": version})
        except Exception as exc:  # noqa: BLE001 - the launcher ends the gang in time
            print(f"costsched: gang round {number}: {exc}", file=sys.stderr)

    def resume_version(self) -> int | None:
        """The checkpoint version rank 0 said it left its last round with (None: unsaid)."""
        from launchers.heartbeats import get_doc

        try:
            doc = get_doc(_doc_store(self.checkpoint_uri), f"{self.gang_digest}.left.json")
        except Exception:  # noqa: BLE001 - unread: the newest is restored, as before
            return None
        version = doc.get("version") if isinstance(doc, dict) else None
        return version if isinstance(version, int) else None

    def ready(self) -> None:
        """A replacement set up: the launcher starts the next round only then."""
        from launchers.heartbeats import put_doc

        self._next = 0.0
        after = int(self.read().get("round", 0))
        try:
            put_doc(_doc_store(self.checkpoint_uri),
                    f"{self.gang_digest}.ready-{self.rank}.json", {"after": after})
        except Exception as exc:  # noqa: BLE001 - the launcher ends the gang in time
            print(f"costsched: gang node {self.rank} ready: {exc}", file=sys.stderr)

    def read(self) -> dict:
        now = time.monotonic()
        if now >= self._next:
            self._next = now + self.every
            try:
                self._doc = read_round(self.checkpoint_uri, self.gang_digest) or self._doc
            except Exception as exc:  # noqa: BLE001 - a store that fails now may answer later
                print(f"costsched: gang round: {exc}", file=sys.stderr)
        return self._doc


def read_addresses(checkpoint_uri: str, gang_digest: str) -> list[str] | None:
    """The gang's addresses; None while they are not written (or do not read)."""
    from launchers.heartbeats import get_doc

    doc = get_doc(_doc_store(checkpoint_uri), f"{gang_digest}.json")
    ips = doc.get("ips") if isinstance(doc, dict) else None
    if not isinstance(ips, list) or not all(isinstance(ip, str) and ip for ip in ips):
        return None
    return ips


def boot_node(job: Mapping[str, Any], wait_seconds: float = ADDRESS_WAIT_SECONDS,
              step: float = 2.0) -> dict[str, str]:
    """On a node, at boot: wait for the gang's addresses, then the variables its job gets
    (SkyPilot's and costsched's). A node that waits in vain writes a failed status for
    its agent's place and exits."""
    node = job["gang"]
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            ips = read_addresses(job["checkpoint_uri"], node["digest"])
        except Exception as exc:  # noqa: BLE001 - a store that fails now may answer later
            print(f"costsched: gang addresses: {exc}", file=sys.stderr)
            ips = None
        if ips is not None and len(ips) == node["nodes"]:
            return gang.node_envs(node["rank"], node["nodes"], node["gpus"], ips)
        if time.monotonic() >= deadline:
            break
        time.sleep(step)
    from launchers.status_file import write_status

    detail = (f"node {node['rank']}: the gang's {node['nodes']} addresses did not come "
              f"within {wait_seconds:.0f} seconds")
    print(f"costsched: {detail}", file=sys.stderr)
    workdir = Path(job["workdir"])
    workdir.mkdir(parents=True, exist_ok=True)
    write_status(workdir, {"state": "failed", "exit_code": None, "checkpoint_version": None,
                           "detail": detail})
    sys.exit(1)


# --- a gang's state from its nodes' ----------------------------------------------------

def combine(nodes: Sequence[gang.NodeState], expected: int) -> tuple[str, str,
                                                                      gang.NodeState | None]:
    """(state, detail, the first lost node or None) of a gang from its nodes' states,
    ranks 0 .. expected-1 (a rank with no node is taken as lost)."""
    by_rank = {n.rank: n for n in nodes}
    lost = None
    for rank in range(expected):
        node = by_rank.get(rank)
        if node is None:
            lost = gang.NodeState(rank, "", "terminated", "no instance")
            break
        if node.state in _LOST_STATES:
            lost = node
            break
    if lost is not None:
        reason = f": {lost.detail}" if lost.detail else ""
        return lost.state, f"node {lost.rank} {lost.state}{reason}", lost
    states = {n.state for n in nodes}
    if states == {"running"}:
        return "running", f"{expected} nodes running", None
    starting = sum(1 for n in nodes if n.state != "running")
    waiting = sum(1 for n in nodes if n.detail.startswith(FLEX_START_WAITING))
    if waiting:  # said as one instance's wait is (`status` shows it)
        return "pending", f"{FLEX_START_WAITING} ({waiting} of {expected} nodes)", None
    return "pending", f"{starting} of {expected} nodes starting", None


def lost_tag(at: float | None = None) -> str:
    """The TAG_LOST value that marks when rank 0 was asked to stop (now by default)."""
    return f"{time.time() if at is None else at:.3f}"


def lost_time(tag: str) -> float | None:
    """When a TAG_LOST value says rank 0 was asked to stop; None when unset or unreadable
    (the ask is then made again)."""
    try:
        at = float(tag)
    except ValueError:
        return None
    return at if math.isfinite(at) else None


def settle(nodes: Sequence[gang.NodeState], expected: int, lost_mark: str,
           stop_rank0: Callable[[], None], mark_lost: Callable[[str], None],
           now: float | None = None) -> tuple[str, str]:
    """The gang's state, acting as a gang must when a node is lost while rank 0 runs: rank
    0 is asked to checkpoint and stop (`stop_rank0`, once: `mark_lost` keeps when, as the
    TAG_LOST value read back as `lost_mark`) and the gang reads running for
    STOP_GRACE_SECONDS, then as the lost node's end. Rank 0 lost itself (its own notice
    checkpointed it) ends the gang at once."""
    lost_at = lost_time(lost_mark)
    state, detail, lost = combine(nodes, expected)
    rank0 = next((n for n in nodes if n.rank == 0), None)
    if lost is None or lost.rank == 0 or rank0 is None or rank0.state != "running":
        return state, detail
    now = time.time() if now is None else now
    if lost_at is None:
        try:
            stop_rank0()
        except RuntimeError as exc:  # cannot reach rank 0: the gang ends at once
            return state, f"{detail}; rank 0 could not be asked to checkpoint ({exc})"
        mark_lost(lost_tag(now))
        lost_at = now
    if now - lost_at < STOP_GRACE_SECONDS:
        return "running", f"{detail}; rank 0 checkpoints before the gang ends"
    return state, f"{detail}; the gang was ended"


def instance(handle: str, job_id: int, attempt: str, key: tuple[str, ...], state: str,
             detail: str, lost_nodes: tuple[int, ...] = (),
             replacing: tuple[int, ...] = (), started: Sequence[datetime | None] = (),
             created: datetime | None = None,
             running: tuple[tuple[int, datetime | None], ...] = ()) -> Instance:
    """The gang as one Instance; `started`: when each node began running, as its cloud
    says (the gang's `started_at`: their mean, when every node says it); `created`: when
    the cloud made its rank 0 (the gang's `created_at`); `running`: the nodes that run,
    each with its start (`Instance.running_nodes`)."""
    return Instance(id=handle, job_id=job_id, attempt=attempt,  # type: ignore[arg-type]
                    offering_key=key, state=state, detail=detail,  # type: ignore[arg-type]
                    lost_nodes=lost_nodes, replacing=replacing, started_at=mean_start(started),
                    created_at=created, running_nodes=running)


def mean_start(started: Sequence[datetime | None]) -> datetime | None:
    """The mean of the nodes' start times (None unless every node says one): N nodes
    billed from each one's start cost what N are billed from their mean."""
    if not started or any(s is None for s in started):
        return None
    first = min(started)  # type: ignore[type-var]
    return first + sum((s - first for s in started), timedelta()) / len(started)  # type: ignore[operator]


# --- a lost node replaced where it ran ---------------------------------------------------

TAG_REPAIR = "costsched-gang-repair"  # on rank 0 while nodes are replaced: "ROUND AT R,R"
REPAIR_READY_SECONDS = 1800.0  # a replacement's time to boot and set up before the gang ends


def repairable(node: gang.NodeState) -> bool:
    """Whether a lost node is replaced where it ran: taken away by the cloud (preempted),
    stopped or terminated from outside; not a node whose own agent ended (its instance
    shut itself down: its job's end is the gang's)."""
    return node.state == "preempted" or (node.state in ("terminated", "stopped")
                                         and "InstanceInitiatedShutdown" not in node.detail)


def lost_ranks(nodes: Sequence[gang.NodeState], expected: int) -> tuple[int, ...]:
    """The ranks (not 0) lost in a way a repair deals with, while rank 0 runs; () when
    another node ended otherwise (the gang ends as one)."""
    by_rank = {n.rank: n for n in nodes}
    rank0 = by_rank.get(0)
    if rank0 is None or rank0.state != "running":
        return ()
    lost = []
    for rank in range(1, expected):
        node = by_rank.get(rank)
        if node is None or node.state in _LOST_STATES:
            if node is not None and not repairable(node):
                return ()
            lost.append(rank)
    return tuple(lost)


def repair_mark(number: int, at: float, ranks: Sequence[int]) -> str:
    return f"{number} {at:.3f} {','.join(str(r) for r in ranks)}"


def parse_mark(text: str) -> tuple[int, float, tuple[int, ...]] | None:
    """(round paused, when, ranks replaced) of a repair's mark; None when not one."""
    parts = text.split()
    try:
        return (int(parts[0]), float(parts[1]),
                tuple(int(r) for r in parts[2].split(",")))
    except (IndexError, ValueError):
        return None


def given_up(nodes: Sequence[gang.NodeState], lost_tag: str,
             mark: str) -> list[gang.NodeState]:
    """The nodes of a gang whose repair gave up (`lost_tag` set over a repair's `mark`):
    the nodes it replaced read as preempted (their replacements were ended), so that the
    gang ends as preempted and the job is recovered where N fit."""
    parsed = parse_mark(mark)
    if not lost_tag or parsed is None:
        return list(nodes)
    return [gang.NodeState(n.rank, n.id, "preempted",
                           "lost; no replacement could run where it ran", n.address)
            if n.rank in parsed[2] else n for n in nodes]


def repair_view(nodes: Sequence[gang.NodeState], expected: int, lost_tag: str,
                mark: str) -> tuple[str, str, tuple[int, ...], tuple[int, ...]] | None:
    """(state, detail, lost nodes, nodes being replaced) of a gang a repair deals with:
    running, while nodes are lost (to be replaced) or replaced (the gang paused); None
    when no repair is under way or due (`settle` says what the gang is)."""
    if lost_tag:  # the repair gave up: the gang ends
        return None
    rank0 = next((n for n in nodes if n.rank == 0), None)
    if rank0 is None or rank0.state != "running":
        return None
    parsed = parse_mark(mark)
    if parsed is not None:
        number, _, ranks = parsed
        names = ", ".join(str(r) for r in ranks)
        return ("running", f"node {names} replaced where it ran, the other nodes kept; the "
                f"gang resumes in round {number + 1}", (), ranks)
    lost = lost_ranks(nodes, expected)
    if not lost:
        return None
    by_rank = {n.rank: n for n in nodes}
    first = by_rank.get(lost[0])
    why = f" ({first.state}: {first.detail})" if first is not None and first.detail else ""
    names = ", ".join(str(r) for r in lost)
    return ("running", f"node {names} lost{why}: to be replaced where it ran", lost, ())


# --- placement -------------------------------------------------------------------------

# EC2 instance families a cluster placement group takes, among the GPU (and accelerator)
# ones costsched launches (EC2 User Guide, "Placement groups", rules for cluster groups).
AWS_CLUSTER_FAMILIES = frozenset({
    "p3", "p3dn", "p4d", "p4de", "p5", "p5e", "p5en", "g4dn", "g5", "g6", "g6e",
    "trn1", "trn1n", "inf2", "dl1"})
# Compute Engine machine series a compact placement policy takes, among the GPU ones
# (Compute Engine docs, "Placement policies overview": A2, A3, G2; not N1).
GCP_COMPACT_SERIES = frozenset({"a2", "a3", "g2"})


def check_placement(value: str) -> str:
    from costsched.model import InvalidInput

    if value not in PLACEMENTS:
        raise InvalidInput(f"gang placement {value!r}: expected one of "
                           f"{', '.join(PLACEMENTS)}")
    return value


def wants_placement(setting: str, spec: LaunchSpec, family: str,
                    supported: frozenset[str]) -> bool:
    """Whether the gang of `spec` is packed close together: `setting` "auto", a gang of GPU
    instances, of a family that supports it."""
    return (setting == "auto" and nodes_of(spec) > 1 and spec.offering.gpu_count > 0
            and family in supported)


def setting_from_config() -> str:
    """launch.gang_placement of the effective configuration ("auto" when unset)."""
    from costsched.config import effective

    return check_placement(effective().launch.gang_placement)
