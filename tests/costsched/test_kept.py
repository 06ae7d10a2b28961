"""Results kept between runs (`costsched.kept`): used only while what they were computed
from is unchanged, and never an error when the cache cannot be read or written; the
catalog's frames read from the cache are those computed from the files."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from costsched import bundled_prices, catalog, kept


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return kept.cache_dir()


def _counting() -> tuple[list[int], object]:
    calls: list[int] = []

    def compute() -> dict:
        calls.append(1)
        return {"value": len(calls)}
    return calls, compute


def test_a_result_is_computed_once_then_read_back(cache: Path) -> None:
    calls, compute = _counting()
    assert kept.kept("thing", compute) == {"value": 1}
    assert kept.kept("thing", compute) == {"value": 1}
    assert len(calls) == 1
    assert (cache / "thing.pickle").is_file()


def test_a_changed_file_or_library_version_computes_it_again(cache: Path,
                                                              tmp_path: Path) -> None:
    calls, compute = _counting()
    source = tmp_path / "types.csv"
    source.write_text("a\n1\n")
    kept.kept("thing", compute, [source])
    source.write_text("a\n2\n")  # same size, maybe the same mtime: the content differs
    assert kept.kept("thing", compute, [source]) == {"value": 2}
    source.unlink()  # no file any more is another input too
    assert kept.kept("thing", compute, [source]) == {"value": 3}
    assert kept.kept("thing", compute, [source]) == {"value": 3}
    assert kept.kept("thing", compute, [source], also=("pandas 9",)) == {"value": 4}


def test_a_changed_costsched_file_computes_it_again(cache: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "package"
    package.mkdir()
    (package / "module.py").write_text("x = 1\n")
    monkeypatch.setattr(kept, "_PACKAGE", package)
    kept.code_stamp.cache_clear()
    calls, compute = _counting()
    kept.kept("thing", compute)
    (package / "module.py").write_text("x = 22\n")
    kept.code_stamp.cache_clear()  # (a new process)
    assert kept.kept("thing", compute) == {"value": 2}
    kept.code_stamp.cache_clear()


def test_a_torn_or_unreadable_cache_is_computed_again(cache: Path) -> None:
    calls, compute = _counting()
    kept.kept("thing", compute)
    (cache / "thing.pickle").write_bytes(b"\x80\x05torn")
    assert kept.kept("thing", compute) == {"value": 2}
    assert kept.kept("thing", compute) == {"value": 2}  # written whole again


def test_a_cache_that_cannot_be_written_is_no_error(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    calls, compute = _counting()
    assert kept.kept("thing", compute) == {"value": 1}
    assert kept.kept("thing", compute) == {"value": 2}
    assert blocker.read_text() == ""


def test_the_catalogs_kept_frames_are_the_computed_ones(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readers = [(read, cpu) for read in (catalog.on_demand_observations,
                                        catalog.spot_observations, catalog.instance_types)
               for cpu in (False, True)]
    catalog.reload()
    bundled_prices._changes.cache_clear()
    computed = [read(cpu) for read, cpu in readers]
    changes = bundled_prices._changes()
    assert sorted(p.name for p in cache.iterdir()) == [
        "bundled-price-changes.pickle", "catalog-on-demand-all.pickle",
        "catalog-on-demand-gpu.pickle", "catalog-spot-all.pickle", "catalog-spot-gpu.pickle",
        "catalog-types.pickle"]
    catalog.reload()  # as a new process: read back from the cache, not the CSV files
    bundled_prices._changes.cache_clear()
    with monkeypatch.context() as patched:
        patched.setattr(catalog, "_read", None)
        patched.setattr(bundled_prices, "_read", None)
        for (read, cpu), before in zip(readers, computed, strict=True):
            pd.testing.assert_frame_equal(read(cpu), before)
        assert bundled_prices._changes() == changes
    # A refresh discovered a type: the frames are computed again, with it.
    discovered = cache.parent / "discovered.csv"
    discovered.write_text("cloud,instance_type,gpu_model,gpu_count,gpu_memory_gb,vcpus,"
                          "memory_gb,regions,zones,source\n"
                          "aws,p9.fake,H100,1,80,8,64,us-east-1,,a test\n")
    monkeypatch.setenv(bundled_prices.ENV_DISCOVERED, str(discovered))
    catalog.reload()
    types = catalog.instance_types()
    assert list(types["instance_type"]) == [*computed[4]["instance_type"], "p9.fake"]
    monkeypatch.delenv(bundled_prices.ENV_DISCOVERED)
    catalog.reload()
    bundled_prices._changes.cache_clear()
