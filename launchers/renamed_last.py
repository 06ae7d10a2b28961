"""The publisher's renamed-last rule (launchers.publisher's doc): a job that saves, in turn,
new files under new names written in place (`epoch=3-step=600.ckpt`, the best few kept,
older ones removed), then one file renamed over the one before (`last.ckpt`, written as
`last.ckpt.tmp`), beside files written once (`hparams.yaml`) and logs it appends to
(`metrics.csv`): the layout of a PyTorch Lightning checkpoint folder. Its logs grow more
often than it saves, so its directory never settles; the files of a save lie under names
that change, so the replaced-together rule never sees the same set twice.

A set is taken whole when what the looks saw proves it:

- exactly one file that the last version holds changed since (`last.ckpt`, the renamed
  file), and the look that found it as it is found it another file than the look before
  (renamed into place: whole by itself; another inode number, or, where a temporary file
  took the number the file it replaced gave back, another birth time:
  launchers.file_identity);
- every other file it holds that was not in that version (a new name) was last written no
  later than the renamed file (its time is not newer): a job writes one file at a time, so
  a file written before the rename of the save's last file is complete;
- every file left as it was is no part of the save: last written before the renamed file
  of the last version was (not written at each save after it), or it stayed the same
  while the renamed file was renamed in twice (`static`, as the replaced-together rule
  says it); a file of the last version may be gone (an older best removed);
- no temporary file is there and no link moved, and nothing but the logs changed for a
  short while (QUIET s, at most a quarter of the time since the renamed file's version
  before): a file written after the rename (a job that renames first, then writes its new
  file) shows up by then; a new file with the renamed file's very time (a filesystem clock
  moves in ticks on many kernels) is taken only so too. `again_at` says when a look may
  find it so (the agent looks again then).

Logs (files seen only appended to) are published as the look saw them: a log's prefix is
whole. Not covered (the set waits: for the settle period, the commit marker, or the job's
exit): a job that writes a new file after its renamed file and pauses within it longer
than the quiet time, two files or more that the version holds changed (the
replaced-together rule's), or a save whose files are all written in place.

Whatever the rule, a save the job makes again before the one before it was published (a
file changed since the last version replaced again, or changed again after a look found it
still) is held back: `held`, said at once by the publisher with what the looks saw
(`blocker`), unless a look is due that may publish the save now there (`again_at`)."""

from __future__ import annotations

from collections.abc import Collection

from launchers.replaced_sets import Verdict
from launchers.settle_words import in_place_words, names
from launchers.state_logs import is_log

Files = dict[str, tuple[int, int, int]]  # path -> (size, mtime_ns, file id), at one look

QUIET = 1.0  # seconds nothing but the logs may change before a set is taken (at most)
_SPREAD = 4  # ...and at most this part of the time since the renamed file's version before
_STATIC = 2  # a file the same while the renamed file was renamed in this often: no part


class RenamedLast:
    """The renamed-last rule's memory of the looks, and the held-back save of any layout
    (the module's doc)."""

    def __init__(self) -> None:
        self._ref: Files | None = None  # the files of the version last published or
        # restored
        self._last: Files = {}  # every complete file at the last look
        self._still: set[str] = set()  # the files the last look found as the one before
        self._renamed_in: Files = {}  # each file as a look found it renamed into place
        self._renames: dict[str, int] = {}  # each file: the looks that found it renamed in
        self._prior: Files = {}  # ...and as it was before the last of them
        self._mark: dict[str, dict[str, int]] = {}  # each file: `_renames` when it changed
        self._every: frozenset | None = None  # every entry but the logs at the last look...
        self._since = 0.0  # ...the same since then (the publisher's clock)
        self._temps: frozenset = frozenset()  # the temporary files' entries, last look
        self._gone: Files = {}  # the files removed since the reference, as last seen
        self.held = False  # a save was held back since the reference

    def published(self, files: Files) -> None:
        """The complete files of the version just published or restored, as the look that
        took them saw them: the reference of the next save."""
        self._ref = dict(files)
        self.held, self._gone = False, {}
        if not self._last:
            self._last = dict(files)

    def look(self, files: Files, logs: Collection[str], temps: frozenset,
             every: frozenset, links_moved: bool, now: float) -> Verdict:
        """One look: the complete files, the logs among them (seen only appended to), the
        temporary files' entries, every entry (the directory's signature), whether a link
        moved since the last version, the publisher's clock."""
        settled = frozenset(e for e in every if e[0] not in logs)
        if settled != self._every:
            self._every, self._since = settled, now
        self._note(files, logs)
        stale, self._temps = temps & self._temps, temps
        ref = self._ref or {}  # (none published nor restored yet: every file is new)
        state = {n: f for n, f in files.items() if n not in logs}
        changed = {n for n in state if n not in ref or state[n] != ref[n]}
        if not changed:
            return Verdict(held=self.held)
        gone = set(ref if self._ref is not None else self._gone) - set(files)
        blocker, quiet = self._blocker(state, changed, gone, stale, links_moved)
        if quiet is None or temps:
            return Verdict(blocker=blocker, held=self.held)
        if now >= self._since + quiet:  # (as `again_at` is written: a look then finds it)
            return Verdict(whole=True)
        return Verdict(again_at=self._since + quiet, held=self.held)

    def _blocker(self, state: Files, changed: set[str], gone: set[str], stale: frozenset,
                 links_moved: bool) -> tuple[str, float | None]:
        """(what keeps the save from being told whole that the looks saw, '' when nothing
        known does; how long nothing but the logs must stay unchanged, None when it cannot
        be told whole now)."""
        ref = self._ref or {}
        if stale:
            temps = {e[0] for e in stale}
            return (f"{names(temps)} stay{'s' if len(temps) == 1 else ''} in the directory "
                    "(a temporary file: a save under way, as far as costsched can tell)"), None
        replaced = changed & set(ref)
        renamed = {n for n in changed if self._renamed_in.get(n) == state[n]}
        if links_moved or len(replaced) > 1:
            return "", None  # (another rule's layout: what it saw is said by it)
        if not renamed:
            if replaced:
                return in_place_words(replaced, state), None
            return "", None
        last = max(renamed, key=lambda n: (state[n][1], n))  # the save's last file
        # its version before: the last version's, else the one a look saw it replace
        before = (ref.get(last) or self._prior.get(last) or (0, 0, 0))[1]
        # Files removed: as many as the new ones beside the renamed file (the best few
        # kept: an older one removed for each new), never a save that clears one first
        added = {n for n in changed - replaced - {last} if not is_log(n)}
        if replaced - {last} or len(added) < len(gone):
            return "", None
        after = {n for n in changed if state[n][1] > state[last][1]}
        if after and all(n in self._still for n in after):
            return (f"{names(after)} {'was' if len(after) == 1 else 'were'} written after "
                    f"{last} was renamed into place (a file written in place after the "
                    "save's renamed file cannot be told whole)"), None
        if after:
            return "", None  # (a save under way: the next look tells)
        kept = {n for n in state if n not in changed
                and state[n][1] >= before and n not in self._static(last)}
        if kept:  # (the rest of a save, or a file written once: static after two renames)
            return (f"{names(kept)} {'is' if len(kept) == 1 else 'are'} left as "
                    f"{'it was' if len(kept) == 1 else 'they were'} (a save that leaves a "
                    "file as it was cannot be told from one still being written)"), None
        gap = (state[last][1] - before) / 1e9
        return "", min(QUIET, gap / _SPREAD) if before and gap > 0 else QUIET

    def _static(self, renamed: str) -> set[str]:
        """The files that stayed as they were while `renamed` was renamed in _STATIC
        times."""
        times = self._renames.get(renamed, 0)
        return {n for n in self._last
                if times - self._mark.get(n, {}).get(renamed, 0) >= _STATIC}

    def _note(self, files: Files, logs: Collection[str]) -> None:
        """What changed between the last look and this one: a file renamed into place (under
        another inode), and a save held back (a file changed since the reference changed
        again under another inode, or after a look found it still)."""
        before, ref = self._last, self._ref or {}
        for n, is_ in files.items():
            was = before.get(n)
            if was is not None and was != is_ and was[2] != is_[2]:
                self._renamed_in[n], self._prior[n] = is_, was
                self._renames[n] = self._renames.get(n, 0) + 1
        for n, is_ in files.items():
            was = before.get(n)
            if was != is_:
                self._mark[n] = dict(self._renames)
            if n in logs or was is None or was == is_ or was == ref.get(n):
                continue  # (first seen, as it was, or changed since the reference at last)
            self.held = self.held or is_[2] != was[2] or n in self._still
        self._gone.update((n, f) for n, f in before.items() if n not in files)
        self._still = {n for n, is_ in files.items() if before.get(n) == is_}
        self._last = dict(files)
        self._renamed_in = {n: f for n, f in self._renamed_in.items() if n in files}
        self._renames = {n: k for n, k in self._renames.items() if n in files}
        self._prior = {n: f for n, f in self._prior.items() if n in files}
        self._mark = {n: k for n, k in self._mark.items() if n in files}

