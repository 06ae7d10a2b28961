"""The bundled prices read with the csv module, and a SQLite store's read with sqlite3 (the
quick path of `costsched gpus`), agree row for row with the pandas path, and `costsched
gpus` imports neither pandas nor the database layer, with no store or with one."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from rich.console import Console

from costsched import bundled_prices, catalog
from costsched.cli.common import IN_MEMORY
from costsched.cli.gpus import offerings_table, summary_table
from costsched.model import InvalidInput
from costsched.service import glance
from costsched.service import gpus as service
from costsched.service.views import dumps, frame_records
from costsched.store import PriceStore
from price_collectors.base import rows_frame

# The first day of the bundled spot snapshot, a day between, today and a day of 2022.
TIMES = [datetime(2026, 11, 26, 6, 30, tzinfo=timezone.utc),
         datetime(2025, 10, 1, tzinfo=timezone.utc),
         datetime(2025, 12, 15, 12, tzinfo=timezone.utc),
         datetime(2022, 3, 1, tzinfo=timezone.utc)]
CLOUD_FILTERS = [[], ["aws"], ["gcp", "azure"]]


def _text(table: object) -> str:
    console = Console(width=200, record=True)
    console.print(table)
    return console.export_text()


@pytest.mark.parametrize("when", TIMES)
@pytest.mark.parametrize("clouds", CLOUD_FILTERS)
def test_the_summary_is_the_pandas_paths(when: datetime, clouds: list[str]) -> None:
    light = bundled_prices.gpu_summary(when, clouds=clouds)
    full = frame_records(service.gpu_summary(IN_MEMORY, when, clouds=clouds))
    assert dumps(light) == dumps(full)
    assert light or when.year == 2022  # before the first bundled GCP and Azure price
    assert _text(summary_table(light)) == _text(summary_table(full))


@pytest.mark.parametrize("when", TIMES[:2])
@pytest.mark.parametrize("gpu", [*catalog.GPU_MODELS, "nvidia-tesla-v100", "a100-80gb"])
def test_every_models_offerings_are_the_pandas_paths(when: datetime, gpu: str) -> None:
    light = bundled_prices.gpu_offerings(gpu, when)
    full = frame_records(service.gpu_offerings(IN_MEMORY, gpu, when))
    assert dumps(light) == dumps(full)
    assert _text(offerings_table(light, 20)) == _text(offerings_table(full, 20))


def test_h100_has_offerings_and_a_cloud_filter_keeps_its_cloud() -> None:
    rows = bundled_prices.gpu_offerings("H100", TIMES[0], clouds=["GCP"])
    assert rows and {r["cloud"] for r in rows} == {"gcp"}


def test_bad_names_are_the_services_errors() -> None:
    with pytest.raises(InvalidInput, match="unknown GPU model 'Z9000'"):
        bundled_prices.gpu_offerings("Z9000", TIMES[0])
    with pytest.raises(InvalidInput, match="^cloud "):
        bundled_prices.gpu_summary(TIMES[0], clouds=["awz"])


def _offering(cloud: str, region: str, zone: str, instance_type: str, market: str,
              price: float, at: datetime, os: str = "linux") -> tuple:
    spec = catalog.require(cloud, instance_type)
    return (cloud, region, zone, instance_type, market, os, spec["gpu_model"] or "",
            int(spec["gpu_count"]), int(spec["vcpus"]), float(spec["memory_gb"]), price, at)


def _day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


# Stored prices meeting every rule of the combination: an on-demand price older than the
# list's (the list wins) and one newer (the store's wins), two observations of one
# offering (the one of the time asked for), spot prices collected in one cloud (its older
# snapshot prices go) and in a region the snapshot prices newer (the snapshot's wins), a
# CPU type and a Windows price (neither shown).
STORED = [
    _offering("aws", "us-east-1", "", "p3.2xlarge", "on_demand", 2.5, _day("2019-06-01")),
    _offering("aws", "us-east-2", "", "p3.2xlarge", "on_demand", 2.9, _day("2025-11-01")),
    _offering("aws", "us-east-2", "", "p3.2xlarge", "on_demand", 2.8, _day("2026-02-01")),
    _offering("gcp", "us-central1", "us-central1-a", "a2-highgpu-1g", "spot", 1.1,
              _day("2025-12-01")),
    _offering("gcp", "us-central1", "us-central1-b", "a2-highgpu-1g", "spot", 0.9,
              _day("2025-12-01")),
    _offering("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", 0.5,
              _day("2020-01-01")),
    _offering("aws", "us-east-1", "", "m5.large", "on_demand", 0.1, _day("2025-12-01")),
    _offering("aws", "us-east-2", "", "p3.2xlarge", "on_demand", 3.5, _day("2025-12-01"),
              os="windows"),
]


# Collected (a cloud's older snapshot prices go) or imported from a file (only the places
# it lists give way): both paths combine them alike.
@pytest.fixture(scope="module", params=["collect:test", "import:test"])
def stored_db(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> str:
    db = str(tmp_path_factory.mktemp("stored") / "store.sqlite")
    store = PriceStore(db)
    store.ingest(rows_frame(STORED, request.param))
    store.dispose()
    return db


@pytest.mark.parametrize("when", [*TIMES, datetime(2026, 1, 10, 8, 0, 0, 250_000,
                                                   tzinfo=timezone.utc)])
@pytest.mark.parametrize("clouds", CLOUD_FILTERS)
def test_with_a_store_the_summary_is_the_pandas_paths(stored_db: str, when: datetime,
                                                      clouds: list[str]) -> None:
    stored = glance.stored_gpu_prices(stored_db, when, clouds=clouds)
    assert stored is not None
    light = bundled_prices.gpu_summary(when, clouds=clouds, stored=stored,
                                       spot_markets=glance.stored_spot_markets(stored_db, when))
    assert dumps(light) == dumps(frame_records(service.gpu_summary(stored_db, when,
                                                                   clouds=clouds)))


@pytest.mark.parametrize("when", [TIMES[0], TIMES[2]])
@pytest.mark.parametrize("gpu", ["V100", "A100", "H100"])
def test_with_a_store_the_offerings_are_the_pandas_paths(stored_db: str, when: datetime,
                                                         gpu: str) -> None:
    stored = glance.stored_gpu_prices(stored_db, when, gpu_models=[catalog.gpu_model_name(gpu)])
    light = bundled_prices.gpu_offerings(
        gpu, when, stored=stored, spot_markets=glance.stored_spot_markets(stored_db, when))
    full = frame_records(service.gpu_offerings(stored_db, gpu, when))
    assert dumps(light) == dumps(full)
    assert any(r["source"].endswith(":test") for r in light) == (gpu != "H100")


def test_a_store_at_another_schema_revision_is_left_to_the_database_layer(
        tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    PriceStore(str(db)).dispose()
    assert glance.stored_gpu_prices(str(db), TIMES[0]) == []
    import sqlite3

    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0001'")
    assert glance.stored_gpu_prices(str(db), TIMES[0]) is None
    assert glance.stored_gpu_prices("postgresql://host/db", TIMES[0]) is None


def _run_gpus(tmp_path: Path, *argv: str) -> tuple[str, list[str]]:
    """`costsched gpus ARGV` in a subprocess with no store (and the discovered types of
    tmp_path/none.csv, when written): its output and the heavy modules it imported."""
    code = ("import sys, json\n"
            f"sys.argv = ['costsched', 'gpus', *{list(argv)!r}]\n"
            "from costsched.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('pandas', 'numpy', 'sqlalchemy', 'cvxpy') if m in sys.modules]\n"
            "print('HEAVY=' + json.dumps(heavy))\n")
    env = {"COSTSCHED_DB": str(tmp_path / "none.db"),
           "COSTSCHED_DISCOVERED_TYPES": str(tmp_path / "none.csv"),
           "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout
    body, _, heavy = out.rpartition("HEAVY=")
    return body, json.loads(heavy)


def test_gpus_without_a_store_imports_nothing_heavy(tmp_path: Path) -> None:
    for argv in ([], ["H100"], ["--json"]):
        body, heavy = _run_gpus(tmp_path, *argv)
        assert heavy == [], (argv, heavy)
        assert body.strip()
    body, _ = _run_gpus(tmp_path, "H100", "--json")
    assert {r["cloud"] for r in json.loads(body)["rows"]} == {"aws", "gcp", "azure"}


DISCOVERED = (",".join(catalog.TYPE_COLUMNS) + ",regions,zones,source\n"
              # a type the bundled files do not name, and one they do (theirs wins)
              "aws,p9.fictional,H100,8,80,192,2048,us-east-1,,test refresh\n"
              "aws,p3.2xlarge,A100,2,40,8,61,us-east-1,,test refresh\n")


def test_with_discovered_types_the_quick_path_answers_as_the_pandas_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "none.csv"
    path.write_text(DISCOVERED)
    monkeypatch.setenv(bundled_prices.ENV_DISCOVERED, str(path))
    catalog.reload()
    db = str(tmp_path / "store.sqlite")
    store = PriceStore(db)
    store.ingest(rows_frame([
        ("aws", "us-east-1", "us-east-1a", "p9.fictional", "spot", "linux", "H100", 8, 192,
         2048.0, 9.5, TIMES[2]),
        *STORED], "collect:test"))
    store.dispose()
    try:
        for gpu in ("H100", "V100", "A100"):
            stored = glance.stored_gpu_prices(db, TIMES[0], gpu_models=[gpu])
            light = bundled_prices.gpu_offerings(
                gpu, TIMES[0], stored=stored, spot_markets=glance.stored_spot_markets(db, TIMES[0]))
            assert dumps(light) == dumps(frame_records(service.gpu_offerings(db, gpu,
                                                                             TIMES[0])))
        assert "p9.fictional" in dumps(bundled_prices.gpu_offerings(
            "H100", TIMES[0], stored=glance.stored_gpu_prices(db, TIMES[0])))
        stored = glance.stored_gpu_prices(db, TIMES[0])
        assert dumps(bundled_prices.gpu_summary(TIMES[0], stored=stored)) == dumps(
            frame_records(service.gpu_summary(db, TIMES[0])))
    finally:
        catalog.reload()


def test_with_discovered_types_gpus_imports_nothing_heavy(tmp_path: Path) -> None:
    (tmp_path / "none.csv").write_text(DISCOVERED)
    body, heavy = _run_gpus(tmp_path, "L4")
    assert heavy == [] and "L4: " in body and "offerings priced" in body


@pytest.mark.parametrize("text, words", [
    ("cloud,instance_type\naws,x\n", "missing field(s) gpu_model, gpu_count"),
    (DISCOVERED + "aws,p9.other,H100,two,80,192,2048,us-east-1,,r\n",
     "row 4: field gpu_count: expected a whole number >= 0, got 'two'"),
    (DISCOVERED + "aws,p9.other,,8,80,192,2048,us-east-1,,r\n",
     "row 4: field gpu_model: expected empty exactly when gpu_count is 0"),
])
def test_a_bad_discovered_file_is_refused_alike_on_both_paths(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, words: str) -> None:
    path = tmp_path / "discovered.csv"
    path.write_text(text)
    monkeypatch.setenv(bundled_prices.ENV_DISCOVERED, str(path))
    with pytest.raises(InvalidInput) as light:
        bundled_prices.gpu_summary(TIMES[0])
    with pytest.raises(InvalidInput) as full:
        catalog.discovered_types(path)
    assert words in str(light.value) and str(light.value) == str(full.value)
    assert str(path) in str(light.value)
