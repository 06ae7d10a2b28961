"""A checkpoint directory without a commit marker that never settles: its first wait names
every cause seen, a log that keeps growing and saves that come sooner than the settle
time, with the fix that publishes whatever else changes (touching the marker after each
save); a log alone, or saves alone, are named alone. The looks are driven one by one, with
the files' times and the publisher's clock set by the test."""

from __future__ import annotations

from pathlib import Path

from launchers.checkpoints.local import LocalStore
from launchers.publisher import SETTLE, Publisher
from tests.launchers.test_publish_state_logs import append
from tests.launchers.test_publish_whole import Clock, save, work  # noqa: F401

BOTH = ("the directory has not stayed unchanged for 10 s: metrics.csv keeps growing (a log "
        "appended to between saves; move it out of the checkpoint directory), and the job "
        "saves again before it does (set COSTSCHED_CHECKPOINT_SETTLE_SECONDS below the time "
        "between saves); touching COSTSCHED_COMMIT after each save publishes each one at "
        "once, whatever else changes")


def _run(folder: Path, publisher: Publisher, clock: Clock, every: int, log: bool) -> None:
    save(folder / "weights.bin", "0", 0)
    save(folder / "optim.bin", "0", 0)
    publisher.publish_changed(final=True)
    for second in range(3, 200, 3):
        if second % every == 0:  # a save: two files renamed over
            save(folder / "weights.bin", str(second), second)
            save(folder / "optim.bin", str(second), second)
        if log:
            append(folder / "metrics.csv", str(second), second)
        clock.now = second
        assert publisher.publish_changed() == 0
        if publisher.error:
            return


def test_saves_sooner_than_the_settle_time_beside_a_log_are_named_at_once(
        work: tuple[Path, LocalStore, Clock]) -> None:  # noqa: F811
    folder, store, clock = work
    assert SETTLE == 10
    publisher = Publisher(store, folder, clock=clock)
    _run(folder, publisher, clock, every=6, log=True)
    assert publisher.error.endswith(BOTH), publisher.error


def test_a_log_alone_is_named_alone(work: tuple[Path, LocalStore, Clock]) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    _run(folder, publisher, clock, every=15, log=True)
    assert publisher.error.endswith(
        "metrics.csv keeps growing (a log appended to between saves; move it out of the "
        "checkpoint directory, or touch COSTSCHED_COMMIT after each save for it to be "
        "published at once)"), publisher.error


def test_saves_alone_are_named_alone(work: tuple[Path, LocalStore, Clock]) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = Publisher(store, folder, clock=clock)
    _run(folder, publisher, clock, every=6, log=False)
    assert publisher.error.endswith(
        "the job saves again before it does (touch COSTSCHED_COMMIT after each save for it "
        "to be published at once, or set COSTSCHED_CHECKPOINT_SETTLE_SECONDS below the time "
        "between saves)"), publisher.error
