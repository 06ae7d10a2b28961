"""A SkyPilot task written back from a job spec, pinned to the offering a plan chose."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import yaml

from costsched import skypilot_fields as fields
from costsched.jobspec import JobSpec
from costsched.model import InvalidInput
from costsched.redact import is_secret_name
from costsched.skypilot_resources import KEPT_FIELDS


def emit_task(spec: JobSpec, offering: Mapping[str, Any], note: str = "",
              bucket_source: Callable[[str], str] = str,
              written: Mapping[str, Any] | None = None,
              changed: list[str] | None = None) -> str:
    """A SkyPilot task of `spec` pinned to one offering (cloud, region, zone, instance
    type, market): its name, workdir, nodes, setup, run, envs, secrets' names, file mounts
    and placement-neutral resources kept. `bucket_source`: a bucket mount's source as
    SkyPilot reads it (an az:// container written as its account's URL). `written`: the
    task as its file wrote it (parsed YAML), whose envs, ports, labels and job recovery
    are written back as they were (a number stays a number, a quoted one text) where the
    job keeps them, and its cpus and memory beside the pinned type (SkyPilot checks the
    type has them). Each field the task writes otherwise than its file (a market or an
    alternative chosen) is said in a comment beside it, and appended to `changed`."""
    written = written if isinstance(written, Mapping) else {}
    instance_type = str(offering["instance_type"]).split("+", 1)[0]
    zone = offering.get("zone") or pinned_zone(spec.constraints.zones, spec.task.order,
                                               offering["cloud"], offering["region"])
    infra = "/".join(str(p) for p in (offering["cloud"], offering["region"], zone) if p)
    task: dict[str, Any] = {"name": spec.name}
    paths = spec.task.as_written  # local paths as the user wrote them
    if spec.workdir:
        task["workdir"] = paths.get(spec.workdir, spec.workdir)
    as_given = written.get("resources")
    as_given = as_given if isinstance(as_given, Mapping) else {}
    resources: dict[str, Any] = {"infra": infra, "instance_type": instance_type}
    # cpus and memory as written beside the type: SkyPilot checks the type has them
    resources.update({k: as_given[k] for k in ("cpus", "memory") if k in as_given})
    if int(offering.get("gpu_count") or 0):
        resources["accelerators"] = f"{offering['gpu_model']}:{int(offering['gpu_count'])}"
    resources["use_spot"] = offering["market"] == "spot"
    kept = spec.task.model_dump(include=set(KEPT_FIELDS), exclude_none=True)
    if isinstance(kept.get("image_id"), dict):  # one per region or cloud: the offering's
        image = kept["image_id"]
        kept["image_id"] = image.get(offering["region"]) or image.get(offering["cloud"])
        if not kept["image_id"]:
            del kept["image_id"]
    resources.update({k: v for k, v in kept.items() if v not in ({}, [])})
    notes = _pinned_notes(spec, as_given, resources, offering)
    if "ports" in resources:
        resources["ports"] = _ports_as_written(resources["ports"], as_given.get("ports"))
    if "labels" in resources:
        resources["labels"] = _as_written(resources["labels"], as_given.get("labels"))
    # The recovery strategy (checked when the task was read) as written, by its new name.
    recovery = as_given.get("job_recovery", as_given.get("spot_recovery"))
    if recovery is None and spec.max_restarts_on_errors:  # a job file's, in SkyPilot's field
        recovery = {"max_restarts_on_errors": spec.max_restarts_on_errors}
    if recovery is not None:
        resources["job_recovery"] = recovery
    task["resources"] = resources
    if spec.num_nodes > 1 or written.get("num_nodes") == spec.num_nodes:  # 1 as written
        task["num_nodes"] = spec.num_nodes
    hidden = secret_like_envs(spec)  # under secrets:, with no value: never printed
    given_envs = written.get("envs")
    given_envs = {**(given_envs if isinstance(given_envs, Mapping) else {}),
                  **_sweep_as_written(written, spec.envs)}  # a sweep's value as the file wrote it
    envs: dict[str, Any] = {**_as_written({k: v for k, v in spec.envs.items()
                                           if k not in hidden}, given_envs, _env_text),
                            **dict.fromkeys(spec.task.launch_envs)}
    if envs:
        task["envs"] = envs
    if spec.task.secrets or hidden:
        task["secrets"] = dict.fromkeys([*spec.task.secrets, *hidden])
    mounts = _mounts_as_written(written.get("file_mounts"), bucket_source)
    taken = mounts is not None and bool(spec.task.checkpoint_mount)  # one the file wrote
    if mounts is None:  # a spec not read from one task file: its mounts as it keeps them
        mounts = {}
        for m in spec.task.mounts:
            bucket = fields.is_bucket(m.source)
            source = bucket_source(m.source) if bucket else paths.get(m.source, m.source)
            mounts[m.path] = {"source": source, "mode": m.mode} \
                if bucket or m.mode != "COPY" else source
    path = spec.task.checkpoint_mount or "/checkpoints"
    if fields.is_bucket(spec.checkpoint.location) and not taken and path not in mounts:
        mounts[path] = {"source": bucket_source(spec.checkpoint.location), "mode": "MOUNT"}
    unset = checkpoint_names_unset(spec) if fields.is_bucket(spec.checkpoint.location) else []
    if unset:  # costsched sets them for its jobs, SkyPilot does not: the bucket's mount
        task.setdefault("envs", {}).update(dict.fromkeys(unset, path))
    if mounts:
        task["file_mounts"] = mounts
    if spec.task.config:
        task["config"] = spec.task.config
    if spec.setup:
        task["setup"] = spec.setup
    if spec.run:
        task["run"] = spec.run
    header = "".join(f"# {line}\n" for line in note.splitlines())
    if changed is not None:
        changed.extend(f"{key}: {_inline(resources[key])} ({text})"
                       for key, text in notes.items())
    return header + _commented(yaml.dump(task, Dumper=_TaskDumper, sort_keys=False,
                                         default_flow_style=False), notes)


def _pinned_notes(spec: JobSpec, as_given: Mapping[str, Any], resources: Mapping[str, Any],
                  offering: Mapping[str, Any]) -> dict[str, str]:
    """What the pinned `resources` write otherwise than the file's (`as_given`), by the
    emitted field it is said beside: the market chosen of several the job allows, one of
    its alternatives, its place, type or GPUs named another way, one of its images."""
    notes: dict[str, list[str]] = {}

    def note(key: str, text: str) -> None:
        notes.setdefault(key, []).append(text)

    if len(_markets_allowed(spec, offering)) > 1:
        market = "spot" if resources["use_spot"] else "on-demand"
        note("use_spot", f"pinned to {market}: the job allows spot and on-demand")
    for key in ("any_of", "ordered"):
        if isinstance(as_given.get(key), list) and len(as_given[key]) > 1:
            note("infra", f"pinned to one of the {len(as_given[key])} alternatives of its "
                          f"resources.{key}")
    where = [f"{k}: {_inline(as_given[k])}" for k in ("infra", "cloud", "region", "zone")
             if k in as_given and as_given[k] != resources["infra"]]
    if where:
        note("infra", f"pinned from {', '.join(where)}")
    for key, emitted in (("instance_type", "instance_type"), ("accelerators", "accelerators"),
                         ("gpus", "accelerators")):
        if key in as_given and not _same(as_given[key], resources.get(emitted)):
            note(emitted if emitted in resources else "instance_type",
                 f"pinned from {key}: {_inline(as_given[key])}")
    image = spec.task.image_id
    if isinstance(image, dict) and len(image) > 1 and "image_id" in resources:
        note("image_id", f"the image of {offering['region']} of the {len(image)} its "
                         "image_id names")
    return {key: "; ".join(texts) for key, texts in notes.items()}


def _markets_allowed(spec: JobSpec, offering: Mapping[str, Any]) -> set[str]:
    """The markets the job allows on `offering`: of a task with alternatives, those of the
    alternatives that allow its place and GPUs (an on-demand H100 first, spot L4 after: the
    H100 is on-demand only), else the job's."""
    both = ("spot", "on_demand")
    allowed: set[str] = set()
    for alt in spec.constraints.alternatives:
        if all(not accepted or offering.get(column) in accepted for column, accepted in (
                ("cloud", alt.clouds), ("region", alt.regions),
                ("gpu_model", alt.gpu_models), ("gpu_count", alt.gpu_counts),
                ("instance_type", alt.instance_types))):
            allowed |= set(alt.markets or both)
    return allowed or set(spec.constraints.markets or both)


def _same(written: Any, emitted: Any) -> bool:
    """Whether a type or GPUs written name what the task writes ('v100' is 'V100:1')."""
    said = str(written).replace(" ", "").lower()
    return emitted is not None and said in {str(emitted).lower(),
                                            str(emitted).lower().removesuffix(":1")}


def _inline(value: Any) -> str:
    """A written value on one line as the file wrote it, in its order: {V100:1, T4:1},
    [A10G:1, L4:1], {A10G: 1, L4: 1}, aws."""
    if isinstance(value, Mapping):
        return "{" + ", ".join(str(k) if v is None else f"{k}: {_inline(v)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    return str(value).lower() if isinstance(value, bool) else str(value)


def _commented(text: str, notes: Mapping[str, str]) -> str:
    """The task's YAML `text` with each note beside its field of resources (a comment)."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        match = re.match(r"  (\w+):", line)
        if match and match[1] in notes and _in_resources(lines, i):
            lines[i] = f"{line.rstrip(chr(10))}  # {notes[match[1]]}\n"
    return "".join(lines)


def _in_resources(lines: list[str], index: int) -> bool:
    """Whether line `index` of a task's YAML is a field of its resources."""
    top = next((line for line in reversed(lines[:index]) if not line.startswith(" ")), "")
    return top.startswith("resources:")


def _sweep_as_written(written: Mapping[str, Any], envs: Mapping[str, str]) -> dict[str, Any]:
    """The job's sweep values (`envs`) as the file's sweep wrote them (of its costsched:
    section, or its own): a number stays a number."""
    section = written.get("costsched")
    sweep = (section if isinstance(section, Mapping) else written).get("sweep")
    sweep = sweep if isinstance(sweep, Mapping) else {}
    return {name: value for name, values in sweep.items() if isinstance(values, list)
            for value in values
            if isinstance(value, (int, float)) and not isinstance(value, bool)
            and str(value) == envs.get(name)}


def _mounts_as_written(raw: Any, bucket_source: Callable[[str], str]) -> dict[str, Any] | None:
    """The task's file mounts as its file wrote them (`raw`), every field and form kept:
    only an Azure container written az://CONTAINER is written as SkyPilot names it
    (`bucket_source`). None when the file wrote none."""
    if not isinstance(raw, Mapping):
        return None

    def named(source: Any) -> Any:
        if isinstance(source, str) and source.startswith("az://") and "$" not in source:
            return bucket_source(source)
        return source

    return {path: {**given, "source": named(given["source"])}
            if isinstance(given, Mapping) and "source" in given else named(given)
            for path, given in raw.items()}


# The checkpoint folder's names costsched gives a job (`launchers.agent`'s environment).
CHECKPOINT_NAMES = re.compile(r"\$\{?((?:COSTSCHED_)?CHECKPOINT_DIR)\b")


def checkpoint_names_unset(spec: JobSpec) -> list[str]:
    """The checkpoint folder's names (`CHECKPOINT_DIR`, `COSTSCHED_CHECKPOINT_DIR`) that
    the job's setup or run reads and its envs do not give: costsched sets them, SkyPilot
    does not."""
    used = CHECKPOINT_NAMES.findall(f"{spec.setup or ''}\n{spec.run or ''}")
    return sorted({n for n in used if n not in spec.envs})


def pinned_zone(zones: Iterable[str], order: Iterable[Mapping[str, Any]], cloud: str,
                region: str) -> str:
    """The one zone of `region` a job's file keeps it to (its `zones`, or those of its
    `ordered:` / `any_of` alternatives, `order`), where an offering is priced for the whole
    region (on-demand prices are): what a pinned task keeps; '' where it names none there,
    or several."""
    from costsched.clouds import zones_of_region

    named = [*zones, *(z for alt in order for z in alt.get("zones", ()))]
    here = zones_of_region(named, cloud, region)  # where a launch keeps it (`LaunchSpec.zone`)
    return here[0] if len(here) == 1 else ""


def secret_like_envs(spec: JobSpec) -> list[str]:
    """The envs of `spec` whose name reads like a secret's (`redact.is_secret_name`, the
    rule `plan` and `launch` warn by) and that the file gives a value: a task written out
    names them under secrets: with no value, never printing it."""
    return [n for n, v in spec.envs.items() if v and is_secret_name(n)]


def _as_written(values: Mapping[str, str], raw: Any,
                text: Callable[[Any], str] = str) -> dict[str, Any]:
    """`values` (envs, labels), each as the file wrote it (`raw`) where the job keeps that
    value as its `text` (a value given at launch, or one a sweep set, stays the job's)."""
    raw = raw if isinstance(raw, Mapping) else {}
    out: dict[str, Any] = {}
    for name, value in values.items():
        mine = raw.get(name)
        out[name] = mine if isinstance(mine, (bool, int, float)) and text(mine) == value \
            else value
    return out


def _env_text(value: Any) -> str:
    """An env's value as a job has it (true, not True), as parse_task makes it."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _ports_as_written(ports: list[str], raw: Any) -> Any:
    """The job's ports as the file wrote them (`raw`: 8080, '8080', a list) when they are
    the same ports; else as the job keeps them."""
    if raw is None:
        return ports
    try:
        same = fields.ports(raw, lambda field, message: InvalidInput(message)) == ports
    except InvalidInput:
        same = False
    return raw if same else ports


class _TaskDumper(yaml.SafeDumper):
    """Commands of several lines as literal blocks (`run: |`), as people write them."""


def _text_block(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_TaskDumper.add_representer(str, _text_block)
