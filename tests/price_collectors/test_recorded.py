"""Importing the recorded dispa2020 logs, the export format, and bad input."""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from click.testing import Result
from typer.testing import CliRunner

from costsched.store import PriceStore
from price_collectors import recorded

AWS_SPOT_ROWS = 15_905  # distinct (zone, type, product, timestamp) in dispa2020/aws/cost


def raw_aws_rows(dispa: Path) -> pd.DataFrame:
    """Every row of the recorded AWS bodies, read with nothing but json."""
    rows = []
    for path in sorted((dispa / "aws" / "cost").rglob("*.json")):
        rows.extend(json.loads(path.read_text())["SpotPriceHistory"])
    frame = pd.DataFrame(rows)
    frame["Timestamp"] = pd.to_datetime(frame["Timestamp"], utc=True)
    frame["SpotPrice"] = frame["SpotPrice"].astype(float)
    return frame


def azure_cells(dispa: Path) -> int:
    count = 0
    for path in (dispa / "azure" / "cost").glob("*.csv"):
        with path.open() as fh:
            for row in list(csv.reader(fh))[1:]:
                count += sum(1 for cell in row[1:] if cell.strip())
    return count


def test_import_all_of_dispa2020(dispa: Path, any_store: PriceStore) -> None:
    store = any_store  # SQLite and PostgreSQL
    parsed = recorded.read_paths([dispa / "aws" / "cost", dispa / "azure"])
    assert parsed.errors == []
    result = store.ingest(parsed.observations())
    stored = store.history()
    aws = stored[stored["cloud"] == "aws"]
    assert len(aws) == AWS_SPOT_ROWS
    raw = raw_aws_rows(dispa)
    distinct = raw.drop_duplicates(["AvailabilityZone", "InstanceType", "ProductDescription",
                                    "Timestamp"])
    assert len(distinct) == AWS_SPOT_ROWS
    azure = stored[stored["cloud"] == "azure"]
    assert len(azure) == azure_cells(dispa)
    assert set(azure["region"]) == {"eastus", "northcentralus", "southcentralus"}
    assert set(azure["instance_type"]) >= {"Standard_NC6", "Standard_NC6s_v3", "Standard_NC24rs_v3"}
    assert result.inserted == len(stored)
    # Importing again adds nothing.
    again = store.ingest(recorded.read_paths([dispa / "aws" / "cost", dispa / "azure"])
                         .observations())
    assert again.inserted == 0 and again.unchanged == result.total


def test_recorded_values_and_offerings(dispa: Path, recorded_store: PriceStore) -> None:
    raw = raw_aws_rows(dispa)
    row = raw.iloc[0]
    got = recorded_store.history(zone=row["AvailabilityZone"], instance_type=row["InstanceType"])
    match = got[got["effective_at"] == row["Timestamp"]]
    assert match["usd_per_hour"].tolist() == [row["SpotPrice"]]
    v100 = recorded_store.offerings(instance_type="p3.8xlarge").iloc[0]
    assert (v100["gpu_model"], v100["gpu_count"], v100["market"], v100["os"]) == (
        "V100", 4, "spot", "linux")
    nc24 = recorded_store.offerings(instance_type="Standard_NC24s_v3").iloc[0]
    assert (nc24["gpu_model"], nc24["gpu_count"], nc24["zone"]) == ("V100", 4, "")


@pytest.fixture(scope="module")
def aws_imported(dispa: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Result]:
    """dispa2020/aws/cost imported by `costsched prices import --json` into a new store of
    COSTSCHED_DB, once for the tests that start from it (seconds of CPU each time): the
    store, and what the command gave. Each test works on a copy (`copied`)."""
    from costsched.cli import app
    from costsched.cli.common import console, err_console

    path = tmp_path_factory.mktemp("aws-imported") / "prices.sqlite"
    PriceStore(str(path)).dispose()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COSTSCHED_DB", str(path))
        patch.setattr(console, "width", 200)
        patch.setattr(err_console, "width", 200)
        result = CliRunner().invoke(app, ["prices", "import", str(dispa / "aws" / "cost"),
                                          "--json"], catch_exceptions=False)
    return path, result


def copied(source: Path, path: Path) -> None:
    """The store at `source`, copied over the one at `path`."""
    with sqlite3.connect(source) as origin, sqlite3.connect(path) as copy:
        origin.backup(copy)
    origin.close()
    copy.close()


def test_cli_import_twice_says_nothing_new(dispa: Path, cli, db_path: Path,
                                           aws_imported: tuple[Path, Result]) -> None:
    imported, first = aws_imported
    assert first.exit_code == 0, first.output
    summary = json.loads(first.stdout)
    assert summary["inserted"] == AWS_SPOT_ROWS and summary["errors"] == []
    copied(imported, db_path)
    second = cli("prices", "import", dispa / "aws" / "cost")
    assert second.exit_code == 0
    assert f"0 new rows, {summary['read']:,} unchanged" in second.stdout


def test_show_as_of_matches_the_recorded_value(dispa: Path, cli, db_path: Path,
                                              aws_imported: tuple[Path, Result]) -> None:
    imported, first = aws_imported
    assert first.exit_code == 0
    copied(imported, db_path)
    at = pd.Timestamp("2020-03-01T00:00Z")
    result = cli("prices", "show", "--at", "2020-03-01T00:00Z", "--gpu", "V100",
                 "--market", "spot", "--top", "0", "--json")
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    raw = raw_aws_rows(dispa)
    raw = raw[raw["InstanceType"].str.startswith("p3.") & (raw["Timestamp"] <= at)]
    expected = (raw.sort_values("Timestamp").groupby(["AvailabilityZone", "InstanceType"])
                .last()["SpotPrice"].to_dict())
    got = {(r["zone"], r["instance_type"]): r["usd_per_hour"] for r in shown}
    assert got == expected
    assert len(got) > 10
    assert all(r["market"] == "spot" and r["gpu_model"] == "V100" for r in shown)
    per_gpu = [r["usd_per_gpu_hour"] for r in shown]
    assert per_gpu == sorted(per_gpu)
    p3 = next(r for r in shown if r["instance_type"] == "p3.2xlarge"
              and r["region"] == "us-east-1")
    assert p3["on_demand_usd_per_hour"] == pytest.approx(3.06)
    assert p3["spot_discount"] == pytest.approx(1 - p3["usd_per_hour"] / 3.06)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_export_round_trip_is_lossless(recorded_store: PriceStore, tmp_path: Path,
                                       suffix: str) -> None:
    path = tmp_path / f"export{suffix}"
    original = recorded_store.observations()
    recorded.write_export(original, path)
    parsed = recorded.read_paths([path])
    assert parsed.errors == []
    copy = PriceStore(str(tmp_path / "copy.sqlite"))
    assert copy.ingest(parsed.observations()).inserted == len(original)
    key = ["cloud", "region", "zone", "instance_type", "market", "os", "effective_at"]
    left = original.sort_values(key, ignore_index=True)
    right = copy.observations().sort_values(key, ignore_index=True)
    pd.testing.assert_frame_equal(left, right, check_dtype=False)


# --- bad input ---------------------------------------------------------------------------


def spot_body(rows: list[dict]) -> str:
    return json.dumps({"NextToken": "", "SpotPriceHistory": rows})


def spot_row(**overrides: str) -> dict:
    row = {"AvailabilityZone": "us-east-1b", "InstanceType": "p3.2xlarge",
           "ProductDescription": "Linux/UNIX", "SpotPrice": "1.0", "Timestamp":
           "2020-02-20T22:06:16.000Z"}
    row.update(overrides)
    return row


@pytest.fixture()
def bad_dir(tmp_path: Path, dispa: Path) -> Path:
    """One valid recorded file beside one bad file of each kind."""
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(dispa / "aws" / "cost" / "us-east-1" / "p3.2xlarge.json", folder / "good.json")
    text = (dispa / "aws" / "cost" / "us-east-1" / "p2.xlarge.json").read_text()
    (folder / "truncated.json").write_text(text[: len(text) // 2])
    (folder / "header.csv").write_text("Day,NC6\n2/24/2020,$0.1\n")
    (folder / "negative.json").write_text(spot_body([spot_row(), spot_row(SpotPrice="-0.5")]))
    (folder / "words.json").write_text(spot_body([spot_row(SpotPrice="cheap")]))
    (folder / "unknown.json").write_text(spot_body([spot_row(), spot_row(),
                                                    spot_row(InstanceType="x9.mega")]))
    (folder / "us_east.csv").write_text("Date,NC6,NC6s v3\n2/24/2020,$0.12,-$1\n")
    return folder


EXPECTED_ERRORS = {
    "truncated.json": "not valid JSON (line",
    "header.csv": "unexpected CSV header 'Day,NC6'",
    "negative.json": "row 2: SpotPrice '-0.5': expected a positive number",
    "words.json": "row 1: SpotPrice 'cheap': expected a positive number",
    "unknown.json": "row 3: unknown aws instance type 'x9.mega'",
    "us_east.csv": "row 2: NC6s v3 '-$1': expected a positive number",
}


def test_each_bad_file_gets_one_line_and_the_good_one_is_imported(
    bad_dir: Path, dispa: Path, cli
) -> None:
    result = cli("prices", "import", bad_dir)
    assert result.exit_code == 1
    lines = [line for line in result.stderr.splitlines()
             if line.strip() and not line.startswith("creating the store")]
    assert len(lines) == len(EXPECTED_ERRORS), result.stderr
    for name, expected in EXPECTED_ERRORS.items():
        line = next(line for line in lines if f"{bad_dir / name}" in line)
        assert expected in line, line
    assert "Traceback" not in result.output
    good = len(json.loads((dispa / "aws/cost/us-east-1/p3.2xlarge.json").read_text())
               ["SpotPriceHistory"])
    assert f"{good:,} new rows" in result.stdout


def test_bad_files_leave_stored_rows_untouched(bad_dir: Path, store: PriceStore) -> None:
    store.ingest(recorded.read_paths([bad_dir / "good.json"]).observations())
    before = store.history()
    parsed = recorded.read_paths([p for p in bad_dir.iterdir() if p.name != "good.json"])
    assert parsed.files == 0 and len(parsed.errors) == len(EXPECTED_ERRORS)
    assert store.ingest(parsed.observations()).inserted == 0
    pd.testing.assert_frame_equal(before, store.history())


def test_unreadable_paths(tmp_path: Path) -> None:
    (tmp_path / "folder.json").mkdir()  # a directory where a file is expected
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00garbage")
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "dangling.json").symlink_to(tmp_path / "gone.json")
    parsed = recorded.read_paths([tmp_path / "folder.json", tmp_path / "binary.json",
                                  tmp_path / "notes.txt", tmp_path / "dangling.json"])
    messages = "\n".join(parsed.errors)
    assert f"{tmp_path / 'binary.json'}: cannot read: not UTF-8 text" in messages
    assert f"{tmp_path / 'notes.txt'}: unknown kind of file: expected .json, .csv, .parquet" \
        in messages
    assert f"{tmp_path / 'dangling.json'}: cannot read: no such file" in messages
    assert parsed.files == 0
    # A directory named like a file is walked like any directory: nothing in it.
    assert len(parsed.errors) == 3


def test_bad_export_rows_name_the_row(tmp_path: Path, recorded_store: PriceStore) -> None:
    frame = recorded_store.observations().head(5).copy()
    frame["effective_at"] = frame["effective_at"].dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    frame.loc[3, "market"] = "reserved"
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    parsed = recorded.read_paths([path])
    assert parsed.errors == [
        f"{path}: row 5: market 'reserved': expected one of on-demand, spot, "
        "capacity-block, flex-start, reservation; did you mean 'reservation'?"]


def test_an_export_takes_markets_as_users_write_them(tmp_path: Path,
                                                     recorded_store: PriceStore) -> None:
    """'on-demand' (as every table writes it) or 'on_demand' (as JSON and exports do): the
    same market, stored as 'on_demand'."""
    frame = recorded_store.observations().head(2).copy()
    frame["effective_at"] = frame["effective_at"].dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    frame["market"] = ["On-Demand", "on_demand"]
    path = tmp_path / "typed.csv"
    frame.to_csv(path, index=False)
    parsed = recorded.read_paths([path])
    assert parsed.errors == []
    assert parsed.observations()["market"].tolist() == ["on_demand", "on_demand"]


def test_azure_region_names() -> None:
    assert recorded.azure_region("us_east") == "eastus"
    assert recorded.azure_region("us_south_central") == "southcentralus"
    assert recorded.azure_region("us_east_2") == "eastus2"
    assert recorded.azure_region("eu_west") == "westeurope"
    assert recorded.azure_region("westus2") == "westus2"
    with pytest.raises(ValueError, match="expected an Azure region"):
        recorded.azure_region("moon_base")
    assert recorded.azure_sku("NC24rs v3") == "Standard_NC24rs_v3"


def test_spot_zones_give_their_region_as_the_clouds_module_says() -> None:
    zones = ["us-east-1b", "us-gov-west-1a", "us-iso-east-1c", "us-isob-east-1a"]
    frame = recorded.spot_history_frame([spot_row(AvailabilityZone=z) for z in zones],
                                        source="test", path="body.json")
    assert frame["region"].tolist() == ["us-east-1", "us-gov-west-1", "us-iso-east-1",
                                        "us-isob-east-1"]
    assert frame["zone"].tolist() == zones
    with pytest.raises(ValueError, match="row 1: AvailabilityZone 'us-east1-b': expected a zone"):
        recorded.spot_history_frame([spot_row(AvailabilityZone="us-east1-b")], source="test",
                                    path="body.json")


EXPORT_HEADER = ("cloud,region,zone,instance_type,market,os,gpu_model,gpu_count,vcpus,"
                 "memory_gb,usd_per_hour,effective_at,source\n")


def _export_row(at: pd.Timestamp) -> str:
    return (f"aws,us-west-2,us-west-2a,g4dn.xlarge,spot,linux,T4,1,4,16,0.15,"
            f"{at:%Y-%m-%dT%H:%M:%SZ},me\n")


def test_a_price_dated_in_the_future_is_refused_naming_its_row(tmp_path: Path, cli) -> None:  # noqa: ANN001
    now = pd.Timestamp.now(tz="UTC")
    path = tmp_path / "future.csv"
    path.write_text(EXPORT_HEADER + _export_row(now - pd.Timedelta(days=1))
                    + _export_row(now + pd.Timedelta(days=180)))
    history = tmp_path / "ahead.json"
    history.write_text(spot_body([spot_row(), spot_row(Timestamp="2100-01-01T00:00:00.000Z")]))
    parsed = recorded.read_paths([path, history])
    assert parsed.files == 0
    [csv_error, json_error] = parsed.errors
    assert csv_error.startswith(f"{path}: row 3: effective_at '") and "later than now (" in \
        csv_error and "not a future one" in csv_error
    assert json_error.startswith(f"{history}: row 2: effective_at ")
    result = cli("prices", "import", path)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "row 3: effective_at" in " ".join(result.stderr.split())
    assert "0 new rows" in result.stdout


def test_a_price_stamped_a_moment_ahead_by_another_clock_is_imported(tmp_path: Path) -> None:
    path = tmp_path / "skewed.csv"
    path.write_text(EXPORT_HEADER + _export_row(pd.Timestamp.now(tz="UTC")
                                                + pd.Timedelta(minutes=2)))
    parsed = recorded.read_paths([path])
    assert parsed.errors == [] and parsed.files == 1
