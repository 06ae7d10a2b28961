"""A job's code: its workdir packed once at launch, stored beside its checkpoints, and
unpacked by the agent on every instance that runs the job.

    packed = pack(Path("~/proj"), cache_dir, limit_bytes=100 << 20)   # Packed(sha256, ...)
    uri = publish(packed, "s3://bucket/jobs/job-7")    # .../job-7/code/<sha256>.tar.gz
    fetch(uri, packed.sha256, packed.size, Path("/tmp/code.tar.gz"))  # verified download
    unpack(Path("/tmp/code.tar.gz"), Path("work/code"))               # checked, then extracted

Which files: in a git work tree, those git would commit (`git ls-files -co
--exclude-standard`: tracked and untracked, `.gitignore` honoured); elsewhere every file
but those the `.gitignore` files exclude. Either way `.costschedignore` at the workdir's
top excludes more, in `.gitignore` syntax. The archive is deterministic (sorted names, no
times, owners or modes but the executable bit), so the same code gets the same SHA-256.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import shutil
import stat
import subprocess
import tarfile
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from costsched.model import InvalidInput
from launchers.checkpoints import CheckpointStore, open_store

IGNORE_FILE = ".costschedignore"
DEFAULT_LIMIT_MB = 100
CODE_DIR = "code"  # beside the checkpoint versions: <checkpoint uri>/code/<sha256>.tar.gz
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Packed:
    path: Path  # the archive, <sha256>.tar.gz
    sha256: str
    size: int  # bytes of the archive
    files: int
    content_bytes: int  # bytes of the files packed

    @property
    def name(self) -> str:
        return f"{self.sha256}.tar.gz"


class CorruptArchive(RuntimeError):
    """A code archive that does not match what the job was launched with, or that would
    write outside its directory; str() says which and how."""


# --- which files ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Rule:
    base: str  # the ignore file's directory, relative to the workdir ('' for the top)
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool
    anchored: bool  # matched against the path from `base`, not the last component


def parse_ignore(text: str, base: str = "") -> list[_Rule]:
    """The rules of an ignore file in `.gitignore` syntax: comments, blank lines, `!`
    negation, a trailing `/` for directories, a leading or inner `/` anchoring the pattern
    to the file's directory, `*`, `?`, `[...]` and `**`."""
    rules = []
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        if not line.strip() or line.startswith("#"):
            continue
        if not line.endswith("\\ "):
            line = line.rstrip(" ")
        negate = line.startswith("!")
        if negate or line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        rules.append(_Rule(base, re.compile(_glob_regex(line)), negate, dir_only, anchored))
    return rules


def _glob_regex(pattern: str) -> str:
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == n:
            out.append("/.*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("!", "^") else i + 1)
            if end < 0:
                out.append(re.escape(c))
                i += 1
                continue
            body = pattern[i + 1:end]
            if body[:1] in ("!", "^"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "^" + "".join(out) + "$"


def ignored(rules: Iterable[_Rule], path: str, is_dir: bool) -> bool:
    """Whether `path` (relative to the workdir, '/'-separated) is excluded: the last rule
    that matches decides."""
    verdict = False
    for rule in rules:
        if rule.dir_only and not is_dir:
            continue
        if rule.base:
            if not path.startswith(rule.base + "/"):
                continue
            rel = path[len(rule.base) + 1:]
        else:
            rel = path
        subject = rel if rule.anchored else rel.rsplit("/", 1)[-1]
        if rule.regex.match(subject):
            verdict = not rule.negate
    return verdict


def _read_rules(path: Path, base: str) -> list[_Rule]:
    try:
        return parse_ignore(path.read_text(errors="replace"), base)
    except FileNotFoundError:
        return []


def list_files(workdir: Path) -> list[str]:
    """The workdir's files to pack, relative '/'-separated paths, sorted."""
    extra = _read_rules(workdir / IGNORE_FILE, "")
    listed = _git_files(workdir)
    if listed is None:
        return sorted(_walk(workdir, extra))
    out = []
    for rel in listed:
        parts = rel.split("/")
        # a directory excluded by .costschedignore excludes what is under it
        if any(ignored(extra, "/".join(parts[:k]), True) for k in range(1, len(parts))):
            continue
        path = workdir / rel
        if not path.is_symlink() and not path.is_file():
            continue  # deleted but still tracked, or a submodule's directory
        if not ignored(extra, rel, False):
            out.append(rel)
    return sorted(out)


def _git_files(workdir: Path) -> list[str] | None:
    """`git ls-files -co --exclude-standard` from the workdir; None outside a work tree
    (or without git)."""
    try:
        inside = subprocess.run(["git", "rev-parse", "--is-inside-work-tree"], cwd=workdir,
                                capture_output=True, text=True, check=False)
        if inside.returncode != 0 or inside.stdout.strip() != "true":
            return None
        listed = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"],
                                cwd=workdir, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    names = {n.decode("utf-8", "surrogateescape") for n in listed.stdout.split(b"\0") if n}
    return sorted(names)


def _walk(workdir: Path, extra: list[_Rule]) -> list[str]:
    out: list[str] = []
    rules = [*extra]

    def visit(folder: Path, rel: str, rules: list[_Rule]) -> None:
        here = _read_rules(folder / ".gitignore", rel)
        # .costschedignore is applied last, so that it can exclude what .gitignore keeps
        scoped = [r for r in rules if r not in extra] + here + extra
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            path = f"{rel}/{entry.name}" if rel else entry.name
            is_dir = entry.is_dir(follow_symlinks=False)
            if entry.name == ".git" or ignored(scoped, path, is_dir):
                continue
            if is_dir:
                visit(Path(entry.path), path, scoped)
            else:
                out.append(path)

    visit(workdir, "", rules)
    return out


# --- packing --------------------------------------------------------------------------


def pack(workdir: Path, dest_dir: Path, limit_bytes: int = DEFAULT_LIMIT_MB << 20) -> Packed:
    """The workdir as a deterministic tar.gz in dest_dir named by its SHA-256. InvalidInput
    in one line when it is not a directory, when a link points out of it, or when its files
    come to more than `limit_bytes` (naming the largest entries and the ignore file)."""
    workdir = Path(workdir).expanduser()
    if not workdir.is_dir():
        raise InvalidInput(f"workdir {workdir}: not a directory")
    workdir = workdir.resolve()
    names = list_files(workdir)
    sizes = {}
    for rel in names:
        path = workdir / rel
        if path.is_symlink():
            _check_link(workdir, rel)
            sizes[rel] = 0
        else:
            sizes[rel] = path.stat().st_size
    total = sum(sizes.values())
    if total > limit_bytes:
        raise InvalidInput(_too_big(workdir, sizes, total, limit_bytes))
    dest_dir.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=dest_dir, prefix=".packing-", suffix=".tar.gz")
    try:
        with os.fdopen(handle, "wb") as raw:
            digest = _HashingWriter(raw)
            with gzip.GzipFile(filename="", mode="wb", fileobj=digest, mtime=0) as zipped, \
                    tarfile.open(fileobj=zipped, mode="w", format=tarfile.GNU_FORMAT) as tar:
                for rel in names:
                    _add(tar, workdir, rel)
            raw.flush()
            os.fsync(raw.fileno())
        sha = digest.sha.hexdigest()
        final = dest_dir / f"{sha}.tar.gz"
        os.replace(temp, final)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return Packed(final, sha, digest.size, len(names), total)


def _check_link(workdir: Path, rel: str) -> None:
    target = os.readlink(workdir / rel)
    resolved = (workdir / rel).parent / target
    if os.path.isabs(target) or not _inside(workdir, resolved):
        raise InvalidInput(f"workdir {workdir}: link {rel} points outside it (to {target}); "
                           f"add it to {workdir / IGNORE_FILE} or copy what it points to")


def _inside(root: Path, path: Path) -> bool:
    normal = Path(os.path.normpath(path))
    return normal == root or root in normal.parents


def _too_big(workdir: Path, sizes: dict[str, int], total: int, limit: int) -> str:
    top: dict[str, int] = {}
    for rel, size in sizes.items():
        head, sep, _ = rel.partition("/")
        key = head + ("/" if sep else "")
        top[key] = top.get(key, 0) + size
    largest = sorted(top.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    named = ", ".join(f"{name} ({_mb(size)})" for name, size in largest)
    return (f"workdir {workdir}: {_mb(total)} to pack, above the limit of {_mb(limit)} "
            f"(config launch.max_code_mb); largest: {named}; exclude data and outputs in "
            f"{workdir / IGNORE_FILE} (.gitignore syntax)")


def _mb(size: int) -> str:
    return f"{size / (1 << 20):,.1f} MB"


def _add(tar: tarfile.TarFile, workdir: Path, rel: str) -> None:
    path = workdir / rel
    info = tarfile.TarInfo(rel)
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if path.is_symlink():
        info.type = tarfile.SYMTYPE
        info.linkname = os.readlink(path)
        info.mode = 0o777
        tar.addfile(info)
        return
    mode = path.stat().st_mode
    info.mode = 0o755 if mode & stat.S_IXUSR else 0o644
    with path.open("rb") as handle:
        info.size = os.fstat(handle.fileno()).st_size
        tar.addfile(info, handle)


class _HashingWriter(io.RawIOBase):
    """A file object that hashes and counts what is written through it."""

    def __init__(self, raw: io.BufferedWriter) -> None:
        self.raw, self.sha, self.size = raw, hashlib.sha256(), 0

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self.raw.write(data)
        self.sha.update(data)
        self.size += len(data)
        return len(data)


# --- storing and fetching -------------------------------------------------------------


def archive_uri(checkpoint_uri: str, sha256: str) -> str:
    """Where a job's code archive is kept: beside its checkpoints."""
    return f"{checkpoint_uri.rstrip('/')}/{CODE_DIR}/{sha256}.tar.gz"


def publish(packed: Packed, checkpoint_uri: str) -> str:
    """Store the archive beside the job's checkpoints (once: the same code is the same
    object); its URI."""
    folder, name = _split(archive_uri(checkpoint_uri, packed.sha256))
    store = open_store(folder)
    kind = _kind(store)
    if kind == "s3":
        with packed.path.open("rb") as body:
            store.client.put_object(Bucket=store.bucket, Key=store._key(name), Body=body,
                                    ContentLength=packed.size,
                                    ContentType="application/gzip",
                                    ChecksumAlgorithm="SHA256",
                                    ChecksumSHA256=_b64(bytes.fromhex(packed.sha256)))
    elif kind == "gcs":
        store.bucket.blob(store._key(name)).upload_from_filename(
            str(packed.path), content_type="application/gzip", checksum="md5")
    else:
        root = Path(store.root)
        root.mkdir(parents=True, exist_ok=True)
        if not (root / name).is_file():
            temp = root / f".{name}.tmp"
            shutil.copyfile(packed.path, temp)
            os.replace(temp, root / name)
    return archive_uri(checkpoint_uri, packed.sha256)


def fetch(uri: str, sha256: str, size: int, dest: Path) -> Path:
    """Download the archive at `uri` to `dest`, checking its size and SHA-256
    (CorruptArchive when they differ: nothing is left at `dest`)."""
    if not _SHA256.match(sha256 or ""):
        raise CorruptArchive(f"code archive {uri}: expected SHA-256 {sha256!r} is not one")
    folder, name = _split(uri)
    store = open_store(folder)
    kind = _kind(store)
    temp = dest.with_name(dest.name + ".partial")
    try:
        with temp.open("wb") as out:
            if kind == "s3":
                body = store.client.get_object(Bucket=store.bucket, Key=store._key(name))["Body"]
                for chunk in body.iter_chunks(_CHUNK):
                    out.write(chunk)
            elif kind == "gcs":
                store.bucket.blob(store._key(name)).download_to_file(out)
            else:
                with (Path(store.root) / name).open("rb") as source:
                    shutil.copyfileobj(source, out, _CHUNK)
        problem = _mismatch(temp, sha256, size)
        if problem:
            raise CorruptArchive(f"code archive {uri}: {problem}")
        os.replace(temp, dest)
    finally:
        temp.unlink(missing_ok=True)
    return dest


def _mismatch(path: Path, sha256: str, size: int) -> str:
    actual = path.stat().st_size
    if actual != size:
        return f"{actual} bytes, expected {size}"
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    if digest.hexdigest() != sha256:
        return f"SHA-256 {digest.hexdigest()}, expected {sha256}"
    return ""


def _kind(store: CheckpointStore) -> str:
    """'s3', 'gcs' or 'local': the archive is one object put and got with the store's own
    client (its bucket and key prefix), or one file in its directory."""
    from launchers.checkpoints.gcs import GcsStore
    from launchers.checkpoints.local import LocalStore
    from launchers.checkpoints.s3 import S3Store

    kinds = {S3Store: "s3", GcsStore: "gcs", LocalStore: "local"}
    for cls, kind in kinds.items():
        if isinstance(store, cls):
            return kind
    raise InvalidInput(f"code archive: no way to store it in {store.uri}")


def _split(uri: str) -> tuple[str, str]:
    folder, _, name = uri.rstrip("/").rpartition("/")
    if not folder or not name.endswith(".tar.gz"):
        raise InvalidInput(f"code archive {uri!r}: expected <checkpoint location>/"
                           f"{CODE_DIR}/<sha256>.tar.gz")
    return folder, name


def _b64(digest: bytes) -> str:
    import base64

    return base64.b64encode(digest).decode()


# --- unpacking ------------------------------------------------------------------------


def unpack(archive: Path, dest: Path, sha256: str | None = None, size: int | None = None
           ) -> int:
    """Extract a verified archive into `dest` (created; must not exist yet), after checking
    every entry: regular files, directories and links within `dest` only (no absolute
    names, no '..', no device, FIFO or hard link, no link leading out). The number of
    files. CorruptArchive names the first entry refused; nothing is left at `dest`."""
    if sha256 is not None and size is not None:
        problem = _mismatch(archive, sha256, size)
        if problem:
            raise CorruptArchive(f"code archive {archive}: {problem}")
    dest = Path(dest)
    staging = Path(tempfile.mkdtemp(prefix=".unpacking-", dir=dest.parent))
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            members = tar.getmembers()
            links = {m.name.rstrip("/") for m in members if m.issym()}
            for member in members:
                _check_member(member, archive)
                parents = PurePosixPath(member.name).parents
                if any(str(parent) in links for parent in parents):
                    raise CorruptArchive(f"code archive {archive}: entry {member.name!r}: "
                                         "under a link (only plain directories may hold "
                                         "entries)")
            count = 0
            for member in members:
                target = staging / member.name
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                if member.issym():
                    os.symlink(member.linkname, target)
                    continue
                source = tar.extractfile(member)
                assert source is not None  # a regular file, checked above
                with source, target.open("wb") as out:
                    shutil.copyfileobj(source, out, _CHUNK)
                target.chmod(0o755 if member.mode & stat.S_IXUSR else 0o644)
                count += 1
        os.rename(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return count


def _check_member(member: tarfile.TarInfo, archive: Path) -> None:
    name = member.name
    where = f"code archive {archive}: entry {name!r}"
    parts = PurePosixPath(name).parts
    if not name or name.startswith("/") or "\\" in name or ".." in parts or "\0" in name:
        raise CorruptArchive(f"{where}: its path leaves the working directory")
    if member.issym():
        target = PurePosixPath(member.linkname)
        resolved = os.path.normpath(PurePosixPath(name).parent / target)
        if target.is_absolute() or resolved == ".." or resolved.startswith("../"):
            raise CorruptArchive(f"{where}: a link out of the working directory "
                                 f"(to {member.linkname})")
    elif not (member.isfile() or member.isdir()):
        raise CorruptArchive(f"{where}: not a file, directory or link inside "
                             "(devices, FIFOs and hard links are refused)")


# --- at launch ------------------------------------------------------------------------


def cache_dir() -> Path:
    """Where archives are packed before they are stored (the user cache directory)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("costsched")) / "code"


def limit_bytes() -> int:
    """The configured limit on a workdir's packed files (config launch.max_code_mb)."""
    from costsched import config

    return int(config.load().config.launch.max_code_mb * (1 << 20))


def pack_workdir(workdir: str | None, where: str) -> dict | None:
    """Pack a job's workdir at launch: {"sha256", "size", "files", "path"} as the job's
    stored spec keeps it (None without a workdir). `where` names the spec in errors."""
    if not workdir:
        return None
    try:
        packed = pack(Path(workdir), cache_dir(), limit_bytes())
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: field workdir: {exc}") from None
    return {"sha256": packed.sha256, "size": packed.size, "files": packed.files,
            "path": str(packed.path)}


def store_code(code: dict, checkpoint_uri: str) -> str:
    """Store an archive packed by `pack_workdir` beside the job's checkpoints; its URI."""
    packed = Packed(Path(code["path"]), code["sha256"], int(code["size"]), int(code["files"]),
                    0)
    try:
        return publish(packed, checkpoint_uri)
    except InvalidInput:
        raise
    except Exception as exc:  # noqa: BLE001 - a store's error, said in one line
        where = archive_uri(checkpoint_uri, packed.sha256)
        raise InvalidInput(f"code archive {where}: cannot be stored "
                           f"({type(exc).__name__}: {exc})") from None
