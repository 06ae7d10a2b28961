"""What must never be packed with a job's code without the user saying so: a home folder or
a system folder as the workdir, and credential files inside it.

    check_folder(Path("~").expanduser())   # InvalidInput: it is a home folder
    found = credentials(workdir, ["train.py", ".aws/credentials", ".env"])
    # [(".aws/credentials", "cloud credentials"), (".env", "environment secrets")]

Credential files are found by name (cloud SDKs' credential files, SSH and other private
keys, `.netrc`, `.env` files, package and container registry logins) and by content (a
PEM private key: a file that begins, within its first 64 KB, a "-----BEGIN ... PRIVATE
KEY-----" block; a cloud service account key). A file named, by its exact path, in the
workdir's ALLOW_FILE is packed all the same: the user chose to send it.
"""

from __future__ import annotations

import os
import pwd
import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from costsched.model import InvalidInput

ALLOW_FILE = ".costschedallow"  # at the workdir's top: credential files to pack anyway
_HEAD = 64 << 10  # bytes of each file read to recognise a key by its content
# Folders whose every file is someone's credentials or keys.
_SECRET_DIRS = {".ssh": "SSH keys", ".aws": "cloud credentials", ".azure": "cloud credentials",
                ".gnupg": "GPG keys", ".config/gcloud": "cloud credentials",
                ".docker": "registry logins", ".kube": "cluster credentials"}
_SECRET_NAMES = {
    "credentials": None,  # only under a cloud SDK's folder (matched by _SECRET_DIRS)
    ".netrc": "login passwords", "_netrc": "login passwords", ".pgpass": "database passwords",
    ".git-credentials": "git passwords", ".pypirc": "package index passwords",
    ".npmrc": "package registry tokens", ".boto": "cloud credentials",
    ".s3cfg": "cloud credentials", "application_default_credentials.json": "cloud credentials",
    "credentials.db": "cloud credentials", "access_tokens.db": "cloud credentials",
    "accessTokens.json": "cloud credentials", "msal_token_cache.json": "cloud credentials",
    "terraform.tfstate": "infrastructure secrets",
}
_KEY_NAME = re.compile(r"^(id_(rsa|dsa|ecdsa|ed25519)(_sk)?|.*\.(ppk|p12|pfx|jks|keystore))$")
_ENV_NAME = re.compile(r"^\.env(\..+)?$")
_ENV_EXAMPLES = re.compile(r"\.(example|sample|template|dist|defaults?)$")
_PEM_KEY = re.compile(rb"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----")
_SERVICE_ACCOUNT = re.compile(rb'"type"\s*:\s*"service_account"')
# Folders that are never one project's: the file system's root and its system folders,
# and every home folder (the user's own, and those of the accounts on this machine).
_SYSTEM = ("/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64",
           "/media", "/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/snap", "/srv",
           "/sys", "/tmp", "/usr", "/usr/local", "/var", "/var/tmp", "/Users", "/Volumes",
           "/System", "/Library", "/Applications", "/private", "/private/tmp",
           "/private/var")
_NEVER_UNDER = ("/proc", "/sys", "/dev")  # kernel views: no project lives in them


def check_folder(workdir: Path) -> None:
    """InvalidInput in one line when `workdir` (resolved) is a home folder, the root, a
    system folder, a folder holding a home folder, or a kernel view (/proc, /sys, /dev)."""
    where = str(workdir)
    homes = _homes()
    why = ""
    if where in homes:
        why = "is a home folder"
    elif where in _SYSTEM or where in {_real(s) for s in _SYSTEM}:
        why = "is a system folder" if where != "/" else "is the root of the file system"
    elif any(_under(where, k) or where == k for k in _NEVER_UNDER):
        why = "is a view of the kernel's, not files"
    elif any(_under(home, where) for home in homes):
        why = "holds home folders"
    if why:
        raise InvalidInput(f"workdir {where}: {why}; packing it would send everything in it "
                           "(credentials and keys included) with the job: point workdir at "
                           "the project's own folder")


def _homes() -> set[str]:
    found = set()
    for home in (os.environ.get("HOME", ""), str(Path.home())):
        if home:
            found.add(_real(home))
    try:
        entries = pwd.getpwall()
    except OSError:
        entries = []
    for entry in entries:
        home = entry.pw_dir
        # system accounts have / or /nonexistent: only real folders under a home root count
        if home and home not in ("/", "/nonexistent") and os.path.isdir(home):
            found.add(_real(home))
    return found


def _real(path: str) -> str:
    return os.path.realpath(path)


def _under(path: str, folder: str) -> bool:
    return path != folder and path.startswith(folder.rstrip("/") + "/")


def allowed(workdir: Path) -> set[str]:
    """The exact paths the workdir's ALLOW_FILE names (relative, '/'-separated; '#'
    comments and blank lines ignored)."""
    path = workdir / ALLOW_FILE
    try:
        if not path.is_file() or path.is_symlink():
            return set()
        text = path.read_text(errors="replace")
    except OSError:
        return set()
    names = set()
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            names.add(str(PurePosixPath(line.lstrip("/"))))
    return names


def credentials(workdir: Path, names: Iterable[str]) -> list[tuple[str, str]]:
    """The files of `names` (relative to `workdir`, as packed) that hold credentials or
    keys, with what they are, less those ALLOW_FILE names; in the order of `names`."""
    allow = allowed(workdir)
    found = []
    for rel in names:
        if rel in allow:
            continue
        why = kind_by_name(rel) or _kind_by_content(workdir / rel)
        if why:
            found.append((rel, why))
    return found


def kind_by_name(rel: str) -> str:
    """What a file holds judging by its path ('' when nothing secret)."""
    path = PurePosixPath(rel)
    name = path.name
    for folder, why in _SECRET_DIRS.items():
        parts = PurePosixPath(folder).parts
        for k in range(len(path.parts) - len(parts)):
            if path.parts[k:k + len(parts)] == parts:
                return why
    if _SECRET_NAMES.get(name):
        return str(_SECRET_NAMES[name])
    if _KEY_NAME.match(name) and not name.endswith(".pub"):
        return "a private key"
    if _ENV_NAME.match(name) and not _ENV_EXAMPLES.search(name):
        return "environment secrets"
    return ""


def _kind_by_content(path: Path) -> str:
    try:
        if path.is_symlink() or not path.is_file():
            return ""
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            head = handle.read(_HEAD)
    except OSError:
        return ""  # what cannot be read is said by the packing, naming the file
    if _PEM_KEY.search(head):
        return "a private key"
    if _SERVICE_ACCOUNT.search(head) and b'"private_key"' in head:
        return "a service account key"
    return ""


def describe(found: list[tuple[str, str]], limit: int = 4) -> str:
    """'a (what), b (what) and 3 more'."""
    shown = ", ".join(f"{rel} ({why})" for rel, why in found[:limit])
    more = len(found) - limit
    return shown + (f" and {more} more" if more > 0 else "")
