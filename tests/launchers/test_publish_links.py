"""A job that saves each checkpoint as a new file in a subfolder (`checkpoints/ckpt-000450.pkl`,
renamed into place), then points a `latest` link at it (made under a temp name, renamed over
`latest`), then removes older files, beside a log it appends to (`progress.jsonl`): each
save is published once a look finds nothing but the log changed since the look before,
never between the file and the link; the link is kept as a link and restored as one; a
version of the log alone holds no save (its step: the one the run started from). The looks
are driven one by one, with the files' times and the publisher's clock set by the test."""

from __future__ import annotations

import os
from pathlib import Path

from launchers.checkpoint_links import LINKS, kept
from launchers.checkpoints.local import LocalStore
from launchers.progress_readings import ProgressReadings
from launchers.publisher import Publisher, restore
from tests.launchers.test_publish_state_logs import append, ns
from tests.launchers.test_publish_whole import Clock, save, work  # noqa: F401


def pickle_saved(folder: Path, step: int, at: float) -> None:
    """The file of the save, renamed into place (the link not moved yet)."""
    save(folder / "checkpoints" / f"ckpt-{step:06d}.pkl", str(step), at)


def link_moved(folder: Path, step: int, keep: int = 2) -> None:
    """`latest` pointed at the save (made as latest.tmp-link, renamed over), older removed."""
    ck = folder / "checkpoints"
    (ck / "latest.tmp-link").symlink_to(f"ckpt-{step:06d}.pkl")
    os.replace(ck / "latest.tmp-link", ck / "latest")
    for old in sorted(ck.glob("ckpt-*.pkl"))[:-keep]:
        old.unlink()


def restored(store: LocalStore, tmp_path: Path, version: int) -> Path:
    dest = tmp_path / "restored" / str(version)
    dest.mkdir(parents=True)
    assert restore(store, dest, at_most=version).version == version
    return dest


def test_new_files_a_moved_link_and_a_log_are_published_a_look_after_each_save(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    log = folder / "progress.jsonl"
    append(log, '{"episode": 100}', 0)
    assert publisher.publish_changed() == 0  # the log alone: a file alone, a look later
    clock.now = 1
    assert publisher.publish_changed() == 1
    steps, second = [], 0.0
    for step in (486, 971, 1456):
        second += 15
        append(log, f'{{"episode": {step}}}', second - 1)
        pickle_saved(folder, step, second)
        clock.now = second
        assert publisher.publish_changed() == 0  # the file, not its link yet: not whole
        link_moved(folder, step)
        append(log, f'{{"episode": {step + 50}}}', second + 1)
        clock.now = second + 2
        assert publisher.publish_changed() == 0  # the link moved since the look before
        append(log, f'{{"episode": {step + 100}}}', second + 3)
        clock.now = second + 4
        assert publisher.publish_changed() == 1  # nothing but the log changed since
        assert publisher.error == ""
        steps.append(step)
        dest = restored(store, tmp_path, publisher.version)
        latest = dest / "checkpoints" / "latest"
        assert latest.is_symlink() and os.readlink(latest) == f"ckpt-{step:06d}.pkl"
        assert latest.read_text() == str(step)
        assert sorted(p.name for p in (dest / "checkpoints").iterdir()) == sorted(
            ["latest", *(f"ckpt-{s:06d}.pkl" for s in steps[-2:])])
        assert not (dest / LINKS).exists()
        assert (dest / "progress.jsonl").read_text().count("\n") >= 2
    clock.now = second + 6
    append(log, '{"episode": 1700}', second + 5)
    assert publisher.publish_changed() == 0  # only the log grew: no save since


def test_a_temp_link_holds_the_set_back(
        work: tuple[Path, LocalStore, Clock]) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    append(folder / "progress.jsonl", "{}", 0)
    publisher.publish_changed()
    pickle_saved(folder, 100, 1)
    (folder / "checkpoints" / "latest.tmp-link").symlink_to("ckpt-000100.pkl")
    for clock.now in (2, 4, 6):
        assert publisher.publish_changed() == 0
    os.replace(folder / "checkpoints" / "latest.tmp-link", folder / "checkpoints" / "latest")
    for clock.now, published in ((8, 0), (10, 1)):
        assert publisher.publish_changed() == published


def test_a_link_leading_outside_is_left_out_and_a_restore_never_makes_one(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:  # noqa: F811
    folder, store, clock = work
    outside = tmp_path / "data.bin"
    outside.write_text("not the job's")
    save(folder / "ckpt-000100.pkl", "100", 0)
    (folder / "data").symlink_to(outside)  # absolute: left out
    (folder / "up").symlink_to("../../data.bin")  # above the directory: left out
    (folder / "latest").symlink_to("ckpt-000100.pkl")
    publisher = Publisher(store, folder, clock=clock)
    assert publisher.publish_changed(final=True) == 1
    dest = restored(store, tmp_path, 1)
    assert sorted(p.name for p in dest.iterdir()) == ["ckpt-000100.pkl", "latest"]
    assert kept("a/latest", "../b/x") and kept("latest", "sub/x")
    assert not kept("latest", "../x") and not kept("a/latest", "../../x")
    assert not kept("latest", "/etc/passwd") and not kept("latest", ".")
    # a store's links file that leads outside (tampered with) is never made
    (dest / LINKS).write_text('{"evil": "../../../data.bin", "abs": "/etc/passwd"}')
    from launchers import checkpoint_links

    assert checkpoint_links.restore(dest) == {}
    assert not (dest / "evil").is_symlink() and not (dest / "abs").is_symlink()


def test_a_version_of_a_log_alone_holds_no_save(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:  # noqa: F811
    """The log published before the first save, once a look has seen it grow: its step is
    the one the run started from (0), never the step reported when the log was written
    (the first look cannot tell it from a state file written once: `step.txt`)."""
    folder, store, clock = work
    progress = tmp_path / "progress"
    readings = ProgressReadings(progress)
    readings.begin(0)
    publisher = Publisher(store, folder, clock=clock)
    for second, step in ((3, 100), (6, 200), (9, 300)):
        progress.write_text(f"{step}\n")
        os.utime(progress, ns=(ns(second), ns(second)))
        readings.sample()
        append(folder / "progress.jsonl", f'{{"episode": {step}}}', second)
        clock.now = second
        assert publisher.publish_changed() == (second > 3)  # a file alone: a look later
        if second > 3:
            assert readings.step_at(publisher.written_ns, publisher.said_step,
                                    publisher.named_step) == 0
