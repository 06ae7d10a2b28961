"""Where a job's checkpoints are on each cloud (`carry.JobStores`): its store where it is that
cloud's, its store as launched, the cloud's configured root, or nowhere its instances could
read; the local launcher and directories keep theirs."""

from __future__ import annotations

from costsched.service.jobs.carry import JobStores, home_store

ROOTS = {"azure": "az://ckpt/jobs", "gcp": "s3://shared/jobs"}


def test_each_cloud_has_the_job_s_store_its_instances_read() -> None:
    home = home_store("s3://team/run", 7, "s3://ignored")  # the spec's location wins
    assert home == "s3://team/run/job-7"
    moved = JobStores(7, "az://ckpt/jobs/job-7", home, ROOTS)

    assert moved.on("azure") == "az://ckpt/jobs/job-7"  # where it is now
    assert moved.on("aws") == home  # back home: its launch store
    assert moved.on("gcp") == "s3://shared/jobs/job-7"  # a root you said GCP can read
    assert JobStores(7, home, home, {}).on("aws") == home
    assert moved.unreadable() == {}


def test_a_cloud_without_a_store_it_reads_is_left_out_saying_why() -> None:
    home = home_store(None, 7, "gs://bucket/jobs")
    stores = JobStores(7, home, home, {"azure": "az://ckpt/jobs"})

    assert stores.on("aws") is None
    assert stores.unreadable() == {"aws": (
        "aws is left out: its instances cannot read checkpoints in gcp's storage; set "
        "launch.checkpoint_roots.aws to have them carried there")}
    assert stores.unreadable(["azure", "gcp"]) == {}


def test_directories_and_the_local_launcher_keep_their_store() -> None:
    local = home_store(None, 3, "/data/ckpt")
    assert JobStores(3, local, local, {}).on("azure") == local  # read from this machine
    carried = JobStores(3, local, local, ROOTS)
    assert carried.on("azure") == "az://ckpt/jobs/job-3"  # a root: carried from here
    here = JobStores(3, "s3://b/j/job-3", "s3://b/j/job-3", ROOTS, here=True)
    assert {here.on(c) for c in ("aws", "gcp", "azure")} == {"s3://b/j/job-3"}
