"""The CLI on the embedded default: bundled catalog, empty store, bad options."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

from costsched import bundled_prices, catalog


def test_catalog_json_lists_every_gpu_generation(cli) -> None:
    result = cli("catalog", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["version"] == catalog.CATALOG_VERSION
    gpus = {t["gpu_model"] for t in data["instance_types"]}
    assert {"K80", "P100", "V100", "T4", "A10G", "L4", "A100", "H100"} <= gpus
    clouds = {t["cloud"] for t in data["instance_types"]}
    assert clouds == {"aws", "gcp", "azure"}


def test_catalog_filters(cli) -> None:
    result = cli("catalog", "--gpu", "a10g", "--json")
    types = json.loads(result.stdout)["instance_types"]
    assert types and all(t["gpu_model"] == "A10G" for t in types)
    assert {t["cloud"] for t in types} == {"aws"}


def test_catalog_is_consistent() -> None:
    types = catalog.instance_types()
    listed = catalog.on_demand_prices()
    assert not types.duplicated(["cloud", "instance_type"]).any()
    # A type's list price may change: one row per month it is listed for.
    assert not listed.duplicated(["cloud", "region", "instance_type", "as_of"]).any()
    assert (listed["usd_per_hour"] > 0).all()
    assert set(types["gpu_model"]) <= set(catalog.GPU_MODELS)
    raw = pd.read_csv(catalog.resources.files("costsched.data") / "on_demand_prices.csv")
    assert len(raw) == len(catalog.on_demand_prices(include_cpu=True)), \
        "every priced type must be in instance_types.csv"
    p3 = listed[(listed["instance_type"] == "p3.2xlarge") & (listed["region"] == "us-east-1")]
    assert p3["usd_per_hour"].tolist() == [3.06]


def test_show_on_an_empty_store_uses_the_catalog(cli) -> None:
    result = cli("prices", "show", "--json", "--top", "0")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    listed = catalog.on_demand_prices().drop_duplicates(["cloud", "region", "instance_type"])
    spot = catalog.spot_observations().sort_values("effective_at").drop_duplicates(
        ["cloud", "region", "zone", "instance_type"], keep="last")  # the newest per offering
    assert len(rows) == listed["retired"].isna().sum() + len(spot)
    assert listed["retired"].isna().sum() < len(listed)
    on_demand = [r for r in rows if r["market"] == "on_demand"]
    assert {r["source"] for r in on_demand} == {catalog.CATALOG_SOURCE}
    assert {r["source"] for r in rows if r["market"] == "spot"} == set(spot["source"])
    # Current prices first, then the superseded ones, each cheapest per GPU-hour first.
    flags = [r["superseded"] for r in rows]
    assert flags == sorted(flags) and any(flags)
    for flag in (False, True):
        per_gpu = [r["usd_per_gpu_hour"] for r in rows if r["superseded"] == flag]
        assert per_gpu == sorted(per_gpu)


def test_cheapest_per_gpu(cli) -> None:
    rows = json.loads(cli("prices", "show", "--cheapest-per-gpu", "--json", "--at",
                          "2026-11-28").stdout)
    assert len(rows) == len({r["gpu_model"] for r in rows})
    when = datetime(2026, 11, 28, tzinfo=timezone.utc)
    listed = pd.concat([catalog.on_demand_observations(), catalog.spot_observations()])
    # The newest price of each place, not retired (nothing retired is offered today), and
    # current: a price its type's newer one superseded is not the cheapest.
    listed = (listed.sort_values("effective_at", kind="stable")
              .drop_duplicates(["cloud", "region", "zone", "instance_type", "market"],
                               keep="last"))
    listed = listed[~catalog.retired_mask(listed, pd.Timestamp(when))]
    listed = listed[[bundled_prices.superseded(c, t, m, e.to_pydatetime(), when) is None
                     for c, t, m, e in zip(listed["cloud"], listed["instance_type"],
                                           listed["market"], listed["effective_at"],
                                           strict=True)]]
    for r in rows:
        same = listed[listed["gpu_model"] == r["gpu_model"]]
        assert r["usd_per_gpu_hour"] == pytest.approx(
            (same["usd_per_hour"] / same["gpu_count"]).min())


def test_show_table_output(cli) -> None:
    result = cli("prices", "show", "--gpu", "V100", "--cloud", "aws", "--top", "3")
    assert result.exit_code == 0
    assert "p3." in result.stdout and "$/GPU-h" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["prices", "show", "--at", "yesterday-ish"], "--at 'yesterday-ish': expected an ISO 8601"),
        (["prices", "show", "--market", "reserved"],
         "--market 'reserved': expected one of on-demand, spot"),
        (["prices", "show", "--gpu", "V1000"], "unknown GPU model 'V1000': expected one of"),
        (["prices", "show", "--cloud", "ibm"], "--cloud 'ibm': expected one of aws, gcp, azure"),
        (["prices", "history", "--instance", "p9.huge"], "no known prices for instance type"),
        (["prices", "export", "out.xlsx"], "out.xlsx: unknown export format"),
    ],
)
def test_bad_options_give_one_line_and_exit_2(cli, args: list[str], message: str) -> None:
    result = cli(*args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output


def test_history_and_export(cli, dispa, tmp_path) -> None:
    cli("prices", "import", dispa / "aws" / "cost" / "us-west-2", "--json")
    result = cli("prices", "history", "--instance", "p2.xlarge", "--region", "us-west-2",
                 "--json")
    rows = json.loads(result.stdout)
    assert rows and {r["instance_type"] for r in rows} == {"p2.xlarge"}
    times = [r["effective_at"] for r in rows]
    assert times == sorted(times)
    out = tmp_path / "all.parquet"
    exported = json.loads(cli("prices", "export", out, "--json").stdout)
    assert exported["rows"] == len(pd.read_parquet(out)) > len(rows)


def test_stale_spot_prices_are_pointed_out(cli, dispa) -> None:
    cli("prices", "import", dispa / "aws" / "cost" / "us-west-2", "--json")
    fresh = cli("prices", "show", "--market", "spot", "--at", "2020-02-01T00:00Z")
    assert "note:" not in fresh.stdout
    late = cli("prices", "show", "--market", "spot", "--at", "2021-01-01T00:00Z")
    assert "were last observed more than 7 days before this time" in late.stdout


@pytest.mark.parametrize(
    ("cloud", "instance_type", "before", "after", "day"),
    [
        ("gcp", "n1-standard-4+1xnvidia-tesla-k80", "2024-04-30", "2024-05-01", "2024-05-01"),
        ("azure", "Standard_NC6s_v3", "2025-09-29", "2025-10-01", "2025-09-30"),
    ],
)
def test_retired_types_leave_the_catalog_fallback(cloud, instance_type, before, after,
                                                  day) -> None:
    from costsched.prices import prices_at

    def listed(at: str) -> bool:
        frame = prices_at(None, pd.Timestamp(at, tz="UTC").to_pydatetime(), clouds=[cloud])
        return instance_type in set(frame["instance_type"])

    assert listed(before)
    assert not listed(after)
    retired = catalog.instance_types().set_index(["cloud", "instance_type"])["retired"]
    assert retired[(cloud, instance_type)] == pd.Timestamp(day, tz="UTC")


def test_every_retirement_names_a_known_type_and_a_source() -> None:
    raw = pd.read_csv(catalog.resources.files("costsched.data") / "retirements.csv")
    types = catalog.instance_types()
    known = set(zip(types["cloud"], types["instance_type"], strict=True))
    assert set(zip(raw["cloud"], raw["instance_type"], strict=True)) <= known
    assert raw["source"].str.len().min() > 10
    assert pd.to_datetime(raw["retired"], format="%Y-%m-%d").notna().all()


def test_today_nothing_retired_is_offered(cli) -> None:
    rows = json.loads(cli("prices", "show", "--top", "0", "--json").stdout)
    types = catalog.instance_types()
    retired = set(types.loc[types["retired"].notna(), "instance_type"])
    assert retired and not retired & {r["instance_type"] for r in rows}


def test_history_of_a_gcp_machine_with_nothing_collected(cli) -> None:
    """The bundled 2025-12..2026-07 series of a3-highgpu-8g: spot rose in steps, on-demand
    stayed flat; each row names the commit it was read at."""
    rows = json.loads(cli("prices", "history", "--instance", "a3-highgpu-8g", "--region",
                          "us-central1", "--since", "2025-12-01", "--json").stdout)
    spot = [r for r in rows if r["market"] == "spot"]
    prices = [r["usd_per_hour"] for r in spot]
    assert prices == sorted(prices) and len(set(prices)) == len(prices) > 10  # changes only
    assert prices[0] == pytest.approx(20.390157) and prices[-1] == pytest.approx(50.609541)
    assert spot[0]["effective_at"].startswith("2025-12-04")
    assert spot[-1]["last_seen_at"].startswith("2026-07-30")
    (on_demand,) = [r for r in rows if r["market"] == "on_demand"]
    assert on_demand["usd_per_hour"] == 88.49
    assert on_demand["effective_at"].startswith("2025-12-04")
    assert on_demand["last_seen_at"].startswith("2026-07-30")
    assert all("pricing.yml (commit " in r["source"] for r in rows)
    table = cli("prices", "history", "--instance", "a3-highgpu-8g", "--region",
                "us-central1", "--wide").stdout
    assert "2026-07-22" in table and "$50.6095" in table and "seen until" in table
    # The market as every table writes it; the JSON keeps the stored spelling.
    assert " on-demand " in table and "on_demand" not in table
    stored = cli("prices", "history", "--instance", "a3-highgpu-8g", "--stored-only")
    assert stored.exit_code == 2 and "no stored prices" in stored.stderr


def test_show_gives_each_price_its_age_and_marks_superseded_ones(cli) -> None:
    rows = json.loads(cli("prices", "show", "--gpu", "H100", "--at", "2026-11-28",
                          "--top", "0", "--json").stdout)
    west = [r for r in rows if r["region"] == "us-west-1" and r["market"] == "on_demand"]
    assert west and west[0]["superseded"] and rows[-1]["superseded"]
    young = [r for r in rows if r["cloud"] == "gcp" and r["market"] == "spot"
             and r["instance_type"] == "a3-highgpu-8g"]
    assert young and all(r["age_days"] == pytest.approx(121) for r in young)
    text = cli("prices", "show", "--gpu", "H100", "--at", "2026-11-28", "--top", "0").stdout
    assert "19 mo!" in text and "superseded" in text


def test_an_import_says_which_bundled_spot_offerings_its_newer_prices_leave_out(
        cli, tmp_path) -> None:  # noqa: ANN001
    """Stored spot prices newer than a cloud's bundled ones, imported whole, stand for its
    whole spot market in plans: the import says so, with the count it leaves out and what
    reads every type."""
    from pathlib import Path

    from costsched.prices import prices_at

    demo = Path(__file__).resolve().parents[3] / "examples" / "demo" / "prices-before.csv"
    db = str(tmp_path / "p.sqlite")
    first = cli("prices", "import", demo, "--whole", "--db", db, "--new-store")
    assert first.exit_code == 0, first.output
    now = datetime.now(timezone.utc)
    bundled = prices_at(None, now, markets=["spot"], clouds=["aws"])
    # the file's zones of us-east-1 list p3.2xlarge there
    left = len(bundled) - len(bundled[(bundled["region"] == "us-east-1")
                                      & (bundled["instance_type"] == "p3.2xlarge")])
    said = " ".join(first.stdout.split())
    assert (f"note: aws spot: the stored prices are newer than the bundled ones, so plans "
            f"take them as aws's whole spot market: {left:,} bundled spot offerings they do "
            "not list") in said
    assert ("`costsched collect --cloud aws` reads every type, and `costsched prices import "
            "--partial FILE` imports a file of some of them without hiding the rest") in said
    assert "gcp spot" not in said and "azure spot" not in said  # no stored price of theirs
    again = cli("prices", "import", demo, "--db", db, "--json")  # nothing new: nothing said
    assert json.loads(again.stdout)["bundled_spot_left_out"] == []
    collect = cli("collect", "--help")
    assert collect.exit_code == 0 and "--cloud" in collect.stdout
    assert "--partial" in cli("prices", "import", "--help").stdout


def test_a_partial_import_hides_no_bundled_spot_offering_it_does_not_list(
        cli, tmp_path) -> None:  # noqa: ANN001
    """`prices import --partial`: a few quotes of one cloud replace the bundled spot prices
    of their own offerings (a type in a zone: its region's bundled price stays beside
    them), and leave the cloud's other bundled spot offerings in plans; nothing is said
    hidden."""
    from pathlib import Path


    demo = Path(__file__).resolve().parents[3] / "examples" / "demo" / "prices-before.csv"
    db = str(tmp_path / "p.sqlite")
    done = cli("prices", "import", demo, "--partial", "--db", db, "--new-store", "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["bundled_spot_left_out"] == []
    planned, place, others = _aws_spot_planned(db)
    zones = planned[place & (planned["zone"] != "")]
    assert sorted(zones["zone"]) == ["us-east-1a", "us-east-1b", "us-east-1c"]
    assert sorted(zones["usd_per_hour"]) == [0.92, 1.05, 1.1]  # the file's
    [region] = planned[place & (planned["zone"] == "")]["source"]
    assert str(region).startswith("catalog")  # the region's own offering, as bundled
    assert len(others) > 10 and len(planned[~place]) == len(others)  # all still offered


def _aws_spot_planned(db: str) -> tuple[pd.DataFrame, pd.Series, pd.DataFrame]:
    """aws's spot prices as plans read them from the store at `db` now, which of them are
    at the demo file's place (us-east-1 p3.2xlarge), and the bundled ones elsewhere."""
    from costsched.prices import prices_at
    from costsched.store import PriceStore

    now = datetime.now(timezone.utc)
    bundled = prices_at(None, now, markets=["spot"], clouds=["aws"])
    store = PriceStore(db)
    try:
        planned = prices_at(store, now, markets=["spot"], clouds=["aws"])
    finally:
        store.dispose()
    place = (planned["region"] == "us-east-1") & (planned["instance_type"] == "p3.2xlarge")
    others = bundled[~((bundled["region"] == "us-east-1")
                       & (bundled["instance_type"] == "p3.2xlarge"))]
    return planned, place, others


def test_a_file_imported_whole_is_taken_back_by_importing_it_again_as_partial(
        cli, tmp_path) -> None:  # noqa: ANN001
    """The way back from an import with `--whole`: the same file imported again with `--partial`
    marks its stored prices as a partial update, so the bundled spot offerings it hid are
    planned again; the import says how many it marked, and plan's words follow."""
    from pathlib import Path


    demo = Path(__file__).resolve().parents[3] / "examples" / "demo" / "prices-before.csv"
    db = str(tmp_path / "p.sqlite")
    whole = cli("prices", "import", demo, "--whole", "--db", db, "--new-store")
    assert whole.exit_code == 0, whole.output
    said = " ".join(whole.stdout.split())
    assert "importing a file again with it brings back what that file hid" in said
    again = cli("prices", "import", demo, "--partial", "--db", db)
    assert again.exit_code == 0, again.output
    said = " ".join(again.stdout.split())
    assert ("0 new rows, 3 unchanged (3 of them marked as a partial update: they no longer "
            "stand for their cloud's whole spot market)") in said
    assert "note: aws spot" not in said  # nothing is hidden any more
    planned, place, others = _aws_spot_planned(db)
    assert len(others) > 10 and len(planned[~place]) == len(others)
    zones = planned[place & (planned["zone"] != "")]
    assert sorted(zones["usd_per_hour"]) == [0.92, 1.05, 1.1]  # the file's, kept
    third = json.loads(cli("prices", "import", demo, "--partial", "--db", db, "--json").stdout)
    assert third["marked_partial"] == 0 and third["bundled_spot_left_out"] == []


def test_an_import_says_only_what_its_own_clouds_prices_leave_out(cli, tmp_path) -> None:  # noqa: ANN001
    """After aws's market was imported whole, a gcp file's import does not repeat aws's
    note: each import speaks of the clouds it read."""
    from pathlib import Path

    demo = Path(__file__).resolve().parents[3] / "examples" / "demo" / "prices-before.csv"
    db = str(tmp_path / "p.sqlite")
    first = cli("prices", "import", demo, "--whole", "--db", db, "--new-store")
    assert "note: aws spot" in " ".join(first.stdout.split())
    when = (datetime.now(timezone.utc) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    gcp = tmp_path / "gcp.csv"
    gcp.write_text("cloud,region,zone,instance_type,market,os,gpu_model,gpu_count,vcpus,"
                   "memory_gb,usd_per_hour,effective_at,source\n"
                   f"gcp,us-central1,,g2-standard-4,spot,linux,L4,1,4,16,0.25,{when},me\n")
    done = cli("prices", "import", gcp, "--partial", "--db", db)
    assert done.exit_code == 0, done.output
    assert "1 new row" in done.stdout and "note:" not in done.stdout
    assert json.loads(cli("prices", "import", gcp, "--db", db, "--json").stdout)[
        "clouds"] == ["gcp"]
