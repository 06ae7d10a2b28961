"""A checkpoint of several files is published whole: a version never holds a file of one
save with another of the save before. The publisher's looks are driven here one by one,
with the files' times and the publisher's clock set by the test (no sleeping)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from launchers import publish_files
from launchers.checkpoints.local import LocalStore
from launchers.publisher import COMMIT, ENV_SETTLE, SETTLE, Publisher, restore, settle_seconds

BASE = 1_700_000_000


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def save(path: Path, text: str, at: float) -> None:
    """`text` renamed into `path`, its modification time `at` (seconds after BASE)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(path.name + ".tmp")
    temp.write_text(text)
    os.replace(temp, path)
    ns = int((BASE + at) * 1e9)
    os.utime(path, ns=(ns, ns))


def sets(store: LocalStore, tmp_path: Path) -> list[dict[str, str]]:
    """Every version of the store, each as {file: content}."""
    found = []
    for checkpoint in store.list():
        where = tmp_path / "fetched" / str(checkpoint.version)
        store.fetch(checkpoint, where)
        found.append({p.name: (where / p.name).read_text() for p in checkpoint.parts})
    return found


@pytest.fixture()
def work(tmp_path: Path) -> tuple[Path, LocalStore, Clock]:
    folder = tmp_path / "work" / "checkpoints"
    folder.mkdir(parents=True)
    return folder, LocalStore(tmp_path / "store"), Clock()


def test_a_set_written_with_a_gap_is_never_published_half_updated(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    save(folder / "vocab.json", "vocab", 0)
    save(folder / "weights.npy", "500", 0)
    save(folder / "optim.npy", "500", 0)
    assert publisher.publish_changed() == 0  # just written: it may not be whole yet
    clock.now = SETTLE
    assert publisher.publish_changed() == 1

    save(folder / "weights.npy", "600", 20)  # the optimizer state follows 6 s later
    for clock.now in (20, 23, 25.9):
        assert publisher.publish_changed() == 0
    save(folder / "optim.npy", "600", 26)
    for clock.now in (26, 30, 35.9):
        assert publisher.publish_changed() == 0
    clock.now = 36
    assert publisher.publish_changed() == 1

    versions = sets(store, tmp_path)
    assert [(v["weights.npy"], v["optim.npy"]) for v in versions] == [("500", "500"),
                                                                     ("600", "600")]
    assert all(v["vocab.json"] == "vocab" for v in versions)


def test_a_file_still_being_written_holds_the_set_back(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    save(folder / "weights.npy", "500", 0)
    save(folder / "optim.npy", "500", 0)
    publisher.publish_changed(final=True)
    save(folder / "weights.npy", "600", 20)
    for clock.now, size in ((21, 10), (25, 20), (29, 30), (33, 40)):  # optim.npy.tmp grows
        (folder / "optim.npy.tmp").write_bytes(b"x" * size)
        assert publisher.publish_changed() == 0
    save(folder / "optim.npy", "600", 34)
    clock.now = 34
    assert publisher.publish_changed() == 0
    clock.now = 34 + SETTLE
    assert publisher.publish_changed() == 1
    assert [(v["weights.npy"], v["optim.npy"]) for v in sets(store, tmp_path)] == [
        ("500", "500"), ("600", "600")]


def test_after_the_job_exits_its_directory_is_published_at_once(
        work: tuple[Path, LocalStore, Clock]) -> None:
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    save(folder / "weights.npy", "700", 0)
    save(folder / "optim.npy", "700", 0)
    assert publisher.publish_changed() == 0
    assert publisher.publish_changed(final=True) == 1  # no settle wait: it wrote and exited


def test_a_lone_file_is_published_a_look_later_and_settle_zero_waits_for_nothing(
        work: tuple[Path, LocalStore, Clock]) -> None:
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    save(folder / "model.pt", "1", 0)
    assert publisher.publish_changed() == 0  # the first look: it may be half written
    clock.now = 1
    assert publisher.publish_changed() == 1  # as the last look found it: whole
    save(folder / "model.pt", "2", 2)
    clock.now = 2
    assert publisher.publish_changed() == 1  # renamed in since the last look: whole
    save(folder / "extra.bin", "1", 1)
    assert publisher.publish_changed() == 0  # two: the settle rule
    assert Publisher(store, folder, settle=0, clock=clock).publish_changed() == 1


def test_a_set_that_never_settles_is_said_in_the_status(
        work: tuple[Path, LocalStore, Clock]) -> None:
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    said = set()
    for second in range(0, 200, 5):  # saves every 5 s: never 10 s unchanged
        clock.now = second
        save(folder / "a.bin", str(second), second)
        save(folder / "b.bin", str(second), second)
        assert publisher.publish_changed() == 0
        said.add(publisher.error)
    # the same words from the first said on, as long as the wait lasts: said once by
    # whatever watches them (a supervisor's log, the job's events)
    assert len(said - {""}) == 1, said
    assert publisher.error.startswith("nothing published since ")
    assert COMMIT in publisher.error
    clock.now = 300
    assert publisher.publish_changed() == 1
    assert publisher.error == ""


def test_a_committed_set_is_published_at_once_and_never_before(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    save(folder / "weights.npy", "500", 0)
    save(folder / "optim.npy", "500", 0)
    save(folder / COMMIT, "", 0.5)  # newer than the files: the set is whole
    assert publisher.publish_changed() == 1  # at once, no settle wait

    save(folder / "weights.npy", "600", 10)  # a slow set: minutes between its files
    for clock.now in (10, 100, 1000):
        assert publisher.publish_changed() == 0
    save(folder / "optim.npy", "600", 1000)
    assert publisher.publish_changed() == 0
    clock.now = 5000
    assert publisher.publish_changed() == 0  # settled long ago, but not committed
    save(folder / COMMIT, "", 1000.5)
    assert publisher.publish_changed() == 1

    (folder / COMMIT).unlink()  # a job may delete the marker before a save
    save(folder / "weights.npy", "700", 6000)
    save(folder / "optim.npy", "700", 6000)
    clock.now = 9000
    assert publisher.publish_changed() == 0
    assert publisher.publish_changed(final=True) == 0  # exited uncommitted: not whole
    save(folder / COMMIT, "", 6001)
    assert publisher.publish_changed() == 1
    assert [(v["weights.npy"], v["optim.npy"]) for v in sets(store, tmp_path)] == [
        ("500", "500"), ("600", "600"), ("700", "700")]


def test_a_restored_committed_set_waits_for_the_marker_again(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:
    folder, store, clock = work
    save(folder / "weights.npy", "500", 0)
    save(folder / "optim.npy", "500", 0)
    save(folder / COMMIT, "", 0.5)
    Publisher(store, folder, clock=clock).publish_changed()

    again = tmp_path / "again" / "checkpoints"
    publisher = Publisher(store, again, clock=clock)
    publisher.version = restore(store, again).version
    publisher.remember_all()
    assert publisher.publish_changed() == 0  # as restored: nothing new
    later = (again / COMMIT).stat().st_mtime - BASE + 1
    save(again / "weights.npy", "600", later)  # newer than the restored marker
    clock.now = 10**6
    assert publisher.publish_changed() == 0
    assert [c.version for c in store.list()] == [1]


def test_subfolders_are_published_and_restored_links_left_out(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:
    folder, store, clock = work
    save(folder / "checkpoint-500" / "model.bin", "m500", 0)
    save(folder / "checkpoint-500" / "sub" / "rng.json", "r500", 0)
    save(folder / "latest" / "state.json", "s500", 0)
    save(folder / ".hidden" / "x", "not a checkpoint file", 0)
    (folder / "link.bin").symlink_to(folder / "checkpoint-500" / "model.bin")
    (folder / "linked").symlink_to(tmp_path)  # a folder outside: never walked
    publisher = Publisher(store, folder, clock=clock)
    assert publisher.publish_changed(final=True) == 1
    names = ["checkpoint-500/model.bin", "checkpoint-500/sub/rng.json", "latest/state.json"]
    assert [p.name for p in store.list()[-1].parts] == names

    dest = tmp_path / "dest"
    save(dest / "checkpoint-400" / "model.bin", "stale", 0)  # not in the version: removed
    assert restore(store, dest).version == 1
    files = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*"))
    assert files == ["checkpoint-500", names[0], "checkpoint-500/sub", names[1], "latest",
                     names[2]]
    assert (dest / "checkpoint-500" / "sub" / "rng.json").read_text() == "r500"


def test_the_settle_period_is_the_jobs_setting() -> None:
    assert settle_seconds({}) == SETTLE
    assert settle_seconds({ENV_SETTLE: "30"}) == 30
    assert settle_seconds({ENV_SETTLE: "0"}) == 0
    assert settle_seconds({ENV_SETTLE: "soon"}) == SETTLE
    assert settle_seconds({ENV_SETTLE: "-1"}) == SETTLE


def test_a_file_renamed_over_as_it_is_staged_waits_for_the_next_look(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    folder, store, clock = work
    publisher = Publisher(store, folder, settle=0, clock=clock)
    save(folder / "weights.npy", "600", 0)
    save(folder / "optim.npy", "600", 0)
    real = publish_files.stage
    landed = []

    def stage(directory: Path, staging: Path, name: str) -> Path:
        staged = real(directory, staging, name)
        if name == "optim.npy" and not landed:  # the next save lands meanwhile
            save(folder / "optim.npy", "700", 1)
            landed.append(name)
        return staged

    monkeypatch.setattr("launchers.publisher.stage", stage)
    assert publisher.publish_changed() == 0  # what it staged is no longer what it saw
    save(folder / "weights.npy", "700", 1)
    assert publisher.publish_changed() == 1
    assert [(v["weights.npy"], v["optim.npy"]) for v in sets(store, tmp_path)] == [
        ("700", "700")]


def test_a_marker_touched_at_the_start_holds_back_the_first_save(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    save(folder / COMMIT, "", 0)
    assert publisher.publish_changed() == 0  # a marker alone is no checkpoint
    save(folder / "weights.npy", "100", 1)  # alone in the directory, but not committed
    clock.now = 100
    assert publisher.publish_changed() == 0
    save(folder / "optim.npy", "100", 2)
    save(folder / COMMIT, "", 2.5)
    assert publisher.publish_changed() == 1
    assert sets(store, tmp_path) == [{COMMIT: "", "weights.npy": "100", "optim.npy": "100"}]


def test_a_restore_replaces_what_is_in_the_way_of_its_files(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:
    folder, store, clock = work
    save(folder / "latest" / "state.json", "s", 0)
    save(folder / "model", "m", 0)
    Publisher(store, folder, clock=clock).publish_changed(final=True)
    dest = tmp_path / "dest"
    save(dest / "latest", "a file where the version has a folder", 0)
    save(dest / "model" / "old.bin", "a folder where the version has a file", 0)
    assert restore(store, dest).version == 1
    assert (dest / "latest" / "state.json").read_text() == "s"
    assert (dest / "model").read_text() == "m"


def test_leftovers_of_a_running_job_are_published_only_when_committed(tmp_path: Path) -> None:
    """A job whose agent is gone: one look while it runs cannot tell a settled set."""
    from launchers.agent_recovery import publish_leftovers

    store, folder = LocalStore(tmp_path / "store"), tmp_path / "checkpoints"
    save(folder / "weights.npy", "600", 0)
    save(folder / "optim.npy", "500", 0)
    assert publish_leftovers(store, folder, final=False) is None
    save(folder / "optim.npy", "600", 1)
    save(folder / COMMIT, "", 1.5)
    assert publish_leftovers(store, folder, final=False) == 1
