"""The publisher's replaced-together rule (launchers.publisher's doc): a job that writes the
same files at every save, each under a temporary name renamed over the one before
(`weights.npz`, then `step.txt`), more often than the settle period allows. No one look can
tell a whole save from one half renamed in, so a set is taken only when what the looks saw
proves it whole:

- every file of it but the logs (files seen only appended to: `known_logs`) was replaced
  since the reference (the files of the version last published or restored; else the
  files as the job last changed their names), and each is one the job replaces by a
  rename (a look found it changed under another inode; one found changed _IN_PLACE times
  under its own, never another, is written in place: not taken). A file left as it was
  may be the rest of a save still to come (`step.txt`, renamed after `weights.npz`): it
  holds the set back until it has stayed the same while another was renamed in _STATIC
  times (`static`: `vocab.json`, written once; a file of the next save is renamed in again
  only after the rest of the save before);
- the replaced files' modification times lie within 1/_SPREAD of the time since the save
  before (their times before, as the looks saw them): one save's files are written
  together, while a look between two renames of a save finds files of two saves, a save
  apart;
- no temporary file is there, no link moved, and nothing but the logs has changed for a
  while: _TIGHT times as long as the set's times spread, at least; 1/_SPREAD of the time
  between saves, at most QUIET s, when that is longer. `again_at` says when a look may
  find it so (the agent looks again then).

It rests on a save's renames following one another closer together than the saves do: a
job that spends most of the time between its saves between two renames of one save cannot
be told from one whose looks fall between two saves (the commit marker is for it).

A save the job makes again before the one before it was published (a file replaced twice
since the reference, or changed again after a look found it still) is held back: `held`.
What kept it back, when the looks saw it (`blocker`: a file left as it was, one written
in place, a temporary file that stays, a link moved), is said at once; a set whose times
lie too far apart is most often a look between two renames, and is not. A set the rule
cannot prove whole waits: for the settle period, the commit marker, or the job's exit."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from launchers.settle_words import in_place_words, names

Files = dict[str, tuple[int, int, int]]  # path -> (size, mtime_ns, inode), at one look

QUIET = 1.0  # the most seconds a replaced set must stay unchanged (a quarter of the saves' gap)
_SPREAD = 4  # the set's times lie within 1/_SPREAD of the time since the save before
_TIGHT = 2  # ...and it stays unchanged _TIGHT times as long as they spread, at least
_IN_PLACE = 3  # a file found changed this often, never under another inode: written in place
_STATIC = 2  # a file the same while another was renamed in this often: saved apart


@dataclass(frozen=True)
class Verdict:
    """What one look tells of the directory: the set is whole (`whole`); a look at
    `again_at` (the publisher's clock) may find it so; what keeps the replaced files from
    being told whole ('' when nothing does, or nothing was replaced); whether a save was held
    back (`held`: the job saved again before the save before was published)."""

    whole: bool = False
    again_at: float | None = None
    blocker: str = ""
    held: bool = False


class ReplacedSets:
    """The replaced-together rule's memory of the looks (the module's doc)."""

    def __init__(self) -> None:
        self._ref: Files | None = None  # the reference: the files a save must all replace
        self._last: Files = {}  # the files (logs left out) at the last look
        self._prior: Files = {}  # each file as it was before the last change a look saw
        self._still: set[str] = set()  # the files the last look found as the one before
        self._renamed: set[str] = set()  # files a look found under another inode, changed
        self._kept: dict[str, int] = {}  # ...and the others: how often found changed so
        self._renames: dict[str, int] = {}  # each file: the looks that found it renamed in
        self._mark: dict[str, dict[str, int]] = {}  # each file: `_renames` when it last changed
        self._every: frozenset | None = None  # every entry but the logs at the last look...
        self._since = 0.0  # ...the same since then (the publisher's clock)
        self._stale: frozenset[tuple] = frozenset()  # the temporary files at the last look
        self._gaps: deque[float] = deque(maxlen=8)  # seconds between a file's saves, seen
        self.held = False  # a save was held back since the reference

    @property
    def within(self) -> float | None:
        """The shortest time seen between two saves of a file (seconds), lately."""
        return min(self._gaps) if self._gaps else None

    @property
    def replaced(self) -> list[str]:
        """The files seen replaced by a rename since the reference, in the order the job
        last wrote them."""
        return sorted(self._renamed & set(self._last), key=lambda n: (self._last[n][1], n))

    @property
    def static(self) -> set[str]:
        """The files that stayed as they were while another was renamed in _STATIC times:
        saved once (`vocab.json`), or less often than the others, never the rest of a save
        under way (a file of the next save is renamed in again only after it)."""
        return {n for n in self._last if any(
            times - self._mark.get(n, {}).get(f, 0) >= _STATIC
            for f, times in self._renames.items() if f != n)}

    def published(self, files: Files) -> None:
        """The files (logs left out) of the version just published or restored, as the look
        that took them saw them: the reference of the next save."""
        self._ref = dict(files)
        self.held = False
        if not self._last:  # (restored: the next look is judged against these files)
            self._last = dict(files)

    def look(self, files: Files, known_logs: set[str], temps: frozenset[tuple],
             every: frozenset, links_moved: bool, now: float) -> Verdict:
        """One look: the complete files, the logs among them, the temporary files' entries
        (name, size, mtime_ns, inode), every entry (the directory's signature), whether a link
        moved since the last version, the publisher's clock."""
        state = {n: f for n, f in files.items() if n not in known_logs}
        settled = frozenset(e for e in every if e[0] not in known_logs)
        if settled != self._every:
            self._every, self._since = settled, now
        self._note(self._last, state)
        self._last = state
        stale, self._stale = temps & self._stale, temps
        if self._ref is None or set(state) != set(self._ref) - known_logs:
            if not temps:  # the job's files as they are now: its next save is judged so
                self.published(state)
            return Verdict()
        ref = self._ref
        replaced = {n for n in state if state[n] != ref[n]}
        if not replaced:
            return Verdict()
        blocker, quiet = self._blocker(state, replaced, stale, links_moved)
        if quiet is None or temps:
            return Verdict(blocker=blocker, held=self.held)
        if now >= self._since + quiet:  # (as `again_at` is written: a look then finds it)
            return Verdict(whole=True)
        return Verdict(again_at=self._since + quiet, held=self.held)

    def _blocker(self, state: Files, replaced: set[str], stale: frozenset[tuple],
                 links_moved: bool) -> tuple[str, float | None]:
        """(what keeps the replaced set from being told whole, '' when nothing does; how long
        it must stay unchanged to be, None when it cannot be now)."""
        ref = self._ref or {}
        # A file the job replaces by a rename: one a look found changed under another inode
        # (once is enough: renamed over twice between two looks, a file may get its first
        # inode back). One found changed _IN_PLACE times, its inode kept each time, is
        # written in place; one seen less is held back, unsaid.
        unproven = {n for n in replaced if n not in self._renamed}
        in_place = {n for n in unproven if self._kept.get(n, 0) >= _IN_PLACE}
        if in_place:
            return in_place_words(in_place, state), None
        if unproven:
            return "", None
        kept = set(state) - replaced - self.static
        if kept:
            return (f"{names(kept)} {_is(kept)} left as {_it(kept)} {_was(kept)} (a save "
                    "that leaves a file as it was cannot be told from one still being "
                    "written)"), None
        if stale:
            temps = {e[0] for e in stale}
            return (f"{names(temps)} stay{'s' if len(temps) == 1 else ''} in the directory "
                    "(a temporary file: a save under way, as far as costsched can tell)"), None
        if links_moved:
            return "a link in it moved since the last checkpoint", None
        times = [state[n][1] for n in replaced]
        lo, hi = min(times), max(times)
        before = max(self._prior.get(n, ref[n])[1] for n in replaced)
        gap, spread = (lo - before) / 1e9, (hi - lo) / 1e9
        if gap <= 0 or spread * _SPREAD > gap:  # (a look between two renames, most often)
            return "", None
        return "", max(min(QUIET, gap / _SPREAD), _TIGHT * spread)

    def _note(self, before: Files, now: Files) -> None:
        """What changed between the last look and this one: a file changed under another
        inode (renamed in: the time between its saves) or its own, and a save held back
        (a file replaced again once it had been since the reference, or changed again after
        a look found it still)."""
        ref = self._ref or {}
        for n, is_ in now.items():
            if n in before and before[n][2] != is_[2]:
                self._renames[n] = self._renames.get(n, 0) + 1
        for n, is_ in now.items():
            was = before.get(n)
            if was != is_:  # (or first seen)
                self._mark[n] = dict(self._renames)
            if was is None or was == is_:
                continue
            if is_[2] == was[2]:  # (written in place, or renamed over twice: an inode reused)
                self._kept[n] = self._kept.get(n, 0) + 1
            else:
                self._renamed.add(n)
                if is_[1] > was[1]:
                    self._gaps.append((is_[1] - was[1]) / 1e9)
            if n in ref and was != ref[n] and (is_[2] != was[2] or n in self._still):
                self.held = True
            self._prior[n] = was
        self._still = {n for n, is_ in now.items() if before.get(n) == is_}
        self._renames = {n: k for n, k in self._renames.items() if n in now}
        self._mark = {n: k for n, k in self._mark.items() if n in now}
        self._prior = {n: f for n, f in self._prior.items() if n in now}
        self._renamed &= set(now)
        self._kept = {n: k for n, k in self._kept.items() if n in now}


def _is(files: set[str]) -> str:
    return "is" if len(files) == 1 else "are"


def _it(files: set[str]) -> str:
    return "it" if len(files) == 1 else "they"


def _was(files: set[str]) -> str:
    return "was" if len(files) == 1 else "were"
