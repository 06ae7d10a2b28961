"""`costsched fetch JOB FOLDER`: a job's newest verified checkpoint, and the files it wrote
beside it, copied to a new or empty folder, every file checked; a folder with something in
it, a job without a checkpoint and a corrupt newest version are handled without losing
anything."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

from costsched.store import PriceStore
from launchers.checkpoints import open_store

AT = datetime(2026, 11, 1, tzinfo=timezone.utc)


def job_with_versions(db_path: Path, tmp_path: Path, versions: int = 2) -> tuple[int, Path]:
    """A job whose checkpoint store holds `versions` versions of model.pkl and map.txt
    (version N's bytes: 'vN')."""
    location = tmp_path / "ckpts"
    checkpoints = open_store(str(location))
    for n in range(1, versions + 1):
        work = tmp_path / f"work{n}"
        (work / "out").mkdir(parents=True)
        (work / "model.pkl").write_text(f"v{n}")
        (work / "out" / "map.txt").write_text(f"map v{n}")
        checkpoints.publish_files({"model.pkl": work / "model.pkl",
                                   "out/map.txt": work / "out" / "map.txt"})
    store = PriceStore(str(db_path))
    try:
        job = store.jobs.create("rl", {"spec": {"name": "rl"}}, 100,
                                checkpoint_location=str(location), at=AT)
    finally:
        store.dispose()
    return job, location


def test_the_newest_version_is_copied_with_its_files(cli, db_path: Path, tmp_path: Path) -> None:  # noqa: ANN001
    job_id, _ = job_with_versions(db_path, tmp_path)
    dest = tmp_path / "results"
    result = cli("fetch", "rl", dest)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"job {job_id} (rl): checkpoint version 2, 2 files in {dest}",
        "  model.pkl", "  out/map.txt"]
    assert (dest / "model.pkl").read_text() == "v2"
    assert (dest / "out" / "map.txt").read_text() == "map v2"
    again = cli("fetch", str(job_id), tmp_path / "again", "--json")
    assert json.loads(again.stdout)["files"] == ["model.pkl", "out/map.txt"]


def test_a_folder_with_something_in_it_is_refused_and_kept(cli, db_path: Path,  # noqa: ANN001
                                                           tmp_path: Path) -> None:
    job_with_versions(db_path, tmp_path)
    dest = tmp_path / "mine"
    dest.mkdir()
    (dest / "notes.txt").write_text("mine")
    result = cli("fetch", "rl", dest)
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"error: {dest}: not an empty folder: expected a new or "
                                     "empty folder (nothing in it is overwritten)")
    assert [p.name for p in dest.iterdir()] == ["notes.txt"]


def test_a_corrupt_newest_version_gives_the_one_before(cli, db_path: Path,  # noqa: ANN001
                                                       tmp_path: Path) -> None:
    _, location = job_with_versions(db_path, tmp_path)
    [model] = [p for p in location.rglob("model.pkl") if "2" in p.parent.name]
    model.write_text("v9")  # same size, other bytes: its checksum fails
    dest = tmp_path / "results"
    result = cli("fetch", "rl", dest)
    assert result.exit_code == 0, result.output
    assert "checkpoint version 1," in result.stdout
    assert (dest / "model.pkl").read_text() == "v1"


def test_a_job_without_a_checkpoint_says_so_and_makes_no_folder(cli, db_path: Path,  # noqa: ANN001
                                                                tmp_path: Path) -> None:
    job_id, _ = job_with_versions(db_path, tmp_path, versions=0)
    dest = tmp_path / "results"
    result = cli("fetch", "rl", dest)
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"error: job {job_id} (rl): no verified checkpoint yet: "
                                     "nothing to fetch")
    assert not dest.exists()


def test_a_link_the_job_keeps_comes_back_as_a_link(cli, db_path: Path, tmp_path: Path) -> None:  # noqa: ANN001
    """A version holding the job's `latest` link (kept as the agent keeps it, in its links
    file) is fetched with the link as a link, and the links file is not among the files."""
    from launchers import checkpoint_links

    location = tmp_path / "ckpts"
    work = tmp_path / "work"
    (work / "checkpoints").mkdir(parents=True)
    (work / "checkpoints" / "ckpt-000450.pkl").write_text("state")
    links = checkpoint_links.write({"checkpoints/latest": "ckpt-000450.pkl"},
                                   tmp_path / "links" / checkpoint_links.LINKS)
    open_store(str(location)).publish_files({
        "checkpoints/ckpt-000450.pkl": work / "checkpoints" / "ckpt-000450.pkl",
        checkpoint_links.LINKS: links})
    store = PriceStore(str(db_path))
    try:
        store.jobs.create("rl", {"spec": {"name": "rl"}}, 100,
                          checkpoint_location=str(location), at=AT)
    finally:
        store.dispose()
    dest = tmp_path / "results"
    result = cli("fetch", "rl", dest, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["files"] == ["checkpoints/ckpt-000450.pkl",
                                                  "checkpoints/latest"]
    assert os.readlink(dest / "checkpoints" / "latest") == "ckpt-000450.pkl"
    assert (dest / "checkpoints" / "latest").read_text() == "state"


def test_the_step_of_the_version_is_its_markers_else_the_one_its_agent_kept(
        cli, db_path: Path, tmp_path: Path) -> None:  # noqa: ANN001
    """Version 1 holds a commit marker with step 60; version 2 none, its agent having kept
    step 749 read off the time it was saved: fetched, each says its step so."""
    from launchers import version_steps

    job_id, location = job_with_versions(db_path, tmp_path, versions=1)
    store = open_store(str(location))
    marker = tmp_path / "COSTSCHED_COMMIT"
    marker.write_text("60\n")
    store.publish_files({"COSTSCHED_COMMIT": marker, "model.pkl": tmp_path / "work1" / "model.pkl"})
    result = cli("fetch", "rl", tmp_path / "a", "--json")
    assert (json.loads(result.stdout)["step"], json.loads(result.stdout)["step_inferred"]) == (
        60, False), result.output
    (tmp_path / "work3").mkdir()
    (tmp_path / "work3" / "model.pkl").write_text("v3")
    store.publish_files({"model.pkl": tmp_path / "work3" / "model.pkl"})
    version_steps.keep(str(location), 3, 749, True)
    result = cli("fetch", "rl", tmp_path / "b")
    assert result.stdout.splitlines()[0] == (
        f"job {job_id} (rl): checkpoint version 3, about step 749, 1 file in {tmp_path / 'b'}")
