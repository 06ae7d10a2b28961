"""The S3 store against moto: what it sends, and the races and faults only S3 has."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import logging
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from costsched.model import InvalidInput
from launchers.checkpoints.s3 import S3Store
from tests.launchers.checkpoints.conftest import BUCKET, PREFIX


def b64sha(data: bytes) -> str:
    return base64.b64encode(hashlib.sha256(data).digest()).decode()


def record(client: Any, operation: str) -> list[Any]:
    """The requests the client sends for `operation` (botocore's own event hook)."""
    sent: list[Any] = []
    client.meta.events.register(f"before-send.s3.{operation}",
                                lambda request, **kwargs: sent.append(request))
    return sent


def header(request: Any, name: str) -> str:
    value = request.headers[name]
    return value.decode() if isinstance(value, bytes) else value


def source(tmp_path: Path, data: bytes = b"model weights") -> Path:
    path = tmp_path / "checkpoint.npz"
    path.write_bytes(data)
    return path


def test_puts_are_conditional_and_carry_the_sha256(s3: Any, tmp_path: Path) -> None:
    puts = record(s3, "PutObject")
    checkpoint = S3Store(BUCKET, PREFIX, client=s3).publish(source(tmp_path))

    assert [urlsplit(p.url).path for p in puts] == [
        f"/{PREFIX}/v00000001/checkpoint.npz", f"/{PREFIX}/v00000001.json"]
    assert all(header(p, "If-None-Match") == "*" for p in puts)
    assert header(puts[0], "x-amz-checksum-sha256") == b64sha(b"model weights")
    manifest = s3.get_object(Bucket=BUCKET, Key=f"{PREFIX}/v00000001.json")["Body"].read()
    assert header(puts[1], "x-amz-checksum-sha256") == b64sha(manifest)
    head = s3.head_object(Bucket=BUCKET, Key=f"{PREFIX}/v00000001/checkpoint.npz",
                          ChecksumMode="ENABLED")
    assert base64.b64decode(head["ChecksumSHA256"]).hex() == checkpoint.sha256


def test_verify_trusts_the_checksum_s3_kept(s3: Any, tmp_path: Path) -> None:
    store = S3Store(BUCKET, PREFIX, client=s3)
    checkpoint = store.publish(source(tmp_path, b"abcd"))
    gets = record(s3, "GetObject")

    assert store.verify(checkpoint)
    # replaced by an object of the same size with its own (different) checksum
    s3.put_object(Bucket=BUCKET, Key=f"{PREFIX}/v00000001/checkpoint.npz", Body=b"abce",
                  ChecksumAlgorithm="SHA256")
    assert not store.verify(checkpoint)
    assert gets == []  # decided from HeadObject alone


def test_a_manifest_lost_to_a_concurrent_publisher(s3: Any, tmp_path: Path) -> None:
    """Another publisher commits version 1 between our data and our manifest: ours moves to
    version 2 and its orphan data at version 1 is removed."""
    import boto3

    other = boto3.client("s3", region_name="us-east-1")
    theirs = b'{"version": 1, "name": "other.npz"}'

    def commit_theirs(request: Any, **kwargs: Any) -> None:
        if request.url.endswith("/v00000001/checkpoint.npz"):
            other.put_object(Bucket=BUCKET, Key=f"{PREFIX}/v00000001.json", Body=theirs)

    s3.meta.events.register("before-send.s3.PutObject", commit_theirs)
    checkpoint = S3Store(BUCKET, PREFIX, client=s3).publish(source(tmp_path))

    assert checkpoint.version == 2
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]}
    assert keys == {f"{PREFIX}/v00000001.json", f"{PREFIX}/v00000002.json",
                    f"{PREFIX}/v00000002/checkpoint.npz"}
    assert s3.get_object(Bucket=BUCKET, Key=f"{PREFIX}/v00000001.json")["Body"].read() == theirs


def test_a_manifest_whose_answer_was_lost_is_still_ours(s3: Any, tmp_path: Path) -> None:
    """The manifest's first put lands but its answer is lost (a read timeout): the client
    puts it again and S3 refuses, the key being taken, by that first put. The version is
    ours: published once, its data kept, no second version."""
    import boto3
    from botocore.exceptions import ReadTimeoutError

    other = boto3.client("s3", region_name="us-east-1")
    manifests: list[str] = []

    def land_then_lose_the_answer(request: Any, **kwargs: Any) -> None:
        if not request.url.endswith("/v00000001.json"):
            return
        manifests.append(header(request, "If-None-Match"))
        if len(manifests) == 1:
            # what S3 stored of the first attempt (unless the double stored it already)
            with contextlib.suppress(other.exceptions.ClientError):
                other.put_object(Bucket=BUCKET, Key=f"{PREFIX}/v00000001.json",
                                 Body=request.body, IfNoneMatch="*")
            raise ReadTimeoutError(endpoint_url=request.url)

    s3.meta.events.register("before-send.s3.PutObject", land_then_lose_the_answer)
    store = S3Store(BUCKET, PREFIX, client=s3)
    checkpoint = store.publish(source(tmp_path))

    assert manifests == ["*", "*"]  # sent twice, refused the second time
    assert checkpoint.version == 1
    assert store.list() == [checkpoint] and store.verify(checkpoint)
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]}
    assert keys == {f"{PREFIX}/v00000001.json", f"{PREFIX}/v00000001/checkpoint.npz"}


def test_listing_follows_pages(s3: Any, tmp_path: Path) -> None:
    store = S3Store(BUCKET, PREFIX, client=s3)
    published = [store.publish(source(tmp_path, bytes([i]))) for i in range(3)]
    lists = record(s3, "ListObjectsV2")
    s3.meta.events.register("provide-client-params.s3.ListObjectsV2",
                            lambda params, **kwargs: params.update(MaxKeys=2))
    assert store.list() == published
    assert len(lists) == 3  # 3 manifests + 3 folders, 2 a page


def test_a_missing_bucket_is_one_line(s3: Any, tmp_path: Path) -> None:
    store = S3Store("no-such-bucket", PREFIX, client=s3)
    with pytest.raises(InvalidInput, match="checkpoint store s3://no-such-bucket/jobs/7: "
                                           "bucket no-such-bucket does not exist"):
        store.publish(source(tmp_path))


def test_no_credentials_in_the_logs(s3: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s3cr3t-never-logged")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIANEVERLOGGED")
    caplog.set_level(logging.DEBUG)
    store = S3Store(BUCKET, PREFIX)  # its own session, from the environment
    checkpoint = store.publish(source(tmp_path))
    assert store.restore(tmp_path / "out") == checkpoint
    assert "published s3://ckpt-bucket/jobs/7 version 1" in caplog.text
    assert "s3cr3t-never-logged" not in caplog.text


def test_interleaved_publishers_never_share_a_version_nor_lose_a_checkpoint(
        s3: Any, tmp_path: Path) -> None:
    """Publishing is safe under concurrency by its own steps, not by the timing of a quiet
    machine: twelve publishers whose every call to S3 is held back a random while (so that
    each step of one falls between the steps of the others: a listing between another's
    data and manifest, a data put racing another's) each get a version of their own, and
    every version listed is one publisher's bytes, verified. Conditional puts are atomic, as
    S3's are (the double: tests.conftest.atomic_s3_puts)."""
    import random
    import threading
    import time

    class Jittered:
        """The client, each call held back up to 3 ms."""

        def __init__(self, client: Any, seed: int) -> None:
            self._client, self._random = client, random.Random(seed)

        def __getattr__(self, name: str) -> Any:
            found = getattr(self._client, name)
            if not callable(found) or name == "exceptions":
                return found

            def call(*args: Any, **kwargs: Any) -> Any:
                time.sleep(self._random.random() * 0.003)
                return found(*args, **kwargs)

            return call

    writers = 12
    payloads = [f"writer {i}: ".encode() + bytes(range(256)) * (i + 1) for i in range(writers)]
    sources = []
    for i, data in enumerate(payloads):
        (tmp_path / f"w{i}").mkdir()
        sources.append(tmp_path / f"w{i}" / "checkpoint.npz")
        sources[-1].write_bytes(data)
    published: dict[int, Any] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(writers)

    def publish(i: int) -> None:
        store = S3Store(BUCKET, PREFIX, client=Jittered(s3, seed=i))
        start.wait()
        try:
            published[i] = store.publish(sources[i])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=publish, args=(i,)) for i in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == [] and len(published) == writers
    versions = [c.version for c in published.values()]
    assert sorted(versions) == sorted(set(versions))  # no two share one
    store = S3Store(BUCKET, PREFIX, client=s3)
    listed = {c.version: c for c in store.list()}
    assert set(listed) == set(versions)  # none lost, none extra
    for i, checkpoint in published.items():
        assert listed[checkpoint.version] == checkpoint
        assert store.verify(checkpoint)
        body = s3.get_object(Bucket=BUCKET, Key=f"{PREFIX}/v{checkpoint.version:08d}/"
                             "checkpoint.npz")["Body"].read()
        assert body == payloads[i]  # the writer's own bytes under its version


def test_the_double_decides_a_conditional_put_in_one_step_as_s3_does(
        s3: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixture's moto, like S3, lets one of two racing conditional puts of a key win
    even when the write itself is slow (a pause between moto's look for the key and its
    write: left as moto has it, both puts succeed and the second overwrites the first)."""
    import threading
    import time

    from moto.s3.models import S3Backend

    slow = S3Backend.put_object

    def put_object(self: Any, *args: Any, **kwargs: Any) -> Any:
        time.sleep(0.05)
        return slow(self, *args, **kwargs)

    monkeypatch.setattr(S3Backend, "put_object", put_object)
    outcomes: list[str] = []

    def put(body: bytes) -> None:
        try:
            s3.put_object(Bucket=BUCKET, Key="race", Body=body, IfNoneMatch="*")
            outcomes.append("put")
        except s3.exceptions.ClientError as exc:
            outcomes.append(exc.response["Error"]["Code"])

    threads = [threading.Thread(target=put, args=(body,)) for body in (b"one", b"two")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(outcomes) == ["PreconditionFailed", "put"]


def test_a_store_that_cannot_be_used_is_said_in_one_line_before_a_launch(
        s3: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No credentials, S3 refusing the listing, or a bucket that does not exist: `check`
    (what a launch asks before it starts anything) says so in one line, never a traceback."""
    from botocore.stub import Stubber

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    with pytest.raises(InvalidInput, match=r"^checkpoint store s3://ckpt-bucket/jobs/7: no AWS "
                                           r"credentials found: run `aws configure`"):
        S3Store(BUCKET, PREFIX).check()
    stubbed = Stubber(s3)
    stubbed.add_client_error("list_objects_v2", "AccessDenied", http_status_code=403)
    with stubbed, pytest.raises(InvalidInput, match=r"^checkpoint store s3://ckpt-bucket/"
                                                    r"jobs/7: S3 refused to list it "
                                                    r"\(AccessDenied\)$"):
        S3Store(BUCKET, PREFIX, client=s3).check()
    with pytest.raises(InvalidInput, match="bucket no-such-bucket does not exist"):
        S3Store("no-such-bucket", PREFIX, client=s3).check()
    S3Store(BUCKET, PREFIX, client=s3).check()  # a bucket that can be listed


def test_the_stores_of_a_process_share_one_client_per_aws_environment(
        s3: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A session is made once per process and AWS environment (credentials, profile,
    region, endpoint): the stores opened after the first reuse its client; another
    environment, or a forked child, makes its own; none is kept without credentials."""
    from launchers.checkpoints import s3 as s3_module

    made: list[Any] = []
    real = s3_module.new_session
    monkeypatch.setattr(s3_module, "new_session", lambda: made.append(real()) or made[-1])
    first = S3Store(BUCKET, PREFIX)
    checkpoint = first.publish(source(tmp_path))
    again = S3Store(BUCKET, "jobs/8")
    assert again.client is first.client and len(made) == 1
    assert S3Store(BUCKET, PREFIX).newest_verified() == checkpoint  # the shared client

    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-west-2")
    west = S3Store(BUCKET, PREFIX)
    assert west.client is not first.client and len(made) == 2
    assert west.client.meta.region_name == "us-west-2"
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    assert S3Store(BUCKET, PREFIX).client is first.client  # that environment's again

    with monkeypatch.context() as forked:
        forked.setattr(s3_module.os, "getpid", lambda: -1)  # a forked child
        assert S3Store(BUCKET, PREFIX).client is not first.client and len(made) == 3
    assert S3Store(BUCKET, PREFIX).client is first.client

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    bare = S3Store(BUCKET, PREFIX)
    assert S3Store(BUCKET, PREFIX).client is not bare.client  # looked for again
