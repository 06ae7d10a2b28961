"""What a user's project folder may hold, packed by launchers/codepack.py with real files:
FIFOs, sockets and ignore files that are FIFOs never block (left out, said in a warning);
unreadable entries are one line naming them; ignore patterns mean what git says they mean
(git itself is the reference); links that lead out through other links are refused at
pack time and at unpack; home and system folders, credential files (unless allowed by
name) and folders with nothing to pack are refused in one line."""

from __future__ import annotations

import io
import logging
import os
import shutil
import socket
import stat
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest

from costsched.model import InvalidInput
from launchers import codepack, workfiles
from launchers.codepack import CorruptArchive, ignored, pack, parse_ignore, unpack

PEM = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH " \
      "PRIVATE KEY-----\n"


def project(root: Path, files: dict[str, str] | None = None) -> Path:
    for name, text in (files or {"train.py": "print('train')\n"}).items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def members(packed: codepack.Packed) -> list[str]:
    with tarfile.open(packed.path) as tar:
        return sorted(m.name for m in tar.getmembers())


def in_child(code: str, timeout: float = 60, **kwargs: object) -> subprocess.CompletedProcess:
    """Python code in a process of its own, so that a hang is a failure, not a stuck run."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout, cwd=Path(__file__).resolve().parents[2],
                          **kwargs)  # type: ignore[call-overload]


# --- entries that are not files --------------------------------------------------------


@pytest.mark.parametrize("git", [False, True], ids=["plain", "git"])
def test_fifos_and_sockets_are_left_out_with_a_note(tmp_path: Path, git: bool,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    root = project(tmp_path / "p")
    if git:
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        os.mkfifo(root / "pipe")
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(root / "control.sock"))
        try:
            packed = pack(root, tmp_path / "out")
        finally:
            server.close()
        assert members(packed) == ["train.py"]
        assert packed.skipped == ("control.sock (socket)", "pipe (FIFO)")
        # git itself would wait for ever on a .gitignore that is a FIFO: refused first
        os.mkfifo(root / ".gitignore")
        done = in_child(f"from pathlib import Path; from launchers import codepack; "
                        f"codepack.pack(Path({str(root)!r}), Path({str(tmp_path)!r}) / 'o')")
        assert ".gitignore (FIFO): git would wait for ever reading it" in done.stderr
        return
    os.mkfifo(root / "pipe")
    os.mkfifo(root / ".gitignore")  # an ignore file that is a FIFO: never read
    (root / "sub").mkdir()
    os.mkfifo(root / "sub" / ".costschedignore")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(root / "sub" / "control.sock"))
    try:
        with caplog.at_level(logging.WARNING, logger="costsched.codepack"):
            # A child with a deadline: the old code blocked here for ever.
            done = in_child(f"from pathlib import Path; from launchers import codepack; "
                            f"p = codepack.pack(Path({str(root)!r}), Path({str(tmp_path)!r}) "
                            f"/ 'out'); print(p.skipped)")
            assert done.returncode == 0, done.stderr
            packed = pack(root, tmp_path / "out2")
    finally:
        server.close()
    assert members(packed) == ["train.py"]
    assert packed.skipped == (".gitignore (FIFO)", "pipe (FIFO)",
                              "sub/.costschedignore (FIFO)", "sub/control.sock (socket)")
    assert "left out" in caplog.text and "pipe (FIFO)" in caplog.text
    assert "left out" in done.stderr  # a user sees it, one line


def test_a_file_turned_into_a_fifo_after_the_listing_does_not_block(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = project(tmp_path / "p", {"train.py": "x", "data.txt": "y"})
    listing = workfiles.listing

    def then_swapped(workdir: Path) -> workfiles.Listing:
        found = listing(workdir)
        (root / "data.txt").unlink()
        os.mkfifo(root / "data.txt")
        return found

    monkeypatch.setattr(workfiles, "listing", then_swapped)
    with pytest.raises(InvalidInput, match="data.txt changed while it was packed"):
        pack(root, tmp_path / "out")


# --- unreadable entries ------------------------------------------------------------------


def test_a_file_removed_while_packing_is_one_line_naming_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = project(tmp_path / "p", {"train.py": "x", "lib/util.py": "y"})
    listing = workfiles.listing

    def then_removed(workdir: Path) -> workfiles.Listing:
        found = listing(workdir)
        shutil.rmtree(root / "lib")
        return found

    monkeypatch.setattr(workfiles, "listing", then_removed)
    with pytest.raises(InvalidInput) as caught:
        pack(root, tmp_path / "out")
    assert str(root / "lib" / "util.py") in str(caught.value)
    assert "cannot be read" in str(caught.value) and "\n" not in str(caught.value)


UNREADABLE = """
import os, sys
from pathlib import Path
from costsched.model import InvalidInput
from launchers import codepack
try:
    codepack.pack(Path(sys.argv[1]), Path(sys.argv[2]))
except InvalidInput as exc:
    print(exc)
    sys.exit(2)
"""


@pytest.mark.parametrize("what", ["file", "folder"])
def test_an_unreadable_file_or_folder_is_one_line_naming_it(tmp_path: Path,
                                                            what: str) -> None:
    """By permission: root (the tests' user) reads everything, so the packing runs in a
    child without the capabilities that let it (setpriv)."""
    base = Path(tempfile.mkdtemp(prefix="costsched-perm-"))
    try:
        base.chmod(0o755)
        root = project(base / "p", {"train.py": "x", "secret/notes.txt": "y",
                                    "closed.txt": "z"})
        for path in [root, *root.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        closed = root / ("secret" if what == "folder" else "closed.txt")
        closed.chmod(0)
        out = base / "out"
        out.mkdir(mode=0o777)
        out.chmod(0o777)
        # root reads everything: without the two capabilities that let it, it does not
        prefix = (["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
                  if os.geteuid() == 0 else [])
        if prefix and not shutil.which("setpriv"):
            pytest.skip("running as root without setpriv: permissions cannot hold")
        done = subprocess.run([*prefix, sys.executable, "-c", UNREADABLE, str(root), str(out)],
                              capture_output=True, text=True, timeout=60,
                              cwd=Path(__file__).resolve().parents[2],
                              env={**os.environ, "HOME": str(base)})
        assert done.returncode == 2, done.stdout + done.stderr
        assert "Traceback" not in done.stderr
        [line] = done.stdout.splitlines()
        assert str(closed) in line and "cannot be read (Permission denied)" in line
    finally:
        for path in [base, *base.rglob("*")]:
            path.chmod(0o755)
        shutil.rmtree(base)


# --- ignore patterns: git is the reference ----------------------------------------------

PATTERNS = ["[z-a]", "[[:bogus:]]x", "foo[", "a\\", "(", "+x", "{a,b}", "x)", "a|b", "^a$",
            "[]", "[!]", "[]a]", "[!a]x", "[^a]x", "[a-]", "[[:alpha:]]1", "y[[:]", "y[[:a]",
            "y[a[:]", "\\[x",
            "**", "a/**", "**/b", "a/**/b", "a**b", "*.py", "?", "\\!x", "x\\ ", "sub/*",
            "/top", "d/", "[a-c]?", "**/c/**", "a/*/b", "[\\]]", "***", "[[:digit:]-z]"]
PATHS = ["a", "b", "x", "1", "a1", "(", "+x", "{a,b}", "x)", "a|b", "^a$", "]", "ax", "bx",
         "a-", "-", "[", "y:", "y[", "ya", "[x", "a/b", "a/x/b", "a/x/y/b", "axyb", "a/b/c", "f.py",
         "sub/f.py", "top", "x/top", "d", "c/e", "x/c/e", "a/z/b", "a b", "x ", "!x", "2",
         "z", "a/x", "\\"]


def git_ignored(repo: Path, pattern: str, paths: list[str]) -> dict[str, bool]:
    """git's own answer (no path starts with ':', which git reads as pathspec magic)."""
    (repo / ".gitignore").write_text(pattern + "\n")
    done = subprocess.run(["git", "check-ignore", "--no-index", "--stdin", "-z"], cwd=repo,
                          input="\0".join(paths).encode(), capture_output=True, check=False)
    hits = {p.decode() for p in done.stdout.split(b"\0") if p}
    return {p: p in hits for p in paths}


def test_ignore_patterns_mean_what_they_mean_to_git(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    for name in ("d", "a", "c", "x", "sub", "a/x", "a/b", "a/x/y", "a/z"):
        (repo / name).mkdir(parents=True, exist_ok=True)
    dirs = {p for p in PATHS if (repo / p).is_dir()}
    differ = []
    for pattern in PATTERNS:
        rules = parse_ignore(pattern + "\n")  # never raises
        expected = git_ignored(repo, pattern, PATHS)
        for path in PATHS:
            # git says a path is ignored when it, or a folder above it, is
            parts = path.split("/")
            ours = any(ignored(rules, "/".join(parts[:k]), "/".join(parts[:k]) in dirs
                               or k < len(parts)) for k in range(1, len(parts) + 1))
            if ours != expected[path]:
                differ.append((pattern, path, ours, expected[path]))
    assert differ == []


def test_a_gitignore_git_accepts_never_stops_the_packing(tmp_path: Path) -> None:
    root = project(tmp_path / "p", {"train.py": "x", "out.log": "y", "keep.txt": "z"})
    (root / ".gitignore").write_text("[z-a]\n[[:nope:]]\nfoo[\n(\n*.log\n")
    assert members(pack(root, tmp_path / "out")) == [".gitignore", "keep.txt", "train.py"]


# --- links -------------------------------------------------------------------------------


def test_a_link_out_through_another_link_is_refused(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    (root / "hop").symlink_to("/etc")
    (root / "passwd").symlink_to("hop/passwd")  # inside by its text, out through `hop`
    (root / ".costschedignore").write_text("hop\n")  # `hop` itself is not even packed
    with pytest.raises(InvalidInput, match="link passwd points outside it"):
        pack(root, tmp_path / "out")


def test_a_link_out_through_dot_dot_after_a_link_is_refused(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    (root / "here").symlink_to(".")
    (root / "up").symlink_to("here/..")  # 'here/..' reads as '.', but is the parent
    with pytest.raises(InvalidInput, match="link up points outside it"):
        pack(root, tmp_path / "out")


def test_a_loop_of_links_leads_nowhere_and_is_kept_as_git_keeps_it(tmp_path: Path,
                                                                     caplog) -> None:  # noqa: ANN001
    root = project(tmp_path / "p", {"train.py": "x"})
    (root / "a").symlink_to("b")
    (root / "b").symlink_to("a")
    (root / "self").symlink_to("self/x")
    packed = pack(root, tmp_path / "out")
    assert members(packed) == ["a", "b", "self", "train.py"]
    assert "a loop of links (a -> b -> a; b -> a -> b; self -> self)" in caplog.text
    unpack(packed.path, tmp_path / "code")
    assert os.readlink(tmp_path / "code" / "a") == "b"
    with pytest.raises(OSError, match="Too many levels of symbolic links"):
        (tmp_path / "code" / "a").read_text()


def test_a_link_out_beside_a_loop_is_still_refused(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    (root / "a").symlink_to("b")
    (root / "b").symlink_to("a")
    (root / "up").symlink_to("..")
    with pytest.raises(InvalidInput, match="link up points outside it"):
        pack(root, tmp_path / "out")


def test_links_that_stay_inside_through_other_links_are_kept(tmp_path: Path) -> None:
    root = project(tmp_path / "p", {"train.py": "x", "lib/util.py": "y"})
    (root / "l1").symlink_to("lib")
    (root / "l2").symlink_to("l1/util.py")
    packed = pack(root, tmp_path / "out")
    assert members(packed) == ["l1", "l2", "lib/util.py", "train.py"]
    unpack(packed.path, tmp_path / "code")
    assert (tmp_path / "code" / "l2").read_text() == "y"


def link(name: str, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, target
    return info


def regular(name: str, data: bytes = b"pwned") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def archive(tmp_path: Path, *entries: tarfile.TarInfo | tuple[tarfile.TarInfo, bytes]
            ) -> Path:
    path = tmp_path / "bad.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for entry in entries:
            if isinstance(entry, tuple):
                tar.addfile(entry[0], io.BytesIO(entry[1]))
            else:
                tar.addfile(entry)
    return path


@pytest.mark.parametrize("entries", [
    [link("here", "."), link("up", "here/../escape")],
    [link("a", "b"), link("b", "c/.."), link("c", "here"), link("here", ".."),
     link("x", "a/y")],
    [link("loop", "loop2"), link("loop2", "loop"), link("here", "."),
     link("up", "here/../escape")],
], ids=["dot-dot-after-a-link", "a-chain", "out-beside-a-loop"])
def test_unpack_refuses_links_out_through_other_links(tmp_path: Path, entries: list) -> None:
    with pytest.raises(CorruptArchive, match="link out"):
        unpack(archive(tmp_path, *entries), tmp_path / "code")
    assert not (tmp_path / "code").exists()


def test_unpack_never_writes_through_a_link(tmp_path: Path) -> None:
    target = tmp_path / "victim.txt"
    target.write_text("safe")
    bad = archive(tmp_path, link("f", "g"), regular("f"))  # a file written over its link
    with pytest.raises(CorruptArchive, match="a second entry"):
        unpack(bad, tmp_path / "code")
    assert target.read_text() == "safe"


# --- folders and files that must not travel ----------------------------------------------


def test_home_and_system_folders_are_refused(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    home = project(tmp_path / "home", {".aws/credentials": "[default]\n",
                                       ".ssh/id_rsa": PEM, "proj/train.py": "x"})
    monkeypatch.setenv("HOME", str(home))
    for folder, why in [(home, "is a home folder"), (Path("/"), "the root of the file system"),
                        (Path("/etc"), "system folder"), (Path("/proc/self"), "kernel"),
                        (tmp_path, "holds home folders")]:
        with pytest.raises(InvalidInput) as caught:
            pack(folder, tmp_path / "out")
        assert why in str(caught.value) and "\n" not in str(caught.value)
    assert members(pack(home / "proj", tmp_path / "out")) == ["train.py"]


def test_credential_files_are_refused_naming_them(tmp_path: Path) -> None:
    root = project(tmp_path / "p", {
        "train.py": "x", ".env": "TOKEN=1\n", ".env.example": "TOKEN=\n",
        ".aws/credentials": "[default]\n", "deploy/id_ed25519": "k", "deploy/id_ed25519.pub":
        "ssh-ed25519 AAAA", ".netrc": "machine x login y password z\n",
        "certs/server.pem": PEM.replace("OPENSSH ", "RSA "),
        "certs/ca.pem": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
        "keys/sa.json": '{"type": "service_account", "private_key": "x"}',
    })
    with pytest.raises(InvalidInput) as caught:
        pack(root, tmp_path / "out")
    line = str(caught.value)
    assert "\n" not in line and "holds credential files" in line
    for name in (".aws/credentials", ".env (", ".netrc", "certs/server.pem"):
        assert name in line
    assert "and 2 more" in line  # deploy/id_ed25519, keys/sa.json
    assert ".env.example" not in line and "ca.pem" not in line and ".pub" not in line
    assert ".costschedallow" in line and ".costschedignore" in line
    # Excluded, or named one by one in .costschedallow: packed as the user says.
    (root / ".costschedignore").write_text(".aws/\ndeploy/\nkeys/\n.netrc\n")
    (root / ".costschedallow").write_text("# sent on purpose\n.env\ncerts/server.pem\n")
    assert members(pack(root, tmp_path / "out")) == [
        ".costschedallow", ".costschedignore", ".env", ".env.example", "certs/ca.pem",
        "certs/server.pem", "train.py"]


def test_an_allow_file_names_files_not_patterns(tmp_path: Path) -> None:
    root = project(tmp_path / "p", {"train.py": "x", ".env": "A=1", "sub/.env": "B=2"})
    (root / ".costschedallow").write_text("*\n.env\n")
    with pytest.raises(InvalidInput, match=r"holds credential files: sub/\.env"):
        pack(root, tmp_path / "out")


def test_nothing_to_pack_is_refused(tmp_path: Path) -> None:
    root = project(tmp_path / "p", {"train.py": "x", "lib/a.py": "y"})
    (root / ".costschedignore").write_text("*\n")
    with pytest.raises(InvalidInput, match="nothing to pack: every file is excluded"):
        pack(root, tmp_path / "out")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InvalidInput, match="nothing to pack: it is empty"):
        pack(empty, tmp_path / "out")


def test_a_device_is_left_out_with_a_note(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    try:  # /dev/null's numbers: reading it would give nothing, a disk's would give a disk
        os.mknod(root / "null", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, AttributeError):
        pytest.skip("no right to make a device node here")
    packed = pack(root, tmp_path / "out")
    assert members(packed) == ["train.py"]
    assert packed.skipped == ("null (device)",)
