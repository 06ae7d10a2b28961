"""Opening S3 checkpoint stores: a new boto3 session for each store (as every store did)
against the client a process shares for its AWS environment (`launchers.checkpoints.s3.
shared_client`), side by side in one run: CPU seconds to open --stores stores and list each
(one call each, to moto in-process, so the listing is the same in both):

    way        CPU s   per store ms   ratio

Asserts nothing.

    .venv/bin/python bench/bench_s3_sessions.py [--stores 50]
"""

from __future__ import annotations

import argparse
import os
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", type=int, default=50)
    stores = parser.parse_args().stores
    os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench",
                      AWS_DEFAULT_REGION="us-east-1")
    from moto import mock_aws

    from costsched.clouds.aws import new_session
    from launchers.checkpoints.s3 import S3Store

    with mock_aws():
        new_session().client("s3").create_bucket(Bucket="bench-bucket")
        S3Store("bench-bucket", "warm").list()  # imports and moto's first call, for both
        ways = {"own session": lambda i: S3Store("bench-bucket", f"j{i}",
                                                 session=new_session()),
                "shared": lambda i: S3Store("bench-bucket", f"j{i}")}
        seconds = {}
        for way, open_one in ways.items():
            start = time.process_time()
            for i in range(stores):
                open_one(i).list()
            seconds[way] = time.process_time() - start
    print(f"{'way':<12} {'CPU s':>7} {'per store ms':>13} {'ratio':>6}")
    for way, cpu in seconds.items():
        print(f"{way:<12} {cpu:>7.2f} {cpu / stores * 1000:>13.1f} "
              f"{cpu / seconds['shared']:>6.1f}")


if __name__ == "__main__":
    main()
