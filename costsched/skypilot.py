"""SkyPilot task files, both ways: read one into a JobSpec, write one pinned to a decision.

A task's `resources` say where the job may run; costsched turns them into the job's
constraints (clouds, regions, zones, instance types, markets) and then chooses the
cheapest place inside them, as for any job. Fields that do not change where a job runs
(ports, disks, images, labels, file mounts, secrets...) are kept with the job for the
launchers (`JobSpec.task`). What SkyPilot does not say (the model or throughputs, the
work, the checkpoint, a deadline or budget) comes from the task's `costsched:` section;
without it the job is one hour of work on the first GPU the task asks for, or on any CPU
instance for a task that asks for none. What costsched does not do is refused in one line
naming the field and what `sky` does instead; nothing is dropped silently.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import yaml
from pydantic import ValidationError

from costsched import catalog, clouds
from costsched import skypilot_fields as fields
from costsched.jobspec import CPU, MAX_NODES, JobSpec, _Strict, parse
from costsched.model import CLOUDS, InvalidInput
from costsched.skypilot_fields import Fail

DEFAULT_HOURS = 1.0  # of work on the task's first GPU when no costsched: section says more
# A task without accelerators, cpus or memory gets at least 8 vCPUs, as SkyPilot's default
# CPU machine has.
DEFAULT_CPUS = (8.0, True)
TASK_FIELDS = ("name", "workdir", "setup", "run", "envs", "secrets", "num_nodes",
               "resources", "file_mounts", "config", "costsched")
# Fields of SkyPilot's that costsched does not do, with what to use instead.
NOT_DONE = {
    "service": "serving (a `service:` section) is not something costsched does; "
               "`sky serve up` runs it",
    "pool": "worker pools are not something costsched does; `sky jobs pool` runs them",
    "volumes": "volumes are not supported yet; use a bucket in file_mounts, or `sky launch`",
    "job_group": "job groups are not something costsched does; `sky jobs launch` runs them",
    "event_callback": "event callbacks are not something costsched does; `sky launch` "
                      "runs them",
}
PLACEMENT_FIELDS = ("infra", "cloud", "region", "zone", "accelerators", "gpus",
                    "instance_type", "cpus", "memory", "use_spot")
KEPT_FIELDS = ("ports", "disk_size", "disk_tier", "image_id", "labels", "network_tier",
               "autostop")
RESOURCE_FIELDS = (*PLACEMENT_FIELDS, *KEPT_FIELDS, "job_recovery", "any_of", "ordered",
                   "accelerator_args")
RECOVERY_STRATEGIES = ("FAILOVER", "EAGER_NEXT_REGION")


class _Section(_Strict):
    """The `costsched:` section: what a SkyPilot task does not say."""

    model: str | None = None
    throughputs: dict[str, float] | None = None
    precision: str | None = None
    steps: float | None = None
    epochs: float | None = None
    steps_per_epoch: float | None = None
    hours: float | None = None
    reference_gpu: str | None = None
    checkpoint: dict[str, Any] | None = None
    deadline: Any = None
    budget: Any = None
    max_price: Any = None
    max_migrations: int | None = None
    markets: list[str] | None = None
    sweep: dict[str, list[str | int | float]] | None = None


@dataclass
class _Scope:
    """Where one alternative of a task's resources lets the job run."""

    clouds: set[str] = field(default_factory=set)  # empty: any
    regions: set[str] = field(default_factory=set)
    zones: set[str] = field(default_factory=set)
    types: set[tuple[str, str]] | None = None  # (cloud, instance type); None: any
    gpus: list[tuple[str, int]] = field(default_factory=list)  # in the task's order
    markets: set[str] = field(default_factory=set)
    use_spot_given: bool = False
    cpu: bool = False  # no accelerator: CPU instance types only
    notes: list[str] = field(default_factory=list)

    def allows(self, cloud: str, region: str, instance_type: str, market: str) -> bool:
        return ((not self.clouds or cloud in self.clouds)
                and (not self.regions or region in self.regions)
                and (self.types is None or (cloud, instance_type) in self.types)
                and (not self.markets or market in self.markets))

    def order_key(self) -> dict[str, list[str]]:
        """This alternative as stored for `ordered:` (what the planner matches)."""
        return {"clouds": sorted(self.clouds), "regions": sorted(self.regions),
                "markets": sorted(self.markets),
                "instance_types": sorted(f"{c}/{t}" for c, t in self.types or ())}


def parse_task(doc: Any, source: str = "<task>", default_name: str = "",
               given_envs: Mapping[str, str] | None = None) -> JobSpec:
    """The JobSpec of a SkyPilot task (parsed YAML); InvalidInput naming source and field.
    `given_envs`: values given at launch (`--env`) for the task's envs."""
    if not isinstance(doc, dict):
        raise InvalidInput(f"{source}: expected a SkyPilot task (a mapping), got "
                           f"{type(doc).__name__}")

    def fail(field_name: str, message: str) -> InvalidInput:
        return InvalidInput(f"{source}: field {field_name}: {message}")

    for key in doc:
        if key in NOT_DONE:
            raise fail(str(key), NOT_DONE[str(key)])
        if key not in TASK_FIELDS:
            raise fail(str(key), "not a field costsched reads; accepted: "
                       + ", ".join(TASK_FIELDS))
    nodes = doc.get("num_nodes", 1)
    if (isinstance(nodes, bool) or not isinstance(nodes, int)
            or not 1 <= nodes <= MAX_NODES):
        raise fail("num_nodes", f"{nodes!r}: expected a whole number of nodes, 1 to "
                   f"{MAX_NODES}")
    section = _section(doc.get("costsched"), fail)
    envs, launch_envs = _envs(doc.get("envs"), given_envs or {}, fail)
    secrets = _secrets(doc.get("secrets"), fail)
    if set(secrets) & set(envs):
        raise fail(f"secrets.{sorted(set(secrets) & set(envs))[0]}", "also in envs; give "
                   "each name in one of the two")
    values: dict[str, str | None] = {**envs, **dict.fromkeys(launch_envs)}
    resources = doc.get("resources", {})
    if resources is None:
        resources = {}
    if not isinstance(resources, dict):
        raise fail("resources", f"expected a mapping (accelerators, infra, ...), got "
                   f"{type(resources).__name__}")
    scope, order, kept = _resources(resources, fail)
    cloud_default = "gcs" if scope.clouds == {"gcp"} else "s3"
    checkpoint = dict(section.checkpoint or {})
    mounts, chosen, note = _mounts(doc.get("file_mounts"), checkpoint.get("location"),
                                   values, cloud_default, fail)
    if chosen:
        checkpoint["location"] = chosen[0]
    markets = sorted(scope.markets)
    if section.markets is not None:
        if scope.use_spot_given:
            raise fail("costsched.markets", "resources.use_spot already says the market; "
                       "give one of the two")
        markets = section.markets
    constraints: dict[str, Any] = {
        "clouds": sorted(scope.clouds), "regions": sorted(scope.regions),
        "zones": sorted(scope.zones), "markets": markets,
        "gpu_models": sorted({g for g, _ in scope.gpus}),
        "gpu_counts": sorted({n for _, n in scope.gpus}),
        "instance_types": sorted({t for _, t in scope.types or ()}),
    }
    for key in ("deadline", "budget", "max_price", "max_migrations"):
        value = getattr(section, key)
        if value is not None:
            constraints[key] = value
    work = section.model_dump(include={"model", "throughputs", "precision", "steps", "epochs",
                                       "steps_per_epoch", "hours", "reference_gpu", "sweep"},
                              exclude_none=True)
    if scope.cpu:
        if {"model", "throughputs", "steps", "epochs", "steps_per_epoch"} & work.keys():
            raise fail("costsched", "a task without accelerators is CPU work: say its "
                       "length as hours (costsched: {hours: 3})")
        work.setdefault("hours", DEFAULT_HOURS)
        if work.setdefault("reference_gpu", CPU) != CPU:
            raise fail("costsched.reference_gpu", f"{work['reference_gpu']!r}: a task "
                       f"without accelerators runs on CPUs; expected {CPU} or nothing")
    elif not ({"model", "throughputs", "steps", "epochs", "steps_per_epoch"} & work.keys()):
        first = scope.gpus[0] if scope.gpus else _first_gpu(scope)
        work.setdefault("hours", DEFAULT_HOURS)  # hours on the first GPU the task names
        work.setdefault("reference_gpu", f"{first[0]}:{first[1]}")
    workdir = doc.get("workdir")
    if workdir is not None:
        if not isinstance(workdir, str) or not workdir.strip():
            raise fail("workdir", "expected a local directory (a path)")
        workdir = fields.substitute(workdir, "workdir", values, fail)
    notes = [*scope.notes, *([note] if note else [])]
    spec = {
        "name": doc.get("name") or default_name or "task",
        "run": _text(doc.get("run"), "run", fail),
        "workdir": workdir,
        "setup": _text(doc.get("setup"), "setup", fail) or "",
        "envs": envs,
        "checkpoint": checkpoint,
        "constraints": constraints,
        "num_nodes": nodes,
        "task": {**kept, "config": _config(doc.get("config"), fail), "secrets": secrets,
                 "launch_envs": launch_envs, "mounts": mounts, "order": order,
                 "checkpoint_mount": chosen[1] if chosen else "", "notes": notes},
        **work,
    }
    return parse(spec, source)


def _first_gpu(scope: _Scope) -> tuple[str, int]:
    """The GPU of the task's first instance type (a task that names a GPU type only)."""
    row = catalog.lookup(*sorted(scope.types or ())[0])
    return str(row["gpu_model"]), int(row["gpu_count"])  # type: ignore[index]


def _section(value: Any, fail: Fail) -> _Section:
    if value is None:
        return _Section()
    if not isinstance(value, dict):
        raise fail("costsched", "expected a mapping (model, steps, checkpoint, deadline, ...)")
    try:
        return _Section.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        if first["type"] == "extra_forbidden":
            message = "unknown field: expected one of " + ", ".join(_Section.model_fields)
        else:
            message = first["msg"].removeprefix("Value error, ")
        raise fail(f"costsched.{where}", message) from None


def _text(value: Any, name: str, fail: Fail) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise fail(name, "expected shell commands (a string)")
    return value


def _envs(value: Any, given: Mapping[str, str],
          fail: Fail) -> tuple[dict[str, str], list[str]]:
    """(envs with values, names of those without one: given at launch). A value given at
    launch (`given`) wins over the file's, as with `sky launch --env`."""
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise fail("envs", "expected a mapping of NAME: value (no value: given at launch)")
    out, later = {}, []
    for key, v in value.items():
        if isinstance(v, (dict, list)):
            raise fail(f"envs.{key}", "expected text, a number or true/false")
        if str(key) in given:
            out[str(key)] = str(given[str(key)])
        elif v is None:
            later.append(str(key))
        else:
            out[str(key)] = str(v).lower() if isinstance(v, bool) else str(v)
    unknown = sorted(set(given) - set(map(str, value)))
    if unknown:
        raise fail("envs", f"{unknown[0]!r} is given at launch but the task has no such "
                   "env; expected one of " + (", ".join(map(str, value)) or "(none)"))
    return out, later


def _secrets(value: Any, fail: Fail) -> list[str]:
    """The secrets' names; their values are given at launch and never kept."""
    if value is None:
        return []
    if not isinstance(value, dict):
        raise fail("secrets", "expected a mapping of NAME: (nothing; given at launch)")
    for key, v in value.items():
        if isinstance(v, (dict, list)):
            raise fail(f"secrets.{key}", "expected nothing (given at launch with --secret)")
    return [str(k) for k in value]


def _config(value: Any, fail: Fail) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise fail("config", "expected a mapping (SkyPilot's config for this task)")
    return value


def _mounts(value: Any, location: Any, values: Mapping[str, str | None], cloud_default: str,
            fail: Fail) -> tuple[list[dict[str, str]], tuple[str, str] | None, str]:
    """(the mounts, the checkpoint (bucket, its mount path), a note saying which mount it
    is). The checkpoint
    bucket is costsched.checkpoint.location (a bucket, or a mount's path), else the one
    writable bucket mount (mode MOUNT), else the one bucket of a task with only one."""
    if value is None or value == {}:
        return [], None, ""
    if not isinstance(value, dict):
        raise fail("file_mounts", "expected a mapping of PATH ON THE INSTANCE: source")
    mounts = []
    for path, source in value.items():
        where = f"file_mounts.{path}"
        if not isinstance(path, str) or not path.strip():
            raise fail("file_mounts", f"{path!r}: expected a path on the instance")
        uri, mode = fields.bucket_of(source, path, cloud_default, fail)
        uri = fields.substitute(uri, where, values, fail)
        path = fields.substitute(path, where, values, fail)
        bucket = uri.startswith(fields.BUCKET_SCHEMES)
        if bucket and not uri.split("://", 1)[1].split("/", 1)[0]:
            raise fail(where, f"{uri!r}: expected a bucket name after the scheme")
        mounts.append({"path": path, "source": uri, "mode": mode if bucket else "COPY"})
    buckets = [m for m in mounts if m["source"].startswith(fields.BUCKET_SCHEMES)]
    if isinstance(location, str) and location:
        named = [m for m in mounts if m["path"].rstrip("/") == location.rstrip("/")]
        if named and named[0] in buckets:
            mounts.remove(named[0])
            return mounts, (named[0]["source"], named[0]["path"]), ""
        if named:
            raise fail("costsched.checkpoint.location", f"{location!r} is a local path's "
                       "mount; expected a bucket (or the path of a bucket mount)")
        return mounts, None, ""
    writable = [m for m in buckets if m["mode"] != "COPY"]
    if len(writable) > 1:
        raise fail("file_mounts", "several writable bucket mounts (" + ", ".join(
            m["path"] for m in writable) + "): say which holds the checkpoints with "
            "costsched.checkpoint.location: PATH")
    chosen = writable or (buckets if len(buckets) == 1 else [])
    if not chosen:
        return mounts, None, ""
    mounts.remove(chosen[0])
    why = "the one writable bucket mount" if writable else "the task's one bucket"
    source, path = chosen[0]["source"], chosen[0]["path"]
    return mounts, (source, path), f"checkpoints go to {source} ({why}, {path})"


def _resources(resources: dict, fail: Fail) -> tuple[_Scope, list[dict], dict[str, Any]]:
    """(where the job may run, the alternatives' order for `ordered:`, the kept fields)."""
    for key in resources:
        if key not in RESOURCE_FIELDS:
            raise fail(f"resources.{key}", "not a field costsched reads; accepted: "
                       + ", ".join(RESOURCE_FIELDS))
    if "accelerator_args" in resources:
        raise fail("resources.accelerator_args", "TPU settings: TPUs are not supported yet; "
                   "`sky launch` runs TPU tasks")
    _recovery(resources.get("job_recovery"), fail)
    kept = _kept(resources, fail)
    if "any_of" in resources and "ordered" in resources:
        raise fail("resources", "give any_of or ordered, not both")
    kind = "any_of" if "any_of" in resources else "ordered" if "ordered" in resources else ""
    base = {k: v for k, v in resources.items() if k in PLACEMENT_FIELDS}
    if not kind:
        return _scope(base, "resources", fail), [], kept
    items = resources[kind]
    if not isinstance(items, list) or not items:
        raise fail(f"resources.{kind}", "expected a list of resources")
    scopes = []
    for i, item in enumerate(items):
        where = f"resources.{kind}[{i}]"
        if not isinstance(item, dict):
            raise fail(where, "expected a mapping of resources")
        for key in item:
            if key not in PLACEMENT_FIELDS:
                raise fail(f"{where}.{key}", "not accepted in an alternative; accepted: "
                           + ", ".join(PLACEMENT_FIELDS) + " (the others go beside "
                           f"{kind}, for every alternative)")
        scopes.append(_scope({**base, **item}, where, fail, alternative=True))
    usable = [s for s in scopes if s.types is None or s.types]
    if not usable:
        raise fail(f"resources.{kind}", "no alternative has an instance type in the "
                   "catalog (" + "; ".join(n for s in scopes for n in s.notes) + ")")
    union = _union(usable, f"resources.{kind}", fail)
    union.notes = [n for s in scopes for n in s.notes]
    order = [s.order_key() for s in usable] if kind == "ordered" and len(usable) > 1 else []
    return union, order, kept


def _kept(res: dict, fail: Fail) -> dict[str, Any]:
    """The placement-neutral fields, checked, as the job keeps them."""
    out: dict[str, Any] = {}
    if "ports" in res:
        out["ports"] = fields.ports(res["ports"], fail)
    if "disk_size" in res:
        out["disk_size"] = fields.disk_size(res["disk_size"], fail)
    if "disk_tier" in res:
        out["disk_tier"] = fields.choice(res["disk_tier"], "resources.disk_tier",
                                         fields.DISK_TIERS, fail)
    if "network_tier" in res:
        out["network_tier"] = fields.choice(res["network_tier"], "resources.network_tier",
                                            fields.NETWORK_TIERS, fail)
    if "image_id" in res:
        out["image_id"] = fields.image(res["image_id"], fail)
    if "labels" in res:
        out["labels"] = fields.labels(res["labels"], fail)
    if "autostop" in res:
        value = res["autostop"]
        if not isinstance(value, (bool, int, str, dict)):
            raise fail("resources.autostop", "expected true/false, minutes or a mapping")
        out["autostop"] = value
    return out


def _recovery(value: Any, fail: Fail) -> None:
    """costsched always recovers a preempted job inside its scope (the cheapest place then);
    both of SkyPilot's strategies are that. Restarting after the job's own errors is not."""
    if value is None:
        return
    strategy, restarts = (value, 0) if isinstance(value, str) else (
        (value.get("strategy"), value.get("max_restarts_on_errors", 0))
        if isinstance(value, dict) else (None, 0))
    if not isinstance(value, (str, dict)):
        raise fail("resources.job_recovery", "expected a strategy or {strategy: ...}")
    if isinstance(value, dict):
        extra = sorted(set(value) - {"strategy", "max_restarts_on_errors"})
        if extra:
            raise fail(f"resources.job_recovery.{extra[0]}", "costsched cannot honour it")
    if strategy is not None and str(strategy).upper() not in RECOVERY_STRATEGIES:
        raise fail("resources.job_recovery", f"strategy {strategy!r}: expected one of "
                   + ", ".join(RECOVERY_STRATEGIES))
    if restarts:
        raise fail("resources.job_recovery.max_restarts_on_errors",
                   f"{restarts!r}: costsched does not rerun a job that failed by itself "
                   "(it recovers preemptions only); expected 0")


def _scope(res: dict, where: str, fail: Fail, alternative: bool = False) -> _Scope:
    scope = _Scope()
    if "infra" in res:
        if any(k in res for k in ("cloud", "region", "zone")):
            raise fail(f"{where}.infra", "give infra or cloud/region/zone, not both")
        text = res["infra"]
        parts = str(text).strip().split("/") if isinstance(text, str) else [""]
        if len(parts) > 3 or not all(parts):
            raise fail(f"{where}.infra", f"{text!r}: expected CLOUD, CLOUD/REGION or "
                       "CLOUD/REGION/ZONE (aws/us-east-1)")
        cloud, region, zone = [*parts, "", ""][:3]
    else:
        for key in ("cloud", "region", "zone"):
            if key in res and res[key] is not None and not isinstance(res[key], str):
                raise fail(f"{where}.{key}", f"{res[key]!r}: expected a name")
        cloud, region, zone = (str(res.get(k) or "") for k in ("cloud", "region", "zone"))
    cloud = cloud.strip().lower()
    if cloud and cloud != "*":
        if cloud not in CLOUDS:
            raise fail(f"{where}.{'infra' if 'infra' in res else 'cloud'}",
                       f"{cloud!r}: costsched runs on {', '.join(CLOUDS)}; `sky launch` "
                       "runs on the others")
        scope.clouds = {cloud}
    if region and region != "*":
        owners = clouds.owners_of_region(region)
        if not owners or (scope.clouds and not scope.clouds & set(owners)):
            raise fail(f"{where}.region", f"{region!r}: not a region of "
                       f"{', '.join(sorted(scope.clouds) or CLOUDS)}")
        scope.regions = {region}
    if zone:
        found = clouds.zone_region(zone)
        if found is None or (scope.regions and found[1] not in scope.regions):
            raise fail(f"{where}.zone", f"{zone!r}: not a zone of "
                       f"{', '.join(sorted(scope.regions)) or 'a known region'}")
        scope.zones = {zone}
        scope.regions = {found[1]}
    if "use_spot" in res:
        if not isinstance(res["use_spot"], bool):
            raise fail(f"{where}.use_spot", "expected true or false")
        scope.use_spot_given = True
    scope.markets = {"spot" if res.get("use_spot") else "on_demand"}
    if "accelerators" in res and "gpus" in res:
        raise fail(f"{where}.gpus", "give accelerators or gpus (the same field), not both")
    key = "gpus" if "gpus" in res else "accelerators"
    scope.gpus, scope.notes = _accelerators(res.get(key), f"{where}.{key}", fail, alternative)
    if res.get(key) is not None and not scope.gpus:
        scope.types = set()  # an alternative of GPUs the catalog does not have
        return scope
    cpus = fields.amount(res["cpus"], f"{where}.cpus", fail, "vCPUs") if "cpus" in res \
        else None
    memory = fields.amount(res["memory"], f"{where}.memory", fail, "GB") \
        if "memory" in res else None
    scope.cpu = not scope.gpus and _cpu_type(res.get("instance_type"), scope)
    if scope.cpu and cpus is None and memory is None and res.get("instance_type") is None:
        cpus = DEFAULT_CPUS
    try:
        scope.types = _types(scope, res.get("instance_type"), cpus, memory, where, key, fail)
    except InvalidInput as exc:
        if not alternative:
            raise
        scope.types = set()  # dropped with a note when other alternatives remain
        scope.notes.append(str(exc).split(": field ", 1)[-1] + "; alternative dropped")
    return scope


def _accelerators(value: Any, where: str, fail: Fail,
                  alternative: bool) -> tuple[list[tuple[str, int]], list[str]]:
    """([(GPU model, count)] the catalog has, notes on the known ones it lacks). A list is
    an ordered preference only under `ordered:`; costsched ranks a list's items by the
    job's objective."""
    if value is None:
        return [], []
    out, missing = [], []
    sold = set(catalog.instance_types()["gpu_model"])
    for item in fields.accelerator_items(value, where, fail):
        found = fields.accelerator(item, where, fail)
        if isinstance(found, str) or found[0] not in sold:
            missing.append(item)
        else:
            out.append(found)
    notes = [f"{where}: {m} dropped: the catalog has no instance type with it "
             "(`costsched gpus` lists them)" for m in missing]
    if missing and not out and not alternative:
        raise fail(where, f"{', '.join(missing)}: the catalog has no instance type with "
                   "it (`costsched gpus` lists them)")
    return list(dict.fromkeys(out)), notes


def _cpu_type(instance_type: Any, scope: _Scope) -> bool:
    """A task without accelerators: CPU work, unless it names a GPU instance type."""
    if instance_type is None:
        return True
    types = catalog.instance_types(include_cpu=True)
    named = types[types["instance_type"] == str(instance_type)]
    if scope.clouds:
        named = named[named["cloud"].isin(scope.clouds)]
    return bool(len(named)) and bool((named["gpu_count"] == 0).all())


def _types(scope: _Scope, instance_type: Any, cpus: tuple[float, bool] | None,
           memory: tuple[float, bool] | None, where: str, key: str,
           fail: Fail) -> set[tuple[str, str]] | None:
    """The catalog's (cloud, instance type) pairs the alternative allows; None: any."""
    if instance_type is None and not scope.gpus and not scope.cpu and not (cpus or memory):
        return None
    types = catalog.instance_types(include_cpu=scope.cpu)
    if scope.clouds:
        types = types[types["cloud"].isin(scope.clouds)]
    if scope.cpu:
        types = types[types["gpu_count"] == 0]
    elif scope.gpus:
        pairs = pd.Series(list(zip(types["gpu_model"], types["gpu_count"], strict=True)),
                          index=types.index)
        types = types[pairs.isin(scope.gpus)]
    for column, limit in (("vcpus", cpus), ("memory_gb", memory)):
        if limit is not None:
            size, at_least = limit
            types = types[types[column] >= size] if at_least else types[types[column] == size]
    if instance_type is not None:
        name = str(instance_type)
        # A machine type plus its accelerators (n1-standard-8 with V100:1) is one catalog
        # type "n1-standard-8+1xnvidia-tesla-v100"; other types are named as they are.
        composed = {f"{name}+{n}x{clouds.get(c).accelerator(g)}"
                    for c, g, n in zip(types["cloud"], types["gpu_model"], types["gpu_count"],
                                       strict=True) if n}
        types = types[(types["instance_type"] == name) | types["instance_type"].isin(composed)]
    found = set(zip(types["cloud"], types["instance_type"], strict=True))
    if not found:
        asked = [str(instance_type or ""), ", ".join(f"{g}:{n}" for g, n in scope.gpus),
                 f"cpus {cpus[0]:g}{'+' if cpus[1] else ''}" if cpus else "",
                 f"memory {memory[0]:g}{'+' if memory[1] else ''}" if memory else ""]
        kind = "CPU" if scope.cpu else "GPU"
        field_name = (f"{where}.instance_type" if instance_type is not None else
                      f"{where}.{key}" if scope.gpus else f"{where}.cpus")
        lists = " (`costsched gpus` lists them)" if kind == "GPU" else ""
        raise fail(field_name, f"{' '.join(a for a in asked if a)}: no {kind} instance "
                   f"type of the catalog on {', '.join(sorted(scope.clouds)) or 'any cloud'} "
                   f"matches{lists}")
    return found


def _union(scopes: list[_Scope], where: str, fail: Fail) -> _Scope:
    """One scope allowing what any alternative allows; refused where the job's constraints
    (a product of per-field lists) would allow more than the alternatives do."""

    def joined(values: list[set]) -> set:
        return set() if any(not v for v in values) else set().union(*values)

    if len({s.cpu for s in scopes}) > 1:
        raise fail(where, "some alternatives ask for accelerators and others do not; "
                   "write one task for the CPU alternatives and one for the GPU ones")
    out = _Scope(
        clouds=joined([s.clouds for s in scopes]), regions=joined([s.regions for s in scopes]),
        zones=joined([s.zones for s in scopes]), markets=joined([s.markets for s in scopes]),
        types=None if any(s.types is None for s in scopes)
        else set().union(*(s.types or set() for s in scopes)),
        gpus=list(dict.fromkeys(g for s in scopes for g in s.gpus)),
        use_spot_given=any(s.use_spot_given for s in scopes), cpu=scopes[0].cpu,
    )
    if any(s.zones for s in scopes) and not all(s.zones for s in scopes):
        raise fail(where, "some alternatives name a zone and others do not; costsched "
                   "takes zones for every alternative or for none")
    listed = catalog.on_demand_observations(include_cpu=out.cpu)[
        ["cloud", "region", "instance_type"]]
    for row in itertools.product(listed.drop_duplicates().itertuples(index=False),
                                 ("on_demand", "spot")):
        (cloud, region, instance_type), market = row
        if out.allows(cloud, region, instance_type, market) and not any(
                s.allows(cloud, region, instance_type, market) for s in scopes):
            raise fail(where, f"the alternatives together would also allow {market} "
                       f"{instance_type} in {cloud}/{region}, which none of them names; "
                       "write alternatives that differ in one of location, accelerators "
                       "or use_spot, or one task per alternative")
    return out


def emit_task(spec: JobSpec, offering: Mapping[str, Any], note: str = "") -> str:
    """A SkyPilot task of `spec` pinned to one offering (cloud, region, zone, instance
    type, market): its name, workdir, setup, run, envs, secrets' names, file mounts and
    placement-neutral resources kept."""
    instance_type = str(offering["instance_type"]).split("+", 1)[0]
    infra = "/".join(str(p) for p in (offering["cloud"], offering["region"],
                                       offering.get("zone") or "") if p)
    task: dict[str, Any] = {"name": spec.name}
    if spec.workdir:
        task["workdir"] = spec.workdir
    resources: dict[str, Any] = {"infra": infra, "instance_type": instance_type}
    if int(offering.get("gpu_count") or 0):
        resources["accelerators"] = f"{offering['gpu_model']}:{int(offering['gpu_count'])}"
    resources["use_spot"] = offering["market"] == "spot"
    kept = spec.task.model_dump(include=set(KEPT_FIELDS), exclude_none=True)
    resources.update({k: v for k, v in kept.items() if v not in ({}, [])})
    task["resources"] = resources
    envs: dict[str, Any] = {**spec.envs, **dict.fromkeys(spec.task.launch_envs)}
    if envs:
        task["envs"] = envs
    if spec.task.secrets:
        task["secrets"] = dict.fromkeys(spec.task.secrets)
    mounts = {m.path: ({"source": m.source, "mode": m.mode} if m.mode != "COPY"
                       else m.source) for m in spec.task.mounts}
    if spec.checkpoint.location.startswith(fields.BUCKET_SCHEMES):
        path = spec.task.checkpoint_mount or "/checkpoints"
        mounts[path] = {"source": spec.checkpoint.location, "mode": "MOUNT"}
    if mounts:
        task["file_mounts"] = mounts
    if spec.task.config:
        task["config"] = spec.task.config
    if spec.setup:
        task["setup"] = spec.setup
    if spec.run:
        task["run"] = spec.run
    header = "".join(f"# {line}\n" for line in note.splitlines())
    return header + yaml.dump(task, Dumper=_TaskDumper, sort_keys=False,
                              default_flow_style=False)


class _TaskDumper(yaml.SafeDumper):
    """Commands of several lines as literal blocks (`run: |`), as people write them."""


def _text_block(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_TaskDumper.add_representer(str, _text_block)
