"""One vocabulary in flags, YAML and output: names in any case, on-demand or on_demand,
"did you mean" for a name that is close to a known one, job files named the same way in
every command, and no two jobs of one submission with one name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costsched.catalog import gpu_model_name
from costsched.jobspec import parse
from costsched.model import InvalidInput
from costsched.service.values import choices
from costsched.throughput import ThroughputTable

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
WINDOW = ["--first-start", "2020-02-24", "--starts", "2", "--every-hours", "48"]


def test_flags_take_any_case_and_either_spelling_of_on_demand() -> None:
    assert choices("--cloud", ["AWS", "Gcp"], ("aws", "gcp", "azure")) == ["aws", "gcp"]
    assert choices("--market", ["on-demand", "On_Demand", "SPOT"], ("on_demand", "spot")) == [
        "on_demand", "on_demand", "spot"]
    with pytest.raises(InvalidInput, match=r"--cloud 'asw': expected one of aws, gcp, azure; "
                                           r"did you mean 'aws'\?"):
        choices("--cloud", ["asw"], ("aws", "gcp", "azure"))


def test_the_yaml_takes_the_same_words() -> None:
    spec = parse({"name": "j", "model": "A3C", "steps": 10, "precision": "FP16",
                  "constraints": {"clouds": ["AWS"], "markets": ["On-Demand", "spot"],
                                  "gpu_models": ["v100", "nvidia-tesla-t4"]}}, "j.yaml")
    assert spec.precision == "fp16"
    assert spec.constraints.clouds == ["aws"]
    assert spec.constraints.markets == ["on_demand", "spot"]
    assert spec.constraints.gpu_models == ["V100", "T4"]


@pytest.mark.parametrize(("typed", "meant"), [
    ("resnet50", "'ResNet-50 (batch size"), ("transformr", "'Transformer (batch size"),
    ("a3d", "'A3C'")])
def test_a_model_name_gets_a_did_you_mean(typed: str, meant: str) -> None:
    with pytest.raises(InvalidInput, match=rf"did you mean {meant.replace('(', r'[(]')}"):
        ThroughputTable.load().canonical(typed)


def test_a_gpu_name_gets_a_did_you_mean() -> None:
    with pytest.raises(InvalidInput, match=r"did you mean 'V100'\?"):
        gpu_model_name("V10")


def test_prices_show_takes_the_words_it_prints(cli, tmp_path: Path) -> None:  # noqa: ANN001
    db = str(tmp_path / "p.sqlite")
    assert cli("prices", "import", EXAMPLES / "demo" / "prices-before.csv", "--new-store",
               "--db", db).exit_code == 0
    shown = cli("prices", "show", "--market", "spot", "--cloud", "AWS", "--gpu", "v100",
                "--db", db, "--json")
    assert shown.exit_code == 0, shown.output
    rows = json.loads(shown.stdout)
    assert rows and {r["cloud"] for r in rows} == {"aws"}
    on_demand = cli("prices", "show", "--market", "on-demand", "--db", db, "--json")
    assert on_demand.exit_code == 0, on_demand.output


def test_two_files_naming_one_job_are_refused(cli, tmp_path: Path) -> None:  # noqa: ANN001
    other = tmp_path / "other.yaml"
    other.write_text((EXAMPLES / "resnet50.yaml").read_text())
    result = cli("plan", EXAMPLES / "resnet50.yaml", other)
    assert result.exit_code == 2
    assert f"{other}: field name: 'resnet50' is also the name of a job in" in result.output


def test_backtest_takes_job_files_as_arguments_like_plan(cli, recorded_store) -> None:  # noqa: ANN001
    spec = str(EXAMPLES / "recommendation.yaml")
    common = ["--policies", "dynamic", *WINDOW, "--db", recorded_store.url, "--json"]
    as_argument = cli("backtest", spec, *common)
    as_option = cli("backtest", "--jobs", spec, *common)
    assert as_argument.exit_code == 0, as_argument.output
    runs = json.loads(as_argument.stdout)["runs"]
    assert runs and runs == json.loads(as_option.stdout)["runs"]


def test_a_region_and_an_instance_type_get_a_did_you_mean(cli, tmp_path: Path) -> None:  # noqa: ANN001
    db = str(tmp_path / "p.sqlite")
    cli("prices", "import", EXAMPLES / "demo" / "prices-before.csv", "--new-store", "--db", db)
    job = tmp_path / "job.yaml"
    job.write_text("name: x\nmodel: A3C\nsteps: 100\nconstraints:\n  regions: [us-est-1]\n")
    planned = cli("plan", job, "--db", db)
    assert planned.exit_code == 2, planned.output  # no cloud has it: the file is refused
    assert "field constraints.regions: 'us-est-1': not a region of aws, gcp or azure; " \
           "did you mean 'us-east-1' or 'us-west-1'"  # the closest first in planned.output
    history = cli("prices", "history", "--instance", "p3.2xlrge", "--db", db)
    assert history.exit_code == 2 and "did you mean 'p3.2xlarge'" in history.output
