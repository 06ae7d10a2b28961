"""The rule for a write in progress in a checkpoint directory (`launchers.in_progress`), as
the publisher and a restore read it: the temporary folders the checkpointing libraries
write before the rename that commits a save (Orbax's `600.orbax-checkpoint-tmp-<n>/`,
Transformers' `tmp-checkpoint-600/`, TensorFlow's `ckpt-3_temp/`) are never part of a
version, hold a save back while they are there, and a restore neither brings one back nor
leaves one behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from launchers import version_steps
from launchers.checkpoint_dir import look, restore
from launchers.checkpoints.local import LocalStore
from launchers.in_progress import in_progress
from launchers.publisher import Publisher
from tests.launchers.test_publish_whole import Clock, save, sets, work  # noqa: F401


@pytest.mark.parametrize("rel", [
    "600.orbax-checkpoint-tmp-1796219160095/params.npz",  # Orbax CheckpointManager
    "600.orbax-checkpoint-tmp-4/_CHECKPOINT_METADATA",
    "600.orbax-checkpoint-tmp/params/x",  # older Orbax: no suffix
    "600/params.orbax-checkpoint-tmp-17/x",  # an item being written in a committed step
    "tmp-checkpoint-600/model.safetensors",  # Transformers' staging folder
    "ckpt-3_temp/part-00000-of-00001.index",  # TensorFlow's shards before their merge
    "ckpt-3_temp/part-00000-of-00001.data-00000-of-00001",
    "ckpt-000650.npz.tmp", "weights.tmp.npz", "last.ckpt.tmp", "ckpt.tmp/state.pkl",
    "latest.tmp-link", ".metadata.tmp", ".hidden/x"])
def test_a_temporary_save_is_in_progress(rel: str) -> None:
    assert in_progress(rel)


@pytest.mark.parametrize("rel", [
    "600/params.npz", "600/_CHECKPOINT_METADATA", "checkpoint-600/model.safetensors",
    "epoch=3-step=600.ckpt", "last.ckpt", "attempt-2/state.pkl", "temps/x.npz",
    "ckpt-000650.npz", "COSTSCHED_COMMIT", "metrics.jsonl",
    "ckpt-3.index", "ckpt-3.data-00000-of-00001", "checkpoint",  # TensorFlow's, merged
    "my_temperature/x.npz", "temp_run/x.npz"])
def test_a_committed_save_is_complete(rel: str) -> None:
    assert not in_progress(rel)


def orbax_save(folder: Path, step: int, at: float, commit: bool = True) -> Path:
    """Orbax's save of `step`: its files written into `<step>.orbax-checkpoint-tmp-<n>/`,
    then (`commit`) the folder renamed to `<step>/`; the folder it is in."""
    tmp = folder / f"{step}.orbax-checkpoint-tmp-{1796219000000 + step}"
    for name in ("params.npz", "opt_state.npz", "_CHECKPOINT_METADATA"):
        save(tmp / name, f"{name} {step}", at)
    if not commit:
        return tmp
    os.rename(tmp, folder / str(step))
    return folder / str(step)


def test_a_look_takes_no_file_of_an_orbax_save_in_progress(tmp_path: Path) -> None:
    orbax_save(tmp_path, 400, 0)
    orbax_save(tmp_path, 600, 5, commit=False)
    (tmp_path / "tmp-checkpoint-800").mkdir()
    (tmp_path / "tmp-checkpoint-800" / "model.safetensors").write_text("half")
    seen = look(tmp_path)
    assert sorted(seen.complete) == [
        "400/_CHECKPOINT_METADATA", "400/opt_state.npz", "400/params.npz"]
    assert not seen.tidy  # a save under way: the rules for a whole set wait for it


def test_an_orbax_save_in_progress_is_never_published(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    orbax_save(folder, 400, 0)
    for clock.now in (1.0, 3.0, 5.0):  # a committed step folder: published a look later
        publisher.publish_changed()
    assert len(store.list()) == 1
    tmp = orbax_save(folder, 600, 6, commit=False)  # the job trains on, its save half done
    (tmp / "opt_state.npz").unlink()
    for clock.now in (8.0, 10.0, 30.0, 60.0):
        assert publisher.publish_changed() == 0
    publisher.publish_changed(final=True)  # nor when the job has exited mid-save
    names = [sorted(v) for v in sets(store, tmp_path)]
    assert names == [["400/_CHECKPOINT_METADATA", "400/opt_state.npz", "400/params.npz"]]


def legacy_version(store: LocalStore, src: Path, names: list[str]) -> int:
    """A version an older agent published with `names` (each a file under `src`)."""
    return store.publish_files({n: src / n for n in names}, []).version


def test_a_restore_brings_back_no_save_in_progress_and_leaves_none(tmp_path: Path) -> None:
    src, dest = tmp_path / "src", tmp_path / "dest"
    store = LocalStore(tmp_path / "store")
    orbax_save(src, 400, 0)
    tmp = orbax_save(src, 600, 5, commit=False)
    committed = sorted(f"400/{p.name}" for p in (src / "400").iterdir())
    partial = [f"{tmp.name}/params.npz"]
    both = legacy_version(store, src, committed + partial)
    only_partial = legacy_version(store, src, partial)
    # a run stopped mid-save left its own temporary folder in the directory restored into
    left = orbax_save(dest, 800, 9, commit=False)

    # a version of a save in progress alone is no checkpoint: the one before is restored,
    # without its save in progress
    assert restore(store, dest).version == both < only_partial
    got = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    assert got == committed
    assert not left.exists()
    assert tmp.name not in {p.name for p in dest.iterdir()}


def test_the_step_of_a_restored_version_that_held_a_save_in_progress_is_not_known(
        tmp_path: Path) -> None:
    src, dest = tmp_path / "src", tmp_path / "dest"
    store = LocalStore(tmp_path / "store")
    orbax_save(src, 400, 0)
    tmp = orbax_save(src, 600, 5, commit=False)
    version = legacy_version(store, src, [*(f"400/{p.name}" for p in (src / "400").iterdir()),
                                          f"{tmp.name}/params.npz"])
    # the older agent read its step off the partial save's time, and kept it
    version_steps.keep(store.uri, version, 600, False)
    dest.mkdir()
    publisher = Publisher(store, dest)
    publisher.version = restore(store, dest).version
    publisher.remember_all()
    assert publisher.restored_step() == (None, False)


def test_a_committed_version_keeps_its_step(tmp_path: Path) -> None:
    src, dest = tmp_path / "src", tmp_path / "dest"
    store = LocalStore(tmp_path / "store")
    orbax_save(src, 400, 0)
    version = legacy_version(store, src, [f"400/{p.name}" for p in (src / "400").iterdir()])
    version_steps.keep(store.uri, version, 400, False)
    dest.mkdir()
    publisher = Publisher(store, dest)
    publisher.version = restore(store, dest).version
    publisher.remember_all()
    assert publisher.restored_step() == (400, False)
