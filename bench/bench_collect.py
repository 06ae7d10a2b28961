"""Collector benchmark: does a full AWS refresh parallelize over regions?

Every AWS API call (DescribeRegions, Price List GetProducts, DescribeSpotPriceHistory
pages) is answered after an injected latency (default 200 ms) by a botocore 'before-send'
handler, so the real boto3 clients, paginators, parsers and retry handler run; only the
network is replaced. A full refresh of N regions (default 30, regions from
DescribeRegions) is timed against a refresh of one region, side by side in one run.
Target: the full refresh takes under 5x the single region. Prints; asserts nothing.

    .venv/bin/python bench/bench_collect.py [--regions 30] [--latency 0.2] [--workers 32]

The fake renders each answer once, in an untimed first refresh: producing the XML is
AWS's work, and in-process it would compete with the client for the GIL.

Two scenarios: an hourly incremental refresh (few spot rows per region: one page) and a
first-run backfill (1,500 rows per region: two pages). Past the latency, a refresh is
CPU-bound (botocore builds an EC2 client per region and parses every row, under the GIL),
which is what the backfill ratio shows.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for tests.price_collectors

from price_collectors.aws import AwsCollector  # noqa: E402
from tests.price_collectors.aws_fake import FakeAws  # noqa: E402

TARGET_RATIO = 5.0
NOW = datetime(2026, 11, 21, tzinfo=timezone.utc)
TYPES = ["p3.2xlarge", "p3.8xlarge", "g4dn.xlarge", "g5.xlarge", "g6.xlarge", "p4d.24xlarge"]


def region_names(count: int) -> list[str]:
    geos = ["us-east", "us-west", "eu-west", "eu-central", "ap-south", "ap-northeast",
            "ap-southeast", "sa-east", "ca-central", "me-south", "af-south", "eu-north"]
    return [f"{geos[i % len(geos)]}-{i // len(geos) + 1}" for i in range(count)]


def spot_items(region: str, per_region: int) -> list[dict]:
    """A plausible week of spot price changes: per_region rows over 3 zones."""
    items = []
    for n in range(per_region):
        items.append({"AvailabilityZone": f"{region}{'abc'[n % 3]}",
                      "InstanceType": TYPES[n % len(TYPES)], "ProductDescription": "Linux/UNIX",
                      "SpotPrice": f"{0.5 + (n % 17) / 100:.6f}",
                      "Timestamp": (NOW - timedelta(minutes=7 * n)).strftime(
                          "%Y-%m-%dT%H:%M:%S.000Z")})
    return items


def refresh(fake: FakeAws, regions: list[str] | None, workers: int) -> tuple[float, int, int]:
    """(seconds, observations, API calls) of one refresh."""
    fake.calls.clear()
    collector = AwsCollector(regions=regions or (), clients=fake.clients(), now=NOW,
                             max_workers=workers)
    start = time.perf_counter()
    collection = collector.collect(since=NOW - timedelta(days=7))
    elapsed = time.perf_counter() - start
    assert not collection.failed, collection.failed
    return elapsed, len(collection.observations), sum(fake.calls.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--regions", type=int, default=30)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per API call")
    parser.add_argument("--workers", type=int, default=32, help="regions at once")
    args = parser.parse_args()

    names = region_names(args.regions)
    refresh(FakeAws(spot={names[0]: []}), [names[0]], 1)  # import and warm up once
    print(f"injected latency per API call: {args.latency * 1000:.0f} ms; workers: {args.workers}")
    for scenario, rows in (("hourly refresh", 50), ("first-run backfill", 1500)):
        fake = FakeAws(spot={r: spot_items(r, rows) for r in names}, regions=names,
                       latency=args.latency)
        refresh(fake, None, args.workers)  # the fake renders (and keeps) AWS's answers once
        one, one_rows, one_calls = refresh(fake, [names[0]], args.workers)
        full, full_rows, full_calls = refresh(fake, None, args.workers)
        ratio = full / one
        print(f"{scenario}, {rows:,} spot rows per region:")
        print(f"  single region ({names[0]}):  {one:6.2f} s  {one_calls:3d} calls  "
              f"{one_rows:7,d} rows")
        print(f"  all {args.regions} regions:           {full:6.2f} s  {full_calls:3d} calls  "
              f"{full_rows:7,d} rows")
        print(f"  ratio all / single: {ratio:.2f}x (target < {TARGET_RATIO:g}x: "
              f"{'met' if ratio < TARGET_RATIO else 'NOT met'}); one region after another "
              f"would be about {full_calls / max(one_calls, 1):.0f}x")


if __name__ == "__main__":
    main()
