"""Which paths in a job's checkpoint directory are a write in progress: the one rule that
the publisher (what a version holds), its rules for a whole set (a temporary file there
holds a save back) and a restore (what it brings back, what it clears) read.

A path is in progress where a part of it (a folder or the file) is named as a save under
way is, by a job or by the checkpointing library it uses, before the rename that commits
it:
- a part starting with `.` (hidden: a fetch in progress, `.metadata.tmp`, a hidden file);
- a part containing `.tmp` (`ckpt-000650.npz.tmp`, `weights.tmp.npz`, `last.ckpt.tmp`, a
  folder `ckpt.tmp/`, a link made as `latest.tmp-link`);
- a part containing `-tmp-` or ending in `-tmp`: Orbax's CheckpointManager writes a step
  as `600.orbax-checkpoint-tmp-<n>/` (older versions: `600.orbax-checkpoint-tmp/`, and
  each item as `params.orbax-checkpoint-tmp-<n>/` inside it) and renames it to `600/`;
- a part starting with `tmp-`: Hugging Face Transformers' Trainer (some versions) stages a
  save as `tmp-checkpoint-600/` and renames it to `checkpoint-600/`.
Such a path is never part of a version, and a temporary file there keeps a save from being
taken whole."""

from __future__ import annotations


def temporary(part: str) -> bool:
    """Whether one name (a folder's or a file's) is that of a save under way."""
    return part.startswith(".") or ".tmp" in part or "-tmp-" in part \
        or part.endswith("-tmp") or part.startswith("tmp-")


def in_progress(rel: str) -> bool:
    """Whether `rel` (a path below the checkpoint directory, '/'-separated) is a write in
    progress: a part of it is `temporary`."""
    return any(temporary(part) for part in rel.split("/"))


def hidden(rel: str) -> bool:
    """Whether a part of `rel` starts with `.`: never the job's checkpoint, nor a save of
    its checkpointing library that a restore should clear (a fetch in progress is one)."""
    return any(part.startswith(".") for part in rel.split("/"))
