"""Carrying a checkpoint between clouds' stores (`launchers.carry`): throughput and memory.

A checkpoint of --mb MB (random bytes) is published in one store and carried into another by
a child process (what costsched does at a move to another cloud), on loopback stand-ins:
moto's S3 server, the loopback Azure Blob service and the loopback GCS of the tests, all
served from this (parent) process so that the child's peak RSS is the copy's own. For each
pair the child also does what a copy through local disk would (fetch the version to a
temporary file, then publish it), side by side in the same run:

    pair             streamed MB/s  peak RSS MB (+ over the child's start)  via disk MB/s  ratio

The streamed copy holds a few chunks (8 MiB blocks for Blob and GCS, 1 MiB for S3), never
the checkpoint: its peak RSS does not grow with --mb (try --mb 100 and --mb 400). Asserts
nothing.

    .venv/bin/python bench/bench_carry.py [--mb 300] [--pairs s3:azure,azure:s3,gcs:s3,s3:gcs]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
URIS = {"s3": "s3://bench-bucket/jobs/job-{}", "gcs": "gs://bench-bucket/jobs/job-{}",
        "azure": "az://ckpt/jobs/job-{}"}


def child(source: str, target: str, way: str) -> None:
    """Copy the newest version of `source` into `target`; print seconds and RSS (KB)."""
    from launchers.checkpoints import open_store

    src, dst = open_store(source), open_store(target)
    [checkpoint] = src.list()
    dst.list()  # the clients made and the connections open before the clock starts
    start_rss = _high_water_kb()
    began = time.perf_counter()
    if way == "streamed":
        from launchers.carry import carry

        carry(source, target)
    else:  # through local disk: a verified download, then a publish
        with tempfile.TemporaryDirectory() as folder:
            path = src.fetch(checkpoint, Path(folder))
            dst.publish(path)
    seconds = time.perf_counter() - began
    [copied] = dst.list()[-1:]
    assert copied.sha256 == checkpoint.sha256
    print(json.dumps({"seconds": seconds, "start_kb": start_rss, "peak_kb": _high_water_kb()}))


def _high_water_kb() -> int:
    """This process's peak resident memory (VmHWM: unlike ru_maxrss, not inherited from
    the parent it was forked from)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=300)
    parser.add_argument("--pairs", default="s3:azure,azure:s3,gcs:s3,s3:gcs")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    sys.path.insert(0, str(ROOT))
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's server logs each request
    from moto.server import ThreadedMotoServer

    from tests.launchers.azure_fake import Azure
    from tests.launchers.checkpoints.gcs_fake import FakeGcs
    from tests.launchers.test_boot_path import free_port

    with tempfile.TemporaryDirectory() as folder, FakeGcs("bench-bucket", page_size=1000) \
            as gcs, Azure(Path(folder) / "azure") as azure:
        port = free_port()
        moto = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        moto.start()
        env = {**os.environ, **azure.env(), "STORAGE_EMULATOR_HOST": gcs.url,
               "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
               "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
               "PYTHONPATH": str(ROOT)}
        os.environ.update(env)
        try:
            import boto3

            boto3.client("s3").create_bucket(Bucket="bench-bucket")
            data = Path(folder) / "checkpoint.npz"
            with data.open("wb") as out:
                for _ in range(args.mb):
                    out.write(os.urandom(1 << 20))
            print(f"{args.mb} MB checkpoint; loopback stores served by this process\n")
            print(f"{'pair':12} {'streamed MB/s':>14} {'peak RSS MB':>12} {'(+ start)':>10} "
                  f"{'via disk MB/s':>14} {'peak RSS MB':>12} {'streamed/disk':>14}")
            for n, pair in enumerate(args.pairs.split(",")):
                source_kind, target_kind = pair.split(":")
                rows = {}
                for k, way in enumerate(("streamed", "disk")):
                    job = 10 * n + k
                    source, target = (URIS[source_kind].format(job),
                                      URIS[target_kind].format(job + 100))
                    from launchers.checkpoints import open_store

                    open_store(source).publish(data)
                    done = subprocess.run([sys.executable, __file__, "--child", source,
                                           target, way], env=env, capture_output=True,
                                          text=True, check=False)
                    if done.returncode:
                        raise SystemExit(f"{pair} {way}: {done.stderr[-2000:]}")
                    rows[way] = json.loads(done.stdout.strip().splitlines()[-1])
                s, d = rows["streamed"], rows["disk"]
                print(f"{pair:12} {args.mb / s['seconds']:14.1f} {s['peak_kb'] / 1024:12.0f} "
                      f"{(s['peak_kb'] - s['start_kb']) / 1024:10.0f} "
                      f"{args.mb / d['seconds']:14.1f} {d['peak_kb'] / 1024:12.0f} "
                      f"{d['seconds'] / s['seconds']:14.2f}")
        finally:
            moto.stop()


if __name__ == "__main__":
    main()
