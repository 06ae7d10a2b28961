"""Names a checkpointing library commits that start with `.` (`launchers.in_progress`
`COMMITTED`): PyTorch distributed checkpoint's `.metadata`, written last as
`.metadata.tmp` and renamed, and the zarr metadata of an Orbax checkpoint written without
OCDBT (`.zarray`). They are part of a save: a look takes them, a version holds them, a
restore brings them back and clears a stale one; their temporary names, a fetch in
progress and other hidden files stay out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from launchers.checkpoint_dir import look, restore
from launchers.checkpoints.local import LocalStore
from launchers.in_progress import hidden, in_progress, uncommitted
from launchers.publisher import Publisher
from tests.launchers.test_publish_whole import BASE, Clock, save, sets, work  # noqa: F401


@pytest.mark.parametrize("rel", [
    ".metadata", "step_600/.metadata", "checkpoint-600/pytorch_model_fsdp_0/.metadata",
    "600/default/params.layer0.kernel/.zarray", "600/default/.zattrs", "600/default/.zgroup",
    "600/default/.zmetadata"])
def test_a_committed_name_starting_with_a_dot_is_part_of_the_save(rel: str) -> None:
    assert not in_progress(rel)
    assert not hidden(rel)


@pytest.mark.parametrize("rel", [
    ".metadata.tmp", "step_600/.metadata.tmp",  # DCP's commit, before its rename
    "step_600/..metadata.k2j3.partial",  # a fetch of it in progress (launchers.checkpoints)
    "600.orbax-checkpoint-tmp-4/default/x/.zarray",  # in a save not committed yet
    ".cache/.metadata", ".hidden", "step_600/.nfs000123", ".metadata-old"])
def test_its_temporary_names_and_other_hidden_files_stay_out(rel: str) -> None:
    assert in_progress(rel)


def dcp_save(folder: Path, step: int, at: float, commit: bool = True) -> Path:
    """DCP's save of `step` by one rank: `step_<n>/__0_0.distcp`, then `.metadata.tmp`
    renamed to `.metadata` (`commit`; else left as it is when the save was cut short)."""
    where = folder / f"step_{step}"
    save(where / "__0_0.distcp", f"weights {step}", at)
    tmp = where / ".metadata.tmp"
    tmp.write_text(f"metadata {step}")
    ns = int((BASE + at) * 1e9)
    os.utime(tmp, ns=(ns, ns))
    if commit:
        os.rename(tmp, where / ".metadata")
    return where


def test_a_look_takes_the_metadata_of_a_committed_dcp_save_only(tmp_path: Path) -> None:
    dcp_save(tmp_path, 400, 0)
    seen = look(tmp_path)
    assert sorted(seen.complete) == ["step_400/.metadata", "step_400/__0_0.distcp"]
    assert seen.tidy
    dcp_save(tmp_path, 600, 5, commit=False)
    seen = look(tmp_path)
    assert "step_600/.metadata.tmp" not in seen.complete
    assert not seen.tidy  # its commit under way: the rules for a whole set wait for it


def test_a_dcp_save_is_published_with_its_metadata_and_never_its_temporary_name(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    dcp_save(folder, 400, 0)
    for clock.now in (1.0, 3.0, 5.0, 20.0):
        publisher.publish_changed()
    dcp_save(folder, 600, 21, commit=False)  # cut short before its commit
    publisher.publish_changed(final=True)
    versions = sets(store, tmp_path)
    assert versions, "nothing published"
    assert versions[0] == {"step_400/.metadata": "metadata 400",
                           "step_400/__0_0.distcp": "weights 400"}
    assert all(".metadata.tmp" not in name for v in versions for name in v)
    assert all(v.get("step_400/.metadata") == "metadata 400" for v in versions)


def test_a_restore_brings_back_the_metadata_and_clears_a_stale_one(tmp_path: Path) -> None:
    src, dest = tmp_path / "src", tmp_path / "dest"
    store = LocalStore(tmp_path / "store")
    dcp_save(src, 400, 0)
    names = ["step_400/.metadata", "step_400/__0_0.distcp"]
    store.publish_files({n: src / n for n in names}, [])
    # the directory restored into: a committed save the version does not hold, and a
    # hidden file of the instance's own (not the job's checkpoint, left alone)
    dcp_save(dest, 800, 9)
    (dest / ".cache").mkdir()
    (dest / ".cache" / "x").write_text("instance's")
    assert restore(store, dest).version == 1
    got = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    assert got == [".cache/x", *names]
    assert (dest / "step_400" / ".metadata").read_text() == "metadata 400"


def test_a_restored_dcp_save_is_taken_as_published(tmp_path: Path) -> None:
    src, dest = tmp_path / "src", tmp_path / "dest"
    store = LocalStore(tmp_path / "store")
    dcp_save(src, 400, 0)
    names = ["step_400/.metadata", "step_400/__0_0.distcp"]
    store.publish_files({n: src / n for n in names}, [])
    dest.mkdir()
    publisher = Publisher(store, dest)
    publisher.version = restore(store, dest).version
    publisher.remember_all()
    assert publisher.publish_changed(final=True) == 0  # nothing new: no second version
    assert len(store.list()) == 1


def test_a_dcp_folder_without_its_metadata_is_a_save_under_way() -> None:
    paths = ["step_400/.metadata", "step_400/__0_0.distcp", "step_600/__0_0.distcp",
             "step_600/__1_0.distcp", "step_600/extra_state.json", "step_600/sub/x.npz",
             "__0_0.distcp", "metrics.jsonl", "other/weights.npz"]
    # (the top folder too: a DCP save straight into $CHECKPOINT_DIR, not committed yet)
    assert uncommitted(paths) == {"step_600/__0_0.distcp", "step_600/__1_0.distcp",
                                  "step_600/extra_state.json", "__0_0.distcp",
                                  "metrics.jsonl"}
    assert uncommitted([*paths, ".metadata"]) == {
        "step_600/__0_0.distcp", "step_600/__1_0.distcp", "step_600/extra_state.json"}
    assert uncommitted(["a/b.npz", "a/.metadata"]) == set()  # no DCP data: not DCP's


def test_a_dcp_save_under_way_is_neither_taken_nor_published_nor_restored(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    dcp_save(folder, 400, 0)
    for clock.now in (1.0, 3.0, 5.0, 20.0):
        publisher.publish_changed()
    # its save of 600 writes its data in place, then is cut short before its metadata
    save(folder / "step_600" / "__0_0.distcp", "weights 600", 21)
    seen = look(folder)
    assert "step_600/__0_0.distcp" not in seen.complete and not seen.tidy
    for clock.now in (22.0, 25.0, 40.0, 80.0):
        publisher.publish_changed()
    publisher.publish_changed(final=True)
    assert all(not n.startswith("step_600") for v in sets(store, tmp_path) for n in v)

    # a version an older agent published with it is restored without it, and a restore
    # clears one left in the directory
    dest = tmp_path / "dest"
    names = ["step_400/.metadata", "step_400/__0_0.distcp", "step_600/__0_0.distcp"]
    version = store.publish_files({n: folder / n for n in names}, []).version
    save(dest / "step_800" / "__0_0.distcp", "weights 800", 30)
    assert restore(store, dest).version == version
    got = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    assert got == names[:2]
    restored = Publisher(store, dest)
    restored.version = version
    restored.remember_all()
    assert restored.restored_step() == (None, False)  # its step may be the partial save's
