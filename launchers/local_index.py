"""The local launcher's records beside its instance folders, so that listing many instances
opens only the folders that changed:

    base_dir/.index.json  instances that settled (ended, or stopped), keyed by their
                    folder's change time
    base_dir/.jobs/<job_id>/<attempt>  one empty file per launch: a job's instances are
                    found without listing every folder ever made
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from launchers.base import INSTANCE_STATES, Instance
from launchers.cloud_times import utc
from launchers.json_files import read_json

INDEX = ".index.json"  # settled instances, so that scans need not open their folders
JOBS = ".jobs"  # JOBS/<job id>/<attempt>: a job's instances, found without listing them all
_INDEX_VERSION = 1
ID = re.compile(r"[0-9]{1,18}-[A-Za-z0-9_.-]{1,100}")  # an instance folder's name


def note_attempt(base: Path, job_id: int, attempt: str) -> None:
    """Enter the attempt in JOBS (made from the folders there are, the first time)."""
    jobs = base / JOBS
    if not jobs.is_dir():
        build_jobs(base)
    (jobs / str(job_id)).mkdir(exist_ok=True)
    (jobs / str(job_id) / attempt).touch()


def build_jobs(base: Path) -> None:
    """JOBS from the instance folders of `base` (made by a version before it): built
    aside, then renamed into place, so that it is complete whenever it exists."""
    temp = base / f"{JOBS}.{os.getpid()}.{time.monotonic_ns()}.tmp"
    temp.mkdir()
    for name in os.listdir(base):
        if ID.fullmatch(name):
            job, _, attempt = name.partition("-")
            (temp / job).mkdir(exist_ok=True)
            (temp / job / attempt).touch()
    try:
        os.rename(temp, base / JOBS)
    except OSError:  # another process made it first: its entries and ours are the same
        shutil.rmtree(temp, ignore_errors=True)


def attempts(base: Path, job_id: int) -> set[str] | None:
    """The instance ids JOBS holds for the job; None when there is no JOBS (a directory
    no launch of this version wrote to): then the directory is listed."""
    try:
        return {f"{job_id}-{attempt}" for attempt in os.listdir(base / JOBS / str(job_id))}
    except FileNotFoundError:
        return None if not (base / JOBS).is_dir() else set()


@dataclass(frozen=True)
class Seen:
    instance: Instance
    launched_at: str  # ISO time of the launch: instances() lists in launch order


class Index:
    """INDEX: instances that settled, by folder name, with the folder's change time then.
    Any process may rewrite it (a temporary file renamed over it): an entry lost to a
    concurrent rewrite only means that folder is read again. Kept parsed between calls
    while the file is unchanged."""

    def __init__(self) -> None:
        self._stamp: tuple[int, int, int] | None = None
        self._entries: dict[str, tuple[int, Seen]] = {}

    def load(self, base: Path) -> dict[str, tuple[int, Seen]]:
        path = base / INDEX
        try:
            stat = path.stat()
        except OSError:
            self._stamp, self._entries = None, {}
            return self._entries
        stamp = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if stamp != self._stamp:
            self._stamp, self._entries = stamp, parse_index(read_json(path))
        return self._entries

    def save(self, base: Path, settled: dict[str, tuple[int, Seen]], gone: set[str]
             ) -> None:
        entries = {n: e for n, e in {**self.load(base), **settled}.items() if n not in gone}
        doc = {"version": _INDEX_VERSION, "instances": {
            name: [changed, seen.launched_at, _fields(seen.instance)]
            for name, (changed, seen) in entries.items()}}
        temp = base / f"{INDEX}.{os.getpid()}.{time.monotonic_ns()}.tmp"
        try:
            temp.write_text(json.dumps(doc, separators=(",", ":")))
            os.replace(temp, base / INDEX)
            stat = (base / INDEX).stat()
        except OSError:  # a read-only base: the folders are read each time instead
            with contextlib.suppress(OSError):
                temp.unlink()
            return
        self._entries = entries
        self._stamp = (stat.st_ino, stat.st_mtime_ns, stat.st_size)


def parse_index(doc: dict) -> dict[str, tuple[int, Seen]]:
    """The index's entries; one that does not read as an instance is left out (its folder
    is then read)."""
    if doc.get("version") != _INDEX_VERSION or not isinstance(doc.get("instances"), dict):
        return {}
    entries = {}
    for name, entry in doc["instances"].items():
        try:
            changed, launched_at, fields = entry
            instance = Instance(**{**fields, "offering_key": tuple(fields["offering_key"]),
                                   "lost_nodes": tuple(fields.get("lost_nodes", ())),
                                   "replacing": tuple(fields.get("replacing", ())),
                                   "created_at": utc(launched_at),
                                   "lost_at": utc(fields.get("lost_at")),
                                   "ended_at": utc(fields.get("ended_at")),
                                   "step_at": utc(fields.get("step_at"))})
        except (TypeError, ValueError, KeyError):
            continue
        if (isinstance(changed, int) and isinstance(launched_at, str)
                and instance.state in INSTANCE_STATES and instance.id == name):
            entries[name] = (changed, Seen(instance, launched_at))
    return entries


def _fields(instance: Instance) -> dict:
    """The instance as JSON: its `created_at` is its launch's time, kept beside it; its
    `running_nodes` (a cloud gang's nodes' starts) are never a local instance's; its
    `lost_at`, `ended_at` and `step_at` are kept as ISO times."""
    fields = dataclasses.asdict(instance)
    del fields["created_at"], fields["running_nodes"]
    fields["lost_at"] = instance.lost_at.isoformat() if instance.lost_at else None
    fields["ended_at"] = instance.ended_at.isoformat() if instance.ended_at else None
    fields["step_at"] = instance.step_at.isoformat() if instance.step_at else None
    return fields
