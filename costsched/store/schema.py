"""The tables of the store: price history, job state, zone coverage (SQLAlchemy Core;
portable SQL only)."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    Unicode,
    UniqueConstraint,
    text,
)

metadata = MetaData()
# The rows the partial unique indexes hold: live jobs, unfinished moves.
LIVE_JOBS = "state NOT IN ('succeeded', 'failed', 'stopped')"
OPEN_MOVES = "state NOT IN ('done', 'failed', 'cancelled')"

# The columns that name an offering, with one type each wherever a table names one.
_OFFERING_TYPES = {
    "cloud": String(16), "region": String(64), "zone": String(64),
    "instance_type": String(128), "market": String(16), "os": String(16),
    "gpu_model": String(32), "gpu_count": Integer(),
}


def _offering_columns(*names: str) -> list[Column]:
    """Not-null columns `names` (in order) of an offering."""
    return [Column(name, _OFFERING_TYPES[name], nullable=False) for name in names]


offerings = Table(
    "offerings",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    # zone is "" where the price is regional
    *_offering_columns("cloud", "region", "zone", "instance_type", "market", "os",
                       "gpu_model", "gpu_count"),
    Column("vcpus", Integer, nullable=False),
    Column("memory_gb", Float, nullable=False),
    UniqueConstraint(
        "cloud", "region", "zone", "instance_type", "market", "os", name="uq_offering_key"
    ),
)

# One row per (offering, effective time). Times are whole seconds since the Unix epoch
# in UTC: unambiguous across SQLite and PostgreSQL, and cheap to compare and index.
prices = Table(
    "prices",
    metadata,
    Column("offering_id", Integer, ForeignKey("offerings.id"), primary_key=True),
    Column("effective_ts", BigInteger, primary_key=True),
    Column("usd_per_hour", Float, nullable=False),
    Column("source", String(128), nullable=False),
    # SQLite: one B-tree clustered on the key instead of a rowid table plus a key index.
    sqlite_with_rowid=False,
)

# Which zones offer an offering whose price is regional (GCP lists accelerators per zone).
zone_coverage = Table(
    "zone_coverage",
    metadata,
    *_offering_columns("cloud", "region", "zone", "instance_type", "market"),
    Column("first_seen_ts", BigInteger, nullable=False),
    Column("last_seen_ts", BigInteger, nullable=False),
    PrimaryKeyConstraint("cloud", "region", "zone", "instance_type", "market",
                         name="pk_zone_coverage"),
)

# --- job state ------------------------------------------------------------------------

jobs = Table(
    "jobs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(128), nullable=False),  # not unique: a job may be launched again
    Column("spec", Text, nullable=False),  # the job spec as JSON
    Column("state", String(16), nullable=False),
    Column("policy", String(32), nullable=False, server_default=""),
    Column("steps_total", Float, nullable=False),
    Column("steps_done", Float, nullable=False, server_default=text("0")),
    Column("checkpoint_location", String(1024), nullable=False, server_default=""),
    Column("checkpoint_step", Float, nullable=True),  # the newest verified checkpoint
    Column("created_ts", BigInteger, nullable=False),
    Column("updated_ts", BigInteger, nullable=False),
    Index("ix_jobs_name", "name"),
    # One live job per name (revisions 0005, 0011; PostgreSQL's WHERE: `for_postgresql`).
    Index("uq_jobs_live_name", "name", unique=True, sqlite_where=text(LIVE_JOBS)),
)

# A job on an offering over [start_ts, end_ts); end_ts is NULL while it runs there.
placements = Table(
    "placements",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("job_id", Integer, ForeignKey("jobs.id"), nullable=False),
    *_offering_columns("cloud", "region", "zone", "instance_type", "market",
                       "os", "gpu_model", "gpu_count"),
    Column("start_ts", BigInteger, nullable=False),
    Column("end_ts", BigInteger, nullable=True),
    Column("usd_per_hour", Float, nullable=False),  # the stored price at start
    Column("reason", String(16), nullable=False),
    Column("instance", String(256), nullable=False, server_default=""),  # launcher's handle
    # The first and the last step the job reported here, and when (revision 0012): its
    # training time, setup left out (`JobStore.readings`).
    Column("first_step", Float, nullable=True),
    Column("first_step_ts", BigInteger, nullable=True),
    Column("last_step", Float, nullable=True),
    Column("last_step_ts", BigInteger, nullable=True),
    # Its instance waits for capacity, billed only once it runs (revision 0015: a market of
    # BILLED_FROM_RUNNING): charged nothing until then, when its start is set to that time.
    Column("waiting", Boolean, nullable=False, server_default=text("false")),
    # How long its setup took, as its instance reported it with its first step reading
    # (revision 0021); NULL where it did not say.
    Column("setup_seconds", Float, nullable=True),
    Index("ix_placements_job_start", "job_id", "start_ts"),
)

# A node of a gang placement that was not running, so not billed, over [start_ts, end_ts]
# (revision 0017; end_ts NULL while it still is not: to the placement's end): a node of a
# flex-start gang that waits for capacity while a peer runs, or whose replacement does.
# The placement is charged each of its nodes over its own span, less these.
node_gaps = Table(
    "node_gaps",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("placement_id", Integer, ForeignKey("placements.id"), nullable=False),
    Column("rank", Integer, nullable=False),
    Column("start_ts", BigInteger, nullable=False),
    Column("end_ts", BigInteger, nullable=True),
    Index("ix_node_gaps_placement", "placement_id"),
)

# What a job's plan predicted when it was launched, kept beside what then happened
# (`costsched report`'s estimate versus actual); one row per job. `flagged_ts`: when its
# measured speed was first found beyond the flagging factor of `steps_per_second`.
job_predictions = Table(
    "job_predictions",
    metadata,
    Column("job_id", Integer, ForeignKey("jobs.id"), primary_key=True),
    Column("predicted_ts", BigInteger, nullable=False),
    Column("model", String(256), nullable=False),
    *_offering_columns("cloud", "region", "zone", "instance_type", "market",
                       "gpu_model", "gpu_count"),
    Column("usd_per_hour", Float, nullable=False),
    Column("steps", Float, nullable=False),
    Column("steps_per_second", Float, nullable=False),
    Column("throughput_source", Text, nullable=False, server_default=""),
    Column("expected_hours", Float, nullable=False),
    Column("expected_usd", Float, nullable=False),
    Column("expected_preemptions", Float, nullable=False),
    Column("flagged_ts", BigInteger, nullable=True),
)

# The decider's latest decision on each job (revision 0018; one row per job, replaced at
# each pass that decides it): on which placement, when, by whom (the supervisor, a daemon,
# `costsched migrate`), whether it moves and where to, the expected dollars of the rest of
# the job staying and moving (NULL where not a number), the move it started, and why.
job_decisions = Table(
    "job_decisions",
    metadata,
    Column("job_id", Integer, ForeignKey("jobs.id"), primary_key=True),
    Column("placement_id", Integer, nullable=False),
    Column("decided_ts", BigInteger, nullable=False),
    Column("decided_by", String(64), nullable=False),
    Column("moves", Boolean, nullable=False),
    Column("choice", String(512), nullable=False, server_default=""),
    Column("stay_usd", Float, nullable=True),
    Column("move_usd", Float, nullable=True),
    Column("move_id", Integer, nullable=True),
    Column("reason", Text, nullable=False, server_default=""),
)

# Append-only: rows are inserted, never updated or deleted.
job_events = Table(
    "job_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("job_id", Integer, ForeignKey("jobs.id"), nullable=False),
    Column("ts", BigInteger, nullable=False),
    Column("kind", String(32), nullable=False),
    Column("from_state", String(24), nullable=True),  # a job's or a move's state
    Column("to_state", String(24), nullable=True),
    Column("detail", Text, nullable=False, server_default=""),
    Index("ix_job_events_job", "job_id", "id"),
)

# A launch, migration, recovery or start of a job in progress: the job-move state machine's
# persisted state (costsched.migration), so that a crash resumes it where it was.
moves = Table(
    "moves",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("job_id", Integer, ForeignKey("jobs.id"), nullable=False),
    Column("kind", String(16), nullable=False),  # launch | migration | recovery | start
    Column("state", String(24), nullable=False),
    Column("source_instance", String(256), nullable=False, server_default=""),
    Column("candidates", Text, nullable=False),  # JSON: the offerings to try, in order
    Column("tried", Integer, nullable=False, server_default=text("0")),  # candidates failed
    Column("target_instance", String(256), nullable=False, server_default=""),
    Column("checkpoint_version", Integer, nullable=True),
    Column("detail", Text, nullable=False, server_default=""),
    Column("created_ts", BigInteger, nullable=False),
    Column("updated_ts", BigInteger, nullable=False),
    # The id of the store that created it (`store_identity`; '' for a move stored before
    # revision 0016): the first part of its launches' attempt tags.
    Column("scope", String(16), nullable=False, server_default=""),
    Index("ix_moves_job", "job_id", "id"),
    # One unfinished move per job (revision 0005; PostgreSQL's WHERE: `for_postgresql`).
    Index("uq_moves_open_per_job", "job_id", unique=True, sqlite_where=text(OPEN_MOVES)),
)

SCOPE_BYTES = 5  # a store's id: 10 lowercase hex digits, valid in every cloud's names and tags

# The store's id (one row, made once by revision 0016): what tells its launches from those
# of another store using the same cloud account (`costsched.store.scope`).
store_identity = Table(
    "store_identity",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("scope", String(16), nullable=False),
)

# What launching taught about an offering's availability: a capacity error, a preemption,
# a launch that ran. The launch ranking and the preemption rates read it.
availability = Table(
    "availability",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    *_offering_columns("cloud", "region", "zone", "instance_type", "market",
                       "gpu_model", "gpu_count"),
    Column("ts", BigInteger, nullable=False),
    Column("event", String(16), nullable=False),  # capacity | preempted | launched
    Column("detail", Text, nullable=False, server_default=""),
    # '' a cloud's own instance; 'local': one the local launcher ran standing in for the
    # offering, never counted as the cloud's (revision 0019)
    Column("source", String(16), nullable=False, server_default=""),
    Index("ix_availability_ts", "ts"),
)

# --- the scheduled optimizer ----------------------------------------------------------

# A named lease held by one daemon until expires_ts: a task, or a job being migrated.
leases = Table(
    "leases",
    metadata,
    Column("name", String(128), primary_key=True),
    Column("holder", String(128), nullable=False),
    Column("expires_ts", BigInteger, nullable=False),
)

# One row per scheduled task run (or skip: its lease was held elsewhere).
task_runs = Table(
    "task_runs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("task", String(32), nullable=False),
    Column("holder", String(128), nullable=False),
    Column("started_ts", BigInteger, nullable=False),
    Column("finished_ts", BigInteger, nullable=True),
    Column("status", String(16), nullable=False),  # running | ok | failed | skipped
    Column("detail", Text, nullable=False, server_default=""),
    Index("ix_task_runs_task", "task", "id"),
)

# The daemon's schedule, in the layout of APScheduler 3's SQLAlchemyJobStore (which reads
# and writes it). Made with the schema, under the upgrade's lock: daemons starting at once
# on a new PostgreSQL store would otherwise race to create it, and one would fail.
scheduler_jobs = Table(
    "apscheduler_jobs",
    metadata,
    Column("id", Unicode(191), primary_key=True),
    Column("next_run_time", Float(25), index=True),
    Column("job_state", LargeBinary, nullable=False),
)

# One row per daemon running now (each `costsched daemon` process, and the supervisor a
# launch starts): who it is, how it was started, where it logs, its heartbeat and its last
# look at the running jobs. Removed when it stops; a row whose process is gone is ignored.
daemons = Table(
    "daemons",
    metadata,
    Column("holder", String(128), primary_key=True),  # its leases' holder: host:pid:tag
    Column("host", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("kind", String(16), nullable=False),  # auto | installed | service
    Column("tasks", String(64), nullable=False),  # the scheduled tasks it runs
    Column("watch_seconds", Float, nullable=False),  # 0: it does not watch
    Column("log", String(1024), nullable=False, server_default=""),
    Column("started_ts", BigInteger, nullable=False),
    Column("seen_ts", BigInteger, nullable=False),  # its heartbeat
    Column("pass_ts", BigInteger, nullable=True),  # its last look at the running jobs
    Column("pass_status", String(16), nullable=False, server_default=""),  # ok | failed
    Column("pass_detail", Text, nullable=False, server_default=""),
    # Seconds between its last two passes: how long the budget watch charges ahead when
    # its passes come later than its interval (`service.jobs.watch_span`).
    Column("pass_every", Float, nullable=True),
)

# --- spot availability over time ------------------------------------------------------

# Run-length encoded: one row per interval [start_ts, end_ts) of one state of one offering.
# kind: availability (could a spot instance be obtained), preemption (was a probed
# instance running), probe (a probe log's instance lifetimes and creation failures).
spot_availability = Table(
    "spot_availability",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    *_offering_columns("cloud", "region", "zone", "instance_type", "market",
                       "gpu_model", "gpu_count"),
    Column("start_ts", BigInteger, nullable=False),
    Column("end_ts", BigInteger, nullable=False),
    Column("available", Boolean, nullable=False),
    Column("kind", String(16), nullable=False),
    Column("source", String(256), nullable=False),
    UniqueConstraint("cloud", "region", "zone", "instance_type", "market", "kind", "source",
                     "start_ts", "available", name="uq_spot_availability_key"),
    Index("ix_spot_availability_zone_start", "zone", "start_ts"),
)

# --- published spot risk signals and throughputs measured by costsched ----------------

# One row per observation of a published signal: an AWS Spot Instance Advisor bucket
# (kind "advisor", value = the bucket's index), an EC2 spot placement score ("placement",
# 1-10), an Azure spot eviction-rate bucket ("eviction", value = the bucket's index).
# zone is "" where the signal is regional. History is kept: rows are only added.
risk_signals = Table(
    "risk_signals",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    *_offering_columns("cloud", "region", "zone", "instance_type", "os"),
    Column("kind", String(16), nullable=False),
    Column("value", Float, nullable=False),
    Column("label", String(32), nullable=False),
    Column("observed_ts", BigInteger, nullable=False),
    Column("source", String(256), nullable=False),
    UniqueConstraint("cloud", "region", "zone", "instance_type", "os", "kind", "observed_ts",
                     "source", name="uq_risk_signals_key"),
    Index("ix_risk_signals_observed", "observed_ts"),
)

# Steps per second a job reached on one placement, from its progress records. A row
# forgotten by the user keeps its placement so that it is not learned again.
measured_throughputs = Table(
    "measured_throughputs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("model", String(256), nullable=False),
    *_offering_columns("gpu_model", "gpu_count"),
    Column("precision", String(8), nullable=False),
    Column("steps_per_second", Float, nullable=False),
    Column("steps", Float, nullable=False),
    Column("seconds", Float, nullable=False),
    Column("measured_ts", BigInteger, nullable=False),
    Column("instance", String(256), nullable=False, server_default=""),
    Column("job_id", Integer, nullable=False),
    Column("placement_id", Integer, nullable=False),
    Column("forgotten", Boolean, nullable=False, server_default=text("false")),
    UniqueConstraint("placement_id", name="uq_measured_throughputs_placement"),
    Index("ix_measured_throughputs_model", "model", "gpu_model", "gpu_count"),
)

# --- the clouds' bills ------------------------------------------------------------------

# One row per billed line item read from a cloud's billing export (costsched.bills), with the
# placement it was matched to (placement_id NULL: unmatched, kept and counted). line_key is
# the line's identity within its cloud: re-importing an export replaces, never adds.
bill_lines = Table(
    "bill_lines",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("cloud", String(16), nullable=False),
    Column("account", String(128), nullable=False, server_default=""),
    Column("source", String(1024), nullable=False),
    Column("line_key", String(128), nullable=False),
    Column("usage_start_ts", BigInteger, nullable=False),
    Column("usage_end_ts", BigInteger, nullable=False),
    Column("resource_id", String(512), nullable=False, server_default=""),
    Column("category", String(16), nullable=False),
    Column("line_type", String(64), nullable=False, server_default=""),
    Column("service", String(128), nullable=False, server_default=""),
    Column("usage_type", String(256), nullable=False, server_default=""),
    Column("region", String(64), nullable=False, server_default=""),
    Column("usage_amount", Float, nullable=False, server_default=text("0")),
    Column("usage_unit", String(32), nullable=False, server_default=""),
    Column("usd", Float, nullable=False),
    Column("currency", String(8), nullable=False, server_default=""),
    Column("job_tag", String(32), nullable=False, server_default=""),
    Column("attempt_tag", String(64), nullable=False, server_default=""),
    Column("placement_id", Integer, nullable=True),
    Column("job_id", Integer, nullable=True),
    Column("matched_by", String(16), nullable=False, server_default=""),
    Column("imported_ts", BigInteger, nullable=False),
    UniqueConstraint("cloud", "line_key", name="uq_bill_lines_key"),
    Index("ix_bill_lines_usage", "usage_start_ts"),
    Index("ix_bill_lines_source", "source"),
)

# --- the accounts' quotas -----------------------------------------------------------------

# The newest reading of each quota of an account that GPU instances draw on (one row per
# cloud, scope and code: a reading replaces the row), with what a launch was last refused
# under it. scope is a region, or "global" for a quota of the whole project; limit_value and
# used_value are NULL where the cloud did not say (a quota known only from a refusal).
quotas = Table(
    "quotas",
    metadata,
    Column("cloud", String(16), nullable=False),
    Column("scope", String(64), nullable=False),
    Column("code", String(128), nullable=False),
    Column("name", String(256), nullable=False, server_default=""),
    Column("unit", String(16), nullable=False),
    Column("account", String(128), nullable=False, server_default=""),
    Column("limit_value", Float, nullable=True),
    Column("used_value", Float, nullable=True),
    Column("observed_ts", BigInteger, nullable=True),
    Column("source", String(256), nullable=False, server_default=""),
    Column("refused_value", Float, nullable=True),  # what the refused launch asked for
    Column("refused_ts", BigInteger, nullable=True),
    Column("refused_detail", Text, nullable=False, server_default=""),
    PrimaryKeyConstraint("cloud", "scope", "code", name="pk_quotas"),
)

# How each cloud's quotas were last read: when, how many, and why not (a missing
# permission, no credentials), in one line.
quota_reads = Table(
    "quota_reads",
    metadata,
    Column("cloud", String(16), primary_key=True),
    Column("read_ts", BigInteger, nullable=False),
    Column("quotas", Integer, nullable=False, server_default=text("0")),
    Column("error", Text, nullable=False, server_default=""),
    Column("fix", Text, nullable=False, server_default=""),
)

# --- capacity booked ahead ----------------------------------------------------------------

# Booked capacity offered (revision 0013): EC2 Capacity Block offerings and the
# reservations an account holds, one row per offering id, refreshed when seen again
# (`observed_ts`: its age). Times in whole UTC epoch seconds.
booked_offerings = Table(
    "booked_offerings",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    *_offering_columns("cloud", "region", "zone", "instance_type", "market", "os",
                       "gpu_model", "gpu_count"),
    Column("offering_id", String(128), nullable=False),
    Column("instance_count", Integer, nullable=False),
    Column("start_ts", BigInteger, nullable=False),
    Column("end_ts", BigInteger, nullable=False),
    Column("upfront_usd", Float, nullable=False),  # all instances, the whole duration
    Column("usd_per_hour", Float, nullable=False, server_default=text("0")),
    Column("currency", String(8), nullable=False, server_default="USD"),
    Column("tenancy", String(16), nullable=False, server_default=""),
    Column("wait_hours", Float, nullable=False, server_default=text("0")),
    Column("observed_ts", BigInteger, nullable=False),
    Column("source", String(256), nullable=False),
    UniqueConstraint("cloud", "market", "offering_id", name="uq_booked_offerings_id"),
    Index("ix_booked_offerings_start", "start_ts"),
)

# A booking costsched made (or is making) for a job: recorded as "purchasing" under a
# unique token before the cloud is asked, so that a crash between the two is resolved by
# finding the purchase by its token (tagged on it), never by buying again.
bookings = Table(
    "bookings",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("token", String(64), nullable=False),
    Column("job_id", Integer, nullable=True),
    *_offering_columns("cloud", "region", "zone", "instance_type", "market", "os",
                       "gpu_model", "gpu_count"),
    Column("offering_id", String(128), nullable=False),
    Column("instance_count", Integer, nullable=False),
    Column("start_ts", BigInteger, nullable=False),
    Column("end_ts", BigInteger, nullable=False),
    Column("upfront_usd", Float, nullable=False),
    # purchasing | scheduled | active | ended | failed
    Column("state", String(16), nullable=False),
    Column("reservation_id", String(128), nullable=False, server_default=""),
    Column("detail", Text, nullable=False, server_default=""),
    Column("created_ts", BigInteger, nullable=False),
    Column("updated_ts", BigInteger, nullable=False),
    UniqueConstraint("token", name="uq_bookings_token"),
    Index("ix_bookings_job", "job_id"),
)


def for_postgresql() -> None:
    """Give the partial indexes their PostgreSQL WHERE, once a PostgreSQL store is opened
    (`database.make_engine`). Naming it in the tables above would load SQLAlchemy's
    PostgreSQL dialect in every process, a SQLite store's too (a fortieth of a second of
    CPU in each command)."""
    for table, name, where in ((jobs, "uq_jobs_live_name", LIVE_JOBS),
                               (moves, "uq_moves_open_per_job", OPEN_MOVES)):
        index = next(i for i in table.indexes if i.name == name)
        index.dialect_options["postgresql"]["where"] = text(where)
