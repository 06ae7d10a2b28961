"""Every table fits the terminal: rendered at 80, 100 and 200 columns, no line is longer
than the page and the figures that decide are shown whole (never cut to '…'); the columns
left out at a narrow width are named, and --wide shows them."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app, common
from costsched.store import PriceStore
from tests.costsched.report.scenario import fill

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
AT = "2020-03-01T00:00Z"
WIDTHS = [80, 100, 200]
LONG_DETAIL = ("aws: EndpointConnectionError: could not connect to the endpoint URL "
               "https://pricing.us-east-1.amazonaws.com/ after 5 attempts; gcp: quota exceeded")

# Command -> (argv after the store, strings that must appear whole at every width).
ON_RECORDED = {
    "plan": (["plan", str(EXAMPLES / "resnet50.yaml"), str(EXAMPLES / "recommendation.yaml"),
              "--at", AT, "--top", "3"],
             # the collection's total: its rows as they read, $10.29 + $7.33
             ["aws us-east-1f p3.2xlarge spot", "$10.29", "10.41", "$7.33", "$17.62"]),
    "plan a sweep": (["plan", str(EXAMPLES / "sweep.yaml"), "--at", AT, "--top", "2"],
                     # the total: its six rows as they read, 6 x $8.79
                     ["transformer-sweep-6", "$8.79", "$52.74"]),
    "prices show": (["prices", "show", "--at", AT, "--top", "5", "--gpu", "V100", "--cloud",
                     "aws", "--region", "us-east-1", "--market", "spot"],
                    ["aws us-east-1b", "p3.16xlarge", "$7.3440", "$0.9180"]),
    "prices history": (["prices", "history", "--instance", "p3.2xlarge", "--since",
                        "2020-02-29", "--until", AT], ["us-east-1", "spot"]),
}


def render(argv: list[str], width: int, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(common.console, "width", width)
    result = CliRunner().invoke(app, argv, catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def assert_fits(out: str, width: int, whole: list[str]) -> None:
    long = [line for line in out.splitlines() if len(line) > width]
    assert not long, f"{len(long[0])} columns: {long[0]!r}"
    assert "…" not in out
    for text in whole:
        assert text in out, f"{text!r} not shown whole at {width} columns"
    for line in out.splitlines():  # a table's rows end on its border: nothing cut off
        if line.startswith(("│", "┃")):
            assert line.rstrip().endswith(("│", "┃")), line


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", sorted(ON_RECORDED))
def test_tables_on_recorded_prices_fit(name: str, width: int, recorded_store: PriceStore,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    argv, whole = ON_RECORDED[name]
    assert_fits(render([*argv, "--db", recorded_store.url], width, monkeypatch), width, whole)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_catalog_fits(width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    out = render(["catalog"], width, monkeypatch)
    assert_fits(out, width, ["Standard_NC24ads_A100_v4", "n1-standard-8+1xnvidia-tesla-v100",
                             "$32.7726"])
    if width == 80:
        assert "not shown: retired, as of" in out
        header = render(["catalog", "--wide"], width, monkeypatch).splitlines()[2]
        assert "retired" in header and len(header) > width  # every column, however wide


@pytest.mark.parametrize("width", WIDTHS)
def test_status_with_the_schedulers_table_fits(width: int, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "store.sqlite"
    store = PriceStore(str(db))
    at = datetime(2026, 3, 2, 6, tzinfo=timezone.utc)
    store.task_runs.finish(store.task_runs.start("replan", "host-1", at), "failed", at,
                           LONG_DETAIL)
    store.task_runs.finish(store.task_runs.start("collect", "host-1", at), "ok", at, "")
    store.dispose()
    out = render(["status", "--db", str(db)], width, monkeypatch)
    assert_fits(out, width, ["replan", "collect", "failed", "2026-03-02 06:00:00"])
    table_rows = [line for line in out.splitlines() if line.startswith("│ replan")]
    assert table_rows and "failed" in table_rows[0]  # task and result columns not collapsed


@pytest.mark.parametrize("width", WIDTHS)
def test_the_report_fits(width: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "store.sqlite"
    store = PriceStore(str(db))
    fill(store)
    store.dispose()
    out = render(["report", "--until", "2024-06-02T02:00Z", "--db", str(db)], width,
                 monkeypatch)
    assert_fits(out, width, ["$7.20", "alpha"])


@pytest.mark.parametrize("width", WIDTHS)
def test_the_backtest_fits(width: int, recorded_store: PriceStore,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    out = render(["backtest", "--models", "A3C", "--policies", "dynamic,static", "--first-start",
                  "2020-02-24", "--starts", "2", "--every-hours", "48", "--db",
                  recorded_store.url], width, monkeypatch)
    assert_fits(out, width, ["A3C", "dynamic", "static"])


@pytest.mark.parametrize("width", WIDTHS)
def test_the_deadline_backtest_fits(width: int, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from tests.costsched.backtest.deadline.traces import intervals, trace

    db = tmp_path / "store.sqlite"
    store = PriceStore(str(db))
    zones = ["us-east-1a", "us-east-1b", "us-west-2a"]
    rng = np.random.default_rng(5)
    store.spot_availability.add(intervals(trace(np.repeat(rng.random((3, 80)) < 0.6, 6,
                                                          axis=1), zones, 60)))
    store.dispose()
    out = render(["backtest-deadline", "--deadline", "2.5", "--job-hours", "2",
                  "--restart-minutes", "3", "--checkpoint-minutes", "10", "--starts", "2",
                  "--db", str(db)], width, monkeypatch)
    assert_fits(out, width, ["spot-anywhere", "uniform-progress", "optimum"])


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize(("argv", "whole"), [
    (["throughput", "show", "--model", "ResNet-50 (batch size 64)"], ["V100", "K80"]),
    (["config", "show"], ["max_sweep_jobs", "stale_after"]),
], ids=["throughput show", "config show"])
def test_throughputs_and_config_fit(argv: list[str], whole: list[str], width: int,
                                    tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_THROUGHPUTS", str(tmp_path / "throughputs.csv"))
    (tmp_path / "config.toml").write_text("")
    monkeypatch.setenv("COSTSCHED_CONFIG", str(tmp_path / "config.toml"))
    assert_fits(render(argv, width, monkeypatch), width, whole)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_collect_summary_fits(width: int, tmp_path: Path, azure_prices: object,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    out = render(["collect", "--cloud", "azure", "--new-store", "--db",
                  str(tmp_path / "store.sqlite")], width, monkeypatch)
    assert_fits(out, width, ["azure", "Stored 13 new rows", "2 rejected"])


def test_config_show_with_long_overrides_fits(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Variables as long as the demo's fold in the "from" column instead of widening it."""
    (tmp_path / "config.toml").write_text("")
    monkeypatch.setenv("COSTSCHED_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("COSTSCHED_MIGRATION_RESTART_MINUTES", "0.05")
    monkeypatch.setenv("COSTSCHED_DAEMON_AUTOSTART", "false")
    assert_fits(render(["config", "show"], 80, monkeypatch), 80, ["daemon.autostart"])
