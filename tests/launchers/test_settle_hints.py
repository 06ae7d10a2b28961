"""The fixes a held-back checkpoint directory is told are offered only where they work as
printed: a log appended to more often than any settle period keeps the directory
changing, so the settle period is never offered alone beside one; where it is offered,
followed, the saves are published. The looks are driven one by one, with the files' times
and the publisher's clock set by the test."""

from __future__ import annotations

from pathlib import Path

import pytest

from launchers.checkpoints.local import LocalStore
from launchers.publisher import Publisher
from tests.launchers.test_publish_state_logs import append
from tests.launchers.test_publish_whole import Clock, save, sets, work  # noqa: F401
from tests.launchers.test_replaced_together import drive

HINT = "set COSTSCHED_CHECKPOINT_SETTLE_SECONDS below the time between saves"


def _job(folder: Path, log: Path | None, until: int) -> list:
    """weights.npz, then step.txt 0.1 s later, every 6 s, beside a temporary file left by
    a save that never finished (no set is told whole without the marker or the settle
    period); metrics.csv appended to every 2 s at `log` (None: not at all)."""
    (folder / "optimizer.pt.tmp").write_text("from a save that never finished")
    events = []
    for at in range(6, until, 6):
        events += [(at - 0.1, lambda at=at: save(folder / "weights.npz", f"w{at}", at - 0.1)),
                   (at, lambda at=at: save(folder / "step.txt", str(at), at))]
    if log is not None:
        events += [(at + 0.5, lambda at=at: append(log, str(at), at + 0.5))
                   for at in range(2, until, 2)]
    return events


def _run(folder: Path, store: LocalStore, clock: Clock, log: Path | None,
         settle: float = 10.0) -> Publisher:
    publisher = Publisher(store, folder, keep=100, settle=settle, clock=clock)
    save(folder / "weights.npz", "w0", 0)
    save(folder / "step.txt", "0", 0)
    assert publisher.publish_changed(final=True) == 1
    drive(publisher, clock, _job(folder, log, 130), until=120, poll=5.0)
    return publisher


@pytest.mark.parametrize("log", [False, True])
def test_the_settle_period_is_offered_only_where_no_log_keeps_the_directory_changing(
        work: tuple[Path, LocalStore, Clock], log: bool) -> None:  # noqa: F811
    folder, store, clock = work
    publisher = _run(folder, store, clock, folder / "metrics.csv" if log else None)
    assert len(store.list()) == 1, publisher.error  # nothing but the first
    assert "touch $COSTSCHED_CHECKPOINT_DIR/COSTSCHED_COMMIT after each save" in \
        publisher.error
    assert (HINT in publisher.error) is not log, publisher.error


def test_the_settle_period_followed_as_offered_publishes_the_saves(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:  # noqa: F811
    """The same job with a settle period of 3 s (below the 6 s between saves), the agent
    looking every 5 s: its saves are published, each whole; its log written outside the
    checkpoint directory changes nothing."""
    folder, store, clock = work
    publisher = _run(folder, store, clock, tmp_path / "metrics.csv", settle=3.0)
    versions = sets(store, tmp_path)
    assert len(versions) >= 10, (versions, publisher.error)
    assert all(v["weights.npz"] == f"w{v['step.txt']}" for v in versions[1:]), versions
