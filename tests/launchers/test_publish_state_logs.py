"""A job that keeps one state file, replaced whole by a rename at each save (`state.pkl`,
written as `state.pkl.tmp`), beside logs it only appends to (`metrics.jsonl`) is published
at the look after each save, with no settle wait: the logs as they are then, the version's
step the one reported when the state file was written. What the rule must not take (two
files each replaced by a rename, a file growing in place under a name that is not a log's,
a log rewritten) keeps the settle rule from then on. The looks are driven one by one, with
the files' times and the publisher's clock set by the test (no sleeping)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from launchers import publish_files
from launchers.checkpoints.local import LocalStore
from launchers.progress_readings import ProgressReadings
from launchers.publisher import COMMIT, SETTLE, Publisher
from launchers.state_logs import judge
from tests.launchers.test_publish_whole import BASE, Clock, save, sets, work  # noqa: F401


def ns(at: float) -> int:
    return int((BASE + at) * 1e9)


def append(path: Path, line: str, at: float) -> None:
    """A line appended to the log at `path` (the same file: its inode kept), at time `at`."""
    with path.open("a") as log:
        log.write(line + "\n")
    os.utime(path, ns=(ns(at), ns(at)))


def test_a_state_file_and_its_log_are_published_at_the_look_after_each_save(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    save(folder / "state.pkl", "150", 0)
    assert publisher.publish_changed() == 0  # one file alone: a look later
    clock.now = 1
    assert publisher.publish_changed() == 1
    append(folder / "metrics.jsonl", '{"step": 250}', 3)
    clock.now = 4
    assert publisher.publish_changed() == 0  # only the log grew: nothing saved since
    save(folder / "state.pkl", "300", 5)
    append(folder / "metrics.jsonl", '{"step": 500}', 8)
    clock.now = 9
    assert publisher.publish_changed() == 1  # the state replaced whole: at once
    save(folder / "state.pkl", "450", 10)
    clock.now = 11
    assert publisher.publish_changed() == 1
    append(folder / "metrics.jsonl", '{"step": 750}', 12)
    save(folder / "state.pkl", "600", 12.5)
    clock.now = 13
    assert publisher.publish_changed() == 1
    assert publisher.error == ""
    versions = sets(store, tmp_path)
    assert [v["state.pkl"] for v in versions] == ["300", "450", "600"]  # the store keeps 3
    assert [v["metrics.jsonl"].count("\n") for v in versions] == [2, 2, 3]


def test_the_published_version_has_the_step_reported_when_the_state_was_written(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:  # noqa: F811
    folder, store, clock = work
    progress = tmp_path / "progress"
    readings = ProgressReadings(progress)
    readings.begin(0)

    def report(step: int, at: float) -> None:
        progress.write_text(f"{step}\n")
        os.utime(progress, ns=(ns(at), ns(at)))
        readings.sample()

    publisher = Publisher(store, folder, clock=clock)
    save(folder / "state.pkl", "150", 0)
    append(folder / "metrics.jsonl", '{"step": 150}', 0.5)
    publisher.publish_changed(final=True)
    report(300, 4.9)
    save(folder / "state.pkl", "300", 5)
    report(400, 7.9)
    append(folder / "metrics.jsonl", '{"step": 400}', 8)  # the log written after the save
    clock.now = 9
    assert publisher.publish_changed() == 1
    assert publisher.written_ns == ns(5)  # the state file's time, not the log's
    assert publisher.named_step is None
    assert readings.step_at(publisher.written_ns, publisher.said_step,
                            publisher.named_step) == 300


def test_a_log_appended_to_as_it_is_published_is_taken_as_the_look_saw_it(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    log = folder / "metrics.jsonl"
    save(folder / "state.pkl", "150", 0)
    append(log, "150", 0)
    publisher.publish_changed(final=True)
    save(folder / "state.pkl", "300", 2)
    append(log, "300", 2)
    real = publish_files.stage_log

    def stage_log(directory: Path, staging: Path, name: str, seen: os.stat_result) -> Path:
        append(log, "301", 3)  # the job appends on meanwhile
        return real(directory, staging, name, seen)

    monkeypatch.setattr("launchers.publisher.stage_log", stage_log)
    clock.now = 3
    assert publisher.publish_changed() == 1
    assert sets(store, tmp_path)[-1] == {"state.pkl": "300", "metrics.jsonl": "150\n300\n"}
    monkeypatch.undo()
    save(folder / "state.pkl", "450", 4)
    clock.now = 5
    assert publisher.publish_changed() == 1
    assert sets(store, tmp_path)[-1]["metrics.jsonl"] == "150\n300\n301\n"

    def cut(directory: Path, staging: Path, name: str, seen: os.stat_result) -> Path:
        log.write_text("")  # cut as it is published: not what the look saw
        return real(directory, staging, name, seen)

    monkeypatch.setattr("launchers.publisher.stage_log", cut)
    append(log, "450", 6)
    save(folder / "state.pkl", "600", 6)
    clock.now = 7
    assert publisher.publish_changed() == 0


def test_two_files_each_replaced_by_a_rename_wait_until_settled(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    save(folder / "weights.npy", "500", 0)
    save(folder / "optim.npy", "500", 0)
    append(folder / "metrics.jsonl", "500", 0)
    publisher.publish_changed(final=True)
    save(folder / "weights.npy", "600", 20)  # the optimizer state follows 6 s later
    for clock.now in (21, 23, 25.9):
        assert publisher.publish_changed() == 0  # new weights, old optimizer state: torn
    save(folder / "optim.npy", "600", 26)
    append(folder / "metrics.jsonl", "600", 26)
    for clock.now in (27, 30, 26 + SETTLE - 0.1):
        assert publisher.publish_changed() == 0
    clock.now = 27 + SETTLE
    assert publisher.publish_changed() == 1
    assert [(v["weights.npy"], v["optim.npy"]) for v in sets(store, tmp_path)] == [
        ("500", "500"), ("600", "600")]


def test_a_save_that_clears_the_directory_first_is_not_taken_half_done(
        work: tuple[Path, LocalStore, Clock]) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    save(folder / "weights.npy", "500", 0)
    save(folder / "optim.npy", "500", 0)
    append(folder / "metrics.jsonl", "500", 0)
    assert publisher.publish_changed() == 0  # the first look: two files, not settled
    (folder / "optim.npy").unlink()  # the next save clears the directory, then writes
    save(folder / "weights.npy", "600", 1)
    for clock.now in (2, 4):
        assert publisher.publish_changed() == 0  # new weights, no optimizer state yet


def test_a_file_growing_in_place_under_a_name_that_is_no_logs_is_not_taken(
        work: tuple[Path, LocalStore, Clock]) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    save(folder / "state.pkl", "150", 0)
    publisher.publish_changed()
    weights = folder / "weights.npz"  # np.savez straight to its final name
    for clock.now, size in ((2, 10), (4, 20), (6, 30)):
        with weights.open("ab") as out:
            out.write(b"x" * 10)
        save(folder / "state.pkl", str(size), clock.now - 0.5)
        assert publisher.publish_changed() == 0, clock.now
    weights.unlink()  # seen once: the settle rule stays the job's
    save(folder / "state.pkl", "450", 7)
    append(folder / "metrics.jsonl", "450", 7)
    clock.now = 8
    assert publisher.publish_changed() == 0


@pytest.mark.parametrize("rewrite", ["renamed", "shrunk", "same size"])
def test_a_log_rewritten_rather_than_appended_to_keeps_the_settle_rule(
        work: tuple[Path, LocalStore, Clock], rewrite: str) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    log = folder / "metrics.csv"
    save(folder / "state.pkl", "150", 0)
    append(log, "step,loss\n150,0.9", 0)
    publisher.publish_changed(final=True)
    clock.now = 2
    publisher.publish_changed()
    if rewrite == "renamed":  # written whole, as a temp file renamed over it
        save(log, "step,loss\n150,0.9\n300,0.8\n", 4)
    else:
        log.write_text("step\n" if rewrite == "shrunk" else "step,lost\n150,0.9\n")
        os.utime(log, ns=(ns(4), ns(4)))
    save(folder / "state.pkl", "300", 4)
    for clock.now in (5, 7):
        # a log renamed over is a state file: with state.pkl, two files replaced together,
        # published once they stayed so (launchers.replaced_sets); rewritten in place, never
        assert publisher.publish_changed() == int(rewrite == "renamed" and clock.now == 7)
    save(folder / "state.pkl", "450", 8)
    append(log, "450,0.7", 8)
    clock.now = 9
    assert publisher.publish_changed() == 0  # once seen: the settle rule from then on


def test_a_temp_file_at_this_look_or_the_one_before_holds_the_save_back(
        work: tuple[Path, LocalStore, Clock]) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    save(folder / "state.pkl", "150", 0)
    append(folder / "metrics.jsonl", "150", 0)
    publisher.publish_changed(final=True)
    append(folder / "metrics.jsonl", "200", 1)  # (seen appended to: a log, not by name alone)
    temp = folder / "state.pkl.tmp"
    temp.write_text("half")  # the next save in progress
    clock.now = 2
    assert publisher.publish_changed() == 0
    save(folder / "state.pkl", "300", 3)  # (save writes its own temp, renamed over)
    temp.unlink(missing_ok=True)
    clock.now = 4
    assert publisher.publish_changed() == 0  # a temp file at the look before
    clock.now = 6
    assert publisher.publish_changed() == 1  # the file renamed in, still there
    (folder / "state.pkl.tmp").write_text("half")
    clock.now = 8
    assert publisher.publish_changed() == 0
    save(folder / "state.pkl", "450", 9)  # renamed over as a look sees the temp file
    (folder / "state.pkl.tmp").write_text("half")
    clock.now = 10
    assert publisher.publish_changed() == 0
    (folder / "state.pkl.tmp").unlink()
    clock.now = 12
    assert publisher.publish_changed() == 0  # a temp file at the look before
    clock.now = 14
    assert publisher.publish_changed() == 1


def test_a_job_with_the_marker_is_never_judged_by_this_rule(
        work: tuple[Path, LocalStore, Clock]) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    save(folder / "state.pkl", "150", 0)
    save(folder / COMMIT, "150", 1)
    assert publisher.publish_changed() == 1
    save(folder / "state.pkl", "300", 2)  # not committed
    append(folder / "metrics.jsonl", "300", 2)
    for clock.now in (3, 5, 7, 100):
        assert publisher.publish_changed() == 0


@pytest.mark.parametrize(("now", "told"), [
    ({"state.pkl": (9, 2, 8), "metrics.jsonl": (20, 2, 5)}, ("state.pkl", False)),
    ({"state.pkl": (9, 2, 8), "metrics.jsonl": (10, 1, 5), "a/b.log": (1, 2, 3)},
     ("state.pkl", False)),  # a new log
    ({"state.pkl": (9, 2, 7), "metrics.jsonl": (20, 2, 5)}, (None, False)),  # same file
    ({"state.pkl": (9, 2, 8)}, ("state.pkl", False)),  # a log removed
    ({"metrics.jsonl": (10, 1, 5)}, (None, True)),  # the state file removed
    ({"state.pkl": (8, 1, 7), "metrics.jsonl": (10, 1, 5), "new.pkl": (1, 1, 1)},
     (None, True)),  # a second file
    ({"state.pkl": (9, 2, 8), "metrics.jsonl": (20, 2, 6)}, (None, True)),  # log renamed
    ({"state.pkl": (9, 2, 8), "metrics.jsonl": (5, 2, 5)}, (None, True)),  # log cut
    ({"state.pkl": (9, 2, 8), "metrics.jsonl": (10, 2, 5)}, (None, True)),  # rewritten
    ({"state.pkl": (9, 2, 8), "optim.npy": (9, 2, 9)}, (None, True)),  # two state files
    ({"new.pkl": (9, 2, 8), "metrics.jsonl": (10, 1, 5)}, (None, True)),  # renamed away
])
def test_what_a_look_tells_against_the_one_before(
        now: dict[str, tuple[int, int, int]], told: tuple[str | None, bool]) -> None:
    before = {"state.pkl": (8, 1, 7), "metrics.jsonl": (10, 1, 5)}
    assert judge(before, now) == told


def test_a_version_only_a_log_grew_in_keeps_the_step_of_the_state_it_holds(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:  # noqa: F811
    """Two files saved together (weights, then the optimizer: the settle rule's), and a log
    appended between saves: a version whose only new bytes are the log's holds the state of
    the save before, so its step stays that save's, never the step the log was written at;
    a version with new state files takes its step from them, not from the log."""
    folder, store, clock = work
    progress = tmp_path / "progress"
    readings = ProgressReadings(progress)
    readings.begin(0)

    def report(step: int, at: float) -> None:
        progress.write_text(f"{step}\n")
        os.utime(progress, ns=(ns(at), ns(at)))
        readings.sample()

    def step() -> int | None:
        return readings.step_at(publisher.written_ns, publisher.said_step,
                                publisher.named_step)

    publisher = Publisher(store, folder, clock=clock)
    report(200, 0)
    save(folder / "weights.npz", "200", 0.1)
    save(folder / "adam.npz", "200", 0.2)
    append(folder / "events.csv", "200", 0.3)
    clock.now = SETTLE + 1
    publisher.publish_changed()
    assert publisher.publish_changed() == 1
    assert step() == 200
    report(300, 20)
    append(folder / "events.csv", "300", 20.1)  # the log grows; the state does not
    clock.now = 20.2
    publisher.publish_changed()
    clock.now = 20.2 + SETTLE + 1
    assert publisher.publish_changed() == 1
    assert [v["weights.npz"] for v in sets(store, tmp_path)][-1] == "200"
    assert step() == 200  # the state it holds is step 200's
    report(400, 40)
    save(folder / "weights.npz", "400", 40.1)
    save(folder / "adam.npz", "400", 40.2)
    report(401, 41)
    append(folder / "events.csv", "401", 41.1)  # a log line after the save
    clock.now = 41.2
    publisher.publish_changed()
    clock.now = 41.2 + SETTLE + 1
    assert publisher.publish_changed() == 1
    assert step() == 400


def test_a_log_appended_after_the_commit_marker_keeps_the_set_committed(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:  # noqa: F811
    """The marker commits the files a save wrote; a log line appended after it (events.csv
    every 100 steps, a save every 200) does not make the set look uncommitted: it is
    published at the next look, its log as that look saw it."""
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    save(folder / "weights.npz", "200", 0)
    save(folder / "adam.npz", "200", 0.1)
    save(folder / COMMIT, "200", 0.2)
    append(folder / "events.csv", "200", 0.3)
    clock.now = 1
    assert publisher.publish_changed() == 1
    append(folder / "events.csv", "300", 3)
    save(folder / "weights.npz", "400", 6)
    save(folder / "adam.npz", "400", 6.1)
    save(folder / COMMIT, "400", 6.2)
    append(folder / "events.csv", "400", 6.3)  # the log line after the save's marker
    clock.now = 7
    assert publisher.publish_changed() == 1
    assert publisher.error == ""
    assert publisher.said_step == 400
    assert sets(store, tmp_path)[-1]["weights.npz"] == "400"
