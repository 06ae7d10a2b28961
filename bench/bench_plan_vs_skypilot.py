"""Planning one task at full catalog size: costsched in process beside SkyPilot's optimizer
on the same prices.

costsched: `service.plan` of one task (ResNet-50 (batch size 64), 100,000 steps, both
markets) over the bundled GPU offerings of AWS and Azure (the bundled on-demand list
prices and spot snapshot, no store), warm, median of --runs calls; two cases: any GPU
model and count (every offering), and one GPU model:count (A10G:1).

SkyPilot: the same prices written as SkyPilot catalog files (one row per region and
instance type: on-demand `Price`, spot `SpotPrice` where the snapshot has one) in a
throwaway home directory, and `sky.Optimizer.optimize` of one task asking for any of the
(GPU model, count) pairs those offerings have, on spot or on-demand, with AWS and Azure
taken as enabled (no credentials are read: SkyPilot's cloud check is replaced by that
list); for the second case, A10G:1 alone. Run in the interpreter given by
--skypilot-python (a separate venv: SkyPilot is no dependency of costsched), warm, median
of --runs calls; "not installed" otherwise. GCP is
left out of both sides: SkyPilot prices a GCP GPU machine as a host row plus a separate
accelerator row, which the bundled prices do not split.

The two do not answer the same question (SkyPilot: the cheapest hourly price among the
resources asked for; costsched: the lowest expected cost of the whole job, from its
throughput on each GPU and the spot preemption risk), so each one's choice is printed
beside the time. Prints the ratio of the times; asserts nothing.

    .venv/bin/python bench/bench_plan_vs_skypilot.py [--runs 5] \\
        [--skypilot-python /tmp/skyvenv/bin/python]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

CLOUDS = ["aws", "azure"]
TASK = {"name": "bench", "model": "ResNet-50 (batch size 64)", "steps": 100_000,
        "constraints": {"clouds": CLOUDS}}
ONE = ("A10G", 1)  # the second case's GPU model and count
AWS_COLUMNS = ["InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB",
               "GpuInfo", "Price", "SpotPrice", "Region", "AvailabilityZone", "Arch"]
AZURE_COLUMNS = ["InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB",
                 "GpuInfo", "Price", "SpotPrice", "Region", "Generation"]

# Run by the SkyPilot interpreter: argv[1] the home directory holding the catalog, argv[2]
# the (GPU, count) pairs as JSON, argv[3] the runs. Prints one JSON line.
SKYPILOT_SIDE = r'''
import json, os, statistics, sys, time
home, pairs, runs = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
os.environ["HOME"] = home
import sky
from sky import check, clouds
from sky.optimizer import Optimizer
from sky.utils.common import OptimizeTarget

enabled = [clouds.AWS(), clouds.Azure()]
check.get_cached_enabled_clouds_or_refresh = lambda *a, **k: enabled


def dag():
    with sky.Dag() as d:
        task = sky.Task(name="bench", run="true")
        task.set_resources({sky.Resources(accelerators={gpu: count}, use_spot=spot)
                            for gpu, count in pairs for spot in (True, False)})
    return d


def optimize():
    d = Optimizer.optimize(dag(), minimize=OptimizeTarget.COST, quiet=True)
    return d.tasks[0].best_resources


best = optimize()  # warm: catalogs read, clouds imported
times = []
for _ in range(runs):
    start = time.perf_counter()
    optimize()
    times.append(time.perf_counter() - start)
print(json.dumps({"seconds": statistics.median(times), "version": sky.__version__,
                  "choice": f"{best.cloud} {best.region} {best.instance_type} "
                            f"{'spot' if best.use_spot else 'on-demand'}"}))
'''


def write_catalog(home: Path, prices) -> list[tuple[str, int]]:  # noqa: ANN001
    """The offerings' prices as SkyPilot catalog files under `home`; the (GPU, count)
    pairs they have."""
    version = _schema_version()
    rows: dict[tuple[str, str, str], dict] = {}
    for r in prices.to_dict("records"):
        key = (r["cloud"], r["region"], r["instance_type"])
        row = rows.setdefault(key, {"cloud": r["cloud"], "region": r["region"],
                                    "type": r["instance_type"], "gpu": r["gpu_model"],
                                    "count": int(r["gpu_count"]), "vcpus": r["vcpus"],
                                    "memory": r["memory_gb"], "od": None, "spot": None})
        market = "od" if r["market"] == "on_demand" else "spot"
        price = float(r["usd_per_hour"])
        row[market] = price if row[market] is None else min(row[market], price)
    pairs = set()
    for cloud, columns in (("aws", AWS_COLUMNS), ("azure", AZURE_COLUMNS)):
        folder = home / ".sky" / "catalogs" / version / cloud
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / "vms.csv").open("w", newline="") as fh:
            out = csv.writer(fh)
            out.writerow(columns)
            for row in rows.values():
                if row["cloud"] != cloud or row["od"] is None:
                    continue
                pairs.add((row["gpu"], row["count"]))
                spot = "" if row["spot"] is None else row["spot"]
                common = [row["type"], row["gpu"], row["count"], row["vcpus"], row["memory"],
                          "", row["od"], spot, row["region"]]
                out.writerow([*common, f"{row['region']}a", "x86_64"] if cloud == "aws"
                             else [*common, "V1"])
        for extra, header in (("images.csv", "Tag,Region,OS,OSVersion,ImageId,CreationDate"),
                              ("instance_quota_mapping.csv", "InstanceType,QuotaCode")):
            (folder / extra).write_text(header + "\n")
    # The accelerator names SkyPilot knows, and on which clouds.
    shared = home / ".sky" / "catalogs" / version / "common"
    shared.mkdir(parents=True, exist_ok=True)
    names = {"aws": "AWS", "azure": "Azure"}
    by_gpu: dict[str, set[str]] = {}
    for row in rows.values():
        by_gpu.setdefault(row["gpu"], set()).add(names[row["cloud"]])
    with (shared / "accelerators.csv").open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["AcceleratorName", "Clouds"])
        out.writerows((gpu, ", ".join(sorted(on))) for gpu, on in sorted(by_gpu.items()))
    (shared / "metadata.csv").write_text("GPU,MemoryGB,Manufacturer\n")
    # SkyPilot maps AWS zone ids to names with the account's mapping: here, names to
    # themselves.
    zones = sorted({f"{r['region']}a" for r in rows.values() if r["cloud"] == "aws"})
    mapping = home / ".sky" / "catalogs" / version / "aws" / "az_mappings-default.csv"
    mapping.write_text("AvailabilityZone,AvailabilityZoneName\n"
                       + "".join(f"{z},{z}\n" for z in zones))
    return sorted(pairs)


def _schema_version() -> str:
    return os.environ.get("SKYPILOT_CATALOG_SCHEMA", "v8")


def skypilot(python: str | None, home: Path, pairs: list[tuple[str, int]],
             runs: int) -> dict | str:
    """SkyPilot's median optimize time and choice, or why there is none."""
    if not python:
        return "not installed (give --skypilot-python: a venv with the skypilot package)"
    try:
        done = subprocess.run([python, "-c", SKYPILOT_SIDE, str(home), json.dumps(pairs),
                               str(runs)], capture_output=True, text=True, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"not run: {exc}"
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"not installed or failed in {python}: {tail}"
    return json.loads(lines[-1])


def plan_time(spec, at: datetime, runs: int) -> tuple[float, object]:  # noqa: ANN001
    """costsched's median seconds to plan `spec` (warm) and its ranking."""
    from costsched import service

    ranking = service.plan(None, spec, at=at).ranking(spec.name)  # warm
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        service.plan(None, spec, at=at)
        times.append(time.perf_counter() - start)
    return statistics.median(times), ranking


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skypilot-python", help="Python of a venv with skypilot.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["COSTSCHED_DB"] = str(Path(tmp) / "none.sqlite")
        os.environ["COSTSCHED_DISCOVERED_TYPES"] = str(Path(tmp) / "none.csv")
        from costsched.jobspec import parse
        from costsched.prices import prices_at

        at = datetime.now(timezone.utc)
        pairs = write_catalog(Path(tmp), prices_at(None, at, clouds=CLOUDS))
        one = {**TASK, "constraints": {**TASK["constraints"], "gpu_models": [ONE[0]],
                                       "gpu_counts": [ONE[1]]}}
        cases = (("any GPU model:count", TASK, pairs), (f"{ONE[0]}:{ONE[1]} only", one, [ONE]))
        for name, task, asked in cases:
            ours, ranking = plan_time(parse(task), at, args.runs)
            best = ranking.iloc[0]
            print(f"{name}: costsched plans {len(ranking)} offerings in {ours * 1000:.0f} ms "
                  f"(median of {args.runs}, warm): {best['cloud']} "
                  f"{best['zone'] or best['region']} {best['instance_type']} {best['market']}")
            theirs = skypilot(args.skypilot_python, Path(tmp), asked, args.runs)
            if isinstance(theirs, str):
                print(f"  skypilot: {theirs}")
                continue
            print(f"  skypilot {theirs['version']} optimizes {len(asked) * 2} resources "
                  f"({len(asked)} GPU model:count x spot/on-demand) in "
                  f"{theirs['seconds'] * 1000:.0f} ms: {theirs['choice']}")
            print(f"  costsched / skypilot time: {ours / theirs['seconds']:.2f}x "
                  f"({'faster' if ours < theirs['seconds'] else 'slower'})")


if __name__ == "__main__":
    main()
