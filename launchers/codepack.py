"""A job's code: its workdir packed once at launch, stored beside its checkpoints, and
unpacked by the agent on every instance that runs the job.

    packed = pack(Path("~/proj"), cache_dir, limit_bytes=100 << 20)   # Packed(sha256, ...)
    uri = publish(packed, "s3://bucket/jobs/job-7")    # .../job-7/code/<sha256>.tar.gz
    fetch(uri, packed.sha256, packed.size, Path("/tmp/code.tar.gz"))  # verified download
    carry(uri, packed.sha256, packed.size, "az://ckpt/job-7")  # beside another store's too
    unpack(Path("/tmp/code.tar.gz"), Path("work/code"))               # checked, then extracted

Which files: `launchers.workfiles` (what git would commit, or every file the `.gitignore`
files keep; `.costschedignore` excludes more; regular files and links only). What is
refused: `launchers.secrets_scan` (home and system folders, credential files not named in
`.costschedallow`), a folder with nothing to pack, a link that leads out (through other
links too). Task files in it (the job's own, and every *.yaml or *.yml file that writes
secrets' values, or values of envs named like a secret) are packed without those values
(`launchers.codepack_secrets`); any file holding such a value, or one given at launch or
configured, elsewhere is left out. The archive is deterministic (sorted names, no times,
owners or modes but the executable bit), so the same code gets the same SHA-256.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import logging
import os
import re
import shutil
import stat
import tarfile
import tempfile
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from costsched import redact
from costsched.model import InvalidInput
from costsched.vocabulary import prefixed
from launchers import codepack_secrets, ignore, secrets_scan, workfiles
from launchers.checkpoints import CheckpointStore, open_store

IGNORE_FILE = workfiles.IGNORE_FILE
DEFAULT_LIMIT_MB = 100
CODE_DIR = "code"  # beside the checkpoint versions: <checkpoint uri>/code/<sha256>.tar.gz
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
log = logging.getLogger("costsched.codepack")
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Packed:
    path: Path  # the archive, <sha256>.tar.gz
    sha256: str
    size: int  # bytes of the archive
    files: int
    content_bytes: int  # bytes of the files packed
    skipped: tuple[str, ...] = field(default=())  # "path (FIFO)": left out, not files

    @property
    def name(self) -> str:
        return f"{self.sha256}.tar.gz"


class CorruptArchive(RuntimeError):
    """A code archive that does not match what the job was launched with, or that would
    write outside its directory; str() says which and how."""


# --- which files: launchers.workfiles -------------------------------------------------

parse_ignore, ignored = ignore.parse_ignore, ignore.ignored  # for this module's callers
list_files = workfiles.list_files


# --- packing --------------------------------------------------------------------------


def pack(workdir: Path, dest_dir: Path, limit_bytes: int = DEFAULT_LIMIT_MB << 20,
         job_file: Path | None = None, written: Collection[str] = (),
         known: Collection[str] = ()) -> Packed:
    """The workdir as a deterministic tar.gz in dest_dir named by its SHA-256; every task
    file in it packed with the secrets' values it writes blanked, and its envs' named like
    a secret (`codepack_secrets`): `job_file`, the file the job was read from, with
    `written`, the values the launch read from it, when it is in the workdir, and every
    *.yaml or *.yml file that writes any; every file holding one of those values, or one
    of `known` (the secrets given at launch and configured), elsewhere left out, said.
    InvalidInput in one line when it is not a directory, is a home or system folder, holds
    credential files (`launchers.secrets_scan`), has nothing to pack, has a link that leads
    out of it (through other links too), has a file that cannot be read, or when its files
    come to more than `limit_bytes` (naming the largest entries and the ignore file).
    Entries that are neither files, directories nor links (FIFOs, sockets, devices) are
    left out, and said in a warning and in `Packed.skipped`."""
    workdir = Path(workdir).expanduser()
    if not workdir.is_dir():
        raise InvalidInput(f"workdir {workdir}: not a directory")
    workdir = workdir.resolve()
    secrets_scan.check_folder(workdir)
    listing = workfiles.listing(workdir)
    names = listing.files
    if not names:
        raise InvalidInput(f"workdir {workdir}: nothing to pack: "
                           + ("it is empty" if not any(workdir.iterdir()) else
                              f"every file is excluded by {IGNORE_FILE} or .gitignore")
                           + "; a job needs its code")
    sizes = {}
    links = {}
    for rel in names:
        path = workdir / rel
        try:
            info = path.lstat()
        except OSError as exc:
            raise workfiles.unreadable(path, exc) from None
        if stat.S_ISLNK(info.st_mode):
            links[rel] = _check_link(workdir, rel)
            sizes[rel] = 0
        else:
            sizes[rel] = info.st_size
    loops = {}
    for rel in links:  # within the archive as well: its links lead to its own entries
        if resolve_within(links, rel) is None:
            chain = loop_of(links, rel)
            if chain is None:
                raise InvalidInput(_link_out(workdir, rel, links[rel]))
            loops[rel] = chain  # leads nowhere, so nowhere out: kept as a link, as git does
    found = secrets_scan.credentials(workdir, [n for n in names if n not in links])
    if found:
        raise InvalidInput(
            f"workdir {workdir}: holds credential files: {secrets_scan.describe(found)}; they "
            f"would be stored with the job's checkpoints: exclude them in "
            f"{workdir / IGNORE_FILE}, or name each one you mean to send in "
            f"{workdir / secrets_scan.ALLOW_FILE}")
    total = sum(sizes.values())
    if total > limit_bytes:
        raise InvalidInput(_too_big(workdir, sizes, total, limit_bytes))
    if listing.skipped:
        log.warning("workdir %s: left out %s (not a file, directory or link)", workdir,
                    _few(listing.skipped))
    if loops:
        log.warning("workdir %s: %s a loop of links (%s): packed as links, as git keeps them; "
                    "opening one fails", workdir, "link " + _few(list(loops)) +
                    (" is" if len(loops) == 1 else " are in"), "; ".join(loops.values()))
    mine = codepack_secrets.job_file_name(workdir, names, links, job_file) if written else None
    plan = codepack_secrets.blanking(workdir, [n for n in names if n not in links], mine,
                                     written, known)
    dest_dir.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=dest_dir, prefix=".packing-", suffix=".tar.gz")
    try:
        with os.fdopen(handle, "wb") as raw:
            digest = _HashingWriter(raw)
            with gzip.GzipFile(filename="", mode="wb", fileobj=digest, mtime=0) as zipped, \
                    tarfile.open(fileobj=zipped, mode="w", format=tarfile.GNU_FORMAT) as tar:
                for rel in names:
                    if rel in plan.texts:
                        codepack_secrets.add_text(tar, workdir, rel, plan.texts[rel])
                    elif rel not in plan.left_out:
                        _add(tar, workdir, rel)
            raw.flush()
            os.fsync(raw.fileno())
        sha = digest.sha.hexdigest()
        final = dest_dir / f"{sha}.tar.gz"
        os.replace(temp, final)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return Packed(final, sha, digest.size, len(names), total, tuple(listing.skipped))


def _few(names: list[str], limit: int = 5) -> str:
    more = len(names) - limit
    return ", ".join(names[:limit]) + (f" and {more} more" if more > 0 else "")


def _check_link(workdir: Path, rel: str) -> str:
    """The link's target, when it leads inside the workdir, following every link on the
    way (a link to a link that leads out leads out); else InvalidInput."""
    try:
        target = os.readlink(workdir / rel)
    except OSError as exc:
        raise workfiles.unreadable(workdir / rel, exc) from None
    resolved = Path(os.path.realpath(workdir / rel))
    if os.path.isabs(target) or not _inside(workdir, resolved):
        raise InvalidInput(_link_out(workdir, rel, target))
    return target


def _link_out(workdir: Path, rel: str, target: str) -> str:
    return (f"workdir {workdir}: link {rel} points outside it (to {target}, through the "
            f"links on its way); add it to {workdir / IGNORE_FILE} or copy what it points to")


def resolve_within(links: dict[str, str], name: str, limit: int = 40) -> list[str] | None:
    """The path `name` ('/'-separated, relative) leads to in a tree whose links are `links`
    (name: target), as the kernel would resolve it there, following links on the way and
    at the end; None when it leads above the tree's top (or loops past `limit` links).
    Names not in `links` count as directories or files of the tree."""
    return _follow(links, name, limit)[0]


def loop_of(links: dict[str, str], name: str, limit: int = 40) -> str | None:
    """'a -> b -> a' when resolving `name` never ends (a loop of links; or a chain of more
    than `limit`, which the kernel refuses as it does a loop: ELOOP): the path leads
    nowhere, so nowhere out of the tree. None otherwise."""
    here, visited = _follow(links, name, limit)
    if here is not None or len(visited) <= limit:
        return None
    repeated = [i for i, at in enumerate(visited) if at in visited[i + 1:]]
    if not repeated:
        return " -> ".join(visited[:3]) + f" -> ... (more than {limit} links)"
    again = visited.index(visited[repeated[0]], repeated[0] + 1)
    return " -> ".join(visited[:again + 1])


def _follow(links: dict[str, str], name: str, limit: int) -> tuple[list[str] | None, list[str]]:
    """(`resolve_within`'s answer, the links followed on the way, in order)."""
    pending = list(reversed(PurePosixPath(name).parts))
    here: list[str] = []
    visited: list[str] = []
    while pending:
        part = pending.pop()
        if part in ("", "."):
            continue
        if part == "..":
            if not here:
                return None, visited
            here.pop()
            continue
        at = "/".join([*here, part])
        if at in links:
            visited.append(at)
            target = links[at]
            if len(visited) > limit or target.startswith("/"):
                return None, visited
            pending.extend(reversed(PurePosixPath(target).parts))  # from the link's folder
            continue
        here.append(part)
    return here, visited


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
    try:
        if path.is_symlink():
            info.type = tarfile.SYMTYPE
            info.linkname = os.readlink(path)
            info.mode = 0o777
            tar.addfile(info)
            return
        # never blocks (a FIFO put there since the listing), never follows a new link
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise workfiles.unreadable(path, exc) from None
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InvalidInput(f"workdir {workdir}: {rel} changed while it was packed (now "
                               f"a {workfiles.kind(mode)}); launch again")
        info.mode = 0o755 if mode & stat.S_IXUSR else 0o644
        info.size = os.fstat(fd).st_size
        try:
            tar.addfile(info, handle)
        except OSError as exc:  # it shrank while read, or the disk failed it
            raise InvalidInput(f"workdir {workdir}: {rel} changed or failed while it was "
                               f"packed ({exc}); launch again") from None


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
    elif kind == "azure":
        with packed.path.open("rb") as body:
            store.put_bytes(name, body, "application/gzip")
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
            elif kind == "azure":
                for chunk in store.download(name):
                    out.write(chunk)
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


def carry(uri: str, sha256: str, size: int, checkpoint_uri: str) -> str:
    """The archive at `uri` stored beside `checkpoint_uri`'s checkpoints too, through a
    verified download to a temporary file (an archive is at most launch.max_code_mb); once:
    nothing is copied when it is there already. Its URI there."""
    dest = archive_uri(checkpoint_uri, sha256)
    if dest == uri or _stored(dest, size):
        return dest
    with tempfile.TemporaryDirectory(prefix="costsched-code-") as folder:
        path = fetch(uri, sha256, size, Path(folder) / f"{sha256}.tar.gz")
        publish(Packed(path, sha256, size, 0, 0), checkpoint_uri)
    log.info("carried code archive %s to %s", uri, dest)
    return dest


def _stored(uri: str, size: int) -> bool:
    """Whether the archive `uri` is stored, with its size."""
    folder, name = _split(uri)
    store = open_store(folder)
    kind = _kind(store)
    if kind == "s3":
        try:
            head = store.client.head_object(Bucket=store.bucket, Key=store._key(name))
        except store.client.exceptions.ClientError as exc:
            if str(exc.response.get("Error", {}).get("Code")) in ("404", "NoSuchKey",
                                                                  "NotFound"):
                return False
            raise
        return head.get("ContentLength") == size
    if kind == "gcs":
        blob = store.bucket.get_blob(store._key(name))
        return blob is not None and blob.size == size
    if kind == "azure":
        from azure.core.exceptions import ResourceNotFoundError

        try:
            found = store.container.get_blob_client(store._key(name)).get_blob_properties()
        except ResourceNotFoundError:
            return False
        return found.size == size
    path = Path(store.root) / name
    return path.is_file() and path.stat().st_size == size


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
    """'s3', 'gcs', 'azure' or 'local': the archive is one object put and got with the
    store's own client (its bucket and key prefix), or one file in its directory."""
    from launchers.checkpoints.azure import AzureBlobStore
    from launchers.checkpoints.gcs import GcsStore
    from launchers.checkpoints.local import LocalStore
    from launchers.checkpoints.s3 import S3Store

    kinds = {S3Store: "s3", GcsStore: "gcs", AzureBlobStore: "azure", LocalStore: "local"}
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
    files. Links are resolved as the kernel would, through the archive's other links: one
    that leads out that way is refused too. CorruptArchive names the first entry refused;
    nothing is left at `dest`."""
    if sha256 is not None and size is not None:
        problem = _mismatch(archive, sha256, size)
        if problem:
            raise CorruptArchive(f"code archive {archive}: {problem}")
    dest = Path(dest)
    staging = Path(tempfile.mkdtemp(prefix=".unpacking-", dir=dest.parent))
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            members = tar.getmembers()
            links = {m.name.rstrip("/"): m.linkname for m in members if m.issym()}
            seen: set[str] = set()
            for member in members:
                _check_member(member, archive)
                where = f"code archive {archive}: entry {member.name!r}"
                name = str(PurePosixPath(member.name))
                if name in seen and not member.isdir():
                    raise CorruptArchive(f"{where}: a second entry of that name")
                seen.add(name)
                parents = PurePosixPath(member.name).parents
                if any(str(parent) in links for parent in parents):
                    raise CorruptArchive(f"{where}: under a link (only plain directories "
                                         "may hold entries)")
                if member.issym() and resolve_within(links, name) is None \
                        and loop_of(links, name) is None:  # a loop leads nowhere: kept
                    raise CorruptArchive(f"{where}: a link out of the working directory "
                                         f"through the links on its way, or in a loop (to "
                                         f"{member.linkname})")
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
                # a new file, never written through a link
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                             | getattr(os, "O_NOFOLLOW", 0), 0o600)
                with source, os.fdopen(fd, "wb") as out:
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


def pack_workdir(workdir: str | None, where: str, job_file: str = "",
                 written: Collection[str] = (), known: Collection[str] = ()) -> dict | None:
    """Pack a job's workdir at launch: {"sha256", "size", "files", "path"} as the job's
    stored spec keeps it (None without a workdir). `where` names the spec in errors;
    `job_file`, `written`: the file it was read from and the secrets' values it writes;
    `known`, the job's other secrets' values (its envs named like a secret's); every value
    costsched masks (`costsched.redact`: those given at launch, configured) is kept out of
    it too."""
    if not workdir:
        return None
    try:
        limit = limit_bytes()  # the configuration read: its secrets are remembered
        packed = pack(Path(workdir), cache_dir(), limit, Path(job_file) if job_file else None,
                      written, {*known, *redact.remembered()})
    except InvalidInput as exc:
        # 'field workdir /x: not a directory', the field named once
        raise InvalidInput(f"{where}: field {prefixed('workdir', str(exc))}") from None
    return {"sha256": packed.sha256, "size": packed.size, "files": packed.files,
            "path": str(packed.path), "skipped": list(packed.skipped[:20])}


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
