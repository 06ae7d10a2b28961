"""A SkyPilot task's file mounts, made on the instance before the job's setup runs.

Each mount is {path, source, mode} (costsched.jobspec.MountSpec). A bucket (s3://, gs://,
an Azure Blob container: az:// or its account's URL) in mode COPY is copied down to `path`,
as SkyPilot does: the same objects give the same files from any of the three. In mode
MOUNT (or MOUNT_CACHED) it is mounted with the store's FUSE tool when the instance has it
(`mount-s3` for S3, `gcsfuse` for GCS, `blobfuse2` for Blob, as the instance's managed
identity), else copied down, saying that writes stay on the instance. Blob is read with the
checkpoint store's code (launchers.checkpoints.azure) and its credentials. A local
path (a folder or file on the machine costsched ran on) is copied where the launcher can
reach it: the local launcher, whose instances are this machine's processes.

`root` places every mount under a folder: '' on a cloud instance (the agent runs as
root, paths are the task's), a folder of the instance's own on the local launcher (a
local job must not write to this machine's /data). The job has that folder as
$COSTSCHED_MOUNTS ('' where the mounts are at their own paths), so it reads the mount at
/data as "$COSTSCHED_MOUNTS/data" on any launcher.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from costsched.clouds.base import installed

log = logging.getLogger(__name__)
# The job's variable naming the folder its mounts are under ('' when they are at their own
# paths): a job reads the mount at /data as $COSTSCHED_MOUNTS/data wherever it runs.
MOUNTS_ENV = "COSTSCHED_MOUNTS"
FUSE = {"s3": "mount-s3", "gs": "gcsfuse", "az": "blobfuse2"}
# What copies a bucket down (its module, and the costsched extra that installs it).
SDKS = {"s3": ("boto3", "aws"), "gs": ("google.cloud.storage", "gcp"),
        "az": ("azure.storage.blob", "azure")}


def sdk_missing(task: Mapping[str, Any]) -> str:
    """Where a task's bucket mount cannot be copied down on this machine, for want of the
    client library that reads its bucket: one line naming the field, the library and the
    extra that installs it ('' when every one can: the local launcher's instances are
    this machine's processes, with its Python)."""
    for mount in task.get("mounts") or []:
        source = str(mount.get("source", ""))
        module, extra = SDKS.get(scheme_of(source), ("", ""))
        if module and not installed(module):
            return (f"field file_mounts.{mount.get('path')}: {source}: the local launcher "
                    f"copies it onto this machine with {module}, which is not installed: "
                    f"pip install 'costsched[{extra}]'")
    return ""


def agent_args(task: Mapping[str, Any], root: str = "") -> list[str]:
    """The agent's arguments for a job's mounts and the path its checkpoint bucket is
    mounted at ([] without any)."""
    mounts = list(task.get("mounts") or [])
    at = str(task.get("checkpoint_mount") or "")
    if not mounts and not at:
        return []
    return [*(["--mounts", json.dumps(mounts)] if mounts else []),
            *(["--checkpoint-at", at] if at else []),
            *(["--mount-root", root] if root else [])]


def link_checkpoints(path: str, checkpoints: Path, root: str = "") -> str:
    """The task's checkpoint mount path (placed under `root`) as a link to the agent's
    checkpoint directory, so that a task written for SkyPilot, which writes its
    checkpoints there, has them published; what was done (one line). A path that exists
    already (not an empty folder) is left as it is."""
    target = place(path, root)
    if target.is_symlink() and target.resolve() == checkpoints.resolve():
        return f"{target} is the checkpoint directory"
    if target.is_dir() and not target.is_symlink() and not any(target.iterdir()):
        target.rmdir()
    if target.exists() or target.is_symlink():
        return (f"{target} exists: left as it is; the job's checkpoints are published from "
                f"$CHECKPOINT_DIR ({checkpoints})")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(checkpoints, target_is_directory=True)
    return f"{target} is the checkpoint directory (published to the checkpoint bucket)"


def place(path: str, root: str = "") -> Path:
    """Where the mount at `path` goes: the path itself, or under `root`."""
    target = Path(path).expanduser()
    if not root:
        return target
    inside = Path(root) / str(target).lstrip("/")
    if ".." in inside.parts:
        raise ValueError(f"mount path {path!r}: expected a path without '..'")
    return inside


def prepare(mounts: Sequence[Mapping[str, str]], root: str = "") -> list[str]:
    """Make every mount; the lines said about them. ValueError or OSError naming the mount
    that could not be made."""
    said = []
    for mount in mounts:
        target = place(mount["path"], root)
        source, mode = mount["source"], mount.get("mode", "COPY")
        scheme = scheme_of(source)
        if scheme in FUSE and mode != "COPY" and shutil.which(FUSE[scheme]):
            target.mkdir(parents=True, exist_ok=True)
            argv, env = _fuse(scheme, source, target, mount["path"])
            subprocess.run(argv, check=True, capture_output=True, timeout=120, env=env)
            said.append(f"mounted {source} at {target}")
            continue
        if scheme == "s3":
            files = _copy_s3(source, target)
        elif scheme == "gs":
            files = _copy_gcs(source, target)
        elif scheme == "az":
            files = _copy_az(source, target, mount["path"])
        elif scheme:
            raise ValueError(f"mount {mount['path']}: {source!r}: expected s3://, gs://, "
                             "az://, a Blob account's URL or a local path")
        else:
            files = _copy_local(Path(source), target)
        how = "copied" if mode == "COPY" else f"copied ({FUSE.get(scheme, 'a FUSE tool')} " \
            "is not installed: writes stay on this instance)"
        said.append(f"{how} {source} to {target}: {files} file{'' if files == 1 else 's'}")
    return said


def scheme_of(source: str) -> str:
    """'s3', 'gs', 'az' (az:// or a Blob account's URL), another URL's scheme, or '' for a
    local path."""
    if "://" not in source:
        return ""
    from costsched.clouds import storage_cloud

    if storage_cloud(source) == "azure":
        return "az"
    return source.split("://", 1)[0].lower()


def _fuse(scheme: str, source: str, target: Path, path: str
          ) -> tuple[list[str], dict[str, str] | None]:
    """The FUSE tool's argument vector mounting `source` at `target`, and its environment
    (None: this process's)."""
    if scheme == "az":  # blobfuse2, authorised by the VM's managed identity
        from launchers.checkpoints.azure import endpoint, parse

        account, suffix, container, prefix = parse(source, f"file mount {path}")
        cache = Path(tempfile.gettempdir()) / "costsched-blobfuse2" / hashlib.sha256(
            str(target).encode()).hexdigest()[:12]  # its file cache, one per mount
        cache.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "AZURE_STORAGE_ACCOUNT": account,
               "AZURE_STORAGE_AUTH_TYPE": "MSI",
               "AZURE_STORAGE_BLOB_ENDPOINT": endpoint(account, suffix)}
        return ([FUSE[scheme], "mount", str(target), f"--container-name={container}",
                 f"--tmp-path={cache}", "--virtual-directory=true"]
                + ([f"--subdirectory={prefix}"] if prefix else [])), env
    bucket, _, prefix = source.split("://", 1)[1].partition("/")
    if scheme == "s3":
        return [FUSE[scheme], bucket, str(target)] + (["--prefix", prefix + "/"]
                                                      if prefix else []), None
    return ([FUSE[scheme]] + (["--only-dir", prefix] if prefix else [])
            + [bucket, str(target)]), None


def _split(uri: str) -> tuple[str, str]:
    bucket, _, prefix = uri.split("://", 1)[1].partition("/")
    return bucket, prefix.strip("/")


def _copy_s3(uri: str, target: Path) -> int:
    import boto3

    bucket, prefix = _split(uri)
    s3 = boto3.client("s3")
    count = 0
    for page in s3.get_paginator("list_objects_v2").paginate(
            Bucket=bucket, Prefix=f"{prefix}/" if prefix else ""):
        for obj in page.get("Contents", []):
            count += _write(target, obj["Key"], prefix,
                            lambda dest, key=obj["Key"]: s3.download_file(bucket, key, dest))
    target.mkdir(parents=True, exist_ok=True)
    return count


def _copy_gcs(uri: str, target: Path) -> int:
    from google.cloud import storage

    bucket, prefix = _split(uri)
    client = storage.Client()
    count = 0
    for blob in client.list_blobs(bucket, prefix=f"{prefix}/" if prefix else None):
        count += _write(target, blob.name, prefix,
                        lambda dest, b=blob: b.download_to_filename(dest))
    target.mkdir(parents=True, exist_ok=True)
    return count


def _copy_az(uri: str, target: Path, path: str) -> int:
    from launchers.checkpoints.azure import AzureBlobStore

    store = AzureBlobStore(uri, what=f"file mount {path}")
    count = 0
    for name in store.names():
        count += _write(target, name, "", lambda dest, n=name: _save(store.download(n), dest))
    target.mkdir(parents=True, exist_ok=True)
    return count


def _save(chunks: Any, dest: str) -> None:
    with open(dest, "wb") as out:
        for chunk in chunks:
            out.write(chunk)


def _write(target: Path, key: str, prefix: str, fetch: Any) -> int:
    """One object under `target`, at its key less the prefix; 0 for a folder marker."""
    relative = key[len(prefix):].lstrip("/") if prefix else key
    if not relative or relative.endswith("/"):
        return 0
    dest = (target / relative).resolve()
    if target.resolve() not in dest.parents:
        raise ValueError(f"object {key!r}: outside its mount {target}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    fetch(str(dest))
    return 1


def _copy_local(source: Path, target: Path) -> int:
    if source.is_dir():
        shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)
        return sum(1 for p in target.rglob("*") if p.is_file())
    if source.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
        return 1
    raise ValueError(f"local path {source}: no such file or folder on this machine")


LOCAL_UNAPPLIED = ("ports", "disk_size", "disk_tier", "image_id", "labels", "network_tier")


def as_the_job_reads(path: str) -> str:
    """The mount at `path` as a job reaches it wherever it runs: $COSTSCHED_MOUNTS/PATH."""
    return f"${MOUNTS_ENV}/{str(Path(path).expanduser()).lstrip('/')}"


def local_note(task: Mapping[str, Any], root: Path) -> str:
    """What the local launcher says once about a task's fields it cannot apply on this
    machine ('' when there are none)."""
    unapplied = [f for f in LOCAL_UNAPPLIED if task.get(f)
                 and not (f == "image_id" and str(task[f]).startswith("docker:"))]
    parts = []
    if unapplied:
        parts.append(", ".join(unapplied) + " not applied (the local launcher runs the job "
                     "as a process on this machine)")
    if task.get("mounts"):
        first = str(task["mounts"][0].get("path", "")).lstrip("/")
        parts.append(f"file mounts placed under {root}, which the job has as "
                     f"${MOUNTS_ENV} (their paths made relative to it: /{first} is "
                     f"{root / first}, {as_the_job_reads(first)}; a job reading /{first} "
                     "finds nothing)")
    return f"costsched local launcher: {'; '.join(parts)}" if parts else ""
