"""Removing what a supervisor killed without its end (kill -9, a crash, the out-of-memory
killer) left of its secrets' handoff: its private folder in the temporary directory (with
the socket in it) and its advert beside the log (`handoff`).

Only what is certainly a dead supervisor's of this user is removed: an advert beside this
log (`<log>.<pid>.handoff`) whose pid no longer runs; the folder it names only when it is
one of ours (in the temporary directory, named with our prefix, a real folder and not a
link, owned by this user). Anything else is left as it is.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

from costsched.store.leases import process_gone

FOLDER_PREFIX = "costsched-supervisor-"  # each supervisor's private folder, in the tmp dir
ADVERT_SUFFIX = ".handoff"


def sweep_dead(log: str) -> list[Path]:
    """Remove the adverts beside `log` of supervisors no longer running, and their folders
    where they are ours (see the module's doc): what was removed."""
    where = Path(log)
    try:
        names = [p for p in where.parent.iterdir()
                 if p.name.startswith(f"{where.name}.") and p.name.endswith(ADVERT_SUFFIX)]
    except OSError:
        return []
    removed: list[Path] = []
    for advert in names:
        pid = advert.name[len(where.name) + 1:-len(ADVERT_SUFFIX)]
        if not pid.isdigit() or int(pid) == os.getpid() or not process_gone(int(pid)):
            continue
        folder = _named_folder(advert, int(pid))
        if folder is not None and ours(folder):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
        try:
            advert.unlink()
            removed.append(advert)
        except OSError:
            pass
    return removed


def ours(folder: Path) -> bool:
    """Whether `folder` is a supervisor's private folder of this user: directly in the
    temporary directory, named with our prefix, a folder (not a link to one), its owner
    this user."""
    if folder.parent != Path(tempfile.gettempdir()) or not folder.name.startswith(
            FOLDER_PREFIX):
        return False
    try:
        info = folder.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()


def _named_folder(advert: Path, pid: int) -> Path | None:
    """The folder of the socket the advert names, where it is the advert of `pid`."""
    try:
        said = json.loads(advert.read_text())
    except (OSError, ValueError):
        return None
    socket = said.get("socket") if isinstance(said, dict) and said.get("pid") == pid else None
    if not isinstance(socket, str) or not socket:
        return None
    path = Path(socket)
    return path.parent if path.is_absolute() and ".." not in path.parts else None
