"""launchers/codepack.py: which files travel, the deterministic archive, the size limit,
storing and fetching it (a directory, S3 under moto, GCS against the loopback fake), the
checks before unpacking; and the agent that unpacks it, runs setup once, then the job."""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from costsched.model import InvalidInput
from launchers import codepack
from launchers.codepack import CorruptArchive, ignored, list_files, pack, parse_ignore, unpack
from tests.launchers.checkpoints.conftest import (  # noqa: F401 - fixtures
    fake_gcs,
    gcs_client,
    hermetic_aws,
    s3,
)

MB = 1 << 20


def project(root: Path) -> Path:
    files = {
        "train.py": "print('train')\n",
        "tiny/model.py": "W = 1\n",
        "tiny/__pycache__/model.cpython-311.pyc": "x",
        "data/big.bin": "0" * 1000,
        "notes/todo.md": "later\n",
        "run.log": "old output\n",
        "keep.log": "kept by a negation\n",
        "sub/.gitignore": "/local.txt\n",
        "sub/local.txt": "only here\n",
        "sub/deep/local.txt": "not anchored there\n",
        ".gitignore": "data/\n*.log\n!keep.log\n__pycache__/\n",
        ".costschedignore": "notes/\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


EXPECTED = [".costschedignore", ".gitignore", "keep.log", "sub/.gitignore",
            "sub/deep/local.txt", "tiny/model.py", "train.py"]


def test_ignore_syntax() -> None:
    rules = parse_ignore("# comment\n\n*.pyc\n/build\nout/\n!keep.pyc\ndocs/**/*.md\n"
                         "a?c\n[xy].txt\n\\#hash\n")
    cases = {("a.pyc", False): True, ("x/a.pyc", False): True, ("keep.pyc", False): False,
             ("build", True): True, ("x/build", True): False, ("out", True): True,
             ("out", False): False, ("x/out", True): True, ("docs/a/b.md", False): True,
             ("docs/b.md", False): True, ("abc", False): True, ("abbc", False): False,
             ("y.txt", False): True, ("z.txt", False): False, ("#hash", False): True,
             ("train.py", False): False}
    assert {case: ignored(rules, *case) for case in cases} == cases


def test_files_outside_git_follow_the_ignore_files(tmp_path: Path) -> None:
    assert list_files(project(tmp_path / "p")) == EXPECTED


def test_files_in_a_git_work_tree_are_what_git_would_commit(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "train.py"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=root, check=True)
    (root / "train.py").unlink()  # deleted, still tracked: not packed
    (root / "new.py").write_text("untracked, not ignored: packed\n")
    expected = sorted([*(f for f in EXPECTED if f != "train.py"), "new.py"])
    assert list_files(root) == expected
    # from a subfolder of the repository: that folder's files, relative to it
    assert list_files(root / "tiny") == ["model.py"]


def test_the_archive_is_deterministic(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    (root / "train.py").chmod(0o755)
    first = pack(root, tmp_path / "a")
    os.utime(root / "tiny" / "model.py", (1, 1))
    second = pack(root, tmp_path / "b")
    assert first.sha256 == second.sha256 and first.path.read_bytes() == second.path.read_bytes()
    assert first.path.name == f"{first.sha256}.tar.gz" and first.files == len(EXPECTED)
    with tarfile.open(first.path) as tar:
        infos = {m.name: m for m in tar.getmembers()}
    assert sorted(infos) == EXPECTED
    assert {(m.mtime, m.uid, m.uname) for m in infos.values()} == {(0, 0, "")}
    assert infos["train.py"].mode == 0o755 and infos["tiny/model.py"].mode == 0o644
    (root / "tiny" / "model.py").write_text("W = 2\n")
    assert pack(root, tmp_path / "c").sha256 != first.sha256


def test_above_the_limit_the_launch_is_refused_naming_the_largest(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    (root / "weights").mkdir()
    (root / "weights" / "a.pt").write_bytes(b"\0" * (2 * MB))
    (root / "weights" / "b.pt").write_bytes(b"\0" * MB)
    (root / "model.pt").write_bytes(b"\0" * MB)
    with pytest.raises(InvalidInput) as caught:
        pack(root, tmp_path / "out", limit_bytes=3 * MB)
    message = str(caught.value)
    assert "\n" not in message
    assert "4.0 MB to pack, above the limit of 3.0 MB" in message
    assert "largest: weights/ (3.0 MB), model.pt (1.0 MB)" in message
    assert str(root / ".costschedignore") in message
    assert not list((tmp_path / "out").glob("*")) if (tmp_path / "out").exists() else True
    (root / ".costschedignore").write_text("notes/\n*.pt\n")
    assert pack(root, tmp_path / "out", limit_bytes=3 * MB).files == len(EXPECTED)


def test_links_out_of_the_workdir_are_refused(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    (root / "inside").symlink_to("tiny/model.py")
    with tarfile.open(pack(root, tmp_path / "a").path) as tar:
        assert tar.getmember("inside").linkname == "tiny/model.py"
    (root / "secrets").symlink_to("/etc/passwd")
    with pytest.raises(InvalidInput, match="link secrets points outside it"):
        pack(root, tmp_path / "b")


def test_a_missing_workdir_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="not a directory"):
        pack(tmp_path / "nope", tmp_path / "out")


# --- unpacking ---------------------------------------------------------------------------


def archive(tmp_path: Path, *entries: tarfile.TarInfo) -> Path:
    path = tmp_path / "evil.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        ok = tarfile.TarInfo("ok.py")
        ok.size = 3
        tar.addfile(ok, io.BytesIO(b"x=1"))
        for info in entries:
            tar.addfile(info, io.BytesIO(b"x" * info.size) if info.isfile() else None)
    return path


def entry(name: str, kind: bytes = tarfile.REGTYPE, link: str = "", size: int = 1
          ) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    info.size = size if kind == tarfile.REGTYPE else 0
    return info


@pytest.mark.parametrize(("bad", "why"), [
    (entry("../escape.py"), "leaves the working directory"),
    (entry("/etc/cron.d/x"), "leaves the working directory"),
    (entry("a/../../escape.py"), "leaves the working directory"),
    (entry("up", tarfile.SYMTYPE, "../../etc"), "a link out"),
    (entry("abs", tarfile.SYMTYPE, "/etc/passwd"), "a link out"),
    (entry("hard", tarfile.LNKTYPE, "ok.py"), "hard links are refused"),
    (entry("dev", tarfile.CHRTYPE), "devices"),
    (entry("fifo", tarfile.FIFOTYPE), "FIFOs"),
])
def test_unsafe_entries_are_refused_and_nothing_is_unpacked(tmp_path: Path, bad, why) -> None:
    path = archive(tmp_path, bad)
    with pytest.raises(CorruptArchive, match=why):
        unpack(path, tmp_path / "code")
    assert not (tmp_path / "code").exists() and not (tmp_path.parent / "escape.py").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["evil.tar.gz"]


def test_entries_under_a_link_are_refused(tmp_path: Path) -> None:
    # "d/up" -> ".." stays inside on its own; "d/up/up2" -> ".." would then reach out
    path = archive(tmp_path, entry("d", tarfile.DIRTYPE), entry("d/up", tarfile.SYMTYPE, ".."),
                   entry("d/up/up2", tarfile.SYMTYPE, ".."))
    with pytest.raises(CorruptArchive, match="under a link"):
        unpack(path, tmp_path / "code")


def test_unpack_checks_size_and_sha(tmp_path: Path) -> None:
    packed = pack(project(tmp_path / "p"), tmp_path / "out")
    with pytest.raises(CorruptArchive, match="expected"):
        unpack(packed.path, tmp_path / "code", "0" * 64, packed.size)
    assert unpack(packed.path, tmp_path / "code", packed.sha256, packed.size) == len(EXPECTED)
    assert (tmp_path / "code" / "tiny" / "model.py").read_text() == "W = 1\n"


# --- storing and fetching -----------------------------------------------------------------


def round_trip(tmp_path: Path, checkpoint_uri: str) -> codepack.Packed:
    packed = pack(project(tmp_path / "p"), tmp_path / "out")
    uri = codepack.publish(packed, checkpoint_uri)
    assert uri == f"{checkpoint_uri}/code/{packed.sha256}.tar.gz"
    got = codepack.fetch(uri, packed.sha256, packed.size, tmp_path / "got.tar.gz")
    assert got.read_bytes() == packed.path.read_bytes()
    with pytest.raises(CorruptArchive, match="bytes, expected"):
        codepack.fetch(uri, packed.sha256, packed.size + 1, tmp_path / "bad.tar.gz")
    with pytest.raises(CorruptArchive, match="SHA-256"):
        codepack.fetch(uri, "f" * 64, packed.size, tmp_path / "bad.tar.gz")
    assert not list(tmp_path.glob("bad.tar.gz*"))  # nothing left of a refused download
    return packed


def test_local_store(tmp_path: Path) -> None:
    packed = round_trip(tmp_path, str(tmp_path / "ckpt" / "job-7"))
    assert (tmp_path / "ckpt" / "job-7" / "code" / packed.name).is_file()


def test_s3_store(tmp_path: Path, s3) -> None:  # noqa: ANN001, F811 - fixture
    packed = round_trip(tmp_path, "s3://ckpt-bucket/jobs/job-7")
    head = s3.head_object(Bucket="ckpt-bucket", Key=f"jobs/job-7/code/{packed.name}")
    assert head["ContentLength"] == packed.size
    # the checkpoint store beside it sees no version in the code folder
    from launchers.checkpoints import open_store

    assert open_store("s3://ckpt-bucket/jobs/job-7").list() == []


def test_gcs_store(tmp_path: Path, fake_gcs, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001, F811
    client = gcs_client(fake_gcs)
    import launchers.checkpoints.gcs as gcs_module

    real = gcs_module.GcsStore.__init__

    def with_fake(self, bucket, prefix="", **kw):  # noqa: ANN001, ANN202
        real(self, bucket, prefix, client=client)

    monkeypatch.setattr(gcs_module.GcsStore, "__init__", with_fake)
    round_trip(tmp_path, "gs://ckpt-bucket/jobs/job-7")


# --- the agent around it ------------------------------------------------------------------


def run_agent(tmp_path: Path, work: str, command: str, setup: str = "",
              code: codepack.Packed | None = None, uri: str = "") -> dict:
    argv = [sys.executable, "-m", "launchers.agent", "--job-id", "7", "--checkpoint-uri",
            str(tmp_path / "store"), "--workdir", str(tmp_path / work), "--poll", "0.1"]
    if code is not None:
        argv += ["--code-uri", uri, "--code-sha256", code.sha256, "--code-size",
                 str(code.size)]
    if setup:
        argv += ["--setup", setup]
    subprocess.run([*argv, "--", command], cwd=tmp_path, timeout=60, capture_output=True)
    return json.loads((tmp_path / work / "status.json").read_text())


def test_the_agent_unpacks_runs_setup_once_then_the_job(tmp_path: Path) -> None:
    packed = pack(project(tmp_path / "p"), tmp_path / "out")
    uri = codepack.publish(packed, str(tmp_path / "store"))
    setup = "echo setting up; echo ran >> ../setup-runs"
    # (this interpreter: a machine's PATH may have no `python`)
    command = f"{shlex.quote(sys.executable)} -c \"import tiny.model; print('W', tiny.model.W)\""
    status = run_agent(tmp_path, "i1", command, setup, packed, uri)
    assert status["state"] == "succeeded", status
    log = (tmp_path / "i1" / "job.log").read_text()
    assert "setting up" in log and "W 1" in log
    assert sorted(p.name for p in (tmp_path / "i1" / "code").iterdir()) == [
        ".costschedignore", ".gitignore", "keep.log", "sub", "tiny", "train.py"]
    # the same instance started again: neither fetched nor set up again
    run_agent(tmp_path, "i1", command, setup, packed, uri)
    assert (tmp_path / "i1" / "setup-runs").read_text() == "ran\n"


def test_a_failing_setup_fails_the_attempt_with_its_exit_code(tmp_path: Path) -> None:
    status = run_agent(tmp_path, "i1", "touch job-ran", setup="echo missing thing; exit 3")
    assert status["state"] == "failed" and status["phase"] == "setup"
    assert status["exit_code"] == 3 and "missing thing" in status["detail"]
    assert not (tmp_path / "i1" / "code" / "job-ran").exists()


def test_a_corrupt_archive_fails_before_anything_runs(tmp_path: Path) -> None:
    packed = pack(project(tmp_path / "p"), tmp_path / "out")
    uri = codepack.publish(packed, str(tmp_path / "store"))
    stored = tmp_path / "store" / "code" / packed.name
    stored.write_bytes(stored.read_bytes()[:-1] + b"!")
    status = run_agent(tmp_path, "i1", "touch ../job-ran", "touch ../setup-ran", packed, uri)
    assert status["state"] == "failed" and status["phase"] == "code"
    assert "SHA-256" in status["detail"]
    assert not (tmp_path / "i1" / "job-ran").exists()
    assert not (tmp_path / "i1" / "setup-ran").exists()
