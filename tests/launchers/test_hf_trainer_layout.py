"""A Hugging Face Trainer-style job (`save_total_limit=2`): each save is written as
`tmp-checkpoint-N/`, renamed to `checkpoint-N/`, and every folder but the newest two is
deleted, at the top of the checkpoint directory or in a folder of it (`output/`). Each
version holds the directory as a save left it, both folders, never the newer alone. The
looks are driven one by one, with the files' times and the publisher's clock set by the
test (no sleeping)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from launchers.checkpoints.local import LocalStore
from launchers.publisher import Publisher, restore
from tests.launchers.test_publish_whole import BASE, Clock, work  # noqa: F401

FILES = ("weights.npy", "trainer_state.json", "global_step/rng_state.json")


def folders(directory: Path) -> set[str]:
    return {d.name for d in directory.glob("checkpoint-*")}


def save(directory: Path, step: int, at: float, keep: int = 2) -> None:
    """The Trainer's save: a folder staged under a temporary name, renamed whole, then
    every folder but the newest `keep` removed."""
    staged = directory / f"tmp-checkpoint-{step}"
    (staged / "global_step").mkdir(parents=True)
    ns = int((BASE + at) * 1e9)
    for name in FILES:
        text = json.dumps({"global_step": step}) if name == "trainer_state.json" else f"{step}"
        (staged / name).write_text(text)
        os.utime(staged / name, ns=(ns, ns))
    staged.rename(directory / f"checkpoint-{step}")
    kept = sorted(folders(directory), key=lambda n: int(n.split("-")[1]))
    for old in kept[:-keep]:
        shutil.rmtree(directory / old)


def version_files(store: LocalStore, sub: str) -> set[str]:
    return {p.name.removeprefix(sub) for p in store.list()[-1].parts}


def whole(*steps: int) -> set[str]:
    return {f"checkpoint-{step}/{name}" for step in steps for name in FILES}


@pytest.mark.parametrize("sub", ["", "output/"])
def test_each_version_holds_both_folders_the_save_left(
    work: tuple[Path, LocalStore, Clock],  # noqa: F811
    tmp_path: Path,
    sub: str,
) -> None:
    folder, store, clock = work
    output = folder / sub
    output.mkdir(exist_ok=True)
    publisher = Publisher(store, folder, clock=clock)
    published: list[set[str]] = []
    step = 0
    for tick in range(1, 301):  # a save every 2.5 s, a look every 2 s (tenths of seconds)
        clock.now = tick / 10
        if tick % 25 == 0:
            step += 50
            save(output, step, clock.now)
        if tick % 20 == 0 and publisher.publish_changed():
            published.append(version_files(store, sub))
    # the job's saves left {50}, then {50, 100}, {100, 150}, ...: each version is one
    assert published[0] == whole(50)
    assert published[1:] == [whole(step - 50, step) for step in range(100, 600, 50)]

    # a recovery brings the directory back as the job left it: both folders, whole
    restored = tmp_path / "restored"
    assert restore(store, restored).version == store.list()[-1].version
    assert folders(restored / sub) == {"checkpoint-500", "checkpoint-550"}
    for kept in (500, 550):
        state = json.loads((restored / sub / f"checkpoint-{kept}/trainer_state.json").read_text())
        assert state == {"global_step": kept}
        assert (restored / sub / f"checkpoint-{kept}/weights.npy").read_text() == f"{kept}"
    assert publisher.named_step == 550  # the step its new folder is named by
    assert publisher.error == ""


@pytest.mark.parametrize("sub", ["", "output/"])
def test_a_folder_seen_half_deleted_is_left_out_of_the_version(
    work: tuple[Path, LocalStore, Clock],  # noqa: F811
    sub: str,
) -> None:
    folder, store, clock = work
    output = folder / sub
    output.mkdir(exist_ok=True)
    publisher = Publisher(store, folder, clock=clock)
    save(output, 50, 0)
    save(output, 100, 0.5)
    for clock.now in (1, 2):
        publisher.publish_changed()
    assert version_files(store, sub) == whole(50, 100)
    save(output, 150, 2.5, keep=3)
    shutil.rmtree(output / "checkpoint-50/global_step")  # a look while it is removed
    clock.now = 3
    publisher.publish_changed()
    shutil.rmtree(output / "checkpoint-50")
    clock.now = 4
    assert publisher.publish_changed() == 1
    assert version_files(store, sub) == whole(100, 150)
