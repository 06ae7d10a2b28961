"""The service layer over real stores: collect, import, prices, history, export, plan,
backtest, the documented Python API, and errors that speak of values, not CLI flags."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from costsched import service
from costsched.jobspec import parse
from costsched.model import InvalidInput
from costsched.service.backtest import FIT_LENGTHS
from costsched.store import PriceStore

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
AT = "2020-03-01T00:00Z"
WINDOW = {"first_start": "2020-02-24", "starts": 2, "every_hours": 48.0}


def _message(excinfo: pytest.ExceptionInfo) -> str:
    text = str(excinfo.value)
    assert "--" not in text, f"a core error names a flag: {text}"
    return text


# --- the documented Python API -------------------------------------------------------------

def _readme_snippet() -> str:
    text = (ROOT / "docs" / "python-api.md").read_text()
    return re.search(r"```python\n(.*?)```", text, re.S).group(1)


def test_the_readme_python_api_runs(tmp_path: Path, dispa: Path) -> None:
    code = (_readme_snippet()
            .replace('"prices.sqlite"', repr(str(tmp_path / "prices.sqlite")))
            .replace('"../shared/data/dispa2020/', f'"{dispa}/')
            .replace('"examples/', f'"{EXAMPLES}/'))
    namespace: dict = {}
    exec(compile(code, "python-api.md", "exec"), namespace)  # noqa: S102 - the docs' own code
    plan, replay = namespace["plan"], namespace["replay"]
    table = plan.table
    assert list(table["job"]) == ["resnet50"] and table["reason"].tolist() == [""]
    ranking = plan.ranking("resnet50")
    assert table["offering"].iloc[0] == ranking["offering"].iloc[0]
    assert table["expected_cost"].iloc[0] == ranking["expected_cost"].min() > 0
    reductions = replay.summary.set_index("policy")["reduction"]
    assert reductions["static"] == pytest.approx(1.0)
    assert reductions["oracle"] >= reductions.drop("oracle").max() - 1e-9


def test_import_costsched_loads_no_pandas_or_sqlalchemy() -> None:
    code = ("import sys, costsched; "
            "print(sorted(m for m in ('pandas', 'sqlalchemy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
    loaded = subprocess.run([sys.executable, "-c", "import costsched; print(costsched.plan)"],
                            capture_output=True, text=True, check=True).stdout
    assert "function plan" in loaded


# --- stores, import, prices, history, export ---------------------------------------------

def test_open_store_and_using(tmp_path: Path) -> None:
    store = service.open_store(str(tmp_path / "a.sqlite"))
    assert store.revision() is not None and store.url.endswith("a.sqlite")
    with service.using(store) as same:
        assert same is store
    assert store.count() == 0  # a store passed in is not disposed of
    with service.using(str(tmp_path / "b.sqlite")) as opened:
        assert opened is not store and opened.url.endswith("b.sqlite")


def test_import_prices_reports_files_rows_and_errors(any_store: PriceStore, dispa: Path,
                                                     tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    region = dispa / "aws" / "cost" / "us-west-2"
    seen: list[tuple[int, int]] = []
    first = service.import_prices(any_store, [region, bad],
                                  progress=lambda done, total, path: seen.append((done, total)))
    assert first.files == len(list(region.glob("*.json"))) > 0
    assert first.read == first.inserted == any_store.count() > 0
    assert len(first.errors) == 1 and str(bad) in first.errors[0]
    assert seen[-1] == (first.files + 1, first.files + 1)
    again = service.import_prices(any_store, [region])
    assert again.inserted == 0 and again.unchanged == first.read and not again.errors
    assert again.store == any_store.where  # the URL, its password masked


def test_prices_filters_and_cheapest_per_gpu(recorded_store: PriceStore) -> None:
    frame = service.prices(recorded_store, AT, regions=["us-east-1"], markets=["spot"])
    assert not frame.empty
    assert set(frame["region"]) == {"us-east-1"} and set(frame["market"]) == {"spot"}
    assert frame["usd_per_gpu_hour"].is_monotonic_increasing
    cheapest = service.prices(recorded_store, AT, gpu_models=["v100", "k80"],
                              cheapest_per_gpu=True)
    assert sorted(cheapest["gpu_model"]) == ["K80", "V100"]
    v100 = service.prices(recorded_store, AT, gpu_models=["V100"])
    assert cheapest.set_index("gpu_model").loc["V100", "usd_per_gpu_hour"] == (
        v100["usd_per_gpu_hour"].min())


def test_price_history_and_export_round_trip(recorded_store: PriceStore,
                                             tmp_path: Path) -> None:
    history = service.price_history(recorded_store, "p3.2xlarge", regions=["us-east-1"],
                                    since="2020-02-01", until="2020-03-01")
    assert set(history["instance_type"]) == {"p3.2xlarge"} and len(history) > 1
    assert history["effective_at"].is_monotonic_increasing
    assert history["effective_at"].min() >= pd.Timestamp("2020-02-01", tz="UTC")
    assert "offering_id" not in history.columns
    path = tmp_path / "all.csv"
    rows = service.export_prices(recorded_store, path)
    assert rows == recorded_store.count()
    copy = service.import_prices(str(tmp_path / "copy.sqlite"), [path])
    assert copy.inserted == rows and not copy.errors


# --- collect -------------------------------------------------------------------------------

def test_regions_are_routed_by_the_clouds_region_names() -> None:
    assert service.route_regions(["us-east-1", "us-east1", "eastus2"]) == {
        "aws": ["us-east-1"], "gcp": ["us-east1"], "azure": ["eastus2"]}
    assert service.route_regions(["eastus"]) == {"azure": ["eastus"]}
    assert service.route_regions([]) == {"aws": [], "gcp": [], "azure": []}
    assert service.route_regions([], ["gcp"]) == {"gcp": []}
    with pytest.raises(InvalidInput) as excinfo:
        service.route_regions(["eastus"], ["azure", "gcp"])
    assert _message(excinfo).startswith("cloud gcp: none of the regions eastus is a gcp region")
    with pytest.raises(InvalidInput) as excinfo:
        service.route_regions(["US East"])
    assert _message(excinfo).startswith(
        "region 'US East': not a region of aws, gcp or azure: expected a name such as aws "
        "us-east-1, gcp us-central1, azure eastus; did you mean 'us-east-1'")
    with pytest.raises(InvalidInput) as excinfo:
        service.route_regions(["eastus"], ["aws"])
    assert "region 'eastus' is a region of azure" in _message(excinfo)


def test_collect_prices_from_the_loopback_azure_api(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from price_collectors.azure import ENV_URL
    from tests.price_collectors.azure_fake import PATH, RetailPrices
    from tests.price_collectors.conftest import Loopback

    with Loopback() as server:
        server.handler = RetailPrices(server.url)
        monkeypatch.setenv(ENV_URL, server.url + PATH)
        store = str(tmp_path / "p.sqlite")
        first = service.collect_prices(store, clouds=["azure"], gpus=["T4"])
        again = service.collect_prices(store, clouds=["azure"], gpus=["T4"])
    assert first.ok and first.inserted == first.clouds["azure"].collected > 0
    assert first.clouds["azure"].rejected_by_reason == {"not positive": 1}
    assert again.inserted == 0 and again.unchanged == first.inserted


def test_collect_without_credentials_is_a_per_cloud_error(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE",
                 "AWS_SESSION_TOKEN", "AWS_DEFAULT_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    summary = service.collect_prices(str(tmp_path / "p.sqlite"), clouds=["aws"])
    assert not summary.ok and summary.inserted == 0
    assert summary.clouds["aws"].error.startswith("aws: no AWS credentials found")


@pytest.mark.parametrize(("options", "start"), [
    ({"clouds": ["ibm"]}, "cloud 'ibm': expected one of aws, gcp, azure"),
    ({"workers": 0}, "workers 0: expected a whole number >= 1"),
    ({"since": "soon"}, "since 'soon': expected an ISO 8601 time"),
])
def test_collect_errors_speak_of_values(tmp_path: Path, options: dict, start: str) -> None:
    with pytest.raises(InvalidInput) as excinfo:
        service.collect_prices(str(tmp_path / "p.sqlite"), **options)
    assert _message(excinfo).startswith(start)


# --- plan ----------------------------------------------------------------------------------

def test_plan_one_job_from_a_spec_object(recorded_store: PriceStore) -> None:
    spec = parse({"name": "rec", "model": "Recommendation (batch size 2048)", "steps": 50_000,
                  "constraints": {"regions": ["us-east-1"], "markets": ["spot"]}})
    result = service.plan(recorded_store, spec, at=AT)
    assert result.ok and result.collection is None
    ranking = result.ranking("rec")
    assert set(ranking["region"]) == {"us-east-1"} and set(ranking["market"]) == {"spot"}
    assert ranking["expected_cost"].is_monotonic_increasing
    assert result.table.loc[0, "offering"] == ranking["offering"].iloc[0]
    base = result.jobs[0].baseline
    assert ranking["vs_on_demand_v100"].iloc[0] == pytest.approx(
        ranking["expected_cost"].iloc[0] / base.cost)


def test_plan_several_jobs_places_a_collection(recorded_store: PriceStore) -> None:
    files = [EXAMPLES / "resnet50.yaml", EXAMPLES / "recommendation.yaml"]
    result = service.plan(recorded_store, files, at=AT)
    assert result.ok and result.collection.feasible
    assert list(result.table["job"]) == ["resnet50", "recommendation"]
    placed = result.collection.assignment.set_index("job")["offering"]
    for row in result.table.itertuples():  # without quotas each job gets its own best
        assert placed[row.job] == row.offering


def test_plan_deadline_override_leaves_no_plan(recorded_store: PriceStore) -> None:
    result = service.plan(recorded_store, EXAMPLES / "resnet50.yaml", at=AT, deadline="2h")
    assert not result.ok
    assert "cannot meet its deadline of 2 h" in result.table.loc[0, "reason"]
    assert pd.isna(result.table.loc[0, "offering"])


@pytest.mark.parametrize(("options", "start"), [
    ({"objective": "fun"}, "objective 'fun': expected one of cost, time, tradeoff"),
    ({"deadline": "soon"}, "deadline: "),
    ({"budget": -1.0}, "budget -1.0: expected a positive amount of USD"),
    ({"weight": 2.0}, "weight 2.0: expected a number in [0, 1]"),
    ({"at": "yesterday-ish"}, "at 'yesterday-ish': expected an ISO 8601 time"),
])
def test_plan_errors_speak_of_values(tmp_path: Path, options: dict, start: str) -> None:
    with pytest.raises(InvalidInput) as excinfo:
        service.plan(str(tmp_path / "p.sqlite"), EXAMPLES / "resnet50.yaml", **options)
    assert _message(excinfo).startswith(start)


# --- backtest ------------------------------------------------------------------------------

def test_backtest_adds_both_baselines_and_summarises(recorded_store: PriceStore) -> None:
    seen: list[tuple[int, int]] = []
    result = service.backtest(recorded_store, models=["A3C"], policies=["dynamic"],
                              progress=lambda done, total: seen.append((done, total)),
                              **WINDOW)
    assert set(result.results["policy"]) == {"static", "cheapest-hourly", "dynamic"}
    assert len(result.results) == 1 * 2 * 3 == seen[-1][0] == seen[-1][1]
    assert result.window["first_start"] == pd.Timestamp("2020-02-24", tz="UTC")
    assert result.window["last_start"] == pd.Timestamp("2020-02-26", tz="UTC")
    static = result.summary.set_index("policy").loc["static", "reduction"]
    assert static == pytest.approx(1.0)
    assert result.trace_end >= result.window["last_start"]


def test_backtest_default_first_start_fits_the_trace(recorded_store: PriceStore) -> None:
    result = service.backtest(recorded_store, models=["A3C"], policies=["static"], days=2,
                              starts=3)
    first, last = result.window["first_start"], result.window["last_start"]
    assert (first.hour, first.minute) == (0, 0)
    assert last - first == pd.Timedelta(days=2)
    assert last + pd.Timedelta(days=FIT_LENGTHS * 2) <= result.trace_end


def test_backtest_job_files_keep_their_home_regions(recorded_store: PriceStore,
                                                    tmp_path: Path) -> None:
    spec = tmp_path / "jobs.yaml"
    spec.write_text("name: resnet\nmodel: ResNet-50 (batch size 128)\nsteps: 100000\n"
                    "constraints: {regions: [us-west-2]}\n")
    result = service.backtest(recorded_store, job_files=[spec], policies=["static"], **WINDOW)
    assert set(result.results["region"]) == {"us-west-2"}
    assert set(result.results["job"]) == {"resnet"}


@pytest.mark.parametrize(("options", "start"), [
    ({"days": 0.0}, "days 0.0: expected a positive number"),
    ({"starts": 0}, "starts 0: expected at least 1"),
    ({"every_hours": 0.0}, "every_hours 0.0: expected a positive number"),
    ({"margin": -1.0}, "margin -1.0: expected a number >= 0"),
    ({"policies": ["cheapest"]}, "unknown policy 'cheapest'"),
    ({"first_start": "someday"}, "first_start 'someday': expected an ISO 8601 time"),
])
def test_backtest_errors_speak_of_values(recorded_store: PriceStore, options: dict,
                                         start: str) -> None:
    with pytest.raises(InvalidInput) as excinfo:
        service.backtest(recorded_store, models=["A3C"], **{**WINDOW, **options})
    assert _message(excinfo).startswith(start)
