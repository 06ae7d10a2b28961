"""A commit marker with the same time as a file it commits: on a filesystem whose clock
moves in ticks (a few milliseconds on many kernels), a job that touches its marker and
begins its next save in one tick leaves the marker and the next save's first file with
equal times. A version never mixes the two saves: a set whose marker is not strictly the
newest is taken only once a later look finds it as it was (while the job runs), and never
when a file was seen written after the marker. The files' times are set by the test
(os.utime), the looks driven one by one."""

from __future__ import annotations

from pathlib import Path

import pytest

from launchers.checkpoints.local import LocalStore
from launchers.publisher import COMMIT, Publisher
from tests.launchers.test_publish_whole import Clock, save, sets


@pytest.fixture()
def work(tmp_path: Path) -> tuple[Path, LocalStore, Clock]:
    folder = tmp_path / "work" / "checkpoints"
    folder.mkdir(parents=True)
    return folder, LocalStore(tmp_path / "store"), Clock()


def _pairs(store: LocalStore, tmp_path: Path) -> list[tuple[str, str]]:
    return [(v["weights.npy"], v["optim.npy"]) for v in sets(store, tmp_path)]


def test_a_save_begun_in_the_tick_of_the_commit_before_is_never_mixed_in(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    save(folder / "weights.npy", "500", 19)
    save(folder / "optim.npy", "500", 19)
    save(folder / COMMIT, "500", 20)  # save 500 committed...
    save(folder / "weights.npy", "600", 20)  # ...and save 600 begun in the same tick
    clock.now = 1
    assert publisher.publish_changed() == 0  # the marker is as new as weights 600
    for clock.now, written in ((2, "6"), (3, "60")):  # its optimizer state written next
        (folder / "optim.npy.tmp").write_text(written)
        assert publisher.publish_changed() == 0
    save(folder / "optim.npy", "600", 21)
    clock.now = 4
    assert publisher.publish_changed() == 0  # the marker is older: not committed
    save(folder / COMMIT, "600", 21)  # committed in the tick of its last file
    for clock.now in (5, 6):
        publisher.publish_changed()
    assert _pairs(store, tmp_path) == [("600", "600")]


def test_a_file_seen_written_after_the_marker_in_its_tick_is_not_committed(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:
    """A look that found the marker as it is, then a file with its time changed since: the
    file was written after the marker, whatever their equal times say."""
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    save(folder / "weights.npy", "500", 19)
    save(folder / "optim.npy", "500", 19)
    save(folder / COMMIT, "500", 20)
    clock.now = 1
    assert publisher.publish_changed() == 1  # strictly the newest: whole at once
    save(folder / "weights.npy", "600", 20)  # the next save begun in the marker's tick
    for clock.now in (2, 3, 4, 5):
        assert publisher.publish_changed() == 0
    final = publisher.publish_changed(final=True)  # the job ended in mid-save: not taken
    assert final == 0
    assert _pairs(store, tmp_path) == [("500", "500")]


def test_a_set_committed_in_the_tick_of_its_last_file_is_published(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:
    """One more look, while the job runs (a log it appends to meanwhile does not hold it
    back); at once when it has exited (it writes nothing more)."""
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    save(folder / "weights.npy", "500", 20)
    save(folder / "optim.npy", "500", 20)
    save(folder / COMMIT, "500", 20)
    save(folder / "metrics.jsonl", '{"step": 500}\n', 20)
    clock.now = 1
    assert publisher.publish_changed() == 0
    with (folder / "metrics.jsonl").open("a") as log:
        log.write('{"step": 510}\n')
    clock.now = 2
    assert publisher.publish_changed() == 1
    save(folder / "weights.npy", "600", 30)
    save(folder / "optim.npy", "600", 30)
    save(folder / COMMIT, "600", 30)
    assert publisher.publish_changed(final=True) == 1
    assert _pairs(store, tmp_path) == [("500", "500"), ("600", "600")]
