"""SkyPilot task files read into a JobSpec (`skypilot_emit` writes one pinned to a decision).

A task's `resources` say where the job may run (`skypilot_resources`); costsched turns them
into the job's constraints (clouds, regions, zones, instance types, markets) and then
chooses the cheapest place inside them, as for any job. Fields that do not change where a
job runs (ports, disks, images, labels, file mounts, secrets...) are kept with the job for
the launchers (`JobSpec.task`). What SkyPilot does not say (the model or throughputs, the
work, the checkpoint, a deadline or budget) comes from the task's `costsched:` section;
without it the job is one hour of work on the slowest GPU the task asks for, or on any CPU
instance for a task that asks for none. What costsched does not do is refused in one line
naming the field and what `sky` does instead; nothing is dropped silently: a field read
under an older name, or not used (a `service:` section, which `sky launch` does not use
either), is said in a note.

Values a task leaves to the launch (envs without a value used in file mounts, a bucket to
name, which of several writable buckets holds the checkpoints) do not stop a plan: the
plan names them, and `launch` refuses, in one line, until they are given (`TaskSpec.needs`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from pathlib import PurePosixPath
from typing import Any

import yaml
from pydantic import ValidationError

from costsched import clouds
from costsched import skypilot_fields as fields
from costsched.jobspec import CPU, MAX_NODES, JobSpec, _Strict, parse
from costsched.launch_secrets import launch_hint
from costsched.model import InvalidInput
from costsched.skypilot_fields import Fail
from costsched.skypilot_given import given_names, refuse_both
from costsched.skypilot_resources import (
    OLDER_NAMES,
    RESOURCE_FIELDS,
    RESTARTS_KEY,
    first_gpu,
    read_resources,
)
from costsched.spec_errors import SECTION_CONSTRAINTS, error_words, unknown_field
from costsched.vocabulary import did_you_mean, written
from costsched.work import unit_gpu

DEFAULT_HOURS = 1.0  # of work on the task's slowest GPU when no costsched: section says more
TASK_FIELDS = ("name", "workdir", "setup", "run", "envs", "secrets", "num_nodes",
               "resources", "file_mounts", "config", "costsched")
# Fields costsched reads but does not use, each said once in a note.
UNUSED = {
    "service": "service: not used: costsched runs the task as one job, as `sky launch` "
               "does (`sky serve up` serves it with replicas)",
    "inputs": "inputs: not used (an older field: the data's size for SkyPilot's egress "
              "estimate)",
    "outputs": "outputs: not used (an older field: the output's size for SkyPilot's egress "
               "estimate)",
}
# The password SkyPilot logs in to a private registry with (launchers.containers): a secret.
DOCKER_PASSWORD = "SKYPILOT_DOCKER_PASSWORD"
# Where a task's checkpoints go without a bucket of its own, in the note `plan` and
# `launch` print with the configured root in its place (`checkpoint_note`).
CHECKPOINT_ROOT = "the checkpoint root (launch.checkpoint_root)"
_CHECKPOINTS_GO = "checkpoints go to "
# Fields of SkyPilot's that costsched does not do, with what to use instead.
NOT_DONE = {
    "pool": "worker pools are not something costsched does; `sky jobs pool` runs them",
    "volumes": "volumes are not supported yet; use a bucket in file_mounts, or `sky launch`",
    "job_group": "job groups are not something costsched does; `sky jobs launch` runs them",
    "event_callback": "event callbacks are not something costsched does; `sky launch` "
                      "runs them",
}


class _Section(_Strict):
    """The `costsched:` section: what a SkyPilot task does not say."""

    model: str | None = None
    throughputs: dict[str, float] | None = None
    precision: str | None = None
    steps: float | None = None
    epochs: float | None = None
    steps_per_epoch: float | None = None
    hours: Any = None  # read as a job file's hours are (`JobSpec`: 1.5, '90m')
    reference_gpu: str | None = None
    checkpoint: dict[str, Any] | None = None
    deadline: Any = None
    budget: Any = None
    budget_name: Any = None  # a named budget of the configuration, as a job file names it
    at_cap: Any = None
    max_price: Any = None
    max_migrations: int | None = None
    markets: list[str] | None = None
    sweep: dict[str, list[str | int | float]] | None = None


def parse_task(doc: Any, source: str = "<task>", default_name: str = "",
               given_envs: Mapping[str, str | None] | None = None,
               given_secrets: Collection[str] = ()) -> JobSpec:
    """The JobSpec of a SkyPilot task (parsed YAML); InvalidInput naming source and field.
    `given_envs`: values given at launch (`--env`) for the task's envs (None: a name given
    alone that the environment does not set, refused after this has said whether it is a
    misspelling); `given_secrets`: the names of the secrets given at launch (`--secret`).
    A name the task has not is added to it, as `sky launch` adds it (`_added`)."""
    if not isinstance(doc, dict):
        raise InvalidInput(f"{source}: expected a SkyPilot task (a mapping), got "
                           f"{type(doc).__name__}")

    def fail(field_name: str, message: str) -> InvalidInput:
        return InvalidInput(f"{source}: field {field_name}: {message}")

    for key in doc:
        if key in NOT_DONE:
            raise fail(str(key), NOT_DONE[str(key)])
        if key not in TASK_FIELDS and key not in UNUSED:
            _not_in_section(str(key), str(key), doc[key], fail)
            if key in RESOURCE_FIELDS:  # a resources field written at the task's top
                raise fail(str(key), f"a field of resources, not of the task: write it "
                           f"under resources: (resources: {{{key}: ...}})")
            raise fail(str(key), "not a field costsched reads; accepted: "
                       + ", ".join(TASK_FIELDS) + did_you_mean(str(key), TASK_FIELDS))
    nodes = doc.get("num_nodes", 1)
    if (isinstance(nodes, bool) or not isinstance(nodes, int)
            or not 1 <= nodes <= MAX_NODES):
        raise fail("num_nodes", f"{written(nodes)}: expected a whole number of nodes, 1 to "
                   f"{MAX_NODES}")
    section = _section(doc.get("costsched"), fail)
    secrets, written_secrets = _secrets(doc.get("secrets"), fail)
    written_envs = _written_envs(doc.get("envs"), fail)
    refuse_both(source, written_envs, secrets)
    listed_envs = {n: v is not None for n, v in written_envs.items()}  # (value written?)
    listed_secrets = {n: n in written_secrets for n in secrets}
    if listed_envs.get(DOCKER_PASSWORD) is False:  # SkyPilot's envs form of a secret
        del listed_envs[DOCKER_PASSWORD]
        listed_secrets[DOCKER_PASSWORD] = False
    # a name given with the other field's option, or misspelt, refused; a close one noted
    notes = given_names(source, listed_envs, listed_secrets, given_envs or {}, given_secrets)
    envs, launch_envs = _envs(written_envs, given_envs or {})
    notes += [UNUSED[k] for k in UNUSED if k in doc]
    if DOCKER_PASSWORD in envs:
        raise fail(f"envs.{DOCKER_PASSWORD}", "a registry password as an env's value "
                   "(in the file or by --env) would be stored with the job: list it under "
                   "secrets with no value and give it at launch with --secret")
    if DOCKER_PASSWORD in launch_envs:  # SkyPilot's envs form: a secret here, never kept
        launch_envs.remove(DOCKER_PASSWORD)
        secrets.append(DOCKER_PASSWORD)
        notes.append(f"envs.{DOCKER_PASSWORD}: taken as a secret (give it with --secret; "
                     "never stored)")
    secrets += sorted(set(given_secrets) - set(secrets))  # added, as `sky launch` adds them
    values: dict[str, str | None] = {**envs, **dict.fromkeys(launch_envs)}
    resources = doc.get("resources", {})
    if resources is None:
        resources = {}
    if not isinstance(resources, dict):
        raise fail("resources", f"expected a mapping (accelerators, infra, ...), got "
                   f"{type(resources).__name__}")
    for key in resources:
        if key not in RESOURCE_FIELDS and key not in OLDER_NAMES:
            _not_in_section(str(key), f"resources.{key}", resources[key], fail)
    scope, order, kept = read_resources(resources, fail)
    restarts = kept.pop(RESTARTS_KEY, 0)  # resources.job_recovery's, kept with the job
    # a bucket named without its store: the task's one cloud's store, else S3
    cloud_default = {"gcp": "gcs", "azure": "azure"}.get(
        next(iter(scope.clouds)) if len(scope.clouds) == 1 else "", "s3")
    checkpoint = dict(section.checkpoint or {})
    needs: list[str] = []
    location = checkpoint.get("location")
    if isinstance(location, str):
        missing: set[str] = set()
        checkpoint["location"] = location = fields.fill(location, values, missing)
        if missing:
            needs.append(f"costsched.checkpoint.location: {fields.unfilled(missing, values)}")
    mounts, chosen, note = _mounts(doc.get("file_mounts"), location, values, cloud_default,
                                   fail, needs)
    if chosen:
        checkpoint["location"] = chosen[0]
    readers, read_note, limits = _mount_readers(mounts, scope.clouds, fail)
    markets = sorted(scope.markets)
    if section.markets is not None:
        if scope.use_spot_given:
            raise fail("costsched.markets", "resources.use_spot already says the market; "
                       "give one of the two")
        markets = section.markets
    constraints: dict[str, Any] = {
        "clouds": sorted(readers), "regions": sorted(scope.regions),
        "zones": sorted(scope.zones), "markets": markets,
        "gpu_models": sorted({g for g, _ in scope.gpus}),
        "gpu_counts": sorted({n for _, n in scope.gpus}),
        "instance_types": sorted({t for _, t in scope.types or ()}),
    }
    if scope.alternatives:  # each exact: the union above would allow more than they do
        constraints["alternatives"] = [
            {**s.places(), **({"markets": markets} if section.markets is not None else {})}
            for s in scope.alternatives]
    for key in (k for k in SECTION_CONSTRAINTS if k != "markets"):  # (markets: above)
        value = getattr(section, key)
        if value is not None:
            constraints[key] = value
    work = section.model_dump(include={"model", "throughputs", "precision", "steps", "epochs",
                                       "steps_per_epoch", "hours", "reference_gpu", "sweep"},
                              exclude_none=True)
    steps_given: float | None = None
    if scope.cpu:
        if {"model", "throughputs", "steps", "epochs", "steps_per_epoch"} & work.keys():
            raise fail("costsched", "a task without accelerators is CPU work: say its "
                       "length as hours (costsched: {hours: 3})")
        assumed, unit_chosen = "hours" not in work, False
        work.setdefault("hours", DEFAULT_HOURS)
        if work.setdefault("reference_gpu", CPU) != CPU:
            raise fail("costsched.reference_gpu", f"{work['reference_gpu']!r}: a task "
                       f"without accelerators runs on CPUs; expected {CPU} or nothing")
    elif not ({"steps", "epochs", "steps_per_epoch"} & work.keys()) and (
            "hours" in work or not {"model", "throughputs"} & work.keys()) or (
            steps_given := _steps_without_speed(work)) is not None:
        # Hours of work on the set's slowest GPU, given or assumed (a speed given without
        # work is refused by the JobSpec, in words that say what to add).
        first = (unit_gpu(scope.gpus, work.get("precision") or "fp32") if scope.gpus
                 else first_gpu(scope))
        assumed, unit_chosen = "hours" not in work, "reference_gpu" not in work
        if steps_given is not None:  # its work, but no speed to make hours of it
            for key in ("steps", "epochs", "steps_per_epoch"):
                work.pop(key, None)
        work.setdefault("hours", DEFAULT_HOURS)
        work.setdefault("reference_gpu", f"{first[0]}:{first[1]}")
    else:
        assumed = unit_chosen = False
    workdir = _workdir(doc.get("workdir"), values, fail, needs)
    run = _text(doc.get("run"), "run", fail)
    if not run.strip():  # a plan is made; a launch would start an instance to run nothing
        needs.append("run: the task has no run command: costsched runs it as the job "
                     "(`sky launch` makes a cluster without one)")
    notes = [*notes, *scope.notes, *(n for n in (note, read_note) if n)]
    unwritten = [n for n in secrets if n not in written_secrets]
    if launch_envs or unwritten:  # what `launch` is given, said by plan
        notes.append(launch_hint(launch_envs, unwritten))
    notes += [f"launch needs: {n}" for n in needs]
    spec = {
        "name": doc.get("name") or default_name or "task",
        "run": run,
        "workdir": workdir,
        "setup": _text(doc.get("setup"), "setup", fail) or "",
        "envs": envs,
        "checkpoint": checkpoint,
        "constraints": constraints,
        "num_nodes": nodes,
        "max_restarts_on_errors": restarts,
        "task": {**kept, "config": _config(doc.get("config"), fail), "secrets": secrets,
                 "written_secrets": written_secrets,
                 "launch_envs": launch_envs, "mounts": mounts, "order": order,
                 "checkpoint_mount": chosen[1] if chosen else "", "notes": notes,
                 "limits": limits, "filter_keys": {**scope.keys, **(
                     {"markets": "costsched.markets"} if section.markets is not None else {})},
                 "work_assumed": assumed, "unit_chosen": unit_chosen, "needs": needs,
                 "steps_given": steps_given,
                 "sky": True},
        **work,
    }
    return parse(spec, source)


def _steps_without_speed(work: dict[str, Any]) -> float | None:
    """The steps a `costsched:` section gives (steps, or epochs x steps_per_epoch) when it
    gives no speed for them (no model, throughputs or hours), else None (a value that is
    no positive number is left to the job's checks, which say so)."""
    if {"model", "throughputs", "hours"} & work.keys():
        return None
    keys = ("steps",) if "steps" in work else ("epochs", "steps_per_epoch")
    values = [work.get(k) for k in keys]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0
               for v in values):
        return None
    return float(math.prod(values))


def _mount_readers(mounts: list[dict], given: set[str],
                   fail: Fail) -> tuple[set[str], str, dict[str, str]]:
    """(the clouds the task may run on, a note when its bucket mounts narrowed them, and why
    as the task's `limits`: {'clouds': "the task's s3 bucket ... keeps it on aws (...)"}): an
    instance reads its own cloud's object storage only (a mount's data is not carried to
    another cloud, as a checkpoint is), so a task whose mounts are buckets of one cloud runs
    there."""
    owners = {m["path"]: clouds.storage_cloud(m["source"]) for m in mounts}
    found = {c for c in owners.values() if c}
    if not found:
        return given, "", {}
    if len(found) > 1:
        raise fail("file_mounts", "buckets of " + " and ".join(sorted(found)) + ": an "
                   "instance reads its own cloud's buckets only; keep the task's bucket "
                   "mounts in one cloud")
    cloud = found.pop()
    path = next(p for p, c in owners.items() if c == cloud)
    if given and cloud not in given:
        raise fail(f"file_mounts.{path}", f"a bucket of {cloud}, read by {cloud} instances "
                   f"only, and the task's resources allow {', '.join(sorted(given))}")
    if given == {cloud}:
        return given, "", {}
    source = next(m["source"] for m in mounts if m["path"] == path)
    store = source.split("://", 1)[0] if not source.startswith("https://") else "azure"
    why = (f"the task's {store} bucket {path} ({source}) keeps it on {cloud} (an instance "
           "reads its own cloud's buckets only; to run elsewhere too, copy the data to a "
           "bucket of that cloud and mount that one)")
    return {cloud}, f"file_mounts.{path}: {why}", {"clouds": why}


def _not_in_section(key: str, where: str, value: Any, fail: Fail) -> None:
    """A costsched setting written outside the costsched: section (`budget: 4` at the top
    or under resources) is refused with where it goes."""
    if key not in _Section.model_fields:
        return
    written = yaml.safe_dump({key: value}, default_flow_style=True, width=1000).strip()
    written = written if len(written) <= 60 else f"{{{key}: ...}}"
    raise fail(where, f"a costsched setting, not a SkyPilot field: write it in the task's "
               f"costsched: section (costsched: {written})")


def _workdir(value: Any, values: Mapping[str, str | None], fail: Fail,
             needs: list[str]) -> str | None:
    """The workdir, its variables filled. A git repository (url, ref) is refused: costsched
    packs a local folder."""
    if value is None:
        return None
    if isinstance(value, dict) and "url" in value:
        raise fail("workdir", "a git repository (url, ref): costsched packs a local folder; "
                   "clone it in setup, or run it with `sky launch`")
    if not isinstance(value, str) or not value.strip():
        raise fail("workdir", "expected a local directory (a path)")
    if "://" in value or value.startswith("git@"):  # never taken for a relative folder
        raise fail("workdir", f"{value!r}: a URL; expected a local directory (a path): "
                   "costsched packs a local folder (clone the repository and give its "
                   "folder, or clone it in setup)")
    missing: set[str] = set()
    value = fields.fill(value, values, missing)
    if missing:
        needs.append(f"workdir: {fields.unfilled(missing, values)}")
    return value




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
        if first["type"] == "extra_forbidden" and first["loc"] == ("constraints",):
            # a job file's section, written in a task: its keys are this section's own
            message = ("a job file's section: in a task, write its keys directly under "
                       "costsched: (" + ", ".join(k for k in _Section.model_fields
                                                  if k in SECTION_CONSTRAINTS)
                       + "; where it may run: under resources, as infra and accelerators)")
        elif first["type"] == "extra_forbidden":
            message = unknown_field(str(first["loc"][-1]), list(_Section.model_fields))
        else:
            message = error_words(first)
        raise fail(f"costsched.{where}", message) from None


def _text(value: Any, name: str, fail: Fail) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise fail(name, "expected shell commands (a string)")
    return value


def _written_envs(value: Any, fail: Fail) -> dict[str, str | None]:
    """The file's envs: each name's value as text, None for one given at launch."""
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise fail("envs", "expected a mapping of NAME: value (no value: given at launch)")
    out: dict[str, str | None] = {}
    for key, v in value.items():
        if isinstance(v, (dict, list)):
            raise fail(f"envs.{key}", "expected text, a number or true/false")
        out[str(key)] = None if v is None else str(v).lower() if isinstance(v, bool) \
            else str(v)
    return out


def _envs(written: Mapping[str, str | None], given: Mapping[str, str | None]
          ) -> tuple[dict[str, str], list[str]]:
    """(envs with values, names of those without one: given at launch). A value given at
    launch (`given`) wins over the file's (`written`), and adds an env the task has not,
    as with `sky launch --env` (`skypilot_given` has said whether a name is misspelt)."""
    out, later = {}, []
    for key, v in written.items():
        if given.get(key) is not None:
            out[key] = str(given[key])
        elif v is None:
            later.append(key)
        else:
            out[key] = v
    for added in sorted(set(given) - set(written)):
        if given[added] is not None:
            out[added] = str(given[added])
    return out, later


def _secrets(value: Any, fail: Fail) -> tuple[list[str], dict[str, str]]:
    """The secrets' names, and the values the file writes for some (SkyPilot's: used
    where `--secret` gives none, as SkyPilot does; held in memory, never stored)."""
    if value is None:
        return [], {}
    if not isinstance(value, dict):
        raise fail("secrets", "expected a mapping of NAME: (nothing: given at launch, or a "
                   "value)")
    written: dict[str, str] = {}
    for key, v in value.items():
        if isinstance(v, (dict, list)):
            raise fail(f"secrets.{key}", "expected nothing (given at launch with --secret) "
                       "or one value")
        if v is not None and v != "":
            written[str(key)] = v if isinstance(v, str) else str(v).lower() \
                if isinstance(v, bool) else str(v)
    return [str(k) for k in value], written


def _config(value: Any, fail: Fail) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise fail("config", "expected a mapping (SkyPilot's config for this task)")
    return value


def _mounts(value: Any, location: Any, values: Mapping[str, str | None], cloud_default: str,
            fail: Fail, needs: list[str]
            ) -> tuple[list[dict[str, str]], tuple[str, str] | None, str]:
    """(the mounts, the checkpoint (bucket, its mount path), a note saying where the
    checkpoints go). The checkpoint bucket is costsched.checkpoint.location (a bucket, or
    the path of a bucket mount not copied), else the one bucket mount the task writes to
    (`fields.written_to`); without one, the checkpoint root, said when the task has
    buckets. What only a launch can settle (a variable without a value, a bucket without a
    name, which of several writable buckets) is added to `needs`."""
    if value is None or value == {}:
        return [], None, ""
    if not isinstance(value, dict):
        raise fail("file_mounts", "expected a mapping of PATH ON THE INSTANCE: source")
    mounts, unsettled, writes = [], [], []
    for raw_path, raw_source in value.items():
        missing: set[str] = set()
        path = fields.fill(raw_path, values, missing)
        source = fields.fill(raw_source, values, missing)
        where = f"file_mounts.{raw_path}"
        if not isinstance(path, str) or not path.strip():
            raise fail("file_mounts", f"{written(raw_path)}: expected a path on the instance")
        # Refused here, not at the instance's start: the local launcher places every
        # mount under a folder of its own, which '..' would leave.
        if ".." in PurePosixPath(path).parts:
            raise fail(where, f"{written(raw_path)}: expected a path on the instance "
                       "without '..'")
        uri, mode = fields.bucket_of(source, path, cloud_default, fail)
        bucket = fields.is_bucket(uri)
        mount = {"path": path, "source": uri, "mode": mode if bucket else "COPY"}
        if missing:
            needs.append(f"{where}: {fields.unfilled(missing, values)}")
        elif bucket and not uri.split("://", 1)[1].split("/", 1)[0]:
            needs.append(f"{where}.name: no bucket name: give the bucket's name")
        else:
            if bucket and "$" in uri:
                raise fail(where, f"{written(uri)}: expected a bucket name (letters, digits, "
                           "'.', '-', '_')")
            mounts.append(mount)
            if bucket and fields.written_to(source):
                writes.append(mount)
            continue
        maybe = bucket or "://" not in uri
        unsettled.append({**mount, "source": uri or "?", "bucket": maybe,
                          "writes": maybe and fields.written_to(source)})
    buckets = [m for m in mounts if fields.is_bucket(m["source"])]
    if isinstance(location, str) and location:
        named = [m for m in mounts if m["path"].rstrip("/") == location.rstrip("/")]
        if named and named[0] in buckets and named[0]["mode"] != "COPY":
            mounts.remove(named[0])
            return mounts + _kept(unsettled), (named[0]["source"], named[0]["path"]), ""
        if named and named[0] in buckets:
            raise fail("costsched.checkpoint.location", f"{location!r} is a bucket copied "
                       "down once, read-only (mode COPY): checkpoints written there never "
                       "reach it; expected the path of a bucket mount with mode: MOUNT or "
                       "MOUNT_CACHED, or a bucket")
        if named:
            raise fail("costsched.checkpoint.location", f"{location!r} is a local path's "
                       "mount; expected a bucket (or the path of a bucket mount)")
        return mounts + _kept(unsettled), None, ""
    maybe = [m for m in unsettled if m["writes"]]
    if len(writes) + len(maybe) > 1:
        needs.append("file_mounts: several writable bucket mounts (" + ", ".join(
            m["path"] for m in [*writes, *maybe]) + "): say which holds the checkpoints "
            "with costsched.checkpoint.location: PATH")
        return mounts + _kept(unsettled), None, ""
    if maybe:  # the checkpoint bucket is known at launch
        return mounts + _kept(unsettled), None, ""
    if not writes:
        return mounts + _kept(unsettled), None, _not_written(
            [*buckets, *(m for m in unsettled if m["bucket"])])
    chosen = writes[0]
    mounts.remove(chosen)
    source, path = chosen["source"], chosen["path"]
    return (mounts + _kept(unsettled), (source, path),
            f"{_CHECKPOINTS_GO}{source} (the one writable bucket mount, {path}, mode "
            f"{chosen['mode']})")


def _not_written(buckets: list[dict]) -> str:
    """Where the checkpoints of a task whose bucket mounts it does not write to go, why
    not to those, and how to choose one ('' without bucket mounts)."""
    if not buckets:
        return ""
    why = [f"{m['path']} is copied down once, read-only (mode COPY)" if m["mode"] == "COPY"
           else f"{m['path']} is the task's data (a source without a mode)" for m in buckets]
    return (f"{_CHECKPOINTS_GO}{CHECKPOINT_ROOT}, not to a bucket of file_mounts: "
            + "; ".join(why) + ". To keep them in one, mount it with mode: MOUNT (or "
            "MOUNT_CACHED), or name its path in costsched.checkpoint.location")


def _kept(unsettled: list[dict]) -> list[dict[str, str]]:
    """Mounts a launch has yet to settle, as the plan keeps them (never launched so)."""
    return [{k: m[k] for k in ("path", "source", "mode")} for m in unsettled]


def checkpoint_note(notes: Collection[str], root: str) -> str | None:
    """The note of a task's notes saying where its checkpoints go, with the checkpoint
    root said as `root`; None when it has none."""
    said = [n for n in notes if n.startswith(_CHECKPOINTS_GO)]
    return said[0].replace(CHECKPOINT_ROOT, root) if said else None
