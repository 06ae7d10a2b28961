"""Carrying a job's checkpoints and code into another store (`launchers.carry`), between
directories (the stores' own behaviour is tested on every backend in checkpoints/): once,
the newest verified version, an older one when the newest is not its manifest's, and one
line when it cannot be done."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.migration.launcher import CarryError
from launchers import codepack
from launchers.carry import carry
from launchers.checkpoints.local import LocalStore


def job(tmp_path: Path, *payloads: bytes) -> tuple[str, tuple[str, int]]:
    """A job's store with its code archive and `payloads` published; (its URI, code)."""
    source = tmp_path / "home" / "job-7"
    work = tmp_path / "work"
    work.mkdir()
    (work / "train.py").write_text("print('hi')\n")
    packed = codepack.pack(work, tmp_path / "cache", 1 << 20)
    codepack.publish(packed, str(source))
    for data in payloads:
        (tmp_path / "checkpoint.npz").write_bytes(data)
        LocalStore(source).publish(tmp_path / "checkpoint.npz")
    return str(source), (packed.sha256, packed.size)


def test_the_code_and_newest_checkpoint_are_carried_once(tmp_path: Path) -> None:
    source, code = job(tmp_path, b"step 1", b"step 2")
    target = str(tmp_path / "there" / "job-7")
    seen: list[int] = []

    first = carry(source, target, code=code, tick=seen.append)
    again = carry(source, target, code=code)

    assert first.startswith("copied checkpoint version 2 (0.0 MB)")
    assert again == f"checkpoint version 2 is in {target} already (version 1)"
    [copied] = LocalStore(target).list()
    assert LocalStore(target).verify(copied) and copied.sha256 == LocalStore(source).list()[
        -1].sha256
    assert sum(seen) == len(b"step 2")  # every chunk told as it went
    archive = Path(codepack.archive_uri(target, code[0]))
    made = archive.stat().st_mtime_ns
    carry(source, target, code=code)
    assert archive.stat().st_mtime_ns == made  # the archive is not copied again
    codepack.fetch(str(archive), code[0], code[1], tmp_path / "fetched.tar.gz")  # verified


def test_a_newest_that_is_not_its_manifests_is_passed_for_the_one_before(
        tmp_path: Path) -> None:
    source, code = job(tmp_path, b"good", b"newest")
    Path(source, "v00000002", "checkpoint.npz").write_bytes(b"rotten")
    target = str(tmp_path / "there" / "job-7")

    done = carry(source, target, code=code)

    assert done.startswith("copied checkpoint version 1")
    assert [c.sha256 for c in LocalStore(target).list()] == \
        [LocalStore(source).list()[0].sha256]


def test_nothing_to_carry_and_failures_are_one_line(tmp_path: Path) -> None:
    source, code = job(tmp_path)
    target = str(tmp_path / "there" / "job-7")
    assert carry(source, target, code=code) == \
        f"no checkpoint yet in {source}: nothing to copy to {target}"

    blocked = tmp_path / "blocked"
    blocked.write_text("a file where a directory should be")
    with pytest.raises(CarryError, match=f"^cannot copy the checkpoints of {source} to "
                       f"{blocked}/job-7: .*cannot be created \\(Not a directory\\)") as caught:
        carry(source, str(blocked / "job-7"), code=code)
    assert "\n" not in str(caught.value)

    def stop(_: int) -> None:
        raise CarryError("job 7: its lease was taken")

    (tmp_path / "checkpoint.npz").write_bytes(b"step 3")
    LocalStore(source).publish(tmp_path / "checkpoint.npz")
    elsewhere = str(tmp_path / "elsewhere" / "job-7")
    with pytest.raises(CarryError, match="its lease was taken"):
        carry(source, elsewhere, code=code, tick=stop)
    assert LocalStore(elsewhere).list() == []  # nothing committed
