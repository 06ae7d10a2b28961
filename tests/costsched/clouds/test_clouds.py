"""Per-cloud facts: region and zone shapes, accelerator names, egress, SDK isolation."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from costsched import clouds
from costsched.clouds.gcp import NoCredentials, NoProject, credentials_and_project


@pytest.mark.parametrize(("zone", "expected"), [
    ("us-east-1b", ("aws", "us-east-1")),
    ("ap-southeast-2a", ("aws", "ap-southeast-2")),
    ("us-gov-west-1a", ("aws", "us-gov-west-1")),
    ("us-iso-east-1c", ("aws", "us-iso-east-1")),
    ("us-isob-east-1a", ("aws", "us-isob-east-1")),
    ("us-west1-b", ("gcp", "us-west1")),
    ("europe-west4-a", ("gcp", "europe-west4")),
    ("northamerica-northeast1-c", ("gcp", "northamerica-northeast1")),
    ("1", None),  # an Azure zone is a number within its region: no region in its name
    ("us-east-1", None),  # a region, not a zone
    ("us-central1", None),
    ("moon-1", None),
])
def test_zone_names_tell_cloud_and_region(zone: str, expected) -> None:
    assert clouds.zone_region(zone) == expected


@pytest.mark.parametrize(("zone", "regions", "problem"), [
    ("us-east-1z", (), "'us-east-1z': not a zone of us-east-1; its zones are us-east-1a, "
                       "us-east-1b, us-east-1c, us-east-1d, us-east-1e, us-east-1f"),
    ("us-central1-d", (), "its zones are us-central1-a, us-central1-b, us-central1-c, "
                          "us-central1-f"),
    ("us-east-1a", ("us-west-2",), "'us-east-1a': a zone of us-east-1, not of us-west-2"),
    ("moon-1a", ("us-east-1",), "'moon-1a': not a zone of us-east-1: expected a name such"),
    ("us-east-1f", ("us-east-1",), None),
    ("us-east-1g", (), None),  # the letter after the listed ones: a zone opened since
    ("us-central1-g", (), None),
    ("ap-south-1z", (), None),  # a region whose zones are not listed: its shape is the rule
    ("us-west-2-lax-1a", ("us-west-2",), None),  # a Local Zone
    ("2", (), None),  # Azure's: within whichever of its regions the job runs in
])
def test_a_given_zone_is_one_of_its_regions_listed_zones(zone: str, regions: tuple,
                                                         problem: str | None) -> None:
    found = clouds.given_zone_problem(zone, regions)
    assert found == problem if problem is None else problem in found


def test_every_listed_zone_is_of_a_listed_region() -> None:
    for cloud in clouds.CLOUDS.values():
        assert {cloud.region_of_zone(z) for z in cloud.zones} <= cloud.regions


def test_region_of_zone_is_each_clouds_own() -> None:
    assert clouds.get("aws").region_of_zone("us-west1-b") is None
    assert clouds.get("gcp").region_of_zone("us-east-1b") is None
    assert clouds.get("azure").region_of_zone("eastus-1") is None


@pytest.mark.parametrize(("region", "owners"), [
    ("us-east-1", ["aws"]),
    ("us-gov-west-1", ["aws"]),
    ("us-iso-east-1", ["aws"]),
    ("us-east1", ["gcp"]),
    ("asia-northeast1", ["gcp"]),
    ("eastus", ["azure"]),
    ("eastus2", ["azure"]),
    ("US East", []),
    ("us-east-1b", []),
])
def test_owners_of_region(region: str, owners: list[str]) -> None:
    assert clouds.owners_of_region(region) == owners


@pytest.mark.parametrize(("region", "names", "problem"), [
    ("us-east-1", (), None),
    ("eastus", (), None),
    ("westeurope", (), None),
    ("us-central1", (), None),
    # Another cloud's region, the job kept to its clouds: it could never run there.
    ("eastus", ("aws",), "'eastus' is a region of azure, not of aws: add azure to the job's "
                         "clouds, or name a region of aws such as us-east-1"),
    ("us-central1", ("aws", "azure"), "'us-central1' is a region of gcp, not of aws or azure"),
    ("us-east-3", (), None),  # numbered next in a listed series: opened since the list
    ("eastus3", (), None),
    ("us-east6", ("gcp",), None),
    # Of Azure's shape, but of a series no cloud lists: a misspelling, not a new region.
    ("useast1", (), "'useast1': not a region of aws, gcp or azure; did you mean 'us-east-1'"),
    ("useast1", ("aws",), "'useast1': not a region of aws; did you mean 'us-east-1'?"),
    ("us-north-1", ("aws",), "'us-north-1': not a region of aws"),
    ("taiwannorth", ("azure",), "'taiwannorth': not a region of azure"),
    ("us-east-9", ("aws",), "'us-east-9': not a region of aws; did you mean 'us-east-2'"),
    ("eastus3", ("aws",), "'eastus3': not a region of aws"),
    ("mars", (), "'mars': not a region of aws, gcp or azure: expected a listed region such "
                 "as us-east-1, us-central1, eastus"),
])
def test_a_region_a_job_names_is_listed_or_numbered_next(region: str, names: tuple,
                                                         problem: str | None) -> None:
    found = clouds.given_region_problem(region, names or clouds.NAMES)
    assert found == problem if problem is None else found is not None and problem in found


def test_a_region_a_cloud_reports_may_still_be_of_a_new_series() -> None:
    # Prices and signals come from the clouds themselves: a new series is a new region.
    assert clouds.region_problem("taiwannorth", ("azure",)) is None
    assert clouds.region_problem("us-north-1", ("aws",)) is None


def test_examples_have_their_clouds_shapes() -> None:
    for cloud in clouds.CLOUDS.values():
        assert clouds.owners_of_region(cloud.region_example) == [cloud.name]
        if cloud.zone_pattern is not None:
            assert clouds.zone_region(cloud.zone_example)[0] == cloud.name


def test_accelerator_names_both_ways() -> None:
    gcp = clouds.get("gcp")
    assert gcp.accelerator("V100") == "nvidia-tesla-v100"
    assert gcp.accelerator("H100") == "nvidia-h100-80gb"
    assert gcp.gpu_model_of("nvidia-tesla-v100") == "V100"
    assert gcp.gpu_model_of(" NVIDIA-A100-80GB ") == "A100-80GB"
    assert gcp.gpu_model_of("V100") is None  # a catalog name is not an accelerator name
    for model, name in gcp.accelerators.items():
        assert gcp.gpu_model_of(gcp.accelerator(model)) == model
        assert name == name.lower()
    # A cloud without names of its own uses the catalog's.
    assert clouds.get("aws").accelerator("V100") == "V100"
    assert clouds.get("aws").gpu_model_of("nvidia-tesla-v100") is None


def test_egress_of_an_unknown_cloud_is_the_dearest_known() -> None:
    dearest = max(c.egress.internet_usd_per_gb for c in clouds.CLOUDS.values())
    assert clouds.egress("oracle").internet_usd_per_gb == dearest > 0
    assert clouds.egress("aws") == clouds.get("aws").egress


def test_an_unknown_cloud_is_one_line_naming_the_known_ones() -> None:
    with pytest.raises(clouds.UnknownCloud) as caught:
        clouds.get("oracle")
    assert str(caught.value) == "cloud 'oracle': expected one of aws, gcp, azure"
    with pytest.raises(clouds.UnknownCloud):
        clouds.default_preemption("oracle")


def test_gcp_credentials_and_project_say_what_is_missing(monkeypatch) -> None:
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    def none(*_args, **_kwargs):
        raise DefaultCredentialsError("Your default credentials were not found.")

    monkeypatch.setattr(google.auth, "default", none)
    with pytest.raises(NoCredentials, match="^gcp: no Google credentials found: run"):
        credentials_and_project("demo-project")

    for name in ("GOOGLE_CLOUD_PROJECT", "CLOUDSDK_CORE_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(google.auth, "default", lambda *_a, **_k: ("creds", None))
    with pytest.raises(NoProject) as caught:
        credentials_and_project()
    assert "GOOGLE_CLOUD_PROJECT" in str(caught.value) and "--" not in str(caught.value)
    assert credentials_and_project("chosen") == ("creds", "chosen")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "from-env")
    assert credentials_and_project() == ("creds", "from-env")


# Cloud SDK modules the core must never load (google.protobuf is not one: cvxpy looks
# for optional solvers through it).
SDK_MODULES = ("boto3", "botocore", "requests", "google.auth", "google.cloud",
               "google.api_core", "googleapiclient", "azure")

IMPORT_EVERYTHING = textwrap.dedent("""
    import importlib, json, pkgutil, sys
    import costsched

    sdk = tuple(sys.argv[1:])
    loaded = {m for m in sys.modules if m.startswith(sdk)}
    modules = []
    for info in pkgutil.walk_packages(costsched.__path__, "costsched."):
        if info.name == "costsched.cli" or info.name.startswith("costsched.cli."):
            continue  # the CLI is an edge, like the collectors
        if info.name.endswith(".revisions.env"):
            continue  # Alembic's script: it runs a schema upgrade when Alembic loads it
        importlib.import_module(info.name)
        modules.append(info.name)
    found = sorted(m for m in sys.modules
                   if any(m == s or m.startswith(s + ".") for s in sdk))
    print(json.dumps({"modules": modules, "sdk": found, "preloaded": sorted(loaded)}))
""")


def test_the_core_loads_no_cloud_sdk() -> None:
    done = subprocess.run([sys.executable, "-c", IMPORT_EVERYTHING, *SDK_MODULES],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["preloaded"] == []
    assert {"costsched.clouds.aws", "costsched.clouds.gcp", "costsched.prices",
            "costsched.catalog"} <= set(result["modules"])
    assert result["sdk"] == []
