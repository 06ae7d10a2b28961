"""Where a SkyPilot task may run: its `resources` (one, `any_of` or `ordered` alternatives)
read into a scope of clouds, regions, zones, markets, GPUs and the catalog's instance types,
and the placement-neutral fields kept for the launchers. What costsched cannot honour is
refused in one line naming the field."""

from __future__ import annotations

import itertools
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from costsched import catalog, clouds, default_hosts
from costsched import skypilot_fields as fields
from costsched.bundled_prices import GPU_MODELS, closest_gpus
from costsched.catalog_offers import offered_instead
from costsched.clouds.hints import catalog_refresh_hint
from costsched.instance_sizes import SIZES, said, sized
from costsched.jobspec import MAX_RESTARTS_ON_ERRORS
from costsched.lazy import pandas as pd
from costsched.model import CLOUDS, DROPPED, InvalidInput
from costsched.skypilot_fields import Fail
from costsched.skypilot_type_words import machine_gpus, other_gpus
from costsched.vocabulary import ALTERNATIVE_DROPPED, ORDER_DROPPED, did_you_mean, meant, written

# A task without accelerators, cpus or memory gets at least 8 vCPUs, as SkyPilot's default
# CPU machine has; a CPU task that does not say its memory gets at least 4 GB per vCPU (a
# general-purpose machine), as SkyPilot gives it.
DEFAULT_CPUS = (8.0, "+")
DEFAULT_MEMORY_PER_CPU = (4.0, "x")
PLACEMENT_FIELDS = ("infra", "cloud", "region", "zone", "accelerators", "gpus",
                    "instance_type", "cpus", "memory", "use_spot")
KEPT_FIELDS = ("ports", "disk_size", "disk_tier", "image_id", "labels", "network_tier",
               "autostop")
# Older names SkyPilot still reads, and the field each is now.
OLDER_NAMES = {"spot_recovery": "job_recovery", "candidates": "any_of"}
RESOURCE_FIELDS = (*PLACEMENT_FIELDS, *KEPT_FIELDS, "job_recovery", "any_of", "ordered",
                   "accelerator_args")
RECOVERY_STRATEGIES = ("FAILOVER", "EAGER_NEXT_REGION")
SKY_IMAGE_TAG = "skypilot:"  # SkyPilot's names of its own images (skypilot:gpu-ubuntu-2004)


@dataclass
class Scope:
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
    # The field each filter was written in, as the file names it ('regions':
    # 'resources.region'; of a union, each alternative's: 'resources.any_of[0].region or
    # resources.any_of[1].region'): what a job with no plan is told to change.
    keys: dict[str, str] = field(default_factory=dict)
    # Of a union (`_union`): the alternatives, each exact, where the union allows more.
    alternatives: list[Scope] = field(default_factory=list)

    def allows(self, cloud: str, region: str, instance_type: str, market: str) -> bool:
        return ((not self.clouds or cloud in self.clouds)
                and (not self.regions or region in self.regions)
                and (self.types is None or (cloud, instance_type) in self.types)
                and (not self.markets or market in self.markets))

    def places(self) -> dict[str, list]:
        """This alternative as the job's constraints keep it (`AlternativeSpec`)."""
        return {"clouds": sorted(self.clouds), "regions": sorted(self.regions),
                "zones": sorted(self.zones), "markets": sorted(self.markets),
                "gpu_models": sorted({g for g, _ in self.gpus}),
                "gpu_counts": sorted({n for _, n in self.gpus}),
                "instance_types": sorted({t for _, t in self.types or ()})}

    def order_key(self) -> dict[str, list[str]]:
        """This alternative as stored for `ordered:` (what the planner matches)."""
        return {"clouds": sorted(self.clouds), "regions": sorted(self.regions),
                "markets": sorted(self.markets),
                "instance_types": sorted(f"{c}/{t}" for c, t in self.types or ()),
                **({"zones": sorted(self.zones)} if self.zones else {})}


def first_gpu(scope: Scope) -> tuple[str, int]:
    """The GPU of the task's first instance type (a task that names a GPU type only)."""
    row = catalog.lookup(*sorted(scope.types or ())[0])
    return str(row["gpu_model"]), int(row["gpu_count"])  # type: ignore[index]


def read_resources(resources: dict, fail: Fail) -> tuple[Scope, list[dict], dict[str, Any]]:
    """(where the job may run, the alternatives' order for `ordered:`, the kept fields)."""
    resources, renamed = _newer_names(resources, fail)
    for key in resources:
        if key not in RESOURCE_FIELDS:
            raise fail(f"resources.{key}", "not a field costsched reads; accepted: "
                       + ", ".join(RESOURCE_FIELDS)
                       + did_you_mean(str(key), [*RESOURCE_FIELDS, *OLDER_NAMES]))
    if "accelerator_args" in resources:
        raise fail("resources.accelerator_args", "TPU settings: TPUs are not supported yet; "
                   "`sky launch` runs TPU tasks")
    restarts = _recovery(resources.get("job_recovery"), fail)
    kept = _kept(resources, fail)
    if restarts:  # the job's, not the task's: taken out by the caller (`restarts_of`)
        kept[RESTARTS_KEY] = restarts
    renamed += _sky_image_tags(kept)
    if "any_of" in resources and "ordered" in resources:
        raise fail("resources", "give any_of or ordered, not both")
    resources, listed = _accelerator_list(resources, renamed)
    kind = "any_of" if "any_of" in resources else "ordered" if "ordered" in resources else ""
    base = {k: v for k, v in resources.items() if k in PLACEMENT_FIELDS}
    if not kind:
        scope = _scope(base, "resources", fail)
        scope.notes[:0] = renamed
        return scope, [], kept
    items = resources[kind]
    label = listed or f"resources.{kind}"  # the field as the file wrote it
    if not isinstance(items, list) or not items:
        raise fail(label, "expected a list of resources")
    scopes, images = [], {}
    for i, item in enumerate(items):
        # An item of an accelerator list is named as the file wrote it (its value is quoted)
        where = "resources" if listed else f"resources.{kind}[{i}]"
        if not isinstance(item, dict):
            raise fail(where, "expected a mapping of resources")
        for key in item:
            if key not in PLACEMENT_FIELDS and key != "image_id":
                close = did_you_mean(str(key), [*PLACEMENT_FIELDS, "image_id"])
                raise fail(f"{where}.{key}", "not accepted in an alternative; accepted: "
                           + ", ".join(PLACEMENT_FIELDS) + ", image_id (the others go "
                           f"beside {kind}, for every alternative){close}")
        scope = _scope({**base, **item}, where, fail, alternative=True,
                       beside=set(base) - set(item))
        if "image_id" in item:
            images.update(_alternative_image(item["image_id"], scope, where, fail))
        scopes.append(scope)
    usable = [s for s in scopes if _usable(s)]
    if not usable:
        raise fail(label, "no alternative has an instance type in the "
                   "catalog (" + "; ".join(n for s in scopes for n in s.notes) + ")")
    union = _union(usable, label, fail)
    union.keys = {f: " or ".join(dict.fromkeys(s.keys[f] for s in usable if f in s.keys))
                  for f in dict.fromkeys(f for s in usable for f in s.keys)}
    union.notes = [*renamed, *(n for s in scopes for n in s.notes)]
    # an alternative dropped keeps its place in the order: the user's preference
    order = [s.order_key() if _usable(s) else {ORDER_DROPPED: s.notes} for s in scopes] \
        if kind == "ordered" and len(scopes) > 1 else []
    if images:
        if "image_id" in kept:
            raise fail(f"resources.{kind}", "image_id is given beside the alternatives and "
                       "in one of them; give it in one place")
        kept["image_id"] = images
    return union, order, kept


def _usable(scope: Scope) -> bool:
    """An alternative the catalog has an instance type for (else it was dropped)."""
    return scope.types is None or bool(scope.types)


def _accelerator_list(resources: dict, notes: list[str]) -> tuple[dict, str]:
    """(the resources, the field named) with a list of accelerators read as SkyPilot reads
    it: tried in the list's order (a set {V100: 1, T4: 1} is the one that lets the
    objective choose), so as `ordered:` alternatives, one per accelerator, and a note saying
    so. Beside any_of or ordered a list cannot be an order too: its items are ranked by
    the objective, and the note says that."""
    key = "gpus" if "gpus" in resources else "accelerators"
    value = resources.get(key)
    if not isinstance(value, list) or len(value) < 2:
        return resources, ""
    items = ", ".join(map(str, value))
    if "any_of" in resources or "ordered" in resources:
        beside = "any_of" if "any_of" in resources else "ordered"
        notes.append(f"resources.{key}: a list ([{items}]) beside {beside}: its GPUs are "
                     "ranked by the job's objective, not tried in the list's order")
        return resources, ""
    notes.append(f"resources.{key}: a list ([{items}]): tried in its order, as SkyPilot "
                 "does; a set ({" + items.replace(":", ": ") + "}) lets costsched choose "
                 "by the job's objective")
    rest = {k: v for k, v in resources.items() if k != key}
    return {**rest, "ordered": [{key: item} for item in value]}, f"resources.{key}"


def _sky_image_tags(kept: dict[str, Any]) -> list[str]:
    """SkyPilot's own image tags (skypilot:gpu-ubuntu-2004) taken out of the kept image:
    the launcher's own image stands for them; a note says so."""
    image = kept.get("image_id")
    images = image if isinstance(image, dict) else {"": image} if image else {}
    tags = {k: v for k, v in images.items() if str(v).startswith(SKY_IMAGE_TAG)}
    if not tags:
        return []
    rest = {k: v for k, v in images.items() if k not in tags}
    if rest and isinstance(image, dict):
        kept["image_id"] = rest
    else:
        kept.pop("image_id")
    return [f"resources.image_id: {', '.join(sorted(set(tags.values())))}: SkyPilot's own "
            "image tag; the launcher's own image is used"]


def _newer_names(resources: dict, fail: Fail) -> tuple[dict, list[str]]:
    """The resources with older field names (spot_recovery, candidates) read as today's,
    and a note for each."""
    out, notes = dict(resources), []
    for old, new in OLDER_NAMES.items():
        if old not in out:
            continue
        if new in out:
            raise fail(f"resources.{old}", f"the older name of {new}, which is given too; "
                       "give one of the two")
        out[new] = out.pop(old)
        notes.append(f"resources.{old}: read as {new} (its newer name)")
    return out, notes


def _alternative_image(value: Any, scope: Scope, where: str, fail: Fail) -> dict[str, str]:
    """An alternative's machine image, kept for the cloud (or regions) it names."""
    image = fields.image(value, fail)
    if isinstance(image, dict):
        return image
    if fields.docker_image(image):
        raise fail(f"{where}.image_id", "a Docker image for one alternative: give it beside "
                   "the alternatives, for all of them")
    places = sorted(scope.regions) or sorted(scope.clouds)
    if not places:
        raise fail(f"{where}.image_id", "a machine image for an alternative that names no "
                   "cloud or region; name its cloud (an image belongs to one)")
    return dict.fromkeys(places, image)


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


RESTARTS_KEY = "max_restarts_on_errors"  # in the kept fields of `read_resources`


def _recovery(value: Any, fail: Fail) -> int:
    """The task's max_restarts_on_errors (0 when not given): the times an instance that
    exits non-zero is restarted from the job's newest checkpoint. costsched always
    recovers a preempted job inside its scope (the cheapest place then); both of
    SkyPilot's strategies are that."""
    if value is None:
        return 0
    strategy, restarts = (value, 0) if isinstance(value, str) else (
        (value.get("strategy"), value.get("max_restarts_on_errors", 0))
        if isinstance(value, dict) else (None, 0))
    if not isinstance(value, (str, dict)):
        raise fail("resources.job_recovery", "expected a strategy or {strategy: ...}")
    if isinstance(value, dict):
        extra = sorted(set(value) - {"strategy", "max_restarts_on_errors"})
        if extra:
            raise fail(f"resources.job_recovery.{extra[0]}",
                       "unknown field: expected strategy or max_restarts_on_errors"
                       + did_you_mean(extra[0], ("strategy", "max_restarts_on_errors")))
    if strategy is not None and str(strategy).upper() not in RECOVERY_STRATEGIES:
        raise fail("resources.job_recovery", f"strategy {written(strategy)}: expected one of "
                   + ", ".join(RECOVERY_STRATEGIES)
                   + did_you_mean(str(strategy).upper(), RECOVERY_STRATEGIES))
    if (isinstance(restarts, bool) or not isinstance(restarts, int)
            or not 0 <= restarts <= MAX_RESTARTS_ON_ERRORS):
        raise fail("resources.job_recovery.max_restarts_on_errors",
                   f"{written(restarts)}: expected a whole number of restarts, 0 to "
                   f"{MAX_RESTARTS_ON_ERRORS}")
    return restarts


# The filters of the job's constraints each placement field says (a zone says its region
# too: where no region is written, the zone is the field that places it); and the sizes,
# which narrow its instance types, kept with their amounts ('vcpus': 'resources.cpus 8+').
_FILTERS = {"cloud": ("clouds",), "region": ("regions",), "zone": ("zones", "regions"),
            "infra": ("clouds", "regions", "zones"), "use_spot": ("markets",),
            "accelerators": ("gpu_models", "gpu_counts"), "gpus": ("gpu_models", "gpu_counts"),
            "instance_type": ("instance_types",),
            **{name: (column,) for column, (name, _) in SIZES.items()}}


def _keys(res: dict, where: str, beside: Collection[str]) -> dict[str, str]:
    """The field each filter of an alternative (or of the task's one resources) was
    written in: one written beside the alternatives is under resources, an alternative's
    own under its entry ('resources.any_of[0].region')."""
    out: dict[str, str] = {}
    for name, filters in _FILTERS.items():
        if name in res:
            for f in filters:
                out.setdefault(f, f"{'resources' if name in beside else where}.{name}")
    return out


def _scope(res: dict, where: str, fail: Fail, alternative: bool = False,
           beside: Collection[str] = ()) -> Scope:
    """Where one alternative (`where`: its entry) lets the job run; `beside`: its fields
    written beside the alternatives, for all of them."""
    scope = Scope(keys=_keys(res, where, beside))
    if "infra" in res:
        if any(k in res for k in ("cloud", "region", "zone")):
            raise fail(f"{where}.infra", "give infra or cloud/region/zone, not both")
        text = res["infra"]
        parts = str(text).strip().split("/") if isinstance(text, str) else [""]
        if len(parts) > 3 or not all(parts):
            raise fail(f"{where}.infra", f"{written(text)}: expected CLOUD, CLOUD/REGION or "
                       "CLOUD/REGION/ZONE (aws/us-east-1)")
        cloud, region, zone = [*parts, "", ""][:3]
    else:
        for key in ("cloud", "region", "zone"):
            if key in res and res[key] is not None and not isinstance(res[key], str):
                raise fail(f"{where}.{key}", f"{written(res[key])}: expected a name")
        cloud, region, zone = (str(res.get(k) or "") for k in ("cloud", "region", "zone"))
    cloud = cloud.strip().lower()
    by_infra = "infra" in res  # a location's errors name the field the file wrote it in
    if cloud and cloud != "*":
        if cloud not in CLOUDS:
            field_name = f"{where}.{'infra' if by_infra else 'cloud'}"
            if cloud not in fields.SKY_ONLY_CLOUDS:  # a typo: never dropped quietly
                raise fail(field_name, f"{cloud!r}: not a cloud; expected one of "
                           f"{', '.join(CLOUDS)} (or one `sky launch` runs on: "
                           f"{', '.join(fields.SKY_ONLY_CLOUDS)})"
                           + did_you_mean(cloud, [*CLOUDS, *fields.SKY_ONLY_CLOUDS]))
            message = (f"{cloud!r}: costsched runs on {', '.join(CLOUDS)}; `sky launch` "
                       "runs on the others")
            if not alternative:
                raise fail(field_name, message)
            scope.types = set()  # dropped with a note when other alternatives remain
            scope.notes.append(f"{field_name}: {message}; {ALTERNATIVE_DROPPED}")
            return scope
        scope.clouds = {cloud}
    if region and region != "*":
        names = tuple(sorted(scope.clouds)) or CLOUDS
        problem = clouds.given_region_problem(region, names)
        if problem is None and not set(names) & set(clouds.owners_of_region(region)):
            listed = sorted(r for n in names for r in clouds.get(n).regions)
            problem = (f"{region!r}: not a region of {', '.join(names)}"
                       f"{did_you_mean(region, listed)}")
        if problem is not None:
            raise fail(f"{where}.{'infra' if by_infra else 'region'}", problem)
        scope.regions = {region}
    if zone:
        found = clouds.zone_region(zone)
        problem = clouds.given_zone_problem(zone, scope.regions)
        if found is not None and scope.clouds and found[0] not in scope.clouds:
            problem = f"{zone!r}: a zone of {found[0]}, not of {', '.join(scope.clouds)}"
        if found is None:  # a task's zone names its region (Azure's '1' does not)
            problem = problem or (f"{written(zone)}: expected a zone named after its region, such "
                                  "as us-east-1a or us-central1-a")
        if problem is not None:
            raise fail(f"{where}.{'infra' if by_infra else 'zone'}", problem)
        assert found is not None
        scope.zones = {zone}
        scope.regions = {found[1]}
    if "use_spot" in res:
        if not isinstance(res["use_spot"], bool):
            raise fail(f"{where}.use_spot", f"{written(res['use_spot'])}: expected true or "
                       "false")
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
    for column, limit in (("vcpus", cpus), ("memory_gb", memory)):
        if limit is not None:  # as written: what a plan with none names ('resources.cpus 8+')
            scope.keys[column] = f"{scope.keys[column]} {said(*limit)}"
    scope.cpu = not scope.gpus and _cpu_type(res.get("instance_type"), scope)
    if scope.cpu and res.get("instance_type") is None:
        if cpus is None and memory is None:
            cpus = DEFAULT_CPUS
        if memory is None:
            memory = DEFAULT_MEMORY_PER_CPU
    try:
        scope.types = _types(scope, res.get("instance_type"), cpus, memory, where, key, fail)
    except InvalidInput as exc:
        if not alternative:
            raise
        scope.types = set()  # dropped with a note when other alternatives remain
        scope.notes.append(f"{str(exc).split(': field ', 1)[-1]}; {ALTERNATIVE_DROPPED}")
    if alternative and not scope.gpus and not scope.cpu and scope.types:
        # An alternative naming only an instance type asks for that type's GPUs: without
        # them, the others' accelerators alone would make the union's GPU filter.
        scope.gpus = _gpus_of(scope.types)
    return scope


def _gpus_of(types: set[tuple[str, str]]) -> list[tuple[str, int]]:
    """The (GPU model, count) shapes of the catalog's instance types `types`; none where
    one is of a GPU costsched has no figures of (a type a catalog refresh found): that
    alternative then keeps to its types alone."""
    rows = [catalog.lookup(cloud, name) for cloud, name in sorted(types)]
    shapes = [(str(r["gpu_model"]), int(r["gpu_count"])) for r in rows
              if r is not None and int(r["gpu_count"]) > 0]
    if any(model not in GPU_MODELS for model, _ in shapes):
        return []
    return list(dict.fromkeys(shapes))


def _accelerators(value: Any, where: str, fail: Fail,
                  alternative: bool) -> tuple[list[tuple[str, int]], list[str]]:
    """([(GPU model, count)] the catalog has, notes on the known ones it lacks). The items
    of a set (and of a list beside any_of or ordered) are ranked by the job's objective; a
    list alone was made `ordered:` alternatives (`_accelerator_list`)."""
    if value is None:
        return [], []
    out, missing = [], []
    sold: set[str] | None = None  # read once a name is read: a refused one reads nothing
    items = fields.accelerator_items(value, where, fail)
    for item in items:  # a name costsched does not know is refused, in a set as alone
        found = fields.accelerator(item, where, fail)
        if sold is None:
            sold = set(catalog.instance_types()["gpu_model"])
        if isinstance(found, str) or found[0] not in sold:
            missing.append((item, found))
        else:
            out.append(found)
    asked = {model for model, _ in out}
    unsold = [(m, _unsold_meant(m, found, sold or set(), asked)) for m, found in missing]
    notes = [f"{where}: {m}{DROPPED}the catalog has no instance type with it{close} "
             "(`costsched gpus` lists them)" for m, close in unsold]
    if missing and not out and not alternative:
        raise fail(where, "; ".join(f"{m}: the catalog has no instance type with it{close}"
                                    for m, close in unsold)
                   + " (`costsched gpus` lists them); `sky launch` looks in SkyPilot's catalog")
    return list(dict.fromkeys(out)), notes


def _unsold_meant(item: str, found: tuple[str, int] | str, sold: set[str],
                  asked: set[str]) -> str:
    """"; did you mean 'A10G:1'?" for an accelerator the catalog sells no instance type of
    ('A10:1'), naming the sold GPUs closest to it at the count asked; '' when none is
    close, or when those closest are `asked` beside it already (a set of A10 and A10G)."""
    name = found if isinstance(found, str) else found[0]
    count = found[1] if not isinstance(found, str) else str(item).partition(":")[2].strip() or 1
    return meant(f"{c}:{count}" for c in closest_gpus(name, sorted(sold)) if c not in asked)


def _instead(gpu: str, count: int, clouds: set[str]) -> str:
    """' (on gcp A100-80GB comes as 1, 2, 4 or 8 GPUs ...)': what the catalog has of a
    GPU a set asked at a count its clouds (none: any cloud) lack; '' when nothing."""
    said = "; ".join(offered_instead([(gpu, count)], clouds))
    return f" ({said})" if said else ""


def _cpu_type(instance_type: Any, scope: Scope) -> bool:
    """A task without accelerators: CPU work, unless it names a GPU instance type."""
    if instance_type is None:
        return True
    types = catalog.instance_types(include_cpu=True)
    named = types[types["instance_type"] == str(instance_type)]
    if scope.clouds:
        named = named[named["cloud"].isin(scope.clouds)]
    return bool(len(named)) and bool((named["gpu_count"] == 0).all())


def _types(scope: Scope, instance_type: Any, cpus: tuple[float, bool] | None,
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
        if len(scope.gpus) > 1:  # a set: a GPU (at its count) none of its clouds has
            had = set(zip(types["gpu_model"], types["gpu_count"], strict=True))
            on = ", ".join(sorted(scope.clouds)) or "any cloud"
            scope.notes += [f"{where}.{key}: {g}:{n}{DROPPED}no instance type of the "
                            f"catalog on {on} has it{_instead(g, n, scope.clouds)}"
                            for g, n in scope.gpus if (g, n) not in had and had]
    for column, limit, unit, field_name in (("vcpus", cpus, "vCPUs", "cpus"),
                                            ("memory_gb", memory, "GB", "memory")):
        if limit is not None:
            types = _sized(types, column, limit, unit, f"{where}.{field_name}", scope.notes)
    if scope.gpus and instance_type is None and cpus is None and memory is None:
        types = types[~default_hosts.other_hosts(types["instance_type"])]  # GPUs alone
    asked_for = types  # those the other fields allow, before the name narrows them
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
                 f"cpus {cpus[0]:g}{cpus[1]}" if cpus else "",
                 f"memory {memory[0]:g}{memory[1]}" if memory else ""]
        kind = "CPU" if scope.cpu else "GPU"
        field_name = (f"{where}.instance_type" if instance_type is not None else
                      f"{where}.{key}" if scope.gpus else f"{where}.cpus")
        lists = " (`costsched gpus` lists them)" if kind == "GPU" else ""
        if scope.gpus and instance_type is None and not (cpus or memory):  # what exists
            lists = "".join(f"; {o}" for o in offered_instead(scope.gpus, scope.clouds)) \
                or lists
        on = ", ".join(sorted(scope.clouds)) or "any cloud"
        named = None if instance_type is None else catalog.lookup_any(str(instance_type))
        if named is not None and scope.gpus and \
                (named["gpu_model"], int(named["gpu_count"])) not in scope.gpus:
            raise fail(field_name, other_gpus(named, scope.gpus, key, asked_for))
        machine = machine_gpus(str(instance_type), scope.gpus, scope.clouds, where, key) \
            if instance_type is not None and named is None and scope.gpus else ""
        if machine:  # (GCP's n1-standard-8 with T4:1: the catalog has it with other GPUs)
            raise fail(field_name, machine)
        if instance_type is not None and named is None:
            raise fail(field_name, f"{instance_type!r}: not an instance type of costsched's "
                       f"catalog on {on}; {catalog_refresh_hint(sorted(scope.clouds))} adds "
                       "the clouds' "
                       "newer types, `sky launch` looks it up in SkyPilot's catalog"
                       + did_you_mean(str(instance_type), _named_types(scope)))
        raise fail(field_name, f"{' '.join(a for a in asked if a)}: no {kind} instance "
                   f"type of the catalog on {on} matches{lists}; `sky launch` looks in "
                   "SkyPilot's catalog")
    return found


def _sized(types: pd.DataFrame, column: str, limit: tuple[float, str], unit: str,
           where: str, notes: list[str]) -> pd.DataFrame:
    """The types with `limit` of `column` as SkyPilot means it: exactly (else the nearest
    amount above that the catalog has, said in a note), at least ('+') or, for memory, at
    least that many GB per vCPU ('x')."""
    out, nearest = sized(types, column, *limit)
    if nearest is not None:
        notes.append(f"{where}: {limit[0]:g}: no instance type of the catalog has exactly "
                     f"{limit[0]:g} {unit}; the nearest above, {nearest:g} {unit}, is planned")
    return out


def _named_types(scope: Scope) -> list[str]:
    types = catalog.instance_types(include_cpu=True)
    if scope.clouds:
        types = types[types["cloud"].isin(scope.clouds)]
    return sorted(set(types["instance_type"]))


def _union(scopes: list[Scope], where: str, fail: Fail) -> Scope:
    """One scope allowing what any alternative allows, with the alternatives themselves
    (`Scope.alternatives`) where it, a product of per-field lists, would allow more than
    they do: the job then keeps to those it allows in full. Alternatives of CPUs and of
    GPUs are refused: the job's work is said one way for all of them."""

    def joined(values: list[set]) -> set:
        return set() if any(not v for v in values) else set().union(*values)

    if len({s.cpu for s in scopes}) > 1:
        raise fail(where, "some alternatives ask for accelerators and others do not; "
                   "write one task for the CPU alternatives and one for the GPU ones")
    out = Scope(
        clouds=joined([s.clouds for s in scopes]), regions=joined([s.regions for s in scopes]),
        zones=joined([s.zones for s in scopes]), markets=joined([s.markets for s in scopes]),
        types=None if any(s.types is None for s in scopes)
        else set().union(*(s.types or set() for s in scopes)),
        gpus=[] if any(not s.gpus for s in scopes)  # one asks for no GPU: any is allowed
        else list(dict.fromkeys(g for s in scopes for g in s.gpus)),
        use_spot_given=any(s.use_spot_given for s in scopes), cpu=scopes[0].cpu,
    )
    if _wider(out, scopes):
        out.alternatives = scopes
    return out


def _wider(union: Scope, scopes: list[Scope]) -> bool:
    """Whether `union` may allow more than the alternatives: they differ in more than one
    of location, accelerators and market (the union's product then holds pairs none
    names, priced or not yet), or some name a zone and others do not, or they name
    different zones and differ in more than that; or the union allows an offering the
    catalog lists that no alternative allows (aws anywhere or gcp/us-central1: gcp's other
    regions)."""
    parts = (lambda s: (s.clouds, s.regions, s.zones), lambda s: (s.gpus, s.types),
             lambda s: s.markets)
    if sum(any(of(s) != of(scopes[0]) for s in scopes) for of in parts) > 1:
        return True
    if any(s.zones for s in scopes) and not all(s.zones for s in scopes):
        return True
    if len({frozenset(s.zones) for s in scopes}) > 1 and len(
            {(frozenset(s.clouds), frozenset(s.regions), frozenset(s.markets),
              frozenset(s.types or ()), s.types is None) for s in scopes}) > 1:
        return True
    listed = catalog.on_demand_observations(include_cpu=union.cpu)[
        ["cloud", "region", "instance_type"]]
    return any(union.allows(cloud, region, instance_type, market) and not any(
        s.allows(cloud, region, instance_type, market) for s in scopes)
        for (cloud, region, instance_type), market in itertools.product(
            listed.drop_duplicates().itertuples(index=False), ("on_demand", "spot")))
