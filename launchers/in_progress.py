"""Which paths in a job's checkpoint directory are a write in progress: the one rule that
the publisher (what a version holds), its rules for a whole set (a temporary file there
holds a save back) and a restore (what it brings back, what it clears) read.

A path is in progress where a part of it (a folder or the file) is named as a save under
way is, by a job or by the checkpointing library it uses, before the rename that commits
it:
- a part starting with `.` (hidden: a fetch in progress, `.metadata.tmp`, a hidden file),
  but for the files a checkpointing library commits under such a name (`COMMITTED`):
  PyTorch distributed checkpoint (DCP) writes a save's `__<rank>_<n>.distcp` files, then
  `.metadata` as `.metadata.tmp` renamed to `.metadata` (the rename is its commit, and
  `dcp.load` reads it first); TensorStore's zarr arrays in an Orbax checkpoint written
  without OCDBT hold their metadata in `.zarray` (with `.zattrs`, `.zgroup`, `.zmetadata`);
- a part containing `.tmp` (`ckpt-000650.npz.tmp`, `weights.tmp.npz`, `last.ckpt.tmp`, a
  folder `ckpt.tmp/`, a link made as `latest.tmp-link`);
- a part containing `-tmp-` or ending in `-tmp`: Orbax's CheckpointManager writes a step
  as `600.orbax-checkpoint-tmp-<n>/` (older versions: `600.orbax-checkpoint-tmp/`, and
  each item as `params.orbax-checkpoint-tmp-<n>/` inside it) and renames it to `600/`;
- a part starting with `tmp-`: Hugging Face Transformers' Trainer (some versions) stages a
  save as `tmp-checkpoint-600/` and renames it to `checkpoint-600/`;
- a part ending in `_temp`: TensorFlow's checkpoint saver writes `ckpt-3` as shards in
  `ckpt-3_temp/` (`part-00000-of-00001.index`, `.data-*`), then merges them into
  `ckpt-3.index` and `ckpt-3.data-*` and deletes the folder.
Such a path is never part of a version, and a temporary file there keeps a save from being
taken whole. A committed name is part of its save: published, restored and kept.

A DCP save is committed by its `.metadata` alone: it writes its `.distcp` files in place
under their final names, so a folder holding them and no `.metadata` is a save under way
(or one cut short), every file in it (`uncommitted`), whatever its name."""

from __future__ import annotations

from collections.abc import Iterable

DCP_METADATA = ".metadata"  # what commits a DCP save: written last, in its folder
DCP_DATA = ".distcp"  # the suffix of a DCP save's data files (`__<rank>_<n>.distcp`)
# Files a checkpointing library commits under a name starting with `.`: part of a save,
# never a write in progress (their temporary names, `.metadata.tmp`, still are).
COMMITTED = frozenset({
    DCP_METADATA,  # torch.distributed.checkpoint: renamed from .metadata.tmp
    ".zarray", ".zattrs", ".zgroup", ".zmetadata",  # zarr v2 (Orbax without OCDBT)
})


def temporary(part: str) -> bool:
    """Whether one name (a folder's or a file's) is that of a save under way."""
    return _hidden(part) or ".tmp" in part or "-tmp-" in part \
        or part.endswith("-tmp") or part.startswith("tmp-") or part.endswith("_temp")


def in_progress(rel: str) -> bool:
    """Whether `rel` (a path below the checkpoint directory, '/'-separated) is a write in
    progress: a part of it is `temporary`."""
    return any(temporary(part) for part in rel.split("/"))


def hidden(rel: str) -> bool:
    """Whether a part of `rel` starts with `.` and is not a `COMMITTED` name: never the
    job's checkpoint, nor a save of its checkpointing library that a restore should clear
    (a fetch in progress is one; `.metadata.tmp` left by a save cut short is the job's own
    library's to overwrite)."""
    return any(_hidden(part) for part in rel.split("/"))


def _hidden(part: str) -> bool:
    return part.startswith(".") and part not in COMMITTED


def uncommitted(paths: Iterable[str]) -> set[str]:
    """The paths of `paths` (files below the checkpoint directory, '/'-separated) in a DCP
    save not committed: a folder that holds a `.distcp` file and no `.metadata`."""
    paths = list(paths)
    data = {_folder(p) for p in paths if p.endswith(DCP_DATA)}
    data -= {_folder(p) for p in paths if p.rsplit("/", 1)[-1] == DCP_METADATA}
    return {p for p in paths if _folder(p) in data} if data else set()


def saves_in_progress(paths: Iterable[str]) -> set[str]:
    """The paths of `paths` that are a save in progress: `in_progress`, or `uncommitted`."""
    paths = list(paths)
    return {p for p in paths if in_progress(p)} | uncommitted(paths)


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""
