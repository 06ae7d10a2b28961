"""A message that passed through several hands names its cloud once: a quota reading that
failed ('azure quotas not read: why; fix: what', the fix left out where the reason gives it
already), a catalog refresh that could not look, and what it left out."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from costsched.cli import app
from costsched.service.quotas import read_problem
from costsched.store import PriceStore
from costsched.vocabulary import unprefixed
from price_collectors.base import CollectorUnavailable
from price_collectors.discovery import Refresh
from price_collectors.quota_reading import QuotasUnreadable
from price_collectors.quotas import read_quotas


def test_unprefixed_takes_off_every_leading_subject() -> None:
    assert unprefixed("azure: quotas not read: azure: no subscription", "azure",
                      "quotas not read") == "no subscription"
    assert unprefixed("azure: x", "aws") == "azure: x"
    assert unprefixed("aws", "aws") == "aws"


def test_a_failed_reading_names_its_cloud_once_and_its_fix_once() -> None:
    assert read_problem("azure", "azure: quotas not read: azure: no subscription named",
                        "az login") == "azure quotas not read: no subscription named; fix: az login"
    gcp = read_problem("gcp", "gcp: no Google credentials found: run `gcloud auth "
                       "application-default login`", "gcloud auth application-default login")
    assert gcp == ("gcp quotas not read: no Google credentials found: run `gcloud auth "
                   "application-default login`")


class _Failing:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def read(self, regions: list[str]) -> None:
        raise self.exc


def test_quotas_and_collect_say_a_cloud_once(db_path: Path) -> None:
    store = PriceStore(f"sqlite:///{db_path}")
    read = read_quotas(store, {"azure": ["eastus"], "aws": ["us-east-1"]}, readers={
        "azure": _Failing(QuotasUnreadable("azure: quotas not read: azure: no subscription "
                                           "named", "az login")),
        "aws": _Failing(CollectorUnavailable("aws: no AWS credentials found"))})
    assert read["aws"].error == "aws: quotas not read: no AWS credentials found"
    shown = CliRunner().invoke(app, ["quotas", "--db", str(db_path)])
    lines = [line for line in shown.stderr.splitlines() if line.strip()]
    assert lines == ["aws quotas not read: no AWS credentials found",
                     "azure quotas not read: no subscription named; fix: az login"]


def test_a_refresh_names_its_cloud_once() -> None:
    said = Refresh(found={}, errors={"aws": "aws: no AWS credentials found"}).lines()
    assert said == ["aws: not refreshed: no AWS credentials found"]


def test_a_missing_sdk_is_said_as_collect_says_it_and_each_cloud_once(db_path: Path) -> None:
    """A reader that failed on a missing module: 'botocore is not installed: pip install
    ...' in `quotas` and in the plans' note, never Python's exception, each cloud once."""
    from costsched.service.quotas import QuotaFacts

    store = PriceStore(f"sqlite:///{db_path}")
    read_quotas(store, {"aws": ["us-east-1"], "gcp": ["us-central1"]}, readers={
        "aws": _Failing(ModuleNotFoundError("No module named 'botocore'", name="botocore")),
        "gcp": _Failing(QuotasUnreadable("gcp: the google-cloud SDK is not installed: pip "
                                         "install 'costsched[gcp]'",
                                         "pip install 'costsched[gcp]'"))})
    note = QuotaFacts(store.quotas.current(), store.quotas.reads()).unknown_note(
        {"aws", "gcp"})
    assert note.startswith(
        "quotas not known (aws: botocore is not installed: pip install 'costsched[aws]'; "
        "gcp: the google-cloud SDK is not installed: pip install 'costsched[gcp]'): "), note
    shown = CliRunner().invoke(app, ["quotas", "--db", str(db_path)])
    lines = [line for line in shown.stderr.splitlines() if line.strip()]
    assert lines == [
        "aws quotas not read: botocore is not installed: pip install 'costsched[aws]'",
        "gcp quotas not read: the google-cloud SDK is not installed: pip install "
        "'costsched[gcp]'"]
