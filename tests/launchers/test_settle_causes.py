"""A checkpoint directory without a commit marker whose saves are not published: its wait
says what the agent's looks saw, never a cause read off a file's name. A file replaced by a
rename at each save (`step.txt` too) is named as replaced, never as a log; a file seen
appended to is named as a log that grows, and moving it out is advised only when that
alone keeps the directory from settling. The looks are driven one by one, with the files'
times and the publisher's clock set by the test."""

from __future__ import annotations

from pathlib import Path

import pytest

from launchers.checkpoints.local import LocalStore
from launchers.publisher import SETTLE, Publisher
from tests.launchers.test_publish_state_logs import append
from tests.launchers.test_publish_whole import Clock, save, work  # noqa: F401

MARKER = ("touch $COSTSCHED_CHECKPOINT_DIR/COSTSCHED_COMMIT after each save for each save "
          "to be published at once")
DOC = "(docs/job-contract.md#checkpoints-of-several-files)"


def _run(folder: Path, publisher: Publisher, clock: Clock, every: int, log: bool,
         leftover: bool = True, pause: float = 0.01) -> float | None:
    """weights.npz, then step.txt (`pause` s later), renamed over every `every` s; a log
    appended to every 3 s (`log`); a temporary file left by a save that never finished
    (`leftover`: no set is then told whole without the marker). When the wait was first
    said (the publisher's clock), or None."""
    save(folder / "weights.npz", "0", 0)
    save(folder / "step.txt", "0", 0)
    if leftover:
        (folder / "optimizer.pt.tmp").write_text("from a save that never finished")
    assert publisher.publish_changed(final=True) == 1
    for second in range(3, 120, 3):
        if second % every == 0:
            save(folder / "weights.npz", f"w{second}", second - pause)
            save(folder / "step.txt", str(second), second)
        if log:
            append(folder / "metrics.csv", str(second), second)
        clock.now = second
        assert publisher.publish_changed() == 0
        if publisher.error:
            return second
    return None


def test_a_step_file_replaced_at_each_save_is_named_as_replaced_never_as_a_log(
        work: tuple[Path, LocalStore, Clock]) -> None:  # noqa: F811
    folder, store, clock = work
    assert SETTLE == 10
    publisher = Publisher(store, folder, clock=clock)
    assert _run(folder, publisher, clock, every=6, log=False) == 12  # at the second save
    assert publisher.error.endswith(
        "weights.npz and step.txt are replaced at every save and saved again within 6 s, "
        "sooner than the 10 s the directory must stay unchanged, and optimizer.pt.tmp stays "
        "in the directory (a temporary file: a save under way, as far as costsched can "
        f"tell): {MARKER} {DOC}, or set COSTSCHED_CHECKPOINT_SETTLE_SECONDS below the time "
        "between saves"), publisher.error
    assert "log" not in publisher.error and "move" not in publisher.error


def test_saves_sooner_than_the_settle_time_beside_a_log_are_named_together(
        work: tuple[Path, LocalStore, Clock]) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    assert _run(folder, publisher, clock, every=6, log=True) == 12
    assert publisher.error.endswith(
        "weights.npz and step.txt are replaced at every save and saved again within 6 s, "
        "sooner than the 10 s the directory must stay unchanged; metrics.csv grows between "
        "saves (appended to: a log), and optimizer.pt.tmp stays in the directory (a "
        f"temporary file: a save under way, as far as costsched can tell): {MARKER} {DOC}"
    ), publisher.error


def test_a_log_that_alone_keeps_the_directory_changing_is_named_with_its_fix(
        work: tuple[Path, LocalStore, Clock]) -> None:  # noqa: F811
    """Saves every 15 s, slower than the settle time: the log appended every 3 s is what
    keeps the directory changing; moving it out works, the settle time would not."""
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    assert _run(folder, publisher, clock, every=15, log=True) == 30
    assert publisher.error.endswith(
        "metrics.csv grows between saves (appended to: a log), so the directory never "
        "stays unchanged for 10 s, and optimizer.pt.tmp stays in the directory (a temporary "
        "file: a save under way, as far as costsched can tell): move it out of the "
        f"checkpoint directory, or {MARKER} {DOC}"), publisher.error
    assert "below the time between saves" not in publisher.error


@pytest.mark.parametrize("log", [False, True])
def test_a_wait_nothing_held_back_explains_is_said_after_three_settle_periods(
        work: tuple[Path, LocalStore, Clock], log: bool) -> None:  # noqa: F811
    """Each save's step file renamed 4 s after its weights, every 6 s: too long a save to
    be told from two saves' files without the marker, and the directory never settles.
    Said once 3 settle periods have passed, with the files replaced and the logs grown."""
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    said = _run(folder, publisher, clock, every=6, log=log, leftover=False, pause=4)
    assert said is not None and said >= 3 * SETTLE
    saves = "weights.npz and step.txt are replaced at every save and saved again within 6 s"
    if log:
        assert publisher.error.endswith(
            "the directory has not stayed unchanged for 10 s: metrics.csv grows between "
            f"saves (appended to: a log), and {saves}: move it out of the checkpoint "
            "directory and set COSTSCHED_CHECKPOINT_SETTLE_SECONDS below the time between "
            "saves; touching $COSTSCHED_CHECKPOINT_DIR/COSTSCHED_COMMIT after each save "
            "publishes each one at once, whatever else changes"), publisher.error
    else:
        assert publisher.error.endswith(
            f"the directory has not stayed unchanged for 10 s: {saves} ({MARKER}, or set "
            "COSTSCHED_CHECKPOINT_SETTLE_SECONDS below the time between saves)"), \
            publisher.error
