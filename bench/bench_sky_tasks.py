"""Plan every SkyPilot task file in a directory and count the outcomes by class.

    python bench/bench_sky_tasks.py DIR [--verbose] [--timeout 60]

Each file is read twice: once here, with plain YAML, to set aside what is not a
single-node batch task on AWS, GCP or Azure (not a task, several YAML documents, several
nodes, TPUs, pinned to another cloud, a worker pool); then, for the rest, through
`costsched plan`'s own path (`costsched.service.plan`, an empty store: the bundled
catalog's prices), each file with a time limit. The outcomes:

    planned      a best offering was chosen
    no offering  read, but nothing in the catalog fits it
    refused      one line naming the file and the field (`InvalidInput`)
    crashed      any other exception (a defect)
    hung         the time limit passed (a defect)

Two checks run on what is planned or refused: a task that asks for no accelerator (and
names no GPU instance type) must not be planned on a GPU, and a refusal must be one line
that starts with the file's path and names a field. Service files (a `service:` section)
are counted apart too, since `sky launch` runs them as a task but `sky serve up` is what
serves them.
"""

from __future__ import annotations

import argparse
import collections
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

OUR_CLOUDS = {"aws", "gcp", "azure"}
TASK_KEYS = {"run", "setup", "resources", "file_mounts", "workdir", "envs", "num_nodes",
             "secrets", "service"}


class Hung(Exception):
    pass


def _alarm(_signum: int, _frame: Any) -> None:
    raise Hung


def _clouds(resources: dict) -> set[str]:
    """The clouds a task's resources pin it to ({} for unpinned), alternatives included."""
    def one(res: dict) -> str:
        where = res.get("infra") or res.get("cloud") or ""
        return str(where).split("/")[0].strip().lower() if where else ""

    alternatives = [a for k in ("any_of", "ordered", "candidates")
                    for a in (resources.get(k) or []) if isinstance(a, dict)]
    base = one(resources)
    named = {one({**resources, **a}) for a in alternatives} if alternatives else {base}
    return set() if "" in named or "*" in named else named


def _accelerators(resources: dict) -> str:
    found = [resources.get("accelerators"), resources.get("gpus")]
    for key in ("any_of", "ordered", "candidates"):
        found += [a.get("accelerators") for a in resources.get(key) or []
                  if isinstance(a, dict)]
    return " ".join(str(f) for f in found if f)


def set_aside(docs: list[Any]) -> str:
    """Why a file is not a single-node batch task on our clouds ('' when it is)."""
    if len(docs) != 1:
        return "several YAML documents (a pipeline or job group)" if docs else "empty"
    doc = docs[0]
    if not isinstance(doc, dict) or not TASK_KEYS & set(map(str, doc)):
        return "not a task"
    if "pool" in doc or "job_group" in doc:
        return "a worker pool or job group"
    nodes = doc.get("num_nodes", 1)
    if isinstance(nodes, int) and nodes > 1:
        return "several nodes"
    resources = doc.get("resources") or {}
    if not isinstance(resources, dict):
        return ""
    accelerators = _accelerators(resources).lower()
    if "tpu" in accelerators or "accelerator_args" in resources:
        return "TPU"
    clouds = _clouds(resources)
    if clouds and not clouds & OUR_CLOUDS:
        return "pinned to another cloud"
    return ""


def cpu_task(doc: dict) -> bool:
    """The file asks for no accelerator and names no instance type."""
    resources = doc.get("resources") or {}
    if not isinstance(resources, dict):
        return True
    types = [resources.get("instance_type")] + [a.get("instance_type") for k in (
        "any_of", "ordered", "candidates") for a in resources.get(k) or []
        if isinstance(a, dict)]
    return not _accelerators(resources) and not any(types)


def classify(path: Path, timeout: float, db: str) -> tuple[str, str, bool]:
    """(outcome, detail, is a service file) of one file."""
    from costsched.model import InvalidInput
    from costsched.service import plan

    try:
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        return "set aside: not valid YAML", str(exc).splitlines()[0], False
    why = set_aside(docs)
    if why:
        return f"set aside: {why}", "", False
    doc = docs[0]
    service = "service" in doc
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        result = plan(db, path)
    except InvalidInput as exc:
        message = str(exc)
        well = ("\n" not in message and message.startswith(str(path))
                and "field" in message)
        return ("refused" if well else "refused (not one line naming a field)"), message, \
            service
    except Hung:
        return "hung", f"more than {timeout:g} s", service
    except Exception as exc:  # noqa: BLE001 - a crash is what this counts
        return "crashed", f"{type(exc).__name__}: {exc}", service
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    job = result.jobs[0]
    best = job.best
    if best is None:
        return "no offering", str(job.reason or ""), service
    if cpu_task(doc) and int(best["gpu_count"]) > 0:
        return "CPU task planned on a GPU", f"{best['instance_type']}", service
    return "planned", f"{best['cloud']} {best['instance_type']} {best['market']}", service


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds one file may take to plan")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="one line per file: its outcome and detail")
    args = parser.parse_args(argv)
    files = sorted(p for p in args.dir.rglob("*") if p.suffix in (".yaml", ".yml"))
    if not files:
        parser.error(f"{args.dir}: no .yaml files")
    counts: collections.Counter[str] = collections.Counter()
    services: collections.Counter[str] = collections.Counter()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "empty.sqlite")
        for path in files:
            outcome, detail, service = classify(path, args.timeout, db)
            counts[outcome] += 1
            if service:
                services[outcome] += 1
            if args.verbose:
                print(f"{outcome:<40} {path.relative_to(args.dir)}  {detail}")
    elapsed = time.perf_counter() - started
    measured = {k: v for k, v in counts.items() if not k.startswith("set aside")}
    total = sum(measured.values())
    print(f"\n{len(files)} files, {total} single-node tasks on aws/gcp/azure or unpinned "
          f"({elapsed:.1f} s)")
    for outcome, n in sorted(counts.items(), key=lambda kv: (kv[0].startswith("set"),
                                                             -kv[1])):
        extra = f"  ({services[outcome]} of them service files)" if services[outcome] else ""
        print(f"  {outcome:<45} {n:>4}{extra}")
    if total:
        planned = measured.get("planned", 0)
        batch_total = total - sum(services.values())
        batch_planned = planned - services.get("planned", 0)
        print(f"planned: {planned} of {total} ({planned / total:.0%}); without service "
              f"files: {batch_planned} of {batch_total} "
              f"({batch_planned / max(batch_total, 1):.0%})")
    bad = sum(measured.get(k, 0) for k in ("crashed", "hung", "CPU task planned on a GPU",
                                           "refused (not one line naming a field)"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
