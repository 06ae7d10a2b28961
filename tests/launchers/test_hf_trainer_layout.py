"""A Hugging Face Trainer-style job (`save_total_limit=2`): each save is written as
`tmp-checkpoint-N/`, renamed to `checkpoint-N/`, and every folder but the newest two is
deleted. Each version holds the directory as a save left it, both folders, never the newer
alone. The looks are driven one by one, with the files' times and the publisher's clock set
by the test (no sleeping)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from launchers.checkpoints.local import LocalStore
from launchers.publisher import Publisher, restore
from tests.launchers.test_publish_whole import BASE, Clock, work  # noqa: F401


def folders(directory: Path) -> set[str]:
    return {d.name for d in directory.glob("checkpoint-*")}


def save(directory: Path, step: int, at: float, keep: int = 2) -> None:
    """The Trainer's save: a folder staged under a temporary name, renamed whole, then
    every folder but the newest `keep` removed."""
    staged = directory / f"tmp-checkpoint-{step}"
    staged.mkdir()
    ns = int((BASE + at) * 1e9)
    for name, text in (
        ("weights.npy", f"w{step}"),
        ("trainer_state.json", json.dumps({"global_step": step})),
    ):
        (staged / name).write_text(text)
        os.utime(staged / name, ns=(ns, ns))
    staged.rename(directory / f"checkpoint-{step}")
    kept = sorted(folders(directory), key=lambda n: int(n.split("-")[1]))
    for old in kept[:-keep]:
        shutil.rmtree(directory / old)


def version_folders(store: LocalStore) -> set[str]:
    return {p.name.split("/")[0] for p in store.list()[-1].parts}


def test_each_version_holds_both_folders_the_save_left(
    work: tuple[Path, LocalStore, Clock],  # noqa: F811
    tmp_path: Path,
) -> None:
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    on_disk: list[set[str]] = []  # what each look found
    published: list[set[str]] = []
    step = 0
    for tick in range(1, 301):  # a save every 2.5 s, a look every 2 s (tenths of seconds)
        clock.now = tick / 10
        if tick % 25 == 0:
            step += 50
            save(folder, step, clock.now)
        if tick % 20 == 0:
            on_disk.append(folders(folder))
            if publisher.publish_changed():
                held = version_folders(store)
                published.append(held)
                # no folder the job kept since the look before is left out
                assert on_disk[-1] & on_disk[-2] <= held, (clock.now, held, on_disk[-2:])
    # the job's saves left {50}, then {50, 100}, {100, 150}, ...: each version is one
    assert published[0] == {"checkpoint-50"}
    for held in published[1:]:
        newest = max(int(n.split("-")[1]) for n in held)
        assert held == {f"checkpoint-{newest - 50}", f"checkpoint-{newest}"}, published
    assert len(published) == 11, published  # every save of the 12 but the last, a look later

    # a recovery brings the directory back as the job left it: both folders, whole
    restored = tmp_path / "restored"
    version = restore(store, restored)
    assert version == store.list()[-1].version
    newest = max(int(n.split("-")[1]) for n in published[-1])
    assert folders(restored) == published[-1]
    for kept in (newest - 50, newest):
        state = json.loads((restored / f"checkpoint-{kept}" / "trainer_state.json").read_text())
        assert state == {"global_step": kept}
        assert (restored / f"checkpoint-{kept}" / "weights.npy").read_text() == f"w{kept}"
    assert publisher.named_step == newest  # the version's step: its new folder's name
    assert publisher.error == ""


def test_a_folder_seen_half_deleted_is_left_out_of_the_version(
    work: tuple[Path, LocalStore, Clock],  # noqa: F811
) -> None:
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    save(folder, 50, 0)
    save(folder, 100, 0.5)
    for clock.now in (1, 2):
        publisher.publish_changed()
    assert version_folders(store) == {"checkpoint-50", "checkpoint-100"}
    save(folder, 150, 2.5, keep=3)
    (folder / "checkpoint-50" / "weights.npy").unlink()  # a look while it is removed
    clock.now = 3
    publisher.publish_changed()
    shutil.rmtree(folder / "checkpoint-50")
    clock.now = 4
    assert publisher.publish_changed() == 1
    assert sorted(p.name for p in store.list()[-1].parts) == [
        "checkpoint-100/trainer_state.json",
        "checkpoint-100/weights.npy",
        "checkpoint-150/trainer_state.json",
        "checkpoint-150/weights.npy",
    ]
