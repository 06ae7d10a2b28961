"""Symbolic links in a job's checkpoint directory (`latest` -> `ckpt-000450.pkl`, the job's
pointer to the save it resumes from): a link whose target is relative and stays inside the
directory (read as written, never followed) is kept with each version, as a link, and
restored as a link; any other (absolute, or leading above the directory: a dataset, a
folder elsewhere) is left out, said once in the agent's log.

A version holds its links as one file, LINKS ({"checkpoints/latest": "ckpt-000450.pkl"}),
beside the job's files: a hidden name, which the publisher never takes for the job's, and
which a restore reads, removes and turns back into links.
"""

from __future__ import annotations

import json
import logging
import os
import posixpath
from pathlib import Path

from costsched.model import InvalidInput
from launchers.checkpoints.layout import check_name

log = logging.getLogger("costsched.agent")

LINKS = ".costsched-links.json"  # a version's links, {path: target}


def kept(rel: str, target: str) -> bool:
    """Whether a link at `rel` (its path below the directory) to `target` is kept: a
    relative target that, joined to the link's folder, stays inside the directory."""
    if not target or posixpath.isabs(target) or "\x00" in target:
        return False
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
    return joined not in (".", "..") and not joined.startswith("../")


def write(links: dict[str, str], path: Path) -> Path:
    """`links` as the file a version holds them in (the same links: the same bytes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(dict(sorted(links.items())), sort_keys=True))
    return path


def read_now(directory: Path, names: list[str]) -> dict[str, str]:
    """The targets the links `names` have now (a link gone or made a file: left out)."""
    found = {}
    for name in names:
        try:
            found[name] = os.readlink(directory / name)
        except OSError:
            continue
    return found


def restore(dest: Path) -> dict[str, str]:
    """The links a restored version holds (its LINKS file in `dest`, removed), made again
    in `dest`, each in place of what is there under its name; a link that is not one to
    keep (`kept`: a store's data is not trusted) is said and left out."""
    path = dest / LINKS
    if not path.is_file():
        return {}
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        log.warning("checkpoint links: not read (%s): none restored", exc)
        doc = {}
    path.unlink(missing_ok=True)
    made = {}
    for rel, target in (doc.items() if isinstance(doc, dict) else []):
        try:
            check_name(rel)
        except InvalidInput:
            log.warning("checkpoint link %r: not a path below the directory: left out", rel)
            continue
        if not isinstance(target, str) or not kept(rel, target):
            log.warning("checkpoint link %s -> %r leads outside the directory: left out",
                        rel, target)
            continue
        there = dest / rel
        there.parent.mkdir(parents=True, exist_ok=True)
        if there.is_symlink() or there.is_file():
            there.unlink()
        elif there.is_dir():
            log.warning("checkpoint link %s: a folder is there: left out", rel)
            continue
        os.symlink(target, there)
        made[rel] = target
    return made
