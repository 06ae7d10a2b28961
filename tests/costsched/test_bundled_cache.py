"""The bundled catalog's parsed forms kept on disk: a kept value is the one built, is
built once per set of inputs, and is built again when an input changes (the bundled
files, the discovered types, the building modules' source); a cache that cannot be
written or read only costs time, and commands writing at once leave whole files."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from costsched import bundled_cache, bundled_prices, catalog


@pytest.fixture(autouse=True)
def _catalog_read_again_after(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's catalog as the other tests know it, once the test's settings end."""
    yield
    monkeypatch.undo()
    _fresh_catalog()


@pytest.fixture()
def builds(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """The names built (not loaded) from now on, with a cache and discovered types of the
    test's own."""
    monkeypatch.setattr(bundled_cache, "_root", lambda: tmp_path / "cache")
    monkeypatch.setenv(bundled_prices.ENV_DISCOVERED, str(tmp_path / "discovered.csv"))
    built: list[str] = []
    real = bundled_cache._kept

    def counting(name, build, stem, libraries):  # noqa: ANN001, ANN202
        return real(name, lambda: (built.append(name), build())[1], stem, libraries)

    monkeypatch.setattr(bundled_cache, "_kept", counting)
    return built


def _fresh_catalog() -> None:
    catalog.reload()
    for loader in (bundled_prices._on_demand, bundled_prices._spot, bundled_prices._changes,
                   bundled_prices._gpu_types):
        loader.cache_clear()


def test_a_kept_frame_is_the_built_one_and_is_built_once(builds: list[str]) -> None:
    _fresh_catalog()
    first = catalog.on_demand_observations()
    changes = bundled_prices._changes()
    assert len(builds) >= 2
    built = len(builds)
    _fresh_catalog()  # as a new command would: from disk
    pd.testing.assert_frame_equal(catalog.on_demand_observations(), first)
    with_cpu = catalog.on_demand_observations(include_cpu=True)  # a key of its own
    assert len(builds) > built and len(with_cpu) > len(first)
    built = len(builds)
    _fresh_catalog()
    pd.testing.assert_frame_equal(catalog.on_demand_observations(include_cpu=True), with_cpu)
    assert bundled_prices._changes() == changes
    assert len(builds) == built
    assert not first.empty and changes


def test_discovered_types_make_a_new_key(builds: list[str], tmp_path: Path) -> None:
    _fresh_catalog()
    before = catalog.instance_types()
    row = before.iloc[0]
    (tmp_path / "discovered.csv").write_text(
        ",".join(catalog.TYPE_COLUMNS) + ",regions,zones,source\n"
        f"{row['cloud']},zz-new.type,{row['gpu_model']},{row['gpu_count']},"
        f"{row['gpu_memory_gb']},{row['vcpus']},{row['memory_gb']},us-east-1,,test\n")
    _fresh_catalog()
    after = catalog.instance_types()
    assert len(after) == len(before) + 1 and "zz-new.type" in set(after["instance_type"])
    assert len(list((tmp_path / "cache" / "catalog").iterdir())) == 2
    (tmp_path / "discovered.csv").unlink()
    _fresh_catalog()
    built = len(builds)
    assert len(catalog.instance_types()) == len(before)  # the first key's files again
    assert len(builds) == built


def test_a_changed_bundled_file_or_builder_makes_a_new_key(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    package = tmp_path / "package"
    shutil.copytree(bundled_cache.DATA, package / "data")
    for name in bundled_cache.SOURCES:
        shutil.copy(bundled_cache.PACKAGE / name, package / name)
    monkeypatch.setattr(bundled_cache, "PACKAGE", package)
    monkeypatch.setattr(bundled_cache, "DATA", package / "data")
    monkeypatch.setattr(bundled_cache, "_root", lambda: tmp_path / "cache")
    monkeypatch.setenv(bundled_prices.ENV_DISCOVERED, str(tmp_path / "none.csv"))

    def key() -> Path:
        bundled_cache._package_digest.cache_clear()
        return bundled_cache._folder("catalog", ("pandas",))

    first = key()
    assert key() == first
    prices = package / "data" / "spot_prices.csv"
    prices.write_text(prices.read_text().replace("0", "1", 1))
    second = key()
    version = package / "catalog_version.py"
    version.write_text(version.read_text() + "\n")
    third = key()
    assert len({first, second, third}) == 3
    bundled_cache._package_digest.cache_clear()


def test_only_the_newest_folders_stay(monkeypatch: pytest.MonkeyPatch,
                                      tmp_path: Path) -> None:
    stem = tmp_path / "stem"
    for i in range(5):
        (stem / f"old{i}").mkdir(parents=True)
        (stem / f"old{i}" / "v.pickle").write_bytes(b"x")
        mtime = 1_700_000_000 + i
        os.utime(stem / f"old{i}", (mtime, mtime))
    bundled_cache._write(stem / "new", stem / "new" / "v.pickle", [1, 2])
    assert sorted(p.name for p in stem.iterdir()) == ["new", "old3", "old4"]


def test_a_partial_file_is_built_again(builds: list[str], tmp_path: Path) -> None:
    _fresh_catalog()
    expected = bundled_prices._spot()
    name = hashlib.sha256(b"costsched.bundled_prices._spot()[]").hexdigest()[:24]
    [kept_file] = (tmp_path / "cache" / "bundled_prices").glob(f"*/{name}.pickle")
    kept_file.write_bytes(kept_file.read_bytes()[:1000])  # as a crash mid-write would
    _fresh_catalog()
    built = len(builds)
    # _spot's own file was cut: it alone is built again, and kept whole again.
    assert bundled_prices._spot() == expected
    assert len(builds) == built + 1
    _fresh_catalog()
    assert bundled_prices._spot() == expected and len(builds) == built + 1


WRITER = """
import pickle, sys
from pathlib import Path
from costsched import bundled_cache
folder = Path(sys.argv[1])
value = [str(i) * 3 for i in range(50_000)]
for _ in range(20):
    bundled_cache._write(folder, folder / "v.pickle", value)
    with (folder / "v.pickle").open("rb") as fh:
        assert pickle.load(fh) == value
"""


def test_two_commands_writing_at_once_leave_a_whole_file(tmp_path: Path) -> None:
    """Two real processes write the same kept file 20 times each, reading it after each
    write: every read is a whole value (a partial file would fail to load)."""
    folder = tmp_path / "stem" / "key"
    folder.mkdir(parents=True)
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(folder)],
                                stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
    assert [p.name for p in folder.iterdir()] == ["v.pickle"]  # no temporary file left


def test_an_unwritable_cache_still_answers(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setattr(bundled_cache, "_root", lambda: blocked / "cache")
    _fresh_catalog()
    assert not catalog.spot_observations().empty
