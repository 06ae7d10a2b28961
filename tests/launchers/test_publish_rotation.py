"""A job that saves each checkpoint as one new file under a new name (`ckpt-000650.npz`,
renamed into place) and deletes older ones is published without the settle wait: a file
is taken once it has stayed unchanged from one look to the next. The looks are driven one
by one, with the files' times and the publisher's clock set by the test (no sleeping)."""

from __future__ import annotations

import re
from pathlib import Path

from launchers.checkpoints.local import LocalStore
from launchers.publisher import COMMIT, SETTLE, Publisher
from tests.launchers.test_publish_whole import Clock, save, sets, work  # noqa: F401


def rotate(folder: Path, step: int, at: float, keep: int = 2) -> None:
    """The job's save: ckpt-<step>.npz renamed into place, the oldest beyond `keep` removed."""
    save(folder / f"ckpt-{step:06d}.npz", str(step), at)
    for old in sorted(folder.glob("ckpt-*.npz"))[:-keep]:
        old.unlink()


def test_a_rotating_job_is_published_a_look_after_each_save(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    rotate(folder, 50, 0)
    assert publisher.publish_changed() == 0  # one file alone: a look later
    clock.now = 1
    assert publisher.publish_changed() == 1
    rotate(folder, 100, 2.5)
    clock.now = 2.5
    assert publisher.publish_changed() == 0  # just added: it may still be written in place
    clock.now = 4.5
    assert publisher.publish_changed() == 1  # unchanged since the last look: no settle wait
    rotate(folder, 150, 5)  # ckpt-000050 removed
    clock.now = 6.5
    assert publisher.publish_changed() == 0
    clock.now = 8.5
    assert publisher.publish_changed() == 1
    assert [sorted(v) for v in sets(store, tmp_path)] == [
        ["ckpt-000050.npz"], ["ckpt-000050.npz", "ckpt-000100.npz"],
        ["ckpt-000100.npz", "ckpt-000150.npz"]]
    assert publisher.error == ""


def test_saves_faster_than_the_looks_publish_what_stayed_unchanged(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    rotate(folder, 50, 0)
    publisher.publish_changed()
    step = 50
    for look in range(1, 8):  # a save every 0.5 s, a look every 2 s: new files at each
        for quarter in range(4):
            step += 50
            rotate(folder, step, look * 2 - 2 + quarter / 2, keep=8)
        clock.now = look * 2
        publisher.publish_changed()
    newest = sets(store, tmp_path)[-1]
    assert max(int(v) for v in newest.values()) >= step - 200, (newest, step)
    assert len(store.list()) == 3  # published again and again (the store keeps 3)


def test_a_file_written_in_place_under_a_new_name_waits_until_it_stops_growing(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    rotate(folder, 50, 0)
    publisher.publish_changed()
    clock.now = 1
    assert publisher.publish_changed() == 1  # (a file alone: a look later)
    for clock.now, size in ((2, 10), (4, 20), (6, 30)):  # written without a rename
        (folder / "ckpt-000100.npz").write_bytes(b"x" * size)
        assert publisher.publish_changed() == 0
    clock.now = 8
    assert publisher.publish_changed() == 0  # a file seen growing: the job writes in place
    clock.now = 8 + SETTLE
    assert publisher.publish_changed() == 1  # the settle rule from then on
    assert sets(store, tmp_path)[-1]["ckpt-000100.npz"] == "x" * 30


def test_a_temp_file_or_a_file_rewritten_under_its_name_keeps_the_settle_rule(
        work: tuple[Path, LocalStore, Clock]) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    save(folder / "weights.npy", "500", 0)
    save(folder / "optim.npy", "500", 0)
    publisher.publish_changed(final=True)
    save(folder / "weights.npy", "600", 2)  # renamed over the same name
    save(folder / "extra.bin", "600", 2)  # and a new name beside it
    for clock.now in (2, 4, 6, 8):
        assert publisher.publish_changed() == 0
    clock.now = 12
    assert publisher.publish_changed() == 1

    save(folder / "more.bin", "1", 13)
    (folder / "next.bin.tmp").write_text("half")  # a save in progress
    for clock.now in (14, 16, 18):
        assert publisher.publish_changed() == 0


def test_a_job_with_the_marker_is_never_judged_by_the_new_names_rule(
        work: tuple[Path, LocalStore, Clock]) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    rotate(folder, 50, 0)
    save(folder / COMMIT, "50", 1)
    assert publisher.publish_changed() == 1
    rotate(folder, 100, 2)  # not committed
    for clock.now in (2, 4, 6, 100):
        assert publisher.publish_changed() == 0


def test_a_wait_that_will_not_end_is_said_after_three_settle_periods(
        work: tuple[Path, LocalStore, Clock]) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    for second in range(0, 40, 5):  # weights and optimizer rewritten every 5 s
        clock.now = second
        save(folder / "a.bin", str(second), second)
        save(folder / "b.bin", str(second), second)
        publisher.publish_changed()
        if second < 3 * SETTLE:
            assert publisher.error == "", second
    assert re.match(r"nothing published since \d{4}-\d\d-\d\d \d\d:\d\d UTC: ",
                    publisher.error), publisher.error
    assert COMMIT in publisher.error and "COSTSCHED_CHECKPOINT_SETTLE_SECONDS" in \
        publisher.error


def test_a_single_large_file_still_being_written_is_not_said_as_a_wait_without_end(
        work: tuple[Path, LocalStore, Clock]) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    save(folder / "a.bin", "1", 0)
    save(folder / "b.bin", "1", 0)
    publisher.publish_changed(final=True)
    save(folder / "a.bin", "2", 1)
    for second in range(2, 60, 2):  # b.bin.tmp grows for a minute
        clock.now = second
        (folder / "b.bin.tmp").write_bytes(b"x" * second)
        assert publisher.publish_changed() == 0
        assert publisher.error == "", second
