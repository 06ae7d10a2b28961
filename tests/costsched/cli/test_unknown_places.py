"""A place that does not exist is never stored, whatever file names it: a region no cloud
has (`us-east-9`: AWS lists us-east-1 and us-east-2, so a new one would be us-east-3), or a
zone outside its region, refuses the file in one line naming the file, where in it, the
field and what is accepted. A region opened after the list was written still passes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costsched.store import PriceStore

HEADER = ("cloud,region,zone,instance_type,market,os,gpu_model,gpu_count,vcpus,memory_gb,"
          "usd_per_hour,effective_at,source\n")
EXPORT_ROW = "aws,{region},{zone},p3.2xlarge,spot,linux,V100,1,8,61.0,0.92,2024-01-01T00:00:00Z,t\n"
NOT_AWS = "region 'us-east-9': not a region of aws: its series has us-east-1, us-east-2"


def spot_history(zone: str) -> str:
    return json.dumps({"SpotPriceHistory": [{
        "AvailabilityZone": zone, "InstanceType": "p3.2xlarge",
        "ProductDescription": "Linux/UNIX", "SpotPrice": "0.92",
        "Timestamp": "2024-01-01T00:00:00Z"}]})


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# name of the file, its text, where the one line says the problem is, what it says
PRICE_FILES = [
    ("spot.json", spot_history("us-east-9a"), "row 1: AvailabilityZone 'us-east-9a'", NOT_AWS),
    ("zone.csv", HEADER + EXPORT_ROW.format(region="us-east-1", zone="us-west-2a"), "row 2",
     "zone 'us-west-2a': a zone of us-west-2, not of region us-east-1"),
    ("region.csv", HEADER + EXPORT_ROW.format(region="us-east-9", zone=""), "row 2", NOT_AWS),
    ("us_east_9.csv", "Date,NC6s v3\n1/1/2024,$0.60\n", "file name 'us_east_9'",
     "region 'eastus9': not a region of azure: its series has eastus, eastus2, and a new "
     "one would be eastus3"),
    ("eastus9.csv", "Date,NC6s v3\n1/1/2024,$0.60\n", "file name 'eastus9'",
     "region 'eastus9': not a region of azure"),
    ("availability/aws-02-15-2023/us-east-9a_v100_1.json",
     '{"metadata": {"gap_seconds": 195}, "data": [1, 0]}', "trace file name: zone "
     "'us-east-9a'", NOT_AWS),
    ("probe.out", "[2020-03-15T10:07:33.000Z] Created instance i-1 with 1 GPU(s) of type v100 "
     "in zone us-east-9b\n", "line 1: zone 'us-east-9b'", NOT_AWS),
]


@pytest.mark.parametrize(("name", "text", "where", "says"), PRICE_FILES,
                         ids=[f[0].rsplit("/", 1)[-1] for f in PRICE_FILES])
def test_prices_import_refuses_a_place_that_does_not_exist(cli, tmp_path: Path, db_path: Path,
                                                           name: str, text: str, where: str,
                                                           says: str) -> None:  # noqa: ANN001
    path = write(tmp_path / "in", name, text)
    result = cli("prices", "import", path)
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(f"error: {path}: {where}: {says}"), errors
    store = PriceStore(str(db_path))
    try:
        assert store.observations().empty
    finally:
        store.dispose()


def test_a_region_opened_later_still_imports(cli, tmp_path: Path) -> None:  # noqa: ANN001
    # AWS lists us-east-1 and us-east-2: us-east-3 is the next of its series.
    path = write(tmp_path, "new.csv", HEADER + EXPORT_ROW.format(region="us-east-3",
                                                                 zone="us-east-3a"))
    result = cli("prices", "import", path)
    assert result.exit_code == 0, result.output
    assert "1 new row," in result.stdout


SIGNAL_FILES = [
    ("placement", {"InstanceType": "p3.2xlarge",
                   "SpotPlacementScores": [{"Region": "us-east-9", "Score": 5}]},
     "answer 0: SpotPlacementScores[0]: field Region", NOT_AWS),
    ("advisor", {"ranges": [{"index": 0, "label": "<5%"}],
                 "spot_advisor": {"us-east-9": {"Linux": {"p3.2xlarge": {"s": 70, "r": 0}}}}},
     "field spot_advisor.us-east-9", NOT_AWS),
    ("eviction", {"data": [{"skuName": "Standard_NC6s_v3", "location": "eastus9",
                            "evictionRate": "0-5"}]},
     "data[0] Standard_NC6s_v3: field location", "region 'eastus9': not a region of azure"),
]


@pytest.mark.parametrize(("kind", "document", "where", "says"), SIGNAL_FILES,
                         ids=[f[0] for f in SIGNAL_FILES])
def test_risk_import_refuses_a_region_that_does_not_exist(cli, tmp_path: Path, kind: str,
                                                          document: dict, where: str,
                                                          says: str) -> None:  # noqa: ANN001
    path = write(tmp_path, f"{kind}.json", json.dumps(document))
    result = cli("risk", "import", path, "--kind", kind)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: {where}: {says}"), lines
    shown = cli("risk", "show", "--json")
    assert json.loads(shown.stdout)["signals"] == []


def test_the_price_floor_is_the_documented_rule(cli, tmp_path: Path, db_path: Path) -> None:  # noqa: ANN001
    """One rule, said by the refusal as docs/prices.md says it: a price below 1% of the
    offering's on-demand price is refused ($0.02 spot for a $3.06 type), one at 1% passes
    (a fixed one-cent floor would have passed the first and says nothing of the second)."""
    low = write(tmp_path / "in", "low.csv", HEADER + EXPORT_ROW.format(
        region="us-east-1", zone="us-east-1a").replace(",0.92,", ",0.02,"))
    result = cli("prices", "import", low)
    assert result.exit_code == 2, result.output
    assert f"error: {low}: row 2: usd_per_hour '0.02': below floor (1% of on-demand $3.06: " \
           "at least $0.0306/h)" in result.stderr, result.stderr
    at_floor = write(tmp_path / "in", "at.csv", HEADER + EXPORT_ROW.format(
        region="us-east-1", zone="us-east-1a").replace(",0.92,", ",0.0306,"))
    assert cli("prices", "import", at_floor).exit_code == 0
    docs = (Path(__file__).resolve().parents[3] / "docs" / "prices.md").read_text()
    assert "`below floor (1% of on-demand $3.06: at least $0.0306/h)`" in docs
    store = PriceStore(str(db_path))
    try:
        assert store.observations()["usd_per_hour"].tolist() == [0.0306]
    finally:
        store.dispose()


def test_a_region_from_a_clouds_own_report_may_open_a_new_series(cli, tmp_path: Path) -> None:  # noqa: ANN001
    # AWS lists no us-north-*: a price file of one is a region opened since, as a cloud says.
    path = write(tmp_path, "north.csv", HEADER + EXPORT_ROW.format(region="us-north-1",
                                                                   zone="us-north-1a"))
    result = cli("prices", "import", path)
    assert result.exit_code == 0, result.output


JOB = "name: j\nmodel: ResNet-50 (batch size 64)\nsteps: 2000\n"


@pytest.mark.parametrize(("text", "field", "says"), [
    (JOB + "constraints: {regions: [useast1]}\n", "constraints.regions",
     "'useast1': not a region of aws, gcp or azure; did you mean 'us-east-1' or 'us-east1'?"),
    (JOB + "constraints: {clouds: [azure], regions: [westeurop]}\n", "constraints.regions",
     "'westeurop': not a region of azure; did you mean 'westeurope'"),
    ("name: j\nresources: {accelerators: V100, region: useast1}\nrun: 'true'\n",
     "resources.region", "'useast1': not a region of aws, gcp or azure; did you mean "
     "'us-east-1' or 'us-east1'?"),
    ("name: j\nresources: {accelerators: V100, infra: aws/useast1}\nrun: 'true'\n",
     "resources.infra", "'useast1': not a region of aws; did you mean 'us-east-1'?"),
    # another cloud's region, the job kept to its clouds: said where it is read
    (JOB + "constraints: {clouds: [aws], regions: [us-central1]}\n", "constraints.regions",
     "'us-central1' is a region of gcp, not of aws: add gcp to the job's clouds, or name a "
     "region of aws such as us-east-1"),
    ("name: j\nresources: {accelerators: V100, infra: aws/eastus}\nrun: 'true'\n",
     "resources.infra", "'eastus' is a region of azure, not of aws"),
])
@pytest.mark.parametrize("command", ["plan", "launch"])
def test_a_misspelt_region_in_a_job_is_bad_input_in_one_line(
        cli, tmp_path: Path, command: str, text: str, field: str, says: str) -> None:  # noqa: ANN001
    path = write(tmp_path, "job.yaml", text)
    result = cli(command, path)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "no plan" not in result.output
    errors = [line for line in result.output.strip().splitlines() if line.strip()]
    assert errors[-1].startswith(f"error: {path}: ") and f"field {field}: {says}" in errors[-1], \
        errors
