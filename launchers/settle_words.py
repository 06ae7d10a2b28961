"""The words a checkpoint directory without a commit marker is said with while its saves are
not published (`launchers.publisher.Publisher`): what the agent's looks saw, never a cause
read off a file's name. A file the job replaces by a rename at each save (`step.txt` too)
is named as replaced; only one seen growing in place (the same file, appended to) is called
a log, and only then is moving it out of the directory advised. Every cause seen is said at
once, with the fix that publishes: touching the marker after each save fixes them all."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from launchers.file_identity import told_apart

COMMIT = "COSTSCHED_COMMIT"  # the job's commit marker: its set of files is whole
MARKER = f"$COSTSCHED_CHECKPOINT_DIR/{COMMIT}"  # where the job touches it
DOC = "docs/job-contract.md#checkpoints-of-several-files"
# the settle time a job sets (`launchers.publisher.settle_seconds`)
ENV_SETTLE = "COSTSCHED_CHECKPOINT_SETTLE_SECONDS"
_WAITED = "nothing published since "


def waited(since: str, why: str) -> str:
    """A wait as the status says it: since when (a wall-clock time: the words stay the
    same while the wait lasts), and why."""
    return f"{_WAITED}{since}: {why}"


def cause(said: str) -> str:
    """Why nothing was published, of what the status said of a job's checkpoints: the
    why of a wait (`waited`), else what was said."""
    if said.startswith(_WAITED) and ": " in said:
        return said.split(": ", 1)[1]
    return said


def names(files: Collection[str]) -> str:
    """`a`, `a and b`, `a, b and c` (a set sorted, a list in its order; the first three,
    then how many more)."""
    shown = (sorted(files) if isinstance(files, (set, frozenset)) else list(files))[:3]
    more = len(files) - len(shown)
    if more:
        return f"{', '.join(shown)} and {more} more"
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def seconds(value: float) -> str:
    """`7 s`, `0.35 s`, `12 s`: two significant digits below 10 s, whole seconds above."""
    return f"{value:.0f} s" if value >= 10 else f"{value:.2g} s"


def _saves(replaced: Collection[str], within: float | None) -> str:
    """The saves as the looks saw them: the files replaced at each, saved again how soon."""
    if not replaced:
        return "the job saves again"
    again = f" and saved again within {seconds(within)}" if within else " and saved again"
    verb = "is" if len(replaced) == 1 else "are"
    return f"{names(replaced)} {verb} replaced at every save{again}"


def _grow(grows: Collection[str]) -> str:
    one = len(grows) == 1
    return (f"{names(grows)} grow{'s' if one else ''} between saves (appended to: "
            f"{'a log' if one else 'logs'}")


def unsettled(settle: float, grows: Collection[str], saves: bool,
              replaced: Collection[str] = (), within: float | None = None) -> str:
    """Why the directory has not stayed unchanged for `settle` s: `grows`, the logs seen
    appended to within it; `saves`, whether the job saves again sooner than that too
    (`SaveBursts`; with no log, the saves are the cause all the same); `replaced`, the files
    seen replaced at its saves, and `within`, the shortest time seen between two saves."""
    head = f"the directory has not stayed unchanged for {settle:g} s: "
    it = "it" if len(grows) == 1 else "them"
    again = _saves(replaced, within) if replaced and within else \
        "the job saves again before it does"
    if grows and not saves:
        return (f"{head}{_grow(grows)}; move {it} out of the checkpoint directory, or touch "
                f"{MARKER} after each save for each save to be published at once)")
    if grows:  # (no settle period is short enough while a log grows there: both, or the marker)
        return (f"{head}{_grow(grows)}), and {again}: move {it} out of the checkpoint "
                f"directory and set {ENV_SETTLE} below the time between saves; touching "
                f"{MARKER} after each save publishes each one at once, whatever else changes")
    return (f"{head}{again} (touch {MARKER} after each save for each save to be published at "
            f"once, or set {ENV_SETTLE} below the time between saves)")


def held_back(settle: float, replaced: Collection[str], within: float | None, blocker: str,
              grows: Collection[str] = ()) -> str:
    """A save held back (the job saved again before it was published): why the directory
    did not settle (the files seen replaced at its saves, saved again `within` s, sooner
    than `settle`; the logs seen growing, `grows`), what kept the set from being told whole
    without the marker (`blocker`: what the looks saw), and the fixes that publish."""
    quick = bool(replaced) and within is not None and within < settle
    it = "it" if len(grows) == 1 else "them"
    if quick:
        why = f"{_saves(replaced, within)}, sooner than the {settle:g} s the directory must stay "
        why += "unchanged" + (f"; {_grow(grows)})" if grows else "")
    elif grows:
        why = f"{_grow(grows)}), so the directory never stays unchanged for {settle:g} s"
    else:
        why = f"the directory has not stayed unchanged for {settle:g} s"
    fix = f"touch {MARKER} after each save for each save to be published at once ({DOC})"
    if grows and not quick:
        fix = f"move {it} out of the checkpoint directory, or {fix}"
    elif quick and not grows:
        fix += f", or set {ENV_SETTLE} below the time between saves"
    return f"{why}, and {blocker}: {fix}"


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


def in_place_words(changed: Collection[str], state: Mapping[str, tuple[int, int, int]]) -> str:
    """What a look that found `changed` under the file it was saw: written in place, where
    the filesystem keeps birth times (`launchers.file_identity`), else either that or a
    rename under the inode number the file replaced gave back."""
    one = len(changed) == 1
    if all(told_apart(state[n][2]) for n in changed):
        return (f"{names(changed)} {'is' if one else 'are'} changed in place at a save, not "
                "renamed into place (a file being written cannot be told from a whole one)")
    return (f"{names(changed)} {'keeps its' if one else 'keep their'} inode number at a save: "
            "written in place, or renamed into place under the number the file replaced gave "
            "back, which this filesystem does not tell apart (a file being written cannot be "
            "told from a whole one)")
