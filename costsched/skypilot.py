"""SkyPilot task files, both ways: read one into a JobSpec, write one pinned to a decision.

A task's `resources` say where the job may run; costsched turns them into the job's
constraints (clouds, regions, zones, instance types, GPU models and counts, markets) and
then chooses the cheapest place inside them, as for any job. What SkyPilot does not say
(the model or throughputs, the work, the checkpoint, a deadline or budget) comes from the
task's `costsched:` section; without it the job is one hour of work on the first GPU the
task asks for (`DEFAULT_HOURS` on `reference_gpu`), which ranks offerings by price per unit
of that GPU's throughput. Fields costsched cannot honour are refused in one line naming
the field; none is dropped silently.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from costsched import catalog, clouds
from costsched.jobspec import JobSpec, parse, parse_gpu
from costsched.model import CLOUDS, InvalidInput

DEFAULT_HOURS = 1.0  # of work on the task's first GPU when no costsched: section says more
DEFAULT_GPU = "V100:1"  # the reference GPU of a task that names no accelerator
TASK_FIELDS = ("name", "workdir", "setup", "run", "envs", "num_nodes", "resources",
               "file_mounts", "costsched")
RESOURCE_FIELDS = ("infra", "cloud", "region", "zone", "accelerators", "instance_type",
                   "use_spot", "job_recovery", "any_of", "ordered")
ALTERNATIVE_FIELDS = tuple(f for f in RESOURCE_FIELDS
                           if f not in ("job_recovery", "any_of", "ordered"))
RECOVERY_STRATEGIES = ("FAILOVER", "EAGER_NEXT_REGION")
BUCKET_SCHEMES = ("s3://", "gs://")
Fail = Callable[[str, str], InvalidInput]  # (field, message) -> the error naming both


class _Section(BaseModel):
    """The `costsched:` section: what a SkyPilot task does not say."""

    model_config = ConfigDict(extra="forbid", frozen=True)
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

    def allows(self, cloud: str, region: str, instance_type: str, market: str) -> bool:
        return ((not self.clouds or cloud in self.clouds)
                and (not self.regions or region in self.regions)
                and (self.types is None or (cloud, instance_type) in self.types)
                and (not self.markets or market in self.markets))


def parse_task(doc: Any, source: str = "<task>", default_name: str = "") -> JobSpec:
    """The JobSpec of a SkyPilot task (parsed YAML); InvalidInput naming source and field."""
    if not isinstance(doc, dict):
        raise InvalidInput(f"{source}: expected a SkyPilot task (a mapping), got "
                           f"{type(doc).__name__}")

    def fail(field_name: str, message: str) -> InvalidInput:
        return InvalidInput(f"{source}: field {field_name}: {message}")

    for key in doc:
        if key not in TASK_FIELDS:
            raise fail(str(key), "costsched cannot honour this SkyPilot field; accepted: "
                       + ", ".join(TASK_FIELDS))
    nodes = doc.get("num_nodes", 1)
    if nodes != 1:
        raise fail("num_nodes", f"{nodes!r}: costsched runs a job on one instance; "
                   "expected 1 (use a multi-GPU accelerator such as A100:8 instead)")
    section = _section(doc.get("costsched"), fail)
    resources = doc.get("resources") or {}
    if not isinstance(resources, dict):
        raise fail("resources", f"expected a mapping, got {type(resources).__name__}")
    scope = _resources(resources, fail)
    checkpoint = dict(section.checkpoint or {})
    mount = _checkpoint_mount(doc.get("file_mounts"), fail)
    if mount:
        if checkpoint.get("location", mount) != mount:
            raise fail("file_mounts", f"{mount!r} and costsched.checkpoint.location "
                       f"{checkpoint['location']!r} differ; expected one checkpoint location")
        checkpoint["location"] = mount
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
    if not ({"model", "throughputs", "steps", "epochs", "steps_per_epoch", "hours"} & work.keys()):
        first = scope.gpus[0] if scope.gpus else parse_gpu(DEFAULT_GPU)
        work.update(hours=DEFAULT_HOURS, reference_gpu=f"{first[0]}:{first[1]}")
    workdir = doc.get("workdir")
    if workdir is not None and not isinstance(workdir, str):
        raise fail("workdir", "expected a local directory (a path)")
    spec = {
        "name": doc.get("name") or default_name or "task",
        "run": _text(doc.get("run"), "run", fail),
        "workdir": workdir,
        "setup": _text(doc.get("setup"), "setup", fail) or "",
        "envs": _envs(doc.get("envs"), fail),
        "checkpoint": checkpoint,
        "constraints": constraints,
        **work,
    }
    return parse(spec, source)


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


def _envs(value: Any, fail: Fail) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise fail("envs", "expected a mapping of NAME: value")
    for key, v in value.items():
        if v is None:
            raise fail(f"envs.{key}", "no value; give it one in the file")
    return {str(k): str(v) for k, v in value.items()}


def _checkpoint_mount(value: Any, fail: Fail) -> str:
    """The bucket of the one file mount costsched honours: the checkpoint location."""
    if not value:
        return ""
    if not isinstance(value, dict) or len(value) != 1:
        raise fail("file_mounts", "costsched honours one file mount only, a bucket "
                   "(s3://... or gs://...) used as the checkpoint location")
    path, source = next(iter(value.items()))
    if isinstance(source, dict):  # {name: bucket, store: s3|gcs, ...}
        store = {"s3": "s3://", "gcs": "gs://"}.get(str(source.get("store", "")).lower())
        extra = sorted(set(source) - {"name", "store", "mode", "persistent"})
        if store is None or not source.get("name") or extra:
            raise fail(f"file_mounts.{path}", "expected {name: BUCKET, store: s3 | gcs} "
                       "(the checkpoint location)")
        source = f"{store}{source['name']}"
    if not isinstance(source, str) or not source.startswith(BUCKET_SCHEMES):
        raise fail(f"file_mounts.{path}", f"{source!r}: costsched copies no files; a mount "
                   "must be a bucket (s3://... or gs://...) for the checkpoints")
    return source


def _resources(resources: dict, fail: Fail) -> _Scope:
    for key in resources:
        if key not in RESOURCE_FIELDS:
            raise fail(f"resources.{key}", "costsched cannot honour this field; accepted: "
                       + ", ".join(RESOURCE_FIELDS))
    _recovery(resources.get("job_recovery"), fail)
    if "any_of" in resources and "ordered" in resources:
        raise fail("resources", "give any_of or ordered, not both")
    kind = "any_of" if "any_of" in resources else "ordered" if "ordered" in resources else ""
    base = {k: v for k, v in resources.items() if k in ALTERNATIVE_FIELDS}
    if not kind:
        return _scope(base, "resources", fail)
    items = resources[kind]
    if not isinstance(items, list) or not items:
        raise fail(f"resources.{kind}", "expected a list of resources")
    scopes = []
    for i, item in enumerate(items):
        where = f"resources.{kind}[{i}]"
        if not isinstance(item, dict):
            raise fail(where, "expected a mapping of resources")
        for key in item:
            if key not in ALTERNATIVE_FIELDS:
                raise fail(f"{where}.{key}", "not accepted in an alternative; accepted: "
                           + ", ".join(ALTERNATIVE_FIELDS))
        scopes.append(_scope({**base, **item}, where, fail))
    return _union(scopes, f"resources.{kind}", fail)


def _recovery(value: Any, fail: Fail) -> None:
    """costsched always recovers a preempted job inside its scope (the cheapest place then);
    both of SkyPilot's strategies are that. Restarting after the job's own errors is not."""
    if value is None:
        return
    strategy, restarts = (value, 0) if isinstance(value, str) else (
        (value.get("strategy"), value.get("max_restarts_on_errors", 0))
        if isinstance(value, dict) else (None, 0))
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


def _scope(res: dict, where: str, fail: Fail) -> _Scope:
    scope = _Scope()
    if "infra" in res:
        if any(k in res for k in ("cloud", "region", "zone")):
            raise fail(f"{where}.infra", "give infra or cloud/region/zone, not both")
        parts = str(res["infra"]).strip().split("/")
        if len(parts) > 3 or not parts[0]:
            raise fail(f"{where}.infra", f"{res['infra']!r}: expected CLOUD, CLOUD/REGION or "
                       "CLOUD/REGION/ZONE (aws/us-east-1)")
        cloud, region, zone = [*parts, "", ""][:3]
    else:
        cloud, region, zone = (str(res.get(k) or "") for k in ("cloud", "region", "zone"))
    cloud = cloud.strip().lower()
    if cloud and cloud != "*":
        if cloud not in CLOUDS:
            raise fail(f"{where}.{'infra' if 'infra' in res else 'cloud'}",
                       f"{cloud!r}: costsched runs on {', '.join(CLOUDS)}")
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
    scope.gpus = _accelerators(res.get("accelerators"), f"{where}.accelerators", fail)
    scope.types = _types(scope, res.get("instance_type"), where, fail)
    return scope


def _accelerators(value: Any, where: str, fail: Fail) -> list[tuple[str, int]]:
    """[(GPU model, count)] of 'V100:1', {V100: 1, A100: 8}, {V100:1, A100:1} (a set) or
    [V100:1, A100:1] (an ordered list: costsched ranks them all by the job's objective)."""
    if value is None:
        return []
    if isinstance(value, str):
        items = [value]
    elif isinstance(value, dict):
        items = [str(k) if v is None else f"{k}:{v}" for k, v in value.items()]
    elif isinstance(value, list) and value:
        items = [str(v) for v in value]
    elif isinstance(value, (set, frozenset)) and value:  # YAML !!set: no order, so sorted
        items = sorted(str(v) for v in value)
    else:
        raise fail(where, "expected GPU:COUNT (V100:1), a set or a list of them")
    out = []
    for item in items:
        try:
            out.append(parse_gpu(item))
        except (ValueError, InvalidInput) as exc:
            raise fail(where, str(exc)) from None
    return list(dict.fromkeys(out))


def _types(scope: _Scope, instance_type: Any, where: str,
           fail: Fail) -> set[tuple[str, str]] | None:
    """The catalog's (cloud, instance type) pairs the alternative allows; None: any."""
    if instance_type is None and not scope.gpus:
        return None
    types = catalog.instance_types()
    if scope.clouds:
        types = types[types["cloud"].isin(scope.clouds)]
    if scope.gpus:
        pairs = pd.Series(list(zip(types["gpu_model"], types["gpu_count"], strict=True)),
                          index=types.index)
        types = types[pairs.isin(scope.gpus)]
    if instance_type is not None:
        name = str(instance_type)
        # A machine type plus its accelerators (n1-standard-8 with V100:1) is one catalog
        # type "n1-standard-8+1xnvidia-tesla-v100"; other types are named as they are.
        composed = {f"{name}+{n}x{clouds.get(c).accelerator(g)}"
                    for c, g, n in zip(types["cloud"], types["gpu_model"], types["gpu_count"],
                                       strict=True)}
        types = types[(types["instance_type"] == name) | types["instance_type"].isin(composed)]
    found = set(zip(types["cloud"], types["instance_type"], strict=True))
    if not found:
        asked = ", ".join(f"{g}:{n}" for g, n in scope.gpus)
        what = " ".join(x for x in (str(instance_type or ""), asked) if x)
        where_ = ", ".join(sorted(scope.clouds)) or "any cloud"
        field_name = f"{where}.instance_type" if instance_type is not None else \
            f"{where}.accelerators"
        raise fail(field_name, f"{what}: no GPU instance type of the catalog on {where_} "
                   "matches (`costsched gpus` lists them)")
    return found


def _union(scopes: list[_Scope], where: str, fail: Fail) -> _Scope:
    """One scope allowing what any alternative allows; refused where the job's constraints
    (a product of per-field lists) would allow more than the alternatives do."""

    def joined(values: list[set]) -> set:
        return set() if any(not v for v in values) else set().union(*values)

    out = _Scope(
        clouds=joined([s.clouds for s in scopes]), regions=joined([s.regions for s in scopes]),
        zones=joined([s.zones for s in scopes]), markets=joined([s.markets for s in scopes]),
        types=None if any(s.types is None for s in scopes)
        else set().union(*(s.types or set() for s in scopes)),
        gpus=list(dict.fromkeys(g for s in scopes for g in s.gpus)),
        use_spot_given=any(s.use_spot_given for s in scopes),
    )
    if any(s.zones for s in scopes) and not all(s.zones for s in scopes):
        raise fail(where, "some alternatives name a zone and others do not; costsched "
                   "takes zones for every alternative or for none")
    listed = catalog.on_demand_observations()[["cloud", "region", "instance_type"]]
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
    type, market): its name, workdir, setup, run and envs kept."""
    instance_type = str(offering["instance_type"]).split("+", 1)[0]
    infra = "/".join(str(p) for p in (offering["cloud"], offering["region"],
                                       offering.get("zone") or "") if p)
    task: dict[str, Any] = {"name": spec.name}
    if spec.workdir:
        task["workdir"] = spec.workdir
    resources = {"infra": infra, "instance_type": instance_type,
                 "accelerators": f"{offering['gpu_model']}:{int(offering['gpu_count'])}",
                 "use_spot": offering["market"] == "spot"}
    task["resources"] = resources
    if spec.envs:
        task["envs"] = dict(spec.envs)
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
