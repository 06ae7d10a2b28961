"""File mounts from Azure Blob: a SkyPilot task's az://, account-URL and `store: azure`
mounts are read; the VM is given the account's URL; on the instance a container's prefix
is copied down (from the loopback Blob service, with the checkpoint store's code and the
managed identity's token) into the same files the same objects give from S3 (moto); in mode
MOUNT, blobfuse2 is run as the managed identity, and copied down without it."""

from __future__ import annotations

import base64
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("azure.storage.blob")

from costsched.model import InvalidInput  # noqa: E402
from costsched.skypilot import parse_task  # noqa: E402
from launchers import mounts  # noqa: E402
from launchers.userdata import read_payload  # noqa: E402
from tests.launchers.azure_fake import ACCOUNT, STORAGE_TOKEN, Azure, Blob  # noqa: E402
from tests.launchers.test_azure import make, spec  # noqa: E402

# a prefix's objects, a folder marker, and a sibling prefix that is not under it
OBJECTS = {"data/set/a.txt": b"alpha\n", "data/set/sub/b.bin": bytes(range(256)) * 40,
           "data/set/sub/": b"", "data/set/deep/er/c.csv": b"x,y\n1,2\n",
           "data/setx/no.txt": b"not under the prefix", "top.txt": b"top"}


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def blob_container(azure: Azure, name: str = "datasets") -> None:
    azure.blob.containers[name] = {k: Blob(v, "application/octet-stream")
                                   for k, v in OBJECTS.items()}


def test_the_same_objects_give_the_same_files_from_s3_and_blob(
        azure: Azure, tmp_path: Path) -> None:
    from moto import mock_aws

    blob_container(azure)
    with mock_aws():
        import boto3

        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="datasets")
        for key, data in OBJECTS.items():
            s3.put_object(Bucket="datasets", Key=key, Body=data)
        said_s3 = mounts.prepare([{"path": "/data", "source": "s3://datasets/data/set",
                                   "mode": "COPY"}], root=str(tmp_path / "s3"))
    said_az = mounts.prepare([
        {"path": "/data", "source": "az://datasets/data/set", "mode": "COPY"},
        {"path": "/url", "source": f"https://{ACCOUNT}.blob.core.windows.net/datasets/data/set",
         "mode": "COPY"}], root=str(tmp_path / "az"))

    from_s3 = tree(tmp_path / "s3" / "data")
    assert from_s3 == {"a.txt": b"alpha\n", "sub/b.bin": bytes(range(256)) * 40,
                       "deep/er/c.csv": b"x,y\n1,2\n"}
    assert tree(tmp_path / "az" / "data") == from_s3 == tree(tmp_path / "az" / "url")
    assert said_s3 == [f"copied s3://datasets/data/set to {tmp_path / 's3' / 'data'}: 3 "
                       "files"]
    assert said_az[0] == (f"copied az://datasets/data/set to {tmp_path / 'az' / 'data'}: 3 "
                          "files")
    asked = [r for r in azure.blob.requests if r.path.startswith(f"/{ACCOUNT}/datasets")]
    assert asked and all(r.headers["authorization"] == f"Bearer {STORAGE_TOKEN}"
                         for r in asked)  # the (managed) identity's token, no key


def test_a_missing_container_is_one_line_naming_the_mount(azure: Azure,
                                                          tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as refused:
        mounts.prepare([{"path": "/data", "source": "az://nope/x", "mode": "COPY"}],
                       root=str(tmp_path))
    assert str(refused.value) == ("file mount /data az://nope/x: container nope does not "
                                  "exist")


def test_mode_mount_runs_blobfuse2_as_the_managed_identity(
        azure: Azure, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    seen = tmp_path / "seen.json"
    fake = tools / "blobfuse2"  # stands for the FUSE tool: says how it was run
    fake.write_text("#!/bin/sh\nexec python3 -c 'import json, os, sys; json.dump({\"argv\": "
                    "sys.argv[1:], \"env\": {k: v for k, v in os.environ.items() if "
                    f"k.startswith(\"AZURE_STORAGE\")}}}}, open(\"{seen}\", \"w\"))' \"$@\"\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("AZURE_STORAGE_SERVICE_ENDPOINT")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # the file cache's
    source = f"https://{ACCOUNT}.blob.core.windows.net/datasets/data/set"
    said = mounts.prepare([{"path": "/data", "source": source, "mode": "MOUNT"}],
                          root=str(tmp_path / "vm"))
    target = tmp_path / "vm" / "data"
    assert said == [f"mounted {source} at {target}"]
    ran = json.loads(seen.read_text())
    cache = ran["argv"][3].removeprefix("--tmp-path=")
    assert ran["argv"] == ["mount", str(target), "--container-name=datasets",
                           f"--tmp-path={cache}", "--virtual-directory=true",
                           "--subdirectory=data/set"]
    assert Path(cache).is_dir() and Path(cache).parent == tmp_path / "tmp" / "costsched-blobfuse2"
    assert ran["env"] == {"AZURE_STORAGE_ACCOUNT": ACCOUNT, "AZURE_STORAGE_AUTH_TYPE": "MSI",
                          "AZURE_STORAGE_BLOB_ENDPOINT":
                              f"https://{ACCOUNT}.blob.core.windows.net"}


def test_mode_mount_without_blobfuse2_copies_and_says_so(azure: Azure, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    blob_container(azure)
    monkeypatch.setattr(mounts.shutil, "which", lambda name: None)
    [said] = mounts.prepare([{"path": "/data", "source": "az://datasets/data/set",
                              "mode": "MOUNT"}], root=str(tmp_path))
    assert said.startswith("copied (blobfuse2 is not installed: writes stay on this "
                           "instance) az://datasets/data/set")
    assert len(tree(tmp_path / "data")) == 3


def task(text: str) -> Any:
    return parse_task(yaml.safe_load(text), "task.yaml", "t")


def test_a_skypilot_task_mounts_blob_and_the_vm_gets_account_urls(
        azure: Azure, tmp_path: Path) -> None:
    url = "https://other1.blob.core.windows.net/shared/models"
    job = task(f"""
resources: {{infra: azure, accelerators: V100}}
file_mounts:
  /data: az://datasets/data/set
  /models: {url}
  /out: {{name: outputs, mode: MOUNT}}
run: python train.py
""")
    got = {m.path: (m.source, m.mode) for m in job.task.mounts}
    assert got == {"/data": ("az://datasets/data/set", "COPY"), "/models": (url, "COPY")}
    assert job.checkpoint.location == "az://outputs"  # the one writable bucket: a store's
    with pytest.raises(InvalidInput, match="costsched mounts s3://, gs:// and az://"):
        task("file_mounts: {/a: 'https://example.com/x'}\nrun: x")

    launcher = make(azure, tmp_path)
    instance = launcher.launch(spec(task={"mounts": [m.model_dump() for m in
                                                     job.task.mounts]}))
    doc = azure.arm.vm(instance.id.rsplit("/", 1)[1])
    payload = read_payload(base64.b64decode(doc["properties"]["osProfile"]["customData"]
                                            ).decode())
    assert [m["source"] for m in payload["mounts"]] == [
        f"https://{ACCOUNT}.blob.core.windows.net/datasets/data/set", url]
