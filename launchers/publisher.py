"""A job's checkpoints between its instance and its checkpoint store: the newest verified
version restored at start (every file of it, in its subfolders), and the directory's
complete tree of files published as the next version once it is whole (files that did not
change named by it, not uploaded again; the last KEEP versions kept).

When a set is whole. A job writes a checkpoint of several files one after another (weights,
then the optimizer state): a version taken between the two would hold new weights with old
optimizer state, and a hard preemption would restore that mix. So a new version is
published only when the job's set is whole:
- with the commit marker (COMMIT, at the top of the directory): the job touches it once every
  file of a set is written; a version is published while the marker is newer than every
  other file but the logs (`launchers.state_logs`: appended to after a save), never
  otherwise (once a marker was seen, a missing one means "not whole": a job may delete it
  before a save). No wait: a large or slow set is published as soon as it is committed.
  A marker with the same time as the newest file (a filesystem clock moves in ticks of a
  few milliseconds on many kernels) does not tell which came first: the set may be
  committed, or the next save may have begun in the tick of the commit. It is taken once
  a later look finds the marker and every file as they were (a save under way changes
  one), or at once when the job has exited; never while a file of the marker's time was
  seen changed after a look that found the marker as it is (written after it: a save
  begun, not committed). The marker may hold the step saved: the version's step then
  (`said_step`; launchers.progress_readings.saved_step);
- else once the directory has stopped changing: no file's (size, mtime), temp files
  included, changed between looks for the settle period (SETTLE seconds, the job's
  $COSTSCHED_CHECKPOINT_SETTLE_SECONDS; 0: no wait). A directory of one complete file and
  nothing else is published a look later, without the wait, when that look found it
  renamed in since the look before, or as it was then (a file renamed into place is
  whole by itself): never at the first look that finds it (it may be half written), nor
  once the job was seen changing a file under the same inode (written in place, as
  `torch.save(model, "last.pt")` does: a look between its writes would take it torn), nor
  changed in place since the last look (`_lone_whole`);
- else, with no wait, when the job saves each checkpoint as new files under new names and
  deletes older ones (`ckpt-000650.npz`, renamed into place; the newest few kept), in a
  subfolder too, may point a link at the newest (`checkpoints/latest`, made under a temp
  name and renamed over the old one) and may append to logs beside them
  (`progress.jsonl`, launchers.state_logs): when the change since the last version only
  adds files under names it did not hold (and removes others), moves links and appends to
  logs, no temp file or temp link was there at this look or the one before, no link
  moved since the last look, and the job was never seen changing a complete file that is
  not a log between two looks (a file renamed over one of the same name, or written in
  place and seen growing: the settle rule is its from then on), the directory as the last
  look found it is published, with the links and each log as this look saw it
  (`_settled_new_names`): the files that stayed unchanged since, and those the job deleted
  since, named from the last version, which holds them as that look found them (a save
  that keeps the newest two, `checkpoint-600/` renamed in whole, then `checkpoint-500/`
  removed, is published as it left the directory: `checkpoint-550/` too, never the newer
  alone; a folder that look found half deleted is left out). One added since waits for
  the next look (one look of patience: a file written in place without a rename is not
  taken half-written, nor a file whose link is not moved yet). Only logs grown since is
  no save: nothing is published for it. Not covered: a save of several new files each
  renamed in on its own (a look between their renames could take one without the other:
  the marker is for it; a folder renamed in whole is one), and a file the job deletes
  before two looks have seen it (nothing is published at the look that finds it gone);
- else, with no wait, when the job keeps one state file, replaced whole by a rename at each
  save (`state.pkl`, written as `state.pkl.tmp`), beside logs it only appends to
  (`metrics.jsonl`; a log is named `*.log`, `*.jsonl`, `*.csv`, `*.tsv`, `*.txt` or
  `*.out`: launchers.state_logs): when the state file is one a look saw renamed in (a new
  inode under its name), unchanged since, and not the last version's, no temp file was
  there at this look or the one before, and every other complete file is a log by what the
  looks saw, not by its name alone (seen appended to, or the same while the state file was
  renamed in twice: a `step.txt` not renamed yet is the rest of a save; `_state_and_logs`),
  the directory is published, each log as this look saw it (a copy of its first bytes: a
  log's prefix is whole, and the job appends on meanwhile); the version's step is read off
  the state file's time, not a log's. Not covered, and the settle rule is the job's from
  then on once it is seen (`_beyond`): two files or more that are not logs (weights, then
  the optimizer state, each renamed into place: a look between the renames would tear the
  set; the replaced-together rule below, or the marker, is for it; a file growing in
  place under a name that is not a log's, as np.savez writes straight to its final name),
  a file that is not a log removed (a save that clears the directory first), or a log
  changed otherwise than by appends (its inode the same, its size only up): replaced, cut
  or rewritten. A state file changed under the same inode (written in place) is not taken;
- else, sooner than the settle period, when the job writes the same files at every save,
  each renamed over the one before (`weights.npz`, then `step.txt`): once every file but
  the logs was replaced by a rename since the last version, their times lie together (one
  save's, not two), no temporary file is there, and nothing but the logs changed for a
  short while fitted to the job's own saves (launchers.replaced_sets); the agent looks
  again then (`again_at`);
- else, a moment after the save, when the job saves new files under new names written in
  place (`epoch=3-step=600.ckpt`, the older best removed), then one file renamed over the
  one before (`last.ckpt`), beside files written once and logs (a PyTorch Lightning
  folder): once the renamed file is one a look saw renamed in, every new file is no newer
  than it (written before it: complete), every file left as it was is no part of the save,
  as many files were removed as added, and nothing but the logs changed for a short while
  (launchers.renamed_last); the logs as this look saw them;
- once the job has exited (`final`), at once: a job writes its checkpoint on SIGTERM, then
  exits, so the directory is complete (the marker, when the job uses one, is still its word).
Until then the previous version stays the one restored. A save held back (the job saved
again before it was published, and what the looks saw cannot prove a set whole: a file left
as it was, one written in place, one written after the save's renamed file, ...) is said at
once, with what was seen and the marker as the fix (launchers.settle_words.held_back), in
the status and the agent's log, whatever the layout (`launchers.renamed_last` tells a save
held back under names that change); the settle period is offered as a fix only where no log
keeps the directory changing (else with moving the log out). While a settle wait is on, the
agent looks again when the settle period has passed (`again_at`). Another
settle wait that does not end (a log there keeps growing) after 3 settle periods; a wait for
the marker after _PATIENCE s (a large set takes time).

A version's step is its save's: a version whose only new bytes are logs' (a log alone,
before the first save) holds no save, and keeps the step of the one before (none: the step
the run started from, 0 when nothing was restored), never the time the log was written at.

The directory as one look sees it, and a version restored into it: launchers.checkpoint_dir;
which of its paths are a write in progress (never published): launchers.in_progress; the
marker rule: launchers.commit_marker; the files staged for a publish: launchers.publish_files.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from launchers import checkpoint_links, nothing_published, version_steps
from launchers.checkpoint_dir import Look, look
from launchers.checkpoint_dir import restore as restore  # the agent's, with the rest
from launchers.checkpoint_links import LINKS
from launchers.checkpoints import Checkpoint, CheckpointStore
from launchers.commit_marker import CommitMarker
from launchers.in_progress import saves_in_progress
from launchers.progress_readings import named_step, saved_step
from launchers.publish_files import (
    STAGING,
    changed_since,
    rewritten,
    sha256,
    stage,
    stage_log,
)
from launchers.renamed_last import RenamedLast
from launchers.replaced_sets import ReplacedSets, Verdict
from launchers.settle_words import (
    COMMIT,
    ENV_SETTLE,
    SaveBursts,
    held_back,
    unsettled,
    waited,
)
from launchers.state_logs import appended, grown_since, is_log, judge

log = logging.getLogger("costsched.agent")

KEEP = 3  # checkpoint versions kept in the store
SETTLE = 10.0  # seconds the directory stays unchanged before a set without a marker is taken
_PATIENCE = 120.0  # seconds a set may wait before the wait is said in the status


def settle_seconds(environ: Mapping[str, str] = os.environ) -> float:
    """The settle period the job asks for ($COSTSCHED_CHECKPOINT_SETTLE_SECONDS), else
    SETTLE; a value that is not seconds >= 0 is said in the log and SETTLE used."""
    raw = environ.get(ENV_SETTLE, "").strip()
    if not raw:
        return SETTLE
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not math.isfinite(value) or value < 0:
        log.warning("%s=%r: expected seconds >= 0 (0: no wait); %g s used", ENV_SETTLE, raw,
                    SETTLE)
        return SETTLE
    return value


class Publisher:
    """Publishes the checkpoint directory as a new version when a complete file changed and
    the set is whole (the module's doc). `clock`: monotonic seconds (a test's own)."""

    def __init__(self, store: CheckpointStore, directory: Path, keep: int = KEEP,
                 settle: float = SETTLE, clock: Callable[[], float] = time.monotonic
                 ) -> None:
        self.store, self.directory, self.keep = store, directory, keep
        self.settle, self.clock = settle, clock
        self.staging = directory.parent / STAGING
        self.version: int | None = None  # newest version published or restored
        self.error = ""  # why the last publish failed, or why a set waits long ('' else)
        self.enabled = True  # False: never publishes (a gang's node other than rank 0)
        self._seen: dict[str, tuple[int, int, str]] = {}  # name -> (size, mtime_ns, sha256)
        self._last: Checkpoint | None = None  # the version `version` names
        self.written_ns = 0  # when the newest file new in the last version published was
        self.said_step: int | None = None  # the step its marker holds (None: no step in it)
        self.named_step: int | None = None  # the step its new files are named by (or None)
        self._marked = False  # the job commits its sets with the marker
        self._signature: frozenset | None = None  # the directory at the last look...
        self._still_since = 0.0  # ...unchanged since then (clock)
        self._waiting_since: float | None = None  # a changed set not published since then
        self._waiting_from = ""  # ...its wall-clock time, as the status says it
        self._before: dict[str, tuple[int, int, int]] | None = None  # complete files, and
        self._tidy_before = False  # no temp file, at the last look
        self._in_place = False  # the job was seen changing a complete file between looks
        self._written_in_place = False  # ...under the same inode (not renamed into place)
        self._renamed_in: tuple[str, tuple[int, int, int]] | None = None  # the state file
        self._replaced: str | None = None  # last seen renamed in, and when it still is here
        self._beyond = False  # the job was seen doing what the state-and-logs rule does not
        self._saves_waiting = 0  # looks that found complete files changed, while waiting
        self._links: dict[str, str] = {}  # the links of version `version`
        self._links_before: dict[str, str] | None = None  # the links at the last look
        self._changed_at: dict[str, float] = {}  # a file seen changed between looks: when
        self._log_states: set[str] = set()  # files named like logs seen renamed in
        self._appended: set[str] = set()  # ...and seen appended to (logs: no save)
        self._bursts = SaveBursts(settle)  # saves sooner than the settle time, said in waits
        self._sets = ReplacedSets()  # the replaced-together rule's memory of the looks
        self._renamed_last = RenamedLast()  # the renamed-last rule's (held saves: any)
        self.again_at: float | None = None  # a look then may publish a set (clock), or None
        self._said = ""  # the wait last said in the log
        self._marker = CommitMarker()  # the marker rule's memory of the looks

    def remember_all(self) -> None:
        """Take the files there now as published: version `version`'s (after a restore)."""
        self._last = None
        if self.version is not None:
            self._last = next((c for c in self.store.list() if c.version == self.version),
                              None)
        there = look(self.directory)
        for rel, info in there.complete.items():
            self._seen[rel] = (info.st_size, info.st_mtime_ns, sha256(self.directory / rel))
        self._links = dict(there.links)
        self._reference(there.states)
        self.said_step = saved_step(self.directory / COMMIT) if self.version is not None \
            else None

    def restored_step(self) -> tuple[int | None, bool]:
        """(the step of the version restored, whether it is inferred: read off the time it
        was saved): its marker's (`said_step`), else the one the agent that published it
        kept beside the checkpoints (`launchers.version_steps`), else (None, False); not
        known for a version an older agent published with a save in progress in it (its
        step may have been read off that save's time: `launchers.in_progress`)."""
        if self.said_step is not None or self.version is None:
            return self.said_step, False
        if self._last is not None and saves_in_progress(p.name for p in self._last.parts
                                                        if p.name != LINKS):
            return None, False
        return version_steps.of(self.store.uri, self.version)

    def trouble(self, began: float | None) -> str:
        """What the status says of its publishing: `error`, else of a command that ran since
        `began` with nothing published or restored (`launchers.nothing_published`)."""
        return self.error or nothing_published.note(began, self.version is not None
                                                    or not self.enabled)

    def keep_step(self, step: int | None, inferred: bool) -> None:
        """Keep `step` beside the checkpoints as the step of the version just published, for
        the agent that restores it (`restored_step`)."""
        if step is not None and self.version is not None:
            version_steps.keep(self.store.uri, self.version, step, inferred)

    def based_on(self, checkpoint: Checkpoint) -> None:
        """Take the files of `checkpoint` (in the store) as published already: a file there
        with the same content is named by the next version, not uploaded again."""
        self._last = checkpoint
        for part in checkpoint.parts:
            self._seen[part.name] = (-1, -1, part.sha256)  # size and time never match

    def publish_changed(self, final: bool = False) -> int:
        """When a complete file changed and the set is whole (`final`: the job has exited,
        no settle wait), publish the directory's files as the next version, then prune; 1
        when published, else 0. A publish that fails is tried again once the store is
        pruned to its newest verified version (a full store frees room that way), else at
        the next call; `error` says why until a publish succeeds. Nothing when not
        `enabled` (a gang's node other than rank 0)."""
        if not self.enabled:
            return 0
        try:
            published, waiting = self._publish(final)
        except Exception as exc:  # noqa: BLE001 - a store error must not end the job
            log.error("publishing the checkpoint failed: %s", exc)
            if not self._prune(1):
                self.error = f"publishing the checkpoint failed: {exc}"
                return 0
            try:
                published, waiting = self._publish(final)
            except Exception as again:  # noqa: BLE001
                self.error = f"publishing the checkpoint failed: {again}"
                log.error("%s (after pruning)", self.error)
                return 0
        self.error = waiting
        if published:
            self._prune(self.keep)
        return published

    def _prune(self, keep: int) -> bool:
        try:
            self.store.prune(keep)
            return True
        except Exception as exc:  # noqa: BLE001
            log.error("pruning the checkpoint store failed: %s", exc)
            return False

    def _whole(self, seen: Look, before: dict[str, tuple[int, int, int]] | None,
               final: bool, now: float) -> str:
        """'' when the set `seen` is whole (the module's doc; `before`: the complete files
        at the last look), else what it waits for; the new-names rule is
        `_settled_new_names`'s."""
        marker = seen.complete.get(COMMIT)
        self._marked = self._marked or marker is not None
        if self._marked:
            return self._marker.committed(seen, before, final)
        if final or self.settle <= 0 or self._lone_whole(seen, before):
            return ""
        if now - self._still_since >= self.settle:
            return ""
        grows = [n for n, at in self._changed_at.items()
                 if n in self._logs() and now - at < self.settle]  # each cause seen
        return unsettled(self.settle, grows, self._bursts.quick(now), self._sets.replaced,
                         self._sets.within)

    def _lone_whole(self, seen: Look, before: dict[str, tuple[int, int, int]] | None
                    ) -> bool:
        """A directory of one complete file and nothing else that is whole by itself: the
        last look found it too, renamed in since (another file: launchers.file_identity), as
        it is now, or (a log) appended to; never once the job was seen writing a file in place
        (`_written_in_place`: then the settle rule is its), nor at the first look that finds
        it (it may be half written: as the new-names rule's one look of patience, this
        rests on the looks lying further apart than a save's pauses)."""
        if self._written_in_place or not len(seen.complete) == len(seen.signature) == 1:
            return False
        [name] = seen.complete
        was, is_ = (before or {}).get(name), (self._before or {}).get(name)
        return was is not None and is_ is not None and (
            was == is_ or was[2] != is_[2] or is_log(name) and appended(was, is_))

    def _reference(self, states: dict[str, tuple[int, int, int]]) -> None:
        """The files of the version just published or restored, as a look saw them
        (`Look.states`): the next save's reference."""
        self._sets.published(states)
        self._renamed_last.published(states)

    def _settled_new_names(self, seen: Look, before: dict[str, tuple[int, int, int]] | None,
                           tidy_before: bool, changed: list[str],
                           links_before: dict[str, str] | None
                           ) -> tuple[set[str], set[str]] | None:
        """The new-names rule (the module's doc): (the files here of the version, those
        of it the job has deleted since the last look) when the change only adds files
        under new names (and removes others), moves links, and appends to logs, no temp
        file was there at either look, and no link moved since the last look; else None.
        The version is the directory as the last look found it, the logs as this look
        does: the files that stayed unchanged since, and those deleted since that the last
        version holds as that look found them (the older checkpoint a save kept; one
        added since is the next version's). A file deleted since that no version holds
        was never seen whole: nothing is published at this look."""
        if self._marked or self._in_place or before is None or not tidy_before \
                or not seen.tidy or seen.links != links_before:
            return None
        if any(n in self._seen and not is_log(n) for n in changed):  # published, rewritten
            return None
        unchanged = {n for n, state in seen.states.items() if before.get(n) == state}
        saves = {n for n in unchanged & set(changed) if not is_log(n) or n not in self._seen}
        if not saves and seen.links == self._links:  # only logs grew: no save since
            return None
        held = {p.name: p.sha256 for p in self._last.parts} if self._last else {}
        # a folder the job was deleting at the last look (a file in it that the last
        # version holds gone by then, none left now): left out, never carried half
        torn = {f for n in held if n not in before for f in _folders(n)} \
            - {f for n in seen.complete for f in _folders(n)}
        deleted = {n for n in before if n not in seen.complete
                   and torn.isdisjoint(_folders(n))}
        gone = {n for n in deleted
                if n in held and self._seen.get(n) == (*before[n][:2], held[n])}
        if any(n not in gone and not is_log(n) for n in deleted):
            return None
        return unchanged | {n for n in seen.complete if is_log(n)}, gone

    def _state_and_logs(self, changed: list[str]) -> bool:
        """The state-and-logs rule (the module's doc; launchers.state_logs): the state file,
        changed since the last version, is one a look saw renamed in and unchanged since,
        no temp file was there at this look or the one before, the job was never seen
        doing what the rule does not cover, and every other file is a log by what the looks
        saw, not by its name alone: seen appended to, or the same while the state file was
        renamed in twice (a `step.txt` not renamed yet may be the rest of the save)."""
        others = set(self._before or {}) - {self._replaced}
        return not (self._marked or self._beyond) and self._replaced in changed \
            and others <= self._logs() | self._sets.static

    def _note_changes(self, before: dict[str, tuple[int, int, int]], now: float) -> None:
        """When each file was last seen changed between two looks (what keeps the
        directory from settling, said in its wait), and which files named like logs were
        seen renamed in (state files, `_publish`)."""
        saved = False
        for name in set(before) | set(self._before):
            was, is_ = before.get(name), self._before.get(name)
            if was != is_:
                self._changed_at[name] = now
                saved = saved or not is_log(name)
            if was is not None and is_ is not None and was != is_ and is_log(name):
                (self._appended if appended(was, is_) else self._log_states).add(name)
        self._changed_at = {n: at for n, at in self._changed_at.items()
                            if n in self._before or now - at < self.settle}
        self._bursts.look(now, saved)

    def _logs(self) -> set[str]:
        """The files seen appended to, and never replaced: the logs (`_note_changes`)."""
        return self._appended - self._log_states

    def _waits(self, why: str, now: float, verdict: Verdict, last: Verdict) -> str:
        """What the status says of a set that waits: at once, a save held back by what the
        replaced-together rule cannot prove whole (`launchers.replaced_sets`); a settle wait
        once 3 settle periods passed with the complete files changed again and again (the
        job saves before its directory settles: a single large file still being written is
        not said), a wait for the marker or a slow save after _PATIENCE s (a large set may
        take minutes). Said once in the log, too, as the cause changes."""
        if self._waiting_since is None:
            self._waiting_since, self._saves_waiting = now, 0
            # (the words stay the same while the wait lasts: its watchers say them once)
            self._waiting_from = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        so_far = now - self._waiting_since
        blocker = verdict.blocker if verdict.held else ""
        if not blocker and last.held and verdict.again_at is None is last.again_at:
            # (no look due that may take it)
            blocker = last.blocker
        if blocker and not self._marked:
            grows = [n for n, at in self._changed_at.items()
                     if n in self._logs() and now - at < self.settle]
            why = held_back(self.settle, self._sets.replaced, self._sets.within, blocker,
                            grows)
        else:
            again = not self._marked and self._saves_waiting >= 3
            if so_far < (3 * self.settle if again else _PATIENCE):
                return ""
        if why != self._said:
            self._said = why
            log.warning("checkpoint not published: %s", why)
        return waited(self._waiting_from, why)

    def _publish(self, final: bool) -> tuple[int, str]:
        """(1 when a version was published, else 0; what a set waits for, said in `error`)."""
        now = self.clock()
        seen = look(self.directory)
        if seen.signature != self._signature:
            self._signature, self._still_since = seen.signature, now
        paths = seen.complete
        before, tidy_before = self._before, self._tidy_before
        links_before, self._links_before = self._links_before, dict(seen.links)
        self._before = dict(seen.states)
        self._tidy_before = seen.tidy
        self._note_changes(before or {}, now)
        states = seen.states
        temps = frozenset(e for e in seen.signature
                          if e[0] not in paths and e[0] not in seen.links)
        verdict = self._sets.look(states, self._logs(), temps, seen.signature,
                                  seen.links != self._links, now)
        last = self._renamed_last.look(states, self._logs(), temps, seen.signature,
                                       seen.links != self._links, now)
        self.again_at = None if self._marked else _soonest(verdict.again_at, last.again_at)
        self._in_place = self._in_place or before is not None and any(
            n in before and before[n] != self._before[n]
            and not (is_log(n) and appended(before[n], self._before[n])) for n in paths)
        self._written_in_place = self._written_in_place or before is not None and any(
            n in before and before[n] != self._before[n] and before[n][2] == self._before[n][2]
            and not (is_log(n) and appended(before[n], self._before[n])) for n in paths)
        replaced, beyond = judge(before or {}, self._before)
        self._beyond = self._beyond or beyond
        if replaced is not None:  # the file renamed in, as it was then
            self._renamed_in = (replaced, self._before[replaced])
        self._replaced = None
        if self._renamed_in is not None and tidy_before and self._tidy_before \
                and self._before.get(self._renamed_in[0]) == self._renamed_in[1]:
            self._replaced = self._renamed_in[0]  # that file still: whole, however old
        self._saves_waiting += before != self._before
        changed = [n for n, i in paths.items() if (was := self._seen.get(n)) is None
                   or was[:2] != (i.st_size, i.st_mtime_ns)]
        moved = seen.links != self._links  # a link made, moved or removed since
        if not (changed or moved) or set(paths) == {COMMIT}:  # (a marker alone: first touch)
            self._marked = self._marked or COMMIT in paths
            self._waiting_since = None
            return 0, ""
        why = self._whole(seen, before, final, now)
        logs: set[str] = set()  # logs taken as this look saw them (state-and-logs rule)
        gone: set[str] = set()  # files of the version deleted since (new-names rule)
        if why and self._state_and_logs(changed):
            logs = {n for n in paths if is_log(n)}
        elif why:
            settled = self._settled_new_names(seen, before, tidy_before, changed,
                                              links_before)
            if settled is not None:  # those added since: the next version's
                paths = {n: paths[n] for n in settled[0]}
                gone = settled[1]
                changed = [n for n in changed if n in paths]
                logs = {n for n in paths if is_log(n)}
            elif not ((verdict.whole or last.whole) and not self._marked):
                if not self._marked and self.settle > 0 and not final:  # (looked at then)
                    self.again_at = _soonest(self.again_at, self._still_since + self.settle)
                return 0, self._waits(why, now, verdict, last)
            else:  # replaced together, or renamed last: the logs as this look saw them
                logs = {n for n in paths if n in self._logs()}
        held = {p.name: p for p in self._base_parts()}
        if any(n not in held for n in gone):  # pruned by another publisher meanwhile
            return 0, ""
        staged: dict[str, Path] = {}
        try:
            # hard links pin these versions of the files while the job may rename newer in
            for n in paths:
                if n in changed or n not in held or held[n].sha256 != self._seen[n][2]:
                    staged[n] = (stage_log(self.directory, self.staging, n, paths[n]) if n in logs
                                 else stage(self.directory, self.staging, n))
            if any(not grown_since(self.directory / n, paths[n]) if n in logs
                   else changed_since(self.directory / n, paths[n]) for n in staged) \
                    or checkpoint_links.read_now(self.directory, [*seen.links]) != seen.links:
                self._signature = None  # a file changed as it was staged: not whole yet
                return 0, ""
            if seen.links:  # the links, as the look saw them, one file of the version
                staged[LINKS] = checkpoint_links.write(seen.links, self.staging / LINKS)
            shas: dict[str, tuple[int, int, str]] = {}
            for name, path in staged.items():
                info = path.stat()
                shas[name] = (info.st_size, info.st_mtime_ns, sha256(path))
            said = saved_step(self.staging / COMMIT if COMMIT in staged
                              else self.directory / COMMIT) if COMMIT in paths else None
            if any(rewritten(path, paths[name]) for name, path in staged.items()
                   if name != LINKS):
                self._signature = None  # written again in place as it was read: not whole
                return 0, ""
            links_held = (shas[LINKS][2] if LINKS in staged else "") == (
                held[LINKS].sha256 if LINKS in held else "")  # the links the version held
            if links_held and all(shas[n][2] == self._seen.get(n, (0, 0, ""))[2]
                                  for n in changed):
                self._seen.update((n, shas[n]) for n in changed)  # touched, same content
                self._reference({n: seen.states[n] for n in paths})
                self._waiting_since = None
                return 0, ""
            # a file whose bytes the version it builds on holds is named, not uploaded
            new = {n: path for n, path in staged.items()
                   if n not in held or held[n].sha256 != shas[n][2]}
            carried = [held[n] for n in [*paths, *gone, *({LINKS} & set(staged))]
                       if n not in new and n in held]
            checkpoint = self.store.publish_files(new, carried)
        finally:
            shutil.rmtree(self.staging, ignore_errors=True)
        stored = {p.name: p.sha256 for p in checkpoint.parts}
        self._links = dict(seen.links)
        for name in set(staged) - {LINKS}:
            if stored.get(name) == shas[name][2]:
                self._seen[name] = shas[name]
            else:
                log.error("%s changed while checkpoint version %d was published: "
                          "published again next", name, checkpoint.version)
        self._last = checkpoint
        self.version = checkpoint.version
        self._reference({n: seen.states[n] for n in paths})
        self._said, self.again_at = "", None
        # The version's step is its state's: the newest of its new files that are not logs
        # (a log grows after a save) nor links. One whose only new bytes are logs' or links'
        # holds the state of the one before: its time and name kept (none in this run: the
        # step the run started from). Where every file is named like a log, those never
        # seen appended to (`step.txt`, written once), or seen renamed in, are its state;
        # logs seen appended to alone hold no save: the step the run started from (0 for a
        # run that restored none), never the time a log was written at.
        state = [n for n in paths if not is_log(n) or n in self._log_states
                 or n not in self._appended]
        saved = [n for n in new if n != LINKS and not is_log(n)]
        if not saved and state and all(is_log(n) for n in paths):
            saved = [n for n in new if n in state]
        if saved:
            self.written_ns = max(shas[name][1] for name in saved)
            self.named_step = named_step(saved)
        elif not state:
            self.written_ns, self.named_step = 0, None
        self.said_step = said
        self._waiting_since = None
        log.info("published checkpoint version %d: %s (%d bytes, %d new)",
                 checkpoint.version, checkpoint.describe(), checkpoint.size, len(new))
        return 1, ""

    def _base_parts(self) -> tuple[Checkpoint, ...]:
        """The files of the version this one builds on, while the store still lists it (a
        second publisher, as during a move's overlap, may have pruned it: then every file
        is uploaded again rather than named where its bytes may be gone)."""
        if self._last is None:
            return ()
        if all(c.version != self._last.version for c in self.store.list()):
            log.info("checkpoint version %d is no longer in the store: every file is "
                     "published again", self._last.version)
            self._last = None
            return ()
        return self._last.parts


def _folders(name: str) -> list[str]:
    """The folders a file below the checkpoint directory lies in (`a/b/c.npy`: `a`, `a/b`)."""
    parts = name.split("/")[:-1]
    return ["/".join(parts[:end]) for end in range(1, len(parts) + 1)]


def _soonest(*times: float | None) -> float | None:
    return min((t for t in times if t is not None), default=None)  # (None: none given)
