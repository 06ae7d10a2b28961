"""The values of a SkyPilot task's fields, read one by one: accelerators in SkyPilot's
vocabulary, cpus and memory, ports, disks, images (machine or Docker), labels, file mounts
and `${VAR}`.

Each reader takes the value and a `fail(field, message)` that makes the one-line error
naming the task file and the field; none reads a file or the catalog's prices.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from costsched import catalog, clouds
from costsched.bundled_prices import GPU_ALIASES, GPU_MODELS, counted_name
from costsched.launch_secrets import env_option
from costsched.model import InvalidInput
from costsched.vocabulary import closest, did_you_mean, written

Fail = Callable[[str, str], InvalidInput]  # (field, message) -> the error naming both

# Accelerator names the clouds sell, in SkyPilot's spelling. A name here that the catalog
# has no instance type for is known but cannot be planned (it is dropped from a set of
# alternatives with a note, or refused alone); a name outside it is a typo.
ACCELERATORS = (
    "K80", "M60", "P4", "P100", "V100", "V100-32GB", "T4", "T4g", "A10", "A10G", "A40",
    "L4", "L40", "L40S", "A100", "A100-80GB", "H100", "H100-MEGA", "H200", "B100", "B200",
    "B300", "GB200", "GB300", "GH200", "H20", "RTX3090", "RTX4090", "RTX5090", "RTX6000",
    "RTXPRO6000", "A6000", "A5000", "A4000", "MI100", "MI210",
    "MI250", "MI250X", "MI300X", "MI325X", "Gaudi-HL-205", "Inferentia", "Inferentia2",
    "Trainium", "Trainium2",
)
_KNOWN = {a.upper(): a for a in ACCELERATORS}
DISK_TIERS = ("low", "medium", "high", "ultra", "best")
NETWORK_TIERS = ("standard", "best")
MOUNT_MODES = ("MOUNT", "COPY", "MOUNT_CACHED")
BUCKET_STORES = {"s3": "s3://", "gcs": "gs://", "azure": "az://"}
BUCKET_SCHEMES = ("s3://", "gs://")  # what SkyPilot mounts by these names
OTHER_STORES = ("r2://", "cos://", "oci://", "https://", "azure://", "nebius://")
MAX_DISK_GB = 65_536
# The other clouds and infra a SkyPilot task may name (SkyPilot's installation docs):
# costsched leaves them to `sky launch`; any other name is a typo, refused.
SKY_ONLY_CLOUDS = ("kubernetes", "k8s", "ssh", "slurm", "lambda", "runpod", "oci", "ibm",
                   "scp", "cudo", "fluidstack", "paperspace", "vsphere", "do", "nebius",
                   "coreweave", "seeweb", "primeintellect", "vast", "hyperbolic", "together")
DOCKER = "docker:"  # image_id: docker:IMAGE runs setup and run in that container
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_LABEL = re.compile(r"^[A-Za-z0-9_.:/-]{1,63}$")
# A container image reference: [registry[:port]/]path[:tag][@digest], no spaces or quotes.
_IMAGE_REF = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,511}")
# A Docker image's NAME:TAG (python:3.11, nvcr.io/nvidia/pytorch:24.07-py3): one colon,
# after the last slash. No machine image has that shape: an AMI id has none, a GCP image
# name none, an Azure image URN three.
_DOCKER_LOOKALIKE = re.compile(r"(?:[A-Za-z0-9._-]+/)*[A-Za-z0-9._-]+:[A-Za-z0-9._-]+")


def accelerator(item: str, where: str, fail: Fail) -> tuple[str, int] | str:
    """('V100', 1) for 'V100' or 'v100:1'; the known name alone (a str) when the catalog
    has no instance type with it; a one-line refusal for TPUs, fractions and typos."""
    name, _, count = str(item).strip().partition(":")
    count_written = bool(count.strip())
    name, count = name.strip(), count.strip() or "1"
    if name.lower().startswith("tpu"):
        raise fail(where, f"{item!r}: TPUs are not supported yet; `sky launch` runs TPU tasks")
    try:
        number = float(count)
    except ValueError:
        raise fail(where, f"{written(item)}: expected GPU or GPU:COUNT such as V100 or "
                   "A100:8") from None
    if number != int(number) or number < 1:
        if 0 < number < 1:
            raise fail(where, f"{item!r}: fractional GPUs are not supported yet; ask for "
                       "whole GPUs, or run it with `sky launch`")
        raise fail(where, f"{written(item)}: expected a whole GPU count of at least 1")
    try:
        return catalog.gpu_model_name(name), int(number)
    except InvalidInput:
        pass
    known = known_accelerator(name)
    if known is None:
        raise fail(where, f"{name!r}: not an accelerator costsched knows; "
                   + _meant(name, int(number), bool(count_written)))
    return known


def _meant(name: str, count: int, counted: bool) -> str:
    """The name meant, with its count ('did you mean 'T4:1'?'), first and alone where one
    is close (a count written into the name, 'l4x2', gives 'L4:2'); else every name."""
    together = counted_name(re.sub(r"[\s_]+", "-", name.strip().upper()))
    if together and not counted:
        return (f"did you mean {together!r}? (a count is written MODEL:COUNT; `costsched "
                "gpus` lists the GPUs it prices)")
    # A close alias ('H100-80G' of 'H100-80GB') means the model it names ('H100').
    close = list(dict.fromkeys(GPU_ALIASES.get(c, c) for c in closest(
        name, dict.fromkeys([*GPU_MODELS, *ACCELERATORS, *GPU_ALIASES]))))
    if close:
        return ("did you mean " + " or ".join(repr(f"{c}:{count}") for c in close)
                + "? (`costsched gpus` lists the GPUs it prices)")
    return "expected one of " + ", ".join(ACCELERATORS)


def known_accelerator(name: str) -> str | None:
    """SkyPilot's spelling of an accelerator the clouds sell (`ACCELERATORS`), given any
    case ('rtx4090' -> 'RTX4090'); None for a name outside it."""
    return _KNOWN.get(re.sub(r"[\s_]+", "-", str(name).strip().upper()))


def accelerator_items(value: Any, where: str, fail: Fail) -> list[str]:
    """The items of 'V100:1', {V100: 1, A100: 8}, a YAML set or a list, in the file's order."""
    if isinstance(value, (int, float, bool)) or value is None:
        raise fail(where, "expected GPU:COUNT (V100:1), a set or a list of them")
    if isinstance(value, str):
        if "," in value:
            raise fail(where, f"{value!r}: one accelerator per string; write several as "
                       "a set {V100: 1, A100: 8} or a list [V100:1, A100:8]")
        return [value]
    if isinstance(value, dict):
        return [str(k) if v is None else f"{k}:{v}" for k, v in value.items()]
    if isinstance(value, (set, frozenset)) and value:  # YAML !!set: no order, so sorted
        return sorted(str(v) for v in value)
    if isinstance(value, list) and value and all(isinstance(v, (str, dict)) for v in value):
        return [x for v in value for x in (accelerator_items(v, where, fail)
                                           if isinstance(v, dict) else [str(v)])]
    raise fail(where, "expected GPU:COUNT (V100:1), a set or a list of them")


# Units a size in GB may be written with, as SkyPilot reads memory and disk sizes: GB by
# default ('32', '32GB', '32G', '32GiB'), TB as 1,024 of them ('1TB').
SIZE_UNITS = {"": 1, "g": 1, "gb": 1, "gib": 1, "t": 1024, "tb": 1024, "tib": 1024}
SIZE_FORMS = "a unit of GB or TB may follow ('32GB', '1TB')"


def in_gb(text: str) -> float:
    """GB of '32', '32GB', '32 GiB', '1TB' (nan where it is no size: '16PB', 'lots')."""
    m = re.fullmatch(r"([0-9]*\.?[0-9]+)\s*([A-Za-z]*)", text.strip())
    factor = SIZE_UNITS.get(m.group(2).lower()) if m else None
    return float(m.group(1)) * factor if m and factor else float("nan")


def amount(value: Any, where: str, fail: Fail, unit: str) -> tuple[float, str]:
    """(amount, how) of 8, '8', '8+' (cpus), and for memory in GB also '32GB+', '1TB' and
    '4x' (GB per vCPU); how is '' (exactly), '+' (at least) or 'x' (at least that many GB
    per vCPU), as SkyPilot reads them."""
    text = str(value).strip() if not isinstance(value, bool) else ""
    how = text[-1:] if text[-1:] in ("+", "x") and (unit == "GB" or text[-1:] == "+") else ""
    number = text[:len(text) - len(how)].strip()
    try:
        x = in_gb(number) if unit == "GB" and how != "x" else float(number)
    except ValueError:
        x = float("nan")
    if not (0 < x <= 100_000):
        also = f", or GB per vCPU with 'x' ('4x'); {SIZE_FORMS}" if unit == "GB" else ""
        raise fail(where, f"{written(value)}: expected a number of {unit}, or at least that many "
                   f"with '+' (8, '8+'){also}")
    return x, how


def ports(value: Any, fail: Fail) -> list[str]:
    """['8080', '10000-10010'] of 8080, '8080', '10000-10010' or a list of them."""
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        text = str(item).strip() if isinstance(item, (int, str)) and not isinstance(
            item, bool) else ""
        m = re.fullmatch(r"(\d{1,5})(?:\s*-\s*(\d{1,5}))?", text)
        lo, hi = (int(m.group(1)), int(m.group(2) or m.group(1))) if m else (0, 0)
        if not m or not 1 <= lo <= hi <= 65535:
            raise fail("resources.ports", f"{written(item)}: expected a port (8080), a range "
                       "('10000-10010') or a list of them, from 1 to 65535")
        out.append(str(lo) if lo == hi else f"{lo}-{hi}")
    if not out:
        raise fail("resources.ports", "expected a port (8080), a range or a list of them")
    return out


def disk_size(value: Any, fail: Fail) -> int:
    gb = in_gb(str(value)) if not isinstance(value, (bool, float)) else float("nan")
    if not gb.is_integer() or not 1 <= gb <= MAX_DISK_GB:
        raise fail("resources.disk_size", f"{written(value)}: expected whole GB from 1 to "
                   f"{MAX_DISK_GB}; {SIZE_FORMS}")
    return int(gb)


def choice(value: Any, field: str, accepted: tuple[str, ...], fail: Fail) -> str:
    text = str(value).strip().lower() if isinstance(value, str) else ""
    if text not in accepted:
        raise fail(field, f"{written(value)}: expected one of {', '.join(accepted)}"
                   + did_you_mean(str(value), accepted))
    return text


def image(value: Any, fail: Fail) -> str | dict[str, str]:
    """An image id, or one per region ({us-east-1: ami-..., us-west-2: ami-...})."""
    if isinstance(value, dict) and value and all(
            isinstance(k, str) and isinstance(v, str) and v for k, v in value.items()):
        for place, one in value.items():
            _image_place(place, one, fail)
        return {str(k): str(v) for k, v in value.items()}
    if not isinstance(value, str) or not value.strip():
        raise fail("resources.image_id", "expected an image id, or a mapping of region: "
                   "image id")
    value = value.strip()
    if value.startswith(DOCKER):
        ref = value[len(DOCKER):].strip()
        if not _IMAGE_REF.fullmatch(ref):
            raise fail("resources.image_id", f"{written(value)}: expected docker:IMAGE, such as "
                       "docker:nvcr.io/nvidia/pytorch:24.07-py3")
        return DOCKER + ref
    if _DOCKER_LOOKALIKE.fullmatch(value) and not value.startswith("skypilot:"):
        raise fail("resources.image_id", f"{value!r} is written as a Docker image: give it "
                   f"as docker:{value} (without docker:, image_id names a machine image: an "
                   "AMI id, a GCP image, an Azure publisher:offer:sku:version)")
    return value


def _image_place(place: str, one: str, fail: Fail) -> None:
    """A key of image_id's mapping is a region of some cloud or a cloud: an image kept for a
    place that does not exist would never be used, and the default image run instead."""
    problem = None if place in clouds.NAMES else clouds.region_problem(place)
    if problem:
        raise fail(f"resources.image_id.{place}", f"{problem} (or a cloud: "
                   f"{', '.join(clouds.NAMES)})")
    if one.strip().startswith(DOCKER):
        raise fail(f"resources.image_id.{place}", f"{one!r}: a Docker image runs the same "
                   "in every region: give it as image_id: docker:IMAGE, for all of them")


def docker_image(image_id: Any) -> str:
    """The container image of an image_id `docker:IMAGE` ('' for a machine image)."""
    if isinstance(image_id, str) and image_id.startswith(DOCKER):
        return image_id[len(DOCKER):]
    return ""


def labels(value: Any, fail: Fail) -> dict[str, str]:
    if not isinstance(value, dict):
        raise fail("resources.labels", "expected a mapping of NAME: value")
    out = {}
    for k, v in value.items():
        if not _LABEL.match(str(k)) or isinstance(v, (dict, list)) or v is None:
            raise fail(f"resources.labels.{k}", "expected a key of letters, digits, '-', "
                       "'_', '.', ':' or '/' (at most 63) and a text value")
        out[str(k)] = str(v)
    return out


def fill(value: Any, values: Mapping[str, str | None], missing: set[str]) -> Any:
    """`value` (text, or a mapping or list of them, keys included) with ${VAR} and $VAR
    filled from `values` (the task's envs), as SkyPilot fills file mounts and the workdir.
    A variable without a value (or not in envs) is left as written, its name added to
    `missing`: what `launch` will need."""
    if isinstance(value, dict):
        return {fill(k, values, missing): fill(v, values, missing) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, values, missing) for v in value]
    if not isinstance(value, str):
        return value

    def one(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        if values.get(name) is None:
            missing.add(name)
            return m.group(0)
        return str(values[name])

    return _VAR.sub(one, value)


def unfilled(names: set[str], values: Mapping[str, str | None]) -> str:
    """What a launch must be given for the variables `names` (one line)."""
    name = sorted(names)[0]
    if name in values:
        return (f"${{{name}}} has no value: give envs.{name} a value, or {env_option(name)} "
                "at launch")
    return (f"${{{name}}} is not one of the task's envs: add envs.{name} (a value, or none "
            f"to give it at launch with {env_option(name)})")


def is_bucket(uri: str) -> bool:
    """Whether a mount's source is a bucket: s3://, gs://, or an Azure Blob container
    (az://CONTAINER, in config azure.storage_account, or its account's URL)."""
    return clouds.storage_cloud(uri) is not None


def written_to(source: Any) -> bool:
    """Whether a file mount (as written) is one the task writes to, so that it may hold the
    checkpoints: a bucket whose mode is written MOUNT or MOUNT_CACHED, or one SkyPilot
    makes by `name` without a `source` (an empty bucket for outputs, mounted read-write by
    default). A bucket given as a `source` without a mode is the task's data (SkyPilot
    mounts it read-write, but the task reads it); one in mode COPY, or written as a plain
    URI, is copied down once, read-only: what is written there never reaches it."""
    if not isinstance(source, dict):
        return False
    mode = str(source.get("mode") or "").upper()
    if mode in ("MOUNT", "MOUNT_CACHED"):
        return True
    return not mode and "name" in source and not source.get("source")


def bucket_of(source: Any, path: str, cloud_default: str, fail: Fail) -> tuple[str, str]:
    """(bucket URI or local path, mode) of one file mount, in any of SkyPilot's forms:
    'gs://b/p' or a local path (copied); {source: ..., mode: ...};
    {name: b, store: s3 | gcs | azure, mode: ..., source: local data to upload}."""
    where = f"file_mounts.{path}"
    mode = "COPY"
    if isinstance(source, dict) and not source.get("name") and not source.get("source") \
            and "name" in source:  # a bucket to name before launch (name: left empty)
        mode = str(source.get("mode", "MOUNT")).upper()
        store = str(source.get("store") or cloud_default).lower()
        return BUCKET_STORES.get(store, BUCKET_STORES[cloud_default]), \
            mode if mode in MOUNT_MODES else "MOUNT"
    if isinstance(source, dict):
        extra = sorted(set(source) - {"name", "source", "store", "mode", "persistent",
                                      "_force_delete", "config"})
        if extra:
            raise fail(f"{where}.{extra[0]}", "not a field of a file mount; expected name, "
                       "source, store, mode, persistent" + did_you_mean(
                           str(extra[0]), ("name", "source", "store", "mode", "persistent")))
        mode = str(source.get("mode", "MOUNT")).upper()
        if mode not in MOUNT_MODES:
            raise fail(f"{where}.mode", f"{written(source.get('mode'))}: expected one of "
                       + ", ".join(MOUNT_MODES) + did_you_mean(mode, MOUNT_MODES))
        if source.get("name"):
            store = str(source.get("store") or cloud_default).lower()
            if "$" in store:  # a variable given at launch: the cloud's store until then
                store = cloud_default
            if store not in BUCKET_STORES:
                raise fail(f"{where}.store", f"{source.get('store')!r}: costsched mounts "
                           "buckets of s3, gcs and azure; others run with `sky launch`"
                           + did_you_mean(store, BUCKET_STORES))
            return f"{BUCKET_STORES[store]}{source['name']}", mode
        if not source.get("source"):
            raise fail(where, "expected source (a bucket or local path) or name (a bucket)")
        source = source["source"]
    if not isinstance(source, str) or not source.strip():
        raise fail(where, "expected a bucket (s3://..., gs://..., az://...) or a local path")
    if source.startswith(OTHER_STORES) and not is_bucket(source):
        raise fail(where, f"{source!r}: costsched mounts s3://, gs:// and az:// buckets (or "
                   "a Blob account's URL) and local paths; other stores run with `sky launch`")
    return source.strip(), mode
