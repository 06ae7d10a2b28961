"""The suite never touches the user's world: every default path costsched uses is under the
suite's own temporary folder, and the machine's costsched, cloud and terminal settings are
gone (tests/conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from costsched import config
from costsched.service.store_files import default_store_path
from costsched.store.database import default_url
from launchers.codepack import cache_dir
from launchers.local import default_base_dir
from tests.conftest import REAL_HOME, TEST_ROOT, isolate_environment


def _inside(path: Path | str, root: Path = TEST_ROOT) -> bool:
    return Path(path).resolve().is_relative_to(root.resolve())


def test_every_default_directory_is_the_suites_own(tmp_path: Path) -> None:
    """The home and the clouds' files are the suite's; the user directories the test's."""
    assert not _inside(REAL_HOME)
    assert _inside(os.path.expanduser("~"))
    for name in ("AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "CLOUDSDK_CONFIG"):
        assert _inside(os.environ[name])
    store = default_store_path()
    assert store is not None
    for path in (platformdirs.user_data_dir("costsched"),
                 platformdirs.user_config_dir("costsched"),
                 platformdirs.user_cache_dir("costsched"), config.default_path(), store,
                 default_url().removeprefix("sqlite:///"), default_base_dir(), cache_dir()):
        assert _inside(path, tmp_path), path
        assert not _inside(path, Path(REAL_HOME)), path


def test_the_machines_settings_are_dropped_and_the_numeric_ones_kept() -> None:
    machine = {"HOME": "/home/someone", "COSTSCHED_DB": "/home/someone/prices.sqlite",
               "COSTSCHED_POLICY_MARGIN": "0.5", "COSTSCHED_TEST_PG_URL": "postgresql://x/y",
               "AWS_PROFILE": "work", "AWS_ACCESS_KEY_ID": "AKIA...", "aws_region": "x",
               "GOOGLE_APPLICATION_CREDENTIALS": "/home/someone/key.json",
               "CLOUDSDK_CORE_PROJECT": "p", "AZURE_CLIENT_SECRET": "s", "COLUMNS": "80",
               "https_proxy": "http://proxy:3128", "XDG_DATA_HOME": "/home/someone/.data",
               "OPENBLAS_CORETYPE": "Haswell", "OMP_NUM_THREADS": "1", "PATH": "/usr/bin"}
    root = isolate_environment(machine)
    assert root.is_dir() and root != TEST_ROOT
    for gone in ("COSTSCHED_DB", "COSTSCHED_POLICY_MARGIN", "AWS_PROFILE", "AWS_ACCESS_KEY_ID",
                 "aws_region", "GOOGLE_APPLICATION_CREDENTIALS", "CLOUDSDK_CORE_PROJECT",
                 "AZURE_CLIENT_SECRET", "COLUMNS", "https_proxy"):
        assert gone not in machine, gone
    assert machine["COSTSCHED_TEST_PG_URL"] == "postgresql://x/y"
    assert machine["OPENBLAS_CORETYPE"] == "Haswell" and machine["OMP_NUM_THREADS"] == "1"
    assert machine["PATH"] == "/usr/bin"
    for name in ("HOME", "XDG_DATA_HOME", "AWS_SHARED_CREDENTIALS_FILE", "CLOUDSDK_CONFIG"):
        assert Path(machine[name]).is_relative_to(root), name
