"""The configuration's sections and keys: each one's type, default, accepted values and
the check that refuses a bad value (`costsched.config` reads them from the file and the
environment)."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import platformdirs
from pydantic import Field, field_validator

from costsched import file_limits
from costsched.clouds import storage_location_problem, storage_root_problem, storage_roots
from costsched.config.azure import AzureConfig
from costsched.config.fields import (
    EntryError,
    Fraction,
    Hours,
    Minutes,
    Number,
    Seconds,
    Section,
    checked,
    cron,
)
from costsched.model import CLOUDS, InvalidInput
from costsched.optimize.overheads import Overheads
from costsched.redact import (
    is_secret_name,
    redact_url,
    secrets_in_argv,
    secrets_in_url,
    webhook_secrets,
)
from costsched.store_limits import DEFAULT_LIMITS

if sys.version_info >= (3, 11):
    pass
else:  # pragma: no cover - Python 3.10
    pass

ENV_CONFIG = "COSTSCHED_CONFIG"
ENV_PREFIX = "COSTSCHED_"
LAUNCHERS = ("local", "aws", "gcp", "azure", "clouds")
_DEFAULT_OVERHEADS = Overheads()

# What a local job keeps of the machine's environment by default: the numeric libraries'
# kernel, thread and cache settings, and which devices and driver libraries it may use.
PASS_ENV = ("OPENBLAS_*", "GOTO_*", "OMP_*", "KMP_*", "MKL_*", "BLIS_*", "NUMEXPR_*",
            "VECLIB_MAXIMUM_THREADS", "NVPL_*", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
            "CUDA_HOME", "CUDA_PATH", "NVIDIA_*", "NCCL_*", "ROCR_VISIBLE_DEVICES",
            "HIP_VISIBLE_DEVICES", "LD_LIBRARY_PATH")
_ENV_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\*?")


def never_passed(name: str) -> bool:
    """Whether an environment variable is never given to a job from the machine, whatever
    `launch.pass_env` says: a name like a secret's (`costsched.redact`), a cloud's
    credentials, costsched's own settings."""
    from costsched.clouds import credential_envs

    return (is_secret_name(name) or name in credential_envs()
            or name.upper().startswith(ENV_PREFIX))


def passed_env(patterns: list[str] | tuple[str, ...], env: Mapping[str, str]
               ) -> dict[str, str]:
    """The variables of `env` that `patterns` (names, or prefixes ending in *) allow, less
    those `never_passed`."""
    names = {p for p in patterns if not p.endswith("*")}
    prefixes = tuple(p[:-1] for p in patterns if p.endswith("*"))
    return {k: v for k, v in env.items()
            if (k in names or (prefixes and k.startswith(prefixes))) and not never_passed(k)}


def default_path() -> Path:
    """config.toml in the platform's user config directory."""
    return Path(platformdirs.user_config_dir("costsched")) / "config.toml"


def mask_url(value: str) -> str:
    """`value` with the secrets of a URL in it masked (`costsched.redact`); other text
    unchanged."""
    return redact_url(value) if "://" in value else value


# --- the model -----------------------------------------------------------------------------


class CollectConfig(Section):
    """What `collect` fetches: clouds and regions ([] = all)."""

    clouds: list[str] = Field(default_factory=list)
    regions: list[str] = Field(default_factory=list)
    gcp_project: str | None = None

    @field_validator("clouds")
    @classmethod
    def _clouds(cls, value: list[str]) -> list[str]:
        for cloud in value:
            if cloud not in CLOUDS:
                raise ValueError(f"{cloud!r} is not a cloud: expected a list of "
                                 f"{', '.join(CLOUDS)}")
        return value

    @field_validator("regions")
    @classmethod
    def _regions(cls, value: list[str]) -> list[str]:
        from costsched.clouds import region_problem

        for region in value:
            problem = region_problem(region)
            if problem is not None:
                raise ValueError(problem)
        return value


class ScheduleConfig(Section):
    """When the daemon runs each task (5-field cron expressions)."""

    collect: str = "0 * * * *"
    replan: str = "30 * * * *"
    catalog: str = "0 5 * * 1"

    _check = field_validator("collect", "replan", "catalog")(cron)


class DaemonConfig(Section):
    """How the daemon watches running jobs between its scheduled tasks, and whether a
    launch starts one (the supervisor) when none watches the store."""

    # Seconds between looks at running jobs' instances: a preempted or dead job is
    # recovered at the next look.
    watch_seconds: Seconds = Field(30.0, gt=0, le=86400, allow_inf_nan=False)
    # A launch (and `start`) starts a supervisor in the background when no daemon watches
    # the store; off for teams that run `costsched daemon` as a service.
    autostart: bool = True
    # How long a supervisor a launch started stays once no job is left to watch.
    idle_seconds: Seconds = Field(60.0, gt=0, le=86400, allow_inf_nan=False)
    # The supervisor's (and an installed daemon's) log; None: beside the store (a SQLite
    # file's folder, else the user state directory).
    log_file: str | None = None

    @field_validator("log_file")
    @classmethod
    def _log_file(cls, value: str | None) -> str | None:
        return checked(value, lambda v: None if v.strip() and not v.endswith("/")
                        else "expected a file's path (unset: beside the store)")


class PolicyConfig(Section):
    """The policy that decides migrations, and its margin (dynamic-aware)."""

    name: str = "dynamic-aware"
    margin: Fraction = 0.05

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        from costsched.policies import POLICIES, policy_name

        try:
            return policy_name(value)
        except InvalidInput:
            raise ValueError(f"expected one of {', '.join(POLICIES)}") from None


class MigrationConfig(Section):
    """The stated cost assumptions of a move (see `costsched.optimize.overheads.Overheads`)."""

    restart_minutes: Minutes = Field(_DEFAULT_OVERHEADS.restart_minutes, ge=0,
                                   allow_inf_nan=False)
    warmup_minutes: Minutes = Field(_DEFAULT_OVERHEADS.warmup_minutes, ge=0, allow_inf_nan=False)
    transfer_gbps: Number = Field(_DEFAULT_OVERHEADS.transfer_gbps, gt=0, allow_inf_nan=False)
    overlap_minutes: Minutes = Field(_DEFAULT_OVERHEADS.overlap_minutes, ge=0,
                                   allow_inf_nan=False)
    # None = half the job's checkpoint interval.
    lost_work_minutes: Minutes | None = Field(_DEFAULT_OVERHEADS.lost_work_minutes, ge=0,
                                            allow_inf_nan=False)

    def overheads(self) -> Overheads:
        return Overheads(self.restart_minutes, self.warmup_minutes, self.transfer_gbps,
                         self.overlap_minutes, self.lost_work_minutes)


class LaunchConfig(Section):
    """Where jobs run and where their checkpoints go (None = the user data directory)."""

    launcher: Literal["local", "aws", "gcp", "azure", "clouds"] = "local"
    checkpoint_root: str | None = None  # a path, or a location in object storage
    # cloud -> ROOT: checkpoints of the jobs that run there (ROOT/job-ID-STORE; docs/moves.md)
    checkpoint_roots: dict[str, str] = Field(default_factory=dict)

    @field_validator("checkpoint_root")
    @classmethod
    def _root(cls, value: str | None) -> str | None:
        """A path, file:// URL, or a store's location checked as such ("s3:/b", "s3://"
        are typos, never a folder named "s3:")."""
        def problem(text: str) -> str | None:
            scheme = text.strip().split(":", 1)[0].lower() if ":" in text else ""
            if not text.strip():
                return "expected a path or a location in object storage (unset: the data folder)"
            if scheme in ("s3", "gs", "az", "https"):
                return storage_location_problem(text)
            return None

        return checked(value, problem)

    @field_validator("checkpoint_roots")
    @classmethod
    def _roots(cls, value: dict[str, str]) -> dict[str, str]:
        for cloud, root in value.items():
            problem = storage_root_problem(cloud, root)
            if problem:
                raise EntryError(cloud, root, problem)
        return storage_roots(value)

    max_code_mb: Number = Field(100, gt=0, allow_inf_nan=False)  # a job's packed workdir
    # A sweep making more jobs than this is refused before any job is made.
    max_sweep_jobs: int = Field(10_000, ge=1)
    # The machine's numeric and device settings a local job keeps (names, or prefixes
    # ending in *): a job then computes as it would when run by hand here. Secrets never.
    pass_env: list[str] = Field(default_factory=lambda: list(PASS_ENV))
    # A multi-node job of GPU instances on EC2 / Compute Engine: packed close together (a
    # cluster placement group, a compact placement policy) where the type allows ("auto").
    gang_placement: Literal["auto", "off"] = "auto"

    @field_validator("pass_env")
    @classmethod
    def _pass_env(cls, value: list[str]) -> list[str]:
        for name in value:
            if not _ENV_PATTERN.fullmatch(name):
                raise ValueError(f"{name!r} is not a variable name: expected names such as "
                                 "OMP_NUM_THREADS, or prefixes ending in * such as OPENBLAS_*")
            if never_passed(name.rstrip("*")) and not name.endswith("*"):
                raise ValueError(f"{name!r} is a secret or costsched's own setting: it is "
                                 "never passed to a job (give it in the job's envs)")
        return value


class CallsConfig(Section):
    """How long one call to a cloud's API may take (`costsched check`, credential helpers):
    its connection and each read, then it is given up (one attempt, no retries in check)."""

    timeout_seconds: Seconds = Field(4.0, gt=0, le=120, allow_inf_nan=False)


class NotifyConfig(Section):
    """The hook called on migrations, recoveries, failures and budget alarms."""

    command: list[str] | None = None  # argv, run without a shell
    webhook: str | None = None
    # Each hook's whole call (not each read): then the command is killed, the webhook left.
    timeout_seconds: Seconds = Field(10.0, gt=0, le=600, allow_inf_nan=False)

    @field_validator("command")
    @classmethod
    def _command(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and not value:
            raise ValueError("expected a non-empty list of argv strings, e.g. "
                             "['notify-send', 'costsched']")
        return value

    @field_validator("webhook")
    @classmethod
    def _webhook(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("expected an http:// or https:// URL")
        return value


class StoreConfig(Section):
    """How long the store is waited for: a busy store (another writer's lock) is retried for
    `busy_seconds` before the command exits 75; a PostgreSQL statement is cancelled after
    `statement_timeout_seconds` (exit 75)."""

    busy_seconds: Seconds = Field(DEFAULT_LIMITS.busy_seconds, gt=0, le=3600,
                                 allow_inf_nan=False)
    statement_timeout_seconds: Seconds = Field(DEFAULT_LIMITS.statement_timeout_seconds, gt=0,
                                              le=86_400, allow_inf_nan=False)


class PricesConfig(Section):
    """When a price is old enough for `plan` and `migrate` to say so."""

    stale_after: Hours = Field(168.0, gt=0, allow_inf_nan=False)  # 7 days


class ThroughputConfig(Section):
    """When a job's measured speed is far enough from its plan's to be flagged."""

    # Measured over planned (or planned over measured) above this is flagged.
    mismatch_factor: Number = Field(1.5, gt=1, allow_inf_nan=False)


class NamedBudget(Section):
    """A team's or project's budget: `usd` over a `period` (day and month in UTC, or the
    total); a job joins it by `constraints.budget_name`, or by carrying every one of its
    `labels` (a task's `labels:`)."""

    usd: Number = Field(gt=0, allow_inf_nan=False)
    period: Literal["day", "month", "total"] = "total"
    labels: dict[str, str] = Field(default_factory=dict)


class BudgetsConfig(Section):
    """Budgets that stop spending: the shares of a budget at which a notification is sent,
    and the named (team or project) budgets that jobs join."""

    thresholds: list[Number] = Field(default_factory=lambda: [0.5, 0.8, 1.0])
    named: dict[str, NamedBudget] = Field(default_factory=dict)
    # At a cap: stop the job, or move it to the cheapest offering that still fits what is
    # left (stopped when none does); a job's `constraints.at_cap` overrides it.
    at_cap: Literal["stop", "move"] = "stop"

    @field_validator("thresholds")
    @classmethod
    def _thresholds(cls, value: list[float]) -> list[float]:
        if any(not 0 < share <= 1 for share in value):
            raise ValueError("expected shares of the budget above 0 and at most 1, "
                             "e.g. [0.5, 0.8, 1.0]")
        return sorted(set(value))


class BillsConfig(Section):
    """The clouds' bills against costsched's estimates (`bills import`, `report --billed`)."""

    # |billed - estimated| above this share of the estimate flags a job.
    difference_threshold: Fraction = 0.05
    # A placement's billed compute rate this far from its estimate corrects the stored price.
    rate_tolerance: Fraction = 0.01
    correct_prices: bool = True


def _megabytes(kind: file_limits.FileKind) -> Any:
    return Field(kind.default_mb, gt=0, allow_inf_nan=False)


class FilesConfig(Section):
    """How large a file of each kind may be (MB), checked before it is parsed
    (`costsched.file_limits` says why each default)."""

    task_mb: Number = _megabytes(file_limits.TASK)
    import_mb: Number = _megabytes(file_limits.IMPORT)
    signals_mb: Number = _megabytes(file_limits.SIGNALS)
    throughputs_mb: Number = _megabytes(file_limits.THROUGHPUTS)


class Config(Section):
    """The effective configuration. `db` None = the default store."""

    db: str | None = None
    collect: CollectConfig = Field(default_factory=CollectConfig)
    schedule: ScheduleConfig = Field(default_factory=ScheduleConfig)
    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    migration: MigrationConfig = Field(default_factory=MigrationConfig)
    launch: LaunchConfig = Field(default_factory=LaunchConfig)
    notify: NotifyConfig = Field(default_factory=NotifyConfig)
    store: StoreConfig = Field(default_factory=StoreConfig)
    daemon: DaemonConfig = Field(default_factory=DaemonConfig)
    prices: PricesConfig = Field(default_factory=PricesConfig)
    calls: CallsConfig = Field(default_factory=CallsConfig)
    throughput: ThroughputConfig = Field(default_factory=ThroughputConfig)
    budgets: BudgetsConfig = Field(default_factory=BudgetsConfig)
    bills: BillsConfig = Field(default_factory=BillsConfig)
    files: FilesConfig = Field(default_factory=FilesConfig)
    azure: AzureConfig = Field(default_factory=AzureConfig)

    def secrets(self) -> list[str]:
        """The values configured that are secrets: masked wherever they would be shown."""
        found = secrets_in_url(self.db) if self.db else []
        if self.notify.webhook:
            found += webhook_secrets(self.notify.webhook)
        if self.notify.command:
            found += secrets_in_argv(self.notify.command)
            for arg in self.notify.command:
                found += secrets_in_url(arg) if "://" in arg else []
        return found


SECTIONS: dict[str, type[Section]] = {
    name: field.annotation  # type: ignore[misc]
    for name, field in Config.model_fields.items() if name != "db"
}
# The unit of each duration key (a bare number is in it; text may give its own: '7d').
DURATION_UNITS: dict[str, str] = {
    "daemon.watch_seconds": "s", "daemon.idle_seconds": "s", "calls.timeout_seconds": "s",
    "notify.timeout_seconds": "s", "store.busy_seconds": "s",
    "store.statement_timeout_seconds": "s", "migration.restart_minutes": "min",
    "migration.warmup_minutes": "min", "migration.overlap_minutes": "min",
    "migration.lost_work_minutes": "min", "prices.stale_after": "h",
}
KEYS: tuple[str, ...] = ("db", *(f"{s}.{k}" for s, cls in SECTIONS.items()
                                 for k in cls.model_fields))
