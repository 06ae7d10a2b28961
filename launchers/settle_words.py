"""What keeps a checkpoint directory without a commit marker from settling, in the words
its wait is said with (`launchers.publisher.Publisher`): every cause seen at once, a log
that keeps growing and saves that come faster than the settle time, so that the first
diagnosis names the fix that publishes (touching the marker after each save fixes both)."""

from __future__ import annotations

from collections.abc import Sequence

COMMIT = "COSTSCHED_COMMIT"  # the job's commit marker: its set of files is whole
# the settle time a job sets (`launchers.publisher.settle_seconds`)
ENV_SETTLE = "COSTSCHED_CHECKPOINT_SETTLE_SECONDS"


def unsettled(settle: float, logs: Sequence[str], saves: bool) -> str:
    """Why the directory has not stayed unchanged for `settle` s: `logs`, the logs seen
    appended to within it (at most 3 named); `saves`, whether the job saves again sooner
    than that too (`SaveBursts`; with no log, the saves are the cause all the same)."""
    head = f"the directory has not stayed unchanged for {settle:g} s: "
    grows = (f"{', '.join(logs[:3])} keeps growing (a log appended to between saves; move it "
             "out of the checkpoint directory")
    again = "the job saves again before it does"
    if logs and not saves:
        return (f"{head}{grows}, or touch {COMMIT} after each save for it to be published at "
                "once)")
    if logs:
        return (f"{head}{grows}), and {again} (set {ENV_SETTLE} below the time between "
                f"saves); touching {COMMIT} after each save publishes each one at once, "
                "whatever else changes")
    return (f"{head}{again} (touch {COMMIT} after each save for it to be published at once, "
            f"or set {ENV_SETTLE} below the time between saves)")


class SaveBursts:
    """Whether the job saves again sooner than the settle time: a look that finds files
    other than logs changed after one that found none (a new save) less than `settle` s
    after the last change of the save before. A save written over several looks is one."""

    def __init__(self, settle: float) -> None:
        self.settle = settle
        self._last: float | None = None  # the last look that found a save's files changed
        self._quiet = False  # a look since found none changed (that save was over)
        self._quick: float | None = None  # when a save came that soon, last

    def look(self, now: float, saved: bool) -> None:
        """One look at `now` (monotonic seconds); `saved`: it found a save's files changed."""
        if not saved:
            self._quiet = self._last is not None
            return
        if self._quiet and now - self._last < self.settle:  # type: ignore[operator]
            self._quick = now
        self._last, self._quiet = now, False

    def quick(self, now: float) -> bool:
        """Whether a save came sooner than the settle time after the one before, lately
        (within two settle times of `now`)."""
        return self._quick is not None and now - self._quick < 2 * self.settle
