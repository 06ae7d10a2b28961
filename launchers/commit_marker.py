"""The publisher's marker rule (launchers.publisher's doc): a job that touches the commit
marker once every file of a save is written has its set published while the marker is
newer than every other file but the logs, or, where their times tie, once a later look
finds them all unchanged; never while a file of the marker's time was seen changed after a
look that found the marker as it is."""

from __future__ import annotations

from launchers.checkpoint_dir import Look
from launchers.settle_words import COMMIT
from launchers.state_logs import is_log


class CommitMarker:
    """The marker rule's memory of the looks: the marker as last seen, and the files of its
    time seen changed after a look that found it so; the set last found with the marker no
    newer than it."""

    def __init__(self) -> None:
        self._after_marker: tuple[tuple[int, int, int], set[str]] | None = None
        self._tie: frozenset[tuple[str, int, int, int]] | None = None

    def committed(self, seen: Look, before: dict[str, tuple[int, int, int]] | None,
                  final: bool) -> str:
        """'' when the marker commits the set `seen` (`before`: the complete files at the
        last look; `final`: the job has exited), else what it waits for."""
        marker = seen.complete.get(COMMIT)
        # (a log appended after the marker does not undo the commit: it is whole as is)
        files = {n: state for n, state in seen.states.items()
                 if n != COMMIT and not is_log(n)}
        newest = max((at for _, at, _ in files.values()), default=0)
        if marker is None or marker.st_mtime_ns < newest:
            return (f"{COMMIT} is missing or older than the files it commits (touch it "
                    "once every file of a save is written)")
        mark = seen.states[COMMIT]
        if self._after_marker is None or self._after_marker[0] != mark:
            self._after_marker = (mark, set())  # touched again: a new commit
        if before is not None and before.get(COMMIT) == mark:
            # the last look found the marker as it is: a file of its time changed since
            # was written after it, in the same clock tick
            self._after_marker[1].update(
                n for n, was in files.items()
                if was[1] == marker.st_mtime_ns and before.get(n) != was)
        if self._after_marker[1]:
            return (f"{', '.join(sorted(self._after_marker[1])[:3])} written after {COMMIT} "
                    "was last touched (touch it once every file of a save is written)")
        if marker.st_mtime_ns > newest or final:
            return ""
        # which came first, their times do not tell: every file but the logs, temp ones
        # included (an optimizer state being written under a temp name grows)
        tie = frozenset(e for e in seen.signature if not is_log(e[0]))
        if self._tie == tie:
            return ""  # a look later, as it was: no save under way
        self._tie = tie
        return (f"{COMMIT} has the time of a file it commits: taken at the next look that "
                "finds them unchanged")
