"""A job that saves the same files at every save, each written under a temporary name and
renamed over the one before (`weights.npz`, then `step.txt`), more often than the settle
period: each save is published a moment after it (the agent looks again when asked), and
never a set that mixes two saves, wherever a look falls between the renames. The looks are
driven here one by one, with the files' times and the publisher's clock set by the test."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from launchers.checkpoints.local import LocalStore
from launchers.publisher import SETTLE, Publisher, restore
from launchers.replaced_sets import ReplacedSets
from launchers.settle_words import cause
from tests.launchers.test_publish_whole import BASE, Clock, save, sets, work  # noqa: F401

Event = tuple[float, Callable[[], None]]


def saved(folder: Path, step: int, at: float, pause: float = 0.001) -> list[Event]:
    """A save of `step` as a ported numpy script makes it: weights.npz renamed in at `at`, then
    step.txt `pause` s later."""
    return [(at, lambda: save(folder / "weights.npz", f"w{step}", at)),
            (at + pause, lambda: save(folder / "step.txt", str(step), at + pause))]


def started(folder: Path, publisher: Publisher) -> None:
    """The job's save of step 0, taken as its first version (as when it exits, or was
    restored): the saves after it replace every file of a version."""
    save(folder / "weights.npz", "w0", 0)
    save(folder / "step.txt", "0", 0)
    assert publisher.publish_changed(final=True) == 1


def drive(publisher: Publisher, clock: Clock, events: list[Event], until: float,
          poll: float = 5.0, start: float = 0.0) -> list[float]:
    """The agent's looks, every `poll` s from `start` and at the publisher's `again_at`, with
    the job's `events` run in time order between them, until `until`: when each version
    was published."""
    events = sorted(events, key=lambda e: e[0])
    published, look = [], start
    while look <= until:
        while events and events[0][0] <= look:
            events.pop(0)[1]()
        clock.now = look
        if publisher.publish_changed():
            published.append(look)
        after = look + poll
        if publisher.again_at is not None and look < publisher.again_at < after:
            after = publisher.again_at
        look = after
    return published


def whole(store: LocalStore, tmp_path: Path) -> list[str]:
    """The step of every version kept, each asserted whole: its weights are its step's."""
    found = []
    for version in sets(store, tmp_path):
        assert version["weights.npz"] == f"w{version['step.txt']}", version
        found.append(version["step.txt"])
    return found


def test_every_save_of_two_files_sooner_than_the_settle_period_is_published(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:  # noqa: F811
    """A ported numpy script: weights.npz, then step.txt, each renamed into place, every 7 s; the
    agent looks every 5 s, and again when the publisher asks."""
    folder, store, clock = work
    assert SETTLE == 10
    publisher = Publisher(store, folder, keep=100, clock=clock)
    started(folder, publisher)
    events = [e for k in range(1, 21) for e in saved(folder, 200 * k, 7.0 * k + 0.3)]
    published = drive(publisher, clock, events, until=150)
    assert whole(store, tmp_path) == [str(200 * k) for k in range(21)]  # one for each save
    for k, at in enumerate(published, start=1):  # each before the next save
        assert 7.0 * k + 0.3 <= at < 7.0 * (k + 1) + 0.3, (k, at)
    assert publisher.error == ""


@pytest.mark.parametrize("pause", [0.5, 2.0, 6.5])
def test_a_look_between_the_renames_of_a_save_never_publishes_a_torn_set(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path,  # noqa: F811
        pause: float) -> None:
    """The job pauses between renaming its weights and its step file (serializing a large
    state, say), its saves 10 s apart: the looks that fall in the pause, however many,
    publish nothing. A save whose renames take a quarter of the time between saves or less
    is published after its last rename; one that takes longer (6.5 s, against 3.5 s from
    its last rename to the next save's first) cannot be told from two saves' files: none
    is."""
    folder, store, clock = work
    publisher = Publisher(store, folder, keep=100, clock=clock)
    started(folder, publisher)
    events = [e for k in range(1, 16) for e in saved(folder, 200 * k, 10.0 * k, pause)]
    published = drive(publisher, clock, events, until=160, poll=0.25)
    steps = whole(store, tmp_path)  # each version asserted whole
    if pause < 5:
        assert steps == [str(200 * k) for k in range(16)]
        assert all(10.0 * k + pause <= at < 10.0 * (k + 1) for k, at in enumerate(published, 1))
    else:
        assert steps == ["0"]


def test_a_save_of_three_files_each_renamed_at_its_own_look_is_taken_whole(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:  # noqa: F811
    """weights.npz, optim.npz and step.txt renamed 1 s apart, every 20 s, the looks every
    0.25 s: each look finds one more file renamed in, and the last, left as it was while
    the two others were, is never taken for a file saved once."""
    folder, store, clock = work
    publisher = Publisher(store, folder, keep=100, clock=clock)
    save(folder / "optim.npz", "o0", 0)
    started(folder, publisher)
    events = []
    for k in range(1, 8):
        at = 20.0 * k
        events += [(at, lambda k=k, at=at: save(folder / "weights.npz", f"w{k}", at)),
                   (at + 1, lambda k=k, at=at: save(folder / "optim.npz", f"o{k}", at + 1)),
                   (at + 2, lambda k=k, at=at: save(folder / "step.txt", str(k), at + 2))]
    published = drive(publisher, clock, events, until=158, poll=0.25)
    versions = sets(store, tmp_path)
    assert [(v["weights.npz"], v["optim.npz"], v["step.txt"]) for v in versions] == [
        ("w0", "o0", "0")] + [(f"w{k}", f"o{k}", str(k)) for k in range(1, 8)]
    assert all(20.0 * k + 2 <= at < 20.0 * k + 10 for k, at in enumerate(published, 1))


def test_saves_faster_than_the_looks_never_make_a_torn_set(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:  # noqa: F811
    """Saves every 3 s, their renames 0.3 s apart, the looks every 5 s: a look may find the
    weights of one save beside the step file of the one before, the last version several
    saves old. Those sets are never published; the whole ones are."""
    folder, store, clock = work
    publisher = Publisher(store, folder, keep=100, clock=clock)
    started(folder, publisher)
    events = [e for k in range(1, 50) for e in saved(folder, k, 3.0 * k + 0.7, 0.3)]
    published = drive(publisher, clock, events, until=150, poll=5.0, start=0.4)
    assert len(published) >= 10
    assert len(whole(store, tmp_path)) == len(published) + 1  # each asserted whole


def test_a_save_soon_after_the_one_before_is_not_taken_half_renamed(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:  # noqa: F811
    """A save on SIGTERM 0.3 s after a regular one, its step file renamed 2 s after its
    weights: the look in between finds every file replaced since the last version, their
    times close together; that is still no save of its own."""
    folder, store, clock = work
    publisher = Publisher(store, folder, keep=100, clock=clock)
    started(folder, publisher)
    events = [e for k in range(1, 4) for e in saved(folder, 200 * k, 20.0 * k)]
    drive(publisher, clock, events, until=65, poll=5.0)
    assert whole(store, tmp_path) == ["0", "200", "400", "600"]
    events = saved(folder, 800, 80.0) + saved(folder, 801, 80.3, pause=2.0)
    drive(publisher, clock, events, until=120, poll=0.5, start=70)
    assert whole(store, tmp_path)[-1] == "801"


def test_the_first_save_after_a_restore_is_judged_against_the_restored_files(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = Publisher(store, folder, keep=100, clock=clock)
    started(folder, publisher)
    drive(publisher, clock, [e for k in (1, 2) for e in saved(folder, k, 7.0 * k)], until=20)
    assert whole(store, tmp_path) == ["0", "1", "2"]

    again = tmp_path / "again" / "checkpoints"
    publisher = Publisher(store, again, keep=100, clock=clock)
    publisher.version = restore(store, again).version
    for name in ("weights.npz", "step.txt"):  # restored at 25 (the test's times)
        os.utime(again / name, ns=(int((BASE + 25) * 1e9),) * 2)
    publisher.remember_all()
    events = saved(again, 3, 30.0, pause=1.0) + saved(again, 4, 37.0)
    drive(publisher, clock, events, until=45, poll=0.5, start=25)
    assert whole(store, tmp_path) == ["0", "1", "2", "3", "4"]


def test_a_file_saved_once_beside_the_others_is_kept_as_it_was_after_two_saves(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:  # noqa: F811
    """weights.npz and step.txt replaced at every save, vocab.json written once: a file
    left as it was may be the rest of a save still to come, until it has stayed the same
    through two saves of the others; from then on each save is published with it."""
    folder, store, clock = work
    publisher = Publisher(store, folder, keep=100, clock=clock)
    save(folder / "vocab.json", "v", 0)
    started(folder, publisher)
    events = [e for k in range(1, 6) for e in saved(folder, k, 6.0 * k + 0.5)]
    published = drive(publisher, clock, events, until=34, poll=1.0, start=1)
    assert whole(store, tmp_path) == ["0", "2", "3", "4", "5"]
    assert published == [14, 20, 26, 32]  # a look after each, from the second on
    assert all(v["vocab.json"] == "v" for v in sets(store, tmp_path))
    assert publisher.error == ""


@pytest.mark.parametrize("how", ["a temporary file left behind", "written in place"])
def test_saves_held_back_are_said_at_once_with_what_was_seen(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path,  # noqa: F811
        caplog: pytest.LogCaptureFixture, how: str) -> None:
    """What keeps a save from being told whole without the marker is said as soon as a
    save is held back (the next one replaces its files), in the agent's log too: a
    temporary file that stays in the directory at the second save; files written in place
    once three saves have changed them so (a file renamed over twice between two looks may
    get its inode back, and is not taken for one written in place)."""
    folder, store, clock = work
    publisher = Publisher(store, folder, keep=100, clock=clock)
    started(folder, publisher)
    if how == "written in place":
        def rewrite(step: int, at: float) -> None:
            for name, text in (("weights.npz", f"w{step}"), ("step.txt", str(step))):
                (folder / name).write_text(text)  # the same file, truncated and written
                os.utime(folder / name, ns=(int((BASE + at) * 1e9),) * 2)
        events = [(6.0 * k + 0.5, lambda k=k: rewrite(k, 6.0 * k + 0.5)) for k in range(1, 6)]
    else:
        (folder / "optimizer.pt.tmp").write_text("from a save that never finished")
        events = [e for k in range(1, 6) for e in saved(folder, k, 6.0 * k + 0.5)]
    caplog.set_level(logging.WARNING, logger="costsched.agent")
    said_at = None
    for clock.now in range(1, 35):
        while events and events[0][0] <= clock.now:
            events.pop(0)[1]()
        publisher.publish_changed()
        if publisher.error and said_at is None:
            said_at = clock.now
    assert whole(store, tmp_path) == ["0"]
    said = [r.getMessage() for r in caplog.records if "not published" in r.getMessage()]
    fix = ("touch $COSTSCHED_CHECKPOINT_DIR/COSTSCHED_COMMIT after each save for each save "
           "to be published at once (docs/job-contract.md#checkpoints-of-several-files)")
    if how == "written in place":
        assert said_at == 19  # the third save (18.5)
        assert publisher.error.endswith(
            "the directory has not stayed unchanged for 10 s, and step.txt and weights.npz "
            "are changed in place at a save, not renamed into place (a file being written "
            "cannot be told from a whole one): " + fix), publisher.error
    else:
        assert said_at == 13  # the second save (12.5) replaces the first
        assert publisher.error.endswith(
            "weights.npz and step.txt are replaced at every save and saved again within 6 s, "
            "sooner than the 10 s the directory must stay unchanged, and optimizer.pt.tmp "
            "stays in the directory (a temporary file: a save under way, as far as costsched "
            "can tell): " + fix + ", or set COSTSCHED_CHECKPOINT_SETTLE_SECONDS below the "
            "time between saves"), publisher.error
    assert len(said) == 1 and said[0].endswith(cause(publisher.error)), said


def test_an_inode_reused_between_two_looks_holds_back_one_save_only() -> None:
    """A file renamed over twice between two looks may get its old inode back: that save
    looks written in place, and is held back; the next is judged afresh."""
    sets_ = ReplacedSets()
    sets_.published({"w": (1, 10, 100), "s": (1, 10, 101)})

    def look(files: dict[str, tuple[int, int, int]], now: float) -> bool:
        return sets_.look(files, set(), frozenset(), frozenset(files.items()), False,
                          now).whole

    assert not look({"w": (1, 20, 100), "s": (1, 20, 102)}, 1)  # w's inode back: in place?
    assert not look({"w": (1, 20, 100), "s": (1, 20, 102)}, 5)
    assert not look({"w": (1, 30, 103), "s": (1, 30, 104)}, 6)  # the next save: renamed
    assert look({"w": (1, 30, 103), "s": (1, 30, 104)}, 7)
