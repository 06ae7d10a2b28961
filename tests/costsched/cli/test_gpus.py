"""`costsched gpus`: cheapest on-demand and spot price per GPU model and count, where, and
how old; one model's offerings; 80 columns; JSON."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pandas as pd
import pytest
from rich.console import Console

from costsched import catalog
from costsched.cli.gpus import summary_table
from costsched.default_hosts import other_hosts
from costsched.service.gpus import age_text, gpu_offerings, gpu_summary
from costsched.store import PriceStore
from price_collectors.base import rows_frame

NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)


@pytest.fixture(autouse=True)
def _own_default_store(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """`gpu_summary(None)` opens the default store: one of the test's own, never the
    user's."""
    monkeypatch.setenv("COSTSCHED_DB", str(tmp_path / "default.db"))


def spot_row(price: float, at: datetime) -> tuple:
    spec = catalog.require("aws", "g5.xlarge")
    return ("aws", "us-west-2", "us-west-2b", "g5.xlarge", "spot", "linux", "A10G", 1,
            int(spec["vcpus"]), float(spec["memory_gb"]), price, at)


def test_one_row_per_gpu_and_count_from_list_prices_and_the_spot_snapshot() -> None:
    frame = gpu_summary(None, NOW)
    assert not frame.duplicated(["gpu_model", "gpu_count"]).any()
    v100 = frame[(frame["gpu_model"] == "V100") & (frame["gpu_count"] == 1)].iloc[0]
    listed = catalog.on_demand_prices()
    cheapest = listed[(listed["gpu_model"] == "V100") & (listed["gpu_count"] == 1)
                      & listed["retired"].isna()  # on its default host, as V100:1 alone gets it
                      & ~other_hosts(listed["instance_type"])]["usd_per_hour"].min()
    assert v100["on_demand_usd_per_hour"] == cheapest
    assert v100["spot_usd_per_hour"] == 0.6929  # the snapshot's us-east-1 p3.2xlarge
    assert v100["spot_where"] == "aws us-east-1 p3.2xlarge"
    assert v100["spot_age_days"] == pytest.approx((NOW - datetime(
        2025, 5, 1, tzinfo=timezone.utc)).days)


def test_a_collected_price_wins_and_is_young(store: PriceStore) -> None:
    store.ingest(rows_frame([spot_row(0.30, datetime(2026, 10, 31, 21, tzinfo=timezone.utc))],
                            "collect:test"))
    frame = gpu_summary(store, NOW)
    a10g = frame[(frame["gpu_model"] == "A10G") & (frame["gpu_count"] == 1)].iloc[0]
    assert a10g["spot_usd_per_hour"] == 0.30
    assert a10g["spot_where"] == "aws us-west-2b g5.xlarge"
    assert age_text(a10g["spot_age_days"]) == "3 h"


def test_one_models_offerings_fewest_gpus_then_cheapest() -> None:
    frame = gpu_offerings(None, "nvidia-tesla-v100", NOW)
    assert set(frame["gpu_model"]) == {"V100"}
    assert frame["gpu_count"].is_monotonic_increasing
    ones = frame[frame["gpu_count"] == 1]["usd_per_hour"]
    assert ones.is_monotonic_increasing and set(frame["market"]) == {"on_demand", "spot"}


def test_the_table_fits_80_columns() -> None:
    console = Console(width=80, record=True)
    console.print(summary_table(gpu_summary(None, NOW)))
    lines = console.export_text().splitlines()
    assert max(len(line) for line in lines) <= 80
    assert any(line.lstrip().startswith("H100:8") for line in lines)


def test_cli_table_json_and_a_bad_gpu(cli) -> None:  # noqa: ANN001
    out = cli("gpus", "--at", "2026-11-01").stdout
    assert "A100:8" in out and " mo" in out and "costsched collect" in out
    rows = json.loads(cli("gpus", "A100", "--json", "--at", "2026-11-01").stdout)["rows"]
    assert rows and {r["gpu_model"] for r in rows} == {"A100"}
    bad = cli("gpus", "Z9000")
    assert bad.exit_code == 2 and "unknown GPU model 'Z9000'" in bad.output


CLOCK = "2026-11-28"  # the test's clock, never the machine's: 4 months after the newest


def test_with_nothing_collected_modern_shapes_have_a_young_spot_price_and_two_ages(
        cli) -> None:  # noqa: ANN001
    rows = json.loads(cli("gpus", "--json", "--at", CLOCK).stdout)["rows"]
    shapes = {(r["gpu_model"], r["gpu_count"]): r for r in rows}
    for shape in [("H100", 1), ("H100", 8), ("A100-80GB", 8), ("L4", 1)]:
        row = shapes[shape]
        assert row["spot_usd_per_hour"] > 0 and row["spot_age_days"] < 365, shape
        assert not row["spot_superseded"]
    for row in rows:  # each market's own age, none where it has no price
        for market in ("on_demand", "spot"):
            assert (row[f"{market}_age_days"] is None) == (row[f"{market}_usd_per_hour"] is None)
    h100 = shapes[("H100", 8)]  # on-demand read 2026-08 (AWS), spot 2026-07-30 (GCP)
    assert h100["on_demand_where"].startswith("aws") and h100["spot_where"].startswith("gcp")
    assert h100["on_demand_age_days"] == pytest.approx(119)
    assert h100["spot_age_days"] == pytest.approx(121)
    header = next(line for line in cli("gpus", "--at", CLOCK).stdout.splitlines()
                  if "on-demand" in line)
    assert header.split().count("age") == 2


def test_the_superseded_h100_8_row_no_longer_ranks_as_current(cli) -> None:  # noqa: ANN001
    rows = json.loads(cli("gpus", "H100", "--json", "--at", CLOCK).stdout)["rows"]
    eights = [r for r in rows if r["gpu_count"] == 8]
    west = [i for i, r in enumerate(eights) if r["region"] == "us-west-1"
            and r["market"] == "on_demand"]
    assert len(west) == 1 and eights[west[0]]["superseded"]
    assert eights[west[0]]["usd_per_hour"] == 122.9
    assert all(not r["superseded"] for r in eights[:west[0]])  # every current one before
    assert [r["superseded"] for r in eights] == sorted(r["superseded"] for r in eights)
    summary = {(r["gpu_model"], r["gpu_count"]): r for r in json.loads(
        cli("gpus", "--json", "--at", CLOCK).stdout)["rows"]}[("H100", 8)]
    assert summary["on_demand_where"] == "aws us-east-1 p5.48xlarge"
    assert summary["on_demand_usd_per_hour"] == 55.04 and not summary["on_demand_superseded"]
    text = cli("gpus", "H100", "--at", CLOCK, "--top", "100").stdout
    assert "19 mo!" in text and "superseded" in text
    # Before the cut reached the bundled data (2025-10), the same price was current.
    before = json.loads(cli("gpus", "H100", "--json", "--at", "2025-07-01").stdout)["rows"]
    assert not [r for r in before if r["region"] == "us-west-1"][0]["superseded"]


def test_an_offering_over_quota_is_marked_with_the_request_to_make(
        cli, store: PriceStore) -> None:  # noqa: ANN001
    spec = catalog.require("aws", "p3.2xlarge")
    at = datetime(2026, 10, 31, 21, tzinfo=timezone.utc)
    store.ingest(rows_frame([("aws", region, f"{region}a", "p3.2xlarge", "spot", "linux",
                              "V100", 1, int(spec["vcpus"]), float(spec["memory_gb"]), price,
                              at) for region, price in (("us-east-1", 0.05),
                                                        ("us-west-2", 0.06))], "collect:test"))
    store.quotas.record("aws", pd.DataFrame([
        {"scope": region, "code": "L-7212CCBC", "name": "All P Spot Instance Requests",
         "unit": "vCPUs", "limit": limit, "used": 0.0, "source": "test"}
        for region, limit in (("us-east-1", 0.0), ("us-west-2", 96.0))]), at=at)
    blocked = "quota 0 of 8 vCPUs: request L-7212CCBC in us-east-1"
    offerings = gpu_offerings(store, "V100", NOW)
    spot = offerings[(offerings["market"] == "spot") & (offerings["gpu_count"] == 1)]
    assert spot[["region", "quota"]].head(2).values.tolist() == [["us-east-1", blocked],
                                                                 ["us-west-2", ""]]
    # Quotas not read (the on-demand one here) change nothing.
    assert set(offerings.loc[offerings["market"] == "on_demand", "quota"]) == {""}
    v100 = gpu_summary(store, NOW).set_index(["gpu_model", "gpu_count"]).loc[("V100", 1)]
    assert (v100["spot_where"], v100["spot_quota"]) == ("aws us-east-1a p3.2xlarge", blocked)
    assert v100["on_demand_quota"] == ""

    summary = cli("gpus", "--at", NOW.isoformat()).stdout
    assert any(line.lstrip().startswith("V100:1") and "aws us-east-1a*" in line
               for line in summary.splitlines())
    assert "* over quota: the account's quota, as last read, does not hold" in summary
    listed = cli("gpus", "V100", "--at", NOW.isoformat(), "--top", "3")
    assert "aws us-east-1a *" in listed.stdout
    assert (f"* over quota: aws us-east-1a p3.2xlarge spot: {blocked}"
            in " ".join(listed.stdout.split()))
    rows = json.loads(cli("gpus", "V100", "--json", "--at", NOW.isoformat()).stdout)["rows"]
    assert rows[0]["quota"] == blocked


def test_a_cut_offerings_table_names_the_top_that_shows_all(cli) -> None:  # noqa: ANN001
    """'97 offerings priced, 20 shown ...; --top 97 shows all', and that --top does."""
    import re

    cut = " ".join(cli("gpus", "L4", "--at", "2026-11-01").stdout.split())  # title wraps
    found = re.search(r"L4: (\d+) offerings priced as of 2026-11-01 00:00 UTC, 20 shown .*; "
                      r"(--top (\d+)) shows all", cut)
    assert found and found.group(1) == found.group(3), cut
    every = " ".join(cli("gpus", "L4", "--at", "2026-11-01", *found.group(2).split())
                     .stdout.split())
    assert f"{found.group(1)} offerings priced as of 2026-11-01 00:00 UTC, {found.group(1)} " \
        "shown" in every
    assert "shows all" not in every


@pytest.mark.parametrize("quick", [True, False])
def test_model_colon_count_as_the_table_writes_it_lists_that_counts_offerings(
        cli, monkeypatch: pytest.MonkeyPatch, quick: bool) -> None:  # noqa: ANN001
    if not quick:  # no stored prices the quick path can read: the service's (pandas) path
        from costsched.service import glance

        monkeypatch.setattr(glance, "stored_gpu_prices", lambda *a, **k: None)
    every = json.loads(cli("gpus", "T4", "--json", "--at", CLOCK).stdout)["rows"]
    ones = json.loads(cli("gpus", "T4:1", "--json", "--at", CLOCK).stdout)["rows"]
    assert {r["gpu_count"] for r in every} > {1}
    assert ones == [r for r in every if r["gpu_count"] == 1] and ones
    assert "T4: " in cli("gpus", "t4:1", "--at", CLOCK).stdout
    none = cli("gpus", "T4:3", "--at", CLOCK)
    assert none.exit_code == 2 and "no T4:3 offering is priced" in none.output
    assert "T4 comes in counts 1, " in none.output
    bad = cli("gpus", "T4:x")
    assert bad.exit_code == 2 and "expected GPU or GPU:COUNT" in bad.output


def test_prices_asked_before_any_is_known_say_so_and_the_oldest(cli) -> None:  # noqa: ANN001
    from costsched.bundled_prices import as_of_time

    oldest = as_of_time(catalog.on_demand_prices()["as_of"].min())  # 2020-03: K80's
    for args, what in ((["--at", "2019-01-01"], "No price is known"),
                       (["V100", "--at", "2019-01-01"], "No price of V100 is known")):
        result = cli("gpus", *args)
        assert result.exit_code == 0, result.output
        assert result.output.count("\n") == 1, result.output  # one line, no empty table
        assert result.output.startswith(f"{what} as of 2019-01-01 00:00 UTC: the oldest "
                                        f"price known is of {oldest:%Y-%m-%d %H:%M} UTC")


def test_the_title_says_the_time_asked(cli) -> None:  # noqa: ANN001
    result = cli("gpus", "--at", "2025-06-01")
    assert "Cheapest price per GPU model and count, as of 2025-06-01 00:00 UTC" in result.output
    assert "offerings priced as of 2025-06-01 00:00 UTC, " in cli("gpus", "V100", "--at",
                                                                 "2025-06-01").output
    assert "Cheapest price per GPU model and count, now" in cli("gpus").output


def test_a_time_to_come_is_said_to_be_priced_at_the_newest_prices_known(cli) -> None:  # noqa: ANN001
    """`--at` after now: a note that no price is known for it (the newest known are used);
    none for a time past."""
    note = "is after now: no price is known for a time to come, so these are the newest " \
        "prices known now"
    later = cli("gpus", "--at", "2099-01-01")
    assert later.exit_code == 0 and note in " ".join(later.stderr.split())
    assert note not in " ".join(cli("gpus", "--at", "2024-01-01").stderr.split())


def test_a_model_with_no_price_names_the_close_ones_and_a_way_to_price_it(cli) -> None:  # noqa: ANN001
    """L40 is known but no catalog instance type has it: a collect would not price it, so
    the line says what finds its types, and the priced names close to it, in one line."""
    result = cli("gpus", "l40")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == (
        "No price of L40 is known: costsched's catalog has no instance type with L40 "
        "(`costsched catalog refresh` finds new GPU instance types); did you mean 'L40S'?")
    azure = cli("gpus", "l4", "--cloud", "azure").output.splitlines()[-1]
    assert azure.startswith("No price of L4 in azure is known: costsched's catalog has no "
                            "instance type with L4 in azure (`costsched catalog refresh "
                            "--cloud azure` finds new GPU instance types)"), azure


def test_an_accelerator_tasks_know_but_the_catalog_has_not_is_not_called_unknown(cli) -> None:  # noqa: ANN001
    """A task's RTX4090 is refused as "the catalog has no instance type with it (`costsched
    gpus` lists them)": `gpus RTX4090` says the same, not "unknown GPU model"."""
    result = cli("gpus", "rtx4090")
    assert result.exit_code == 0, result.output
    assert " ".join(result.output.split()).startswith(
        "No price of RTX4090 is known: costsched's catalog has no instance type with RTX4090 "
        "(`costsched catalog refresh` finds new GPU instance types; the GPU models it has: "
        "K80, "), result.output


@pytest.mark.parametrize(("written", "meant"), [("h100x8", "H100:8"), ("8xA100", "A100:8"),
                                                ("t4-x4", "T4:4")])
def test_a_count_written_into_the_name_gets_the_model_count_form(cli, written: str,  # noqa: ANN001
                                                                 meant: str) -> None:
    result = cli("gpus", written)
    assert result.exit_code == 2
    assert f"did you mean {meant!r}? (a count is written MODEL:COUNT)" in " ".join(
        result.output.split())
    assert cli("gpus", meant).exit_code == 0


@pytest.mark.parametrize(("written", "meant"), [("a10g:one", "A10G:1"), ("t4:four", "T4:4"),
                                                ("t4:x4", "T4:4"), ("a10x:one", "A10:1")])
def test_a_count_that_is_no_number_gets_the_model_count_form(cli, written: str,  # noqa: ANN001
                                                             meant: str) -> None:
    result = cli("gpus", written)
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert f"'{written}': expected GPU or GPU:COUNT" in said
    assert f"did you mean {meant!r}" in said
    assert cli("gpus", meant).exit_code == 0  # the hint works


def test_an_offering_is_named_as_plan_names_it_and_migrate_to_takes_it(cli) -> None:  # noqa: ANN001
    """GCP's GPUs attach to a machine type: the table names the two together, as `plan`
    and `migrate --to` do; `--to` takes the machine type alone where one GPU attaches to
    it in that place."""
    from costsched.service.decide import OfferingName, _find_named

    shown = cli("gpus", "T4", "--top", "200", "--at", CLOCK)
    assert shown.exit_code == 0, shown.output
    gcp = [line.split() for line in shown.stdout.splitlines() if " gcp " in line]
    assert gcp and {row[-1] for row in gcp} >= {"n1-standard-4+1xnvidia-tesla-t4"}
    frame = pd.DataFrame({
        "cloud": "gcp", "region": "us-central1", "zone": "", "market": "on_demand",
        "instance_type": ["n1-standard-4+1xnvidia-tesla-t4", "n1-standard-8+1xnvidia-tesla-t4",
                          "n1-standard-8+1xnvidia-tesla-v100"]})
    assert _find_named(frame, OfferingName("gcp", "us-central1", "n1-standard-4",
                                           "on_demand"), NOW) == 0
    with pytest.raises(ValueError, match="did you mean 'n1-standard-8\\+1xnvidia-tesla-t4' "
                                         "or 'n1-standard-8\\+1xnvidia-tesla-v100'"):
        _find_named(frame, OfferingName("gcp", "us-central1", "n1-standard-8", "on_demand"),
                    NOW)
