"""A backtest's starts lie within the stored prices: the default window never ends after
the newest price or now, a window the prices do not cover is one line saying what they
cover and how to get more, and a comparison with no run to compare is a line, not an
empty table (`backtest` and `backtest --collection`)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.model import InvalidInput, Offering, PriceObservation
from costsched.service.replay_window import Span, default_first_start, replay_starts
from costsched.store import PriceStore

V100 = Offering("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "V100", 1, 8, 61.0)
A10G = Offering("aws", "us-east-1", "us-east-1a", "g5.xlarge", "spot", "A10G", 1, 4, 16.0)
NOW = datetime.now(timezone.utc)


def priced(db: str, offering: Offering, *hours_ago: float) -> str:
    store = PriceStore(db)
    store.ingest([PriceObservation(offering, 0.9 + h / 1000, NOW - timedelta(hours=h), "test")
                  for h in hours_ago])
    store.dispose()
    return db


def backtest(db: str, *args: str):
    return CliRunner().invoke(app, ["backtest", "--db", db, "--models", "A3C", "--region",
                                    "us-east-1", "--days", "1", *args],
                              catch_exceptions=False)


def test_prices_of_today_only_are_one_line_not_a_window_in_the_future(tmp_path) -> None:
    db = priced(str(tmp_path / "p.sqlite"), V100, 6.5)
    for args in ([], ["--collection"]):
        result = backtest(db, "--starts", "2", *args)
        assert result.exit_code == 2, result.output
        line = result.output.strip()
        assert line.startswith("error: ") and "\n" not in line
        assert f"the stored prices cover {NOW - timedelta(hours=6.5):%Y-%m-%d %H:%M}" in line
        assert "too short for 2 starts 24 h apart" in line
        assert "`costsched collect`" in line and "`costsched prices import FILE`" in line
        assert "Cost reduction" not in result.output


def test_default_window_ends_at_the_newest_price_when_the_prices_are_short(tmp_path) -> None:
    # Three days of prices: too few for the starts and 3.5 job lengths after them, so the
    # window begins on their first whole day; still, its last start has a price.
    db = priced(str(tmp_path / "p.sqlite"), V100, 72, 48, 24, 1)
    result = backtest(db, "--starts", "2", "--json")
    assert result.exit_code == 0, result.output
    window = json.loads(result.output)["window"]
    first, last = (datetime.fromisoformat(window[k]) for k in ("first_start", "last_start"))
    assert (first.hour, first.minute) == (0, 0)
    assert NOW - timedelta(hours=72) <= first and last <= NOW - timedelta(hours=1)


def test_a_first_start_after_the_prices_is_refused(tmp_path) -> None:
    db = priced(str(tmp_path / "p.sqlite"), V100, 72, 1)
    later = f"{NOW + timedelta(days=1):%Y-%m-%d}"
    for args in ([], ["--collection"]):
        result = backtest(db, "--first-start", later, "--starts", "1", *args)
        assert result.exit_code == 2, result.output
        assert f"--first-start {later} 00:00: the starts asked" in result.output
        assert "not all within the prices known: the stored prices cover" in result.output


def test_prices_dated_after_now_are_not_known_yet() -> None:
    now = datetime(2026, 11, 29, 18, 41, tzinfo=timezone.utc)
    span = Span(int((now - timedelta(days=30)).timestamp()),
                int((now + timedelta(days=10)).timestamp()))
    first = default_first_start(span, 2, 24.0, 1.0, now=now)
    assert first == datetime(2026, 11, 25, tzinfo=timezone.utc)  # 3.5 days + 1 before now
    with pytest.raises(InvalidInput, match="to 2026-11-29 18:41 UTC"):
        replay_starts(span, now + timedelta(hours=1), 1, 24.0, 1.0, now=now)


def test_no_baseline_run_to_compare_is_a_line_not_an_empty_table(tmp_path) -> None:
    # No V100 is priced: static and cheapest-hourly find nothing; the others run on A10G.
    db = priced(str(tmp_path / "p.sqlite"), A10G, 100, 50, 1)
    result = backtest(db, "--starts", "1")
    assert result.exit_code == 0, result.output
    assert "┃ model ┃ region ┃\n" not in result.output
    for baseline in ("static", "cheapest-hourly"):
        assert f"No cost reduction vs {baseline} (from 1 start, " in result.output
        assert f"policy {baseline}: no offering in its scope" in result.output
        # Each policy's runs that did not replay are counted with the reason.
        assert f"{baseline}: 1 run had no usable offering, e.g.: " in result.output
    # The runs that did replay are priced, and the baselines' are counted as not replayed.
    assert "What each policy cost" in result.output
    assert "no run of" not in result.output


def test_collection_ratio_without_a_baseline_is_a_dash(tmp_path) -> None:
    db = priced(str(tmp_path / "p.sqlite"), A10G, 100, 50, 1)
    result = backtest(db, "--starts", "1", "--collection")
    assert result.exit_code == 0, result.output
    assert "nanx" not in result.output
    assert "from 1 start, " in result.output


def test_short_prices_start_where_every_start_has_a_price() -> None:
    # 30 hours of prices, 2 daily starts: the first whole day would put the last start
    # after the newest price; the prices' first time does not.
    begin = datetime(2026, 11, 28, 12, tzinfo=timezone.utc)
    span = Span(int(begin.timestamp()), int((begin + timedelta(hours=30)).timestamp()))
    now = begin + timedelta(days=5)
    assert default_first_start(span, 2, 24.0, 1.0, now=now) == begin
    assert default_first_start(span, 1, 24.0, 1.0, now=now) == datetime(
        2026, 11, 29, tzinfo=timezone.utc)  # one start: the first whole day holds it
